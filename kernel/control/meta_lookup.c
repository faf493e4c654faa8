// SPDX-License-Identifier: GPL-2.0
/*
 * meta_lookup.c - a member's lookups in the MetaServer's table, over the
 * connection meta_client.c keeps.
 *
 * Lookups are one-sided RDMA READs of the table window where the card
 * must be (common/meta_table.h): one READ in the common case, never an
 * RPC to the MetaServer's CPU. A torn slot is read again. A node that
 * hosts the table itself reads it locally, over the kernel's own QP
 * (core/kqp.c), with the same lookup code. Pre-warming READs the whole
 * table the same way, and hands each card it finds to conn/.
 */
#include <rdma/rdma_cm.h>

#include "control/meta_client.h"
#include "meta_table.h"

#define KRC_MC_READ_MS		1000
#define KRC_MC_TORN_RETRIES	16
#define KRC_MC_SCAN_SLOTS	512	/* slots per READ of a table scan */

#define KRC_MC_LOOKUP_LEN	(KRC_MT_WINDOW * KRC_MT_SLOT_SIZE)

/* A buffer for a lookup READ: the kept one, else a new one. */
static struct krc_kop *krc_mc_kop_get(void)
{
	struct krc_kop *kop;

	spin_lock(&krc_mc.kop_lock);
	kop = krc_mc.kop;
	krc_mc.kop = NULL;
	spin_unlock(&krc_mc.kop_lock);
	if (!kop) {
		kop = krc_kop_alloc(krc_node.dev->ibdev, KRC_MC_LOOKUP_LEN,
				    DMA_FROM_DEVICE);
		if (kop)
			kop->seq = READ_ONCE(krc_mc.kop_gen);
		return kop;
	}
	reinit_completion(&kop->done);
	kop->status = -EINPROGRESS;
	kop->byte_len = 0;
	ib_dma_sync_single_for_device(kop->ibdev, kop->dma, kop->len, kop->dir);
	return kop;
}

/*
 * Done with a lookup READ: keep its buffer if the READ completed (no one
 * else holds it) and it belongs to this start of the client.
 */
static void krc_mc_kop_done(struct krc_kop *kop)
{
	if (refcount_read(&kop->ref) == 1 && kop->status != -EINPROGRESS) {
		spin_lock(&krc_mc.kop_lock);
		if (!krc_mc.kop && !krc_mc.stopping &&
		    kop->seq == krc_mc.kop_gen) {
			krc_mc.kop = kop;
			kop = NULL;
		}
		spin_unlock(&krc_mc.kop_lock);
	}
	if (kop)
		krc_kop_put(kop);
}

/* A READ over the connection completed (softirq). */
static void krc_mc_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct krc_mc_conn *mc = cq->cq_context;

	atomic_dec(&mc->outstanding);
	krc_kop_cqe_done(cq, wc);
}

/* Post one READ of [off, off + len) of the table. */
static int krc_mc_read(struct krc_mc_conn *mc, struct krc_kop *kop, u64 off,
		       u32 len)
{
	struct ib_sge sge = {
		.addr = kop->dma,
		.length = len,
		.lkey = krc_node.dev->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr.wr_cqe = &kop->cqe,
		.wr.opcode = IB_WR_RDMA_READ,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.sg_list = &sge,
		.wr.num_sge = 1,
	};
	u64 addr;
	u32 rkey;
	int ret;

	if (WARN_ON_ONCE(len > kop->len))
		return -EINVAL;
	if (!mc) {
		struct krc_mt_geom geom;

		/* The table is here: READ it over the kernel's own QP. */
		ret = krc_meta_host_where(&geom, &addr, &rkey);
		if (ret)
			return ret;
		if (!krc_node.kqp)
			return -ENODEV;
		return krc_kqp_read(krc_node.kqp, kop, addr + off, rkey, len);
	}
	wr.remote_addr = mc->desc.addr + off;
	wr.rkey = mc->desc.rkey;
	kop->cqe.done = krc_mc_read_done;
	refcount_inc(&kop->ref);
	spin_lock_bh(&mc->lock);
	if (mc->dead) {
		ret = -EHOSTUNREACH;
	} else {
		atomic_inc(&mc->outstanding);
		ret = ib_post_send(mc->id->qp, &wr.wr, NULL);
		if (ret)
			atomic_dec(&mc->outstanding);
	}
	spin_unlock_bh(&mc->lock);
	if (ret)
		krc_kop_put(kop);
	return ret;
}

