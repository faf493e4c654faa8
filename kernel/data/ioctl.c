// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl.c - the ioctls of a VQ's file descriptor, numbered by
 * include/uapi/krcore.h: the dispatch and one handler per command. Every
 * argument is copied in, checked here or by the layer it is for, and
 * copied out; nothing of the caller's memory is read twice. Commands
 * that use the device enter the node's gate first (krc_vq_enter()).
 */
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "data/data.h"
#include "card.h"

/* What this node is and holds (NODE_INFO): every layer's part. */
static void krc_node_fill_info(struct krcore_node_info *info)
{
	struct krc_node *node = &krc_node;

	memset(info, 0, sizeof(*info));
	mutex_lock(&node->lock);
	if (node->up) {
		info->flags |= KRCORE_NODE_F_UP;
		info->card = node->card;
		info->spares = krc_spares_count();
		krc_peers_count(&info->peers, &info->conns);
		krc_meta_info(info);
		krc_meta_host_info(info);
	}
	info->pool_size = krc_param_pool_size;
	mutex_unlock(&node->lock);
}

static long krc_ioc_version(void __user *uarg)
{
	struct krcore_version v = {
		.abi_version = KRCORE_ABI_VERSION,
	};

	strscpy(v.module_version, KRC_VERSION, sizeof(v.module_version));
	return copy_to_user(uarg, &v, sizeof(v)) ? -EFAULT : 0;
}

static long krc_ioc_query_card(void __user *uarg)
{
	struct krcore_card card;
	int ret = -ENODEV;

	/* The complete card (control QP included) once the node is up. */
	mutex_lock(&krc_node.lock);
	if (krc_node.up) {
		card = krc_node.card;
		ret = 0;
	}
	mutex_unlock(&krc_node.lock);
	if (ret)
		ret = krc_port_card(&card);
	if (ret)
		return ret;
	return copy_to_user(uarg, &card, sizeof(card)) ? -EFAULT : 0;
}

