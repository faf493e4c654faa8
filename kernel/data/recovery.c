// SPDX-License-Identifier: GPL-2.0
/*
 * recovery.c - a shared QP that failed, recovered without losing the
 * other processes' work.
 *
 * Errors that the local checks cannot see (a bad rkey or remote address, a
 * peer that went away) put a shared RC QP in error. Then:
 *   - the request that failed completes with its real status on its VQ,
 *     and that VQ's later requests are flushed, as on a private QP;
 *   - every other outstanding request is kept: once the QP has flushed,
 *     READs and WRITEs are re-posted, in order, on another pooled
 *     connection to the peer (or a new one); atomics, SENDs and WRITEs
 *     with immediate complete with KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN;
 *   - the VQs move to the new connection, the old one is destroyed.
 * The watchdog (conn/watchdog.c) forces the same recovery when a request
 * stays outstanding longer than wr_timeout_ms.
 *
 * The RC cap closing an idle connection (conn/evict.c) moves its VQs too,
 * to the datagram path of their peer: krc_vqs_to_dgram().
 */
#include <linux/delay.h>
#include <linux/slab.h>

#include "data/data.h"

/* Put @conn's QP in error: every outstanding request completes (flushed). */
static void krc_conn_force_error(struct krc_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (conn->qp && !READ_ONCE(conn->dead))
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
}

/* Is a registration the request uses being deregistered? */
static bool krc_slot_mr_dying(const struct krc_slot *s)
{
	int k;

	for (k = 0; k < KRCORE_MAX_SGE; k++)
		if (s->mrs[k] && READ_ONCE(s->mrs[k]->dying))
			return true;
	return false;
}

/*
 * The target failed too (connections of a peer failing one after the
 * other, the peer's end failing first): another one, for as long as a
 * connect may take (connect_timeout_ms) and at most KRC_RETARGETS times.
 */
#define KRC_RETARGETS	64

static struct krc_conn *krc_retarget(struct krc_peer *peer,
				     struct krc_conn *old, int *tries,
				     unsigned long deadline)
{
	krc_conn_put(old);
	if ((*tries)++ >= KRC_RETARGETS || time_after(jiffies, deadline))
		return NULL;
	krc_event(KRC_EV_RECOVERY_RETARGETS);
	if (*tries > 1)
		msleep(20);	/* let the failures of the others settle */
	return krc_peer_connect_any(peer);
}

static void krc_recover_entry(struct krc_sq_ent *e, struct krc_vqueue *culprit,
			      struct krc_peer *peer, struct krc_conn **target,
			      int *tries, unsigned long deadline)
{
	struct krc_vqueue *vq = e->vq;
	u8 opcode = vq->slots[e->slot].wr.opcode;

	if (vq->closing || vq == culprit ||
	    krc_slot_mr_dying(&vq->slots[e->slot])) {
		/* Its owner is going, or is giving its memory back. */
		krc_peer_count(peer, KRC_PS_WR_ERRORS, 1);
		krc_dp_complete(e, KRCORE_WC_FLUSHED, 0);
		return;
	}
	if (!krc_wr_idempotent(opcode)) {
		krc_event(KRC_EV_WR_NOT_EXECUTED);
		krc_peer_count(peer, KRC_PS_WR_NOT_EXECUTED, 1);
		krc_peer_count(peer, KRC_PS_WR_ERRORS, 1);
		krc_dp_complete(e, *target ? KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN :
				KRCORE_WC_UNREACHABLE, 0);
		return;
	}
	while (*target) {
		if (!krc_post_one(*target, vq, e->slot)) {
			krc_event(KRC_EV_WR_REPOSTED);
			krc_peer_count(peer, KRC_PS_WR_REPOSTED, 1);
			return;
		}
		*target = krc_retarget(peer, *target, tries, deadline);
	}
	krc_peer_count(peer, KRC_PS_WR_ERRORS, 1);
	krc_dp_complete(e, KRCORE_WC_UNREACHABLE, 0);
}

/*
 * Recover the failed @conn (conn/'s recover_work, which holds a reference
 * on it for us). Process context.
 */
