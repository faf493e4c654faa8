// SPDX-License-Identifier: GPL-2.0
/*
 * connect.c - how a VQ reaches a node: the one place that orchestrates
 * qconnect (and LOOKUP) over the layers below it.
 *
 *   connect.c   picks the way: pool, datagrams, lookup, handshake
 *     peer.c          the peer table, cached cards, the RC pools
 *     meta_client.c   cards READ from the MetaServer
 *     dgram.c         the datagram transport
 *     handshake.c     a new RC connection (over ctrl.c)
 *
 * qconnect takes the cheapest way that works:
 *   1. a pooled connection to the peer exists: share it (no network);
 *   2. with dg_policy > 0: the datagram path, as soon as the card is known
 *      (cached, or one RDMA READ of the MetaServer's table); RC is built
 *      behind it as the policy says;
 *   3. else, with the peer's card cached: one handshake round trip;
 *   4. else: one RDMA READ of the MetaServer's table, then a handshake.
 * Handshakes to one peer are serialised, so a crowd of processes
 * connecting to a new node makes one handshake, not one each. After the
 * first connection, the pool grows to pool_size in the background.
 * Nothing below calls back up into this file.
 */
#include <linux/ktime.h>

#include "data/data.h"
#include "card.h"

static bool krc_connect_dgram_wanted(struct krc_peer *peer,
				     const struct krcore_qconnect *qc)
{
	return !peer->local && !(qc->flags & KRCORE_QCONNECT_F_RC) &&
	       READ_ONCE(krc_param_dg_policy) != KRC_DG_OFF;
}

/* RC behind the datagram path, as dg_policy says. */
void krc_connect_kick_rc(struct krc_peer *peer)
{
	switch (READ_ONCE(krc_param_dg_policy)) {
	case KRC_DG_RC_NOW:
		break;
	case KRC_DG_RC_AFTER:
		if (krc_dg_requests(peer) < krc_param_dg_rc_after)
			return;
		break;
	default:
		return;
	}
	if (delayed_work_pending(&peer->grow_work))
		return;
	/* An RC cap (ours or the peer's) refused it lately: datagrams
	 * serve meanwhile.
	 */
	if (READ_ONCE(peer->rc_retry_after) &&
	    time_before(jiffies, READ_ONCE(peer->rc_retry_after)))
		return;
	krc_event(KRC_EV_DG_RC_STARTED);
	krc_peer_grow(peer);
}

/*
 * Where a qconnect that made a handshake spent its time (krctl counters
 * fc_*, bench/first_contact.c): the lookup, a place and a spare QP, the
 * AH and the first post, the round trip to the answer, our two QP state
 * changes; the rest of @total_ns is other work.
 */
static void krc_connect_timed(const struct krc_hs_opts *o, u64 lookup_ns,
			      u64 total_ns)
{
	krc_event(KRC_EV_FC_CONNECTS);
	krc_event_add(KRC_EV_FC_LOOKUP_NS, lookup_ns);
	krc_event_add(KRC_EV_FC_SPARE_NS, o->t_spare);
	krc_event_add(KRC_EV_FC_SEND_NS, o->t_send);
	krc_event_add(KRC_EV_FC_RTT_NS, o->t_rtt);
	krc_event_add(KRC_EV_FC_QP_NS, o->t_qp);
	krc_event_add(KRC_EV_FC_TOTAL_NS, total_ns);
}

/* Connect over datagrams: the card, then the stream to the peer. */
static int krc_connect_dgram(struct krc_peer *peer, struct krc_hs_opts *o,
			     struct krcore_qconnect *qc)
{
	int ret;

	if (READ_ONCE(peer->card_valid)) {
		qc->path |= KRCORE_PATH_CACHED;
	} else {
		ret = krc_peer_refresh(peer, &o->reads);
		if (ret)
			return ret;
		qc->path |= KRCORE_PATH_LOOKUP;
	}
	ret = krc_dg_open(peer);
	if (ret)
		return ret;
	qc->path |= KRCORE_PATH_DATAGRAM;
	qc->reads = o->reads;
	krc_connect_kick_rc(peer);
	return 0;
}

int krc_connect(const u8 gid[16], unsigned long timeout_ms,
		struct krcore_qconnect *qc, struct krc_peer **peerp,
		struct krc_conn **connp)
{
	struct krc_hs_opts o = {
		.deadline = jiffies + msecs_to_jiffies(timeout_ms),
	};
	u64 start = ktime_get_ns(), lookup_ns = 0;
	struct krc_conn *conn = NULL;
	struct krc_peer *peer;
	int ret = 0;

