// SPDX-License-Identifier: GPL-2.0
/*
 * lmr_name.c - names of remote memory regions: a holder publishes a
 * region it allocated under a name with some of its rights, or revokes
 * the name (KRCORE_IOC_LMR_PUBLISH, _UNPUBLISH: calls to the owner, whose
 * side is in lmr_host.c); any process looks a name up with one READ of
 * the owner's names table (KRCORE_IOC_LMR_LOOKUP, common/names.h).
 *
 * A name is a capability with its own key: the owner registers the region
 * once more with exactly the name's rights, so its RNIC refuses anything
 * else, and revoking the name deregisters that key. What a lookup READs
 * comes from another node's memory: it is decoded and checked
 * (names.c) and gives the process nothing but a key the owner checks; the
 * handle it makes is the process's own copy (lmr.c), marked as looked up:
 * freeing it only forgets it.
 */
#include <linux/slab.h>

#include "data/data.h"

/* Tries of a lookup whose slot was being written on each READ. */
#define KRC_NAME_READS		8

long krc_ioc_lmr_publish(struct krc_vqueue *vq, void __user *uarg,
			 bool publish)
{
	struct krc_ctrl_msg msg = {}, rep;
	struct krcore_lmr_publish p;
	struct krc_lmr_handle *h;
	u8 owner[16];
	int ret = 0;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&p, uarg, sizeof(p)))
		return -EFAULT;
	if (p.reserved || krc_name_valid(p.name) ||
	    p.timeout_ms > KRCORE_LMR_MAX_WAIT_MS)
		return -EINVAL;
	if (publish ? !p.access || (p.access & ~(u32)KRC_LMR_RIGHTS) :
		      p.access)
		return -EINVAL;
	xa_lock(&vq->proc->lmrs);
	h = xa_load(&vq->proc->lmrs, p.handle);
	if (h) {
		memcpy(owner, h->gid, 16);
		msg.dst_incarnation = h->owner_inc;
		msg.region = h->region;
		if (h->named)
			ret = -EPERM;	/* its holder names it, nobody else */
		else if (p.access & ~h->access)
			ret = -EACCES;
	}
	xa_unlock(&vq->proc->lmrs);
	if (!h)
		return -ENOENT;
	if (ret)
		return ret;
	msg.type = publish ? KRC_MSG_MEM_PUBLISH : KRC_MSG_MEM_UNPUBLISH;
	msg.access = p.access;
	memcpy(msg.name, p.name, KRC_NAME_LEN);
	ret = krc_lmr_ask(vq, owner, &msg, p.timeout_ms, &rep);
	if (ret || !publish)
		return ret;
	p.rkey = rep.rkey;
	return copy_to_user(uarg, &p, sizeof(p)) ? -EFAULT : 0;
}

/*
 * READ the bucket of @name from the node at the other end of @conn and
 * find the name in it: 0 and *e, or -errno.
 */
static int krc_name_read(struct krc_conn *conn, const char *name,
			 struct krc_name_entry *e)
{
	u64 off = KRC_NAMES_OFF + (u64)krc_name_bucket(name) * KRC_NAME_BUCKET;
	struct krc_kop *kop;
	int ret = -EAGAIN, i;

	for (i = 0; i < KRC_NAME_READS && ret == -EAGAIN; i++) {
		if (i)
			krc_event(KRC_EV_NAME_REREADS);
		kop = krc_kop_alloc(krc_node.dev->ibdev, KRC_NAME_BUCKET,
				    DMA_FROM_DEVICE);
		if (!kop)
			return -ENOMEM;
		ret = krc_conn_read(conn, kop, conn->probe_addr + off,
				    conn->probe_rkey, KRC_NAME_BUCKET);
		/* the connection is going: recovery moves the VQ, try again */
		if (ret == -ENOTCONN)
			ret = -EAGAIN;
		else if (!ret)
			ret = krc_kop_wait(kop, max_t(u32, krc_param_wr_timeout_ms /
						      8 * 7, 1000)) ?:
			      krc_name_find(kop->buf, KRC_NAME_BUCKET, name, e);
		krc_kop_put(kop);
	}
	return ret;
}

/*
 * @name at the other end of @conn by one READ of its names table, inside
 * the gate: 0 and @h's owner, *@e, or -errno.
 */
