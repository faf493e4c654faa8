// SPDX-License-Identifier: GPL-2.0
/*
 * send.c - qpush: a VQ's work requests onto its shared QP.
 *
 * Each batch goes through, in order:
 *   1. the malformed-request check (common/wr_check.c), against the VQ's
 *      connection and the caller's own registrations, which each request
 *      then holds until it completes;
 *   2. the overflow check: the VQ may have `depth` requests outstanding and
 *      each must find room in the VQ's completion ring; the shared send
 *      queue takes what fits (the rest gets EAGAIN);
 *   3. posting: the hardware wr_id is a cookie (VQ id, slot, generation);
 *      the kernel asks for a completion at least at the end of every batch
 *      so that the send queue and the CQ (sized for it) never overflow,
 *      whatever the user's signaling, and hides the completions the user
 *      did not ask for.
 */
#include <linux/bottom_half.h>
#include <linux/jiffies.h>
#include <linux/uaccess.h>

#include "data/data.h"

/* The ib_send_wr of the request in @slot of @vq. */
static void krc_build_wr(struct krc_vqueue *vq, u16 slot, union krc_ib_wr *w,
			 struct ib_sge *sge, bool hw_signal)
{
	const struct krcore_wr *u = &vq->slots[slot].wr;
	struct ib_send_wr *wr = &w->send;
	bool send = u->opcode == KRCORE_WR_SEND ||
		    u->opcode == KRCORE_WR_SEND_IMM;
	int i, h = 0;

	memset(w, 0, sizeof(*w));
	if (send) {
		/* The header naming the port, in front of the payload. */
		struct krc_data_hdr hdr = {
			.flags = u->opcode == KRCORE_WR_SEND_IMM ?
				 KRCORE_MSG_F_IMM : 0,
			.dst_port = vq->port,
			.src_port = vq->bound_port,
			.imm_data = u->imm_data,
		};

		krc_data_hdr_encode(&hdr, vq->hdrs + slot * KRC_DATA_HDR_SIZE);
		ib_dma_sync_single_for_device(vq->dma_dev, vq->hdrs_dma +
					      slot * KRC_DATA_HDR_SIZE,
					      KRC_DATA_HDR_SIZE, DMA_TO_DEVICE);
		sge[0].addr = vq->hdrs_dma + slot * KRC_DATA_HDR_SIZE;
		sge[0].length = KRC_DATA_HDR_SIZE;
		sge[0].lkey = krc_node.dev->pd->local_dma_lkey;
		h = 1;
	}
	for (i = 0; i < u->num_sge; i++) {
		sge[h + i].addr = u->sg_list[i].addr;
		sge[h + i].length = u->sg_list[i].length;
		sge[h + i].lkey = u->sg_list[i].lkey;
	}
	switch (u->opcode) {
	case KRCORE_WR_READ:
		wr->opcode = IB_WR_RDMA_READ;
		break;
	case KRCORE_WR_WRITE:
		wr->opcode = IB_WR_RDMA_WRITE;
		break;
	case KRCORE_WR_WRITE_IMM:
		/* The upper half of the immediate names the port. */
		wr->opcode = IB_WR_RDMA_WRITE_WITH_IMM;
		wr->ex.imm_data = cpu_to_be32(vq->port << 16 | u->imm_data);
		break;
	case KRCORE_WR_SEND:
	case KRCORE_WR_SEND_IMM:
		/* The immediate travels in the header. */
		wr->opcode = IB_WR_SEND;
		break;
	case KRCORE_WR_ATOMIC_CAS:
		wr->opcode = IB_WR_ATOMIC_CMP_AND_SWP;
		w->atomic.compare_add = u->compare_add;
		w->atomic.swap = u->swap;
		break;
	default:	/* KRCORE_WR_ATOMIC_FAA, the check allows nothing else */
		wr->opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
		w->atomic.compare_add = u->compare_add;
		break;
	}
	if (u->opcode == KRCORE_WR_ATOMIC_CAS || u->opcode == KRCORE_WR_ATOMIC_FAA) {
		w->atomic.remote_addr = u->remote_addr;
		w->atomic.rkey = u->rkey;
	} else if (u->opcode != KRCORE_WR_SEND && u->opcode != KRCORE_WR_SEND_IMM) {
		w->rdma.remote_addr = u->remote_addr;
		w->rdma.rkey = u->rkey;
	}
	wr->wr_id = krc_cookie_make(vq->id, slot, vq->slots[slot].gen);
	wr->sg_list = sge;
	wr->num_sge = u->num_sge + h;
	if (hw_signal)
		wr->send_flags |= IB_SEND_SIGNALED;
	if (u->flags & KRCORE_WR_FENCE)
		wr->send_flags |= IB_SEND_FENCE;
}

