// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr_check.c - the malformed-request check of every work request.
 */
#include "wr_check.h"

bool krc_wr_writes_local(u8 opcode)
{
	return opcode == KRCORE_WR_READ || opcode == KRCORE_WR_ATOMIC_CAS ||
	       opcode == KRCORE_WR_ATOMIC_FAA;
}

bool krc_wr_idempotent(u8 opcode)
{
	return opcode == KRCORE_WR_READ || opcode == KRCORE_WR_WRITE;
}

static bool krc_wr_is_atomic(u8 opcode)
{
	return opcode == KRCORE_WR_ATOMIC_CAS || opcode == KRCORE_WR_ATOMIC_FAA;
}

static bool krc_wr_is_send(u8 opcode)
{
	return opcode == KRCORE_WR_SEND || opcode == KRCORE_WR_SEND_IMM;
}

static int krc_fail_check(u32 *reason, u32 r)
{
	*reason = r;
	return -krc_reason_errno(r);
}

int krc_wr_check(const struct krcore_wr *wr, const struct krc_check_ctx *ctx,
		 u32 *reason, u64 *len)
{
	bool writes = krc_wr_writes_local(wr->opcode);
	u64 total = 0;
	u32 i;

	*len = 0;
	if (wr->opcode < KRCORE_WR_READ || wr->opcode > KRCORE_WR_ATOMIC_FAA)
		return krc_fail_check(reason, KRCORE_R_OPCODE);
	if (wr->flags & ~(KRCORE_WR_SIGNALED | KRCORE_WR_FENCE))
		return krc_fail_check(reason, KRCORE_R_FLAGS);
	if (wr->reserved0 || wr->reserved1)
		return krc_fail_check(reason, KRCORE_R_RESERVED);
	if (!ctx->connected)
		return krc_fail_check(reason, KRCORE_R_NOT_CONNECTED);
	if (!wr->num_sge || wr->num_sge > ctx->max_sge ||
	    wr->num_sge > KRCORE_MAX_SGE)
		return krc_fail_check(reason, KRCORE_R_NUM_SGE);
	for (i = 0; i < wr->num_sge; i++) {
		if (!wr->sg_list[i].length)
			return krc_fail_check(reason, KRCORE_R_ZERO_LENGTH);
		total += wr->sg_list[i].length;
	}
	if (krc_wr_is_send(wr->opcode) ? total > KRCORE_MAX_SEND :
	    total > ctx->max_msg || total > KRCORE_MAX_MSG)
		return krc_fail_check(reason, KRCORE_R_TOO_LONG);
	if (krc_wr_is_atomic(wr->opcode)) {
		if (wr->num_sge != 1 || total != 8)
			return krc_fail_check(reason, KRCORE_R_ATOMIC_SIZE);
		if (wr->remote_addr & 7)
			return krc_fail_check(reason, KRCORE_R_ATOMIC_ALIGN);
		if (!ctx->atomics)
			return krc_fail_check(reason, KRCORE_R_UNSUPPORTED);
	}
	if ((krc_wr_is_send(wr->opcode) || wr->opcode == KRCORE_WR_WRITE_IMM) &&
	    !ctx->has_port)
		return krc_fail_check(reason, KRCORE_R_NO_PORT);
	if (wr->opcode == KRCORE_WR_WRITE_IMM && wr->imm_data > 0xffff)
		return krc_fail_check(reason, KRCORE_R_IMM);
	for (i = 0; i < wr->num_sge; i++) {
		const struct krcore_sge *sge = &wr->sg_list[i];
		const struct krc_mr_view *mr = ctx->find_mr(ctx->arg, sge->lkey);

		if (!mr)
			return krc_fail_check(reason, KRCORE_R_LKEY);
		/* Without overflow, even for a range that ends at 2^64. */
		if (sge->addr < mr->addr || sge->addr - mr->addr > mr->length ||
		    sge->length > mr->length - (sge->addr - mr->addr))
			return krc_fail_check(reason, KRCORE_R_RANGE);
		if (writes && !(mr->access & KRCORE_ACCESS_LOCAL_WRITE))
			return krc_fail_check(reason, KRCORE_R_ACCESS);
	}
	*reason = KRCORE_R_OK;
	*len = total;
	return 0;
}

