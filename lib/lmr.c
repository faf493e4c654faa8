// SPDX-License-Identifier: BSD-2-Clause
/*
 * lmr.c - remote memory: regions allocated on another node by its kernel
 * (KRCORE_IOC_LMR_ALLOC, _FREE, _SET), and the requests that use them.
 *
 * The library keeps nothing the kernel relies on: the range checks here
 * only give a clearer error sooner; the kernel (memset) and the owner's
 * RNIC (READ, WRITE, atomics) check every request again.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

static int lmr_fail(int ret, const char *what, const uint8_t gid[16])
{
	char node[64];

	krc_gid_format(gid, node, sizeof(node));
	switch (ret) {
	case -ENOSPC:
		return krcl_fail(ret, "%s: node %s has no room for it (its lmr_pool_mb)",
				 what, node);
	case -ENOMEM:
	case -E2BIG:
		return krcl_fail(ret, "%s: node %s could not allocate or register it",
				 what, node);
	case -EHOSTUNREACH:
		return krcl_fail(ret, "%s: no card for node %s (MetaServer)", what, node);
	case -ETIMEDOUT:
		return krcl_fail(ret, "%s: node %s did not answer in time", what, node);
	case -EMFILE:
		return krcl_fail(ret, "%s: this process holds lmr_max_per_proc regions",
				 what);
	case -ESTALE:
		return krcl_fail(ret, "%s: node %s reloaded: the region is gone",
				 what, node);
	case -EACCES:
		return krcl_fail(ret, "%s: the region was not allocated with that right",
				 what);
	case -ERANGE:
		return krcl_fail(ret, "%s: beyond the region's end", what);
	case -ENOENT:
		return krcl_fail(ret, "%s: not a region of this process", what);
	default:
		return krcl_fail(ret, "%s failed", what);
	}
}

int krc_lmr_alloc(struct krc_vq *vq, const char *node, uint64_t length,
		  unsigned int rights, struct krc_lmr *lmr)
{
	struct krcore_lmr_alloc a;
	int ret;

	memset(&a, 0, sizeof(a));
	memset(lmr, 0, sizeof(*lmr));
	if (krc_gid_parse(node, a.gid))
		return krcl_fail(-EINVAL, "\"%s\" is neither an IPv4 address nor a GID",
				 node ? node : "(null)");
	a.length = length;
	a.access = rights;
	ret = krcl_ioctl(vq, KRCORE_IOC_LMR_ALLOC, &a);
	if (ret == -EINVAL)
		return krcl_fail(ret, "remote memory: %s",
				 "a length of 1 .. 2^40 bytes, rights REMOTE_READ, _WRITE, _ATOMIC");
	if (ret < 0)
		return lmr_fail(ret, "remote memory", a.gid);
	memcpy(lmr->gid, a.gid, 16);
	lmr->addr = a.addr;
	lmr->length = length;
	lmr->incarnation = a.incarnation;
	lmr->rkey = a.rkey;
	lmr->handle = a.handle;
	lmr->rights = rights;
	lmr->region = a.region;
	return 0;
}

int krc_lmr_free(struct krc_vq *vq, const struct krc_lmr *lmr)
{
	struct krcore_lmr_free f;
	int ret;

	memset(&f, 0, sizeof(f));
	f.handle = lmr->handle;
	ret = krcl_ioctl(vq, KRCORE_IOC_LMR_FREE, &f);
	return ret < 0 ? lmr_fail(ret, "free of a region", lmr->gid) : 0;
}

int krc_lmr_set(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		int value, uint64_t len)
{
	struct krcore_lmr_set st;
	int ret;

	memset(&st, 0, sizeof(st));
	st.handle = lmr->handle;
	st.value = (uint32_t)value;
	st.offset = offset;
	st.length = len;
	if (value < 0 || value > 255 || !len)
		return krcl_fail(-EINVAL, "memset: a value of 0 .. 255 and a length");
	ret = krcl_ioctl(vq, KRCORE_IOC_LMR_SET, &st);
	return ret < 0 ? lmr_fail(ret, "memset", lmr->gid) : 0;
}

int krc_lmr_copy(struct krc_vq *vq, const struct krc_lmr *dst, uint64_t dst_offset,
		 const struct krc_lmr *src, uint64_t src_offset, uint64_t len)
{
	struct krcore_lmr_copy cp;
	int ret;

	memset(&cp, 0, sizeof(cp));
	cp.dst_handle = dst->handle;
	cp.src_handle = src->handle;
	cp.dst_offset = dst_offset;
	cp.src_offset = src_offset;
	cp.length = len;
	if (!len)
		return krcl_fail(-EINVAL, "copy: a length of 1 byte at least");
	ret = krcl_ioctl(vq, KRCORE_IOC_LMR_COPY, &cp);
	if (ret == -EXDEV)
		return krcl_fail(ret, "copy: the two regions are on two nodes (not yet)");
	return ret < 0 ? lmr_fail(ret, "copy", dst->gid) : 0;
}

static int lmr_range(const struct krc_lmr *lmr, uint64_t offset, size_t len)
{
	if (len > KRCORE_MAX_MSG)
		return krcl_fail(-EMSGSIZE, "%zu bytes: one request moves %u at most",
				 len, KRCORE_MAX_MSG);
	if (offset > lmr->length || len > lmr->length - offset)
		return krcl_fail(-ERANGE, "%zu bytes at %llu: beyond the region's %llu",
				 len, (unsigned long long)offset,
				 (unsigned long long)lmr->length);
	return 0;
}

int krc_lmr_read(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		 void *local, uint32_t lkey, size_t len)
{
	int ret = lmr_range(lmr, offset, len);

	return ret ? ret : krc_read_sync(vq, local, lkey, len, lmr->addr + offset,
					 lmr->rkey, -1);
}

int krc_lmr_write(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		  const void *local, uint32_t lkey, size_t len)
{
	int ret = lmr_range(lmr, offset, len);

	return ret ? ret : krc_write_sync(vq, local, lkey, len, lmr->addr + offset,
					  lmr->rkey, -1);
}

static int lmr_atomic(struct krc_vq *vq, const struct krc_lmr *lmr,
		      uint8_t opcode, uint64_t offset, uint64_t compare_add,
		      uint64_t swap, uint64_t *old, uint32_t lkey)
{
	struct krcore_wr wr;
	int ret = lmr_range(lmr, offset, 8);

	if (ret)
		return ret;
	if (offset % 8 || (uintptr_t)old % 8)
		return krcl_fail(-EINVAL, "atomics work on 8-aligned words");
	krcl_fill_rw(&wr, opcode, old, lkey, 8, lmr->addr + offset, lmr->rkey);
	wr.compare_add = compare_add;
	wr.swap = swap;
	return krcl_sync(vq, &wr, -1);
}

int krc_lmr_faa(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		uint64_t add, uint64_t *old, uint32_t lkey)
{
	return lmr_atomic(vq, lmr, KRCORE_WR_ATOMIC_FAA, offset, add, 0, old,
			  lkey);
}

int krc_lmr_cas(struct krc_vq *vq, const struct krc_lmr *lmr, uint64_t offset,
		uint64_t compare, uint64_t swap, uint64_t *old, uint32_t lkey)
{
	return lmr_atomic(vq, lmr, KRCORE_WR_ATOMIC_CAS, offset, compare, swap,
			  old, lkey);
}

/* The name in the kernel's form: 1 .. 23 printable bytes, zero-padded. */
static int lmr_name(const char *name, char out[KRCORE_NAME_LEN])
{
	size_t i, n = name ? strnlen(name, KRCORE_NAME_LEN) : 0;

	memset(out, 0, KRCORE_NAME_LEN);
	if (!n || n == KRCORE_NAME_LEN)
		return krcl_fail(-EINVAL, "a name of 1 .. %d printable characters",
				 KRCORE_NAME_LEN - 1);
	for (i = 0; i < n; i++)
		if (name[i] < 0x21 || name[i] > 0x7e)
			return krcl_fail(-EINVAL, "a name of printable ASCII, no spaces");
	memcpy(out, name, n);
	return 0;
}