/* Give back the slots of requests that were never posted. */
static void krc_unreserve(struct krc_vqueue *vq, const u16 *slots, int n)
{
	unsigned long flags;
	int i, k;

	if (!n)
		return;
	spin_lock_irqsave(&vq->dlock, flags);
	/* The last ones reserved (under vq->lock): off the order's tail. */
	WARN_ON_ONCE(!krc_order_unpush(&vq->order, slots, n));
	for (i = 0; i < n; i++) {
		struct krc_slot *s = &vq->slots[slots[i]];

		for (k = 0; k < s->wr.num_sge; k++)
			if (s->mrs[k])
				krc_mr_put_inflight(s->mrs[k]);
		memset(s->mrs, 0, sizeof(s->mrs));
		s->busy = false;
		vq->free[vq->nfree++] = slots[i];
		vq->inflight--;
		vq->inflight_bytes -= s->len;
		krc_proc_inflight_sub(vq->proc, 1, s->len);
	}
	spin_unlock_irqrestore(&vq->dlock, flags);
	wake_up(&vq->wq);
}

/*
 * Post the @n requests of @vq in @slots on @conn, signaling the last;
 * @fresh: new ones (a class's turn applies: prio.c), not re-posts.
 * Returns how many were posted; *reason says why the rest were not.
 */
static int krc_post_slots(struct krc_conn *conn, struct krc_vqueue *vq,
			  const u16 *slots, int n, union krc_ib_wr *wrs,
			  struct ib_sge (*sges)[KRC_MAX_HW_SGE], u32 *reason,
			  bool fresh)
{
	const struct ib_send_wr *bad = NULL;
	unsigned long flags, now = jiffies;
	int i, posted, ret;
	u32 room;

	spin_lock_irqsave(&conn->lock, flags);
	if (conn->failing || conn->dead) {
		spin_unlock_irqrestore(&conn->lock, flags);
		*reason = KRCORE_R_RECOVERING;
		return 0;
	}
	if (conn->closing) {
		/*
		 * The RC cap is closing it (evict.c): it checked the queue
		 * empty and nothing may join it. A VQ still on it moves to
		 * datagrams or back here in a moment: EAGAIN. Recovery
		 * takes another connection.
		 */
		spin_unlock_irqrestore(&conn->lock, flags);
		krc_event(KRC_EV_RC_CLOSING_REFUSED);
		*reason = KRCORE_R_QP_FULL;
		return 0;
	}
	room = conn->sq_size - (conn->sq_tail - conn->sq_head);
	if (n > room) {
		n = room;
		*reason = KRCORE_R_QP_FULL;
	}
	if (fresh)
		n = krc_prio_admit(conn, vq, slots, n, reason, now);
	if (!n) {
		spin_unlock_irqrestore(&conn->lock, flags);
		return 0;
	}
	/* An idle connection's clock starts with its first request. */
	if (conn->sq_head == conn->sq_tail && !atomic_read(&conn->outstanding))
		conn->progress = now;
	conn->last_post = now;		/* the RC cap's LRU (evict.c) */
	for (i = 0; i < n; i++) {
		struct krc_sq_ent *e = &conn->sq[(conn->sq_tail + i) %
						 conn->sq_size];

		krc_build_wr(vq, slots[i], &wrs[i], sges[i], i == n - 1 ||
			     (vq->slots[slots[i]].wr.flags & KRCORE_WR_SIGNALED));
		wrs[i].send.next = i + 1 < n ? &wrs[i + 1].send : NULL;
		e->cookie = wrs[i].send.wr_id;
		e->vq = vq;
		e->slot = slots[i];
		e->high = vq->prio == KRCORE_PRIO_HIGH;
		e->len = vq->slots[slots[i]].len;
	}
	ret = ib_post_send(conn->qp, &wrs[0].send, &bad);
	posted = n;
	if (ret) {
		for (posted = 0; posted < n && &wrs[posted].send != bad; posted++)
			;
		pr_warn_ratelimited("krcore: post on conn %u failed at %d of %d: %d\n",
				    conn->id, posted, n, ret);
		*reason = ret == -ENOMEM ? KRCORE_R_QP_FULL : KRCORE_R_UNSUPPORTED;
	}
	for (i = 0; i < posted; i++)
		conn->sq_bytes += conn->sq[(conn->sq_tail + i) % conn->sq_size].len;
	if (vq->prio == KRCORE_PRIO_HIGH)
		conn->high_inflight += posted;
	conn->sq_tail += posted;
	spin_unlock_irqrestore(&conn->lock, flags);
	krc_send_now();	/* in this system call, as rxe does for user QPs */
	return posted;
}

