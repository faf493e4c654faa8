// SPDX-License-Identifier: GPL-2.0
/*
 * params.c - krcore.ko's module parameters (man/krcore.4), and the fault
 * knobs of the tests (fault_*, not documented there) with their helpers.
 * Every layer reads them; params.h declares them. Two fault knobs act on
 * objects of upper layers and live with them: fault_conn_error
 * (data/recovery.c) and fault_evict_conn (conn/evict.c).
 */
#include <linux/delay.h>
#include <linux/moduleparam.h>

#include "core/params.h"

char *krc_param_ibdev;
module_param_named(ibdev, krc_param_ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev,
		 "RDMA device whose port gives the node's card (default: first active RoCE port)");

int krc_param_gid_index = -1;
module_param_named(gid_index, krc_param_gid_index, int, 0444);
MODULE_PARM_DESC(gid_index,
		 "GID table index of the node's address (default -1: the RoCE v2 GID of the port's IPv4 address)");

uint krc_param_node_id;
module_param_named(node_id, krc_param_node_id, uint, 0444);
MODULE_PARM_DESC(node_id,
		 "Cluster-unique node id (default 0: the node's IPv4 address as a number)");

uint krc_param_pool_size = 2;
module_param_named(pool_size, krc_param_pool_size, uint, 0444);
MODULE_PARM_DESC(pool_size,
		 "RC connections per remote node, shared by every VQ of this node (default 2)");

uint krc_param_spare_qps = 4;
module_param_named(spare_qps, krc_param_spare_qps, uint, 0444);
MODULE_PARM_DESC(spare_qps,
		 "RC QPs kept ready (INIT) for handshakes, refilled in the background (default 4)");

uint krc_param_qp_depth = 256;
module_param_named(qp_depth, krc_param_qp_depth, uint, 0444);
MODULE_PARM_DESC(qp_depth, "Send and receive queue depth of pooled QPs (default 256)");

uint krc_param_hs_timeout_ms = 100;
module_param_named(hs_timeout_ms, krc_param_hs_timeout_ms, uint, 0644);
MODULE_PARM_DESC(hs_timeout_ms,
		 "First handshake retransmission timeout, doubled at each retry (default 100)");

uint krc_param_hs_retries = 5;
module_param_named(hs_retries, krc_param_hs_retries, uint, 0644);
MODULE_PARM_DESC(hs_retries, "Handshake retransmissions before a peer counts as dead (default 5)");

uint krc_param_connect_timeout_ms = 10000;
module_param_named(connect_timeout_ms, krc_param_connect_timeout_ms, uint, 0644);
MODULE_PARM_DESC(connect_timeout_ms, "Default bound of a qconnect (default 10000)");

uint krc_param_vq_depth = 128;
module_param_named(vq_depth, krc_param_vq_depth, uint, 0444);
MODULE_PARM_DESC(vq_depth, "Outstanding requests allowed per VQ (default 128)");

uint krc_param_vq_cache = 32;
module_param_named(vq_cache, krc_param_vq_cache, uint, 0644);
MODULE_PARM_DESC(vq_cache, "Data planes of closed VQs kept for the next qconnects (default 32, 0: none)");

uint krc_param_srq_depth = 256;
module_param_named(srq_depth, krc_param_srq_depth, uint, 0444);
MODULE_PARM_DESC(srq_depth,
		 "Receive buffers (4 KiB) shared by every pooled QP, for two-sided messages (default 256)");

uint krc_param_wr_timeout_ms = 5000;
module_param_named(wr_timeout_ms, krc_param_wr_timeout_ms, uint, 0644);
MODULE_PARM_DESC(wr_timeout_ms,
		 "A connection with requests outstanding and no progress (no completion) for this long is failed and recovered (default 5000)");

bool krc_param_meta_host;
module_param_named(meta_host, krc_param_meta_host, bool, 0444);
MODULE_PARM_DESC(meta_host, "Host the MetaServer table on this node (default no)");

char *krc_param_meta_server;
module_param_named(meta_server, krc_param_meta_server, charp, 0444);
MODULE_PARM_DESC(meta_server,
		 "IPv4 address of the MetaServer to register with and read cards from");

