// SPDX-License-Identifier: GPL-2.0
/*
 * peer.c - the nodes this node knows: their cached cards and the pool of
 * RC connections to each of them, shared by every VQ of this node.
 *
 * A peer's pool is filled by handshakes (handshake.c) and grows to
 * pool_size in the background; connect.c decides how a VQ reaches a peer.
 */
#include <linux/etherdevice.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "conn/conn.h"
#include "card.h"

#define KRC_PEER_HASH_BITS	10

static DEFINE_HASHTABLE(krc_peers, KRC_PEER_HASH_BITS);
static DEFINE_SPINLOCK(krc_peers_lock);
static u32 krc_npeers;

static u32 krc_gid_hash(const u8 gid[16])
{
	return jhash(gid, 16, 0);
}

struct krc_ah *krc_peer_ah_get(struct krc_peer *peer, u32 *qpn, u32 *qkey)
{
	struct krcore_card card;
	struct krc_ah *ah, *old;
	bool valid;

	spin_lock(&peer->lock);
	valid = peer->card_valid;
	card = peer->card;
	ah = peer->ah;
	if (ah)
		kref_get(&ah->ref);
	spin_unlock(&peer->lock);
	if (!valid) {
		krc_ah_put(ah);
		return ERR_PTR(-ENXIO);
	}
	*qpn = card.ud_qpn;
	*qkey = card.ud_qkey;
	if (ah && ether_addr_equal(ah->mac, card.mac))
		return ah;
	krc_ah_put(ah);

	ah = krc_ah_create(krc_node.port, &card);
	if (IS_ERR(ah))
		return ah;
	kref_get(&ah->ref);
	spin_lock(&peer->lock);
	old = peer->ah;
	peer->ah = ah;
	spin_unlock(&peer->lock);
	krc_ah_put(old);
	return ah;
}

/* Send @msg to @peer's control QP (its card must be valid); process context. */
int krc_peer_send(struct krc_peer *peer, const struct krc_ctrl_msg *msg)
{
	struct krc_ah *ah;
	u32 qpn, qkey;
	int ret;

	ah = krc_peer_ah_get(peer, &qpn, &qkey);
	if (IS_ERR(ah))
		return PTR_ERR(ah);
	ret = krc_ctrl_send(ah, qpn, qkey, msg);
	krc_ah_put(ah);
	return ret;
}

static void krc_peer_free_work(struct work_struct *work);

static void krc_peer_release(struct kref *ref)
{
	struct krc_peer *peer = container_of(ref, struct krc_peer, ref);

	/* Any context: the AH is destroyed in process context. */
	queue_work(krc_wq, &peer->free_work);
}

static void krc_peer_free_work(struct work_struct *work)
{
	struct krc_peer *peer = container_of(work, struct krc_peer, free_work);

	WARN_ON(!list_empty(&peer->conns));
	krc_conn_ops->peer_free(peer);
	krc_ah_put(peer->ah);
	kfree(peer);
	krc_obj_destroyed(KRC_OBJ_PEER);
}

void krc_peer_put(struct krc_peer *peer)
{
	if (peer)
		kref_put(&peer->ref, krc_peer_release);
}

static void krc_peer_grow_work(struct work_struct *work);
static void krc_peer_verify_work(struct work_struct *work);

/* The peer of @gid, with a reference; created (without card) if asked. */
struct krc_peer *krc_peer_get(const u8 gid[16], bool create)
{
	u32 h = krc_gid_hash(gid);
	struct krc_peer *peer, *fresh = NULL;

	for (;;) {
		spin_lock(&krc_peers_lock);
		hash_for_each_possible(krc_peers, peer, hnode, h) {
			if (!memcmp(peer->gid, gid, 16)) {
				kref_get(&peer->ref);
				spin_unlock(&krc_peers_lock);
				if (fresh)
					krc_obj_destroyed(KRC_OBJ_PEER);
				kfree(fresh);
				return peer;
			}
		}
		if (fresh) {
			kref_get(&fresh->ref);	/* the table's */
			hash_add(krc_peers, &fresh->hnode, h);
			krc_npeers++;
			spin_unlock(&krc_peers_lock);
			return fresh;
		}
		spin_unlock(&krc_peers_lock);
		if (!create)
			return NULL;
		/* Network input never grows the table without bound. */
		if (READ_ONCE(krc_npeers) >= krc_param_max_peers &&
		    memcmp(gid, krc_node.card.gid, 16)) {
			krc_event(KRC_EV_PEERS_CAPPED);
			return ERR_PTR(-ENOSPC);
		}

		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
		if (!fresh)
			return ERR_PTR(-ENOMEM);
		krc_obj_created(KRC_OBJ_PEER);
		kref_init(&fresh->ref);
		memcpy(fresh->gid, gid, 16);
		fresh->local = !memcmp(gid, krc_node.card.gid, 16);
		mutex_init(&fresh->connect_lock);
		spin_lock_init(&fresh->lock);
		INIT_LIST_HEAD(&fresh->conns);
		INIT_DELAYED_WORK(&fresh->grow_work, krc_peer_grow_work);
		INIT_WORK(&fresh->verify_work, krc_peer_verify_work);
		INIT_WORK(&fresh->free_work, krc_peer_free_work);
	}
}

