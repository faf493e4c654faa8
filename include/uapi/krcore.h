/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * krcore.h - the user/kernel ABI of krcore, the microsecond-scale RDMA
 * control plane. This header is the contract between krcore.ko and any user
 * of /dev/krcore (libkrcore first of all); nothing else defines the ABI.
 *
 * Every open of /dev/krcore is one virtual queue (VQ). All requests are
 * ioctl()s on that file descriptor with the commands below; each returns 0
 * or -1 with errno set. A command the module does not know (another magic,
 * number, direction or structure size than below) fails with ENOTTY.
 *
 * Versioning: KRCORE_ABI_VERSION grows by one whenever commands or
 * structures are added. Existing commands and structures never change
 * their layout (the size of each structure is also part of its command
 * number); a structure may only grow at its end, and the module then
 * still serves the command number of every older size (ABI 2's
 * KRCORE_IOC_QCONNECT, ABI 3's KRCORE_IOC_QWAIT). A module answers every
 * request of an ABI version up to its own, so a user built against
 * version N runs on any module with version >= N (tests/cluster/t_abi.sh
 * runs users of the ABI 2 and 3 headers).
 */
#ifndef _UAPI_KRCORE_H
#define _UAPI_KRCORE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KRCORE_ABI_VERSION	14
#define KRCORE_DEVICE_PATH	"/dev/krcore"
#define KRCORE_IOC_MAGIC	0xC7

/*
 * KRCORE_IOC_VERSION: which ABI and module this is.
 */
struct krcore_version {
	__u32 abi_version;		/* out: KRCORE_ABI_VERSION of the module */
	__u32 reserved;			/* out: 0 */
	char module_version[32];	/* out: NUL-terminated */
};

/*
 * The node address card: everything another node needs to reach this one.
 * Fixed size (64 bytes), little-endian on the wire and in the MetaServer's
 * table; card_version tells its layout apart from future ones.
 */
#define KRCORE_CARD_VERSION	1
#define KRCORE_CARD_SIZE	64

enum krcore_card_flags {
	KRCORE_CARD_F_ROCE_V2	= 1 << 0,	/* gid is a RoCE v2 (UDP) GID */
	KRCORE_CARD_F_IPV4	= 1 << 1,	/* gid is IPv4-mapped */
};

struct krcore_card {
	__u8  gid[16];		/* GID of the node's RoCE port (network order) */
	__u8  mac[6];		/* MAC address of the RoCE netdev */
	__u8  card_version;	/* KRCORE_CARD_VERSION */
	__u8  flags;		/* enum krcore_card_flags */
	__u32 node_id;		/* cluster-unique node id */
	__u32 ud_qpn;		/* QPN of the control UD QP (0: none yet) */
	__u32 ud_qkey;		/* QKey of the control UD QP */
	__u8  port_num;		/* RDMA port number on the node */
	__u8  active_mtu;	/* enum ib_mtu of the port (1 = 256 ... 5 = 4096) */
	__u16 reserved0;
	__u64 incarnation;	/* new random non-zero value at every module load */
	__u32 dct_num;		/* future transports: DC target number (0: none) */
	__u32 reserved1;
	__u64 dc_key;		/* future transports: DC access key */
};

/*
 * KRCORE_IOC_QUERY_PORT: krcore's view of one RDMA port it attached to.
 * Set index (0, 1, ...) and call until it fails with ENOENT.
 */
enum krcore_port_flags {
	KRCORE_PORT_F_PRIMARY	= 1 << 0,	/* the port whose card is the node's */
	KRCORE_PORT_F_ACTIVE	= 1 << 1,	/* IB_PORT_ACTIVE */
	KRCORE_PORT_F_HAS_GID	= 1 << 2,	/* a usable RoCE v2 GID was found */
};

struct krcore_port_info {
	__u32 index;		/* in: 0, 1, ... */
	__u32 flags;		/* out: enum krcore_port_flags */
	char  ibdev[64];	/* out: RDMA device name, NUL-terminated */
	char  netdev[16];	/* out: its netdev name, NUL-terminated */
	__u8  port_num;		/* out */
	__u8  state;		/* out: enum ib_port_state */
	__u8  active_mtu;	/* out: enum ib_mtu */
	__u8  reserved0;
	__s32 gid_index;	/* out: GID table index used, -1: none */
	__u8  gid[16];		/* out */
	__u8  mac[6];		/* out */
	__u16 reserved1;
	__u32 max_qp;		/* out: device limits */
	__u32 max_qp_wr;
	__u32 max_cqe;
	__u32 max_sge;
};

/*
 * KRCORE_IOC_QCONNECT: connect this VQ to a node, given its GID (an IPv4
 * address maps to ::ffff:a.b.c.d). The VQ shares one of the RC connections
 * the node pools for that peer. What it cost is in @path:
 *   POOLED             a pooled connection existed: no network round trip;
 *   CACHED / LOOKUP    the peer's card came from the local cache / from one
 *                      (rarely more) RDMA READ of the MetaServer's table;
 *   HANDSHAKE          a new connection took one handshake round trip;
 *   REFRESHED          the cached card was stale and was READ again;
 *   LOCAL              the node is this node (a loopback connection);
 *   DATAGRAM           (ABI 6) no pooled RC connection was ready: the VQ
 *                      is served at once over datagrams (the nodes'
 *                      control UD QPs, reliable and in order, the peer's
 *                      kernel executes every request) while RC is built
 *                      behind it (module parameter dg_policy); conn_id
 *                      and qpn are 0. The VQ moves to RC by itself at its
 *                      first qpush once a pooled connection is ready and
 *                      its outstanding requests have completed: nothing
 *                      is lost, repeated or reordered. Every opcode works
 *                      on both paths with the same statuses; PROBE needs
 *                      RC (ENOTCONN before the move). See
 *                      docs/control-plane.md.
 * Errors: EISCONN (VQ already connected), ENXIO (node unknown to the
 * MetaServer), EHOSTUNREACH (no card cached and MetaServer unreachable),
 * ETIMEDOUT (peer did not answer the handshake), ESTALE (peer keeps
 * rejecting its card), EBUSY (the peer refused: too many half-open
 * connections), ENOSPC (too many peers known; or, with dg_policy 0, the
 * RC cap rc_max of this node or of the peer is reached and no idle
 * connection could be closed for this one), ECONNRESET (the connections
 * picked kept failing before the VQ could join one), EINTR (a signal),
 * ENODEV (no usable RDMA port, or the device of this VQ went away),
 * EINVAL (bad GID, unknown flags, port above 65535), EPERM (a kernel
 * thread), EFAULT, ENOMEM, EIO (any other failure of the peer, of the
 * MetaServer's READs or of the device while connecting); no other errno.
 * After a failure the VQ is still unconnected and may try again.
 * @timeout_ms is capped at 60000.
 *
 * The completion ring (ABI 14): with @ring_addr 0 the kernel allocates it
 * and the caller maps @ring_size bytes of it (KRCORE_MMAP_RING). With
 * @ring_addr set on the VQ's first qconnect, the ring is the caller's own
 * memory there instead: @ring_len bytes, page-aligned, writable, at least
 * the ring's size, pinned until the VQ is freed and counted in the
 * process's RLIMIT_MEMLOCK (unless CAP_IPC_LOCK); no mmap, no munmap.
 * The kernel sets the ring's header (struct krcore_ring, producer and
 * consumer 0) and writes entries only while the VQ's file is open; it
 * sets the header's released once the file is released. On return,
 * @ring_addr says which ring the VQ has (also after a failure: a ring
 * taken stays the VQ's, and a later qconnect must name it again).
 * Errors of that form: EMSGSIZE (@ring_len below the ring's size, which
 * @ring_size then holds), EFAULT (not writable memory of the caller),
 * ENOMEM (over RLIMIT_MEMLOCK), EINVAL (not page-aligned, @reserved set,
 * a VQ whose ring was already chosen with another @ring_addr, or the
 * caller is not the process that opened the VQ, or not the one whose
 * memory the ring is); mmap of KRCORE_MMAP_RING then fails with EINVAL.
 */
enum krcore_path {
	KRCORE_PATH_POOLED	= 1 << 0,
	KRCORE_PATH_CACHED	= 1 << 1,
	KRCORE_PATH_LOOKUP	= 1 << 2,
	KRCORE_PATH_HANDSHAKE	= 1 << 3,
	KRCORE_PATH_REFRESHED	= 1 << 4,
	KRCORE_PATH_LOCAL	= 1 << 5,
	KRCORE_PATH_DATAGRAM	= 1 << 6,	/* ABI 6 */
};

/* qconnect flags (ABI 6). */
enum krcore_qconnect_flags {
	/*
	 * Never the datagram path: wait for a pooled RC connection (a
	 * handshake if there is none), as ABI 5 modules always did.
	 */
	KRCORE_QCONNECT_F_RC	= 1 << 0,
};

struct krcore_qconnect {
	__u8  gid[16];		/* in: the node to connect to */
	__u32 port;		/* in: two-sided port on that node (0: none) */
	__u32 flags;		/* in: enum krcore_qconnect_flags */
	__u32 timeout_ms;	/* in: 0: the module's default */
	__u32 path;		/* out: enum krcore_path */
	__u32 conn_id;		/* out: the pooled connection used */
	__u32 qpn;		/* out: its local QP number */
	__u32 reads;		/* out: RDMA READs of the MetaServer table */
	__u32 attempts;		/* out: handshake requests sent (0: none) */
	__u64 elapsed_ns;	/* out: time spent in the kernel */
	struct krcore_card card;	/* out: the peer's card */
	__u32 ring_size;	/* out: bytes to mmap for the completion ring */
	__u32 depth;		/* out: outstanding requests allowed */
	/* ABI 14: the completion ring in the caller's own memory */
	/* in: page-aligned (0: the kernel's); out: the VQ's, 0: the kernel's */
	__u64 ring_addr;
	__u32 ring_len;		/* in: bytes at ring_addr */
	__u32 reserved;		/* in: 0 */
};

/*
 * KRCORE_IOC_PROBE: RDMA READ the node page of the node this VQ is
 * connected to (it holds the node's card) over the VQ's pooled connection:
 * proves the connection carries traffic. The page's card is returned.
 * ENOTCONN when the VQ is not connected; EAGAIN while its connection is
 * failing and recovery has not moved the VQ yet; ETIMEDOUT when the READ
 * did not complete within 7/8 of wr_timeout_ms (at least 1 s: just before
 * the watchdog would fail the connection); EIO when it failed.
 */
struct krcore_probe {
	__u64 elapsed_ns;	/* out: the READ's round trip */
	struct krcore_card card;	/* out: the card READ from the peer */
};

/*
 * KRCORE_IOC_LOOKUP: look a node's card up: cache, else the MetaServer
 * (one-sided READs). Does not connect. flags KRCORE_LOOKUP_F_NOCACHE
 * skips (and refreshes) the cache.
 */
enum krcore_lookup_flags {
	KRCORE_LOOKUP_F_NOCACHE	= 1 << 0,
};

struct krcore_lookup {
	__u8  gid[16];		/* in */
	__u32 flags;		/* in: enum krcore_lookup_flags */
	__u32 path;		/* out: KRCORE_PATH_CACHED or _LOOKUP */
	__u32 reads;		/* out */
	__u32 reserved;
	__u64 elapsed_ns;	/* out */
	struct krcore_card card;	/* out */
};

/* KRCORE_IOC_NODE_INFO: the control plane of this node. */
enum krcore_meta_state {
	KRCORE_META_NONE	= 0,	/* no MetaServer configured */
	KRCORE_META_CONNECTING	= 1,
	KRCORE_META_REGISTERED	= 2,	/* connected, card registered */
	KRCORE_META_DOWN	= 3,	/* unreachable: retrying */
};

enum krcore_node_flags {
	KRCORE_NODE_F_UP		= 1 << 0,	/* control plane running */
	KRCORE_NODE_F_META_HOST	= 1 << 1,	/* this node hosts the table */
};

struct krcore_node_info {
	__u32 flags;		/* enum krcore_node_flags */
	__u32 meta_state;	/* enum krcore_meta_state */
	__u8  meta_gid[16];	/* the MetaServer's address */
	__u32 meta_nslots;	/* its table's geometry */
	__u32 meta_used;	/* meta host only: cards in the table */
	__u64 meta_incarnation;
	__u32 peers;		/* peers known (cards cached) */
	__u32 conns;		/* pooled connections, all peers */
	__u32 spares;		/* spare QPs ready */
	__u32 pool_size;	/* target connections per peer */
	struct krcore_card card;	/* this node's */
};

/*
 * KRCORE_IOC_MEMBERS (ABI 9): the nodes registered with the MetaServer
 * (membership), sorted by GID, read from the table's member directory
 * with one-sided READs. @gen changes whenever the list does (a node
 * joins, leaves or reloads, or the MetaServer restarts): compare it for
 * equality only. With @timeout_ms > 0 the call first waits, up to that
 * long, until the generation differs from @since_gen (it looks every
 * KRCORE_MEMBERS_POLL_MS); on timeout it returns 0 with the list of
 * @since_gen. @count is the number of members; the first min(count, max)
 * are written to @entries. A node that stops without unloading krcore (a
 * crash, a cut link) leaves the list once the MetaServer's keepalive to
 * it is not delivered (module parameter meta_keepalive_ms).
 * Errors: EINVAL (flags or reserved not 0, @timeout_ms above
 * KRCORE_MEMBERS_MAX_WAIT_MS), EHOSTUNREACH (no MetaServer: none
 * configured, or not connected now), EIO (the directory kept changing
 * under the READs, or the MetaServer's bytes did not check), E2BIG (more
 * members than this node keeps a list of: module parameter members_max),
 * EINTR (a signal while waiting), EFAULT, ENOMEM, ENODEV.
 */
#define KRCORE_MEMBERS_POLL_MS		20
#define KRCORE_MEMBERS_MAX_WAIT_MS	60000

enum krcore_member_flags {
	KRCORE_MEMBER_F_SELF		= 1 << 0,	/* this node */
	KRCORE_MEMBER_F_META_HOST	= 1 << 1,	/* hosts the table */
};

struct krcore_member {
	__u8  gid[16];
	__u64 incarnation;	/* new at every load of its module */
	__u32 node_id;		/* its card's node id */
	__u32 flags;		/* enum krcore_member_flags */
};

struct krcore_members {
	__u64 entries;		/* in: user address of @max krcore_member */
	__u32 max;		/* in */
	__u32 count;		/* out: members */
	__u64 since_gen;	/* in: with @timeout_ms, wait for another */
	__u64 gen;		/* out: the list's generation */
	__u32 timeout_ms;	/* in: 0 = do not wait */
	__u32 flags;		/* in: 0 */
	__u32 self;		/* out: this node's index in the list, or ~0 */
	__u32 reserved;		/* in: 0 */
};

/*
 * KRCORE_IOC_PEER_INFO: the peers this node knows and its connections to
 * them. Set index (0, 1, ...) and call until ENOENT.
 */
#define KRCORE_PEER_MAX_CONNS	8

enum krcore_conn_state {
	KRCORE_CONN_CONNECTING	= 1,	/* handshake under way */
	KRCORE_CONN_HALF_OPEN	= 2,	/* accepted, waiting for the RTU */
	KRCORE_CONN_READY	= 3,
	KRCORE_CONN_ERROR	= 4,	/* failed, to be recovered or freed */
};

struct krcore_conn_info {
	__u32 id;
	__u32 state;		/* enum krcore_conn_state */
	__u32 qpn;
	__u32 remote_qpn;
	__u32 vqs;		/* VQs using it */
	__u32 initiator;	/* 1: this node sent the handshake */
};

enum krcore_peer_flags {
	KRCORE_PEER_F_CARD	= 1 << 0,	/* a card is cached */
	KRCORE_PEER_F_LOCAL	= 1 << 1,	/* the peer is this node */
};

struct krcore_peer_info {
	__u32 index;		/* in */
	__u32 flags;		/* out: enum krcore_peer_flags */
	struct krcore_card card;	/* out */
	__u32 nconns;		/* out: connections; conns[] lists the
				 * first KRCORE_PEER_MAX_CONNS of them
				 */
	__u32 dgram_vqs;	/* out (ABI 6): VQs on the datagram path
				 * to this peer (0 before ABI 6)
				 */
	__u64 qconnects;	/* out: VQs connected to this peer, ever */
	__u64 handshakes;	/* out: handshakes this node started */
	struct krcore_conn_info conns[KRCORE_PEER_MAX_CONNS];
};

/*
 * KRCORE_IOC_PEER_STATS (ABI 7): what this node's processes did with one
 * peer, for operators (krctl top, krctl peers). Same index as
 * KRCORE_IOC_PEER_INFO (0, 1, ... until ENOENT); gid says which peer the
 * index named, as peers come and go between calls. The counters start at
 * 0 when the node first meets the peer and only grow; a peer dropped from
 * the table and met again starts over. reserved must be 0 (EINVAL). They
 * add up every process's traffic: the caller needs CAP_NET_ADMIN (EPERM).
 */
struct krcore_peer_stats {
	__u32 index;		/* in */
	__u32 reserved;		/* in: 0 */
	__u8  gid[16];		/* out: the peer's address */
	__u64 wr_posted;	/* requests posted to it (RC and datagram) */
	__u64 wr_bytes;		/* their lengths (READ, WRITE, SEND) */
	__u64 wr_errors;	/* requests that completed with any status
				 * but SUCCESS (not_executed included)
				 */
	__u64 wr_reposted;	/* re-posted by recovery */
	__u64 wr_not_executed;	/* completed NOT_EXECUTED_OR_UNKNOWN */
	__u64 wr_timeouts;	/* connections/streams failed for no progress */
	__u64 conn_errors;	/* pooled connections to it that failed */
	__u64 recoveries;	/* recoveries of them */
	__u64 dg_sent;		/* datagrams sent to it (requests) */
	__u64 dg_retransmits;	/* of them, sent again */
	__u64 dg_switches;	/* VQs moved from datagrams to RC */
	__u64 reserved2[5];	/* out: 0 */
};

/*
 * Data plane.
 *
 * Memory: KRCORE_IOC_REG_MR pins a range of the caller's memory
 * (zero-copy, charged to its RLIMIT_MEMLOCK) and returns its lkey (for the
 * local side of work requests of every VQ of this process) and rkey (for
 * peers). KRCORE_IOC_DEREG_MR waits for every request that uses the range
 * to complete first. Registrations belong to the process: they go when its
 * last VQ is closed. EINVAL for a zero length, unknown access bits or
 * reserved fields not 0; DEREG_MR of an lkey the process does not hold:
 * ENOKEY.
 */
enum krcore_access {
	KRCORE_ACCESS_LOCAL_WRITE	= 1 << 0,
	KRCORE_ACCESS_REMOTE_READ	= 1 << 1,
	KRCORE_ACCESS_REMOTE_WRITE	= 1 << 2,
	KRCORE_ACCESS_REMOTE_ATOMIC	= 1 << 3,
};

struct krcore_reg_mr {
	__u64 addr;		/* in: start of the range */
	__u64 length;		/* in */
	__u32 access;		/* in: enum krcore_access */
	__u32 lkey;		/* out */
	__u32 rkey;		/* out */
	__u32 reserved;
};

struct krcore_dereg_mr {
	__u32 lkey;		/* in */
	__u32 reserved;
};

/*
 * Remote memory (ABI 10). KRCORE_IOC_LMR_ALLOC allocates @length bytes on
 * a node, @gid, with no process there (since ABI 11 @gid may be this node,
 * whose processes then use the region by its key over a loopback VQ): its
 * kernel takes them from its
 * pool (module parameter lmr_pool_mb), zeroed, and registers them once with
 * exactly the rights in @access (KRCORE_ACCESS_REMOTE_READ, _WRITE,
 * _ATOMIC): the owner's RNIC refuses any other access with @rkey. Use the
 * region with READ, WRITE and atomic requests of any VQ connected to @gid,
 * remote_addr in [@addr, @addr + @length), key @rkey.
 *
 * The region belongs to the calling process, like its registrations: it
 * is freed by KRCORE_IOC_LMR_FREE, when the process's last VQ is closed,
 * when this node's module unloads or reloads, and when this node leaves
 * the MetaServer's membership. Once freed, @rkey is invalid at the owner:
 * a request with it fails with a remote access error and never reaches
 * other memory. When the owner reloads, its regions are gone with it.
 *
 * @timeout_ms bounds the wait for the owner's answer (0: module parameter
 * lmr_timeout_ms; at most KRCORE_LMR_MAX_WAIT_MS, for every LMR call).
 * Errors: EINVAL (@length 0 or above KRCORE_LMR_MAX_LEN, @access 0 or
 * other bits, @timeout_ms too long, reserved not 0),
 * EMFILE (the process holds lmr_max_per_proc regions), ENOSPC (the owner's
 * pool cannot take @length more bytes), ENOMEM (the owner could not
 * allocate or register them), EHOSTUNREACH (no card for @gid), ETIMEDOUT
 * (no answer in time: if the owner allocated it later, it is freed),
 * EINTR, EACCES (a VQ of another process), EFAULT, ENODEV.
 *
 * KRCORE_IOC_LMR_FREE frees the region @handle of the calling process and
 * waits (up to lmr_timeout_ms) until its owner confirms: 0 then, ETIMEDOUT
 * if it did not confirm in time (the handle is gone all the same and the
 * free is sent again in the background for another lmr_timeout_ms; an
 * owner that never hears it keeps the region until this node unloads or
 * leaves the membership), ENOENT for a handle the process does not hold,
 * EINVAL for reserved not 0.
 *
 * KRCORE_IOC_LMR_SET sets @length bytes of the region @handle, from
 * @offset, to @value (any byte), at the owner: its CPU writes them and
 * nothing but the request crosses the network. It waits for the owner's
 * answer (up to @timeout_ms, 0: lmr_timeout_ms). Errors: EINVAL (@length
 * 0, @value above 255, reserved not 0), ENOENT (a handle the process does
 * not hold), EACCES (the region has no REMOTE_WRITE right), ERANGE (past
 * its end), ESTALE (the owner reloaded: the region is gone), ETIMEDOUT,
 * EINTR (the memset may still happen), EHOSTUNREACH, ENODEV.
 *
 * KRCORE_IOC_LMR_COPY copies @length bytes from @src_offset of the region
 * @src_handle to @dst_offset of @dst_handle (the same region or two of
 * this process on the same node; overlapping ranges as memmove), at the
 * owner: its CPU moves them. It needs the source's REMOTE_READ and the
 * destination's REMOTE_WRITE right. Errors as KRCORE_IOC_LMR_SET, and
 * EXDEV for regions on two nodes (not yet).
 */
#define KRCORE_LMR_MAX_LEN	(1ULL << 40)
#define KRCORE_LMR_MAX_WAIT_MS	60000	/* timeout_ms at most (EINVAL) */

struct krcore_lmr_alloc {
	__u8  gid[16];		/* in: the owner node */
	__u64 length;		/* in: bytes */
	__u32 access;		/* in: REMOTE_* bits of enum krcore_access */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u64 addr;		/* out: remote_addr of its first byte */
	__u64 incarnation;	/* out: the owner's (its generation) */
	__u32 rkey;		/* out */
	__u32 handle;		/* out: names it in KRCORE_IOC_LMR_FREE */
	__u32 region;		/* out: the owner's id of it */
	__u32 reserved;		/* in: 0 */
};

struct krcore_lmr_free {
	__u32 handle;		/* in */
	__u32 reserved;		/* in: 0 */
};

struct krcore_lmr_copy {
	__u32 dst_handle;	/* in */
	__u32 src_handle;	/* in */
	__u64 dst_offset;	/* in */
	__u64 src_offset;	/* in */
	__u64 length;		/* in */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u32 reserved;		/* in: 0 */
};

/*
 * Locks (ABI 11). KRCORE_IOC_LOCK takes the lock on the 8 bytes at remote
 * address @addr (8-aligned) of a region of node @gid, named by its key
 * @rkey: any process that holds the key of a region with the
 * REMOTE_ATOMIC right may lock any word of it. The owner's kernel keeps
 * each lock's queue: callers are granted in the order their requests
 * reached it, and @grant (out) is the lock's grant number (1, 2, ...).
 * The call waits up to @timeout_ms (0: lmr_timeout_ms; at most
 * KRCORE_LMR_MAX_WAIT_MS); a caller that stops waiting leaves the queue.
 * The lock is the process's (@handle, out): KRCORE_IOC_UNLOCK releases it,
 * and so does the close of the process's last VQ (a process killed
 * holding a lock does not keep it). A node that leaves the MetaServer's
 * membership or unloads loses its locks; when the region is freed, its
 * locks go and their waiters get ESTALE. The bytes themselves are not
 * touched: the lock guards whatever its users agree on.
 * Errors: EINVAL (@addr not 8-aligned or of no region, @timeout_ms too
 * long, reserved not 0), ESTALE (no such region now, or its node
 * reloaded), EACCES (another key, or no REMOTE_ATOMIC right; a VQ of
 * another process), ERANGE (past the region's end), ENOSPC (the owner's
 * lock table is full: lock_entries_max, a quarter of it per node),
 * EMFILE (the process holds lmr_max_per_proc locks), ETIMEDOUT, EINTR,
 * EHOSTUNREACH, ENODEV.
 *
 * KRCORE_IOC_UNLOCK releases the lock @handle and waits (up to
 * @timeout_ms) for the owner to confirm: 0, ENOENT (a handle the process
 * does not hold), ESTALE (the region is gone, or its node reloaded: the
 * lock went with it), ETIMEDOUT (the release goes on in the background).
 */
struct krcore_lock {
	__u8  gid[16];		/* in: the owner node */
	__u64 addr;		/* in: remote address of the word */
	__u32 rkey;		/* in: the region's key */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u64 grant;		/* out: the lock's grant number */
	__u32 handle;		/* out: names it in KRCORE_IOC_UNLOCK */
	__u32 reserved;		/* in: 0 */
};

struct krcore_unlock {
	__u32 handle;		/* in */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u64 reserved;		/* in: 0 */
};

/*
 * Names (ABI 12). KRCORE_IOC_LMR_PUBLISH publishes the region @handle of
 * the calling process (one it allocated) under @name in its owner's names
 * table, with @access rights (REMOTE_* bits, a subset of the region's): the
 * owner registers the region once more with exactly those rights, and
 * @rkey (out) is that registration's key. Any process of any node may look
 * the name up (KRCORE_IOC_LMR_LOOKUP) and use the region with that key, and
 * nothing more: the owner's RNIC refuses other rights. A region may carry
 * several names with different rights. @name is 1 .. 23 printable ASCII
 * bytes, NUL-padded; a name is unique on its owner node.
 * KRCORE_IOC_LMR_UNPUBLISH revokes @name (@access 0): the name goes from
 * the table and its key dies at once (deregistered), whoever holds it. A
 * publication also goes with its region (freed by its holder, its holder's
 * exit, node or membership) and with its owner (a reload).
 * Errors: EINVAL (@name, @access or reserved), ENOENT (not a region of
 * this process; UNPUBLISH: no such name of that region), EACCES (@access
 * beyond the region's rights), EEXIST (the name is taken on that node),
 * ENOSPC (the owner's table has no room for it: its bucket is full, or
 * the holder's node has a quarter of the table), ESTALE (the owner
 * reloaded), ETIMEDOUT, EINTR, EHOSTUNREACH, ENODEV.
 *
 * KRCORE_IOC_LMR_LOOKUP looks @name up on the node at the other end of the
 * VQ's connection (after KRCORE_IOC_QCONNECT, RC or loopback) with one
 * READ of that node's names table, and gives the process a handle of the
 * region (@handle, usable with KRCORE_IOC_LMR_SET if @access has
 * REMOTE_WRITE, KRCORE_IOC_LOCK with REMOTE_ATOMIC, KRCORE_IOC_LMR_FREE to
 * forget it: a looked-up region is not the process's to free). @gid and
 * @incarnation (out) are the owner's. A VQ on the datagram path reads over
 * a ready pooled RC connection of its peer, or, with none (the RC still
 * being built behind it, or datagrams only), asks the peer's kernel by a
 * control message, whose answer is what the READ would find. Errors:
 * EINVAL, ENOENT (no such name), ENOTCONN (the VQ is not connected),
 * EOPNOTSUPP (the peer has no names table), EAGAIN (the entry was being
 * rewritten on every READ), EMFILE, ETIMEDOUT (no answer in
 * lmr_timeout_ms), EHOSTUNREACH, EINTR, EACCES.
 */
#define KRCORE_NAME_LEN		24

struct krcore_lmr_publish {
	char  name[KRCORE_NAME_LEN];	/* in */
	__u32 handle;		/* in: the region */
	__u32 access;		/* in: PUBLISH: REMOTE_* rights; UNPUBLISH: 0 */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u32 rkey;		/* out: PUBLISH: the name's key */
	__u64 reserved;		/* in: 0 */
};

struct krcore_lmr_lookup {
	char  name[KRCORE_NAME_LEN];	/* in */
	__u8  gid[16];		/* out: the owner node */
	__u64 addr;		/* out: remote_addr of its first byte */
	__u64 length;		/* out */
	__u64 incarnation;	/* out: the owner's */
	__u32 rkey;		/* out */
	__u32 access;		/* out: the name's rights */
	__u32 region;		/* out: the owner's id of it */
	__u32 handle;		/* out: names it in this process */
	__u64 reserved;		/* in: 0 */
};

struct krcore_lmr_set {
	__u32 handle;		/* in */
	__u32 value;		/* in: 0 .. 255 */
	__u64 offset;		/* in */
	__u64 length;		/* in */
	__u32 timeout_ms;	/* in: 0 = lmr_timeout_ms */
	__u32 reserved;		/* in: 0 */
};

/*
 * Work requests, posted in batches with KRCORE_IOC_QPUSH. Every request is
 * checked before anything reaches the shared QP; the first one that fails a
 * check (or does not fit) stops the batch: the ones before it are posted,
 * it and the ones after are not. @done says how many were posted, @error
 * (a positive errno) and @reason (enum krcore_reason) why the next one was
 * not:
 *   EINVAL        malformed: opcode, flags, SGE count, zero length, atomic
 *                 length or alignment, reserved fields not zero, a
 *                 WRITE_IMM immediate beyond 16 bits
 *   ENOKEY        an lkey this process did not register
 *   EFAULT        a local buffer outside the registered range
 *   EACCES        the registration does not allow it (a READ or an atomic
 *                 needs KRCORE_ACCESS_LOCAL_WRITE)
 *   EMSGSIZE      longer than the connection carries
 *   ENOTCONN      the VQ is not connected
 *   EDESTADDRREQ  a SEND or WRITE_IMM from a VQ connected without a port
 *   EAGAIN        the VQ or the shared send queue is full: retry later
 *                 (a VQ may fill vq_qp_share percent of its shared send
 *                 queue and have vq_max_bytes in flight)
 *   EFAULT        (reason FAULT) the array at @wrs could not be read
 *   EBUSY         (reason THROTTLED) this process's requests broke shared
 *                 connections break_limit times within break_window_ms
 *                 (remote access errors): none is posted until the window
 *                 has passed
 *   EACCES        (reason RKEY) on a loopback connection, an rkey that
 *                 the calling process did not register with the access
 *                 the opcode needs, or a range outside it
 * The ioctl returns @count when every request was posted (and then does
 * not write the structure back), else -1 with errno = @error, and @done,
 * @error and @reason are always written back, even when the array at @wrs
 * cannot be read (EFAULT, reason FAULT, @done = the requests before the
 * unreadable one). A call that fails as a whole, before any request is
 * looked at, writes @done = 0, @error and @reason = KRCORE_R_OK: EACCES
 * (the caller does not own the VQ, see below), ENODEV (its device went
 * away), EINTR (killed while waiting for the VQ). Only when this structure
 * itself cannot be read or written does the call fail with EFAULT and
 * write nothing back.
 */
#define KRCORE_MAX_SGE		4
#define KRCORE_MAX_MSG		(1U << 30)	/* READ/WRITE bytes */
#define KRCORE_MAX_SEND		4080		/* SEND bytes */

enum krcore_wr_opcode {
	KRCORE_WR_READ		= 1,
	KRCORE_WR_WRITE		= 2,
	KRCORE_WR_WRITE_IMM	= 3,
	KRCORE_WR_SEND		= 4,
	KRCORE_WR_SEND_IMM	= 5,
	KRCORE_WR_ATOMIC_CAS	= 6,	/* 8 bytes, remote_addr 8-aligned */
	KRCORE_WR_ATOMIC_FAA	= 7,
};

enum krcore_wr_flags {
	KRCORE_WR_SIGNALED	= 1 << 0,	/* a completion even on success */
	KRCORE_WR_FENCE		= 1 << 1,	/* after earlier READs/atomics */
};

struct krcore_sge {
	__u64 addr;
	__u32 length;
	__u32 lkey;
};

/* The immediate of a WRITE_IMM is 16 bits (the other 16 name the port). */
struct krcore_wr {
	__u64 wr_id;		/* the user's, returned in the completion */
	__u8  opcode;		/* enum krcore_wr_opcode */
	__u8  flags;		/* enum krcore_wr_flags */
	__u8  num_sge;		/* 1 .. KRCORE_MAX_SGE */
	__u8  reserved0;
	__u32 imm_data;		/* *_IMM: the immediate, host order */
	__u64 remote_addr;	/* READ, WRITE*, atomics */
	__u32 rkey;
	__u32 reserved1;
	__u64 compare_add;	/* CAS: compare; FAA: add */
	__u64 swap;		/* CAS: swap */
	struct krcore_sge sg_list[KRCORE_MAX_SGE];
};

enum krcore_reason {
	KRCORE_R_OK = 0,
	KRCORE_R_OPCODE,	/* unknown opcode */
	KRCORE_R_FLAGS,		/* unknown flag bits */
	KRCORE_R_RESERVED,	/* a reserved field is not zero */
	KRCORE_R_NUM_SGE,	/* 0 or more than KRCORE_MAX_SGE */
	KRCORE_R_ZERO_LENGTH,	/* an SGE of length 0 */
	KRCORE_R_TOO_LONG,	/* beyond KRCORE_MAX_MSG / KRCORE_MAX_SEND */
	KRCORE_R_ATOMIC_SIZE,	/* atomics move exactly 8 bytes, one SGE */
	KRCORE_R_ATOMIC_ALIGN,	/* remote_addr of an atomic not 8-aligned */
	KRCORE_R_LKEY,		/* lkey not registered by this process */
	KRCORE_R_RANGE,		/* local buffer outside its registration */
	KRCORE_R_ACCESS,	/* registration lacks LOCAL_WRITE */
	KRCORE_R_NOT_CONNECTED,	/* VQ not connected */
	KRCORE_R_NO_PORT,	/* SEND or WRITE_IMM without a remote port */
	KRCORE_R_UNSUPPORTED,	/* the connection cannot carry it */
	KRCORE_R_VQ_FULL,	/* this VQ's outstanding limit */
	KRCORE_R_QP_FULL,	/* the shared send queue is full */
	KRCORE_R_RECOVERING,	/* the connection is being re-established */
	KRCORE_R_IMM,		/* WRITE_IMM immediate beyond 16 bits */
	/* ABI 5 */
	KRCORE_R_FAULT,		/* the wrs array could not be read */
	KRCORE_R_THROTTLED,	/* the process broke shared connections
				 * too often lately (break_limit per
				 * break_window_ms): retry after the window
				 */
	KRCORE_R_RKEY,		/* loopback: an rkey this process did not
				 * register (with that access and range)
				 */
	/* ABI 8 */
	KRCORE_R_NO_CREDIT,	/* SEND/WRITE_IMM: the receiving port has
				 * no slot for it yet (EAGAIN; wait with
				 * KRCORE_IOC_FLOW_WAIT)
				 */
	KRCORE_R_REFUSED,	/* SEND/WRITE_IMM: no process has the port
				 * bound at the receiver (ECONNREFUSED)
				 */
	KRCORE_R_MAX,
};

struct krcore_qpush {
	__u64 wrs;		/* in: user pointer to struct krcore_wr[count] */
	__u32 count;		/* in */
	__u32 done;		/* out: posted */
	__u32 error;		/* out: errno of wrs[done] (0: all posted) */
	__u32 reason;		/* out: enum krcore_reason of wrs[done] */
};

/*
 * Completions of a VQ arrive in its ring, mapped read/write by mmap() of the
 * VQ's file at offset KRCORE_MMAP_RING: a header then @entries entries of
 * struct krcore_cqe. The kernel writes entries and advances @producer
 * (release); the user reads entries below @producer and advances @consumer.
 * Indexes run freely (u32, wrapping); entry i is at index i & (entries - 1).
 * A failed request always completes, signaled or not. KRCORE_IOC_QWAIT
 * sleeps until the ring is not empty. The VQ's file descriptor supports
 * poll(2)/epoll (level and edge triggered): POLLIN when the completion or
 * the receive ring has entries, POLLOUT when the VQ can take a request,
 * POLLWRBAND (ABI 8) when it can send a message to its port (a slot is
 * lent, or the port refused and the next qpush says so),
 * POLLHUP when it lost its connection for good (nothing left to read),
 * POLLERR|POLLHUP when its RDMA device went away (calls fail with ENODEV).
 * The mapping must be MAP_SHARED (EINVAL otherwise), exactly @ring_size
 * bytes at its offset (EINVAL otherwise; ENOTCONN before the ring exists)
 * and is never executable (mmap with PROT_EXEC: EPERM; a later mprotect to
 * PROT_EXEC: EACCES). The kernel keeps its own copy of every field it
 * relies on and reads back only @consumer.
 */
#define KRCORE_MMAP_RING	0

/*
 * Two-sided messages. A VQ binds a port of its node (KRCORE_IOC_QBIND,
 * 1..65535, one VQ per port) to receive; a VQ connected with that port
 * sends to it. SEND and SEND_IMM carry up to KRCORE_MAX_SEND bytes;
 * WRITE_IMM writes remote memory and notifies the port, its immediate
 * limited to 16 bits (the other 16 name the port). Received messages land
 * in the binding VQ's receive ring, mapped by mmap() at KRCORE_MMAP_RECV
 * (pgoff): a header, @entries entries of struct krcore_msg, then @entries
 * slots of @slot_size bytes; entry i's data is in slot i & (entries - 1).
 * Messages are flow controlled (ABI 8): the receiver's kernel lends
 * slots of the ring to each sending node (docs/messages.md), and a SEND,
 * SEND_IMM or WRITE_IMM is posted only into a lent slot, so a message
 * that reaches the ring is never dropped for want of room. Without a
 * slot, KRCORE_IOC_QPUSH stops at that request with EAGAIN and reason
 * KRCORE_R_NO_CREDIT; KRCORE_IOC_FLOW_WAIT sleeps until a slot is lent
 * (or the port is refused: ECONNREFUSED, reason KRCORE_R_REFUSED). The
 * kernel learns that slots were consumed from @consumer: when @flags has
 * KRCORE_RECV_F_CREDIT (senders wait), the consumer calls
 * KRCORE_IOC_QCONSUMED after advancing it. A message that arrives with no
 * slot (a sender outside the protocol) or for no bound port is dropped
 * and counted in @dropped (or the msg_no_port counter).
 */
#define KRCORE_MMAP_RECV	1

enum krcore_msg_flags {
	KRCORE_MSG_F_IMM	= 1 << 0,	/* imm_data is valid */
};

struct krcore_msg {
	__u32 len;		/* bytes in the slot (WRITE_IMM: bytes written) */
	__u32 imm_data;
	__u8  opcode;		/* KRCORE_WR_SEND, _SEND_IMM or _WRITE_IMM */
	__u8  flags;		/* enum krcore_msg_flags */
	__u16 src_port;		/* the sender VQ's bound port, 0: none */
	__u32 reserved;
	__u8  src_gid[16];	/* the sending node */
};

struct krcore_recv_ring {
	__u32 producer;		/* written by the kernel */
	__u32 pad0[15];
	__u32 consumer;		/* written by the user */
	__u32 pad1[15];
	__u32 entries;		/* a power of two */
	__u32 slot_size;
	__u32 entry_offset;
	__u32 data_offset;
	__u32 size;		/* bytes to map */
	__u32 dropped;		/* messages lost to a full ring */
	__u32 flags;		/* enum krcore_recv_flags (ABI 8) */
	__u32 reserved0;
	__u64 reserved[3];
};

enum krcore_recv_flags {
	/* Senders wait for slots: call KRCORE_IOC_QCONSUMED after consuming. */
	KRCORE_RECV_F_CREDIT	= 1 << 0,
};

/*
 * KRCORE_IOC_QPRIO (ABI 13): this VQ's priority class on the shared RC
 * connection it posts on. KRCORE_PRIO_HIGH is for small requests whose
 * latency matters: while a VQ of that class has requests on a connection,
 * and for prio_window_ms after, the other VQs on it (of every process) may
 * have at most prio_yield_bytes in flight there (one longer request alone
 * when nothing is), so a high request waits behind that much at most, not
 * behind their backlog. What a high VQ may do is bounded, so any process
 * may use it: each of its requests moves at most prio_high_bytes
 * (KRCORE_R_TOO_LONG), all of them together in flight as well, and a
 * process has at most prio_high_vqs VQs of the class at a time (EPERM).
 * Only the VQ's own process sets it (EACCES); EINVAL for another class
 * or a reserved field not zero. On the datagram path the bounds apply
 * and the peer's backlog is served by turns per VQ already.
 */
enum krcore_prio {
	KRCORE_PRIO_NORMAL	= 0,	/* the default */
	KRCORE_PRIO_HIGH	= 1,
};

struct krcore_qprio {
	__u32 prio;		/* in: enum krcore_prio */
	__u32 reserved;		/* in: 0 */
};

/*
 * KRCORE_IOC_FLOW_WAIT (ABI 8): sleep up to @timeout_ms until the port
 * this VQ sends to has lent it a slot. 0 when one is there (the next
 * qpush may still race another process of this node for it), ETIMEDOUT,
 * ECONNREFUSED when no process has the port bound there, ENOTCONN when
 * the VQ sends to no port, EINTR on a signal.
 */
struct krcore_flow_wait {
	__u32 timeout_ms;	/* in */
	__u32 credit;		/* out: slots lent and not yet used */
};

struct krcore_qbind {
	__u32 port;		/* in */
	__u32 ring_size;	/* out: bytes to mmap at KRCORE_MMAP_RECV */
};

enum krcore_wc_status {
	KRCORE_WC_SUCCESS	= 0,
	/* 1 .. 21: the RDMA completion status of the request (enum ib_wc_status) */
	KRCORE_WC_LOC_LEN_ERR	= 1,
	KRCORE_WC_LOC_PROT_ERR	= 4,
	KRCORE_WC_FLUSHED	= 5,	/* not executed: an earlier request
					 * of this VQ failed
					 */
	KRCORE_WC_REM_INV_REQ_ERR = 9,
	KRCORE_WC_REM_ACCESS_ERR = 10,	/* bad rkey, address or access */
	KRCORE_WC_REM_OP_ERR	= 11,
	KRCORE_WC_RETRY_EXC_ERR	= 12,	/* the peer did not answer */
	KRCORE_WC_RNR_RETRY_EXC_ERR = 13,
	KRCORE_WC_GENERAL_ERR	= 21,
	/*
	 * The shared connection failed because of another process's request
	 * (or the peer went away) while this non-idempotent request (atomic,
	 * SEND) was outstanding: it was not re-sent, and may or may not have
	 * been executed. READs and WRITEs are re-posted instead.
	 */
	KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN = 64,
	KRCORE_WC_UNREACHABLE	= 65,	/* recovery found no way to the peer */
};

struct krcore_cqe {
	__u64 wr_id;
	__u32 status;		/* enum krcore_wc_status */
	__u8  opcode;		/* enum krcore_wr_opcode of the request */
	__u8  flags;		/* reserved */
	__u16 reserved;
	__u32 byte_len;
	__u32 imm_data;
	__u64 reserved1;
};

struct krcore_ring {
	__u32 producer;		/* written by the kernel */
	__u32 pad0[15];
	__u32 consumer;		/* written by the user */
	__u32 pad1[15];
	__u32 entries;		/* a power of two */
	__u32 depth;		/* outstanding requests allowed per VQ */
	__u32 entry_offset;	/* byte offset of entry 0 in the mapping */
	__u32 size;		/* bytes to map */
	__u64 recoveries;	/* times this VQ's connection was recovered */
	/*
	 * ABI 14, a ring in the process's memory (QCONNECT's ring_addr):
	 * 1 once the VQ's file is released; from then on the kernel never
	 * writes there again and the memory may hold another VQ's ring.
	 */
	__u32 released;
	__u32 reserved0;
	__u64 reserved[3];
};

/*
 * KRCORE_IOC_QWAIT returns 0 when a ring has entries, -1 with ETIMEDOUT
 * when @timeout_ms passed with both empty, ENOTCONN when the VQ has no
 * ring (not connected, no bound port) or lost its connection, ENODEV when
 * its device went away, EINTR on a signal. @available and @messages are
 * written back in every case but EFAULT.
 *
 * A VQ belongs to the address space that opened it: a forked child (or any
 * other process) using an inherited descriptor gets EACCES from
 * KRCORE_IOC_QPUSH, _REG_MR and _DEREG_MR. A VQ whose own request failed
 * at the peer (a remote access error) stays usable: that request completes
 * with its status, its later outstanding ones with KRCORE_WC_FLUSHED, and
 * new requests are accepted (unless the process is throttled, EBUSY). A
 * READ's completion has @byte_len = the bytes it read.
 */
struct krcore_qwait {
	__u32 timeout_ms;	/* in: 0 = do not sleep */
	__u32 available;	/* out: entries in the completion ring */
	__u32 messages;		/* out: entries in the receive ring */
	__u32 reserved;
};

#define KRCORE_IOC_VERSION \
	_IOWR(KRCORE_IOC_MAGIC, 0x00, struct krcore_version)
#define KRCORE_IOC_QUERY_CARD \
	_IOWR(KRCORE_IOC_MAGIC, 0x01, struct krcore_card)
#define KRCORE_IOC_QUERY_PORT \
	_IOWR(KRCORE_IOC_MAGIC, 0x02, struct krcore_port_info)
#define KRCORE_IOC_NODE_INFO \
	_IOWR(KRCORE_IOC_MAGIC, 0x03, struct krcore_node_info)
#define KRCORE_IOC_PEER_INFO \
	_IOWR(KRCORE_IOC_MAGIC, 0x04, struct krcore_peer_info)
#define KRCORE_IOC_LOOKUP \
	_IOWR(KRCORE_IOC_MAGIC, 0x05, struct krcore_lookup)
#define KRCORE_IOC_QCONNECT \
	_IOWR(KRCORE_IOC_MAGIC, 0x06, struct krcore_qconnect)
#define KRCORE_IOC_PROBE \
	_IOWR(KRCORE_IOC_MAGIC, 0x07, struct krcore_probe)
#define KRCORE_IOC_REG_MR \
	_IOWR(KRCORE_IOC_MAGIC, 0x08, struct krcore_reg_mr)
#define KRCORE_IOC_DEREG_MR \
	_IOWR(KRCORE_IOC_MAGIC, 0x09, struct krcore_dereg_mr)
#define KRCORE_IOC_QPUSH \
	_IOWR(KRCORE_IOC_MAGIC, 0x0a, struct krcore_qpush)
#define KRCORE_IOC_QWAIT \
	_IOWR(KRCORE_IOC_MAGIC, 0x0b, struct krcore_qwait)
#define KRCORE_IOC_QBIND \
	_IOWR(KRCORE_IOC_MAGIC, 0x0c, struct krcore_qbind)
#define KRCORE_IOC_PEER_STATS \
	_IOWR(KRCORE_IOC_MAGIC, 0x0d, struct krcore_peer_stats)
#define KRCORE_IOC_QCONSUMED \
	_IO(KRCORE_IOC_MAGIC, 0x0e)
#define KRCORE_IOC_FLOW_WAIT \
	_IOWR(KRCORE_IOC_MAGIC, 0x0f, struct krcore_flow_wait)
#define KRCORE_IOC_MEMBERS \
	_IOWR(KRCORE_IOC_MAGIC, 0x10, struct krcore_members)
#define KRCORE_IOC_LMR_ALLOC \
	_IOWR(KRCORE_IOC_MAGIC, 0x11, struct krcore_lmr_alloc)
#define KRCORE_IOC_LMR_FREE \
	_IOWR(KRCORE_IOC_MAGIC, 0x12, struct krcore_lmr_free)
#define KRCORE_IOC_LMR_SET \
	_IOWR(KRCORE_IOC_MAGIC, 0x13, struct krcore_lmr_set)
#define KRCORE_IOC_LMR_COPY \
	_IOWR(KRCORE_IOC_MAGIC, 0x14, struct krcore_lmr_copy)
#define KRCORE_IOC_LOCK \
	_IOWR(KRCORE_IOC_MAGIC, 0x15, struct krcore_lock)
#define KRCORE_IOC_LMR_PUBLISH \
	_IOWR(KRCORE_IOC_MAGIC, 0x17, struct krcore_lmr_publish)
#define KRCORE_IOC_LMR_UNPUBLISH \
	_IOWR(KRCORE_IOC_MAGIC, 0x18, struct krcore_lmr_publish)
#define KRCORE_IOC_LMR_LOOKUP \
	_IOWR(KRCORE_IOC_MAGIC, 0x19, struct krcore_lmr_lookup)
#define KRCORE_IOC_UNLOCK \
	_IOWR(KRCORE_IOC_MAGIC, 0x16, struct krcore_unlock)
#define KRCORE_IOC_QPRIO \
	_IOWR(KRCORE_IOC_MAGIC, 0x1a, struct krcore_qprio)

#endif /* _UAPI_KRCORE_H */