uint krc_param_meta_port = 471;
module_param_named(meta_port, krc_param_meta_port, uint, 0444);
MODULE_PARM_DESC(meta_port, "rdma_cm port of the MetaServer, privileged so that no unprivileged process can take it (default 471)");

uint krc_param_meta_slots = 131072;
module_param_named(meta_slots, krc_param_meta_slots, uint, 0444);
MODULE_PARM_DESC(meta_slots,
		 "MetaServer table size in slots, a power of two (default 131072: 100,000 nodes)");

bool krc_param_prewarm;
module_param_named(prewarm, krc_param_prewarm, bool, 0444);
MODULE_PARM_DESC(prewarm,
		 "Connect to every node registered with the MetaServer right after registering (default no)");

uint krc_param_max_peers = 65536;
module_param_named(max_peers, krc_param_max_peers, uint, 0644);
MODULE_PARM_DESC(max_peers, "Nodes this node keeps state for at most (a handshake from one more is dropped)");

uint krc_param_max_half_open = 256;
module_param_named(max_half_open, krc_param_max_half_open, uint, 0644);
MODULE_PARM_DESC(max_half_open, "Half-open (accepted, no RTU yet) connections at most, all peers");

uint krc_param_max_half_open_per_peer = 8;
module_param_named(max_half_open_per_peer, krc_param_max_half_open_per_peer, uint, 0644);
MODULE_PARM_DESC(max_half_open_per_peer, "Half-open connections at most per peer");

uint krc_param_meta_max_members = 131072;
module_param_named(meta_max_members, krc_param_meta_max_members, uint, 0644);
MODULE_PARM_DESC(meta_max_members, "MetaServer host: members (rdma_cm connections) at most");

uint krc_param_meta_keepalive_ms = 1000;
module_param_named(meta_keepalive_ms, krc_param_meta_keepalive_ms, uint, 0644);
MODULE_PARM_DESC(meta_keepalive_ms, "MetaServer host: a keepalive to each member this often, whose card goes when one is not delivered; member: reconnect after 8 such periods without a word (0: off; the same on every node)");

uint krc_param_members_list_max = 65536;
module_param_named(members_list_max, krc_param_members_list_max, uint, 0644);
MODULE_PARM_DESC(members_list_max, "Members at most in this node's list of the MetaServer's (KRCORE_IOC_MEMBERS; more: E2BIG)");

uint krc_param_lmr_pool_mb = 256;
module_param_named(lmr_pool_mb, krc_param_lmr_pool_mb, uint, 0644);
MODULE_PARM_DESC(lmr_pool_mb, "Remote memory: MiB at most that other nodes' processes may allocate on this node (KRCORE_IOC_LMR_ALLOC; more: ENOSPC)");

uint krc_param_lmr_max_per_proc = 1024;
module_param_named(lmr_max_per_proc, krc_param_lmr_max_per_proc, uint, 0644);
MODULE_PARM_DESC(lmr_max_per_proc, "Remote memory: regions at most one process holds (more: EMFILE)");

uint krc_param_lmr_timeout_ms = 3000;
module_param_named(lmr_timeout_ms, krc_param_lmr_timeout_ms, uint, 0644);
MODULE_PARM_DESC(lmr_timeout_ms, "Remote memory: how long an allocation or a free waits for the owner's answer by default");

uint krc_param_lmr_sweep_ms = 1000;
module_param_named(lmr_sweep_ms, krc_param_lmr_sweep_ms, uint, 0644);
MODULE_PARM_DESC(lmr_sweep_ms, "Remote memory owner: check this often that the holders of its regions are still members (0: off)");

uint krc_param_lock_entries_max = 16384;
module_param_named(lock_entries_max, krc_param_lock_entries_max, uint, 0644);
MODULE_PARM_DESC(lock_entries_max, "Locks on remote memory owned here: lockers queued at most (a quarter of them of one node; more: ENOSPC)");

int krc_fault_meta_foreign_card;
module_param_named(fault_meta_foreign_card, krc_fault_meta_foreign_card, int, 0644);
MODULE_PARM_DESC(fault_meta_foreign_card, "Fault injection: register with the MetaServer a card of another address");

int krc_fault_lock_grant_delay_ms;
module_param_named(fault_lock_grant_delay_ms, krc_fault_lock_grant_delay_ms, int, 0644);
MODULE_PARM_DESC(fault_lock_grant_delay_ms, "Fault injection: a lock's grant leaves this node this much later (at most 10 s)");