/*
 * Drop @peer from the table if it has neither card nor connection: a
 * failed lookup must not leave an entry behind (user space could fill
 * kernel memory with lookups of made-up addresses). Consumes the caller's
 * reference.
 */
void krc_peer_put_unless_known(struct krc_peer *peer)
{
	bool drop = false;

	spin_lock(&krc_peers_lock);
	spin_lock(&peer->lock);
	/*
	 * Only if nothing else holds it (the table's and the caller's
	 * references): a VQ, a connection being recovered or a datagram
	 * stream still needs the entry to reconnect.
	 */
	if (!peer->card_valid && !peer->nconns && !peer->local &&
	    kref_read(&peer->ref) <= 2 && hash_hashed(&peer->hnode)) {
		hash_del(&peer->hnode);
		krc_npeers--;
		peer->dead = true;
		drop = true;
	}
	spin_unlock(&peer->lock);
	spin_unlock(&krc_peers_lock);
	if (drop)
		krc_peer_put(peer);	/* the table's */
	krc_peer_put(peer);
}

/* Take every connection whose peer incarnation is @incarnation (0: all)
 * off the pool and kill it. Process context.
 */
void krc_peer_forget_incarnation(struct krc_peer *peer, u64 incarnation)
{
	struct krc_conn *conn, *tmp;
	LIST_HEAD(dead);

	/*
	 * Off the pool under the lock, onto a list of our own through
	 * another link: krc_peer_detach() (recovery, expiry, the RC cap)
	 * then finds them gone, and the pool's reference is ours alone.
	 */
	spin_lock(&peer->lock);
	list_for_each_entry_safe(conn, tmp, &peer->conns, node) {
		if (incarnation && conn->remote_incarnation != incarnation)
			continue;
		list_del_init(&conn->node);
		list_add_tail(&conn->drop_node, &dead);
		peer->nconns--;
	}
	if (peer->card_valid && (!incarnation ||
				 peer->card.incarnation == incarnation))
		peer->card_valid = false;
	spin_unlock(&peer->lock);

	list_for_each_entry_safe(conn, tmp, &dead, drop_node) {
		list_del(&conn->drop_node);
		krc_rc_uncount(conn);
		krc_conn_set_error(conn);
		/* VQs on it: recovery moves them and their requests. */
		if (atomic_read(&conn->nvqs))
			krc_conn_fail_async(conn);
		else
			krc_conn_kill(conn);
		krc_conn_put(conn);	/* the pool's reference */
		krc_event(KRC_EV_CONNS_DROPPED);
	}
	if (incarnation)
		krc_conn_ops->peer_forget(peer, incarnation);
}

/*
 * Cache @card for @peer. A new incarnation means the peer's module was
 * reloaded: every connection to the old one is dead.
 */
void krc_peer_set_card(struct krc_peer *peer, const struct krcore_card *card)
{
	u64 old = 0;

	spin_lock(&peer->lock);
	if (peer->card_valid && peer->card.incarnation != card->incarnation)
		old = peer->card.incarnation;
	peer->card = *card;
	peer->card_valid = true;
	spin_unlock(&peer->lock);
	if (old) {
		krc_event(KRC_EV_PEER_REINCARNATED);
		krc_peer_forget_incarnation(peer, old);
		spin_lock(&peer->lock);
		peer->card = *card;
		peer->card_valid = true;
		spin_unlock(&peer->lock);
	}
}

/*
 * Put @conn into @peer's pool; the pool owns the caller's reference.
 * The connection keeps a reference on its peer until it is freed.
 * -ENODEV if the peer left the table meanwhile (node stop): the caller
 * keeps its reference and kills the connection.
 */
int krc_peer_attach(struct krc_peer *peer, struct krc_conn *conn)
{
	spin_lock(&peer->lock);
	if (peer->dead) {
		spin_unlock(&peer->lock);
		return -ENODEV;
	}
	kref_get(&peer->ref);
	conn->peer = peer;
	list_add_tail(&conn->node, &peer->conns);
	peer->nconns++;
	spin_unlock(&peer->lock);
	return 0;
}

