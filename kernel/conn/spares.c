// SPDX-License-Identifier: GPL-2.0
/*
 * spares.c - spare QPs: RC connections created ahead of need (QP in INIT,
 * in no pool), so that a handshake starts with a QP in hand instead of
 * spending a QP creation on its critical path. Up to spare_qps are kept;
 * the pool is refilled in the background after each take, and drained
 * when the node stops. A spare belongs to the list (krc_spares_lock);
 * whoever takes one owns its reference.
 */
#include "conn/conn.h"

static LIST_HEAD(krc_spares);
static DEFINE_SPINLOCK(krc_spares_lock);
static int krc_nspares;
static bool krc_spares_enabled;
static DECLARE_WAIT_QUEUE_HEAD(krc_spares_wq);
static struct work_struct krc_spares_work;

static void krc_spares_work_fn(struct work_struct *work)
{
	struct krc_conn *conn;
	bool added;

	for (;;) {
		spin_lock(&krc_spares_lock);
		added = krc_spares_enabled && krc_nspares < krc_param_spare_qps;
		spin_unlock(&krc_spares_lock);
		if (!added)
			return;
		conn = krc_conn_create();
		if (IS_ERR(conn))
			return;
		spin_lock(&krc_spares_lock);
		if (krc_spares_enabled) {
			list_add_tail(&conn->node, &krc_spares);
			krc_nspares++;
			conn = NULL;
		}
		spin_unlock(&krc_spares_lock);
		if (conn) {
			krc_conn_kill(conn);
			krc_conn_put(conn);
			return;
		}
		krc_event(KRC_EV_SPARES_CREATED);
		wake_up_all(&krc_spares_wq);
	}
}

static bool krc_spare_pop(struct krc_conn **connp)
{
	spin_lock(&krc_spares_lock);
	*connp = list_first_entry_or_null(&krc_spares, struct krc_conn, node);
	if (*connp) {
		list_del_init(&(*connp)->node);
		krc_nspares--;
	}
	spin_unlock(&krc_spares_lock);
	return *connp || !krc_spares_enabled;
}

struct krc_conn *krc_spare_take(unsigned long timeout_ms)
{
	struct krc_conn *conn;

	/*
	 * The refill waits for krc_spares_refill() at the end of the
	 * handshake: a QP made meanwhile would hold the CPU while the
	 * request and its answer are under way. Unless none is left.
	 */
	krc_spare_pop(&conn);
	if (!conn) {
		queue_work(krc_wq, &krc_spares_work);
		krc_event(KRC_EV_SPARES_WAITED);
		wait_event_timeout(krc_spares_wq, krc_spare_pop(&conn),
				   msecs_to_jiffies(timeout_ms));
	}
	if (conn)
		krc_event(KRC_EV_SPARES_TAKEN);
	return conn;
}

/* Make spares again, up to spare_qps, in the background. */
void krc_spares_refill(void)
{
	if (READ_ONCE(krc_nspares) < krc_param_spare_qps)
		queue_work(krc_wq, &krc_spares_work);
}

void krc_spares_fill(void)
{
	spin_lock(&krc_spares_lock);
	krc_spares_enabled = true;
	spin_unlock(&krc_spares_lock);
	/* The first batch is made now, so that the first connect finds them. */
	krc_spares_work_fn(&krc_spares_work);
}

int krc_spares_count(void)
{
	return READ_ONCE(krc_nspares);
}

void krc_spares_init(void)
{
	INIT_WORK(&krc_spares_work, krc_spares_work_fn);
}

/* Stop refilling and destroy every spare. */
void krc_spares_drain(void)
{
	struct krc_conn *conn;

	spin_lock(&krc_spares_lock);
	krc_spares_enabled = false;
	spin_unlock(&krc_spares_lock);
	wake_up_all(&krc_spares_wq);
	cancel_work_sync(&krc_spares_work);
	for (;;) {
		spin_lock(&krc_spares_lock);
		conn = list_first_entry_or_null(&krc_spares, struct krc_conn,
						node);
		if (conn) {
			list_del_init(&conn->node);
			krc_nspares--;
		}
		spin_unlock(&krc_spares_lock);
		if (!conn)
			break;
		krc_conn_kill(conn);
		krc_conn_put(conn);
	}
}
