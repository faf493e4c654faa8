// SPDX-License-Identifier: BSD-2-Clause
/*
 * krcore_ep.c - endpoints of the UCT transport "krcore": one VQ connected
 * to the peer's node and port; RMA, atomics and active messages posted on
 * it, their completions, flush, fence, the pending queue and the report
 * of a failed peer.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include "krcore_uct.h"
#include <uct/base/uct_iov.inl>

#define UCT_KRCORE_CQ_BATCH	16

static inline struct uct_krcore_iface *ep_iface(struct uct_krcore_ep *ep)
{
	return ucs_derived_of(ep->super.super.iface, struct uct_krcore_iface);
}

/*
 * The interface progresses only its active endpoints: those with
 * requests in flight, a pending queue, a flush or an error to report.
 */
static void ep_activate(struct uct_krcore_ep *ep)
{
	if (!ep->active) {
		ucs_list_add_tail(&ep_iface(ep)->active, &ep->active_link);
		ep->active = 1;
	}
}

static void ep_deactivate(struct uct_krcore_ep *ep)
{
	if (ep->active) {
		ucs_list_del(&ep->active_link);
		ep->active = 0;
	}
}

/* Errors that say the peer (its process or its node) is gone. */
static int uct_krcore_peer_gone(int err)
{
	switch (-err) {
	case ECONNREFUSED:
	case ENOTCONN:
	case ETIMEDOUT:
	case EHOSTUNREACH:
	case ENODEV:
	case EPIPE:
	case ECONNRESET:
		return 1;
	default:
		return 0;
	}
}

static ucs_status_t uct_krcore_wc_status(uint32_t st)
{
	switch (st) {
	case KRCORE_WC_SUCCESS:
		return UCS_OK;
	case KRCORE_WC_FLUSHED:
		return UCS_ERR_CANCELED;
	case KRCORE_WC_REM_ACCESS_ERR:
	case KRCORE_WC_LOC_PROT_ERR:
		return UCS_ERR_CONNECTION_RESET;
	case KRCORE_WC_RETRY_EXC_ERR:
	case KRCORE_WC_RNR_RETRY_EXC_ERR:
	case KRCORE_WC_UNREACHABLE:
		return UCS_ERR_ENDPOINT_TIMEOUT;
	default:
		return UCS_ERR_IO_ERROR;
	}
}

/* Post @wr for @d on @ep: signaled, fenced if asked. */
static ucs_status_t uct_krcore_post(struct uct_krcore_ep *ep,
				    struct krcore_wr *wr,
				    struct uct_krcore_desc *d)
{
	struct uct_krcore_iface *iface = ep_iface(ep);
	ucs_status_t status;
	int ret;

	if (ep->error != UCS_OK) {
		uct_krcore_desc_put(iface, d);
		return ep->error;
	}
	/*
	 * A fence orders this request after every earlier one; the RNIC's
	 * fence cannot see a CAS loop's retries, posted later: wait for them.
	 */
	if (ep->fence && ep->loops) {
		uct_krcore_desc_put(iface, d);
		ep->blocked = 1;
		return UCS_ERR_NO_RESOURCE;
	}
	wr->wr_id = (uintptr_t)d;
	wr->flags = KRCORE_WR_SIGNALED | (ep->fence ? KRCORE_WR_FENCE : 0);
	ret = krc_qpush(ep->vq, wr, 1);
	if (ret == 1) {
		d->ep = ep;
		ep->fence = 0;
		ep->blocked = 0;
		ep->posted++;
		iface->outstanding++;
		ep_activate(ep);
		return UCS_OK;
	}
	uct_krcore_desc_put(iface, d);
	ucs_trace("krcore: ep %p: qpush opcode %u len %u: %d (reason %u)",
		  ep, wr->opcode, wr->sg_list[0].length, ret,
		  krc_qpush_result(ep->vq)->reason);
	if (ret == -EAGAIN || ret == -EBUSY) {
		ep->blocked = 1;
		return UCS_ERR_NO_RESOURCE;
	}
	status = uct_krcore_errno_status(ret);
	if (uct_krcore_peer_gone(ret)) {
		ucs_debug("krcore: ep %p: %s", ep, krc_errmsg());
		ep->error = UCS_ERR_ENDPOINT_TIMEOUT;
		ep_activate(ep);	/* to report it */
		status = ep->error;
	} else {
		ucs_error("krcore: ep %p: %s", ep, krc_errmsg());
	}
	return status;
}

static struct uct_krcore_desc *get_desc(struct uct_krcore_ep *ep, int buf)
{
	struct uct_krcore_desc *d = uct_krcore_desc_get(ep_iface(ep), buf);

