// SPDX-License-Identifier: GPL-2.0
/*
 * watchdog.c - every connection of the node on one list, watched.
 *
 * Once a second the watchdog fails connections that made no progress
 * for wr_timeout_ms with requests outstanding (some transports, rxe
 * among them, never time out a request to a peer that vanished), and
 * finds connections whose QP went to error with nothing posted on our
 * side (the passive end of a failure). Failing one hands it to recovery
 * (the data layer's, through krc_conn_fail()).
 *
 * A connection is on the list (krc_conns_lock) from its creation to its
 * free; whoever takes one off the list for longer than the lock holds a
 * reference (kref_get_unless_zero: the last put may be under way).
 */
#include <linux/moduleparam.h>

#include "conn/conn.h"

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

	lockdep_assert_held(&conn->lock);
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
 * Up to @max live connections for which @match, called under conn->lock,
 * is true; each with a reference. Returns how many.
 */
int krc_conns_collect(bool (*match)(struct krc_conn *conn, const void *arg),
		      const void *arg, struct krc_conn **out, int max)
{
	struct krc_conn *conn;
	unsigned long flags;
	int n = 0;

	spin_lock(&krc_conns_lock);
	list_for_each_entry(conn, &krc_conns, all_node) {
		bool hit;

		if (n == max)
			break;
		spin_lock_irqsave(&conn->lock, flags);
		hit = !conn->dead && match(conn, arg);
		spin_unlock_irqrestore(&conn->lock, flags);
		if (hit && kref_get_unless_zero(&conn->ref))
			out[n++] = conn;
	}
	spin_unlock(&krc_conns_lock);
	return n;
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
static int krc_conns_fail_id(u32 id)
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

/* Writing a connection id fails that connection (tests of recovery). */
static int krc_fault_conn_error_set(const char *val,
				    const struct kernel_param *kp)
{
	u32 id;
	int ret = kstrtou32(val, 0, &id);

	if (ret)
		return ret;
	return krc_conns_fail_id(id);
}

static const struct kernel_param_ops krc_fault_conn_error_ops = {
	.set = krc_fault_conn_error_set,
};

module_param_cb(fault_conn_error, &krc_fault_conn_error_ops, NULL, 0200);
MODULE_PARM_DESC(fault_conn_error, "Fault injection: fail the connection with this id");

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
