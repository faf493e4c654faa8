// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - counters exported through sysfs, one value per file.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "core/core.h"

struct krc_stat_cpu __percpu *krc_stat_cpu;
atomic64_t krc_gauges[KRC_NR_EV];

static const char * const krc_obj_names[KRC_NR_OBJ] = {
	[KRC_OBJ_VQ] = "vq",
	[KRC_OBJ_DEVICE] = "device",
	[KRC_OBJ_PD] = "pd",
	[KRC_OBJ_CONN] = "conn",
	[KRC_OBJ_QP] = "qp",
	[KRC_OBJ_CQ] = "cq",
	[KRC_OBJ_MR] = "mr",
	[KRC_OBJ_AH] = "ah",
	[KRC_OBJ_PEER] = "peer",
	[KRC_OBJ_META_MEMBER] = "meta_member",
	[KRC_OBJ_META_CONN] = "meta_conn",
	[KRC_OBJ_PROC] = "proc",
	[KRC_OBJ_USER_MR] = "user_mr",
	[KRC_OBJ_SRQ] = "srq",
	[KRC_OBJ_RC_PLACE] = "rc_place",
	[KRC_OBJ_FLOW] = "flow",
	[KRC_OBJ_LMR] = "lmr",
	[KRC_OBJ_LMR_HANDLE] = "lmr_handle",
	[KRC_OBJ_LOCK_ENTRY] = "lock_entry",
	[KRC_OBJ_LOCK_HELD] = "lock_held",
	[KRC_OBJ_LMR_NAME] = "lmr_name",
};

