// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_lmr_hash - a hash table in memory on one node, shared by processes
 * on any nodes with no lock: a slot is claimed with the owner's RNIC
 * compare-and-swap, found with one READ per probe.
 *
 *   krc_lmr_hash hold NODE FILE      allocate the table on NODE, write
 *                                    "NODE ADDR RKEY" to FILE, wait for
 *                                    SIGTERM, print "entries N", free it
 *   krc_lmr_hash put FILE FIRST N    insert keys FIRST .. FIRST+N-1, each
 *                                    with the value 7 * key + 1
 *   krc_lmr_hash get FILE FIRST N    look them up, print "found N" (a key
 *                                    missing or a wrong value: exit 1)
 *
 * The table: SLOTS slots of 16 bytes, a key (0: empty) and its value;
 * open addressing, linear probing. An inserter claims an empty slot by a
 * CAS of its key from 0, then WRITEs the value; a reader that finds the
 * key before its value (0: never a value) reads the slot again.
 *
 * Build: cc krc_lmr_hash.c $(pkg-config --cflags --libs libkrcore)
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <libkrcore.h>

#define SLOTS	512
#define SIZE	(SLOTS * 16)

static int fail(const char *what)
{
	fprintf(stderr, "krc_lmr_hash: %s: %s\n", what, krc_errmsg());
	return 1;
}

static uint64_t slot_of(uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ULL >> 32) % SLOTS;
}

/* A VQ connected to @node, and 4 KiB registered for the requests. */
static int open_vq(const char *node, struct krc_vq **vq, uint64_t **buf,
		   struct krc_mr *mr)
{
	struct krcore_qconnect qc;

	*buf = aligned_alloc(4096, 4096);
	if (!*buf || krc_vq_open(vq) || krc_qconnect(*vq, node, 0, &qc) ||
	    krc_reg_mr(*vq, *buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, mr))
		return -1;
	return 0;
}

static int hold(const char *node, const char *file)
{
	uint64_t *buf, n = 0, off, i;
	struct krc_lmr t;
	struct krc_vq *vq;
	struct krc_mr mr;
	sigset_t term;
	FILE *f;
	int sig;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (open_vq(node, &vq, &buf, &mr))
		return fail("connect");
	if (krc_lmr_alloc(vq, node, SIZE, KRCORE_ACCESS_REMOTE_READ |
			  KRCORE_ACCESS_REMOTE_WRITE | KRCORE_ACCESS_REMOTE_ATOMIC,
			  &t))
		return fail("alloc");
	f = fopen(file, "w");
	if (!f)
		return 1;
	fprintf(f, "%s %" PRIx64 " %x\n", node, t.addr, t.rkey);
	fclose(f);
	printf("holding\n");
	fflush(stdout);
	sigwait(&term, &sig);
	for (off = 0; off < SIZE; off += 4096) {
		if (krc_lmr_read(vq, &t, off, buf, mr.lkey, 4096))
			return fail("read");
		for (i = 0; i < 4096 / 8; i += 2)
			n += buf[i] != 0;
	}
	printf("entries %" PRIu64 "\n", n);
	return krc_lmr_free(vq, &t) ? fail("free") : 0;
}

static int put(struct krc_vq *vq, struct krc_lmr *t, uint64_t *buf,
	       uint32_t lkey, uint64_t key)
{
	uint64_t s = slot_of(key), i;

	for (i = 0; i < SLOTS; i++, s = (s + 1) % SLOTS) {
		if (krc_lmr_cas(vq, t, 16 * s, 0, key, buf, lkey))
			return fail("cas");
		if (buf[0] == 0 || buf[0] == key) {	/* claimed, or ours */
			buf[1] = 7 * key + 1;
			return krc_lmr_write(vq, t, 16 * s + 8, buf + 1, lkey, 8) ?
			       fail("write") : 0;
		}
	}
	fprintf(stderr, "krc_lmr_hash: the table is full\n");
	return 1;
}

/* The value of @key, or 0 if it is not in the table; ~0 on an error. */
static uint64_t get(struct krc_vq *vq, struct krc_lmr *t, uint64_t *buf,
		    uint32_t lkey, uint64_t key)
{
	uint64_t s = slot_of(key), i;

	for (i = 0; i < SLOTS; i++, s = (s + 1) % SLOTS) {
		do {
			if (krc_lmr_read(vq, t, 16 * s, buf, lkey, 16))
				return ~0ULL;
		} while (buf[0] == key && !buf[1]);	/* its value comes */
		if (buf[0] == key)
			return buf[1];
		if (!buf[0])
			return 0;
	}
	return 0;
}

static int use(const char *file, int inserting, uint64_t first, uint64_t n)
{
	uint64_t *buf, k, v, found = 0;
	struct krc_lmr t;
	struct krc_vq *vq;
	struct krc_mr mr;
	char node[64];
	FILE *f = fopen(file, "r");

	memset(&t, 0, sizeof(t));
	if (!first || !f ||
	    fscanf(f, "%63s %" SCNx64 " %x", node, &t.addr, &t.rkey) != 3)
		return 2;
	fclose(f);
	t.length = SIZE;
	if (open_vq(node, &vq, &buf, &mr))
		return fail("connect");
	for (k = first; k < first + n; k++) {
		if (inserting) {
			if (put(vq, &t, buf, mr.lkey, k))
				return 1;
			continue;
		}
		v = get(vq, &t, buf, mr.lkey, k);
		if (v == ~0ULL)
			return fail("read");
		if (v != 7 * k + 1) {
			fprintf(stderr, "krc_lmr_hash: key %" PRIu64 ": %" PRIu64 "\n",
				k, v);
			return 1;
		}
		found++;
	}
	if (inserting)
		printf("put %" PRIu64 "\n", n);
	else
		printf("found %" PRIu64 "\n", found);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3]);
	if (argc == 5 && (!strcmp(argv[1], "put") || !strcmp(argv[1], "get")))
		return use(argv[2], argv[1][0] == 'p', strtoull(argv[3], NULL, 0),
			   strtoull(argv[4], NULL, 0));
	fprintf(stderr, "usage: krc_lmr_hash hold NODE FILE | put|get FILE FIRST N\n");
	return 2;
}