static long krc_ioc_query_port(void __user *uarg)
{
	struct krcore_port_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_port_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_node_info(void __user *uarg)
{
	struct krcore_node_info info;

	krc_node_fill_info(&info);
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long krc_ioc_peer_info(void __user *uarg)
{
	struct krcore_peer_info info;
	u32 index;
	int ret;

	if (get_user(index, (u32 __user *)uarg))
		return -EFAULT;
	ret = krc_peer_fill_info(index, &info);
	if (ret)
		return ret;
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * A peer's traffic counters add up every process's requests to it: they
 * tell one user what others do (who talks to whom, how much). Only an
 * operator of the node (CAP_NET_ADMIN) reads them (docs/trust-model.md);
 * the peer list itself (cards, connections) is the MetaServer's public
 * table and stays open to every user of /dev/krcore.
 */
static long krc_ioc_peer_stats(void __user *uarg)
{
	struct krcore_peer_stats st;
	u32 hdr[2];
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	if (copy_from_user(hdr, uarg, sizeof(hdr)))
		return -EFAULT;
	if (hdr[1])
		return -EINVAL;
	ret = krc_peer_fill_stats(hdr[0], &st);
	if (ret)
		return ret;
	return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
}

static long krc_ioc_lookup(void __user *uarg)
{
	struct krcore_lookup lk;
	int ret;

	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	if (lk.flags & ~KRCORE_LOOKUP_F_NOCACHE || krc_gid_is_zero(lk.gid))
		return -EINVAL;
	lk.path = 0;
	lk.reads = 0;
	lk.reserved = 0;
	lk.elapsed_ns = 0;
	memset(&lk.card, 0, sizeof(lk.card));
	ret = krc_connect_lookup(lk.gid, lk.flags, &lk);
	if (copy_to_user(uarg, &lk, sizeof(lk)))
		return -EFAULT;
	return ret;
}

/*
 * The errnos the ABI header lists for KRCORE_IOC_QCONNECT; whatever else
 * the layers below (MetaServer READs, the peer's NAK, the device) return
 * is EIO, so that the list stays complete.
 */
static int krc_qconnect_errno(int ret)
{
	switch (ret) {
	case 0:
	case -EISCONN:
	case -ENXIO:
	case -EHOSTUNREACH:
	case -ETIMEDOUT:
	case -ESTALE:
	case -EBUSY:
	case -ENOSPC:
	case -ECONNRESET:
	case -EINTR:
	case -ENODEV:
	case -EINVAL:
	case -EPERM:
	case -EFAULT:
	case -ENOMEM:
	case -EMSGSIZE:
		return ret;
	default:
		return -EIO;
	}
}

/*
 * Commands of older ABIs whose structure has grown since (the size is part
 * of the command number): served as the header promises, on the prefix
 * they know. ABI 2's QCONNECT had no ring_size and depth, ABI 13's no
 * ring_addr (the ring is the kernel's), ABI 3's QWAIT no messages and
 * reserved.
 */
#define KRCORE_IOC_QCONNECT_ABI2 \
	_IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x06, \
	     offsetof(struct krcore_qconnect, ring_size))
#define KRCORE_IOC_QCONNECT_ABI13 \
	_IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x06, \
	     offsetof(struct krcore_qconnect, ring_addr))
#define KRCORE_IOC_QWAIT_ABI3 \
	_IOC(_IOC_READ | _IOC_WRITE, KRCORE_IOC_MAGIC, 0x0b, \
	     offsetof(struct krcore_qwait, messages))
static_assert(offsetof(struct krcore_qconnect, ring_size) == 120);
static_assert(offsetof(struct krcore_qconnect, ring_addr) == 128);
static_assert(offsetof(struct krcore_qwait, messages) == 8);

static long krc_ioc_qconnect(struct krc_vqueue *vq, void __user *uarg,
			     size_t usize)
{
	struct krcore_qconnect qc = {};
	struct krc_peer *peer;
	struct krc_conn *conn;
	unsigned long tmo;
	int ret, tries;

	if (copy_from_user(&qc, uarg, usize))
		return -EFAULT;
	/* A port names a 16-bit port of the peer: never truncate it. */
	if (qc.flags & ~KRCORE_QCONNECT_F_RC || qc.port > 0xffff ||
	    qc.reserved || !PAGE_ALIGNED(qc.ring_addr))
		return -EINVAL;
	tmo = qc.timeout_ms ? qc.timeout_ms : krc_param_connect_timeout_ms;
	tmo = min_t(unsigned long, tmo, KRC_CONNECT_TIMEOUT_MAX_MS);
	qc.path = 0;
	qc.conn_id = 0;
	qc.qpn = 0;
	qc.reads = 0;
	qc.attempts = 0;
	qc.elapsed_ns = 0;
	qc.ring_size = 0;
	qc.depth = 0;
	memset(&qc.card, 0, sizeof(qc.card));

	if (mutex_lock_killable(&vq->lock))
		return -EINTR;
	if (vq->conn || vq->dgram) {
		ret = -EISCONN;
	} else if (!vq->proc) {
		ret = -EPERM;		/* a kernel thread */
	} else {
		ret = krc_vq_dp_ring(vq, qc.ring_addr, qc.ring_len,
				     &qc.ring_size);
		/*
		 * The connection picked may fail before the VQ joins it;
		 * its recovery would not see the VQ: pick again.
		 */
		for (tries = 0; !ret; tries++) {
			qc.path = 0;
			ret = krc_connect(qc.gid, tmo, &qc, &peer, &conn);
			if (ret)
				break;
			if (!conn) {
				/* The datagram path (dgram.c). */
				krc_peer_put(vq->peer);
				vq->peer = peer;
				krc_dg_vq_join(vq);
				vq->port = qc.port;
				vq->check.has_port = qc.port != 0;
				qc.ring_size = vq->ring_size;
				qc.depth = vq->depth;
				break;
			}
			if (krc_vq_attach(vq, conn)) {
				krc_conn_put(conn);
				/* Reconnecting after recovery lost the peer. */
				krc_peer_put(vq->peer);
				vq->peer = peer;
				vq->port = qc.port;
				vq->check.has_port = qc.port != 0;
				qc.ring_size = vq->ring_size;
				qc.depth = vq->depth;
				break;
			}
			krc_conn_put(conn);
			krc_peer_put(peer);
			if (tries >= 3 || fatal_signal_pending(current))
				ret = -ECONNRESET;
		}
	}
	/*
	 * It sends to a port: its first slots are asked for now. A node
	 * keeps a sender's state per (peer, port) while the peer is known,
	 * so their number is bounded: beyond, the VQ does not connect.
	 */
	if (!ret && vq->port) {
		ret = krc_flow_prefetch(vq);
		if (ret) {
			krc_vq_unbind(vq);
			vq->port = 0;
			vq->check.has_port = false;
		}
	}
	/* Which ring the VQ has: the caller's (ABI 14) or the kernel's. */
	qc.ring_addr = vq->slots ? vq->uring_addr : 0;
	mutex_unlock(&vq->lock);
	ret = krc_qconnect_errno(ret);
	if (ret)
		krc_event(KRC_EV_QCONNECT_FAILED);
	else if (qc.path & KRCORE_PATH_LOCAL)
		krc_event(KRC_EV_QCONNECT_LOCAL);
	else if (qc.path & KRCORE_PATH_DATAGRAM)
		krc_event(KRC_EV_QCONNECT_DATAGRAM);
	else if (qc.path & KRCORE_PATH_HANDSHAKE)
		krc_event(KRC_EV_QCONNECT_HANDSHAKE);
	else if (qc.path & KRCORE_PATH_LOOKUP)
		krc_event(KRC_EV_QCONNECT_LOOKUP);
	else
		krc_event(KRC_EV_QCONNECT_POOLED);
	if (copy_to_user(uarg, &qc, usize))
		return -EFAULT;
	return ret;
}

static long krc_ioc_probe(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_probe pr = {};
	struct krc_conn *conn;
	struct krc_kop *kop;
	u64 start;
	int ret;

	mutex_lock(&vq->lock);
	conn = vq->conn;
	if (conn)
		kref_get(&conn->ref);
	mutex_unlock(&vq->lock);
	if (!conn)
		return -ENOTCONN;
	ret = -EOPNOTSUPP;
	if (!conn->probe_rkey || conn->probe_len < KRCORE_CARD_SIZE)
		goto out;
	ret = -ENOMEM;
	kop = krc_kop_alloc(krc_node.dev->ibdev, KRCORE_CARD_SIZE,
			    DMA_FROM_DEVICE);
	if (!kop)
		goto out;
	start = ktime_get_ns();
	ret = krc_conn_read(conn, kop, conn->probe_addr, conn->probe_rkey,
			    KRCORE_CARD_SIZE);
	/*
	 * The VQ's connection is going, and recovery has yet to move the
	 * VQ (vq->conn changes only then): try again, it is not ENOTCONN.
	 */
	if (ret == -ENOTCONN)
		ret = -EAGAIN;
	/*
	 * A slow answer is not a dead connection: other processes share
	 * it. A READ that failed already failed the connection (conn.c);
	 * one that never completes is the watchdog's (recovery.c), after
	 * wr_timeout_ms without progress. The probe gives up a little
	 * before that, 7/8 of it (at least 1 s): its ETIMEDOUT says the
	 * READ made no progress for most of the time the watchdog allows,
	 * and it is the probe's answer, not the failed connection's (a
	 * fixed 2 s was too short for a debug kernel's READ after a
	 * retransmission; waiting the whole wr_timeout_ms raced the
	 * watchdog, which then failed the shared connection).
	 */
	if (!ret)
		ret = krc_kop_wait(kop, max_t(u32, krc_param_wr_timeout_ms / 8 * 7,
					      1000));
	pr.elapsed_ns = ktime_get_ns() - start;
	if (!ret)
		ret = krc_card_decode(kop->buf, &pr.card) ? -EBADMSG : 0;
	krc_kop_put(kop);
	krc_event(KRC_EV_PROBES);
	if (!ret && copy_to_user(uarg, &pr, sizeof(pr)))
		ret = -EFAULT;
out:
	krc_conn_put(conn);
	return ret;
}

static long krc_ioc_reg_mr(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_reg_mr req;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	ret = krc_mr_reg(vq->proc, &req);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		krc_mr_dereg(vq->proc, req.lkey);
		return -EFAULT;
	}
	return 0;
}

