/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * proto.h - krcore's node-to-node messages.
 *
 * Control messages travel between the control UD QPs of two nodes (the
 * handshake that connects a pair of pooled RC QPs) and over the RC
 * connection of a member to its MetaServer (registration). All have one
 * fixed 128-byte little-endian wire form:
 *
 *   0   u32 magic (KRC_MSG_MAGIC)    4 u8 version   5 u8 type
 *   6   u16 status                   8 u64 req_id
 *   16  card[64]      the sender's card (common/card.h wire form)
 *   80  u64 dst_incarnation   REQ: incarnation the sender expects of the
 *                             receiver (0: unknown)
 *   88  u32 qpn       sender's RC QP       92 u32 psn    sender's first PSN
 *   96  u32 peer_qpn  the receiver's RC QP this message is about
 *   100 u32 probe_rkey  104 u64 probe_addr  112 u32 probe_len
 *                     the sender's node page, readable over the connection
 *   116 u32 slot      META_REPLY: the table slot of the registered card
 *   120 u8 mac[8]     the control MAC (common/auth.h: KRC_MAC_CTRL) of
 *                     every type but META_*, whose bytes 120..127 are zero
 * META_REGISTER, META_DEREGISTER and META_REPLY use none of the fields at
 * 80..115: bytes 80..111 carry their MAC (common/auth.h), 112..115 are
 * zero.
 * FLOW_ASK and FLOW_GRANT (flow control of two-sided messages, flow.h)
 * use 80 dst_incarnation and, instead of 88..115:
 *   88  u32 port      the receiver's bound port (1 .. 65535)
 *   92  u32 epoch     of the channel (flow.h; 0 in a first ASK)
 *   96  u32 want      ASK: sends waiting; GRANT: zero
 *   100 u32 zero      104 u64 count   ASK: sent S; GRANT: granted G
 *   112 u32 zero
 * and status, which only a GRANT may set (0, ECONNREFUSED, EBUSY).
 * MEM_* (remote memory, kernel/data/lmr.c and lmr_host.c) use 80
 * dst_incarnation and, instead of 88..119:
 *   88  u32 access    REMOTE_* bits of enum krcore_access
 *   92  u32 rkey      96 u64 length   104 u64 addr
 *   112 u32 region    the owner's id of the region (never 0)
 *   116 u32 zero
 * MEM_ALLOC carries a length (1 .. KRC_LMR_MAX_LEN) and rights, nothing
 * else; MEM_ALLOC_REP the request's req_id and either status 0 with the
 * region, its rights, length, address and rkey, or a status and nothing;
 * MEM_FREE a region and nothing else; MEM_FREE_REP the region and a
 * status. MEM_SET carries a region, an offset (addr), a length (1 ..
 * KRC_LMR_MAX_LEN) and the byte value (access, 0 .. 255); MEM_SET_REP the
 * region and a status. MEM_COPY carries the destination region and
 * offset (region, addr), the length, and, instead of access, rkey and
 * the zero word, the source's offset and region:
 *   88  u64 src_off   116 u32 src_region
 * MEM_COPY_REP the destination region and a status.
 * MEM_LOCK (a lock on the 8 bytes at offset addr of a region, 8-aligned)
 * carries the region, its rkey (the capability: the owner checks it) and
 * the offset; MEM_LOCK_REP the same three and either status 0
 * with the lock's grant number in length (1, 2, ... in the order granted)
 * or a status and length 0. MEM_UNLOCK carries the region, the rkey, the
 * offset and in length the req_id of the MEM_LOCK it ends (its ticket: it
 * releases the lock that call was granted, or cancels it while it waits);
 * MEM_UNLOCK_REP the region and a status.
 * MEM_PUBLISH (publish a region under a name, in the owner's names table,
 * common/names.h) and MEM_UNPUBLISH (revoke it) carry, instead of 92..119:
 *   92  u8 name[24]   a valid name (names.h)   116 u32 region
 * and PUBLISH the rights in access (a subset of the region's), UNPUBLISH
 * access 0; MEM_PUBLISH_REP the region, the rights, the publication's rkey,
 * length and address, or a status and nothing; MEM_UNPUBLISH_REP the
 * region and a status. MEM_SET may carry an rkey: 0 when the holder sets
 * its own region, else the key of a publication with the REMOTE_WRITE
 * right that the caller looked up.
 * MEM_LOOKUP (a name looked up by a node with no RC connection to READ the
 * owner's names table over) carries a name in the layout of MEM_PUBLISH,
 * access 0 and region 0; MEM_LOOKUP_REP what a READ of the table finds:
 * status 0 with the region, the name's rights, its rkey, the region's
 * length and address, or a status (ENOENT) and nothing.
 *
 * The MetaServer's rdma_cm connection carries two private data blobs:
 * the member's hello (struct krc_meta_hello) in the connect request and
 * the table descriptor (struct krc_mt_desc) in the accept:
 *
 *   hello (40 bytes): 0 u32 magic (KRC_CM_MAGIC)  4 u8 version  5 u8 kind (1)
 *     6 u16 zero  8 u32 node_id  12 u32 zero  16 u64 incarnation
 *     24 u8 nonce[16]   the member's, fresh for this connection
 *   desc (96 bytes):  0 u32 magic (KRC_CM_MAGIC)  4 u8 version  5 u8 kind (2)
 *     6 u16 zero  8 u64 addr  16 u32 rkey  20 u32 nslots  24 u32 nphys
 *     28 u32 zero  32 u64 seed  40 u64 incarnation
 *     48 u8 nonce[16]   the host's, fresh for this connection
 *     64 u8 mac[32]     KRC_MAC_DESC over bytes 0..63 (common/auth.h)
 */
#ifndef KRC_COMMON_PROTO_H
#define KRC_COMMON_PROTO_H

#include "compat.h"
#include "auth.h"
#include "names.h"
#include "../include/uapi/krcore.h"

#define KRC_MSG_MAGIC		0x3143524bU	/* "KRC1" */
#define KRC_MSG_VERSION		2	/* 1: no control MAC */
/* The two-sided data header's version (its own). */
#define KRC_DATA_VERSION	1
#define KRC_MSG_SIZE		128

enum krc_msg_type {
	/* handshake, on the control UD QPs */
	KRC_MSG_CONNECT_REQ	= 1,	/* A -> B: connect my qpn to one of yours */
	KRC_MSG_CONNECT_REP	= 2,	/* B -> A: done, here is mine (RTS) */
	KRC_MSG_CONNECT_NAK	= 3,	/* B -> A: refused, status says why */
	KRC_MSG_RTU		= 4,	/* A -> B: ready to use (A is RTS) */
	KRC_MSG_RTU_ACK		= 5,	/* B -> A: RTU seen */
	KRC_MSG_GOODBYE		= 6,	/* the sender unloads: drop its connections */
	/* closing one idle connection (the RC cap, evict.c) */
	KRC_MSG_CLOSE_REQ	= 7,	/* A -> B: may our qpn/peer_qpn pair go? */
	KRC_MSG_CLOSE_REP	= 8,	/* B -> A: status 0: gone at B; EBUSY: in use */
	/* flow control of two-sided messages (flow.h) */
	KRC_MSG_FLOW_ASK	= 9,	/* sender -> receiver: S, want */
	KRC_MSG_FLOW_GRANT	= 10,	/* receiver -> sender: G, or refused */
	/* remote memory (kernel/data/lmr*.c) */
	KRC_MSG_MEM_ALLOC	= 11,	/* holder -> owner: length, rights */
	KRC_MSG_MEM_ALLOC_REP	= 12,	/* owner -> holder: region, or status */
	KRC_MSG_MEM_FREE	= 13,	/* holder -> owner: region */
	KRC_MSG_MEM_FREE_REP	= 14,	/* owner -> holder: region, status */
	/* remote memory, continued (numbers 16 .. 18 are the MetaServer's) */
	KRC_MSG_MEM_SET		= 19,	/* holder -> owner: region, offset, length, value */
	KRC_MSG_MEM_SET_REP	= 20,	/* owner -> holder: region, status */
	KRC_MSG_MEM_COPY	= 21,	/* holder -> owner: dst, src, length */
	KRC_MSG_MEM_COPY_REP	= 22,	/* owner -> holder: region, status */
	KRC_MSG_MEM_LOCK	= 23,	/* locker -> owner: region, rkey, offset */
	KRC_MSG_MEM_LOCK_REP	= 24,	/* owner -> locker: granted (number), or status */
	KRC_MSG_MEM_UNLOCK	= 25,	/* locker -> owner: region, rkey, offset, ticket */
	KRC_MSG_MEM_UNLOCK_REP	= 26,	/* owner -> locker: region, status */
	KRC_MSG_MEM_PUBLISH	= 27,	/* holder -> owner: region, name, rights */
	KRC_MSG_MEM_PUBLISH_REP	= 28,	/* owner -> holder: its key, or status */
	KRC_MSG_MEM_UNPUBLISH	= 29,	/* holder -> owner: region, name */
	KRC_MSG_MEM_UNPUBLISH_REP = 30,	/* owner -> holder: region, status */
	KRC_MSG_MEM_LOOKUP	= 31,	/* anyone -> owner: name */
	KRC_MSG_MEM_LOOKUP_REP	= 32,	/* owner -> asker: the name's entry, or status */
	/* registration, member <-> MetaServer over RC SEND/RECV */
	KRC_MSG_META_REGISTER	= 16,	/* card: publish it */
	KRC_MSG_META_DEREGISTER	= 17,	/* card: remove it (same incarnation only) */
	KRC_MSG_META_REPLY	= 18,	/* status, slot */
	KRC_MSG_TYPE_MAX	= 32,
};

/* status of NAKs and replies: 0 or a positive errno value. */

/* The largest remote memory region a MEM_ALLOC may ask for (1 TiB). */
#define KRC_LMR_MAX_LEN		KRCORE_LMR_MAX_LEN
#define KRC_LMR_RIGHTS		(KRCORE_ACCESS_REMOTE_READ | \
				 KRCORE_ACCESS_REMOTE_WRITE | \
				 KRCORE_ACCESS_REMOTE_ATOMIC)

struct krc_ctrl_msg {
	u8 type;			/* enum krc_msg_type */
	u16 status;
	u64 req_id;
	struct krcore_card card;	/* the sender's */
	u64 dst_incarnation;
	u32 qpn;
	u32 psn;
	u32 peer_qpn;
	u32 probe_rkey;
	u64 probe_addr;
	u32 probe_len;
	u32 slot;
	/* FLOW_*: instead of qpn .. probe_len */
	u32 port;
	u32 epoch;
	u32 want;
	u64 count;
	/* MEM_*: instead of 88..119 */
	u32 access;
	u32 rkey;
	u64 length;
	u64 addr;
	u32 region;
	u64 src_off;			/* MEM_COPY */
	u32 src_region;
	char name[KRC_NAME_LEN];	/* MEM_PUBLISH, MEM_UNPUBLISH */
	u8 mac[KRC_MAC_LEN];		/* META_*: see above */
	u8 ctrl_mac[KRC_CTRL_MAC_LEN];	/* the others: see above */
};

/* Encode @m into buf[KRC_MSG_SIZE]. */
void krc_msg_encode(const struct krc_ctrl_msg *m, u8 buf[KRC_MSG_SIZE]);

/*
 * Decode and check a received message of @len bytes. Returns 0, or
 * -EBADMSG (short, bad magic, unknown type, reserved bits set, fields out
 * of range for the type), -EPROTO (unknown version) or the card's error.
 * Rules: every type carries a valid sender card; CONNECT_REQ and
 * CONNECT_REP carry a qpn (2 .. 2^24-1) and a psn (< 2^24); REP, RTU and
 * RTU_ACK carry a peer_qpn (2 .. 2^24-1); NAK and META_REPLY statuses are
 * errno values below 4096; FLOW_* carry a port (1 .. 65535), a GRANT no
 * want and a status below 4096; MEM_* as above; other types carry
 * status 0.
 */
int krc_msg_decode(const u8 *buf, size_t len, struct krc_ctrl_msg *m);

/* Is @type one of the MetaServer's (its bytes 80..111 are a MAC)? */
bool krc_msg_is_meta(unsigned int type);
/* Is @type FLOW_ASK or FLOW_GRANT (port, epoch, want, count)? */
bool krc_msg_is_flow(unsigned int type);
/* Is @type one of MEM_* (access, rkey, length, addr, region)? */
bool krc_msg_is_mem(unsigned int type);
/*
 * Is @type MEM_PUBLISH, MEM_UNPUBLISH or MEM_LOOKUP (access, name, region
 * at 116)?
 */
bool krc_msg_is_naming(unsigned int type);

/*
 * Sign @m (a META_* message) for the connection of @n: m->mac becomes the
 * MAC of kind @kind over its wire form with the MAC field zero.
 */
void krc_msg_sign(struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
		  const struct krc_nonces *n, enum krc_mac_kind kind);
/* Does m->mac vouch for @m, of @kind, on the connection of @n? */
bool krc_msg_check_mac(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN],
		       const struct krc_nonces *n, enum krc_mac_kind kind);