int krc_fault_lmr_alloc_delay_ms;
module_param_named(fault_lmr_alloc_delay_ms, krc_fault_lmr_alloc_delay_ms, int, 0644);
MODULE_PARM_DESC(fault_lmr_alloc_delay_ms, "Fault injection: the answer to a remote memory allocation leaves this node this much later (at most 10 s)");

int krc_fault_meta_bad_mac;
module_param_named(fault_meta_bad_mac, krc_fault_meta_bad_mac, int, 0644);
MODULE_PARM_DESC(fault_meta_bad_mac, "Fault injection: the next N registrations with the MetaServer carry a wrong MAC");

uint krc_param_dg_policy = KRC_DG_RC_NOW;
module_param_named(dg_policy, krc_param_dg_policy, uint, 0644);
MODULE_PARM_DESC(dg_policy,
		 "First contact: 0 RC handshake in qconnect; 1 datagrams at once, RC built at once behind them (default); 2 datagrams, RC after dg_rc_after requests; 3 datagrams only");

uint krc_param_dg_rc_after = 64;
module_param_named(dg_rc_after, krc_param_dg_rc_after, uint, 0644);
MODULE_PARM_DESC(dg_rc_after, "dg_policy 2: requests to a peer over datagrams before it gets RC");

uint krc_param_rc_max;
module_param_named(rc_max, krc_param_rc_max, uint, 0644);
MODULE_PARM_DESC(rc_max, "RC connections to other nodes at most (0: no cap); beyond, the least recently used idle one is closed and its VQs go on over datagrams");

uint krc_param_rc_idle_ms = 1000;
module_param_named(rc_idle_ms, krc_param_rc_idle_ms, uint, 0644);
MODULE_PARM_DESC(rc_idle_ms, "RC cap: a connection unused for this long may be closed for another (default 1000)");

uint krc_param_dg_rto_ms = 50;
module_param_named(dg_rto_ms, krc_param_dg_rto_ms, uint, 0644);
MODULE_PARM_DESC(dg_rto_ms, "Datagram path: the shortest repeat timeout of an unanswered datagram (the measured round trip sets it above; doubles with each repeat, at most 40x this)");

uint krc_param_dg_backlog = 2048;
module_param_named(dg_backlog, krc_param_dg_backlog, uint, 0644);
MODULE_PARM_DESC(dg_backlog,
		 "Datagram path: requests queued for one peer, at most, not yet (all) sent (default 2048; beyond: EAGAIN)");

uint krc_param_dg_retries = 6;
module_param_named(dg_retries, krc_param_dg_retries, uint, 0644);
MODULE_PARM_DESC(dg_retries, "Datagram path: repeats before the peer's requests fail (RETRY_EXC_ERR)");

int krc_fault_dg_drop_every;
module_param_named(fault_dg_drop_every, krc_fault_dg_drop_every, int, 0644);
MODULE_PARM_DESC(fault_dg_drop_every, "Fault injection: drop a received datagram of the transport with probability 1/N (0: none)");

int krc_fault_dg_dup_every;
module_param_named(fault_dg_dup_every, krc_fault_dg_dup_every, int, 0644);
MODULE_PARM_DESC(fault_dg_dup_every, "Fault injection: take a received datagram of the transport twice with probability 1/N (0: none)");

uint krc_param_max_vqs = 65536;
module_param_named(max_vqs, krc_param_max_vqs, uint, 0644);
MODULE_PARM_DESC(max_vqs, "Open VQs of the node at most (EMFILE beyond)");

uint krc_param_max_vqs_per_proc = 8192;
module_param_named(max_vqs_per_proc, krc_param_max_vqs_per_proc, uint, 0644);
MODULE_PARM_DESC(max_vqs_per_proc, "Open VQs of one process at most (EMFILE beyond)");

uint krc_param_max_ports_per_proc = 64;
module_param_named(max_ports_per_proc, krc_param_max_ports_per_proc, uint, 0644);
MODULE_PARM_DESC(max_ports_per_proc, "Ports one process may bind at most (EMFILE beyond)");