static long krc_ioc_dereg_mr(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_dereg_mr req;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved)
		return -EINVAL;
	return krc_mr_dereg(vq->proc, req.lkey);
}

/*
 * A qpush that failed as a whole, before any request was looked at (not
 * the VQ's owner, device gone, killed): done 0, the errno, reason OK.
 */
static long krc_qpush_fail(void __user *uarg, long err)
{
	struct krcore_qpush __user *u = uarg;

	if (put_user(0, &u->done) || put_user((u32)-err, &u->error) ||
	    put_user(KRCORE_R_OK, &u->reason))
		return -EFAULT;
	return err;
}

static long krc_ioc_qpush(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_qpush req;
	long ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!vq->proc)
		return krc_qpush_fail(uarg, -EACCES);
	req.error = 0;
	ret = krc_vq_push(vq, u64_to_user_ptr(req.wrs), req.count, &req);
	/* All posted: the count is the answer, nothing to copy back. */
	if (!ret)
		return req.done;
	if (!req.error)
		return krc_qpush_fail(uarg, ret);
	if (copy_to_user(uarg, &req, sizeof(req)))
		return -EFAULT;
	return ret;
}

static long krc_ioc_qwait(struct krc_vqueue *vq, void __user *uarg, size_t usize)
{
	struct krcore_qwait req = {};
	long ret = 0;

	if (copy_from_user(&req, uarg, usize))
		return -EFAULT;
	if (!vq->ring && !vq->rring) {
		req.available = 0;
		req.messages = 0;
		return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT :
							       -ENOTCONN;
	}
	if (!krc_vq_ready(vq, &req) && req.timeout_ms) {
		ret = wait_event_interruptible_timeout
			(vq->wq, krc_vq_ready(vq, &req),
			 msecs_to_jiffies(req.timeout_ms));
		if (ret == -ERESTARTSYS)
			ret = -EINTR;
		else if (ret > 0)
			ret = 0;
	}
	if (!ret && !req.available && !req.messages) {
		if (READ_ONCE(vq->gone))
			ret = -ENODEV;
		else
			ret = krc_vq_connected(vq) || vq->rring ? -ETIMEDOUT :
								  -ENOTCONN;
	}
	if (copy_to_user(uarg, &req, usize))
		return -EFAULT;
	return ret;
}