static int name_fail(int ret, const char *what, const char *name,
		     const uint8_t gid[16])
{
	static const uint8_t no_gid[16];

	switch (ret) {
	case -EEXIST:
		return krcl_fail(ret, "%s \"%s\": the name is taken on that node",
				 what, name);
	case -ENOSPC:
		return krcl_fail(ret, "%s \"%s\": no room in that node's names table",
				 what, name);
	case -EPERM:
		return krcl_fail(ret, "%s \"%s\": a region looked up is not this process's to name",
				 what, name);
	case -ENOTCONN:
		return krcl_fail(ret, "%s \"%s\": the VQ is not connected",
				 what, name);
	case -EOPNOTSUPP:
		return krcl_fail(ret, "%s \"%s\": that node has no names table", what,
				 name);
	case -EAGAIN:
		return krcl_fail(ret, "%s \"%s\": the entry kept changing: try again",
				 what, name);
	case -ENOENT:
		if (!gid)
			return krcl_fail(ret, "%s \"%s\": no such name on that node",
					 what, name);
		return krcl_fail(ret, "%s \"%s\": no such name of that region",
				 what, name);
	default:
		return lmr_fail(ret, what, gid ? gid : no_gid);
	}
}

/* PUBLISH (@rights) or UNPUBLISH (@rights 0) @name of @lmr. */
static int lmr_name_call(struct krc_vq *vq, const struct krc_lmr *lmr,
			 const char *name, unsigned int rights,
			 unsigned long cmd, const char *what)
{
	struct krcore_lmr_publish p;
	int ret;

	memset(&p, 0, sizeof(p));
	ret = lmr_name(name, p.name);
	if (ret)
		return ret;
	p.handle = lmr->handle;
	p.access = rights;
	ret = krcl_ioctl(vq, cmd, &p);
	return ret < 0 ? name_fail(ret, what, name, lmr->gid) : 0;
}

int krc_lmr_publish(struct krc_vq *vq, const struct krc_lmr *lmr,
		    const char *name, unsigned int rights)
{
	return lmr_name_call(vq, lmr, name, rights, KRCORE_IOC_LMR_PUBLISH,
			     "publish");
}

int krc_lmr_unpublish(struct krc_vq *vq, const struct krc_lmr *lmr,
		      const char *name)
{
	return lmr_name_call(vq, lmr, name, 0, KRCORE_IOC_LMR_UNPUBLISH,
			     "unpublish");
}

int krc_lmr_lookup(struct krc_vq *vq, const char *name, struct krc_lmr *lmr)
{
	struct krcore_lmr_lookup lk;
	int ret;

	memset(&lk, 0, sizeof(lk));
	memset(lmr, 0, sizeof(*lmr));
	ret = lmr_name(name, lk.name);
	if (ret)
		return ret;
	ret = krcl_ioctl(vq, KRCORE_IOC_LMR_LOOKUP, &lk);
	if (ret < 0)
		return name_fail(ret, "lookup of", name, NULL);
	memcpy(lmr->gid, lk.gid, 16);
	lmr->addr = lk.addr;
	lmr->length = lk.length;
	lmr->incarnation = lk.incarnation;
	lmr->rkey = lk.rkey;
	lmr->handle = lk.handle;
	lmr->rights = lk.access;
	lmr->region = lk.region;
	return 0;
}