uint krc_param_flow_channels = 64;
module_param_named(flow_channels, krc_param_flow_channels, uint, 0444);
MODULE_PARM_DESC(flow_channels,
		 "Sending nodes a bound port lends slots to at once (1-1024; more wait)");

uint krc_param_flow_grace_ms = 30000;
module_param_named(flow_grace_ms, krc_param_flow_grace_ms, uint, 0644);
MODULE_PARM_DESC(flow_grace_ms,
		 "A message counted sent but not arrived this long is taken as lost, its slot lent again (ms)");

uint krc_param_vq_qp_share = 50;
module_param_named(vq_qp_share, krc_param_vq_qp_share, uint, 0644);
MODULE_PARM_DESC(vq_qp_share, "Percent of a shared send queue one VQ may fill (1-100)");

uint krc_param_proc_max_wrs = 128;
module_param_named(proc_max_wrs, krc_param_proc_max_wrs, uint, 0644);
MODULE_PARM_DESC(proc_max_wrs,
		 "Requests one process may have outstanding, all its VQs together, on every path (default 128: a bystander's request never waits behind more of one process's)");

uint krc_param_proc_max_bytes = 4 << 20;
module_param_named(proc_max_bytes, krc_param_proc_max_bytes, uint, 0644);
MODULE_PARM_DESC(proc_max_bytes,
		 "Bytes one process may have in flight, all its VQs together (default 4 MiB, more than a 100 Gb/s link carries in a round trip; a longer single request is allowed alone)");

uint krc_param_prio_high_bytes = 64 << 10;
module_param_named(prio_high_bytes, krc_param_prio_high_bytes, uint, 0644);
MODULE_PARM_DESC(prio_high_bytes,
		 "Bytes a request of a high-priority VQ may move, and all of them in flight (default 64 KiB)");

uint krc_param_prio_high_vqs = 4;
module_param_named(prio_high_vqs, krc_param_prio_high_vqs, uint, 0644);
MODULE_PARM_DESC(prio_high_vqs, "High-priority VQs one process may have at a time (0: none)");

uint krc_param_prio_yield_bytes = 256 << 10;
module_param_named(prio_yield_bytes, krc_param_prio_yield_bytes, uint, 0644);
MODULE_PARM_DESC(prio_yield_bytes,
		 "Bytes the other VQs may have in flight on a shared connection a high-priority VQ uses (default 256 KiB, above a 100 Gb/s link's bytes in a round trip)");

uint krc_param_prio_window_ms = 100;
module_param_named(prio_window_ms, krc_param_prio_window_ms, uint, 0644);
MODULE_PARM_DESC(prio_window_ms,
		 "A connection yields this long after a high-priority VQ's last request on it (ms)");

uint krc_param_vq_max_bytes = 64 << 20;
module_param_named(vq_max_bytes, krc_param_vq_max_bytes, uint, 0644);
MODULE_PARM_DESC(vq_max_bytes, "Bytes one VQ may have in flight (a longer single request is allowed alone)");

uint krc_param_wr_min_mbps = 1;
module_param_named(wr_min_mbps, krc_param_wr_min_mbps, uint, 0644);
MODULE_PARM_DESC(wr_min_mbps, "Slowest transfer rate (MB/s) the watchdog still counts as progress");

uint krc_param_break_limit = 3;
module_param_named(break_limit, krc_param_break_limit, uint, 0644);
MODULE_PARM_DESC(break_limit, "Shared connections a process may break per window before it is throttled (0: never)");

uint krc_param_break_window_ms = 10000;
module_param_named(break_window_ms, krc_param_break_window_ms, uint, 0644);
MODULE_PARM_DESC(break_window_ms, "The throttling window (ms)");

uint krc_param_mr_drain_ms = 30000;
module_param_named(mr_drain_ms, krc_param_mr_drain_ms, uint, 0644);
MODULE_PARM_DESC(mr_drain_ms, "Deregistration waits this long before failing the connections that still use the memory");

/* The high bit: on hardware, unprivileged verbs users cannot send with it. */
uint krc_param_ctrl_qkey = 0xcb524331;
module_param_named(ctrl_qkey, krc_param_ctrl_qkey, uint, 0444);
MODULE_PARM_DESC(ctrl_qkey, "QKey of the control UD QP, high bit set (default 0xcb524331)");