	if (!d)
		ep->blocked = 1;
	return d;
}

static void fill_one(struct krcore_wr *wr, uint8_t opcode, void *addr,
		     uint32_t len, uint32_t lkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = opcode;
	wr->num_sge = 1;
	wr->sg_list[0].addr = (uintptr_t)addr;
	wr->sg_list[0].length = len;
	wr->sg_list[0].lkey = lkey;
}

/* A request on @d's bounce buffer to remote memory. */
static void fill_buf(struct krcore_wr *wr, struct uct_krcore_ep *ep,
		     struct uct_krcore_desc *d, uint8_t opcode, uint32_t len,
		     uint64_t remote_addr, uct_rkey_t rkey)
{
	fill_one(wr, opcode, d->buf, len, ep_iface(ep)->arena_mr.lkey);
	wr->remote_addr = remote_addr;
	wr->rkey = (uint32_t)rkey;
}

static ucs_status_t fill_iov(struct krcore_wr *wr, uint8_t opcode,
			     const uct_iov_t *iov, size_t iovcnt,
			     uint64_t *total)
{
	const struct uct_krcore_memh *memh;
	size_t i, n = 0;

	memset(wr, 0, sizeof(*wr));
	wr->opcode = opcode;
	*total = 0;
	for (i = 0; i < iovcnt; i++) {
		size_t len = uct_iov_get_length(&iov[i]);

		if (!len)
			continue;
		if (n == KRCORE_MAX_SGE || iov[i].memh == UCT_MEM_HANDLE_NULL ||
		    len > UINT32_MAX)
			return UCS_ERR_INVALID_PARAM;
		memh = iov[i].memh;
		wr->sg_list[n].addr = (uintptr_t)iov[i].buffer;
		wr->sg_list[n].length = (uint32_t)len;
		wr->sg_list[n].lkey = memh->mr.lkey;
		*total += len;
		n++;
	}
	wr->num_sge = (uint8_t)n;
	return UCS_OK;
}

/* RMA: put ------------------------------------------------------------- */

ucs_status_t uct_krcore_ep_put_short(uct_ep_h tl_ep, const void *buffer,
				     unsigned int length, uint64_t remote_addr,
				     uct_rkey_t rkey)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_iface *iface = ep_iface(ep);
	struct uct_krcore_desc *d;
	struct krcore_wr wr;

	UCT_CHECK_LENGTH(length, 0, iface->seg_size, "put_short");
	if (!length)
		return UCS_OK;
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	memcpy(d->buf, buffer, length);
	d->kind = UCT_KRCORE_OP_PUT;
	fill_buf(&wr, ep, d, KRCORE_WR_WRITE, length, remote_addr, rkey);
	return uct_krcore_post(ep, &wr, d);
}

ssize_t uct_krcore_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
				void *arg, uint64_t remote_addr,
				uct_rkey_t rkey)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_iface *iface = ep_iface(ep);
	struct uct_krcore_desc *d;
	struct krcore_wr wr;
	ucs_status_t status;
	size_t len;

	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	len = pack_cb(d->buf, arg);
	if (len > iface->seg_size) {
		uct_krcore_desc_put(iface, d);
		return UCS_ERR_INVALID_PARAM;
	}
	if (!len) {
		uct_krcore_desc_put(iface, d);
		return 0;
	}
	d->kind = UCT_KRCORE_OP_PUT;
	fill_buf(&wr, ep, d, KRCORE_WR_WRITE, (uint32_t)len, remote_addr, rkey);
	status = uct_krcore_post(ep, &wr, d);
	return status == UCS_OK ? (ssize_t)len : status;
}

static ucs_status_t zcopy(struct uct_krcore_ep *ep, uint8_t opcode,
			  const uct_iov_t *iov, size_t iovcnt,
			  uint64_t remote_addr, uct_rkey_t rkey,
			  uct_completion_t *comp)
{
	struct uct_krcore_desc *d;
	struct krcore_wr wr;
	ucs_status_t status;
	uint64_t total;

	status = fill_iov(&wr, opcode, iov, iovcnt, &total);
	if (status != UCS_OK) {
		ucs_error("krcore: zero-copy of %zu iov: more than %u, or one not registered",
			  iovcnt, KRCORE_MAX_SGE);
		return status;
	}
	if (!total)
		return UCS_OK;
	if (total > KRCORE_MAX_MSG)
		return UCS_ERR_INVALID_PARAM;
	d = get_desc(ep, 0);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	d->kind = UCT_KRCORE_OP_ZCOPY;
	d->comp = comp;
	wr.remote_addr = remote_addr;
	wr.rkey = (uint32_t)rkey;
	status = uct_krcore_post(ep, &wr, d);
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

ucs_status_t uct_krcore_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
				     size_t iovcnt, uint64_t remote_addr,
				     uct_rkey_t rkey, uct_completion_t *comp)
{
	return zcopy(ucs_derived_of(tl_ep, struct uct_krcore_ep),
		     KRCORE_WR_WRITE, iov, iovcnt, remote_addr, rkey, comp);
}

