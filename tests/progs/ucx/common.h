/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ucx/common.h - what the UCP test programs (tests/progs/ucx_*.c, one case
 * each) share: checks counted and reported ("ok: WHAT", "FAIL: WHAT:
 * DETAIL", a last line "PROG: ROLE N checks, M failed"), a limit on every
 * wait and on the whole program, patterned data, requests waited for,
 * the worker and its one endpoint, and the info files through which two
 * processes on two nodes exchange worker addresses and rkeys. Linked into
 * each program (Makefile: UCX_COMMON); only Debian's UCX beneath.
 */
#ifndef KRC_TESTS_UCX_COMMON_H
#define KRC_TESTS_UCX_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define OP_TIMEOUT	30		/* seconds an operation may take */
#define STEP_TIMEOUT	60		/* seconds for the peer's next step */
#define FILE_TIMEOUT	60		/* seconds for the peer's file */
#define INFO_MAGIC	0x6b726378U	/* "krcx" */
#define STEP_LEN	96

/* The head of an info file: the rkey, then the worker address follow. */
struct info_hdr {
	uint32_t magic;
	uint32_t pad;
	uint64_t buf_addr;
	uint64_t rkey_len;
	uint64_t addr_len;
};

extern const char *role;
extern unsigned int n_checks, n_failed;
extern ucp_context_h ctx;
extern ucp_worker_h worker;
extern ucp_ep_h ep;		/* the one endpoint to the peer */
extern const char *phase;	/* for the alarm's report */
extern char step[];		/* where in a check: in a timeout's report */

/* Reporting */
void ucx_start(const char *prog_name, const char *role_name,
	       unsigned int prog_timeout);
void summary(void);
void pass(const char *what);
__attribute__((format(printf, 2, 3)))
void fail(const char *what, const char *fmt, ...);
__attribute__((noreturn, format(printf, 2, 3)))
void fatal(const char *what, const char *fmt, ...);
__attribute__((format(printf, 1, 2)))
void set_step(const char *fmt, ...);
__attribute__((noreturn)) void timed_out(const char *what);

/* Data */
uint8_t pat(uint64_t i, uint64_t size, uint64_t seed);
void fill(uint8_t *p, size_t len, uint64_t size, uint64_t seed);
uint64_t verify(const uint8_t *p, size_t len, uint64_t from, uint64_t size,
		uint64_t seed, uint64_t *first);
uint64_t fnv1a(const uint8_t *p, size_t len);
void *xmalloc(size_t len);

/* Waits */
double now(void);
ucs_status_t wait_req(void *req, const char *what, int secs,
		      ucp_tag_recv_info_t *info);
void *post_send(const void *buf, size_t len, ucp_tag_t tag);
void *post_recv(void *buf, size_t len, ucp_tag_t tag,
		ucp_tag_recv_info_t *info);
void send_wait(const void *buf, size_t len, ucp_tag_t tag, const char *what,
	       int secs);
void recv_wait(void *buf, size_t len, ucp_tag_t tag, const char *what,
	       int secs);
ucs_status_t flush_ep(const char *what);

/* Set up */
void ucx_init(ucp_address_t **addr, size_t *addr_len);
void connect_to(const void *addr, ucp_err_handler_cb_t on_error);
void write_info(const char *dir, const char *name, uint64_t buf_addr,
		const void *rkey, size_t rkey_len, const void *addr,
		size_t addr_len);
uint8_t *read_info(const char *dir, const char *name, struct info_hdr *h,
		   int secs);

#endif
