// SPDX-License-Identifier: BSD-2-Clause
/*
 * krcore_md.c - the memory domain and the component of the UCT transport
 * "krcore": memory registration is krcore's (pinned and charged to the
 * process by the kernel), an rkey travels as 8 bytes.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "krcore_uct.h"

static ucs_config_field_t uct_krcore_md_config_table[] = {
	{"", "", NULL, ucs_offsetof(struct uct_krcore_md_config, super),
	 UCS_CONFIG_TYPE_TABLE(uct_md_config_table)},
	{NULL}
};

ucs_status_t uct_krcore_errno_status(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return UCS_OK;
	case EAGAIN:
		return UCS_ERR_NO_RESOURCE;
	case ENOMEM:
		return UCS_ERR_NO_MEMORY;
	case ENXIO:
	case EHOSTUNREACH:
	case ECONNREFUSED:
		return UCS_ERR_UNREACHABLE;
	case ETIMEDOUT:
		return UCS_ERR_ENDPOINT_TIMEOUT;
	case ENOENT:
	case ENODEV:
		return UCS_ERR_NO_DEVICE;
	case EINVAL:
		return UCS_ERR_INVALID_PARAM;
	case EPERM:
	case EACCES:
		return UCS_ERR_REJECTED;
	default:
		return UCS_ERR_IO_ERROR;
	}
}

static ucs_status_t uct_krcore_md_query(uct_md_h md, uct_md_attr_t *attr)
{
	memset(&attr->cap, 0, sizeof(attr->cap));
	attr->cap.flags = UCT_MD_FLAG_REG | UCT_MD_FLAG_NEED_MEMH |
			  UCT_MD_FLAG_NEED_RKEY;
	attr->cap.reg_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
	attr->cap.access_mem_types = UCS_BIT(UCS_MEMORY_TYPE_HOST);
	attr->cap.detect_mem_types = 0;
	attr->cap.alloc_mem_types = 0;
	attr->cap.max_alloc = 0;
	attr->cap.max_reg = KRCORE_MAX_MSG;
	attr->rkey_packed_size = sizeof(struct uct_krcore_rkey);
	/* a system call that pins: about what ib_reg_mr costs */
	attr->reg_cost = ucs_linear_func_make(20.0 / 1e6, 0.25 / 1e9);
	memset(&attr->local_cpus, 0xff, sizeof(attr->local_cpus));
	attr->component_name[0] = '\0';
	ucs_strncpy_zero(attr->component_name, UCT_KRCORE_NAME,
			 sizeof(attr->component_name));
	return UCS_OK;
}

static ucs_status_t uct_krcore_mem_reg(uct_md_h tl_md, void *address,
				       size_t length, unsigned int flags,
				       uct_mem_h *memh_p)
{
	struct uct_krcore_md *md = ucs_derived_of(tl_md, struct uct_krcore_md);
	struct uct_krcore_memh *memh;
	int ret;

	memh = ucs_malloc(sizeof(*memh), "krcore memh");
	if (!memh)
		return UCS_ERR_NO_MEMORY;
	ret = krc_reg_mr(md->vq, address, length,
			 KRCORE_ACCESS_LOCAL_WRITE | KRCORE_ACCESS_REMOTE_READ |
			 KRCORE_ACCESS_REMOTE_WRITE |
			 KRCORE_ACCESS_REMOTE_ATOMIC, &memh->mr);
	if (ret < 0) {
		ucs_free(memh);
		if (!(flags & UCT_MD_MEM_FLAG_HIDE_ERRORS))
			ucs_error("krcore: registering %p+%zu: %s", address,
				  length, krc_errmsg());
		return uct_krcore_errno_status(ret);
	}
	*memh_p = memh;
	return UCS_OK;
}

static ucs_status_t
uct_krcore_mem_dereg(uct_md_h tl_md, const uct_md_mem_dereg_params_t *params)
{
	struct uct_krcore_md *md = ucs_derived_of(tl_md, struct uct_krcore_md);
	struct uct_krcore_memh *memh;
	int ret;

	UCT_MD_MEM_DEREG_CHECK_PARAMS(params, 0);
	memh = params->memh;
	ret = krc_dereg_mr(md->vq, &memh->mr);
	ucs_free(memh);
	return uct_krcore_errno_status(ret);
}