/* RMA: get ------------------------------------------------------------- */

ucs_status_t uct_krcore_ep_get_bcopy(uct_ep_h tl_ep,
				     uct_unpack_callback_t unpack_cb,
				     void *arg, size_t length,
				     uint64_t remote_addr, uct_rkey_t rkey,
				     uct_completion_t *comp)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_iface *iface = ep_iface(ep);
	struct uct_krcore_desc *d;
	struct krcore_wr wr;
	ucs_status_t status;

	UCT_CHECK_LENGTH(length, 0, iface->seg_size, "get_bcopy");
	if (!length) {
		unpack_cb(arg, NULL, 0);
		return UCS_OK;
	}
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	d->kind = UCT_KRCORE_OP_GET_BCOPY;
	d->unpack = unpack_cb;
	d->arg = arg;
	d->length = (uint32_t)length;
	d->comp = comp;
	fill_buf(&wr, ep, d, KRCORE_WR_READ, (uint32_t)length, remote_addr, rkey);
	status = uct_krcore_post(ep, &wr, d);
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

ucs_status_t uct_krcore_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
				     size_t iovcnt, uint64_t remote_addr,
				     uct_rkey_t rkey, uct_completion_t *comp)
{
	return zcopy(ucs_derived_of(tl_ep, struct uct_krcore_ep),
		     KRCORE_WR_READ, iov, iovcnt, remote_addr, rkey, comp);
}

/* Active messages ------------------------------------------------------ */

static ucs_status_t am_post(struct uct_krcore_ep *ep, uint8_t id,
			    struct uct_krcore_desc *d, size_t len)
{
	struct uct_krcore_iface *iface = ep_iface(ep);
	uint32_t imm = id;
	struct krcore_wr wr;

	if (!len) {
		/* a SEND moves at least a byte: mark the message empty */
		imm |= UCT_KRCORE_IMM_EMPTY;
		len = 1;
	}
	d->kind = UCT_KRCORE_OP_AM;
	fill_one(&wr, KRCORE_WR_SEND_IMM, d->buf, (uint32_t)len,
		 iface->arena_mr.lkey);
	wr.imm_data = imm;
	return uct_krcore_post(ep, &wr, d);
}

ucs_status_t uct_krcore_ep_am_short(uct_ep_h tl_ep, uint8_t id,
				    uint64_t header, const void *payload,
				    unsigned int length)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_desc *d;

	UCT_CHECK_AM_ID(id);
	UCT_CHECK_LENGTH(length + sizeof(header), 0, UCT_KRCORE_AM_MAX,
			 "am_short");
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	memcpy(d->buf, &header, sizeof(header));
	memcpy((char *)d->buf + sizeof(header), payload, length);
	return am_post(ep, id, d, sizeof(header) + length);
}

ucs_status_t uct_krcore_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
					const uct_iov_t *iov, size_t iovcnt)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_desc *d;
	size_t i, len = 0, l;

	UCT_CHECK_AM_ID(id);
	for (i = 0; i < iovcnt; i++)
		len += uct_iov_get_length(&iov[i]);
	UCT_CHECK_LENGTH(len, 0, UCT_KRCORE_AM_MAX, "am_short_iov");
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	len = 0;
	for (i = 0; i < iovcnt; i++) {
		l = uct_iov_get_length(&iov[i]);
		memcpy((char *)d->buf + len, iov[i].buffer, l);
		len += l;
	}
	return am_post(ep, id, d, len);
}

ssize_t uct_krcore_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
			       uct_pack_callback_t pack_cb, void *arg,
			       unsigned int flags)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_iface *iface = ep_iface(ep);
	struct uct_krcore_desc *d;
	ucs_status_t status;
	size_t len;

	UCT_CHECK_AM_ID(id);
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	len = pack_cb(d->buf, arg);
	if (len > UCT_KRCORE_AM_MAX || len > iface->seg_size) {
		uct_krcore_desc_put(iface, d);
		return UCS_ERR_INVALID_PARAM;
	}
	status = am_post(ep, id, d, len);
	return status == UCS_OK ? (ssize_t)len : status;
}

