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
 * A watchdog forces the same recovery when a request stays outstanding
 * longer than wr_timeout_ms (some transports, rxe among them, never time
 * out a request to a peer that vanished).
 */
#include <linux/delay.h>
#include <linux/slab.h>

#include "krcore.h"

static LIST_HEAD(krc_conns);
static DEFINE_SPINLOCK(krc_conns_lock);
static struct delayed_work krc_watchdog;

void krc_conn_track(struct krc_conn *conn)
{
	spin_lock(&krc_conns_lock);
	list_add(&conn->all_node, &krc_conns);
	spin_unlock(&krc_conns_lock);
}

void krc_conn_untrack(struct krc_conn *conn)
{
	spin_lock(&krc_conns_lock);
	if (!list_empty(&conn->all_node))
		list_del_init(&conn->all_node);
	spin_unlock(&krc_conns_lock);
}

/* Put @conn's QP in error: every outstanding request completes (flushed). */
static void krc_conn_force_error(struct krc_conn *conn)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (conn->qp && !READ_ONCE(conn->dead))
		ib_modify_qp(conn->qp, &attr, IB_QP_STATE);
}

/*
 * Fail @conn (any context): no new request goes on it, and recovery takes
 * over its outstanding requests and VQs.
 */
void krc_conn_fail_async(struct krc_conn *conn)
{
	unsigned long flags;
	bool start;

	spin_lock_irqsave(&conn->lock, flags);
	start = !conn->failing && !conn->dead;
	conn->failing = true;
	spin_unlock_irqrestore(&conn->lock, flags);
	if (!start)
		return;
	kref_get(&conn->ref);
	if (!queue_work(krc_wq, &conn->recover_work))
		krc_conn_put(conn);
}

/* A connection to re-post on: a pooled one, else a new handshake. */
static struct krc_conn *krc_recover_target(struct krc_peer *peer)
{
	struct krc_hs_opts o = {
		.deadline = jiffies + msecs_to_jiffies(krc_param_connect_timeout_ms),
		.verify_card = true,
	};
	struct krc_conn *conn;
	int ret;

