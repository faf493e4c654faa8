// SPDX-License-Identifier: GPL-2.0
/*
 * meta_members.c - membership: the nodes registered with the MetaServer,
 * read from the member directory of its table (common/meta_table.h).
 *
 * A list costs three one-sided READs, each posted once the one before it
 * completed: the directory's header, its records, the header again. The
 * list is one version of the directory if both headers show the same even
 * generation (the MetaServer makes it odd before it touches a record), so
 * no lock or CPU of the MetaServer is involved. Every byte READ is the
 * MetaServer's: the header's count is bounded by the table's geometry and
 * by members_list_max, and every header and record passes its check
 * before it is used.
 *
 * The list is kept here, one for the node, with the generation and the
 * table it came from: a query whose generation has not changed costs one
 * READ of 64 bytes, and no more than one per KRCORE_MEMBERS_POLL_MS
 * whoever asks, so that processes waiting for a change do not load the
 * MetaServer's RNIC more as they grow in number.
 *
 * Lock: krc_members.lock, a mutex (READs sleep), taken under
 * krc_node_enter() with no other krcore lock held; it covers everything
 * in krc_members. The list (kvmalloc'ed) is replaced whole when the
 * generation changes and freed by krc_meta_members_forget() when the
 * node stops. Callers get a copy, which they copy to user space without
 * the lock, so that a process whose buffer faults slowly (userfaultfd,
 * FUSE) holds up no one else's query.
 */
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "control/meta_client.h"
#include "meta_table.h"

#define KRC_MEMBERS_CHUNK	1024	/* records per READ (32 KiB) */
#define KRC_MEMBERS_RETRIES	8

static struct {
	struct mutex lock;		/* all of it; READs under it sleep */
	bool valid;
	u64 table;			/* incarnation of the table READ */
	u64 gen;
	u32 count;
	struct krc_mt_member *list;	/* count entries, sorted by GID */
	unsigned long checked;		/* jiffies of the last header READ */
} krc_members = {
	.lock = __MUTEX_INITIALIZER(krc_members.lock),
};

static int krc_members_cmp(const void *a, const void *b)
{
	const struct krc_mt_member *x = a, *y = b;

	return memcmp(x->gid, y->gid, 16);
}

/* One READ of [off, off + len) of the table, handed to @use. */
static int krc_members_read(struct krc_mc_conn *mc, u64 off, u32 len,
			    int (*use)(const u8 *buf, void *arg), void *arg)
{
	struct krc_kop *kop;
	int ret;

	kop = krc_kop_alloc(krc_node.dev->ibdev, len, DMA_FROM_DEVICE);
	if (!kop)
		return -ENOMEM;
	ret = krc_mc_read_wait(mc, kop, off, len);
	if (!ret)
		ret = use(kop->buf, arg);
	krc_kop_put(kop);
	return ret;
}

struct krc_members_hdr {
	const struct krc_mt_geom *geom;
	u64 gen;
	u32 count;
};

static int krc_members_use_hdr(const u8 *buf, void *arg)
{
	struct krc_members_hdr *h = arg;

	return krc_mt_dir_header(buf, h->geom, &h->gen, &h->count);
}

/* The directory's header: 0, or an errno (-EAGAIN: torn every time). */
static int krc_members_header(struct krc_mc_conn *mc, struct krc_members_hdr *h)
{
	int ret, i;

	for (i = 0; i < KRC_MEMBERS_RETRIES; i++) {
		ret = krc_members_read(mc, krc_mt_dir_offset(h->geom),
				       KRC_MT_DIR_HDR_SIZE,
				       krc_members_use_hdr, h);
		if (ret != -EAGAIN)
			break;
		krc_event(KRC_EV_META_TORN);
	}
	return ret;
}

struct krc_members_recs {
	const struct krc_mt_geom *geom;
	struct krc_mt_member *out;
	u32 n;
};

static int krc_members_use_recs(const u8 *buf, void *arg)
{
	struct krc_members_recs *r = arg;
	int ret = 0;
	u32 i;

	for (i = 0; !ret && i < r->n; i++)
		ret = krc_mt_dir_record(buf + i * KRC_MT_REC_SIZE, r->geom,
					&r->out[i]);
	return ret;
}

/* Records [0, count) into @list: 0, -EAGAIN (one was torn) or an errno. */
static int krc_members_records(struct krc_mc_conn *mc,
			       const struct krc_mt_geom *geom, u32 count,
			       struct krc_mt_member *list)
{
	struct krc_members_recs r = { .geom = geom };
	u32 done;
	int ret;