static const char * const krc_event_names[KRC_NR_EV] = {
	[KRC_EV_IOCTL_ERRORS] = "ioctl_errors",
	[KRC_EV_PORT_REFRESH] = "port_refresh",
	[KRC_EV_QCONNECT_POOLED] = "qconnect_pooled",
	[KRC_EV_QCONNECT_LOOKUP] = "qconnect_lookup",
	[KRC_EV_QCONNECT_HANDSHAKE] = "qconnect_handshake",
	[KRC_EV_QCONNECT_LOCAL] = "qconnect_local",
	[KRC_EV_QCONNECT_FAILED] = "qconnect_failed",
	[KRC_EV_QCONNECT_DATAGRAM] = "qconnect_datagram",
	[KRC_EV_PROBES] = "probes",
	[KRC_EV_WR_POSTED] = "wr_posted",
	[KRC_EV_WR_REJECTED] = "wr_rejected",
	[KRC_EV_WR_FULL] = "wr_full",
	[KRC_EV_WR_ERRORS] = "wr_errors",
	[KRC_EV_WR_TIMEOUTS] = "wr_timeouts",
	[KRC_EV_WR_REPOSTED] = "wr_reposted",
	[KRC_EV_WR_NOT_EXECUTED] = "wr_not_executed",
	[KRC_EV_WR_HELD] = "wr_held",
	[KRC_EV_RECOVERIES] = "recoveries",
	[KRC_EV_MSG_RECEIVED] = "msg_received",
	[KRC_EV_MSG_DROPPED] = "msg_dropped",
	[KRC_EV_MSG_NO_PORT] = "msg_no_port",
	[KRC_EV_SPARES_CREATED] = "spares_created",
	[KRC_EV_SPARES_TAKEN] = "spares_taken",
	[KRC_EV_SPARES_WAITED] = "spares_waited",
	[KRC_EV_CONN_ERRORS] = "conn_errors",
	[KRC_EV_CONNS_DROPPED] = "conns_dropped",
	[KRC_EV_STRAY_COMPLETIONS] = "stray_completions",
	[KRC_EV_POOL_GROWN] = "pool_grown",
	[KRC_EV_PEER_REINCARNATED] = "peer_reincarnated",
	[KRC_EV_PEER_VERIFIED] = "peer_verified",
	[KRC_EV_CTRL_TX] = "ctrl_tx",
	[KRC_EV_CTRL_TX_FULL] = "ctrl_tx_full",
	[KRC_EV_CTRL_RX] = "ctrl_rx",
	[KRC_EV_CTRL_RX_BAD] = "ctrl_rx_bad",
	[KRC_EV_CTRL_RX_DROPPED] = "ctrl_rx_dropped",
	[KRC_EV_CTRL_RECOVERIES] = "ctrl_recoveries",
	[KRC_EV_HS_REQ_SENT] = "hs_req_sent",
	[KRC_EV_HS_RETRANSMITS] = "hs_retransmits",
	[KRC_EV_HS_REQ_RECV] = "hs_req_recv",
	[KRC_EV_HS_DUP_REQ] = "hs_dup_req",
	[KRC_EV_HS_REP_SENT] = "hs_rep_sent",
	[KRC_EV_HS_REP_RECV] = "hs_rep_recv",
	[KRC_EV_HS_NAK_SENT] = "hs_nak_sent",
	[KRC_EV_HS_NAK_RECV] = "hs_nak_recv",
	[KRC_EV_HS_STALE] = "hs_stale",
	[KRC_EV_HS_TIMEOUTS] = "hs_timeouts",
	[KRC_EV_HS_CONNECTED] = "hs_connected",
	[KRC_EV_HS_STRAY] = "hs_stray",
	[KRC_EV_HS_CROSSED] = "hs_crossed",
	[KRC_EV_HS_RTU_SENT] = "hs_rtu_sent",
	[KRC_EV_HS_RTU_RECV] = "hs_rtu_recv",
	[KRC_EV_HS_RTU_ACK_SENT] = "hs_rtu_ack_sent",
	[KRC_EV_HS_RTU_GIVEUP] = "hs_rtu_giveup",
	[KRC_EV_HS_HALF_OPEN_EXPIRED] = "hs_half_open_expired",
	[KRC_EV_GOODBYE_SENT] = "goodbye_sent",
	[KRC_EV_GOODBYE_RECV] = "goodbye_recv",
	[KRC_EV_META_CONNECTS] = "meta_connects",
	[KRC_EV_META_RECONNECTS] = "meta_reconnects",
	[KRC_EV_META_DISCONNECTS] = "meta_disconnects",
	[KRC_EV_META_UNREACHABLE] = "meta_unreachable",
	[KRC_EV_META_READS] = "meta_reads",
	[KRC_EV_META_HITS] = "meta_hits",
	[KRC_EV_META_MISSES] = "meta_misses",
	[KRC_EV_META_TORN] = "meta_torn",
	[KRC_EV_META_REGISTERED] = "meta_registered",
	[KRC_EV_META_DEREGISTERED] = "meta_deregistered",
	[KRC_EV_META_MEMBERS_ACCEPTED] = "meta_members_accepted",
	[KRC_EV_META_MEMBERS_LOST] = "meta_members_lost",
	[KRC_EV_META_KEEPALIVES] = "meta_keepalives",
	[KRC_EV_META_SILENT] = "meta_silent",
	[KRC_EV_VQ_DISCONNECTED] = "vq_disconnected",
	[KRC_EV_VQ_CLOSED_BUSY] = "vq_closed_busy",
	[KRC_EV_MR_DRAIN_FORCED] = "mr_drain_forced",
	[KRC_EV_PROC_THROTTLED] = "proc_throttled",
	[KRC_EV_WR_THROTTLED] = "wr_throttled",
	[KRC_EV_WR_PROC_FULL] = "wr_proc_full",
	[KRC_EV_PROC_BYTES_HIGH] = "proc_bytes_high",
	[KRC_EV_PRIO_HIGH_VQS] = "prio_high_vqs",
	[KRC_EV_PRIO_NORMAL_VQS] = "prio_normal_vqs",
	[KRC_EV_PRIO_YIELDS] = "prio_yields",
	[KRC_EV_WR_FOREIGN_RKEY] = "wr_foreign_rkey",
	[KRC_EV_CONN_BREAKS] = "conn_breaks",
	[KRC_EV_LOOPBACK_CREATED] = "loopback_created",
	[KRC_EV_RECOVERY_RETARGETS] = "recovery_retargets",
	[KRC_EV_CONN_ASYNC_ERRORS] = "conn_async_errors",
	[KRC_EV_CONN_FOUND_DEAD] = "conn_found_dead",
	[KRC_EV_CTRL_RX_SPOOFED] = "ctrl_rx_spoofed",
	[KRC_EV_CTRL_RX_BAD_MAC] = "ctrl_rx_bad_mac",
	[KRC_EV_HS_UNVERIFIED] = "hs_unverified",
	[KRC_EV_HS_REFUSED_CAP] = "hs_refused_cap",
	[KRC_EV_PEERS_CAPPED] = "peers_capped",
	[KRC_EV_SRC_LOOKUPS] = "src_lookups",
	[KRC_EV_SRC_NEGATIVE] = "src_negative",
	[KRC_EV_SRC_LIMITED] = "src_limited",
	[KRC_EV_META_REFUSED] = "meta_refused",
	[KRC_EV_META_AUTH_FAILED] = "meta_auth_failed",
	[KRC_EV_META_AUTH_TIMEOUTS] = "meta_auth_timeouts",
	[KRC_EV_META_NO_KEY] = "meta_no_key",
	[KRC_EV_DG_VQS_JOINED] = "dg_vqs_joined",
	[KRC_EV_DG_SWITCHES] = "dg_switches",
	[KRC_EV_DG_REQ_SENT] = "dg_req_sent",
	[KRC_EV_DG_RETRANSMITS] = "dg_retransmits",
	[KRC_EV_DG_TX_FULL] = "dg_tx_full",
	[KRC_EV_DG_TIMEOUTS] = "dg_timeouts",
	[KRC_EV_DG_REP_RECV] = "dg_rep_recv",
	[KRC_EV_DG_REP_STRAY] = "dg_rep_stray",
	[KRC_EV_DG_STALE] = "dg_stale",
	[KRC_EV_DG_REQ_RECV] = "dg_req_recv",
	[KRC_EV_DG_EXECUTED] = "dg_executed",
	[KRC_EV_DG_DUPS] = "dg_dups",
	[KRC_EV_DG_RX_DROPPED] = "dg_rx_dropped",
	[KRC_EV_DG_REP_SENT] = "dg_rep_sent",
	[KRC_EV_DG_RKEY_REFUSED] = "dg_rkey_refused",
	[KRC_EV_DG_VERIFIED] = "dg_verified",
	[KRC_EV_DG_RX_BAD] = "dg_rx_bad",
	[KRC_EV_DG_RX_SPOOFED] = "dg_rx_spoofed",
	[KRC_EV_DG_RX_UNVERIFIED] = "dg_rx_unverified",
	[KRC_EV_DG_FAULT_DROPPED] = "dg_fault_dropped",
	[KRC_EV_DG_RC_STARTED] = "dg_rc_started",
	[KRC_EV_DG_READDRESSED] = "dg_readdressed",
	[KRC_EV_DG_NAK_SENT] = "dg_nak_sent",
	[KRC_EV_DG_NAK_RECV] = "dg_nak_recv",
	[KRC_EV_DG_RX_NEW_STREAM_WAIT] = "dg_rx_new_stream_wait",
	[KRC_EV_DG_RX_OUT_OF_ORDER] = "dg_rx_out_of_order",
	[KRC_EV_DG_RX_SLOT_BUSY] = "dg_rx_slot_busy",
	[KRC_EV_DG_DUP_PENDING] = "dg_dup_pending",
	[KRC_EV_DG_PARTIAL_FAILED] = "dg_partial_failed",
	[KRC_EV_DG_PROC_FAULTS] = "dg_proc_faults",
	[KRC_EV_DG_BACKLOG_FULL] = "dg_backlog_full",
	[KRC_EV_DG_OLD_STREAM] = "dg_old_stream",
	[KRC_EV_DG_EXEC_BUSY] = "dg_exec_busy",
	[KRC_EV_DG_FAULT_REPLAYED] = "dg_fault_replayed",
	[KRC_EV_DG_FAULT_FAILED] = "dg_fault_failed",
	[KRC_EV_RC_CAPPED] = "rc_capped",
	[KRC_EV_RC_EVICTIONS] = "rc_evictions",
	[KRC_EV_RC_EVICT_BUSY] = "rc_evict_busy",
	[KRC_EV_RC_CLOSED_BY_PEER] = "rc_closed_by_peer",
	[KRC_EV_RC_VQS_TO_DGRAM] = "rc_vqs_to_dgram",
	[KRC_EV_RC_CLOSE_REQ_SENT] = "rc_close_req_sent",
	[KRC_EV_RC_CLOSE_REQ_RECV] = "rc_close_req_recv",
	[KRC_EV_RC_CLOSE_REP_SENT] = "rc_close_rep_sent",
	[KRC_EV_RC_CLOSING_REFUSED] = "rc_closing_refused",
	[KRC_EV_RC_HIGH_WATER] = "rc_high_water",
	[KRC_EV_FC_CONNECTS] = "fc_connects",
	[KRC_EV_FC_LOOKUP_NS] = "fc_lookup_ns",
	[KRC_EV_FC_SPARE_NS] = "fc_spare_ns",
	[KRC_EV_FC_SEND_NS] = "fc_send_ns",
	[KRC_EV_FC_RTT_NS] = "fc_rtt_ns",
	[KRC_EV_FC_QP_NS] = "fc_qp_ns",
	[KRC_EV_FC_TOTAL_NS] = "fc_total_ns",
	[KRC_EV_FC_ACCEPTS] = "fc_accepts",
	[KRC_EV_FC_VERIFY_NS] = "fc_verify_ns",
	[KRC_EV_FC_ACCEPT_QP_NS] = "fc_accept_qp_ns",
	[KRC_EV_FC_ACCEPT_NS] = "fc_accept_ns",
	[KRC_EV_FLOW_ASKS_SENT] = "flow_asks_sent",
	[KRC_EV_FLOW_ASKS_RECV] = "flow_asks_recv",
	[KRC_EV_FLOW_GRANTS_SENT] = "flow_grants_sent",
	[KRC_EV_FLOW_GRANTS_RECV] = "flow_grants_recv",
	[KRC_EV_FLOW_NO_CREDIT] = "flow_no_credit",
	[KRC_EV_FLOW_REFUSED] = "flow_refused",
	[KRC_EV_FLOW_BUSY] = "flow_busy",
	[KRC_EV_FLOW_LOST] = "flow_lost",
	[KRC_EV_FLOW_STALE] = "flow_stale",
	[KRC_EV_MSG_REFUSED] = "msg_refused",
	[KRC_EV_LMR_ALLOCS] = "lmr_allocs",
	[KRC_EV_LMR_REFUSED] = "lmr_refused",
	[KRC_EV_LMR_ALLOC_COPIES] = "lmr_alloc_copies",
	[KRC_EV_LMR_FREES] = "lmr_frees",
	[KRC_EV_LMR_RECLAIMED] = "lmr_reclaimed",
	[KRC_EV_LMR_FREE_STRAY] = "lmr_free_stray",
	[KRC_EV_LMR_SETS] = "lmr_sets",
	[KRC_EV_LMR_COPIES] = "lmr_copies",
	[KRC_EV_LMR_SET_REFUSED] = "lmr_set_refused",
	[KRC_EV_LMR_ORPHANS] = "lmr_orphans",
	[KRC_EV_LMR_FREE_LOST] = "lmr_free_lost",
	[KRC_EV_LMR_RETRANSMITS] = "lmr_retransmits",
	[KRC_EV_LOCK_GRANTS] = "lock_grants",
	[KRC_EV_LOCK_WAITS] = "lock_waits",
	[KRC_EV_LOCK_COPIES] = "lock_copies",
	[KRC_EV_LOCK_RELEASES] = "lock_releases",
	[KRC_EV_LOCK_CANCELS] = "lock_cancels",
	[KRC_EV_LOCK_RECLAIMED] = "lock_reclaimed",
	[KRC_EV_LOCK_REFUSED] = "lock_refused",
	[KRC_EV_LOCK_GAVE_UP] = "lock_gave_up",
	[KRC_EV_LOCK_ORPHANS] = "lock_orphans",
	[KRC_EV_LOCK_UNLOCK_LOST] = "lock_unlock_lost",
	[KRC_EV_NAME_PUBLISHES] = "name_publishes",
	[KRC_EV_NAME_DROPS] = "name_drops",
	[KRC_EV_NAME_REFUSED] = "name_refused",
	[KRC_EV_NAME_LOOKUPS] = "name_lookups",
	[KRC_EV_NAME_MISSES] = "name_misses",
	[KRC_EV_NAME_REREADS] = "name_rereads",
	[KRC_EV_DG_RETARGETED] = "dg_retargeted",
	[KRC_EV_NAME_ASKED] = "name_asked",
	[KRC_EV_NAME_ANSWERED] = "name_answered",
	[KRC_EV_VQ_CACHE_HITS] = "vq_cache_hits",
	[KRC_EV_VQ_CACHE_MISSES] = "vq_cache_misses",
	[KRC_EV_VQ_CACHE_KEPT] = "vq_cache_kept",
};

