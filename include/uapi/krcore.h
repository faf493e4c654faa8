/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
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

#define KRCORE_ABI_VERSION	1
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

#define KRCORE_IOC_VERSION \
	_IOWR(KRCORE_IOC_MAGIC, 0x00, struct krcore_version)
#define KRCORE_IOC_QUERY_CARD \
	_IOWR(KRCORE_IOC_MAGIC, 0x01, struct krcore_card)
#define KRCORE_IOC_QUERY_PORT \
	_IOWR(KRCORE_IOC_MAGIC, 0x02, struct krcore_port_info)

#endif /* _UAPI_KRCORE_H */