/*
 * Take @conn off its peer's pool. True if it was there: the caller then
 * owns the pool's reference.
 */
bool krc_peer_detach(struct krc_conn *conn)
{
	struct krc_peer *peer = conn->peer;
	bool was = false;

	if (!peer)
		return false;
	spin_lock(&peer->lock);
	if (!list_empty(&conn->node)) {
		list_del_init(&conn->node);
		peer->nconns--;
		was = true;
	}
	spin_unlock(&peer->lock);
	krc_rc_uncount(conn);
	return was;
}

/*
 * A connection of @peer failed: if the peer reloaded (its card in the
 * MetaServer has a new incarnation) every connection to the old one is
 * dead, so drop them all now rather than one failed request at a time.
 */
static void krc_peer_verify_work(struct work_struct *work)
{
	struct krc_peer *peer = container_of(work, struct krc_peer, verify_work);
	struct krcore_card card;
	u32 reads = 0;
	int ret;

	if (READ_ONCE(krc_node.up) && !peer->dead && !peer->local) {
		ret = krc_meta_lookup(peer->gid, &card, &reads);
		if (!ret)
			krc_peer_set_card(peer, &card);
		else if (ret == -ENXIO)	/* deregistered: it is gone */
			krc_peer_forget_incarnation(peer, 0);
		krc_event(KRC_EV_PEER_VERIFIED);
	}
	krc_peer_put(peer);
}

void krc_peer_suspect(struct krc_peer *peer)
{
	kref_get(&peer->ref);
	if (!queue_work(krc_wq, &peer->verify_work))
		krc_peer_put(peer);
}

/*
 * The ready connection of @peer with the fewest VQs (ties taken in turn),
 * with a reference.
 */
struct krc_conn *krc_peer_pick(struct krc_peer *peer)
{
	struct krc_conn *conn, *best = NULL;
	u32 i = 0, start, best_at = 0;

	spin_lock(&peer->lock);
	start = peer->nconns ? peer->rr++ % peer->nconns : 0;
	list_for_each_entry(conn, &peer->conns, node) {
		u32 at = (i++ + peer->nconns - start) % peer->nconns;

		if (!krc_conn_usable(conn))
			continue;
		if (!best || atomic_read(&conn->nvqs) < atomic_read(&best->nvqs) ||
		    (atomic_read(&conn->nvqs) == atomic_read(&best->nvqs) &&
		     at < best_at)) {
			best = conn;
			best_at = at;
		}
	}
	if (best)
		kref_get(&best->ref);
	spin_unlock(&peer->lock);
	return best;
}

/*
 * The connection of @peer whose local QP is @qpn (0: any) and whose remote
 * QP is @remote_qpn in incarnation @remote_incarnation, with a reference.
 */
struct krc_conn *krc_peer_find_conn(struct krc_peer *peer, u32 qpn,
				    u32 remote_qpn, u64 remote_incarnation)
{
	struct krc_conn *conn, *found = NULL;

	spin_lock(&peer->lock);
	list_for_each_entry(conn, &peer->conns, node) {
		if ((!qpn || conn->qpn == qpn) &&
		    conn->remote_qpn == remote_qpn &&
		    conn->remote_incarnation == remote_incarnation) {
			found = conn;
			kref_get(&found->ref);
			break;
		}
	}
	spin_unlock(&peer->lock);
	return found;
}

static u32 krc_peer_pool_count(struct krc_peer *peer)
{
	struct krc_conn *conn;
	u32 n = 0;

	spin_lock(&peer->lock);
	/* Not those being closed (the RC cap): they are leaving it. */
	list_for_each_entry(conn, &peer->conns, node)
		if (conn->state != KRC_CONN_ERROR && !READ_ONCE(conn->closing))
			n++;
	spin_unlock(&peer->lock);
	return n;
}

/*
 * A usable connection to @peer, with a reference: a pooled one, else a
 * new one (a handshake, or a loopback connection for this node itself);
 * NULL if none can be had before connect_timeout_ms. Process context.
 */
struct krc_conn *krc_peer_connect_any(struct krc_peer *peer)
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
		conn = krc_loopback_connect();
		if (IS_ERR(conn)) {
			pr_warn("krcore: no loopback connection: %ld\n",
				PTR_ERR(conn));
			conn = NULL;
		}
	} else if (!conn && !peer->local && !READ_ONCE(peer->dead)) {
		ret = krc_hs_connect(peer, &o, &conn);
		if (ret) {
			/* recovery asks up to KRC_RETARGETS times: no flood */
			pr_warn_ratelimited("krcore: no connection to the peer: %d\n",
					    ret);
			conn = NULL;
		}
	}
	mutex_unlock(&peer->connect_lock);
	return conn;
}