struct krc_stat_attr {
	struct device_attribute attr;
	int index;		/* in struct krc_stat_cpu */
	char name[32];
};

static struct krc_stat_attr *krc_stat_attrs;
static struct attribute *krc_attr_ptrs[KRC_NR_STATS + 1];

static struct attribute_group krc_stats_group = {
	.name = "counters",
	.attrs = krc_attr_ptrs,
};

const struct attribute_group *krc_stats_groups[] = {
	&krc_stats_group,
	NULL
};

/* Count @i of every CPU, and its gauge if it is an event's. */
static s64 krc_stat_sum(int i)
{
	s64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu_ptr(krc_stat_cpu, cpu)->v[i];
	if (i >= 2 * KRC_NR_OBJ)
		sum += atomic64_read(&krc_gauges[i - 2 * KRC_NR_OBJ]);
	return sum;
}

static ssize_t krc_stat_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct krc_stat_attr *sa = container_of(attr, struct krc_stat_attr, attr);

	return sysfs_emit(buf, "%lld\n", krc_stat_sum(sa->index));
}

static void krc_stat_attr_init(int i, const char *name, const char *suffix)
{
	struct krc_stat_attr *sa = &krc_stat_attrs[i];

	snprintf(sa->name, sizeof(sa->name), "%s%s", name, suffix);
	sysfs_attr_init(&sa->attr.attr);
	sa->attr.attr.name = sa->name;
	sa->attr.attr.mode = 0444;
	sa->attr.show = krc_stat_show;
	sa->index = i;
	krc_attr_ptrs[i] = &sa->attr.attr;
}