	if (!READ_ONCE(krc_node.up))
		return -ENODEV;
	if (krc_gid_is_zero(gid))
		return -EINVAL;
	peer = krc_peer_get(gid, true);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	if (peer->local)
		qc->path |= KRCORE_PATH_LOCAL;

	/* 1. A pooled connection: no network at all. */
	conn = krc_peer_pick(peer);
	if (conn) {
		qc->path |= KRCORE_PATH_POOLED | KRCORE_PATH_CACHED;
		goto done;
	}

	/*
	 * 2. The datagram path: served as soon as the card is known (no
	 * round trip when cached, one MetaServer READ otherwise); RC is
	 * built behind it as the policy says.
	 */
	if (krc_connect_dgram_wanted(peer, qc)) {
		ret = krc_connect_dgram(peer, &o, qc);
		if (ret)
			goto fail;
		goto done;
	}

	ret = mutex_lock_interruptible(&peer->connect_lock);
	if (ret)
		goto fail;
	conn = krc_peer_pick(peer);	/* made while we waited? */
	if (conn) {
		qc->path |= KRCORE_PATH_POOLED | KRCORE_PATH_CACHED;
		goto unlock;
	}
	if (peer->local) {
		/* A process broke the last one: a new one, no handshake. */
		conn = krc_loopback_connect();
		ret = IS_ERR(conn) ? PTR_ERR(conn) : 0;
		goto unlock;
	}

	/*
	 * 2./3. The card, cached or READ from the MetaServer. A cached card
	 * may be stale (the peer reloaded: new QPNs, new incarnation): the
	 * handshake READs it again if its first request goes unanswered.
	 */
	o.verify_card = READ_ONCE(peer->card_valid);
	if (o.verify_card) {
		qc->path |= KRCORE_PATH_CACHED;
	} else {
		lookup_ns = ktime_get_ns();
		ret = krc_peer_refresh(peer, &o.reads);
		lookup_ns = ktime_get_ns() - lookup_ns;
		if (ret)
			goto unlock;
		qc->path |= KRCORE_PATH_LOOKUP;
	}
	ret = krc_hs_connect(peer, &o, &conn);
	if (o.looked_up)
		qc->path |= KRCORE_PATH_LOOKUP;
	if (o.refreshed)
		qc->path |= KRCORE_PATH_REFRESHED;
	/* The node left the MetaServer and does not answer: it is gone. */
	if (ret == -ETIMEDOUT && o.lookup_error == -ENXIO)
		ret = -ENXIO;
	if (!ret) {
		qc->path |= KRCORE_PATH_HANDSHAKE;
		atomic64_inc(&peer->handshakes);
		krc_connect_timed(&o, lookup_ns, ktime_get_ns() - start);
		krc_peer_grow(peer);
	}
unlock:
	mutex_unlock(&peer->connect_lock);
	qc->attempts = o.attempts;
	qc->reads = o.reads;
	if (ret)
		goto fail;
done:
	krc_peer_card_copy(peer, &qc->card);
	qc->conn_id = conn ? conn->id : 0;
	qc->qpn = conn ? conn->qpn : 0;
	qc->elapsed_ns = ktime_get_ns() - start;
	atomic64_inc(&peer->qconnects);
	*peerp = peer;
	*connp = conn;
	return 0;
fail:
	qc->elapsed_ns = ktime_get_ns() - start;
	krc_peer_put_unless_known(peer);
	return ret;
}

int krc_connect_lookup(const u8 gid[16], u32 flags, struct krcore_lookup *lk)
{
	u64 start = ktime_get_ns();
	struct krc_peer *peer;
	int ret = 0;

	if (!READ_ONCE(krc_node.up))
		return -ENODEV;
	peer = krc_peer_get(gid, true);
	if (IS_ERR(peer))
		return PTR_ERR(peer);
	if (READ_ONCE(peer->card_valid) && !(flags & KRCORE_LOOKUP_F_NOCACHE)) {
		lk->path = KRCORE_PATH_CACHED;
	} else {
		ret = krc_peer_refresh(peer, &lk->reads);
		lk->path = KRCORE_PATH_LOOKUP;
	}
	lk->elapsed_ns = ktime_get_ns() - start;
	if (ret) {
		krc_peer_put_unless_known(peer);
		return ret;
	}
	krc_peer_card_copy(peer, &lk->card);
	krc_peer_put(peer);
	return 0;
}

