// SPDX-License-Identifier: GPL-2.0
/*
 * lmr_op_host.c - MEM_SET and MEM_COPY at the owner of the regions
 * (lmr_host.h): a memset of any byte value over any range of a region the
 * caller may write, a memmove from a region it may read to one it may
 * write, both here; checked on the control QP's receive path, done by this
 * CPU on krc_wq, nothing but the request crossing the network. Each job
 * holds a reference on its regions, so a free meanwhile revokes the keys
 * at once and frees the pages after it.
 *
 * The last KRC_LMR_SETS of them into a region are remembered by caller
 * (node, incarnation, req_id): a retransmitted one is answered, never done
 * twice (a copy between overlapping ranges done twice would not be the
 * same), and one still running is answered when it is done.
 */
#include <linux/slab.h>

#include "data/lmr_host.h"

/* A MEM_SET or MEM_COPY, done by the CPU on krc_wq. */
struct krc_lmr_set_job {
	struct work_struct work;
	struct krc_lmr_region *r;	/* a reference (the destination) */
	struct krc_lmr_region *src;	/* COPY: a reference, else NULL */
	u64 src_off;
	struct krc_peer *peer;		/* the caller's, a reference */
	u64 inc;			/* the caller's incarnation */
	u64 req_id;
	u64 off;
	u64 len;
	u8 value;
};

static void krc_lmrh_op_work(struct work_struct *work)
{
	struct krc_lmr_set_job *j = container_of(work, struct krc_lmr_set_job,
						 work);
	struct krc_lmr_region *r = j->r;
	u32 i;

	if (j->src)
		krc_kmem_copy(&r->mem, j->off, &j->src->mem, j->src_off,
			      j->len);
	else
		krc_kmem_set(&r->mem, j->off, j->len, j->value);
	mutex_lock(&krc_lmrh.lock);
	for (i = 0; i < KRC_LMR_SETS; i++)
		if (r->sets[i].req_id == j->req_id &&
		    r->sets[i].inc == j->inc &&
		    !memcmp(r->sets[i].gid, j->peer->gid, 16))
			r->sets[i].status = 0;
	mutex_unlock(&krc_lmrh.lock);
	krc_event(j->src ? KRC_EV_LMR_COPIES : KRC_EV_LMR_SETS);
	krc_lmrh_reply(j->peer, j->src ? KRC_MSG_MEM_COPY_REP :
		       KRC_MSG_MEM_SET_REP, j->req_id, 0, NULL, r->id);
	if (j->src)
		kref_put(&j->src->ref, krc_lmrh_release);
	kref_put(&r->ref, krc_lmrh_release);
	krc_peer_put(j->peer);
	kfree(j);
}

/* A SET or COPY seen before gets its earlier answer: 1, *dup set. */
static int krc_lmrh_op_dup(struct krc_lmr_region *r,
			   const struct krc_ctrl_msg *m, int *dup)
{
	u32 i;

	for (i = 0; i < KRC_LMR_SETS; i++) {
		/* req_ids are the caller's: named with its node, incarnation */
		if (r->sets[i].req_id == m->req_id &&
		    r->sets[i].inc == m->card.incarnation &&
		    !memcmp(r->sets[i].gid, m->card.gid, 16)) {
			*dup = r->sets[i].status;
			return 1;
		}
	}
	return 0;
}

/*
 * MEM_SET and MEM_COPY: checked here, done by this CPU on krc_wq. A copy
 * moves bytes between two regions of the same holder on this node (or
 * inside one), as memmove.
 */
void krc_lmrh_on_op(struct krc_peer *peer, const struct krc_ctrl_msg *m)
{
	bool copy = m->type == KRC_MSG_MEM_COPY;
	u8 rep = copy ? KRC_MSG_MEM_COPY_REP : KRC_MSG_MEM_SET_REP;
	struct krc_lmr_region *r, *src = NULL;
	struct krc_lmr_set_job *j = NULL;
	int ret, dup = 0;

	if (m->dst_incarnation &&
	    m->dst_incarnation != krc_node.card.incarnation) {
		ret = -ESTALE;	/* the region went with that incarnation */
		goto answer;
	}
	mutex_lock(&krc_lmrh.lock);
	r = krc_lmrh_find(m->region);
	ret = krc_lmrh_op_check(r, m, KRCORE_ACCESS_REMOTE_WRITE, m->addr,
				m->length);
	if (!ret && copy) {
		src = krc_lmrh_find(m->src_region);
		ret = krc_lmrh_op_check(src, m, KRCORE_ACCESS_REMOTE_READ,
					m->src_off, m->length);
	}
	if (!ret && krc_lmrh_op_dup(r, m, &dup)) {
		mutex_unlock(&krc_lmrh.lock);
		if (dup == -EINPROGRESS)
			return;		/* its answer comes when it is done */
		ret = dup;
		goto answer;
	}
	if (!ret) {
		j = kzalloc(sizeof(*j), GFP_KERNEL);
		if (!j)
			ret = -ENOMEM;
	}
	if (ret) {
		mutex_unlock(&krc_lmrh.lock);
		goto answer;
	}
	r->sets[r->set_next].req_id = m->req_id;
	r->sets[r->set_next].inc = m->card.incarnation;
	memcpy(r->sets[r->set_next].gid, m->card.gid, 16);
	r->sets[r->set_next].status = -EINPROGRESS;
	r->set_next = (r->set_next + 1) % KRC_LMR_SETS;
	kref_get(&r->ref);
	j->r = r;
	if (src) {
		kref_get(&src->ref);
		j->src = src;
		j->src_off = m->src_off;
	}
	kref_get(&peer->ref);
	j->peer = peer;
	j->req_id = m->req_id;
	j->inc = m->card.incarnation;
	j->off = m->addr;
	j->len = m->length;
	j->value = m->access;
	INIT_WORK(&j->work, krc_lmrh_op_work);
	queue_work(krc_wq, &j->work);
	mutex_unlock(&krc_lmrh.lock);
	return;
answer:
	if (ret)	/* not a repeat of one done: that is no refusal */
		krc_event(KRC_EV_LMR_SET_REFUSED);
	krc_lmrh_reply(peer, rep, m->req_id, ret, NULL, m->region);
}
