/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * Frozen copy of include/uapi/krcore.h as of ABI 2 (commit 35a32d6), for
 * tests/progs/abi/abi_old.c: a user built against it must keep working on
 * every later module. Never edit it.
 */
/*
 * krcore.h - the user/kernel ABI of krcore, the microsecond-scale RDMA
 * control plane. This header is the contract between krcore.ko and any user
 * of /dev/krcore (libkrcore first of all); nothing else defines the ABI.
 *
 * Every open of /dev/krcore is one virtual queue (VQ). All requests are
 * ioctl()s on that file descriptor with the commands below; each returns 0
 * or -1 with errno set.
 *
 * Versioning: KRCORE_ABI_VERSION grows by one whenever commands or
 * structures are added. Existing commands and structures never change
 * their layout (the size of each structure is also part of its command
 * number). A module answers every request of an ABI version up to its own,
 * so a user built against version N runs on any module with version >= N.
 */
#ifndef _UAPI_KRCORE_H
#define _UAPI_KRCORE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KRCORE_ABI_VERSION	2
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
 *   LOCAL              the node is this node (a loopback connection).
 * Errors: EISCONN (VQ already connected), ENXIO (node unknown to the
 * MetaServer), EHOSTUNREACH (no card cached and MetaServer unreachable),
 * ETIMEDOUT (peer did not answer the handshake), ESTALE (peer keeps
 * rejecting its card), ENODEV (no usable RDMA port), EINVAL (bad GID).
 */
enum krcore_path {
	KRCORE_PATH_POOLED	= 1 << 0,
	KRCORE_PATH_CACHED	= 1 << 1,
	KRCORE_PATH_LOOKUP	= 1 << 2,
	KRCORE_PATH_HANDSHAKE	= 1 << 3,
	KRCORE_PATH_REFRESHED	= 1 << 4,
	KRCORE_PATH_LOCAL	= 1 << 5,
};

struct krcore_qconnect {
	__u8  gid[16];		/* in: the node to connect to */
	__u32 port;		/* in: two-sided port on that node (0: none) */
	__u32 flags;		/* in: 0 */
	__u32 timeout_ms;	/* in: 0: the module's default */
	__u32 path;		/* out: enum krcore_path */
	__u32 conn_id;		/* out: the pooled connection used */
	__u32 qpn;		/* out: its local QP number */
	__u32 reads;		/* out: RDMA READs of the MetaServer table */
	__u32 attempts;		/* out: handshake requests sent (0: none) */
	__u64 elapsed_ns;	/* out: time spent in the kernel */
	struct krcore_card card;	/* out: the peer's card */
};

/*
 * KRCORE_IOC_PROBE: RDMA READ the node page of the node this VQ is
 * connected to (it holds the node's card) over the VQ's pooled connection:
 * proves the connection carries traffic. The page's card is returned.
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
	__u32 reserved;
	__u64 qconnects;	/* out: VQs connected to this peer, ever */
	__u64 handshakes;	/* out: handshakes this node started */
	struct krcore_conn_info conns[KRCORE_PEER_MAX_CONNS];
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

#endif /* _UAPI_KRCORE_H */
