// SPDX-License-Identifier: BSD-2-Clause
/*
 * krcore_iface.c - the interface of the UCT transport "krcore": its
 * address (node GID + bound port), the active messages it receives on
 * that port, the bounce buffers of its endpoints, progress and wake-up.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "krcore_uct.h"

#define UCT_KRCORE_PORT_TRIES	256
#define UCT_KRCORE_RX_BUDGET	32

static uct_iface_ops_t uct_krcore_iface_ops;

static ucs_config_field_t uct_krcore_iface_config_table[] = {
	{"", "", NULL, ucs_offsetof(struct uct_krcore_iface_config, super),
	 UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},
	{"TX_BUFS", "512", "Bounce buffers of an interface (all its endpoints)",
	 ucs_offsetof(struct uct_krcore_iface_config, tx_bufs),
	 UCS_CONFIG_TYPE_UINT},
	{"SEG_SIZE", "4080", "Bytes of a bounce buffer: the largest put/get bcopy",
	 ucs_offsetof(struct uct_krcore_iface_config, seg_size),
	 UCS_CONFIG_TYPE_MEMUNITS},
	{"CONNECT_TIMEOUT", "10000", "Milliseconds an endpoint's connect may take",
	 ucs_offsetof(struct uct_krcore_iface_config, connect_ms),
	 UCS_CONFIG_TYPE_UINT},
	{"PORT_BASE", "20000", "First krcore port an interface tries to bind",
	 ucs_offsetof(struct uct_krcore_iface_config, port_base),
	 UCS_CONFIG_TYPE_UINT},
	{NULL}
};

/* Descriptors: a free list with and one without a bounce buffer. */
struct uct_krcore_desc *uct_krcore_desc_get(struct uct_krcore_iface *iface,
					    int with_buf)
{
	struct uct_krcore_desc **head = with_buf ? &iface->free_buf :
						   &iface->free_nobuf;
	struct uct_krcore_desc *d = *head;

	if (!d)
		return NULL;
	*head = d->next_free;
	d->next_free = NULL;
	d->comp = NULL;
	d->unpack = NULL;
	d->result = NULL;
	return d;
}

void uct_krcore_desc_put(struct uct_krcore_iface *iface,
			 struct uct_krcore_desc *d)
{
	struct uct_krcore_desc **head = d->has_buf ? &iface->free_buf :
						     &iface->free_nobuf;

	d->ep = NULL;
	d->next_free = *head;
	*head = d;
}