/* Re-post one request (recovery), signaled. */
int krc_post_one(struct krc_conn *conn, struct krc_vqueue *vq, u16 slot)
{
	union krc_ib_wr wr;
	struct ib_sge sge[1][KRC_MAX_HW_SGE];
	u32 reason = 0;

	return krc_post_slots(conn, vq, &slot, 1, &wr, sge, &reason,
			      false) == 1 ? 0 : -krc_reason_errno(reason);
}

/*
 * The share of its process: all its VQs together may have proc_max_wrs
 * requests and proc_max_bytes in flight (one longer request goes alone),
 * so that on a shared queue, whatever the number of its VQs, another
 * process's request waits behind a bounded part of its backlog. Takes
 * what fits of @lens[0..@n) and returns how many; *reason says why not
 * all. Caller holds the VQ's dlock.
 */
static int krc_reserve_proc(struct krc_proc *proc, const u32 *lens, int n,
			    u32 *reason)
{
	u32 max_wrs = max(READ_ONCE(krc_param_proc_max_wrs), 1U);
	u64 max_bytes = READ_ONCE(krc_param_proc_max_bytes);
	u64 bytes;
	int i;

	if (!proc || !n)
		return n;
	spin_lock(&proc->ilock);
	bytes = proc->bytes;
	for (i = 0; i < n; i++) {
		if (proc->wrs + i >= max_wrs ||
		    (bytes + lens[i] > max_bytes && (proc->wrs || i)))
			break;
		bytes += lens[i];
	}
	proc->wrs += i;
	proc->bytes = bytes;
	spin_unlock(&proc->ilock);
	krc_event_max(KRC_EV_PROC_BYTES_HIGH, bytes);
	if (i < n) {
		*reason = KRCORE_R_VQ_FULL;
		krc_event(KRC_EV_WR_PROC_FULL);
	}
	return i;
}

/*
 * Reserve slots for the first @n checked requests of the scratch batch
 * (@lens: their bytes): as many as the VQ's limits allow. A VQ may have
 * `depth` requests outstanding, each with room in its completion ring; it
 * may fill at most vq_qp_share percent of its shared send queue and have
 * at most vq_max_bytes in flight (one longer request may go alone; a high
 * priority VQ prio_high_bytes, prio.c); then
 * its process's share (krc_reserve_proc()).
 */
