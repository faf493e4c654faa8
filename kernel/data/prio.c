// SPDX-License-Identifier: GPL-2.0
/*
 * prio.c - priority classes on the shared RC connections (LITE's QoS):
 * a VQ of class KRCORE_PRIO_HIGH does not wait behind other processes'
 * bulk transfers on the connection it shares with them.
 *
 * A shared RC QP executes its requests in order, so a small request
 * waits behind everything posted before it. The rule: a connection yields
 * while a high VQ has requests on it (conn->high_inflight, counted on the
 * ledger's entries) and for prio_window_ms after its last post or
 * completion there; while it yields, the other VQs on it may only post
 * while its requests in flight (conn->sq_bytes) stay within
 * prio_yield_bytes (one longer request alone when nothing is in flight),
 * so a high request waits behind that much at most. Requests held back
 * are refused as if the queue were full (KRCORE_R_QP_FULL: the caller
 * posts again once some complete). The default yield is above what a
 * 100 Gb/s link carries in a round trip: the others' throughput stays,
 * only their queue gets shorter.
 *
 * A high VQ is bounded so that any process may have one: each request
 * moves at most prio_high_bytes (the request check's limit), all of them
 * in flight too (send.c), and a process has at most prio_high_vqs of them
 * (proc->high_vqs, given back when the VQ is freed). Locks: vq->lock for
 * vq->prio (the ioctl and qpush both hold it); conn->lock for the
 * connection's high_inflight and high_until.
 */
#include "data/data.h"

/* KRCORE_IOC_QPRIO: the VQ's class, set by its own process. */
long krc_ioc_qprio(struct krc_vqueue *vq, void __user *uarg)
{
	struct krcore_qprio qp;
	u32 max = READ_ONCE(krc_param_prio_high_vqs);
	int ret = 0;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&qp, uarg, sizeof(qp)))
		return -EFAULT;
	if (qp.reserved || qp.prio > KRCORE_PRIO_HIGH)
		return -EINVAL;
	if (mutex_lock_killable(&vq->lock))
		return -EINTR;
	if (qp.prio == vq->prio)
		goto out;
	if (qp.prio == KRCORE_PRIO_HIGH) {
		if (atomic_inc_return(&vq->proc->high_vqs) > max) {
			atomic_dec(&vq->proc->high_vqs);
			ret = -EPERM;
			goto out;
		}
	} else {
		atomic_dec(&vq->proc->high_vqs);
	}
	vq->prio = qp.prio;
	krc_event(qp.prio == KRCORE_PRIO_HIGH ? KRC_EV_PRIO_HIGH_VQS :
		  KRC_EV_PRIO_NORMAL_VQS);
out:
	mutex_unlock(&vq->lock);
	return ret;
}

/* The largest request a high VQ may post. */
u32 krc_prio_max_msg(void)
{
	return clamp_t(u32, READ_ONCE(krc_param_prio_high_bytes), 8,
		       KRCORE_MAX_MSG);
}

/* The VQ is freed: its process may have another high one. */
void krc_prio_vq_gone(struct krc_vqueue *vq)
{
	if (vq->prio == KRCORE_PRIO_HIGH && vq->proc)
		atomic_dec(&vq->proc->high_vqs);
	vq->prio = KRCORE_PRIO_NORMAL;
}

static unsigned long krc_prio_until(unsigned long now)
{
	u32 win = msecs_to_jiffies(READ_ONCE(krc_param_prio_window_ms));

	return now + win ?: 1;	/* 0 means none */
}

/* Ledger entry @e leaves @conn (done, flushed, or to recovery). */
void krc_prio_retire(struct krc_conn *conn, const struct krc_sq_ent *e)
{
	lockdep_assert_held(&conn->lock);
	if (!e->high || WARN_ON_ONCE(!conn->high_inflight))
		return;
	if (!--conn->high_inflight)
		conn->high_until = krc_prio_until(jiffies);
}

/*
 * Of the @n new requests of @vq in @slots about to be posted on @conn,
 * how many may go now; *reason says why not all. A high VQ's post makes
 * the connection yield. Caller holds conn->lock.
 */
int krc_prio_admit(struct krc_conn *conn, struct krc_vqueue *vq,
		   const u16 *slots, int n, u32 *reason, unsigned long now)
{
	u64 yield = READ_ONCE(krc_param_prio_yield_bytes);
	u64 bytes = conn->sq_bytes;
	int i;

	lockdep_assert_held(&conn->lock);
	if (vq->prio == KRCORE_PRIO_HIGH) {
		if (n)
			conn->high_until = krc_prio_until(now);
		return n;
	}
	if (!conn->high_inflight &&
	    (!conn->high_until || time_after_eq(now, conn->high_until))) {
		conn->high_until = 0;
		return n;
	}
	for (i = 0; i < n; i++) {
		u32 len = vq->slots[slots[i]].len;

		if (bytes + len > yield && (bytes || i))
			break;
		bytes += len;
	}
	if (i < n) {
		*reason = KRCORE_R_QP_FULL;
		krc_event(KRC_EV_PRIO_YIELDS);
	}
	return i;
}