/*
 * Atomics. RDMA has two: fetch-and-add and compare-and-swap on 8 aligned
 * bytes, posted as they are for 64-bit add, fetch-add and CSWAP. Every
 * other (64-bit swap, and, or, xor; all 32-bit ones) is a CAS loop on the
 * aligned 8 bytes that hold the word: CAS(guess, f(guess)), and while the
 * old value it returns is not the guess, that value is the next guess.
 * The other half of a 32-bit word's 8 bytes is compared and written back
 * unchanged, so every operation stays atomic against all the others (the
 * RNIC executes each CAS atomically). One UCT operation however many
 * CASes it takes: a retry is posted from the completion of the CAS before
 * it and counted neither as posted nor as done, so a flush waits for the
 * last. A 32-bit word needs its whole aligned 8 bytes inside the
 * registration.
 */
static uint64_t amo_apply(uint8_t op, uint64_t cur, uint64_t v)
{
	switch (op) {
	case UCT_ATOMIC_OP_ADD:
		return cur + v;
	case UCT_ATOMIC_OP_AND:
		return cur & v;
	case UCT_ATOMIC_OP_OR:
		return cur | v;
	case UCT_ATOMIC_OP_XOR:
		return cur ^ v;
	default:		/* SWAP, CSWAP that matched */
		return v;
	}
}

static uint64_t amo_mask(const struct uct_krcore_amo *a)
{
	return a->size == 4 ? 0xffffffffULL << a->shift : ~0ULL;
}

/* The operation's word in the 8 bytes @old. */
static uint64_t amo_word(const struct uct_krcore_amo *a, uint64_t old)
{
	return (old & amo_mask(a)) >> a->shift;
}

/* The 8 bytes to write over @old: 0 when nothing changes (CSWAP missed). */
static int amo_next(const struct uct_krcore_amo *a, uint64_t old,
		    uint64_t *next)
{
	uint64_t cur = amo_word(a, old), mask = amo_mask(a), v;

	if (a->op == UCT_ATOMIC_OP_CSWAP && cur != a->compare)
		return 0;
	v = amo_apply(a->op, cur, a->operand);
	*next = (old & ~mask) | ((v << a->shift) & mask);
	return 1;
}

/* The CAS of @d comparing with d->amo.guess, on its ep's VQ. */
static int amo_post_cas(struct uct_krcore_ep *ep, struct uct_krcore_desc *d)
{
	struct krcore_wr wr;
	uint64_t next;

	/* nothing to write: a CAS that writes back what it finds reads */
	if (!amo_next(&d->amo, d->amo.guess, &next))
		next = d->amo.guess;
	fill_buf(&wr, ep, d, KRCORE_WR_ATOMIC_CAS, 8, d->amo.raddr,
		 d->amo.rkey);
	wr.compare_add = d->amo.guess;
	wr.swap = next;
	wr.wr_id = (uintptr_t)d;
	wr.flags = KRCORE_WR_SIGNALED;
	return krc_qpush(ep->vq, &wr, 1);
}

/*
 * A CAS of a loop completed with the old value: UCS_OK when the operation
 * is done (its result delivered), UCS_INPROGRESS when the next CAS is
 * posted or waits for room, an error when it cannot be posted.
 */
static ucs_status_t amo_step(struct uct_krcore_ep *ep,
			     struct uct_krcore_desc *d)
{
	uint64_t old, next;
	int ret;

	memcpy(&old, d->buf, sizeof(old));
	if (old != d->amo.guess && amo_next(&d->amo, old, &next)) {
		if (ep->error != UCS_OK)
			return ep->error;	/* no more CASes on it */
		d->amo.guess = old;
		ret = amo_post_cas(ep, d);
		if (ret == 1)
			return UCS_INPROGRESS;
		if (ret != -EAGAIN && ret != -EBUSY)
			return uct_krcore_errno_status(ret);
		d->next_free = ep->amo_wait;	/* progress posts it */
		ep->amo_wait = d;
		return UCS_INPROGRESS;
	}
	/* the guess was right, or a CSWAP found another value: done */
	if (d->result && d->amo.size == 4)
		*(uint32_t *)d->result = (uint32_t)amo_word(&d->amo, old);
	else if (d->result)
		*(uint64_t *)d->result = amo_word(&d->amo, old);
	return UCS_OK;
}