/*
 * A growth that failed (the peer busy, a handshake lost) is tried again,
 * 1, 2, 4, 8 then 16 s later, while the pool is short: otherwise a pool
 * left short stays so, since a qconnect that finds a pooled connection
 * makes no handshake. After that, the next qconnect or recovery asks.
 */
#define KRC_GROW_RETRIES	5

/* Queue the growth of @peer's pool after @delay; it holds a reference. */
static void krc_peer_grow_later(struct krc_peer *peer, unsigned long delay)
{
	kref_get(&peer->ref);
	/* Already pending: it keeps its own reference (and its time). */
	if (!queue_delayed_work(krc_wq, &peer->grow_work, delay))
		krc_peer_put(peer);
}

static void krc_peer_grow_work(struct work_struct *work)
{
	struct krc_peer *peer = container_of(to_delayed_work(work),
					     struct krc_peer, grow_work);
	struct krc_hs_opts o;
	struct krc_conn *conn;
	int ret = 0;

	while (READ_ONCE(krc_node.up) && !peer->dead &&
	       krc_peer_pool_count(peer) < krc_param_pool_size) {
		memset(&o, 0, sizeof(o));
		o.deadline = jiffies +
			     msecs_to_jiffies(krc_param_connect_timeout_ms);
		mutex_lock(&peer->connect_lock);
		ret = krc_hs_connect(peer, &o, &conn);
		mutex_unlock(&peer->connect_lock);
		if (ret == -ENOSPC)	/* the RC cap: not before some idle time */
			WRITE_ONCE(peer->rc_retry_after, jiffies +
				   msecs_to_jiffies(krc_param_rc_idle_ms) + 1);
		if (ret)
			break;
		WRITE_ONCE(peer->grow_fails, 0);
		krc_conn_put(conn);
		krc_event(KRC_EV_POOL_GROWN);
	}
	if (ret && ret != -ENOSPC && READ_ONCE(krc_node.up) && !peer->dead &&
	    peer->grow_fails < KRC_GROW_RETRIES) {
		krc_peer_grow_later(peer, HZ << peer->grow_fails);
		WRITE_ONCE(peer->grow_fails, peer->grow_fails + 1);
	}
	krc_peer_put(peer);
}

/* Grow the pool of a peer to pool_size, in the background, now. */
void krc_peer_grow(struct krc_peer *peer)
{
	if (peer->local)
		return;
	WRITE_ONCE(peer->grow_fails, 0);
	kref_get(&peer->ref);
	/* A retry waiting: now instead (its reference stays its own). */
	if (mod_delayed_work(krc_wq, &peer->grow_work, 0))
		krc_peer_put(peer);
}

/* Cache @card and fill the pool of its node in the background. */
void krc_peer_prewarm(const struct krcore_card *card)
{
	struct krc_peer *peer = krc_peer_get(card->gid, true);

	if (IS_ERR(peer))
		return;
	krc_peer_set_card(peer, card);
	krc_peer_grow(peer);
	krc_peer_put(peer);
}

/* Read the peer's card from the MetaServer; caches it. */
/* READ @peer's card from the MetaServer again and cache it. */
int krc_peer_refresh(struct krc_peer *peer, u32 *reads)
{
	struct krcore_card card;
	u32 n = 0;
	int ret;

	ret = krc_meta_lookup(peer->gid, &card, &n);
	*reads += n;
	if (ret)
		return ret;
	krc_peer_set_card(peer, &card);
	return 0;
}

void krc_peer_card_copy(struct krc_peer *peer, struct krcore_card *card)
{
	spin_lock(&peer->lock);
	*card = peer->card;
	spin_unlock(&peer->lock);
}

/* The @index-th peer of the table, a reference held; NULL past the end. */
static struct krc_peer *krc_peer_nth(u32 index)
{
	struct krc_peer *peer, *found = NULL;
	u32 i = 0;
	int bkt;

	spin_lock(&krc_peers_lock);
	hash_for_each(krc_peers, bkt, peer, hnode) {
		if (i++ == index) {
			found = peer;
			kref_get(&found->ref);
			break;
		}
	}
	spin_unlock(&krc_peers_lock);
	return found;
}