/*
 * The control MAC of @m (any type but META_*) under the cluster @key:
 * sign sets m->ctrl_mac, check compares it (false for META_* types).
 */
void krc_msg_ctrl_sign(struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN]);
bool krc_msg_ctrl_check(const struct krc_ctrl_msg *m, const u8 key[KRC_KEY_LEN]);

/* Name of a message type for logs ("?" if unknown). */
const char *krc_msg_type_name(unsigned int type);

/*
 * rdma_cm private data of the MetaServer connection (at most 56 bytes on
 * connect, 196 on accept). Version 2: the nonces and the descriptor's MAC;
 * a version 1 peer (no cluster key) is refused with -EPROTO.
 */
#define KRC_CM_MAGIC		0x4d43524bU	/* "KRCM" */
#define KRC_CM_VERSION		2
#define KRC_CM_HELLO_SIZE	40
#define KRC_MT_DESC_SIZE	96

struct krc_meta_hello {
	u32 node_id;			/* the member's */
	u64 incarnation;		/* the member's */
	u8 nonce[KRC_NONCE_LEN];	/* the member's */
};

/* Where and how the MetaServer's table can be READ. */
struct krc_mt_desc {
	u64 addr;			/* remote address of the table (header) */
	u32 rkey;
	u32 nslots;
	u32 nphys;
	u64 seed;
	u64 incarnation;		/* the MetaServer's */
	u8 nonce[KRC_NONCE_LEN];	/* the host's */
	u8 mac[KRC_MAC_LEN];		/* as decoded; written by _sign() */
};