/* The CASes that found no room: again. */
static void amo_post_waiting(struct uct_krcore_ep *ep)
{
	struct uct_krcore_desc *d;
	ucs_status_t status;
	int ret;

	while ((d = ep->amo_wait)) {
		ret = amo_post_cas(ep, d);
		if (ret == -EAGAIN || ret == -EBUSY)
			return;
		ep->amo_wait = d->next_free;
		d->next_free = NULL;
		if (ret == 1)
			continue;
		/* it cannot go: the operation ends with the error */
		status = uct_krcore_errno_status(ret);
		ep->done++;
		ep->loops--;
		ep_iface(ep)->outstanding--;
		if (ep->error == UCS_OK)
			ep->error = status;
		if (d->comp)
			uct_invoke_completion(d->comp, status);
		uct_krcore_desc_put(ep_iface(ep), d);
	}
}

static ucs_status_t atomic(struct uct_krcore_ep *ep, uint8_t opcode,
			   uint64_t add_or_cmp, uint64_t swap,
			   uint64_t remote_addr, uct_rkey_t rkey,
			   uint64_t *result, uct_completion_t *comp)
{
	struct uct_krcore_desc *d;
	struct krcore_wr wr;

	if (remote_addr & 7)
		return UCS_ERR_INVALID_PARAM;
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	d->kind = result ? UCT_KRCORE_OP_FETCH : UCT_KRCORE_OP_PUT;
	d->result = result;
	d->comp = comp;
	fill_buf(&wr, ep, d, opcode, 8, remote_addr, rkey);
	wr.compare_add = add_or_cmp;
	wr.swap = swap;
	return uct_krcore_post(ep, &wr, d);
}

/* The first CAS of a loop on the @size-byte word at @remote_addr. */
static ucs_status_t atomic_loop(struct uct_krcore_ep *ep, uint8_t op,
				unsigned int size, uint64_t value,
				uint64_t compare, uint64_t remote_addr,
				uct_rkey_t rkey, void *result,
				uct_completion_t *comp)
{
	struct uct_krcore_desc *d;
	struct krcore_wr wr;
	ucs_status_t status;
	uint64_t next;

	if (remote_addr & (size - 1))
		return UCS_ERR_INVALID_PARAM;
	d = get_desc(ep, 1);
	if (!d)
		return UCS_ERR_NO_RESOURCE;
	d->kind = UCT_KRCORE_OP_CAS_LOOP;
	d->result = result;
	d->comp = comp;
	memset(&d->amo, 0, sizeof(d->amo));
	d->amo.raddr = remote_addr & ~7ULL;
	d->amo.rkey = (uint32_t)rkey;
	d->amo.operand = value;
	d->amo.compare = compare;
	d->amo.op = op;
	d->amo.size = (uint8_t)size;
	d->amo.shift = (uint8_t)((remote_addr & 7) * 8);
	/* first guess 0: right for a fresh word, else learnt from the CAS */
	d->amo.guess = 0;
	if (!amo_next(&d->amo, 0, &next))
		next = 0;
	fill_buf(&wr, ep, d, KRCORE_WR_ATOMIC_CAS, 8, d->amo.raddr,
		 d->amo.rkey);
	wr.compare_add = 0;
	wr.swap = next;
	status = uct_krcore_post(ep, &wr, d);
	if (status == UCS_OK)
		ep->loops++;
	return status;
}

static int amo_emulated(unsigned int opcode)
{
	return opcode == UCT_ATOMIC_OP_AND || opcode == UCT_ATOMIC_OP_OR ||
	       opcode == UCT_ATOMIC_OP_XOR || opcode == UCT_ATOMIC_OP_SWAP;
}

ucs_status_t uct_krcore_ep_atomic64_post(uct_ep_h tl_ep, unsigned int opcode,
					 uint64_t value, uint64_t remote_addr,
					 uct_rkey_t rkey)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);

	if (opcode == UCT_ATOMIC_OP_ADD)
		return atomic(ep, KRCORE_WR_ATOMIC_FAA, value, 0, remote_addr,
			      rkey, NULL, NULL);
	if (opcode == UCT_ATOMIC_OP_SWAP || !amo_emulated(opcode))
		return UCS_ERR_UNSUPPORTED;
	return atomic_loop(ep, (uint8_t)opcode, 8, value, 0, remote_addr, rkey,
			   NULL, NULL);
}

ucs_status_t uct_krcore_ep_atomic64_fetch(uct_ep_h tl_ep,
					  uct_atomic_op_t opcode,
					  uint64_t value, uint64_t *result,
					  uint64_t remote_addr,
					  uct_rkey_t rkey,
					  uct_completion_t *comp)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	ucs_status_t status;

	if (opcode == UCT_ATOMIC_OP_ADD)
		status = atomic(ep, KRCORE_WR_ATOMIC_FAA, value, 0,
				remote_addr, rkey, result, comp);
	else if (amo_emulated(opcode))
		status = atomic_loop(ep, (uint8_t)opcode, 8, value, 0,
				     remote_addr, rkey, result, comp);
	else
		return UCS_ERR_UNSUPPORTED;
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

