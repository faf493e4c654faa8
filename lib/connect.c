// SPDX-License-Identifier: BSD-2-Clause
/*
 * connect.c - qconnect, lookups, probes and the control plane's state.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* The address of @gid as text, for messages. */
static const char *addr_str(const uint8_t gid[16], char *buf, size_t len)
{
	krc_gid_format(gid, buf, len);
	return buf;
}

static int connect_fail(int ret, const uint8_t gid[16])
{
	char a[KRC_GID_STRLEN];

	addr_str(gid, a, sizeof(a));
	switch (ret) {
	case -ENXIO:
		return krcl_fail(ret, "node %s is not registered with the MetaServer", a);
	case -EHOSTUNREACH:
		return krcl_fail(ret, "node %s: no cached card and the MetaServer is unreachable",
				 a);
	case -ETIMEDOUT:
		return krcl_fail(ret, "node %s did not answer the handshake", a);
	case -ESTALE:
		return krcl_fail(ret, "node %s rejects its card as stale", a);
	case -EISCONN:
		return krcl_fail(ret, "this VQ is already connected");
	case -ENODEV:
		return krcl_fail(ret, "no usable RDMA port on this node");
	case -EINVAL:
		return krcl_fail(ret, "invalid connect request for %s", a);
	default:
		return krcl_fail(ret, "connect to %s failed", a);
	}
}

static int qconnect_once(struct krc_vq *vq, const uint8_t gid[16],
			 uint32_t port, unsigned int timeout_ms,
			 struct krcore_qconnect *qc, int *taken)
{
	int ret;

	memset(qc, 0, sizeof(*qc));
	memcpy(qc->gid, gid, 16);
	qc->port = port;
	qc->timeout_ms = timeout_ms;
	qc->ring_addr = (uintptr_t)vq->uring;
	qc->ring_len = vq->uring ? (uint32_t)vq->uring_size : 0;
	ret = krcl_ioctl(vq, KRCORE_IOC_QCONNECT, qc);
	*taken = vq->uring && qc->ring_addr == (uintptr_t)vq->uring;
	return ret;
}

int krc_qconnect_gid(struct krc_vq *vq, const uint8_t gid[16], uint32_t port,
		     unsigned int timeout_ms, struct krcore_qconnect *qc)
{
	int ret, taken, tries;

	/*
	 * The ring: this process's own memory (no mmap, no munmap), the
	 * same again if an earlier qconnect of this VQ took it (it keeps
	 * it); the kernel's if the module cannot take ours (a deeper
	 * vq_depth: once more with a ring of the size it needs; over
	 * RLIMIT_MEMLOCK, or a VQ another process opened).
	 */
	if (!vq->ring_mem && !vq->uring)
		krcl_ring_get(vq);
	for (tries = 0;; tries++) {
		ret = qconnect_once(vq, gid, port, timeout_ms, qc, &taken);
		if (!vq->uring || taken || vq->ring_mem)
			break;
		krcl_ring_put(vq, 1);		/* the kernel never took it */
		if (ret == -EMSGSIZE && !tries) {
			krcl_ring_resize(qc->ring_size);
			krcl_ring_get(vq);
		} else if (ret != -ENOMEM && ret != -EFAULT && ret != -EINVAL &&
			   ret != -EMSGSIZE) {
			break;
		}
	}
	if (ret < 0)
		return connect_fail(ret, gid);
	if (vq->ring_mem)
		return 0;
	if (vq->uring) {
		krcl_ring_taken(vq);
		return 0;
	}
	return krcl_map_ring(vq, qc->ring_size);
}

int krc_qconnect(struct krc_vq *vq, const char *addr, uint32_t port,
		 struct krcore_qconnect *qc)
{
	uint8_t gid[16];

	if (krc_gid_parse(addr, gid))
		return krcl_fail(-EINVAL, "\"%s\" is neither an IPv4 address nor a GID",
				 addr ? addr : "(null)");
	return krc_qconnect_gid(vq, gid, port, 0, qc);
}

int krc_lookup(struct krc_vq *vq, const char *addr, unsigned int flags,
	       struct krcore_lookup *lk)
{
	int ret;

	memset(lk, 0, sizeof(*lk));
	if (krc_gid_parse(addr, lk->gid))
		return krcl_fail(-EINVAL, "\"%s\" is neither an IPv4 address nor a GID",
				 addr ? addr : "(null)");
	lk->flags = flags;
	ret = krcl_ioctl(vq, KRCORE_IOC_LOOKUP, lk);
	return ret < 0 ? connect_fail(ret, lk->gid) : 0;
}

int krc_probe(struct krc_vq *vq, struct krcore_probe *pr)
{
	int ret;

	memset(pr, 0, sizeof(*pr));
	ret = krcl_ioctl(vq, KRCORE_IOC_PROBE, pr);
	if (ret == -ENOTCONN)
		return krcl_fail(ret, "the VQ is not connected");
	if (ret < 0)
		return krcl_fail(ret, "probe READ failed");
	return 0;
}

int krc_node_info(struct krc_vq *vq, struct krcore_node_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	ret = krcl_ioctl(vq, KRCORE_IOC_NODE_INFO, info);
	return ret < 0 ? krcl_fail(ret, "node query failed") : 0;
}

int krc_peer_info(struct krc_vq *vq, unsigned int index,
		  struct krcore_peer_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	info->index = index;
	ret = krcl_ioctl(vq, KRCORE_IOC_PEER_INFO, info);
	if (ret == -ENOENT)
		return krcl_fail(ret, "no peer %u", index);
	return ret < 0 ? krcl_fail(ret, "peer query failed") : 0;
}

int krc_peer_stats(struct krc_vq *vq, unsigned int index,
		   struct krcore_peer_stats *stats)
{
	int ret;

	memset(stats, 0, sizeof(*stats));
	stats->index = index;
	ret = krcl_ioctl(vq, KRCORE_IOC_PEER_STATS, stats);
	if (ret == -ENOENT)
		return krcl_fail(ret, "no peer %u", index);
	return ret < 0 ? krcl_fail(ret, "peer statistics query failed") : 0;
}

const char *krc_path_str(uint32_t path, char *buf, size_t len)
{
	static const char *const names[] = {
		"pooled", "cached", "lookup", "handshake", "refreshed", "local",
		"datagram"
	};
	size_t pos = 0;
	unsigned int i;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		if (!(path & (1u << i)))
			continue;
		pos += (size_t)snprintf(buf + pos, pos < len ? len - pos : 0,
					"%s%s", pos ? "+" : "", names[i]);
	}
	return buf;
}
