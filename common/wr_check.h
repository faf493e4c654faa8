/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wr_check.h - the malformed-request check: every work request of a VQ
 * passes it before anything reaches the shared QP. Pure function of the
 * request, the VQ's connection and the caller's registrations.
 */
#ifndef KRC_COMMON_WR_CHECK_H
#define KRC_COMMON_WR_CHECK_H

#include "compat.h"
#include "../include/uapi/krcore.h"

/* What the checker needs to know of one registration. */
struct krc_mr_view {
	u64 addr;
	u64 length;
	u32 access;		/* enum krcore_access */
};

struct krc_check_ctx {
	bool connected;		/* the VQ has a connection */
	bool has_port;		/* ... to a remote port (two-sided) */
	bool atomics;		/* the connection carries atomics */
	u32 max_sge;		/* <= KRCORE_MAX_SGE */
	u64 max_msg;		/* READ/WRITE byte limit */
	/* The caller's registration with @lkey, or NULL. */
	const struct krc_mr_view *(*find_mr)(void *arg, u32 lkey);
	void *arg;
};

/*
 * 0 if @wr may be posted, else a negative errno, with *reason the first
 * check it failed (enum krcore_reason). *len gets the bytes it moves.
 * Checks, in order: opcode, flags, reserved fields, connection, SGE count,
 * zero lengths, total length, atomic size and alignment, atomics support,
 * remote port of SENDs and WRITE_IMMs, the WRITE_IMM immediate (16 bits),
 * then each SGE's lkey, range and access.
 */
int krc_wr_check(const struct krcore_wr *wr, const struct krc_check_ctx *ctx,
		 u32 *reason, u64 *len);

/* The errno of a reason (EINVAL, ENOKEY, EFAULT...; 0 for KRCORE_R_OK). */
int krc_reason_errno(u32 reason);

/* A short sentence for a reason ("unknown opcode", ...). */
const char *krc_reason_str(u32 reason);

/* True if the request's local buffers are written (READ, atomics). */
bool krc_wr_writes_local(u8 opcode);

/* True if executing the request twice is harmless (READ, WRITE). */
bool krc_wr_idempotent(u8 opcode);

#endif /* KRC_COMMON_WR_CHECK_H */