int krc_peer_fill_info(u32 index, struct krcore_peer_info *info)
{
	struct krc_peer *found = krc_peer_nth(index);
	struct krc_conn *conn;
	u32 n = 0;

	if (!found)
		return -ENOENT;

	memset(info, 0, sizeof(*info));
	info->index = index;
	spin_lock(&found->lock);
	if (found->card_valid)
		info->flags |= KRCORE_PEER_F_CARD;
	if (found->local)
		info->flags |= KRCORE_PEER_F_LOCAL;
	info->card = found->card;
	if (!found->card_valid)
		memcpy(info->card.gid, found->gid, 16);
	info->dgram_vqs = krc_conn_ops->peer_dg_vqs(found);
	list_for_each_entry(conn, &found->conns, node) {
		if (n < KRCORE_PEER_MAX_CONNS) {
			struct krcore_conn_info *ci = &info->conns[n];

			ci->id = conn->id;
			ci->state = conn->state;
			ci->qpn = conn->qpn;
			ci->remote_qpn = conn->remote_qpn;
			ci->vqs = atomic_read(&conn->nvqs);
			ci->initiator = conn->initiator;
		}
		n++;
	}
	info->nconns = n;
	spin_unlock(&found->lock);
	info->qconnects = atomic64_read(&found->qconnects);
	info->handshakes = atomic64_read(&found->handshakes);
	krc_peer_put(found);
	return 0;
}

int krc_peer_fill_stats(u32 index, struct krcore_peer_stats *st)
{
	struct krc_peer *peer = krc_peer_nth(index);
	u64 v[KRC_NR_PS];
	int i;

	if (!peer)
		return -ENOENT;
	for (i = 0; i < KRC_NR_PS; i++)
		v[i] = atomic64_read(&peer->stats[i]);
	memset(st, 0, sizeof(*st));
	st->index = index;
	memcpy(st->gid, peer->gid, sizeof(st->gid));
	st->wr_posted = v[KRC_PS_WR_POSTED];
	st->wr_bytes = v[KRC_PS_WR_BYTES];
	st->wr_errors = v[KRC_PS_WR_ERRORS];
	st->wr_reposted = v[KRC_PS_WR_REPOSTED];
	st->wr_not_executed = v[KRC_PS_WR_NOT_EXECUTED];
	st->wr_timeouts = v[KRC_PS_WR_TIMEOUTS];
	st->conn_errors = v[KRC_PS_CONN_ERRORS];
	st->recoveries = v[KRC_PS_RECOVERIES];
	st->dg_sent = v[KRC_PS_DG_SENT];
	st->dg_retransmits = v[KRC_PS_DG_RETRANSMITS];
	st->dg_switches = v[KRC_PS_DG_SWITCHES];
	krc_peer_put(peer);
	return 0;
}

void krc_peers_count(u32 *peers, u32 *conns)
{
	struct krc_peer *peer;
	int bkt;

	u32 n = 0;

	spin_lock(&krc_peers_lock);
	*peers = krc_npeers;
	hash_for_each(krc_peers, bkt, peer, hnode)
		n += READ_ONCE(peer->nconns);
	*conns = n;
	spin_unlock(&krc_peers_lock);
}

/* Every peer we know (with a card), for goodbyes; NULL-terminated array. */
struct krc_peer **krc_peers_snapshot(void)
{
	struct krc_peer **arr, *peer;
	u32 n = 0;
	int bkt;

	spin_lock(&krc_peers_lock);
	arr = kcalloc(krc_npeers + 1, sizeof(*arr), GFP_ATOMIC);
	if (arr) {
		hash_for_each(krc_peers, bkt, peer, hnode) {
			kref_get(&peer->ref);
			arr[n++] = peer;
		}
	}
	spin_unlock(&krc_peers_lock);
	return arr;
}

/* Forget every peer and kill every pooled connection (node stop). */
void krc_peers_drop_all(void)
{
	struct krc_peer *peer;
	struct hlist_node *tmp;
	int bkt;

	for (;;) {
		peer = NULL;
		spin_lock(&krc_peers_lock);
		hash_for_each_safe(krc_peers, bkt, tmp, peer, hnode) {
			hash_del(&peer->hnode);
			krc_npeers--;
			spin_lock(&peer->lock);
			peer->dead = true;
			spin_unlock(&peer->lock);
			break;
		}
		spin_unlock(&krc_peers_lock);
		if (!peer)
			break;
		/* A growth still waiting holds a reference. */
		if (cancel_delayed_work_sync(&peer->grow_work))
			krc_peer_put(peer);
		cancel_work_sync(&peer->verify_work);
		krc_conn_ops->peer_stop(peer);
		krc_peer_forget_incarnation(peer, 0);
		krc_peer_put(peer);	/* the table's reference */
	}
}
