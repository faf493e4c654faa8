/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats.h - counters of krcore.ko, readable in
 * /sys/class/misc/krcore/counters/<name> (one value per file).
 *
 * Every kind of object the module creates has a pair of counters,
 * <kind>_created and <kind>_destroyed; at unload the two must be equal or
 * the module reports the leak. Event counters count things that happen.
 */
#ifndef KRC_STATS_H
#define KRC_STATS_H

#include <linux/atomic.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>

enum krc_obj {
	KRC_OBJ_VQ,
	KRC_OBJ_DEVICE,
	KRC_OBJ_PD,
	KRC_OBJ_CONN,
	KRC_OBJ_QP,
	KRC_OBJ_CQ,
	KRC_OBJ_MR,
	KRC_OBJ_AH,
	KRC_OBJ_PEER,
	KRC_OBJ_META_MEMBER,
	KRC_OBJ_META_CONN,
	KRC_OBJ_PROC,
	KRC_OBJ_USER_MR,
	KRC_OBJ_SRQ,
	KRC_OBJ_RC_PLACE,	/* places under the RC cap (evict.c) */
	KRC_OBJ_FLOW,		/* a sender's flow to a port (data/flow.c) */
	KRC_OBJ_LMR,		/* a region this node owns (data/lmr_host.c) */
	KRC_OBJ_LMR_HANDLE,	/* a region a process here holds (data/lmr.c) */
	KRC_OBJ_LOCK_ENTRY,	/* a locker in a lock's queue here (data/lock_host.c) */
	KRC_OBJ_LOCK_HELD,	/* a lock a process here holds (data/lock.c) */
	KRC_OBJ_LMR_NAME,	/* a name of a region here (data/lmr_name_host.c) */
	KRC_NR_OBJ
};