static int krc_reserve(struct krc_vqueue *vq, u32 sq_size,
		       struct krc_push_scratch *sc, const u32 *lens, int n,
		       u32 *reason)
{
	/* 0: no shared send queue (the datagram path). */
	u32 share = sq_size ? sq_size * clamp_t(u32, krc_param_vq_qp_share,
						1, 100) / 100 : vq->depth;
	/* A high VQ's requests are each within its bound (the check). */
	u64 max_bytes = vq->prio == KRCORE_PRIO_HIGH ? krc_prio_max_msg() :
			krc_param_vq_max_bytes;
	unsigned long flags;
	u32 used, room;
	u64 bytes;
	int i;

	spin_lock_irqsave(&vq->dlock, flags);
	/* Every outstanding request may complete into the ring. */
	used = krc_ring_used(vq->prod, READ_ONCE(vq->ring->consumer),
			     vq->entries);
	room = vq->entries - used > vq->inflight ?
	       vq->entries - used - vq->inflight : 0;
	room = min(room, vq->depth - vq->inflight);
	share = max(share, 1U);
	room = min(room, share > vq->inflight ? share - vq->inflight : 0);
	if (n > room) {
		n = room;
		*reason = KRCORE_R_VQ_FULL;
	}
	bytes = vq->inflight_bytes;
	for (i = 0; i < n; i++) {
		if (bytes + lens[i] > max_bytes && (vq->inflight || i)) {
			*reason = KRCORE_R_VQ_FULL;
			break;
		}
		bytes += lens[i];
	}
	n = krc_reserve_proc(vq->proc, lens, i, reason);
	for (bytes = vq->inflight_bytes, i = 0; i < n; i++)
		bytes += lens[i];
	for (i = 0; i < n; i++) {
		u16 slot = vq->free[--vq->nfree];
		struct krc_slot *s = &vq->slots[slot];

		s->busy = true;
		s->done = false;
		WARN_ON_ONCE(!krc_order_push(&vq->order, slot));
		s->gen = krc_cookie_next_gen(s->gen);
		s->wr = sc->uwr[i];
		s->len = lens[i];
		sc->slot[i] = slot;
	}
	vq->inflight += n;
	vq->inflight_bytes = bytes;
	spin_unlock_irqrestore(&vq->dlock, flags);
	return n;
}

/* The check's lookups of one request, in SGE order, kept for holding. */
struct krc_found {
	struct krc_proc *proc;
	struct krc_umr **mrs;
	int n;
};

static const struct krc_mr_view *krc_find_keep(void *arg, u32 lkey)
{
	struct krc_found *f = arg;
	const struct krc_mr_view *v = krc_mr_find(f->proc, lkey);

	if (v && f->n < KRCORE_MAX_SGE)
		f->mrs[f->n++] = container_of(v, struct krc_umr, view);
	return v;
}

/*
 * A request over a loopback connection names this node's memory: only
 * memory the caller registered itself (with the access the opcode needs),
 * or a remote memory region this node owns (lmr_host.c), whose key is a
 * capability for local and remote processes alike: its MR, registered
 * with exactly the region's rights and range, is what checks the request.
 */
static bool krc_loopback_rkey_ok(struct krc_proc *proc,
				 const struct krcore_wr *wr, u64 len)
{
	u32 access;

	switch (wr->opcode) {
	case KRCORE_WR_READ:
		access = KRCORE_ACCESS_REMOTE_READ;
		break;
	case KRCORE_WR_WRITE:
	case KRCORE_WR_WRITE_IMM:
		access = KRCORE_ACCESS_REMOTE_WRITE;
		break;
	case KRCORE_WR_ATOMIC_CAS:
	case KRCORE_WR_ATOMIC_FAA:
		access = KRCORE_ACCESS_REMOTE_ATOMIC;
		break;
	default:
		return true;	/* SENDs name no remote memory */
	}
	return krc_mr_remote_ok(proc, wr->rkey, wr->remote_addr, len, access) ||
	       krc_lmrh_is_key(wr->rkey);
}

/* Check the batch and hold the registrations it names; how many passed. */
static int krc_check_batch(struct krc_vqueue *vq, struct krc_conn *conn,
			   struct krc_push_scratch *sc, int n, u32 *reason,
			   u32 *lens, struct krc_umr *(*mrs)[KRCORE_MAX_SGE])
{
	struct krc_found found = { .proc = vq->proc };
	struct krc_check_ctx ctx = vq->check;
	bool loopback;
	int i, k;
	u64 len;

	loopback = vq->peer && vq->peer->local;
	ctx.connected = conn || vq->dgram;
	if (vq->prio == KRCORE_PRIO_HIGH)
		ctx.max_msg = min(ctx.max_msg, krc_prio_max_msg());
	ctx.find_mr = krc_find_keep;
	ctx.arg = &found;
	rcu_read_lock();
	for (i = 0; i < n; i++) {
		const struct krcore_wr *wr = &sc->uwr[i];

		found.mrs = mrs[i];
		found.n = 0;
		if (krc_wr_check(wr, &ctx, reason, &len))
			break;
		if (loopback && !krc_loopback_rkey_ok(vq->proc, wr, len)) {
			*reason = KRCORE_R_RKEY;
			krc_event(KRC_EV_WR_FOREIGN_RKEY);
			break;
		}
		/* A passed check looked every SGE's lkey up, in order. */
		for (k = 0; k < wr->num_sge; k++) {
			if (!krc_mr_hold(mrs[i][k])) {
				*reason = KRCORE_R_LKEY;
				break;
			}
		}
		if (k < wr->num_sge) {
			while (k--)
				krc_mr_put_inflight(mrs[i][k]);
			break;
		}
		lens[i] = len;
	}
	rcu_read_unlock();
	return i;
}