static ucs_status_t uct_krcore_iface_query(uct_iface_h tl_iface,
					   uct_iface_attr_t *attr)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);

	uct_base_iface_query(&iface->super, attr);
	attr->iface_addr_len = sizeof(struct uct_krcore_iface_addr);
	attr->device_addr_len = sizeof(struct uct_krcore_dev_addr);
	attr->ep_addr_len = 0;
	attr->max_conn_priv = 0;
	attr->cap.flags = UCT_IFACE_FLAG_CONNECT_TO_IFACE |
			  UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
			  UCT_IFACE_FLAG_PUT_SHORT | UCT_IFACE_FLAG_PUT_BCOPY |
			  UCT_IFACE_FLAG_PUT_ZCOPY | UCT_IFACE_FLAG_GET_BCOPY |
			  UCT_IFACE_FLAG_GET_ZCOPY |
			  UCT_IFACE_FLAG_ATOMIC_DEVICE |
			  UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
			  UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE |
			  UCT_IFACE_FLAG_EP_CHECK;
	attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_SEND_COMP |
				UCT_IFACE_FLAG_EVENT_RECV |
				UCT_IFACE_FLAG_EVENT_FD;

	attr->cap.put.max_short = iface->seg_size;
	attr->cap.put.max_bcopy = iface->seg_size;
	attr->cap.put.min_zcopy = 0;
	attr->cap.put.max_zcopy = KRCORE_MAX_MSG;
	attr->cap.put.opt_zcopy_align = 1;
	attr->cap.put.align_mtu = 1;
	attr->cap.put.max_iov = KRCORE_MAX_SGE;

	attr->cap.get.max_short = 0;
	attr->cap.get.max_bcopy = iface->seg_size;
	attr->cap.get.min_zcopy = 0;
	attr->cap.get.max_zcopy = KRCORE_MAX_MSG;
	attr->cap.get.opt_zcopy_align = 1;
	attr->cap.get.align_mtu = 1;
	attr->cap.get.max_iov = KRCORE_MAX_SGE;

	/* the AM id travels as the immediate: the whole slot is payload */
	attr->cap.am.max_short = UCT_KRCORE_AM_MAX;
	attr->cap.am.max_bcopy = UCT_KRCORE_AM_MAX;
	attr->cap.am.min_zcopy = 0;
	attr->cap.am.max_zcopy = 0;
	attr->cap.am.opt_zcopy_align = 1;
	attr->cap.am.align_mtu = 1;
	attr->cap.am.max_hdr = 0;
	attr->cap.am.max_iov = 1;

	/*
	 * RDMA's fetch-and-add and compare-and-swap, and the others as
	 * compare-and-swap loops (krcore_ep.c): UCP then takes the device's
	 * atomics, with no remote CPU, instead of its AM emulation.
	 */
	attr->cap.atomic64.op_flags = UCS_BIT(UCT_ATOMIC_OP_ADD) |
				      UCS_BIT(UCT_ATOMIC_OP_AND) |
				      UCS_BIT(UCT_ATOMIC_OP_OR) |
				      UCS_BIT(UCT_ATOMIC_OP_XOR);
	attr->cap.atomic64.fop_flags = attr->cap.atomic64.op_flags |
				       UCS_BIT(UCT_ATOMIC_OP_SWAP) |
				       UCS_BIT(UCT_ATOMIC_OP_CSWAP);
	attr->cap.atomic32.op_flags = attr->cap.atomic64.op_flags;
	attr->cap.atomic32.fop_flags = attr->cap.atomic64.fop_flags;

	/*
	 * Estimates of a hardware RNIC behind the kernel (UCP compares
	 * them with the other transports it may select, not with time).
	 */
	attr->latency = ucs_linear_func_make(2.0 / 1e6, 0);
	attr->bandwidth.dedicated = 0;
	attr->bandwidth.shared = 10000.0 * UCS_MBYTE;
	attr->overhead = 0.5 / 1e6;
	attr->priority = 0;
	return UCS_OK;
}

static ucs_status_t uct_krcore_iface_get_device_address(uct_iface_h tl_iface,
							uct_device_addr_t *a)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);

	memcpy(a, &iface->dev, sizeof(iface->dev));
	return UCS_OK;
}

static ucs_status_t uct_krcore_iface_get_address(uct_iface_h tl_iface,
						 uct_iface_addr_t *a)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct uct_krcore_iface_addr ia = { .port = iface->port };

	memcpy(a, &ia, sizeof(ia));
	return UCS_OK;
}

/* krcore reaches every node of its cluster (its card is looked up). */
static int uct_krcore_iface_is_reachable(const uct_iface_h tl_iface,
					 const uct_device_addr_t *dev_addr,
					 const uct_iface_addr_t *iface_addr)
{
	struct uct_krcore_iface_addr ia;

	if (!dev_addr || !iface_addr)
		return 0;
	memcpy(&ia, iface_addr, sizeof(ia));
	return ia.port != 0;
}

/* Active messages: the AM id is the immediate of a SEND_IMM. */
static unsigned int uct_krcore_iface_poll_rx(struct uct_krcore_iface *iface)
{
	struct krc_msg msg;
	unsigned int n = 0;
	uint32_t len;

	while (n < UCT_KRCORE_RX_BUDGET && krc_qpop_msg(iface->rvq, &msg) == 1) {
		uint32_t id = msg.imm_data & 0xff;

		len = msg.imm_data & UCT_KRCORE_IMM_EMPTY ? 0 : msg.len;
		if (msg.opcode != KRCORE_WR_SEND_IMM ||
		    !(msg.flags & KRCORE_MSG_F_IMM) || id >= UCT_AM_ID_MAX ||
		    (msg.imm_data & ~(0xffU | UCT_KRCORE_IMM_EMPTY)) ||
		    len > UCT_KRCORE_AM_MAX) {
			/* not from a krcore endpoint of UCX: not for UCP */
			ucs_debug("krcore: dropped a message (opcode %u imm 0x%x len %u) from port %u",
				  msg.opcode, msg.imm_data, len, msg.src_port);
		} else {
			uct_iface_invoke_am(&iface->super, (uint8_t)id,
					    (void *)msg.data, len, 0);
		}
		krc_qmsg_done(iface->rvq);
		n++;
	}
	return n;
}