int krc_mc_read_wait(struct krc_mc_conn *mc, struct krc_kop *kop, u64 off,
		     u32 len)
{
	int ret = krc_mc_read(mc, kop, off, len);

	if (!ret)
		ret = krc_kop_wait(kop, KRC_MC_READ_MS);
	if (!ret) {
		krc_event(KRC_EV_META_READS);
		return 0;
	}
	if (mc) {
		/* The MetaServer does not answer: reconnect. */
		pr_warn_ratelimited("krcore: MetaServer READ failed: %d\n", ret);
		spin_lock_bh(&mc->lock);
		mc->dead = true;
		spin_unlock_bh(&mc->lock);
		krc_mc_schedule_reconnect();
		ret = -EHOSTUNREACH;
	}
	return ret;
}

int krc_mc_target(struct krc_mc_conn **mcp, struct krc_mt_geom *geom)
{
	u64 addr;
	u32 rkey;

	*mcp = NULL;
	if (krc_mc.local)
		return krc_meta_host_where(geom, &addr, &rkey) ? -EHOSTUNREACH
							       : 0;
	*mcp = krc_mc_get_cur();
	if (!*mcp)
		return -EHOSTUNREACH;
	*geom = (*mcp)->geom;
	return 0;
}

int krc_meta_lookup(const u8 gid[16], struct krcore_card *card, u32 *reads)
{
	struct krc_mc_conn *mc;
	struct krc_mt_geom geom;
	int torn = 0, ret, i;
	u32 first, count;

	ret = krc_mc_target(&mc, &geom);
	if (ret) {
		if (!krc_mc.local)
			krc_event(KRC_EV_META_UNREACHABLE);
		return ret;
	}

	krc_mt_window(&geom, gid, &first, &count);
	for (i = 0; ; i++) {
		struct krc_kop *kop;

		kop = krc_mc_kop_get();
		if (!kop) {
			ret = -ENOMEM;
			break;
		}
		ret = krc_mc_read_wait(mc, kop, krc_mt_slot_offset(first),
				       count * KRC_MT_SLOT_SIZE);
		if (!ret) {
			(*reads)++;
			ret = krc_mt_scan(kop->buf, first, count, &geom, gid,
					  card, NULL);
		}
		krc_mc_kop_done(kop);
		if (ret == -EAGAIN && ++torn <= KRC_MC_TORN_RETRIES) {
			krc_event(KRC_EV_META_TORN);
			continue;
		}
		if (ret != -EINPROGRESS)
			break;
		first += count;
		count = min_t(u32, KRC_MT_WINDOW, geom.nphys - first);
	}
	krc_mc_conn_put(mc);
	if (ret == -ENOENT) {
		krc_event(KRC_EV_META_MISSES);
		return -ENXIO;
	}
	if (ret == -EAGAIN)
		return -EIO;
	if (!ret)
		krc_event(KRC_EV_META_HITS);
	return ret;
}

/* Who hears of each card a table scan finds (conn/: pre-warming). */
static void (*krc_mc_on_card)(const struct krcore_card *card);

void krc_meta_on_card(void (*fn)(const struct krcore_card *card))
{
	krc_mc_on_card = fn;
}

/*
 * Pre-warming: READ the whole table and connect to every node in it, in
 * the background, so that even the first qconnect to a node is pooled.
 */
void krc_mc_prewarm_work(struct work_struct *work)
{
	u32 len = KRC_MC_SCAN_SLOTS * KRC_MT_SLOT_SIZE;
	struct krc_mc_conn *mc;
	struct krc_mt_geom geom;
	struct krcore_card card;
	u32 first, count, i, nodes = 0;
	int ret = 0;

	if (krc_mc_target(&mc, &geom))
		return;
	for (first = 0; first < geom.nphys && !ret; first += count) {
		struct krc_kop *kop;

		if (READ_ONCE(krc_mc.stopping))
			break;
		count = min_t(u32, KRC_MC_SCAN_SLOTS, geom.nphys - first);
		kop = krc_kop_alloc(krc_node.dev->ibdev, len, DMA_FROM_DEVICE);
		if (!kop)
			break;
		ret = krc_mc_read_wait(mc, kop, krc_mt_slot_offset(first),
				       count * KRC_MT_SLOT_SIZE);
		for (i = 0; !ret && i < count; i++) {
			/* A torn slot is skipped: qconnect finds it later. */
			if (krc_mt_slot_card((u8 *)kop->buf + i * KRC_MT_SLOT_SIZE,
					     &geom, &card))
				continue;
			if (!memcmp(card.gid, krc_node.card.gid, 16))
				continue;
			krc_mc_on_card(&card);
			nodes++;
		}
		krc_kop_put(kop);
	}
	krc_mc_conn_put(mc);
	pr_info("krcore: pre-warming connections to %u nodes%s\n", nodes,
		ret ? " (table scan cut short)" : "");
}