void krc_meta_hello_encode(const struct krc_meta_hello *h,
			   u8 buf[KRC_CM_HELLO_SIZE]);
int krc_meta_hello_decode(const u8 *buf, size_t len, struct krc_meta_hello *h);
void krc_mt_desc_encode(const struct krc_mt_desc *d, u8 buf[KRC_MT_DESC_SIZE]);
/*
 * Checks magic, version and geometry (nslots a power of two >= 64,
 * nphys = nslots + KRC_MT_SPILL, rkey and incarnation non-zero).
 */
int krc_mt_desc_decode(const u8 *buf, size_t len, struct krc_mt_desc *d);
/*
 * Sign an encoded descriptor for a member whose hello carried
 * @member_nonce (the host's nonce is in the descriptor), or check one.
 */
void krc_mt_desc_sign(u8 buf[KRC_MT_DESC_SIZE], const u8 key[KRC_KEY_LEN],
		      const u8 member_nonce[KRC_NONCE_LEN]);
bool krc_mt_desc_check_mac(const u8 buf[KRC_MT_DESC_SIZE],
			   const u8 key[KRC_KEY_LEN],
			   const u8 member_nonce[KRC_NONCE_LEN]);

/*
 * The 16-byte header the kernel puts in front of a SEND's payload:
 *   0 u16 magic (KRC_DATA_MAGIC)  2 u8 version  3 u8 flags (KRCORE_MSG_F_*)
 *   4 u16 dst_port  6 u16 src_port  8 u32 imm_data  12 u32 zero
 */
#define KRC_DATA_MAGIC		0x4d4b	/* "KM" */
#define KRC_DATA_HDR_SIZE	16

struct krc_data_hdr {
	u8 flags;
	u16 dst_port;
	u16 src_port;
	u32 imm_data;
};

void krc_data_hdr_encode(const struct krc_data_hdr *h, u8 buf[KRC_DATA_HDR_SIZE]);
/* 0, or -EBADMSG (short, magic, flags, reserved) / -EPROTO (version). */
int krc_data_hdr_decode(const u8 *buf, size_t len, struct krc_data_hdr *h);

#endif /* KRC_COMMON_PROTO_H */