/*
 * @conn failed under @vq: wait (with vq->lock dropped) until recovery has
 * moved the VQ to another connection. Returns it, or NULL if there is
 * none or it takes too long. Called and returns with vq->lock held.
 */
static struct krc_conn *krc_vq_await_recovery(struct krc_vqueue *vq,
					      struct krc_conn *conn)
{
	lockdep_assert_held(&vq->lock);
	mutex_unlock(&vq->lock);
	wait_event_killable_timeout(vq->wq, READ_ONCE(vq->conn) != conn ||
				    READ_ONCE(vq->gone),
				    msecs_to_jiffies(krc_param_connect_timeout_ms));
	mutex_lock(&vq->lock);
	return vq->conn != conn ? vq->conn : NULL;
}

/*
 * A VQ on the datagram path moves to a ready pooled RC connection of its
 * peer, once its outstanding requests have completed (so nothing is
 * reordered: they are waited for, at most connect_timeout_ms). Called
 * and returns with vq->lock held (dropped while waiting). Returns
 * vq->conn.
 */
static struct krc_conn *krc_vq_dg_switch(struct krc_vqueue *vq)
{
	unsigned long deadline = jiffies +
				 msecs_to_jiffies(krc_param_connect_timeout_ms);
	struct krc_conn *conn;

	lockdep_assert_held(&vq->lock);
	while (vq->dgram && READ_ONCE(krc_param_dg_policy) != KRC_DG_NEVER) {
		conn = krc_peer_pick(vq->peer);
		if (!conn)
			break;
		if (!READ_ONCE(vq->inflight) && krc_vq_attach(vq, conn)) {
			krc_conn_put(conn);
			krc_dg_vq_leave(vq);
			krc_event(KRC_EV_DG_SWITCHES);
			krc_peer_count(vq->peer, KRC_PS_DG_SWITCHES, 1);
			break;
		}
		krc_conn_put(conn);
		if (time_after(jiffies, deadline) ||
		    fatal_signal_pending(current))
			break;
		/* Its datagrams complete meanwhile. */
		mutex_unlock(&vq->lock);
		wait_event_killable_timeout(vq->wq, !READ_ONCE(vq->inflight),
					    msecs_to_jiffies(100));
		mutex_lock(&vq->lock);
	}
	return vq->conn;
}

static u32 krc_check_unconnected(struct krc_vqueue *vq,
				 const struct krcore_wr __user *uwr)
{
	struct krc_check_ctx ctx = {
		.max_sge = KRCORE_MAX_SGE,
		.max_msg = KRCORE_MAX_MSG,
		.find_mr = krc_mr_find,
		.arg = vq->proc,
	};
	struct krcore_wr wr;
	u32 reason;
	u64 len;

	if (copy_from_user(&wr, uwr, sizeof(wr)))
		return KRCORE_R_FAULT;
	rcu_read_lock();
	krc_wr_check(&wr, &ctx, &reason, &len);
	rcu_read_unlock();
	return reason;
}