enum krc_event {
	KRC_EV_IOCTL_ERRORS,
	KRC_EV_PORT_REFRESH,
	KRC_EV_QCONNECT_POOLED,
	KRC_EV_QCONNECT_LOOKUP,
	KRC_EV_QCONNECT_HANDSHAKE,
	KRC_EV_QCONNECT_LOCAL,
	KRC_EV_QCONNECT_FAILED,
	KRC_EV_QCONNECT_DATAGRAM,
	KRC_EV_PROBES,
	KRC_EV_WR_POSTED,
	KRC_EV_WR_REJECTED,
	KRC_EV_WR_FULL,
	KRC_EV_WR_ERRORS,
	KRC_EV_WR_TIMEOUTS,
	KRC_EV_WR_REPOSTED,
	KRC_EV_WR_NOT_EXECUTED,
	KRC_EV_WR_HELD,
	KRC_EV_RECOVERIES,
	KRC_EV_MSG_RECEIVED,
	KRC_EV_MSG_DROPPED,
	KRC_EV_MSG_NO_PORT,
	KRC_EV_SPARES_CREATED,
	KRC_EV_SPARES_TAKEN,
	KRC_EV_SPARES_WAITED,
	KRC_EV_CONN_ERRORS,
	KRC_EV_CONNS_DROPPED,
	KRC_EV_STRAY_COMPLETIONS,
	KRC_EV_POOL_GROWN,
	KRC_EV_PEER_REINCARNATED,
	KRC_EV_PEER_VERIFIED,
	KRC_EV_CTRL_TX,
	KRC_EV_CTRL_TX_FULL,
	KRC_EV_CTRL_RX,
	KRC_EV_CTRL_RX_BAD,
	KRC_EV_CTRL_RX_DROPPED,
	KRC_EV_CTRL_RECOVERIES,
	KRC_EV_HS_REQ_SENT,
	KRC_EV_HS_RETRANSMITS,
	KRC_EV_HS_REQ_RECV,
	KRC_EV_HS_DUP_REQ,
	KRC_EV_HS_REP_SENT,
	KRC_EV_HS_REP_RECV,
	KRC_EV_HS_NAK_SENT,
	KRC_EV_HS_NAK_RECV,
	KRC_EV_HS_STALE,
	KRC_EV_HS_TIMEOUTS,
	KRC_EV_HS_CONNECTED,
	KRC_EV_HS_STRAY,
	KRC_EV_HS_CROSSED,
	KRC_EV_HS_RTU_SENT,
	KRC_EV_HS_RTU_RECV,
	KRC_EV_HS_RTU_ACK_SENT,
	KRC_EV_HS_RTU_GIVEUP,
	KRC_EV_HS_HALF_OPEN_EXPIRED,
	KRC_EV_GOODBYE_SENT,
	KRC_EV_GOODBYE_RECV,
	KRC_EV_META_CONNECTS,
	KRC_EV_META_RECONNECTS,
	KRC_EV_META_DISCONNECTS,
	KRC_EV_META_UNREACHABLE,
	KRC_EV_META_READS,
	KRC_EV_META_HITS,
	KRC_EV_META_MISSES,
	KRC_EV_META_TORN,
	KRC_EV_META_REGISTERED,
	KRC_EV_META_DEREGISTERED,
	KRC_EV_META_MEMBERS_ACCEPTED,
	KRC_EV_META_MEMBERS_LOST,
	KRC_EV_META_KEEPALIVES,
	KRC_EV_META_SILENT,
	KRC_EV_VQ_DISCONNECTED,
	KRC_EV_VQ_CLOSED_BUSY,
	KRC_EV_MR_DRAIN_FORCED,
	KRC_EV_PROC_THROTTLED,
	KRC_EV_WR_THROTTLED,
	KRC_EV_WR_PROC_FULL,
	KRC_EV_PROC_BYTES_HIGH,	/* a gauge: the most bytes one process had in flight */
	/* priority classes (data/prio.c) */
	KRC_EV_PRIO_HIGH_VQS,	/* VQs set to KRCORE_PRIO_HIGH */
	KRC_EV_PRIO_NORMAL_VQS,	/* VQs set back to KRCORE_PRIO_NORMAL */
	KRC_EV_PRIO_YIELDS,	/* qpushes held back for a high VQ's turn */
	KRC_EV_WR_FOREIGN_RKEY,
	KRC_EV_CONN_BREAKS,
	KRC_EV_LOOPBACK_CREATED,
	KRC_EV_RECOVERY_RETARGETS,
	KRC_EV_CONN_ASYNC_ERRORS,
	KRC_EV_CONN_FOUND_DEAD,
	KRC_EV_CTRL_RX_SPOOFED,
	KRC_EV_CTRL_RX_BAD_MAC,
	KRC_EV_HS_UNVERIFIED,
	KRC_EV_HS_REFUSED_CAP,
	KRC_EV_PEERS_CAPPED,
	KRC_EV_SRC_LOOKUPS,
	KRC_EV_SRC_NEGATIVE,
	KRC_EV_SRC_LIMITED,
	KRC_EV_META_REFUSED,
	KRC_EV_META_AUTH_FAILED,
	KRC_EV_META_AUTH_TIMEOUTS,
	KRC_EV_META_NO_KEY,
	KRC_EV_DG_VQS_JOINED,
	KRC_EV_DG_SWITCHES,
	KRC_EV_DG_REQ_SENT,
	KRC_EV_DG_RETRANSMITS,
	KRC_EV_DG_TX_FULL,
	KRC_EV_DG_TIMEOUTS,
	KRC_EV_DG_REP_RECV,
	KRC_EV_DG_REP_STRAY,
	KRC_EV_DG_STALE,
	KRC_EV_DG_REQ_RECV,
	KRC_EV_DG_EXECUTED,
	KRC_EV_DG_DUPS,
	KRC_EV_DG_RX_DROPPED,
	KRC_EV_DG_REP_SENT,
	KRC_EV_DG_RKEY_REFUSED,
	KRC_EV_DG_VERIFIED,
	KRC_EV_DG_RX_BAD,
	KRC_EV_DG_RX_SPOOFED,
	KRC_EV_DG_RX_UNVERIFIED,
	KRC_EV_DG_FAULT_DROPPED,
	KRC_EV_DG_RC_STARTED,
	KRC_EV_DG_READDRESSED,
	KRC_EV_DG_NAK_SENT,
	KRC_EV_DG_NAK_RECV,
	KRC_EV_DG_RX_NEW_STREAM_WAIT,
	KRC_EV_DG_RX_OUT_OF_ORDER,
	KRC_EV_DG_RX_SLOT_BUSY,
	KRC_EV_DG_DUP_PENDING,
	KRC_EV_DG_PARTIAL_FAILED,
	KRC_EV_DG_PROC_FAULTS,
	KRC_EV_DG_BACKLOG_FULL,
	KRC_EV_DG_OLD_STREAM,
	KRC_EV_DG_EXEC_BUSY,
	KRC_EV_DG_FAULT_REPLAYED,
	KRC_EV_DG_FAULT_FAILED,
	KRC_EV_RC_CAPPED,
	KRC_EV_RC_EVICTIONS,
	KRC_EV_RC_EVICT_BUSY,
	KRC_EV_RC_CLOSED_BY_PEER,
	KRC_EV_RC_VQS_TO_DGRAM,
	KRC_EV_RC_CLOSE_REQ_SENT,
	KRC_EV_RC_CLOSE_REQ_RECV,
	KRC_EV_RC_CLOSE_REP_SENT,
	KRC_EV_RC_CLOSING_REFUSED,
	KRC_EV_RC_HIGH_WATER,	/* a gauge: the most RC connections at once */
	/*
	 * Where a first contact over RC spends its time (connect.c,
	 * handshake.c): the sums, in ns, over the qconnects that made a
	 * handshake themselves (fc_connects), and over the REQs this node
	 * answered for a node whose card it had to verify (fc_accepts).
	 */
	KRC_EV_FC_CONNECTS,
	KRC_EV_FC_LOOKUP_NS,
	KRC_EV_FC_SPARE_NS,
	KRC_EV_FC_SEND_NS,
	KRC_EV_FC_RTT_NS,
	KRC_EV_FC_QP_NS,
	KRC_EV_FC_TOTAL_NS,
	KRC_EV_FC_ACCEPTS,
	KRC_EV_FC_VERIFY_NS,
	KRC_EV_FC_ACCEPT_QP_NS,
	KRC_EV_FC_ACCEPT_NS,
	/* flow control of two-sided messages (data/flow.c) */
	KRC_EV_FLOW_ASKS_SENT,
	KRC_EV_FLOW_ASKS_RECV,
	KRC_EV_FLOW_GRANTS_SENT,
	KRC_EV_FLOW_GRANTS_RECV,
	KRC_EV_FLOW_NO_CREDIT,
	KRC_EV_FLOW_REFUSED,
	KRC_EV_FLOW_BUSY,
	KRC_EV_FLOW_LOST,
	KRC_EV_FLOW_STALE,
	KRC_EV_MSG_REFUSED,
	/* remote memory: the owner's side (lmr_host.c) */
	KRC_EV_LMR_ALLOCS,	/* regions allocated and registered */
	KRC_EV_LMR_REFUSED,	/* ALLOCs refused (pool full, no memory) */
	KRC_EV_LMR_ALLOC_COPIES, /* copies of an ALLOC answered again */
	KRC_EV_LMR_FREES,	/* regions freed by their holder */
	KRC_EV_LMR_RECLAIMED,	/* regions freed: their holder went away */
	KRC_EV_LMR_FREE_STRAY,	/* FREEs of no region, or of another's */
	KRC_EV_LMR_SETS,	/* memsets done for holders */
	KRC_EV_LMR_COPIES,	/* copies done for holders */
	KRC_EV_LMR_SET_REFUSED,	/* memsets and copies refused (range, rights) */
	/* the holder's side (lmr.c) */
	KRC_EV_LMR_ORPHANS,	/* allocated after their caller gave up: freed */
	KRC_EV_LMR_FREE_LOST,	/* FREEs never confirmed by the owner */
	KRC_EV_LMR_RETRANSMITS,	/* MEM_* calls sent again */
	/* locks: the owner's side (lock_host.c) */
	KRC_EV_LOCK_GRANTS,	/* locks granted */
	KRC_EV_LOCK_WAITS,	/* LOCKs queued behind a holder */
	KRC_EV_LOCK_COPIES,	/* copies of a granted LOCK answered again */
	KRC_EV_LOCK_RELEASES,	/* locks released by their holder */
	KRC_EV_LOCK_CANCELS,	/* waiters that left the queue */
	KRC_EV_LOCK_RECLAIMED,	/* entries dropped: locker or region gone */
	KRC_EV_LOCK_REFUSED,	/* LOCKs refused (key, rights, range, table) */
	/* the locker's side (lock.c) */
	KRC_EV_LOCK_GAVE_UP,	/* LOCK calls not granted in time (or EINTR) */
	KRC_EV_LOCK_ORPHANS,	/* grants nobody waited for: given back */
	KRC_EV_LOCK_UNLOCK_LOST, /* UNLOCKs never confirmed by the owner */
	/* names (data/lmr_name_host.c, name_table.c, lmr_name.c) */
	KRC_EV_NAME_PUBLISHES,	/* names published here */
	KRC_EV_NAME_DROPS,	/* names gone: revoked, or with their region */
	KRC_EV_NAME_REFUSED,	/* PUBLISH/UNPUBLISH refused here */
	KRC_EV_NAME_LOOKUPS,	/* lookups by this node's processes: found */
	KRC_EV_NAME_MISSES,	/* lookups that found no such name */
	KRC_EV_NAME_REREADS,	/* a bucket READ again: a slot being written */
	KRC_EV_DG_RETARGETED,	/* streams aimed at a reloaded peer at a qconnect */
	KRC_EV_NAME_ASKED,	/* lookups sent as MEM_LOOKUP: no RC to READ over */
	KRC_EV_NAME_ANSWERED,	/* MEM_LOOKUPs answered here (found or not) */
	/* the cache of VQ data planes (data/dp_cache.c) */
	KRC_EV_VQ_CACHE_HITS,	/* qconnects that took a cached data plane */
	KRC_EV_VQ_CACHE_MISSES,	/* qconnects that allocated one */
	KRC_EV_VQ_CACHE_KEPT,	/* data planes of freed VQs kept */
	KRC_NR_EV
};