int krc_stats_init(void)
{
	int i, n = 0;

	krc_stat_cpu = alloc_percpu(struct krc_stat_cpu);
	krc_stat_attrs = kcalloc(KRC_NR_STATS, sizeof(*krc_stat_attrs),
				 GFP_KERNEL);
	if (!krc_stat_attrs || !krc_stat_cpu) {
		krc_stats_exit();
		return -ENOMEM;
	}
	for (i = 0; i < KRC_NR_OBJ; i++) {
		krc_stat_attr_init(n++, krc_obj_names[i], "_created");
		krc_stat_attr_init(n++, krc_obj_names[i], "_destroyed");
	}
	for (i = 0; i < KRC_NR_EV; i++)
		krc_stat_attr_init(n++, krc_event_names[i], "");
	return 0;
}

/* After everything else went (and the leak report: it reads them). */
void krc_stats_exit(void)
{
	kfree(krc_stat_attrs);
	krc_stat_attrs = NULL;
	free_percpu(krc_stat_cpu);
	krc_stat_cpu = NULL;
}

int krc_stats_report_leaks(void)
{
	int i, leaks = 0;
	s64 c, d;

	for (i = 0; i < KRC_NR_OBJ; i++) {
		c = krc_stat_sum(2 * i);
		d = krc_stat_sum(2 * i + 1);
		if (c == d)
			continue;
		pr_err("krcore: leak: %lld of %lld %s objects not destroyed\n",
		       c - d, c, krc_obj_names[i]);
		leaks++;
	}
	return leaks;
}
