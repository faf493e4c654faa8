/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * kvs_backend.h - the remote memory of the key-value store demo
 * (bench/kvs_demo.c) over krcore (bench/kvs_krcore.c) and over raw
 * verbs with rdma_cm (bench/kvs_verbs.c): the memory node's side
 * (register the region, publish what clients need) and a client's side
 * (connect, then the struct krc_kvs_ops of common/kvs.h).
 */
#ifndef KRC_BENCH_KVS_BACKEND_H
#define KRC_BENCH_KVS_BACKEND_H

#include <stdint.h>

#include "kvs.h"

/* Bytes of a client's registered scratch buffer: every request's data. */
#define KVS_SCRATCH		4096
/* A request not completed in this time fails the operation (-ETIMEDOUT). */
#define KVS_TIMEOUT_MS		10000
/* rdma_cm port of the memory node's verbs listener. */
#define KVS_VERBS_PORT		7480
/* fetch(): bytes per READ, READs in flight (the verbs QP's rd_atomic). */
#define KVS_FETCH_CHUNK		(256U << 10)
#define KVS_FETCH_DEPTH		4

/* What the memory node publishes for one method (DIR/kvs.krcore, .verbs). */
struct kvs_pub {
	char addr[64];		/* the memory node's IP */
	uint64_t raddr;		/* region start, its virtual address */
	uint64_t len;		/* registered bytes */
	uint32_t rkey;
	uint32_t port;		/* rdma_cm port (verbs) */
	uint64_t keys;		/* keys the table was sized for */
};

/* A client's connection to the region. */
struct kvs_conn {
	const char *method;
	const struct krc_kvs_ops *ops;
	void *ctx;
	uint64_t region_len;
	double open_us;		/* device/VQ open */
	double connect_us;	/* connection ready, scratch registered */
	void (*close)(void *ctx);
	/*
	 * A bulk copy for bench/serverless.c: register @dst for this call
	 * and READ [off, off + len) of the region into it, KVS_FETCH_DEPTH
	 * READs of up to KVS_FETCH_CHUNK bytes at a time: 0 or -errno.
	 */
	int (*fetch)(void *ctx, uint64_t off, void *dst, uint64_t len);
};

/* Client side: 0 or a negative errno (a message on stderr). */
int kvs_krcore_connect(const struct kvs_pub *pub, struct kvs_conn *conn);
int kvs_verbs_connect(const struct kvs_pub *pub, struct kvs_conn *conn);

/*
 * Memory node, krcore: register @len bytes at @mem for remote READ,
 * WRITE and atomics; *pub gets raddr, len and rkey. The registration
 * lives as long as the process.
 */
int kvs_krcore_serve(void *mem, uint64_t len, struct kvs_pub *pub);

/*
 * Memory node, verbs: listen with rdma_cm on pub->addr:pub->port, register
 * the region in the listener's PD; *pub gets raddr, len and rkey.
 * kvs_verbs_poll accepts and reaps connections for up to @timeout_ms.
 */
struct kvs_verbs_srv;
int kvs_verbs_serve(void *mem, uint64_t len, struct kvs_pub *pub,
		    struct kvs_verbs_srv **srv);
void kvs_verbs_poll(struct kvs_verbs_srv *srv, int timeout_ms);

#endif /* KRC_BENCH_KVS_BACKEND_H */