void krc_recover(struct krc_conn *conn)
{
	struct krc_peer *peer = conn->peer;
	struct krc_conn *target;
	struct krc_vqueue *vq;
	unsigned long flags, deadline;
	int tries = 0;
	bool idle;
	u32 i, left;

	krc_event(KRC_EV_RECOVERIES);
	krc_peer_count(peer, KRC_PS_RECOVERIES, 1);
	/* 1. Out of the pool; wait for the QP to flush everything. */
	if (krc_peer_detach(conn))
		krc_conn_put(conn);
	krc_conn_set_error(conn);
	krc_conn_force_error(conn);
	if (wait_event_timeout(conn->drain_wq,
			       READ_ONCE(conn->sq_head) == READ_ONCE(conn->sq_tail),
			       msecs_to_jiffies(5000))) {
		/*
		 * Everything flushed: no request of it can DMA any more.
		 * The QP goes with the last reference, off this path (a
		 * driver may take long to destroy a QP: rxe waits for its
		 * packets in flight).
		 */
		spin_lock_irqsave(&conn->lock, flags);
		conn->dead = true;
		spin_unlock_irqrestore(&conn->lock, flags);
	} else {
		/* No DMA once the QP is destroyed: then the rest is ours. */
		krc_conn_kill(conn);
	}
	/* The time to find a new connection starts now. */
	deadline = jiffies + msecs_to_jiffies(krc_param_connect_timeout_ms);
	spin_lock_irqsave(&conn->lock, flags);
	left = conn->sq_tail - conn->sq_head;
	for (i = 0; i < left; i++) {
		struct krc_sq_ent *e = &conn->sq[conn->sq_head++ % conn->sq_size];

		conn->sq_bytes -= e->len;
		krc_prio_retire(conn, e);
		conn->rec[conn->nrec++] = *e;
	}
	/*
	 * Nothing outstanding and no VQ (the passive end of a failure, a
	 * pooled connection nobody used): nothing to move, so no new
	 * connection either. A failing connection takes no new VQ.
	 */
	idle = !conn->nrec && list_empty(&conn->vqs);
	spin_unlock_irqrestore(&conn->lock, flags);

	/* 2. Somewhere to go. */
	target = idle ? NULL : krc_peer_connect_any(peer);
	while (!idle && !target && peer && !READ_ONCE(peer->dead) &&
	       READ_ONCE(krc_node.up) && tries < KRC_RETARGETS &&
	       time_before(jiffies, deadline))
		target = krc_retarget(peer, NULL, &tries, deadline);
	if (target && conn->nrec) {
		pr_info("krcore: conn %u: recovery re-posts on conn %u\n",
			conn->id, target->id);
		/* Testing: let something happen to the target meanwhile. */
		krc_fault_sleep(&krc_fault_recover_delay_ms);
	}

	/* 3. Re-post (or fail) what was outstanding, in order, then move
	 * the VQs: their new requests come after the re-posted ones.
	 */
	for (i = 0; i < conn->nrec; i++)
		krc_recover_entry(&conn->rec[i], conn->culprit, peer, &target,
				  &tries, deadline);
	conn->nrec = 0;

	/*
	 * One VQ at a time, each held by a reference and moved under its
	 * own lock after checking that it is still on @conn: a VQ being
	 * closed leaves the list under the same locks.
	 */
	while ((vq = krc_conn_first_vq(conn))) {
		mutex_lock(&vq->lock);
		if (vq->conn == conn) {
			spin_lock_irqsave(&conn->lock, flags);
			list_del_init(&vq->conn_node);
			spin_unlock_irqrestore(&conn->lock, flags);
			atomic_dec(&conn->nvqs);
			/*
			 * vq->conn stays @conn until the VQ has a new one:
			 * QWAIT and poll read it without the VQ's lock.
			 */
			while (target && !krc_vq_attach(vq, target))
				target = krc_retarget(peer, target, &tries,
						      deadline);
			if (!target) {
				WRITE_ONCE(vq->conn, NULL);
				krc_event(KRC_EV_VQ_DISCONNECTED);
			}
			/* The kernel's count; the ring shows a copy. */
			vq->recoveries++;
			/* Not after the close: the ring may be reused. */
			if (vq->ring && !vq->closing)
				WRITE_ONCE(vq->ring->recoveries, vq->recoveries);
			krc_conn_put(conn);	/* the VQ's reference */
		} else {
			/* Not ours (cannot happen): never loop on it. */
			spin_lock_irqsave(&conn->lock, flags);
			list_del_init(&vq->conn_node);
			spin_unlock_irqrestore(&conn->lock, flags);
		}
		mutex_unlock(&vq->lock);
		wake_up(&vq->wq);
		krc_vq_put(vq);
	}
	if (idle)
		pr_info("krcore: conn %u failed with nothing on it: dropped\n",
			conn->id);
	else
		pr_info("krcore: conn %u recovered%s\n", conn->id,
			target ? "" : ": peer unreachable, its VQs disconnected");
	if (peer && target)
		krc_peer_grow(peer);
	krc_conn_put(target);
}