	for (done = 0; done < count; done += r.n) {
		r.n = min_t(u32, count - done, KRC_MEMBERS_CHUNK);
		r.out = list + done;
		ret = krc_members_read(mc, krc_mt_rec_offset(geom, done),
				       r.n * KRC_MT_REC_SIZE,
				       krc_members_use_recs, &r);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Bring the list up to date: one READ of the directory's header and, if
 * its generation or table is not the list's, the records and the header
 * again (all over again if the generation moved meanwhile).
 */
static int krc_members_refresh(void)
{
	struct krc_mt_member *list = NULL;
	struct krc_members_hdr h, h2;
	struct krc_mc_conn *mc;
	struct krc_mt_geom geom;
	int ret, i;

	lockdep_assert_held(&krc_members.lock);
	ret = krc_mc_target(&mc, &geom);
	if (ret)
		return ret;
	h.geom = &geom;
	h2.geom = &geom;
	for (i = 0; i < KRC_MEMBERS_RETRIES; i++) {
		ret = krc_members_header(mc, &h);
		if (ret)
			break;
		krc_members.checked = jiffies;
		if (krc_members.valid && krc_members.table == geom.incarnation &&
		    krc_members.gen == h.gen)
			break;
		if (h.count > krc_param_members_list_max) {
			ret = -E2BIG;
			break;
		}
		list = kvmalloc_array(max_t(u32, h.count, 1), sizeof(*list),
				      GFP_KERNEL);
		if (!list) {
			ret = -ENOMEM;
			break;
		}
		ret = krc_members_records(mc, &geom, h.count, list);
		if (!ret)
			ret = krc_members_header(mc, &h2);
		if (!ret && h2.gen != h.gen)
			ret = -EAGAIN;
		if (ret == -EAGAIN) {
			/* the directory changed under the READs */
			krc_event(KRC_EV_META_TORN);
			kvfree(list);
			list = NULL;
			continue;
		}
		if (ret)
			break;
		sort(list, h.count, sizeof(*list), krc_members_cmp, NULL);
		kvfree(krc_members.list);
		krc_members.list = list;
		list = NULL;
		krc_members.count = h.count;
		krc_members.gen = h.gen;
		krc_members.table = geom.incarnation;
		krc_members.valid = true;
		break;
	}
	kvfree(list);
	krc_mc_conn_put(mc);
	/* torn or changing every time, or bytes that do not check */
	if (ret == -EAGAIN || ret == -EPROTO)
		ret = -EIO;
	return ret;
}

/* A copy of the list's first @n members, as the ABI gives them. */
static void krc_members_copy(struct krc_members_view *v, u32 n)
{
	u32 i;

	for (i = 0; i < krc_members.count; i++) {
		const struct krc_mt_member *m = &krc_members.list[i];
		u32 flags = 0;

		if (!memcmp(m->gid, krc_node.card.gid, 16)) {
			flags |= KRCORE_MEMBER_F_SELF;
			v->self = i;
		}
		if (!memcmp(m->gid, krc_mc.gid, 16))
			flags |= KRCORE_MEMBER_F_META_HOST;
		if (i >= n)
			continue;
		memcpy(v->m[i].gid, m->gid, 16);
		v->m[i].incarnation = m->incarnation;
		v->m[i].node_id = m->node_id;
		v->m[i].flags = flags;
	}
}

int krc_meta_members(u32 max, unsigned int max_age_ms,
		     struct krc_members_view *v)
{
	u32 n;
	int ret;

	memset(v, 0, sizeof(*v));
	v->self = ~0U;
	if (mutex_lock_interruptible(&krc_members.lock))
		return -EINTR;
	if (!krc_members.valid ||
	    time_after_eq(jiffies, krc_members.checked +
			  msecs_to_jiffies(max_age_ms)))
		ret = krc_members_refresh();
	else
		ret = 0;
	if (ret)
		goto out;
	n = min(max, krc_members.count);
	if (n) {
		v->m = kvcalloc(n, sizeof(*v->m), GFP_KERNEL);
		if (!v->m) {
			ret = -ENOMEM;
			goto out;
		}
	}
	v->n = n;
	v->gen = krc_members.gen;
	v->count = krc_members.count;
	krc_members_copy(v, n);
out:
	mutex_unlock(&krc_members.lock);
	return ret;
}

void krc_meta_members_forget(void)
{
	mutex_lock(&krc_members.lock);
	kvfree(krc_members.list);
	krc_members.list = NULL;
	krc_members.count = 0;
	krc_members.valid = false;
	mutex_unlock(&krc_members.lock);
}