static unsigned int uct_krcore_iface_progress(uct_iface_h tl_iface)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct uct_krcore_ep *ep, *tmp;
	unsigned int n;

	n = uct_krcore_iface_poll_rx(iface);
	ucs_list_for_each_safe(ep, tmp, &iface->active, active_link)
		n += uct_krcore_ep_progress(iface, ep);
	return n;
}

static ucs_status_t uct_krcore_iface_flush(uct_iface_h tl_iface,
					   unsigned int flags,
					   uct_completion_t *comp)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct uct_krcore_ep *ep;

	ucs_trace("krcore: flush iface %p outstanding %u", iface,
		  iface->outstanding);
	if (comp)
		return UCS_ERR_UNSUPPORTED;
	ucs_list_for_each(ep, &iface->active, active_link) {
		if (!ucs_queue_is_empty(&ep->pending))
			return UCS_ERR_NO_RESOURCE;
	}
	return iface->outstanding ? UCS_INPROGRESS : UCS_OK;
}

static ucs_status_t uct_krcore_iface_fence(uct_iface_h tl_iface,
					   unsigned int flags)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct uct_krcore_ep *ep;

	ucs_list_for_each(ep, &iface->eps, list)
		ep->fence = 1;
	return UCS_OK;
}

/*
 * Wake-up: an epoll set of the interface's VQ and its endpoints' VQs
 * (POLLIN: completions or messages are there, level triggered).
 */
void uct_krcore_iface_add_ep_fd(struct uct_krcore_iface *iface, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN };

	if (iface->event_fd < 0)
		return;
	ev.data.fd = fd;
	if (epoll_ctl(iface->event_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		ucs_warn("krcore: epoll_ctl(%d): %m", fd);
}

static ucs_status_t uct_krcore_iface_event_fd_get(uct_iface_h tl_iface,
						  int *fd_p)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct uct_krcore_ep *ep;

	if (iface->event_fd < 0) {
		iface->event_fd = epoll_create1(EPOLL_CLOEXEC);
		if (iface->event_fd < 0)
			return UCS_ERR_IO_ERROR;
		uct_krcore_iface_add_ep_fd(iface, krc_vq_fd(iface->rvq));
		ucs_list_for_each(ep, &iface->eps, list)
			uct_krcore_iface_add_ep_fd(iface, krc_vq_fd(ep->vq));
	}
	*fd_p = iface->event_fd;
	return UCS_OK;
}

/* Armed only when nothing is waiting to be progressed (else BUSY). */
static ucs_status_t uct_krcore_iface_event_arm(uct_iface_h tl_iface,
					       unsigned int events)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(tl_iface, struct uct_krcore_iface);
	struct epoll_event ev;
	struct uct_krcore_ep *ep;

	ucs_list_for_each(ep, &iface->active, active_link) {
		if (!ucs_queue_is_empty(&ep->pending) ||
		    (ep->error != UCS_OK && !ep->error_reported))
			return UCS_ERR_BUSY;
	}
	if (iface->event_fd >= 0 &&
	    epoll_wait(iface->event_fd, &ev, 1, 0) > 0)
		return UCS_ERR_BUSY;
	return UCS_OK;
}

static ucs_status_t uct_krcore_iface_bind(struct uct_krcore_iface *iface,
					  unsigned int base)
{
	unsigned int span = 65535 - base, i, port;
	int ret = -EADDRINUSE;

	if (base < 1024 || base > 65000)
		base = 20000;
	span = 65535 - base;
	port = base + (unsigned int)getpid() % span;
	for (i = 0; i < UCT_KRCORE_PORT_TRIES; i++) {
		ret = krc_qbind(iface->rvq, (uint16_t)port);
		if (ret == 0) {
			iface->port = (uint16_t)port;
			return UCS_OK;
		}
		if (ret != -EADDRINUSE)
			break;
		port = base + (port - base + 1) % span;
	}
	ucs_error("krcore: cannot bind a port: %s", krc_errmsg());
	return uct_krcore_errno_status(ret);
}

