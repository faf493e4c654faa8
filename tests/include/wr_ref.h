/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * wr_ref.h - a reference for the request check, written from its
 * documentation (common/wr_check.h and the "Data plane" section of
 * include/uapi/krcore.h), not from common/wr_check.c. The unit tests and
 * the fuzzer compare krc_wr_check() against it.
 */
#ifndef KRC_TESTS_WR_REF_H
#define KRC_TESTS_WR_REF_H

#include <errno.h>
#include "wr_check.h"

static inline bool ref_op_known(u8 op)
{
	return op >= KRCORE_WR_READ && op <= KRCORE_WR_ATOMIC_FAA;
}

static inline bool ref_op_send(u8 op)
{
	return op == KRCORE_WR_SEND || op == KRCORE_WR_SEND_IMM;
}

/* Two-sided: goes to a remote port (SEND, SEND_IMM, WRITE_IMM). */
static inline bool ref_op_to_port(u8 op)
{
	return ref_op_send(op) || op == KRCORE_WR_WRITE_IMM;
}

static inline bool ref_op_atomic(u8 op)
{
	return op == KRCORE_WR_ATOMIC_CAS || op == KRCORE_WR_ATOMIC_FAA;
}

/* Its local buffers are written: READ, atomics. */
static inline bool ref_op_writes(u8 op)
{
	return op == KRCORE_WR_READ || ref_op_atomic(op);
}

/* Is [addr, addr + len) inside @mr? Without overflow. */
static inline bool ref_inside(const struct krc_mr_view *mr, u64 addr, u32 len)
{
	u64 off;

	if (addr < mr->addr)
		return false;
	off = addr - mr->addr;
	return off <= mr->length && len <= mr->length - off;
}

/*
 * What krc_wr_check() returns for each reason: 0 or the negative errno
 * that include/uapi/krcore.h documents (-1 for a value out of range).
 */
static inline int ref_errno(u32 r)
{
	switch (r) {
	case KRCORE_R_OK:
		return 0;
	case KRCORE_R_OPCODE:
	case KRCORE_R_FLAGS:
	case KRCORE_R_RESERVED:
	case KRCORE_R_NUM_SGE:
	case KRCORE_R_ZERO_LENGTH:
	case KRCORE_R_ATOMIC_SIZE:
	case KRCORE_R_ATOMIC_ALIGN:
	case KRCORE_R_IMM:		/* "malformed" */
		return -EINVAL;
	case KRCORE_R_LKEY:
		return -ENOKEY;
	case KRCORE_R_RANGE:
		return -EFAULT;
	case KRCORE_R_ACCESS:
		return -EACCES;
	case KRCORE_R_TOO_LONG:
		return -EMSGSIZE;
	case KRCORE_R_NOT_CONNECTED:
		return -ENOTCONN;
	case KRCORE_R_NO_PORT:
		return -EDESTADDRREQ;
	case KRCORE_R_VQ_FULL:
	case KRCORE_R_QP_FULL:
	case KRCORE_R_RECOVERING:	/* "retry later" */
		return -EAGAIN;
	case KRCORE_R_UNSUPPORTED:
		return -EOPNOTSUPP;
	case KRCORE_R_FAULT:
		return -EFAULT;
	case KRCORE_R_THROTTLED:
		return -EBUSY;
	case KRCORE_R_RKEY:
		return -EACCES;
	case KRCORE_R_NO_CREDIT:
		return -EAGAIN;
	case KRCORE_R_REFUSED:
		return -ECONNREFUSED;
	default:
		return -1;
	}
}

/*
 * The documented checks, in the documented order. @find gives the
 * caller's registration of an lkey (or NULL). Returns the reason; *len the
 * bytes moved when it is KRCORE_R_OK.
 */
static inline u32 ref_check(const struct krcore_wr *w,
			    const struct krc_check_ctx *c,
			    const struct krc_mr_view *(*find)(const void *arg, u32 lkey),
			    const void *arg, u64 *len)
{
	u32 max_sge = c->max_sge < KRCORE_MAX_SGE ? c->max_sge : KRCORE_MAX_SGE;
	/* a context claiming more than the ABI is held to the ABI */
	u64 max_msg = c->max_msg < KRCORE_MAX_MSG ? c->max_msg : KRCORE_MAX_MSG;
	u64 sum = 0;
	u32 i;

	if (!ref_op_known(w->opcode))
		return KRCORE_R_OPCODE;
	if (w->flags & ~(KRCORE_WR_SIGNALED | KRCORE_WR_FENCE))
		return KRCORE_R_FLAGS;
	if (w->reserved0 || w->reserved1)
		return KRCORE_R_RESERVED;
	if (!c->connected)
		return KRCORE_R_NOT_CONNECTED;
	if (w->num_sge == 0 || w->num_sge > max_sge)
		return KRCORE_R_NUM_SGE;
	for (i = 0; i < w->num_sge; i++) {
		if (!w->sg_list[i].length)
			return KRCORE_R_ZERO_LENGTH;
		sum += w->sg_list[i].length;
	}
	/* a SEND is held to KRCORE_MAX_SEND, anything else to max_msg */
	if (sum > (ref_op_send(w->opcode) ? KRCORE_MAX_SEND : max_msg))
		return KRCORE_R_TOO_LONG;
	if (ref_op_atomic(w->opcode)) {
		if (w->num_sge != 1 || sum != 8)
			return KRCORE_R_ATOMIC_SIZE;
		if (w->remote_addr % 8)
			return KRCORE_R_ATOMIC_ALIGN;
		if (!c->atomics)
			return KRCORE_R_UNSUPPORTED;
	}
	if (ref_op_to_port(w->opcode) && !c->has_port)
		return KRCORE_R_NO_PORT;
	/* 16 bits of immediate, the other 16 name the port */
	if (w->opcode == KRCORE_WR_WRITE_IMM && w->imm_data > 0xffff)
		return KRCORE_R_IMM;
	for (i = 0; i < w->num_sge; i++) {
		const struct krcore_sge *g = &w->sg_list[i];
		const struct krc_mr_view *mr = find(arg, g->lkey);

		if (!mr)
			return KRCORE_R_LKEY;
		if (!ref_inside(mr, g->addr, g->length))
			return KRCORE_R_RANGE;
		if (ref_op_writes(w->opcode) &&
		    !(mr->access & KRCORE_ACCESS_LOCAL_WRITE))
			return KRCORE_R_ACCESS;
	}
	*len = sum;
	return KRCORE_R_OK;
}

#endif /* KRC_TESTS_WR_REF_H */