static int krc_name_lookup_rc(struct krc_conn *conn, const char *name,
			      struct krc_lmr_handle *h,
			      struct krc_name_entry *e)
{
	if (!conn->probe_rkey || conn->probe_len < KRC_NODE_AREA ||
	    !conn->peer)
		return -EOPNOTSUPP;	/* a peer without a names table */
	memcpy(h->gid, conn->peer->gid, 16);
	spin_lock(&conn->peer->lock);
	h->owner_inc = conn->peer->card.incarnation;
	spin_unlock(&conn->peer->lock);
	return krc_name_read(conn, name, e);
}

/*
 * @name on node @gid, asked of it by a MEM_LOOKUP (no RC to READ over),
 * started inside the gate, which it leaves: 0 and @h's owner (the
 * incarnation that answered), *@e, or -errno.
 */
static int krc_name_lookup_ask(const u8 gid[16], const char *name,
			       u32 timeout_ms, struct krc_lmr_handle *h,
			       struct krc_name_entry *e)
{
	struct krc_ctrl_msg msg = { .type = KRC_MSG_MEM_LOOKUP }, rep;
	int ret;

	memcpy(msg.name, name, KRC_NAME_LEN);
	krc_event(KRC_EV_NAME_ASKED);
	ret = krc_lmr_ask_gated(gid, &msg, timeout_ms, &rep);
	if (ret)
		return ret;
	memcpy(h->gid, gid, 16);
	h->owner_inc = rep.card.incarnation;
	memcpy(e->name, name, KRC_NAME_LEN);
	e->region = rep.region;
	e->access = rep.access;
	e->rkey = rep.rkey;
	e->length = rep.length;
	e->addr = rep.addr;
	return 0;
}

/*
 * Enters the gate itself (ioctl.c): a READ over the VQ's connection, or on
 * the datagram path a ready pooled one of its peer (the VQ moves to it at
 * its next post), inside it; with no RC yet, a MEM_LOOKUP to the peer,
 * whose answer is waited for outside it.
 */
long krc_ioc_lmr_lookup(struct krc_vqueue *vq, void __user *uarg)
{
	struct krc_lmr_handle h = { .named = true };
	struct krcore_lmr_lookup lk;
	struct krc_name_entry e;
	struct krc_conn *conn;
	u8 gid[16];
	bool asked = false;
	u32 handle = 0;
	int ret;

	if (!vq->proc || current->mm != vq->mm)
		return -EACCES;
	if (copy_from_user(&lk, uarg, sizeof(lk)))
		return -EFAULT;
	if (lk.reserved || krc_name_valid(lk.name))
		return -EINVAL;
	if (krc_lmr_count(vq->proc) >= krc_param_lmr_max_per_proc)
		return -EMFILE;
	ret = krc_vq_enter(vq);
	if (ret)
		return ret;
	mutex_lock(&vq->lock);
	conn = vq->conn;
	if (conn) {
		kref_get(&conn->ref);
	} else if (vq->dgram && vq->peer) {
		conn = krc_peer_pick(vq->peer);
		if (!conn) {
			memcpy(gid, vq->peer->gid, 16);
			asked = true;
		}
	}
	mutex_unlock(&vq->lock);
	if (conn) {
		ret = krc_name_lookup_rc(conn, lk.name, &h, &e);
		krc_conn_put(conn);
		krc_node_leave();
	} else if (asked) {
		ret = krc_name_lookup_ask(gid, lk.name, 0, &h, &e);
	} else {
		krc_node_leave();
		ret = -ENOTCONN;	/* not connected to anyone */
	}
	if (ret == -ENOENT)
		krc_event(KRC_EV_NAME_MISSES);
	if (ret)
		return ret;
	krc_event(KRC_EV_NAME_LOOKUPS);
	h.region = e.region;
	h.access = e.access;
	h.length = e.length;
	h.rkey = e.rkey;
	ret = krc_lmr_keep_handle(vq->proc, &h, &handle);
	if (ret)
		return ret;
	memcpy(lk.gid, h.gid, 16);
	lk.addr = e.addr;
	lk.length = e.length;
	lk.incarnation = h.owner_inc;
	lk.rkey = e.rkey;
	lk.access = e.access;
	lk.region = e.region;
	lk.handle = handle;
	if (copy_to_user(uarg, &lk, sizeof(lk))) {
		kfree(xa_erase(&vq->proc->lmrs, handle));
		krc_obj_destroyed(KRC_OBJ_LMR_HANDLE);
		return -EFAULT;
	}
	return 0;
}