static ucs_status_t uct_krcore_iface_arena(struct uct_krcore_iface *iface,
					   unsigned int nsegs, size_t seg)
{
	unsigned int i;
	int ret;

	if (nsegs < 16 || nsegs > 65535 || seg < 64 || seg > (1U << 20))
		return UCS_ERR_INVALID_PARAM;
	iface->seg_size = seg;
	iface->nsegs = nsegs;
	iface->arena_len = ucs_align_up((size_t)nsegs * seg, 4096);
	iface->arena = mmap(NULL, iface->arena_len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (iface->arena == MAP_FAILED) {
		iface->arena = NULL;
		return UCS_ERR_NO_MEMORY;
	}
	ret = krc_reg_mr(iface->rvq, iface->arena, iface->arena_len,
			 KRCORE_ACCESS_LOCAL_WRITE, &iface->arena_mr);
	if (ret < 0) {
		munmap(iface->arena, iface->arena_len);
		iface->arena = NULL;
		ucs_error("krcore: registering bounce buffers: %s",
			  krc_errmsg());
		return uct_krcore_errno_status(ret);
	}
	/* with a buffer, then as many without (zcopy, flush of ep) */
	iface->descs = ucs_calloc(2 * nsegs, sizeof(*iface->descs),
				  "krcore descs");
	if (!iface->descs)
		return UCS_ERR_NO_MEMORY;
	for (i = 0; i < 2 * nsegs; i++) {
		struct uct_krcore_desc *d = &iface->descs[i];

		d->index = (uint16_t)i;
		d->has_buf = i < nsegs;
		d->buf = d->has_buf ? (char *)iface->arena + (size_t)i * seg :
				      NULL;
		uct_krcore_desc_put(iface, d);
	}
	return UCS_OK;
}

static UCS_CLASS_INIT_FUNC(uct_krcore_iface_t, uct_md_h md,
			   uct_worker_h worker,
			   const uct_iface_params_t *params,
			   const uct_iface_config_t *tl_config)
{
	struct uct_krcore_iface_config *cfg =
		ucs_derived_of(tl_config, struct uct_krcore_iface_config);
	struct krcore_card card;
	ucs_status_t status;
	int ret;

	UCS_CLASS_CALL_SUPER_INIT(uct_base_iface_t, &uct_krcore_iface_ops,
				  &uct_base_iface_internal_ops, md, worker,
				  params, tl_config
				  UCS_STATS_ARG(NULL)
				  UCS_STATS_ARG(UCT_KRCORE_NAME));
	if (ucs_derived_of(worker, uct_priv_worker_t)->thread_mode ==
	    UCS_THREAD_MODE_MULTI) {
		ucs_debug("krcore: no multi-threaded worker");
		return UCS_ERR_UNSUPPORTED;
	}
	/* UCS classes are not zeroed: everything the cleanup reads */
	self->rvq = NULL;
	self->arena = NULL;
	self->descs = NULL;
	self->free_buf = NULL;
	self->free_nobuf = NULL;
	self->outstanding = 0;
	self->port = 0;
	ucs_list_head_init(&self->eps);
	ucs_list_head_init(&self->active);
	self->event_fd = -1;
	self->connect_ms = cfg->connect_ms;
	ret = krc_vq_open(&self->rvq);
	if (ret < 0) {
		ucs_error("krcore: %s", krc_errmsg());
		return uct_krcore_errno_status(ret);
	}
	ret = krc_query_card(self->rvq, &card);
	if (ret < 0) {
		ucs_error("krcore: %s", krc_errmsg());
		status = uct_krcore_errno_status(ret);
		goto err;
	}
	memcpy(self->dev.gid, card.gid, sizeof(self->dev.gid));
	status = uct_krcore_iface_bind(self, cfg->port_base);
	if (status != UCS_OK)
		goto err;
	status = uct_krcore_iface_arena(self, cfg->tx_bufs, cfg->seg_size);
	if (status != UCS_OK)
		goto err;
	ucs_debug("krcore: iface %p on port %u", self, self->port);
	return UCS_OK;
err:
	if (self->arena) {
		krc_dereg_mr(self->rvq, &self->arena_mr);
		munmap(self->arena, self->arena_len);
	}
	ucs_free(self->descs);
	krc_vq_close(self->rvq);
	return status;
}

static UCS_CLASS_CLEANUP_FUNC(uct_krcore_iface_t)
{
	uct_base_iface_progress_disable(&self->super.super,
					UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);
	if (!ucs_list_is_empty(&self->eps))
		ucs_warn("krcore: iface %p closed with endpoints", self);
	if (self->event_fd >= 0)
		close(self->event_fd);
	krc_dereg_mr(self->rvq, &self->arena_mr);
	krc_vq_close(self->rvq);
	munmap(self->arena, self->arena_len);
	ucs_free(self->descs);
}

UCS_CLASS_DEFINE(uct_krcore_iface_t, uct_base_iface_t);
static UCS_CLASS_DEFINE_NEW_FUNC(uct_krcore_iface_t, uct_iface_t, uct_md_h,
				 uct_worker_h, const uct_iface_params_t *,
				 const uct_iface_config_t *);
static UCS_CLASS_DEFINE_DELETE_FUNC(uct_krcore_iface_t, uct_iface_t);

static uct_iface_ops_t uct_krcore_iface_ops = {
	.ep_put_short = uct_krcore_ep_put_short,
	.ep_put_bcopy = uct_krcore_ep_put_bcopy,
	.ep_put_zcopy = uct_krcore_ep_put_zcopy,
	.ep_get_bcopy = uct_krcore_ep_get_bcopy,
	.ep_get_zcopy = uct_krcore_ep_get_zcopy,
	.ep_am_short = uct_krcore_ep_am_short,
	.ep_am_short_iov = uct_krcore_ep_am_short_iov,
	.ep_am_bcopy = uct_krcore_ep_am_bcopy,
	.ep_atomic_cswap64 = uct_krcore_ep_atomic_cswap64,
	.ep_atomic64_post = uct_krcore_ep_atomic64_post,
	.ep_atomic64_fetch = uct_krcore_ep_atomic64_fetch,
	.ep_atomic_cswap32 = uct_krcore_ep_atomic_cswap32,
	.ep_atomic32_post = uct_krcore_ep_atomic32_post,
	.ep_atomic32_fetch = uct_krcore_ep_atomic32_fetch,
	.ep_pending_add = uct_krcore_ep_pending_add,
	.ep_pending_purge = uct_krcore_ep_pending_purge,
	.ep_flush = uct_krcore_ep_flush,
	.ep_fence = uct_krcore_ep_fence,
	.ep_check = uct_krcore_ep_check,
	.ep_create = UCS_CLASS_NEW_FUNC_NAME(uct_krcore_ep_t),
	.ep_destroy = UCS_CLASS_DELETE_FUNC_NAME(uct_krcore_ep_t),
	.iface_flush = uct_krcore_iface_flush,
	.iface_fence = uct_krcore_iface_fence,
	.iface_progress_enable = uct_base_iface_progress_enable,
	.iface_progress_disable = uct_base_iface_progress_disable,
	.iface_progress = uct_krcore_iface_progress,
	.iface_event_fd_get = uct_krcore_iface_event_fd_get,
	.iface_event_arm = uct_krcore_iface_event_arm,
	.iface_close = UCS_CLASS_DELETE_FUNC_NAME(uct_krcore_iface_t),
	.iface_query = uct_krcore_iface_query,
	.iface_get_device_address = uct_krcore_iface_get_device_address,
	.iface_get_address = uct_krcore_iface_get_address,
	.iface_is_reachable = uct_krcore_iface_is_reachable,
};

static ucs_status_t
uct_krcore_query_tl_devices(uct_md_h md, uct_tl_device_resource_t **devs_p,
			    unsigned int *num_p)
{
	return uct_single_device_resource(md, UCT_KRCORE_NAME,
					  UCT_DEVICE_TYPE_NET,
					  UCS_SYS_DEVICE_ID_UNKNOWN,
					  devs_p, num_p);
}

UCT_TL_DEFINE_ENTRY(&uct_krcore_component, krcore,
		    uct_krcore_query_tl_devices, uct_krcore_iface_t,
		    "KRCORE_", uct_krcore_iface_config_table,
		    struct uct_krcore_iface_config);

UCT_SINGLE_TL_INIT(&uct_krcore_component, krcore, ctor, (void)0, (void)0);