static long krc_ioc_qbind(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_qbind req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	mutex_lock(&vq->lock);
	ret = krc_vq_bind_port(vq, req.port, &req.ring_size);
	mutex_unlock(&vq->lock);
	if (!ret && copy_to_user(uarg, &req, sizeof(req)))
		ret = -EFAULT;
	return ret;
}

static long krc_ioc_flow_wait(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_flow_wait w;
	long ret;

	if (copy_from_user(&w, uarg, sizeof(w)))
		return -EFAULT;
	w.credit = 0;
	ret = krc_flow_wait(vq, &w);
	if (copy_to_user(uarg, &w, sizeof(w)))
		return -EFAULT;
	return ret;
}

/*
 * Commands that use the node's device enter its gate: device removal
 * waits for them, and they fail with ENODEV once it is gone (or once this
 * VQ lost it).
 */
int krc_vq_enter(struct krc_vqueue *vq)
{
	int ret = krc_node_enter();

	if (!ret && READ_ONCE(vq->gone)) {
		krc_node_leave();
		ret = -ENODEV;
	}
	return ret;
}

/*
 * Membership (any user of /dev/krcore: node addresses and incarnations
 * are what KRCORE_IOC_LOOKUP gives too). Each look at the list enters the
 * node's gate; the wait between looks is outside it, so that a waiting
 * process never holds up the node's teardown.
 */
static long krc_ioc_members(struct krc_vqueue *vq, void __user *uarg)
{
	unsigned long deadline;
	struct krcore_members ms;
	struct krc_members_view v;
	unsigned int age = 0;
	long ret;

	if (copy_from_user(&ms, uarg, sizeof(ms)))
		return -EFAULT;
	if (ms.flags || ms.reserved ||
	    ms.timeout_ms > KRCORE_MEMBERS_MAX_WAIT_MS)
		return -EINVAL;
	deadline = jiffies + msecs_to_jiffies(ms.timeout_ms);
	for (;;) {
		ret = krc_vq_enter(vq);
		if (ret)
			return ret;
		ret = krc_meta_members(ms.max, age, &v);
		krc_node_leave();
		if (ret)
			return ret;
		if (!ms.timeout_ms || v.gen != ms.since_gen ||
		    time_after_eq(jiffies, deadline))
			break;
		kvfree(v.m);
		if (msleep_interruptible(KRCORE_MEMBERS_POLL_MS))
			return -EINTR;
		age = KRCORE_MEMBERS_POLL_MS;
	}
	ms.count = v.count;
	ms.gen = v.gen;
	ms.self = v.self;
	ret = 0;
	if (v.n && copy_to_user(u64_to_user_ptr(ms.entries), v.m,
				(size_t)v.n * sizeof(*v.m)))
		ret = -EFAULT;
	kvfree(v.m);
	if (!ret && copy_to_user(uarg, &ms, sizeof(ms)))
		ret = -EFAULT;
	return ret;
}