ucs_status_t uct_krcore_ep_atomic_cswap64(uct_ep_h tl_ep, uint64_t compare,
					  uint64_t swap, uint64_t remote_addr,
					  uct_rkey_t rkey, uint64_t *result,
					  uct_completion_t *comp)
{
	ucs_status_t status;

	status = atomic(ucs_derived_of(tl_ep, struct uct_krcore_ep),
			KRCORE_WR_ATOMIC_CAS, compare, swap, remote_addr, rkey,
			result, comp);
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

ucs_status_t uct_krcore_ep_atomic32_post(uct_ep_h tl_ep, unsigned int opcode,
					 uint32_t value, uint64_t remote_addr,
					 uct_rkey_t rkey)
{
	if (opcode != UCT_ATOMIC_OP_ADD && !amo_emulated(opcode))
		return UCS_ERR_UNSUPPORTED;
	if (opcode == UCT_ATOMIC_OP_SWAP)
		return UCS_ERR_UNSUPPORTED;
	return atomic_loop(ucs_derived_of(tl_ep, struct uct_krcore_ep),
			   (uint8_t)opcode, 4, value, 0, remote_addr, rkey,
			   NULL, NULL);
}

ucs_status_t uct_krcore_ep_atomic32_fetch(uct_ep_h tl_ep, unsigned int opcode,
					  uint32_t value, uint32_t *result,
					  uint64_t remote_addr,
					  uct_rkey_t rkey,
					  uct_completion_t *comp)
{
	ucs_status_t status;

	if (opcode != UCT_ATOMIC_OP_ADD && !amo_emulated(opcode))
		return UCS_ERR_UNSUPPORTED;
	status = atomic_loop(ucs_derived_of(tl_ep, struct uct_krcore_ep),
			     (uint8_t)opcode, 4, value, 0, remote_addr, rkey,
			     result, comp);
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

ucs_status_t uct_krcore_ep_atomic_cswap32(uct_ep_h tl_ep, uint32_t compare,
					  uint32_t swap, uint64_t remote_addr,
					  uct_rkey_t rkey, uint32_t *result,
					  uct_completion_t *comp)
{
	ucs_status_t status;

	status = atomic_loop(ucs_derived_of(tl_ep, struct uct_krcore_ep),
			     UCT_ATOMIC_OP_CSWAP, 4, swap, compare,
			     remote_addr, rkey, result, comp);
	return status == UCS_OK ? UCS_INPROGRESS : status;
}

/* Completions, flush, fence, pending ----------------------------------- */

void uct_krcore_ep_complete(struct uct_krcore_iface *iface,
			    const struct krcore_cqe *cqe)
{
	struct uct_krcore_desc *d = (struct uct_krcore_desc *)(uintptr_t)
		cqe->wr_id;
	struct uct_krcore_ep *ep = d->ep;
	ucs_status_t status = uct_krcore_wc_status(cqe->status);

	/* a CAS of a loop: the next one, or the operation's end */
	if (d->kind == UCT_KRCORE_OP_CAS_LOOP && ep) {
		if (status == UCS_OK)
			status = amo_step(ep, d);
		if (status == UCS_INPROGRESS)
			return;
		ep->loops--;
	}
	if (ep) {
		ep->done++;
		iface->outstanding--;
		ep->blocked = 0;
		if (status != UCS_OK && status != UCS_ERR_CANCELED &&
		    ep->error == UCS_OK) {
			ucs_debug("krcore: ep %p: request failed: %s", ep,
				  krc_wc_status_str(cqe->status));
			ep->error = status;
		}
	}
	if (status == UCS_OK) {
		if (d->kind == UCT_KRCORE_OP_GET_BCOPY)
			d->unpack(d->arg, d->buf, d->length);
		else if (d->kind == UCT_KRCORE_OP_FETCH)
			memcpy(d->result, d->buf, sizeof(uint64_t));
	}
	if (d->comp)
		uct_invoke_completion(d->comp, status);
	uct_krcore_desc_put(iface, d);
}

static unsigned int ep_dispatch_pending(struct uct_krcore_ep *ep)
{
	ucs_queue_elem_t *elem;
	uct_pending_req_t *req;
	ucs_status_t status;
	unsigned int n = 0;

	while (!ucs_queue_is_empty(&ep->pending)) {
		/*
		 * Off the queue while it runs: a flush on the queue calls
		 * uct_ep_flush, which must not find itself there (it would
		 * say NO_RESOURCE for ever). Back at the head if not done.
		 */
		elem = ucs_queue_pull_non_empty(&ep->pending);
		req = ucs_container_of(elem, uct_pending_req_t, priv);
		status = req->func(req);
		ucs_trace("krcore: ep %p: pending dispatch: %s", ep,
			  ucs_status_string(status));
		if (status == UCS_OK) {
			n++;
			continue;
		}
		ucs_queue_push_head(&ep->pending, elem);
		break;	/* INPROGRESS: called again next time; else no room */
	}
	return n;
}

unsigned int uct_krcore_ep_progress(struct uct_krcore_iface *iface,
				    struct uct_krcore_ep *ep)
{
	struct krcore_cqe cqes[UCT_KRCORE_CQ_BATCH];
	struct uct_krcore_flush *f;
	unsigned int n = 0;
	int i, k;

	if (ep->posted != ep->done) {
		k = krc_qpop(ep->vq, cqes, UCT_KRCORE_CQ_BATCH);
		for (i = 0; i < k; i++)
			uct_krcore_ep_complete(iface, &cqes[i]);
		if (k > 0)
			n += (unsigned int)k;
		if (ep->amo_wait)
			amo_post_waiting(ep);
	}
	while (!ucs_queue_is_empty(&ep->flushq)) {
		f = ucs_queue_head_elem_non_empty(&ep->flushq,
						  struct uct_krcore_flush,
						  queue);
		if (ep->done < f->target)
			break;
		ucs_queue_pull_non_empty(&ep->flushq);
		uct_invoke_completion(f->comp, ep->error);
		ucs_free(f);
		n++;
	}
	if (ep->error != UCS_OK && !ep->error_reported &&
	    ep->posted == ep->done) {
		/* after the last completion: UCX may destroy the ep now */
		ep->error_reported = 1;
		uct_iface_handle_ep_err(&iface->super.super, &ep->super.super,
					ep->error);
		return n + 1;
	}
	if (ep->error == UCS_OK && !ucs_queue_is_empty(&ep->pending))
		n += ep_dispatch_pending(ep);
	if (ep->posted == ep->done && ucs_queue_is_empty(&ep->pending) &&
	    ucs_queue_is_empty(&ep->flushq) &&
	    (ep->error == UCS_OK || ep->error_reported))
		ep_deactivate(ep);
	return n;
}

ucs_status_t uct_krcore_ep_flush(uct_ep_h tl_ep, unsigned int flags,
				 uct_completion_t *comp)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	struct uct_krcore_flush *f;

	ucs_trace("krcore: flush ep %p flags 0x%x posted %llu done %llu pending %d",
		  ep, flags, (unsigned long long)ep->posted,
		  (unsigned long long)ep->done,
		  !ucs_queue_is_empty(&ep->pending));
	if (!ucs_queue_is_empty(&ep->pending) &&
	    !(flags & UCT_FLUSH_FLAG_CANCEL))
		return UCS_ERR_NO_RESOURCE;
	if (ep->posted == ep->done)
		return UCS_OK;
	if (!comp)
		return UCS_INPROGRESS;
	f = ucs_malloc(sizeof(*f), "krcore flush");
	if (!f)
		return UCS_ERR_NO_MEMORY;
	/* completions of a VQ come in the order of its requests */
	f->target = ep->posted;
	f->comp = comp;
	ucs_queue_push(&ep->flushq, &f->queue);
	return UCS_INPROGRESS;
}

ucs_status_t uct_krcore_ep_fence(uct_ep_h tl_ep, unsigned int flags)
{
	ucs_derived_of(tl_ep, struct uct_krcore_ep)->fence = 1;
	return UCS_OK;
}

/*
 * Is the peer still there? The receiving port is asked for a slot without
 * waiting: ECONNREFUSED when no process has it bound any more (the peer
 * process is gone), ENOTCONN when the connection is lost for good.
 */
ucs_status_t uct_krcore_ep_check(uct_ep_h tl_ep, unsigned int flags,
				 uct_completion_t *comp)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	int ret;

	if (ep->error != UCS_OK)
		return UCS_OK;
	ret = krc_qflow_wait(ep->vq, 0);
	if (ret == -ECONNREFUSED || ret == -ENOTCONN) {
		ep->error = UCS_ERR_ENDPOINT_TIMEOUT;
		ep_activate(ep);
	}
	return UCS_OK;
}

