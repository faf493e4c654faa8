/* SPDX-License-Identifier: GPL-2.0 */
/*
 * core/params.h - krcore.ko's module parameters (params.c, man/krcore.4)
 * and the fault knobs of the tests (fault_*). Every layer reads them;
 * a writable one is read with READ_ONCE() where a change mid-way matters.
 */
#ifndef KRC_PARAMS_H
#define KRC_PARAMS_H

#include <linux/types.h>

extern char *krc_param_ibdev;
extern int krc_param_gid_index;
extern uint krc_param_node_id;
extern uint krc_param_pool_size;
extern uint krc_param_spare_qps;
extern uint krc_param_qp_depth;
extern uint krc_param_hs_timeout_ms;
extern uint krc_param_hs_retries;
extern uint krc_param_connect_timeout_ms;
extern bool krc_param_meta_host;
extern char *krc_param_meta_server;
extern uint krc_param_meta_port;
extern uint krc_param_meta_slots;
extern uint krc_param_vq_depth;
extern uint krc_param_vq_cache;
extern uint krc_param_srq_depth;
extern uint krc_param_wr_timeout_ms;
extern bool krc_param_prewarm;
extern uint krc_param_ctrl_qkey;
extern uint krc_param_max_vqs;
extern uint krc_param_max_vqs_per_proc;
extern uint krc_param_max_ports_per_proc;
extern uint krc_param_flow_channels;
extern uint krc_param_flow_grace_ms;
extern uint krc_param_vq_qp_share;
extern uint krc_param_vq_max_bytes;
extern uint krc_param_proc_max_wrs;
extern uint krc_param_proc_max_bytes;
extern uint krc_param_prio_high_bytes;
extern uint krc_param_prio_high_vqs;
extern uint krc_param_prio_yield_bytes;
extern uint krc_param_prio_window_ms;
extern uint krc_param_wr_min_mbps;
extern uint krc_param_break_limit;
extern uint krc_param_break_window_ms;
extern uint krc_param_mr_drain_ms;
extern uint krc_param_max_peers;
extern uint krc_param_max_half_open;
extern uint krc_param_max_half_open_per_peer;
extern uint krc_param_meta_max_members;
extern uint krc_param_members_list_max;
extern uint krc_param_lmr_pool_mb;
extern uint krc_param_lmr_max_per_proc;
extern uint krc_param_lmr_timeout_ms;
extern uint krc_param_lmr_sweep_ms;
extern uint krc_param_lock_entries_max;
extern uint krc_param_meta_keepalive_ms;
extern uint krc_param_dg_policy;
/* The values of dg_policy: when a VQ uses the datagram transport. */
enum krc_dg_policy {
	KRC_DG_OFF	= 0,	/* no datagram path: qconnect handshakes */
	KRC_DG_RC_NOW	= 1,	/* datagrams at once, RC built at once */
	KRC_DG_RC_AFTER	= 2,	/* RC after dg_rc_after requests */
	KRC_DG_NEVER	= 3,	/* datagrams only */
};

extern uint krc_param_rc_max;
extern uint krc_param_rc_idle_ms;
extern uint krc_param_dg_rc_after;
extern uint krc_param_dg_rto_ms;
extern uint krc_param_dg_retries;
extern uint krc_param_dg_backlog;
extern int krc_fault_dg_drop_every;
extern int krc_fault_dg_dup_every;
extern int krc_fault_ctrl_drop_rx;
extern int krc_fault_ctrl_drop_type;
extern int krc_fault_goodbye_off;
extern int krc_fault_hs_bad_incarnation;
extern int krc_fault_ctrl_reset;
extern int krc_fault_meta_foreign_card;
extern int krc_fault_meta_bad_mac;
extern int krc_fault_lmr_alloc_delay_ms;
extern int krc_fault_lock_grant_delay_ms;
extern int krc_fault_leak_member;
extern int krc_fault_recover_delay_ms;
extern int krc_fault_close_delay_ms;
extern int krc_fault_dg_fail_after;
extern int krc_fault_dg_replay_old;
extern int krc_fault_dg_exec_delay_ms;
bool krc_fault_take(int *fault);
bool krc_fault_countdown(int *n);
void krc_fault_sleep(int *ms);

#endif /* KRC_PARAMS_H */