/* Does a request posted on @conn use the registration @arg? */
static bool krc_conn_uses_mr(struct krc_conn *conn, const void *arg)
{
	u32 pos, k;

	lockdep_assert_held(&conn->lock);
	for (pos = conn->sq_head; pos != conn->sq_tail; pos++) {
		struct krc_sq_ent *e = &conn->sq[pos % conn->sq_size];
		struct krc_slot *sl = &e->vq->slots[e->slot];

		for (k = 0; k < KRCORE_MAX_SGE; k++)
			if (sl->mrs[k] && &sl->mrs[k]->view == arg)
				return true;
	}
	return false;
}

/*
 * Fail every connection with a posted request that uses the registration
 * @view (a deregistration that waited too long): the QPs flush them.
 */
void krc_conns_fail_using(const struct krc_mr_view *view)
{
	struct krc_conn *hit[16];
	int n, i;

	n = krc_conns_collect(krc_conn_uses_mr, view, hit, ARRAY_SIZE(hit));
	for (i = 0; i < n; i++) {
		krc_conn_fail(hit[i]);
		krc_conn_put(hit[i]);
	}
}

/*
 * Move the VQs of @conn (marked closing) to the datagram path of its
 * peer, each idle under its own lock. A VQ busy in a call (its lock
 * taken: the caller may hold a VQ's lock itself, in qconnect) or with
 * requests outstanding makes it -EBUSY; those moved stay on datagrams
 * and come back to RC with their next request.
 */
int krc_vqs_to_dgram(struct krc_conn *conn)
{
	struct krc_peer *peer = conn->peer;
	unsigned long flags;
	struct krc_vqueue *vq;
	int ret = 0, moved = 0;

	if (!atomic_read(&conn->nvqs))
		return 0;
	if (READ_ONCE(krc_param_dg_policy) == KRC_DG_OFF)
		return -EBUSY;
	ret = krc_dg_open(peer);
	if (ret)
		return ret;
	while (!ret && (vq = krc_conn_first_vq(conn))) {
		if (!mutex_trylock(&vq->lock)) {
			krc_vq_put(vq);
			ret = -EBUSY;
			break;
		}
		if (vq->conn != conn) {
			/* Not ours (cannot happen): never loop on it. */
			spin_lock_irqsave(&conn->lock, flags);
			list_del_init(&vq->conn_node);
			spin_unlock_irqrestore(&conn->lock, flags);
		} else if (READ_ONCE(vq->inflight) || vq->closing) {
			ret = -EBUSY;
		} else {
			spin_lock_irqsave(&conn->lock, flags);
			list_del_init(&vq->conn_node);
			spin_unlock_irqrestore(&conn->lock, flags);
			atomic_dec(&conn->nvqs);
			/* On datagrams before it leaves @conn: QWAIT and poll
			 * read both without the VQ's lock, and must never see
			 * it without a path.
			 */
			krc_dg_vq_join(vq);
			WRITE_ONCE(vq->conn, NULL);
			krc_conn_put(conn);	/* the VQ's reference */
			moved++;
		}
		mutex_unlock(&vq->lock);
		wake_up(&vq->wq);
		krc_vq_put(vq);
	}
	if (moved)
		krc_event_add(KRC_EV_RC_VQS_TO_DGRAM, moved);
	return ret;
}