int krc_vq_push(struct krc_vqueue *vq, const struct krcore_wr __user *uwrs,
		u32 count, struct krcore_qpush *res)
{
	struct krc_umr *mrs[KRC_PUSH_BATCH][KRCORE_MAX_SGE];
	u32 lens[KRC_PUSH_BATCH];
	struct krc_push_scratch *sc;
	u32 done = 0, reason = 0;
	struct krc_conn *conn;
	int n, ok, kept, posted, taken, i;
	u64 bytes = 0;

	if (current->mm != vq->mm)
		return -EACCES;
	if (mutex_lock_killable(&vq->lock))
		return -EINTR;
	conn = vq->conn;
	sc = vq->scratch;
	if (vq->dgram && count)
		conn = krc_vq_dg_switch(vq);
	if (!conn && !vq->dgram && count) {
		/* Not connected: the check tells what is wrong first. */
		res->done = 0;
		res->reason = krc_check_unconnected(vq, uwrs);
		mutex_unlock(&vq->lock);
		res->error = krc_reason_errno(res->reason);
		krc_event(KRC_EV_WR_REJECTED);
		return -res->error;
	}
	if (krc_proc_throttled(vq->proc) && count) {
		/* It broke shared connections too often: later. */
		reason = KRCORE_R_THROTTLED;
		krc_event(KRC_EV_WR_THROTTLED);
	}
	while (done < count && !reason) {
		n = min_t(u32, count - done, KRC_PUSH_BATCH);
		if (copy_from_user(sc->uwr, uwrs + done, n * sizeof(sc->uwr[0]))) {
			/* What was posted stays posted: say how much. */
			reason = KRCORE_R_FAULT;
			break;
		}
		ok = krc_check_batch(vq, conn, sc, n, &reason, lens, mrs);
		/* A message goes only into a slot the port lent (flow.c). */
		taken = krc_flow_take(vq, sc->uwr, ok, &reason);
		for (i = taken; i < ok; i++) {
			int k;

			for (k = 0; k < sc->uwr[i].num_sge; k++)
				krc_mr_put_inflight(mrs[i][k]);
		}
		ok = taken;
		kept = krc_reserve(vq, conn ? conn->sq_size : 0,
				   sc, lens, ok, &reason);
		for (i = 0; i < ok; i++) {
			if (i < kept) {
				memcpy(vq->slots[sc->slot[i]].mrs, mrs[i],
				       sizeof(mrs[i]));
			} else {
				int k;

				for (k = 0; k < sc->uwr[i].num_sge; k++)
					krc_mr_put_inflight(mrs[i][k]);
			}
		}
		if (vq->dgram)
			posted = krc_dg_push(vq, sc->slot, kept, &reason);
		else
			posted = krc_post_slots(conn, vq, sc->slot, kept,
						sc->wr, sc->sge, &reason, true);
		krc_unreserve(vq, sc->slot + posted, kept - posted);
		/* Credits of the messages not posted come back. */
		krc_flow_untake(vq, sc->uwr + posted, ok - posted);
		done += posted;
		for (i = 0; i < posted; i++)
			bytes += lens[i];
		if (reason == KRCORE_R_RECOVERING && !posted) {
			/* Wait for recovery to move this VQ, then go on. */
			conn = krc_vq_await_recovery(vq, conn);
			if (!conn) {
				reason = vq->conn ? KRCORE_R_RECOVERING :
					 KRCORE_R_NOT_CONNECTED;
				break;
			}
			reason = 0;
			continue;
		}
		if (posted < n && !reason)
			reason = KRCORE_R_QP_FULL;
	}
	if (vq->dgram && done && !READ_ONCE(vq->peer->nconns))
		krc_connect_kick_rc(vq->peer);
	if (done) {
		krc_peer_count(vq->peer, KRC_PS_WR_POSTED, done);
		krc_peer_count(vq->peer, KRC_PS_WR_BYTES, bytes);
	}
	mutex_unlock(&vq->lock);
	res->done = done;
	res->reason = done < count ? reason : KRCORE_R_OK;
	res->error = krc_reason_errno(res->reason);
	if (done)
		krc_event_add(KRC_EV_WR_POSTED, done);
	if (res->error)
		krc_event(res->reason == KRCORE_R_VQ_FULL ||
			  res->reason == KRCORE_R_QP_FULL ?
			  KRC_EV_WR_FULL : KRC_EV_WR_REJECTED);
	return res->error ? -res->error : 0;
}