static ucs_status_t
uct_krcore_mkey_pack(uct_md_h md, uct_mem_h tl_memh,
		     const uct_md_mkey_pack_params_t *params, void *buffer)
{
	const struct uct_krcore_memh *memh = tl_memh;
	struct uct_krcore_rkey k = {
		.rkey = memh->mr.rkey,
		.magic = UCT_KRCORE_RKEY_MAGIC,
	};

	memcpy(buffer, &k, sizeof(k));
	return UCS_OK;
}

static ucs_status_t uct_krcore_rkey_unpack(uct_component_t *component,
					   const void *buffer,
					   uct_rkey_t *rkey_p, void **handle_p)
{
	struct uct_krcore_rkey k;

	memcpy(&k, buffer, sizeof(k));
	if (k.magic != UCT_KRCORE_RKEY_MAGIC)
		return UCS_ERR_INVALID_PARAM;
	*rkey_p = k.rkey;
	*handle_p = NULL;
	return UCS_OK;
}

static void uct_krcore_md_close(uct_md_h tl_md)
{
	struct uct_krcore_md *md = ucs_derived_of(tl_md, struct uct_krcore_md);

	krc_vq_close(md->vq);
	ucs_free(md);
}

static uct_md_ops_t uct_krcore_md_ops = {
	.close = uct_krcore_md_close,
	.query = uct_krcore_md_query,
	.mem_reg = uct_krcore_mem_reg,
	.mem_dereg = uct_krcore_mem_dereg,
	.mkey_pack = uct_krcore_mkey_pack,
	.detect_memory_type = ucs_empty_function_return_unsupported,
};

static ucs_status_t uct_krcore_md_open(uct_component_t *component,
				       const char *name,
				       const uct_md_config_t *config,
				       uct_md_h *md_p)
{
	struct uct_krcore_md *md;
	int ret;

	md = ucs_calloc(1, sizeof(*md), "krcore md");
	if (!md)
		return UCS_ERR_NO_MEMORY;
	ret = krc_vq_open(&md->vq);
	if (ret < 0) {
		ucs_debug("krcore: %s", krc_errmsg());
		ucs_free(md);
		return uct_krcore_errno_status(ret);
	}
	md->super.ops = &uct_krcore_md_ops;
	md->super.component = &uct_krcore_component;
	*md_p = &md->super;
	return UCS_OK;
}

/* One memory domain where /dev/krcore can be opened, none elsewhere. */
static ucs_status_t
uct_krcore_query_md_resources(uct_component_t *component,
			      uct_md_resource_desc_t **resources_p,
			      unsigned int *num_p)
{
	if (access("/dev/krcore", R_OK | W_OK) != 0)
		return uct_md_query_empty_md_resource(resources_p, num_p);
	return uct_md_query_single_md_resource(component, resources_p, num_p);
}

uct_component_t uct_krcore_component = {
	.query_md_resources = uct_krcore_query_md_resources,
	.md_open = uct_krcore_md_open,
	.cm_open = ucs_empty_function_return_unsupported,
	.rkey_unpack = uct_krcore_rkey_unpack,
	.rkey_ptr = ucs_empty_function_return_unsupported,
	.rkey_release = ucs_empty_function_return_success,
	.name = UCT_KRCORE_NAME,
	.md_config = {
		.name = "krcore memory domain",
		.prefix = "KRCORE_",
		.table = uct_krcore_md_config_table,
		.size = sizeof(struct uct_krcore_md_config),
	},
	.cm_config = UCS_CONFIG_EMPTY_GLOBAL_LIST_ENTRY,
	.tl_list = UCT_COMPONENT_TL_LIST_INITIALIZER(&uct_krcore_component),
	.flags = 0,
	.md_vfs_init =
		(uct_component_md_vfs_init_func_t)ucs_empty_function,
};