int krc_reason_errno(u32 reason)
{
	static const unsigned char errnos[KRCORE_R_MAX] = {
		[KRCORE_R_OK] = 0,
		[KRCORE_R_OPCODE] = EINVAL,
		[KRCORE_R_FLAGS] = EINVAL,
		[KRCORE_R_RESERVED] = EINVAL,
		[KRCORE_R_NUM_SGE] = EINVAL,
		[KRCORE_R_ZERO_LENGTH] = EINVAL,
		[KRCORE_R_TOO_LONG] = EMSGSIZE,
		[KRCORE_R_ATOMIC_SIZE] = EINVAL,
		[KRCORE_R_ATOMIC_ALIGN] = EINVAL,
		[KRCORE_R_LKEY] = ENOKEY,
		[KRCORE_R_RANGE] = EFAULT,
		[KRCORE_R_ACCESS] = EACCES,
		[KRCORE_R_NOT_CONNECTED] = ENOTCONN,
		[KRCORE_R_NO_PORT] = EDESTADDRREQ,
		[KRCORE_R_UNSUPPORTED] = EOPNOTSUPP,
		[KRCORE_R_VQ_FULL] = EAGAIN,
		[KRCORE_R_QP_FULL] = EAGAIN,
		[KRCORE_R_RECOVERING] = EAGAIN,
		[KRCORE_R_IMM] = EINVAL,
		[KRCORE_R_FAULT] = EFAULT,
		[KRCORE_R_THROTTLED] = EBUSY,
		[KRCORE_R_RKEY] = EACCES,
		[KRCORE_R_NO_CREDIT] = EAGAIN,
		[KRCORE_R_REFUSED] = ECONNREFUSED,
	};

	return reason < KRCORE_R_MAX ? errnos[reason] : EINVAL;
}

const char *krc_reason_str(u32 reason)
{
	static const char * const str[KRCORE_R_MAX] = {
		[KRCORE_R_OK] = "ok",
		[KRCORE_R_OPCODE] = "unknown opcode",
		[KRCORE_R_FLAGS] = "unknown flags",
		[KRCORE_R_RESERVED] = "reserved field not zero",
		[KRCORE_R_NUM_SGE] = "no SGE or too many SGEs",
		[KRCORE_R_ZERO_LENGTH] = "an SGE of length zero",
		[KRCORE_R_TOO_LONG] = "longer than the connection carries",
		[KRCORE_R_ATOMIC_SIZE] = "an atomic moves exactly 8 bytes in one SGE",
		[KRCORE_R_ATOMIC_ALIGN] = "atomic remote address not 8-byte aligned",
		[KRCORE_R_LKEY] = "lkey not registered by this process",
		[KRCORE_R_RANGE] = "local buffer outside its registration",
		[KRCORE_R_ACCESS] = "registration lacks local write access",
		[KRCORE_R_NOT_CONNECTED] = "VQ not connected",
		[KRCORE_R_NO_PORT] = "SEND or WRITE_IMM from a VQ connected without a port",
		[KRCORE_R_UNSUPPORTED] = "the connection cannot carry it",
		[KRCORE_R_VQ_FULL] = "VQ queue full",
		[KRCORE_R_QP_FULL] = "shared send queue full",
		[KRCORE_R_RECOVERING] = "connection being re-established",
		[KRCORE_R_IMM] = "WRITE_IMM immediate beyond 16 bits",
		[KRCORE_R_FAULT] = "the request array could not be read",
		[KRCORE_R_THROTTLED] = "throttled: this process broke shared connections too often",
		[KRCORE_R_RKEY] = "loopback rkey not registered by this process",
		[KRCORE_R_NO_CREDIT] = "the receiving port has no slot for it yet",
		[KRCORE_R_REFUSED] = "no process has the receiving port bound",
	};

	return reason < KRCORE_R_MAX && str[reason] ? str[reason] : "?";
}