ucs_status_t uct_krcore_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *r,
				       unsigned int flags)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);

	ucs_trace("krcore: ep %p: pending add (blocked %u)", ep, ep->blocked);
	if (!ep->blocked && ucs_queue_is_empty(&ep->pending))
		return UCS_ERR_BUSY;
	UCS_STATIC_ASSERT(sizeof(ucs_queue_elem_t) <= UCT_PENDING_REQ_PRIV_LEN);
	ucs_queue_push(&ep->pending, (ucs_queue_elem_t *)r->priv);
	ep_activate(ep);
	return UCS_OK;
}

void uct_krcore_ep_pending_purge(uct_ep_h tl_ep,
				 uct_pending_purge_callback_t cb, void *arg)
{
	struct uct_krcore_ep *ep = ucs_derived_of(tl_ep, struct uct_krcore_ep);
	uct_pending_req_t *req;

	while (!ucs_queue_is_empty(&ep->pending)) {
		req = ucs_container_of(ucs_queue_pull_non_empty(&ep->pending),
				       uct_pending_req_t, priv);
		if (cb)
			cb(req, arg);
	}
}

/* Create and destroy --------------------------------------------------- */

static UCS_CLASS_INIT_FUNC(uct_krcore_ep_t, const uct_ep_params_t *params)
{
	struct uct_krcore_iface *iface =
		ucs_derived_of(params->iface, struct uct_krcore_iface);
	struct uct_krcore_dev_addr dev;
	struct uct_krcore_iface_addr ia;
	struct krcore_qconnect qc;
	int ret;

	UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);
	if (!(params->field_mask & UCT_EP_PARAM_FIELD_DEV_ADDR) ||
	    !(params->field_mask & UCT_EP_PARAM_FIELD_IFACE_ADDR))
		return UCS_ERR_INVALID_PARAM;
	memcpy(&dev, params->dev_addr, sizeof(dev));
	memcpy(&ia, params->iface_addr, sizeof(ia));
	if (!ia.port)
		return UCS_ERR_INVALID_PARAM;
	/* UCS classes are not zeroed */
	self->vq = NULL;
	self->posted = 0;
	self->done = 0;
	self->fence = 0;
	self->blocked = 0;
	self->error_reported = 0;
	self->active = 0;
	self->amo_wait = NULL;
	self->loops = 0;
	ucs_queue_head_init(&self->flushq);
	ucs_queue_head_init(&self->pending);
	self->error = UCS_OK;
	self->peer_port = ia.port;
	ret = krc_vq_open(&self->vq);
	if (ret < 0) {
		ucs_error("krcore: %s", krc_errmsg());
		return uct_krcore_errno_status(ret);
	}
	ret = krc_qconnect_gid(self->vq, dev.gid, ia.port, iface->connect_ms,
			       &qc);
	if (ret < 0) {
		ucs_error("krcore: connecting to port %u: %s", ia.port,
			  krc_errmsg());
		krc_vq_close(self->vq);
		return uct_krcore_errno_status(ret);
	}
	ucs_list_add_tail(&iface->eps, &self->list);
	uct_krcore_iface_add_ep_fd(iface, krc_vq_fd(self->vq));
	ucs_debug("krcore: ep %p to port %u (path 0x%x, %llu ns)", self,
		  ia.port, qc.path, (unsigned long long)qc.elapsed_ns);
	return UCS_OK;
}

static UCS_CLASS_CLEANUP_FUNC(uct_krcore_ep_t)
{
	struct uct_krcore_iface *iface = ep_iface(self);
	struct uct_krcore_flush *f;
	unsigned int i;

	uct_krcore_ep_pending_purge(&self->super.super, NULL, NULL);
	ucs_queue_for_each_extract(f, &self->flushq, queue, 1)
		ucs_free(f);
	ucs_list_del(&self->list);
	ep_deactivate(self);
	self->amo_wait = NULL;	/* their descriptors point at it: below */
	/* closing the VQ ends its requests: take their descriptors back */
	krc_vq_close(self->vq);
	for (i = 0; i < 2 * iface->nsegs; i++) {
		struct uct_krcore_desc *d = &iface->descs[i];

		if (d->ep == self) {
			iface->outstanding--;
			uct_krcore_desc_put(iface, d);
		}
	}
}

UCS_CLASS_DEFINE(uct_krcore_ep_t, uct_base_ep_t);
UCS_CLASS_DEFINE_NEW_FUNC(uct_krcore_ep_t, uct_ep_t, const uct_ep_params_t *);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_krcore_ep_t, uct_ep_t);