int krc_fault_ctrl_drop_rx;
module_param_named(fault_ctrl_drop_rx, krc_fault_ctrl_drop_rx, int, 0644);
MODULE_PARM_DESC(fault_ctrl_drop_rx,
		 "Testing: drop the next N received control messages (default 0)");

int krc_fault_ctrl_drop_type;
module_param_named(fault_ctrl_drop_type, krc_fault_ctrl_drop_type, int, 0644);
MODULE_PARM_DESC(fault_ctrl_drop_type,
		 "Testing: drop only control messages of this type (1 REQ, 2 REP, 4 RTU, ...; 0 all)");

int krc_fault_goodbye_off;
module_param_named(fault_goodbye_off, krc_fault_goodbye_off, int, 0644);
MODULE_PARM_DESC(fault_goodbye_off, "Testing: do not say goodbye to peers at unload (default 0)");

int krc_fault_hs_bad_incarnation;
module_param_named(fault_hs_bad_incarnation, krc_fault_hs_bad_incarnation, int, 0644);
MODULE_PARM_DESC(fault_hs_bad_incarnation,
		 "Testing: the next N handshake requests name a wrong peer incarnation (default 0)");

int krc_fault_ctrl_reset;
module_param_named(fault_ctrl_reset, krc_fault_ctrl_reset, int, 0644);
MODULE_PARM_DESC(fault_ctrl_reset,
		 "Testing: treat the next received control message as a QP failure (default 0)");

int krc_fault_leak_member;
module_param_named(fault_leak_member, krc_fault_leak_member, int, 0644);
MODULE_PARM_DESC(fault_leak_member,
		 "Testing (MetaServer host): the next N freed members keep their memory, a leak the unload must report (default 0)");

/* Testing: consume one of the faults a parameter holds; true if one was. */
int krc_fault_recover_delay_ms;
module_param_named(fault_recover_delay_ms, krc_fault_recover_delay_ms, int, 0644);
MODULE_PARM_DESC(fault_recover_delay_ms,
		 "Fault injection: recovery waits this long between choosing its target connection and re-posting on it (0: not at all)");

int krc_fault_close_delay_ms;
module_param_named(fault_close_delay_ms, krc_fault_close_delay_ms, int, 0644);
MODULE_PARM_DESC(fault_close_delay_ms,
		 "Fault injection: closing a connection for the RC cap waits this long between its empty-queue check and the close handshake (0: not at all)");

int krc_fault_dg_fail_after;
module_param_named(fault_dg_fail_after, krc_fault_dg_fail_after, int, 0644);
MODULE_PARM_DESC(fault_dg_fail_after,
		 "Fault injection: the N-th datagram reply received from now on fails its whole stream, as a reply from a reloaded peer does (0: none)");

int krc_fault_dg_replay_old;
module_param_named(fault_dg_replay_old, krc_fault_dg_replay_old, int, 0644);
MODULE_PARM_DESC(fault_dg_replay_old,
		 "Fault injection (responder): the next N times a node starts a new datagram stream, its previous stream's first datagram arrives again right after (0: never)");

int krc_fault_dg_exec_delay_ms;
module_param_named(fault_dg_exec_delay_ms, krc_fault_dg_exec_delay_ms, int, 0644);
MODULE_PARM_DESC(fault_dg_exec_delay_ms,
		 "Fault injection (responder): datagram requests reach the executor QP this long after they were taken, all at once, as with a slow RNIC (0: at once)");

/* Testing: true once, when the countdown *@n goes from 1 to 0. */
bool krc_fault_countdown(int *n)
{
	int v = READ_ONCE(*n);

	while (v > 0) {
		int old = cmpxchg(n, v, v - 1);

		if (old == v)
			return v == 1;
		v = old;
	}
	return false;
}

/* Testing: sleep *@ms milliseconds (if positive), killably. */
void krc_fault_sleep(int *ms)
{
	int n = READ_ONCE(*ms);

	if (n > 0)
		msleep_interruptible(n);
}

bool krc_fault_take(int *fault)
{
	int n = READ_ONCE(*fault);

	while (n > 0) {
		int old = cmpxchg(fault, n, n - 1);

		if (old == n)
			return true;
		n = old;
	}
	return false;
}