static long krc_vq_ioctl_dev(struct krc_vqueue *vq, unsigned int cmd,
			     void __user *uarg)
{
	switch (cmd) {
	case KRCORE_IOC_LOOKUP:
		return krc_ioc_lookup(uarg);
	case KRCORE_IOC_QCONNECT:
	case KRCORE_IOC_QCONNECT_ABI13:
	case KRCORE_IOC_QCONNECT_ABI2:
		return krc_ioc_qconnect(vq, uarg, _IOC_SIZE(cmd));
	case KRCORE_IOC_PROBE:
		return krc_ioc_probe(vq, uarg);
	case KRCORE_IOC_REG_MR:
		return krc_ioc_reg_mr(vq, uarg);
	case KRCORE_IOC_DEREG_MR:
		return krc_ioc_dereg_mr(vq, uarg);
	case KRCORE_IOC_QPUSH:
		return krc_ioc_qpush(vq, uarg);
	case KRCORE_IOC_QBIND:
		return krc_ioc_qbind(vq, uarg);
	case KRCORE_IOC_QCONSUMED:
		krc_flow_consumed(vq);
		return 0;
	default:
		return -ENOTTY;
	}
}

long krc_vq_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct krc_vqueue *vq = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	switch (cmd) {
	case KRCORE_IOC_VERSION:
		ret = krc_ioc_version(uarg);
		break;
	case KRCORE_IOC_QUERY_CARD:
		ret = krc_ioc_query_card(uarg);
		break;
	case KRCORE_IOC_QUERY_PORT:
		ret = krc_ioc_query_port(uarg);
		break;
	case KRCORE_IOC_NODE_INFO:
		ret = krc_ioc_node_info(uarg);
		break;
	case KRCORE_IOC_PEER_INFO:
		ret = krc_ioc_peer_info(uarg);
		break;
	case KRCORE_IOC_PEER_STATS:
		ret = krc_ioc_peer_stats(uarg);
		break;
	case KRCORE_IOC_QWAIT:
	case KRCORE_IOC_QWAIT_ABI3:
		ret = krc_ioc_qwait(vq, uarg, _IOC_SIZE(cmd));
		break;
	case KRCORE_IOC_FLOW_WAIT:
		/* Sleeps: outside the gate, like QWAIT. */
		ret = krc_ioc_flow_wait(vq, uarg);
		break;
	case KRCORE_IOC_MEMBERS:
		/* Sleeps between its looks, which enter the gate. */
		ret = krc_ioc_members(vq, uarg);
		break;
	case KRCORE_IOC_LMR_ALLOC:
		/* Waits for the owner's answer outside the gate. */
		ret = krc_ioc_lmr_alloc(vq, uarg);
		break;
	case KRCORE_IOC_LMR_FREE:
		ret = krc_ioc_lmr_free(vq, uarg);
		break;
	case KRCORE_IOC_LMR_SET:
		ret = krc_ioc_lmr_set(vq, uarg);
		break;
	case KRCORE_IOC_LMR_COPY:
		ret = krc_ioc_lmr_copy(vq, uarg);
		break;
	case KRCORE_IOC_LOCK:
		/* Waits for the grant outside the gate. */
		ret = krc_ioc_lock(vq, uarg);
		break;
	case KRCORE_IOC_UNLOCK:
		ret = krc_ioc_unlock(vq, uarg);
		break;
	case KRCORE_IOC_QPRIO:
		ret = krc_ioc_qprio(vq, uarg);
		break;
	case KRCORE_IOC_LMR_PUBLISH:
	case KRCORE_IOC_LMR_UNPUBLISH:
		/* Waits for the owner's answer outside the gate. */
		ret = krc_ioc_lmr_publish(vq, uarg,
					  cmd == KRCORE_IOC_LMR_PUBLISH);
		break;
	case KRCORE_IOC_LMR_LOOKUP:
		/* Enters the gate; waits for an answer outside it. */
		ret = krc_ioc_lmr_lookup(vq, uarg);
		break;
	case KRCORE_IOC_LOOKUP:
	case KRCORE_IOC_QCONNECT:
	case KRCORE_IOC_QCONNECT_ABI13:
	case KRCORE_IOC_QCONNECT_ABI2:
	case KRCORE_IOC_PROBE:
	case KRCORE_IOC_REG_MR:
	case KRCORE_IOC_DEREG_MR:
	case KRCORE_IOC_QPUSH:
	case KRCORE_IOC_QBIND:
	case KRCORE_IOC_QCONSUMED:
		ret = krc_vq_enter(vq);
		if (ret) {
			if (cmd == KRCORE_IOC_QPUSH)
				ret = krc_qpush_fail(uarg, ret);
			break;
		}
		ret = krc_vq_ioctl_dev(vq, cmd, uarg);
		krc_node_leave();
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	if (ret < 0)
		krc_event(KRC_EV_IOCTL_ERRORS);
	return ret;
}