/*
 * Every count, per CPU (no cache line bounces between the CPUs that open,
 * connect and post at once): objects created and destroyed by kind, then
 * the events; sysfs shows their sums. Gauges (krc_event_max) are one
 * atomic each instead.
 */
#define KRC_NR_STATS	(2 * KRC_NR_OBJ + KRC_NR_EV)

struct krc_stat_cpu {
	s64 v[KRC_NR_STATS];
};

extern struct krc_stat_cpu __percpu *krc_stat_cpu;
extern atomic64_t krc_gauges[KRC_NR_EV];

static inline void krc_obj_created(enum krc_obj kind)
{
	this_cpu_inc(krc_stat_cpu->v[2 * kind]);
}

static inline void krc_obj_destroyed(enum krc_obj kind)
{
	this_cpu_inc(krc_stat_cpu->v[2 * kind + 1]);
}

static inline void krc_event(enum krc_event ev)
{
	this_cpu_inc(krc_stat_cpu->v[2 * KRC_NR_OBJ + ev]);
}

static inline void krc_event_add(enum krc_event ev, s64 n)
{
	this_cpu_add(krc_stat_cpu->v[2 * KRC_NR_OBJ + ev], n);
}

/* A gauge's high-water mark: @v if it is above. */
static inline void krc_event_max(enum krc_event ev, s64 v)
{
	s64 cur = atomic64_read(&krc_gauges[ev]);

	while (v > cur && !atomic64_try_cmpxchg(&krc_gauges[ev], &cur, v))
		;
}

/* The sysfs group of every counter; built by krc_stats_init(). */
extern const struct attribute_group *krc_stats_groups[];
int krc_stats_init(void);
void krc_stats_exit(void);

/* Log every kind whose objects were not all destroyed; returns how many. */
int krc_stats_report_leaks(void);

#endif /* KRC_STATS_H */