	if (!peer)
		return NULL;
	conn = krc_peer_pick(peer);
	if (conn)
		return conn;
	mutex_lock(&peer->connect_lock);
	conn = krc_peer_pick(peer);
	if (!conn && peer->local && READ_ONCE(krc_node.up) && !peer->dead) {
		/* The node itself: rebuild the loopback connection. */
		conn = krc_node_loopback_connect();
		if (IS_ERR(conn)) {
			pr_warn("krcore: recovery: no loopback connection: %ld\n",
				PTR_ERR(conn));
			conn = NULL;
		}
	} else if (!conn && !peer->local && !READ_ONCE(peer->dead)) {
		ret = krc_hs_connect(peer, &o, &conn);
		if (ret) {
			pr_warn("krcore: recovery: no connection to the peer: %d\n",
				ret);
			conn = NULL;
		}
	}
	mutex_unlock(&peer->connect_lock);
	return conn;
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
	return krc_recover_target(peer);
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

void krc_recover_work(struct work_struct *work)
{
	struct krc_conn *conn = container_of(work, struct krc_conn,
					     recover_work);
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
	target = idle ? NULL : krc_recover_target(peer);
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
			if (vq->ring)
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
	krc_conn_put(conn);	/* the work's reference */
}

/*
 * Find connections whose QP went to error with nothing posted on our side:
 * the passive end of a failure (a peer's request broke the QP on its
 * side: our responder moved to error without a completion here), when
 * the device reports no event for it (rxe). A batch of connections per
 * tick, round robin.
 */
#define KRC_STATE_CHECKS	64

static void krc_watchdog_check_states(void)
{
	static u32 last_id;
	struct krc_conn *conn, *batch[KRC_STATE_CHECKS];
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int n = 0, i, pass;

	spin_lock(&krc_conns_lock);
	for (pass = 0; pass < 2 && n < KRC_STATE_CHECKS; pass++) {
		list_for_each_entry(conn, &krc_conns, all_node) {
			if (n == KRC_STATE_CHECKS)
				break;
			if (pass == 0 ? conn->id <= last_id : conn->id > last_id)
				continue;
			if (READ_ONCE(conn->state) != KRC_CONN_READY ||
			    READ_ONCE(conn->failing) || READ_ONCE(conn->dead))
				continue;
			kref_get(&conn->ref);
			batch[n++] = conn;
		}
	}
	spin_unlock(&krc_conns_lock);
	for (i = 0; i < n; i++) {
		bool err = false, live;

		conn = batch[i];
		last_id = conn->id;
		/* The QP stays while qp_users > 0 (krc_conn_teardown). */
		spin_lock_irq(&conn->lock);
		live = !conn->dead && conn->qp;
		if (live)
			atomic_inc(&conn->qp_users);
		spin_unlock_irq(&conn->lock);
		if (live) {
			err = !ib_query_qp(conn->qp, &attr, IB_QP_STATE, &init) &&
			      attr.qp_state == IB_QPS_ERR;
			if (atomic_dec_and_test(&conn->qp_users))
				wake_up_all(&conn->drain_wq);
		}
		if (err && !READ_ONCE(conn->failing)) {
			pr_warn_ratelimited("krcore: conn %u (qp %u) found in error; recovering\n",
					    conn->id, conn->qpn);
			krc_event(KRC_EV_CONN_FOUND_DEAD);
			krc_conn_fail(conn);
		}
		krc_conn_put(conn);
	}
}

/*
 * Has @conn made no progress for too long with requests outstanding? Its
 * age counts from its last completion (or from when work was posted on an
 * idle connection), not from a request's post time: a deep queue is not a
 * dead peer. A long transfer adds the time its bytes need at the slowest
 * rate still considered alive (wr_min_mbps). Caller holds conn->lock.
 */
static bool krc_conn_stalled(struct krc_conn *conn, unsigned long limit)
{
	u64 extra_ms = 0;

	if (conn->sq_head == conn->sq_tail && !atomic_read(&conn->outstanding))
		return false;
	if (krc_param_wr_min_mbps)
		extra_ms = div_u64(conn->sq_bytes,
				   (u64)krc_param_wr_min_mbps * 1000);
	return time_after(jiffies, conn->progress + limit +
			  msecs_to_jiffies(min_t(u64, extra_ms, 3600000)));
}

/* Connections stalled too long: failed, their requests recovered. */
static void krc_watchdog_fn(struct work_struct *work)
{
	unsigned long limit = msecs_to_jiffies(krc_param_wr_timeout_ms);
	struct krc_conn *conn, *stuck[8];
	unsigned long flags;
	int n = 0, i;

	spin_lock(&krc_conns_lock);
	list_for_each_entry(conn, &krc_conns, all_node) {
		bool old;

		spin_lock_irqsave(&conn->lock, flags);
		old = !conn->failing && !conn->dead && krc_conn_stalled(conn, limit);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (old && n < ARRAY_SIZE(stuck)) {
			kref_get(&conn->ref);
			stuck[n++] = conn;
		}
	}
	spin_unlock(&krc_conns_lock);
	krc_watchdog_check_states();
	for (i = 0; i < n; i++) {
		pr_warn("krcore: conn %u: no progress for over %u ms with requests outstanding, failing the connection\n",
			stuck[i]->id, krc_param_wr_timeout_ms);
		krc_event(KRC_EV_WR_TIMEOUTS);
		krc_peer_count(stuck[i]->peer, KRC_PS_WR_TIMEOUTS, 1);
		/* The peer may have gone or reloaded: verify its card too. */
		krc_conn_fail(stuck[i]);
		krc_conn_put(stuck[i]);
	}
	queue_delayed_work(krc_wq, &krc_watchdog, HZ);
}

/*
 * Fail every connection with a posted request that uses the registration
 * @view (a deregistration that waited too long): the QPs flush them.
 */
void krc_conns_fail_using(const struct krc_mr_view *view)
{
	struct krc_conn *conn, *hit[16];
	unsigned long flags;
	int n = 0, i;
	u32 pos, k;

	spin_lock(&krc_conns_lock);
	list_for_each_entry(conn, &krc_conns, all_node) {
		bool uses = false;

		spin_lock_irqsave(&conn->lock, flags);
		for (pos = conn->sq_head; !uses && pos != conn->sq_tail; pos++) {
			struct krc_sq_ent *e = &conn->sq[pos % conn->sq_size];
			struct krc_slot *sl = &e->vq->slots[e->slot];

			for (k = 0; k < KRCORE_MAX_SGE; k++)
				if (sl->mrs[k] && &sl->mrs[k]->view == view)
					uses = true;
		}
		spin_unlock_irqrestore(&conn->lock, flags);
		if (uses && n < ARRAY_SIZE(hit)) {
			kref_get(&conn->ref);
			hit[n++] = conn;
		}
	}
	spin_unlock(&krc_conns_lock);
	for (i = 0; i < n; i++) {
		krc_conn_fail(hit[i]);
		krc_conn_put(hit[i]);
	}
}

/* The live connection @id, with a reference; NULL if there is none. */
struct krc_conn *krc_conn_find_id(u32 id)
{
	struct krc_conn *conn, *hit = NULL;

	spin_lock(&krc_conns_lock);
	list_for_each_entry(conn, &krc_conns, all_node) {
		if (conn->id == id && !READ_ONCE(conn->dead) &&
		    kref_get_unless_zero(&conn->ref)) {
			hit = conn;
			break;
		}
	}
	spin_unlock(&krc_conns_lock);
	return hit;
}

/* Fail the connection @id (fault injection); -ENOENT if there is none. */
int krc_conns_fail_id(u32 id)
{
	struct krc_conn *hit = krc_conn_find_id(id);

	if (!hit)
		return -ENOENT;
	pr_info("krcore: conn %u failed by fault injection\n", id);
	krc_conn_set_error(hit);
	krc_conn_fail_async(hit);
	krc_conn_put(hit);
	return 0;
}

int krc_watchdog_init(void)
{
	INIT_DELAYED_WORK(&krc_watchdog, krc_watchdog_fn);
	queue_delayed_work(krc_wq, &krc_watchdog, HZ);
	return 0;
}

void krc_watchdog_exit(void)
{
	cancel_delayed_work_sync(&krc_watchdog);
}
