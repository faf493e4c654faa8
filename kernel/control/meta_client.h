/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control/meta_client.h - what the two files of a member's MetaServer
 * client share: the client (krc_mc, there is one) and its connection to
 * the MetaServer (struct krc_mc_conn), which meta_client.c makes,
 * registers and tears down, and meta_lookup.c and meta_members.c READ
 * the table over. Private to those files.
 *
 * Locks: krc_mc.lock (control.h's meta client's lock: connect, RPCs,
 * teardown) > krc_mc.cur_lock and a connection's lock; those two and
 * krc_mc.kop_lock are leaves, never nested. cur_lock and a connection's
 * lock are taken _bh: completions run in softirq.
 */
#ifndef KRC_META_CLIENT_H
#define KRC_META_CLIENT_H

#include <linux/in.h>

#include "control/control.h"

#define KRC_MC_RX		4

/* One RC connection to the MetaServer (a new one after each reconnect). */
struct krc_mc_conn {
	struct kref ref;
	struct rdma_cm_id *id;
	struct ib_cq *cq;
	spinlock_t lock;		/* posting against dead; _bh: completions */
	bool dead;
	atomic_t outstanding;		/* READs and SENDs posted */
	unsigned long heard;		/* jiffies: the host's last word */
	struct completion cm_done;	/* established or failed */
	int cm_status;
	struct krc_nonces nonces;	/* ours in the hello, the host's */
	struct krc_mt_desc desc;
	struct krc_mt_geom geom;
	struct krc_msgbuf rx[KRC_MC_RX];
	struct krc_msgbuf tx;
	struct completion rpc_done;
	u64 rpc_id;
	struct krc_ctrl_msg rpc_reply;
};

struct krc_meta_client {
	struct mutex lock;		/* connect, RPCs, teardown */
	int state;			/* enum krcore_meta_state */
	bool local;			/* the table is on this node */
	bool stopping;
	struct sockaddr_in dst;
	struct sockaddr_in src;
	u8 gid[16];
	spinlock_t cur_lock;		/* cur and geom; _bh */
	struct krc_mc_conn *cur;	/* registered connection */
	struct delayed_work reconnect;
	struct delayed_work watch;	/* the host's keepalives heard? */
	struct work_struct prewarm;
	unsigned int backoff_ms;
	u64 rpc_seq;
	struct krc_mt_geom geom;	/* of the table, once known */
	/*
	 * The buffer of the last lookup READ, kept for the next one (kop,
	 * under kop_lock); kop_gen: the start that made it.
	 */
	spinlock_t kop_lock;
	struct krc_kop *kop;
	u32 kop_gen;
};

extern struct krc_meta_client krc_mc;

/* meta_client.c */
struct krc_mc_conn *krc_mc_get_cur(void);	/* a reference, or NULL */
void krc_mc_conn_put(struct krc_mc_conn *mc);
void krc_mc_schedule_reconnect(void);

/* meta_lookup.c */
void krc_mc_prewarm_work(struct work_struct *work);
/*
 * Where the table is READ: 0 with *mcp (a reference, NULL when the table
 * is on this node) and its geometry, or -EHOSTUNREACH.
 */
int krc_mc_target(struct krc_mc_conn **mcp, struct krc_mt_geom *geom);
/*
 * READ [off, off + len) of the table into @kop (len <= kop->len) and wait:
 * 0, or an errno (-EHOSTUNREACH once a remote table stopped answering: the
 * connection is then given up for a new one).
 */
int krc_mc_read_wait(struct krc_mc_conn *mc, struct krc_kop *kop, u64 off,
		     u32 len);

/* meta_members.c */
void krc_meta_members_forget(void);

#endif /* KRC_META_CLIENT_H */
