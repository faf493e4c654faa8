// SPDX-License-Identifier: BSD-2-Clause
/*
 * harden - regression tests of issue 7 (hostile processes), run inside the
 * cluster nodes by tests/cluster/t_harden_*.sh. Each mode prints what it
 * checks and exits 0 only if every check held.
 *
 *   harden ring SELF PORT          scribble over both ring headers, then
 *                                  send SENDs to itself: every message and
 *                                  completion lands where it belongs
 *   harden rkey SELF               loopback READ/WRITE with another
 *                                  process's (valid) rkey: EACCES/RKEY
 *   harden breakself SELF          break the loopback connection (fault
 *                                  parameter): READs re-posted, a new
 *                                  loopback connection, qconnect works
 *   harden limits SELF             port > 65535, ports < 1024 without
 *                                  CAP_NET_BIND_SERVICE, per-process port
 *                                  and VQ caps, private/executable maps
 *   harden devgone SELF DIR        a VQ with requests and a registration
 *                                  while the device is removed: ENODEV
 *                                  (DIR/ready, then waits for DIR/gone)
 *   harden throttle PEER INFO      bad rkeys break shared connections:
 *                                  after break_limit, EBUSY/THROTTLED
 *   harden share PEER INFO         one qpush of 32 READs stops at the
 *                                  VQ's share of the shared send queue
 *   harden bytes PEER INFO         bytes in flight capped per VQ
 *   harden efault PEER INFO        a wrs array unreadable after 16 entries:
 *                                  EFAULT with done = 16 written back
 *   harden deep PEER INFO N KB     N READs of KB KiB kept in flight: all
 *                                  succeed (the watchdog sees progress)
 *   harden drain PEER INFO DIR     a READ in flight to a peer that then
 *                                  vanishes; deregistration returns only
 *                                  after the READ completed
 *   harden probe PEER DIR          probe a peer that vanished: ETIMEDOUT
 *   harden breakers PEER INFO N [DIR]
 *                                  N processes post a bad-rkey WRITE, FAA
 *                                  or CAS at the same moment; with DIR,
 *                                  each on a pooled connection that one of
 *                                  the connection ids in DIR/ready.* names
 *                                  (dp_steady's); prints how many saw
 *                                  their own error, NOT_EXECUTED, FLUSHED
 *   harden memcg SELF N DIR        N connected VQs held open (their kernel
 *                                  memory is charged to the caller's cgroup)
 *   harden vqcache SELF            a closed VQ's data plane (vq_cache): the
 *                                  next qconnect gets it with a zeroed
 *                                  ring; a mapped ring holds its VQ
 *   harden vqonce SELF             one VQ connected, a READ, closed
 *   harden churn ADDR INFO SECS    VQs connect and close in a loop while
 *                                  another process breaks the connection;
 *                                  prints the breaks (its bad READs that
 *                                  failed with REMOTE_ACCESS) and the VQs
 *                                  recovery moved while they were open
 *                                  (ring recoveries > 0; some kept open,
 *                                  then a probe READ over the connection
 *                                  recovery gave them must succeed)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "libkrcore.h"

#define KB		1024u
#define MB		(1024u * 1024u)

static int failures;

#define FAIL(...) do { \
	fprintf(stderr, "harden: FAIL: " __VA_ARGS__); \
	fputc('\n', stderr); \
	failures++; \
} while (0)

#define OK(...) do { \
	printf("harden: ok: " __VA_ARGS__); \
	putchar('\n'); \
	fflush(stdout); \
} while (0)

static void die(const char *what)
{
	fprintf(stderr, "harden: %s: %s\n", what, krc_errmsg());
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int exists(const char *dir, const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

static void touch(const char *dir, const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f)
		fclose(f);
}

static void wait_file(const char *dir, const char *name, int secs)
{
	int i;

	for (i = 0; i < secs * 10 && !exists(dir, name); i++)
		usleep(100000);
	if (!exists(dir, name)) {
		fprintf(stderr, "harden: %s/%s never appeared\n", dir, name);
		exit(2);
	}
}

static void write_param(const char *name, unsigned long v)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/krcore/parameters/%s", name);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%lu\n", v) < 0 || fclose(f)) {
		fprintf(stderr, "harden: cannot set %s\n", name);
		exit(2);
	}
}

/* The buffer served by `dp_serve` on the peer: "addr rkey". */
static void read_info(const char *info, uint64_t *addr, uint32_t *rkey)
{
	unsigned long long a;
	unsigned int k;
	FILE *f = fopen(info, "r");

	if (!f || fscanf(f, "%llx %x", &a, &k) != 2) {
		fprintf(stderr, "harden: cannot read %s\n", info);
		exit(2);
	}
	fclose(f);
	*addr = a;
	*rkey = k;
}

static struct krc_vq *open_connected(const char *addr, uint32_t port,
				     struct krcore_qconnect *qc)
{
	struct krcore_qconnect tmp;
	struct krc_vq *vq;

	if (krc_vq_open(&vq))
		die("open");
	if (krc_qconnect(vq, addr, port, qc ? qc : &tmp))
		die("qconnect");
	return vq;
}

/*
 * Buffers of a multiple of 256 pages are registered one page larger
 * (MR_LEN): rxe in Linux 6.1 (rxe_mr_copy) reads one pointer past the
 * page map of such an MR when an access ends at its last page (KASAN on
 * the debug kernel). alloc_buf() maps that page too.
 */
#define MR_LEN(n)	((n) + 4096)

static void *alloc_buf(size_t len)
{
	void *p = mmap(NULL, MR_LEN(len), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

static void fill_rw(struct krcore_wr *w, uint8_t op, void *buf, uint32_t len,
		    uint32_t lkey, uint64_t raddr, uint32_t rkey, uint64_t id)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = id;
	w->opcode = op;
	w->flags = KRCORE_WR_SIGNALED;
	w->num_sge = 1;
	w->sg_list[0].addr = (uintptr_t)buf;
	w->sg_list[0].length = len;
	w->sg_list[0].lkey = lkey;
	w->remote_addr = raddr;
	w->rkey = rkey;
}

/* Wait for @n completions; returns how many had a non-success status. */
static int reap(struct krc_vq *vq, int n, uint32_t *last_status)
{
	struct krcore_cqe c[64];
	int got = 0, bad = 0, k, i;
	uint64_t end = now_ms() + 30000;

	while (got < n && now_ms() < end) {
		k = krc_qpop_wait(vq, c, 64, 1000);
		for (i = 0; i < k; i++) {
			if (c[i].status) {
				bad++;
				if (last_status)
					*last_status = c[i].status;
			}
		}
		if (k > 0)
			got += k;
	}
	if (got < n)
		FAIL("only %d of %d completions within 30 s", got, n);
	return bad;
}

static int raw_push(struct krc_vq *vq, struct krcore_wr *wrs, uint32_t n,
		    struct krcore_qpush *res)
{
	memset(res, 0, sizeof(*res));
	res->done = 0xdead;
	res->error = 0xdead;
	res->reason = 0xdead;
	res->wrs = (uintptr_t)wrs;
	res->count = n;
	return ioctl(krc_vq_fd(vq), KRCORE_IOC_QPUSH, res);
}

/* ring: both rings' headers scribbled, messages and completions intact. */
static int do_ring(const char *self, uint32_t port)
{
	struct krcore_ring *cr;
	struct krcore_recv_ring *rr;
	struct krcore_qconnect qc;
	struct krcore_qbind qb = { .port = port };
	struct krcore_wr w;
	struct krc_mr mr;
	struct krc_vq *rx, *tx;
	uint32_t entries, slot, doff, eoff, cons = 0, i, n = 100, got = 0;
	int posted;
	struct krcore_msg *msgs;
	uint8_t *rmem, *buf;
	size_t rsize;
	uint64_t end;

	/* The receiver: bound, its ring mapped by hand. */
	if (krc_vq_open(&rx))
		die("open");
	if (ioctl(krc_vq_fd(rx), KRCORE_IOC_QBIND, &qb))
		die("qbind");
	rsize = qb.ring_size;
	rmem = mmap(NULL, rsize, PROT_READ | PROT_WRITE, MAP_SHARED,
		    krc_vq_fd(rx), (off_t)KRCORE_MMAP_RECV * getpagesize());
	if (rmem == MAP_FAILED)
		die("mmap recv");
	rr = (struct krcore_recv_ring *)rmem;
	entries = rr->entries;
	slot = rr->slot_size;
	doff = rr->data_offset;
	eoff = rr->entry_offset;
	msgs = (struct krcore_msg *)(rmem + eoff);
	/* Lies the kernel must not believe. */
	rr->entries = 1u << 30;
	rr->slot_size = 1u << 20;
	rr->data_offset = 0xfffff000;
	rr->entry_offset = 0x7ffff000;
	rr->size = 0xffffffff;
	rr->producer = 0x12345678;
	rr->dropped = 0xffffffff;

	/* The sender: a VQ of this process connected to itself. */
	/* Its completion ring: this process's memory (libkrcore's). */
	tx = open_connected(self, port, &qc);
	cr = (struct krcore_ring *)krc_vq_ring(tx);
	buf = alloc_buf(4096);
	if (krc_reg_mr(tx, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	for (i = 0; i < n; i++) {
		uint32_t len = 1 + (i * 37) % 4000;

		memset(buf, (int)(i + 1), len);
		memset(&w, 0, sizeof(w));
		w.wr_id = i;
		w.opcode = KRCORE_WR_SEND;
		w.num_sge = 1;
		w.sg_list[0].addr = (uintptr_t)buf;
		w.sg_list[0].length = len;
		w.sg_list[0].lkey = mr.lkey;
		w.flags = KRCORE_WR_SIGNALED;
		/* The completion ring's header lies too. */
		cr->entries = 0x80000000;
		cr->depth = 0xffffffff;
		cr->entry_offset = 0xffff0000;
		/* Flow control: a slot of the port lent again first. */
		posted = krc_qpush(tx, &w, 1);
		while (posted == -EAGAIN && krc_qflow_wait(tx, 5000) > 0)
			posted = krc_qpush(tx, &w, 1);
		if (posted != 1) {
			FAIL("SEND %u not posted: %s", i, krc_errmsg());
			break;
		}
		if (reap(tx, 1, NULL))
			FAIL("SEND %u completed with an error", i);
		/* Its message, where the real geometry says. */
		end = now_ms() + 5000;
		while (__atomic_load_n(&rr->producer, __ATOMIC_ACQUIRE) == cons &&
		       now_ms() < end)
			usleep(100);
		if (__atomic_load_n(&rr->producer, __ATOMIC_ACQUIRE) == cons) {
			FAIL("message %u never arrived", i);
			break;
		}
		{
			uint32_t k = cons & (entries - 1), j;
			const uint8_t *d = rmem + doff + (size_t)k * slot;

			if (msgs[k].len != len) {
				FAIL("message %u: length %u, sent %u", i,
				     msgs[k].len, len);
			} else {
				for (j = 0; j < len && d[j] == (uint8_t)(i + 1); j++)
					;
				if (j < len)
					FAIL("message %u: byte %u differs", i, j);
				else
					got++;
			}
		}
		cons++;
		/* A lying consumer now and then: only our own loss. */
		__atomic_store_n(&rr->consumer, i % 10 == 5 ? cons + 1000 : cons,
				 __ATOMIC_RELEASE);
		if (i % 10 == 5)
			__atomic_store_n(&rr->consumer, cons, __ATOMIC_RELEASE);
	}
	if (got == n)
		OK("%u messages and completions intact under scribbled ring headers",
		   n);
	krc_vq_close(tx);
	krc_vq_close(rx);
	return failures ? 1 : 0;
}

/* rkey: another process's valid rkey refused on loopback. */
static int do_rkey(const char *self)
{
	struct krcore_qpush res;
	struct krcore_wr w;
	struct krc_mr mine, theirs_mr;
	struct krc_vq *vq, *other;
	int pfd[2], gfd[2];
	uint64_t theirs[2];
	char *buf, *secret;
	pid_t pid;

	if (pipe(pfd) || pipe(gfd))
		die("pipe");
	pid = fork();
	if (pid == 0) {
		secret = alloc_buf(4096);
		strcpy(secret, "the other process's secret");
		if (krc_vq_open(&other) ||
		    krc_reg_mr(other, secret, 4096, KRCORE_ACCESS_REMOTE_READ |
			       KRCORE_ACCESS_REMOTE_WRITE, &theirs_mr))
			die("child reg_mr");
		theirs[0] = (uintptr_t)secret;
		theirs[1] = theirs_mr.rkey;
		if (write(pfd[1], theirs, sizeof(theirs)) != sizeof(theirs))
			_exit(2);
		/* Hold the registration until the parent is done. */
		if (read(gfd[0], theirs, 1) < 0)
			_exit(2);
		_exit(strcmp(secret, "the other process's secret") ? 1 : 0);
	}
	if (read(pfd[0], theirs, sizeof(theirs)) != sizeof(theirs))
		die("pipe read");
	vq = open_connected(self, 0, NULL);
	buf = alloc_buf(8192);
	if (krc_reg_mr(vq, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ, &mine))
		die("reg_mr");
	fill_rw(&w, KRCORE_WR_READ, buf, 64, mine.lkey, theirs[0],
		(uint32_t)theirs[1], 1);
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EACCES ||
	    res.reason != KRCORE_R_RKEY || res.done != 0)
		FAIL("READ with another process's rkey: ret/errno %d, done %u reason %u",
		     errno, res.done, res.reason);
	else
		OK("READ with another process's valid rkey: EACCES, reason RKEY");
	w.opcode = KRCORE_WR_WRITE;
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EACCES ||
	    res.reason != KRCORE_R_RKEY)
		FAIL("WRITE with another process's rkey not refused");
	else
		OK("WRITE with another process's valid rkey: EACCES");
	/* Its own key: within range and access, yes; beyond, no. */
	strcpy(buf + 4096, "mine");
	fill_rw(&w, KRCORE_WR_READ, buf, 5, mine.lkey, (uintptr_t)buf + 4096,
		mine.rkey, 2);
	if (krc_qpush(vq, &w, 1) != 1 || reap(vq, 1, NULL) ||
	    memcmp(buf, "mine", 5))
		FAIL("READ of its own memory over loopback failed");
	else
		OK("READ of its own registered memory over loopback works");
	fill_rw(&w, KRCORE_WR_READ, buf, 64, mine.lkey,
		(uintptr_t)buf + 8192 - 32, mine.rkey, 3);
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EACCES)
		FAIL("READ beyond its own registration not refused");
	else
		OK("READ beyond its own registration: EACCES");
	fill_rw(&w, KRCORE_WR_WRITE, buf, 8, mine.lkey, (uintptr_t)buf + 4096,
		mine.rkey, 4);
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EACCES)
		FAIL("WRITE into its own read-only registration not refused");
	else
		OK("WRITE without REMOTE_WRITE access: EACCES");
	if (write(gfd[1], "x", 1) != 1)
		die("pipe write");
	{
		int st;

		waitpid(pid, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			FAIL("the other process's memory changed");
	}
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* breakself: the loopback connection fails; recovery rebuilds it. */
static int do_breakself(const char *self)
{
	struct krcore_qconnect qc, qc2;
	struct krcore_wr w[8];
	struct krc_mr mr;
	struct krc_vq *vq, *vq2;
	uint32_t st = 0;
	char *buf;
	int i, bad = 0;

	vq = open_connected(self, 0, &qc);
	buf = alloc_buf(MB);
	memset(buf + MB / 2, 0x5a, MB / 2);
	if (krc_reg_mr(vq, buf, MR_LEN(MB), KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ, &mr))
		die("reg_mr");
	for (i = 0; i < 8; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf + i * 64 * KB, 64 * KB,
			mr.lkey, (uintptr_t)buf + MB / 2, mr.rkey, i);
	if (krc_qpush(vq, w, 8) != 8)
		die("qpush");
	/* The connection fails with the READs outstanding. */
	write_param("fault_conn_error", qc.conn_id);
	bad += reap(vq, 8, &st);
	for (i = 0; i < 8; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf + i * 64 * KB, 64 * KB,
			mr.lkey, (uintptr_t)buf + MB / 2, mr.rkey, 8 + i);
	for (i = 0; i < 20; i++) {
		if (krc_qpush(vq, w, 8) == 8)
			break;
		usleep(100000);
	}
	bad += reap(vq, 8, &st);
	if (bad)
		FAIL("%d READs failed across the loopback recovery (status %u)",
		     bad, st);
	else
		OK("READs in flight on the broken loopback connection were re-posted");
	if (krc_vq_open(&vq2) || krc_qconnect(vq2, self, 0, &qc2))
		FAIL("qconnect to this node after the loopback broke: %s",
		     krc_errmsg());
	else
		OK("a new VQ connects to this node (conn %u, was %u)",
		   qc2.conn_id, qc.conn_id);
	krc_vq_close(vq2);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* Drop CAP_NET_BIND_SERVICE from the effective set. */
static void drop_bind_cap(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		die("capget");
	d[CAP_NET_BIND_SERVICE / 32].effective &=
		~(1u << (CAP_NET_BIND_SERVICE % 32));
	if (syscall(SYS_capset, &h, d))
		die("capset");
}

/* limits: argument ranges, privileged ports, caps, mapping flags. */
static int do_limits(const char *self)
{
	struct krcore_qconnect qc;
	struct krcore_qbind qb;
	struct krc_vq *vqs[16], *vq;
	uint8_t gid[16];
	void *m;
	int i, n;

	if (krc_vq_open(&vq) || krc_gid_parse(self, gid))
		die("open");
	memset(&qc, 0, sizeof(qc));
	memcpy(qc.gid, gid, 16);
	qc.port = 65536 + 7;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QCONNECT, &qc) != -1 ||
	    errno != EINVAL)
		FAIL("qconnect with port 65543 accepted");
	else
		OK("qconnect with a port above 65535: EINVAL");
	/* Mappings: shared, not executable. */
	qc.port = 0;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QCONNECT, &qc))
		die("qconnect");
	m = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 krc_vq_fd(vq), KRCORE_MMAP_RING);
	if (m != MAP_FAILED || errno != EINVAL)
		FAIL("a private mapping of the ring was allowed");
	else
		OK("a private mapping of the ring: EINVAL");
	m = mmap(NULL, qc.ring_size, PROT_READ | PROT_EXEC, MAP_SHARED,
		 krc_vq_fd(vq), KRCORE_MMAP_RING);
	if (m != MAP_FAILED || errno != EPERM)
		FAIL("an executable mapping of the ring was allowed");
	else
		OK("an executable mapping of the ring: EPERM");
	m = mmap(NULL, qc.ring_size, PROT_READ, MAP_SHARED, krc_vq_fd(vq),
		 KRCORE_MMAP_RING);
	if (m == MAP_FAILED)
		FAIL("a read-only shared mapping was refused");
	else if (mprotect(m, qc.ring_size, PROT_READ | PROT_EXEC) == 0)
		FAIL("the ring could be made executable with mprotect");
	else
		OK("mprotect(PROT_EXEC) of the ring refused");
	/* The mapping holds the VQ's file: the VQ lives until it goes. */
	if (m != MAP_FAILED)
		munmap(m, qc.ring_size);
	krc_vq_close(vq);

	/* Ports: at most max_ports_per_proc (set to 2 by the test). */
	n = 0;
	for (i = 0; i < 3; i++) {
		if (krc_vq_open(&vqs[i]))
			die("open");
		qb.port = 7000 + i;
		if (ioctl(krc_vq_fd(vqs[i]), KRCORE_IOC_QBIND, &qb) == 0)
			n++;
		else if (errno != EMFILE)
			FAIL("bind %u: %s", qb.port, strerror(errno));
	}
	if (n != 2)
		FAIL("%d ports bound with max_ports_per_proc=2", n);
	else
		OK("the third port of a process: EMFILE");
	for (i = 0; i < 3; i++)
		krc_vq_close(vqs[i]);
	/* VQs: at most max_vqs_per_proc (set to 8), freed ones count no more. */
	n = 0;
	for (i = 0; i < 10; i++) {
		vqs[i] = NULL;
		if (krc_vq_open(&vqs[i]) == 0)
			n++;
	}
	if (n != 8)
		FAIL("%d VQs opened with max_vqs_per_proc=8", n);
	else
		OK("the ninth VQ of a process: EMFILE");
	for (i = 0; i < 10; i++)
		if (vqs[i])
			krc_vq_close(vqs[i]);
	if (krc_vq_open(&vq))
		FAIL("no VQ after closing them all");
	/* A privileged port needs CAP_NET_BIND_SERVICE. */
	qb.port = 80;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QBIND, &qb))
		FAIL("bind 80 as root: %s", strerror(errno));
	krc_vq_close(vq);
	drop_bind_cap();
	if (krc_vq_open(&vq))
		die("open");
	qb.port = 81;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QBIND, &qb) != -1 || errno != EACCES)
		FAIL("bind 81 without CAP_NET_BIND_SERVICE allowed");
	else
		OK("a port below 1024 without CAP_NET_BIND_SERVICE: EACCES");
	qb.port = 1024;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QBIND, &qb))
		FAIL("bind 1024 without the capability: %s", strerror(errno));
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* devgone: the device goes away under a VQ in use. */
static int do_devgone(const char *self, const char *dir)
{
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	struct krcore_qwait qw = { .timeout_ms = 100 };
	struct krcore_reg_mr rm;
	struct krcore_qpush res;
	struct krcore_wr w[4];
	struct krc_mr mr;
	struct krc_vq *vq;
	uint8_t gid[16];
	char *buf;
	int i;

	vq = open_connected(self, 0, &qc);
	buf = alloc_buf(MB);
	if (krc_reg_mr(vq, buf, MR_LEN(MB), KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ, &mr))
		die("reg_mr");
	for (i = 0; i < 4; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf + i * 4096, 4096, mr.lkey,
			(uintptr_t)buf + MB / 2, mr.rkey, i);
	if (krc_qpush(vq, w, 4) != 4)
		die("qpush");
	touch(dir, "ready");
	wait_file(dir, "gone", 120);
	if (raw_push(vq, w, 1, &res) != -1 || errno != ENODEV)
		FAIL("qpush after the device went: %s", strerror(errno));
	else
		OK("qpush after the device went away: ENODEV");
	if (krc_probe(vq, &pr) != -ENODEV)
		FAIL("probe after the device went: not ENODEV");
	else
		OK("probe: ENODEV");
	memset(&rm, 0, sizeof(rm));
	rm.addr = (uintptr_t)buf;
	rm.length = 4096;
	rm.access = KRCORE_ACCESS_LOCAL_WRITE;
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_REG_MR, &rm) != -1 || errno != ENODEV)
		FAIL("reg_mr after the device went: %s", strerror(errno));
	else
		OK("reg_mr: ENODEV");
	krc_gid_parse(self, gid);
	memset(&qc, 0, sizeof(qc));
	memcpy(qc.gid, gid, 16);
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QCONNECT, &qc) != -1 ||
	    errno != ENODEV)
		FAIL("qconnect after the device went: %s", strerror(errno));
	else
		OK("qconnect: ENODEV");
	/* Completions that were written stay readable; then ENODEV. */
	for (i = 0; i < 10; i++) {
		struct krcore_cqe c[8];

		if (krc_qpop(vq, c, 8) <= 0)
			break;
	}
	if (ioctl(krc_vq_fd(vq), KRCORE_IOC_QWAIT, &qw) != -1 || errno != ENODEV)
		FAIL("qwait on a VQ whose device went: %s", strerror(errno));
	else
		OK("qwait: ENODEV");
	{
		struct pollfd p = { .fd = krc_vq_fd(vq), .events = POLLIN };

		if (poll(&p, 1, 0) != 1 ||
		    (p.revents & (POLLERR | POLLHUP)) != (POLLERR | POLLHUP))
			FAIL("poll on a VQ whose device went: %#x", p.revents);
		else
			OK("poll: POLLERR|POLLHUP");
	}
	touch(dir, "checked");
	wait_file(dir, "back", 120);
	/* Still gone for this VQ; a new one works. */
	if (raw_push(vq, w, 1, &res) != -1 || errno != ENODEV)
		FAIL("the old VQ works again after the device came back");
	krc_vq_close(vq);
	for (i = 0; i < 100; i++) {
		if (krc_vq_open(&vq) == 0 && krc_qconnect(vq, self, 0, &qc) == 0)
			break;
		krc_vq_close(vq);
		vq = NULL;
		usleep(200000);
	}
	if (!vq) {
		FAIL("no qconnect after the device came back: %s", krc_errmsg());
	} else {
		if (krc_reg_mr(vq, buf, MR_LEN(MB), KRCORE_ACCESS_LOCAL_WRITE |
			       KRCORE_ACCESS_REMOTE_READ, &mr) ||
		    krc_read_sync(vq, buf, mr.lkey, 64, (uintptr_t)buf + MB / 2,
				  mr.rkey, 5000))
			FAIL("READ on the new device: %s", krc_errmsg());
		else
			OK("a new VQ connects and READs on the device that came back");
		krc_vq_close(vq);
	}
	return failures ? 1 : 0;
}

/* throttle: bad rkeys break shared connections; then EBUSY. */
static int do_throttle(const char *peer, const char *info)
{
	struct krcore_qpush res;
	struct krcore_wr w;
	struct krc_mr mr;
	struct krc_vq *vq;
	uint64_t raddr;
	uint32_t rkey, st = 0;
	int i, broke = 0, ret;
	uint64_t end;
	char *buf;

	read_info(info, &raddr, &rkey);
	end = now_ms() + 120000;
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf(4096);
	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	for (i = 0; i < 6; i++) {
		fill_rw(&w, KRCORE_WR_READ, buf, 8, mr.lkey, raddr,
			rkey ^ 0x5a5a00, i);
		if (now_ms() > end) {
			FAIL("still recovering after 120 s (bad READ %d)", i);
			break;
		}
		ret = raw_push(vq, &w, 1, &res);
		if (ret == 1) {
			if (reap(vq, 1, &st) == 1 &&
			    st == KRCORE_WC_REM_ACCESS_ERR)
				broke++;
			usleep(300000);
			continue;
		}
		if (errno == EBUSY && res.reason == KRCORE_R_THROTTLED)
			break;
		if (errno == EAGAIN) {		/* recovering */
			usleep(200000);
			i--;
			continue;
		}
		FAIL("bad READ %d: %s reason %u", i, strerror(errno), res.reason);
		break;
	}
	if (broke != 3 || i != 3)
		FAIL("%d remote access errors before throttling (stopped at %d), expected 3",
		     broke, i);
	else
		OK("3 shared connections broken, the 4th request: EBUSY/THROTTLED");
	/* Good requests are refused too until the window passes. */
	fill_rw(&w, KRCORE_WR_READ, buf, 8, mr.lkey, raddr, rkey, 99);
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EBUSY)
		FAIL("a throttled process posted");
	/* Closing its every VQ does not lift it: a new VQ is throttled. */
	krc_vq_close(vq);
	vq = open_connected(peer, 0, NULL);
	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	fill_rw(&w, KRCORE_WR_READ, buf, 8, mr.lkey, raddr, rkey, 100);
	if (raw_push(vq, &w, 1, &res) != -1 || errno != EBUSY ||
	    res.reason != KRCORE_R_THROTTLED)
		FAIL("its only VQ closed and a new one opened: not throttled (%s, reason %u)",
		     strerror(errno), res.reason);
	else
		OK("a new VQ after closing every one: still EBUSY/THROTTLED");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* share: one VQ takes at most vq_qp_share percent of the send queue. */
static int do_share(const char *peer, const char *info, uint32_t expect)
{
	struct krcore_qpush res;
	struct krcore_wr w[32];
	struct krc_mr mr;
	struct krc_vq *vq;
	uint64_t raddr;
	uint32_t rkey;
	int i, ret;
	char *buf;

	read_info(info, &raddr, &rkey);
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf(32 * 64 * KB);
	if (krc_reg_mr(vq, buf, MR_LEN(32 * 64 * KB), KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	for (i = 0; i < 32; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf + i * 64 * KB, 64 * KB,
			mr.lkey, raddr, rkey, i);
	ret = raw_push(vq, w, 32, &res);
	if (ret != -1 || errno != EAGAIN || res.done != expect ||
	    res.reason != KRCORE_R_VQ_FULL)
		FAIL("32 READs in one qpush: ret %d errno %d done %u reason %u, expected %u",
		     ret, errno, res.done, res.reason, expect);
	else
		OK("32 READs in one qpush: %u posted (the VQ's share), EAGAIN/VQ_FULL",
		   expect);
	if (reap(vq, ret == 32 ? 32 : (int)res.done, NULL))
		FAIL("READs failed");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* bytes: at most vq_max_bytes (1 MiB in the test) in flight. */
static int do_bytes(const char *peer, const char *info)
{
	struct krcore_qpush res;
	struct krcore_wr w[4];
	struct krc_mr mr;
	struct krc_vq *vq;
	uint64_t raddr;
	uint32_t rkey;
	int i, ret;
	char *buf;

	read_info(info, &raddr, &rkey);
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf(2 * MB);
	if (krc_reg_mr(vq, buf, MR_LEN(2 * MB), KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	for (i = 0; i < 4; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf + i * 512 * KB, 512 * KB,
			mr.lkey, raddr, rkey, i);
	ret = raw_push(vq, w, 4, &res);
	if (ret != -1 || errno != EAGAIN || res.done != 2 ||
	    res.reason != KRCORE_R_VQ_FULL)
		FAIL("4 x 512 KiB with vq_max_bytes 1 MiB: ret %d done %u reason %u",
		     ret, res.done, res.reason);
	else
		OK("4 x 512 KiB READs: 2 posted (1 MiB in flight), EAGAIN/VQ_FULL");
	if (reap(vq, ret == 4 ? 4 : (int)res.done, NULL))
		FAIL("READs failed");
	/* One request above the cap goes alone. */
	fill_rw(&w[0], KRCORE_WR_READ, buf, 2 * MB, mr.lkey, raddr, rkey, 9);
	if (krc_qpush(vq, w, 1) != 1 || reap(vq, 1, NULL))
		FAIL("a single 2 MiB READ on an idle VQ: %s", krc_errmsg());
	else
		OK("a single READ above the cap goes when the VQ is idle");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* efault: the array becomes unreadable after 16 requests. */
static int do_efault(const char *peer, const char *info)
{
	struct krcore_qpush res;
	struct krcore_wr *w;
	struct krc_mr mr;
	struct krc_vq *vq;
	size_t pg = getpagesize(), off;
	uint64_t raddr;
	uint32_t rkey;
	char *area, *buf;
	int i, ret;

	read_info(info, &raddr, &rkey);
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf(4096);
	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	/* 16 requests end exactly where an unmapped page begins. */
	area = alloc_buf(4 * pg);
	munmap(area + 2 * pg, 2 * pg);
	off = 2 * pg - 16 * sizeof(*w);
	w = (struct krcore_wr *)(area + off);
	for (i = 0; i < 16; i++)
		fill_rw(&w[i], KRCORE_WR_READ, buf, 8, mr.lkey, raddr, rkey, i);
	ret = raw_push(vq, w, 20, &res);
	if (ret != -1 || errno != EFAULT || res.done != 16 ||
	    res.reason != KRCORE_R_FAULT || res.error != EFAULT)
		FAIL("qpush of 20 with 16 readable: ret %d errno %d done %u error %u reason %u",
		     ret, errno, res.done, res.error, res.reason);
	else
		OK("an array unreadable after 16 requests: EFAULT, done = 16 written back");
	if (res.done == 16 && reap(vq, 16, NULL))
		FAIL("the 16 posted READs failed");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* deep: many large READs in flight, longer than wr_timeout_ms in all. */
static int do_deep(const char *peer, const char *info, int n, int kb)
{
	struct krcore_wr w[16];
	struct krc_mr mr;
	struct krc_vq *vq;
	uint64_t raddr, t0;
	uint32_t rkey, st = 0;
	int posted = 0, done = 0, bad = 0, k, i;
	char *buf;

	read_info(info, &raddr, &rkey);
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf((size_t)16 * kb * KB);
	if (krc_reg_mr(vq, buf, MR_LEN((size_t)16 * kb * KB),
		       KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	t0 = now_ms();
	while (done < n) {
		int want = n - posted < 16 ? n - posted : 16;

		for (i = 0; i < want; i++)
			fill_rw(&w[i], KRCORE_WR_READ, buf + (size_t)i * kb * KB,
				kb * KB, mr.lkey, raddr, rkey, posted + i);
		k = want ? krc_qpush(vq, w, want) : 0;
		if (k > 0)
			posted += k;
		{
			struct krcore_cqe c[16];

			k = krc_qpop_wait(vq, c, 16, 1000);
			for (i = 0; i < k; i++)
				if (c[i].status) {
					bad++;
					st = c[i].status;
				}
			if (k > 0)
				done += k;
		}
		if (now_ms() - t0 > 120000)
			break;
	}
	if (bad || done < n)
		FAIL("%d of %d READs of %d KiB failed (status %u), %d done", bad, n,
		     kb, st, done);
	else
		OK("%d READs of %d KiB in %llu ms, none failed", n, kb,
		   (unsigned long long)(now_ms() - t0));
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* drain: deregistration with a READ in flight to a vanished peer. */
static int do_drain(const char *peer, const char *info, const char *dir)
{
	struct krcore_cqe c[4];
	struct krcore_wr w;
	struct krc_mr mr;
	struct krc_vq *vq;
	uint64_t raddr, t0;
	uint32_t rkey;
	char *buf;
	int k;

	read_info(info, &raddr, &rkey);
	vq = open_connected(peer, 0, NULL);
	buf = alloc_buf(4096);
	if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE, &mr))
		die("reg_mr");
	touch(dir, "drain.ready");
	wait_file(dir, "drain.gone", 120);
	fill_rw(&w, KRCORE_WR_READ, buf, 8, mr.lkey, raddr, rkey, 1);
	if (krc_qpush(vq, &w, 1) != 1)
		die("qpush");
	usleep(200000);
	t0 = now_ms();
	if (krc_dereg_mr(vq, &mr))
		FAIL("dereg: %s", krc_errmsg());
	printf("harden: dereg returned after %llu ms\n",
	       (unsigned long long)(now_ms() - t0));
	/* The READ completed before the registration was given back. */
	k = krc_qpop(vq, c, 4);
	if (k != 1)
		FAIL("no completion of the READ when dereg returned (%d)", k);
	else
		OK("dereg returned after the READ completed (status %s)",
		   krc_wc_status_str(c[0].status));
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* probe: a peer that vanished; the probe times out, nothing else. */
static int do_probe(const char *peer, const char *dir)
{
	struct krcore_probe pr;
	struct krc_vq *vq;
	int ret;

	vq = open_connected(peer, 0, NULL);
	if (krc_probe(vq, &pr))
		die("probe");
	touch(dir, "probe.ready");
	wait_file(dir, "probe.gone", 120);
	ret = krc_probe(vq, &pr);
	if (ret != -ETIMEDOUT)
		FAIL("probe of a vanished peer: %d, expected ETIMEDOUT", ret);
	else
		OK("probe of a vanished peer: ETIMEDOUT");
	touch(dir, "probe.done");
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/* The kernel's count of recoveries of @vq's connection (its ring). */
static long long ring_recoveries(struct krc_vq *vq, uint32_t size)
{
	const struct krcore_ring *r = krc_vq_ring(vq);

	return r ? (long long)__atomic_load_n(&r->recoveries,
					      __ATOMIC_ACQUIRE) : -1;
}

/* What the churn processes saw, in memory they share. */
struct churn_counts {
	long breaks;		/* bad READs failed REMOTE_ACCESS: connections broken */
	long break_other;	/* ... that completed with anything else */
	long opened;		/* VQs connected */
	long moved;		/* VQs recovery moved while open */
	long kept;		/* ... of them kept open, probed after the churn */
	long moved_bad;		/* ... whose probe READ kept failing */
	long last_err;		/* the last one's error */
	long ring_bad;		/* rings that could not be mapped */
};

/*
 * A VQ that recovery moved, once the churn is over: a probe READ over its
 * connection, repeated while the connection it is on fails (recovery may
 * still be moving it: those the breaker broke last), for up to 30 s.
 * ENOTCONN: recovery left it disconnected.
 */
static int probe_moved(struct krc_vq *vq)
{
	uint64_t end = now_ms() + 30000;
	struct krcore_probe pr;
	int ret;

	do {
		ret = krc_probe(vq, &pr);
		if (!ret || ret == -ENOTCONN)
			return ret;
		usleep(20000);
	} while (now_ms() < end);
	return ret;
}

/*
 * churn: VQs close while recovery moves them. Process 0 breaks the
 * connection it gets (a READ with a bad rkey); 1 and 2 connect and close
 * at once; 3 and 4 hold each VQ a little, then close it, counting it as
 * moved if its connection was recovered meanwhile; the first CHURN_KEEP
 * moved ones stay open and, once the churn is over, must READ over the
 * connection recovery gave them.
 */
#define CHURN_KEEP	8
static int do_churn(const char *addr, const char *info, int secs)
{
	uint64_t end = now_ms() + (uint64_t)secs * 1000, raddr;
	struct churn_counts *cc;
	uint32_t rkey;
	pid_t kids[5];
	int i, st, bad = 0;

	read_info(info, &raddr, &rkey);
	cc = mmap(NULL, sizeof(*cc), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cc == MAP_FAILED)
		die("mmap");
	memset(cc, 0, sizeof(*cc));
	for (i = 0; i < 5; i++) {
		kids[i] = fork();
		if (kids[i])
			continue;
		struct krc_vq *kept[CHURN_KEEP];
		int nkept = 0, j, ret;

		srand((unsigned int)getpid());
		while (now_ms() < end) {
			struct krcore_qconnect qc;
			struct krcore_wr w;
			struct krc_mr mr;
			struct krc_vq *vq;
			uint32_t s = 0;
			long long rec;
			char *buf = NULL;

			if (krc_vq_open(&vq))
				continue;
			if (krc_qconnect(vq, addr, 0, &qc)) {
				krc_vq_close(vq);
				continue;
			}
			__atomic_fetch_add(&cc->opened, 1, __ATOMIC_RELAXED);
			if (i == 0) {
				/* The breaker: a bad rkey now and then. */
				buf = alloc_buf(4096);
				if (!krc_reg_mr(vq, buf, 4096,
						KRCORE_ACCESS_LOCAL_WRITE, &mr)) {
					fill_rw(&w, KRCORE_WR_READ, buf, 8, mr.lkey,
						raddr, rkey ^ 0x777700, 1);
					if (krc_qpush(vq, &w, 1) == 1) {
						reap(vq, 1, &s);
						__atomic_fetch_add(s == KRCORE_WC_REM_ACCESS_ERR ?
								   &cc->breaks :
								   &cc->break_other,
								   1, __ATOMIC_RELAXED);
					}
				}
				munmap(buf, MR_LEN(4096));
			} else if (i >= 3) {
				/* Held 10-40 ms: recovery may move it meanwhile. */
				usleep(10000 + (rand() % 30) * 1000);
				rec = ring_recoveries(vq, qc.ring_size);
				if (rec < 0) {
					__atomic_fetch_add(&cc->ring_bad, 1,
							   __ATOMIC_RELAXED);
				} else if (rec > 0) {
					__atomic_fetch_add(&cc->moved, 1,
							   __ATOMIC_RELAXED);
					if (nkept < CHURN_KEEP) {
						kept[nkept++] = vq;
						continue;
					}
				}
			}
			krc_vq_close(vq);
		}
		for (j = 0; j < nkept; j++) {
			__atomic_fetch_add(&cc->kept, 1, __ATOMIC_RELAXED);
			ret = probe_moved(kept[j]);
			if (ret) {
				__atomic_fetch_add(&cc->moved_bad, 1,
						   __ATOMIC_RELAXED);
				__atomic_store_n(&cc->last_err, ret,
						 __ATOMIC_RELAXED);
			}
			krc_vq_close(kept[j]);
		}
		_exit(0);
	}
	for (i = 0; i < 5; i++) {
		waitpid(kids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("harden: churn: %ld VQs connected, %ld breaks, %ld other, ",
	       cc->opened, cc->breaks, cc->break_other);
	printf("%ld VQs moved by recovery while open, %ld kept: %ld unusable after\n",
	       cc->moved, cc->kept, cc->moved_bad);
	if (bad)
		FAIL("%d churn processes did not exit cleanly", bad);
	if (cc->ring_bad)
		FAIL("%ld completion rings could not be mapped", cc->ring_bad);
	if (!cc->breaks)
		FAIL("no bad READ broke a connection");
	if (cc->break_other)
		FAIL("%ld bad READs did not fail with REMOTE_ACCESS", cc->break_other);
	if (!cc->moved || !cc->kept)
		FAIL("no open VQ was moved by a recovery");
	if (cc->moved_bad)
		FAIL("%ld of %ld moved VQs could not READ after the churn (%s)",
		     cc->moved_bad, cc->kept, strerror((int)-cc->last_err));
	if (!failures)
		OK("%d s of connect/close beside %ld recoveries: %ld VQs moved, every one working",
		   secs, cc->breaks, cc->moved);
	munmap(cc, sizeof(*cc));
	return failures ? 1 : 0;
}

/* The connection ids in @dir/ready.* (dp_steady's); how many. */
static int read_conn_ids(const char *dir, uint32_t *ids, int max)
{
	struct dirent *de;
	char p[512];
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		unsigned int id;
		FILE *f;

		if (strncmp(de->d_name, "ready.", 6))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		if (fscanf(f, "%u", &id) == 1 && id)
			ids[n++] = id;
		fclose(f);
	}
	closedir(d);
	return n;
}

/*
 * A VQ connected to @peer on one of the @n connections @ids (any if @n is
 * 0): VQs are opened (and held: the pool gives each new one its least
 * loaded connection) until one lands on such a connection.
 */
#define BREAKER_TRIES	32

static struct krc_vq *open_on(const char *peer, const uint32_t *ids, int n)
{
	struct krc_vq *held[BREAKER_TRIES], *vq = NULL;
	struct krcore_qconnect qc;
	int t, j, nheld = 0;

	for (t = 0; t < BREAKER_TRIES && !vq; t++) {
		struct krc_vq *v = open_connected(peer, 0, &qc);

		for (j = 0; j < n && qc.conn_id != ids[j]; j++)
			;
		if (!n || j < n)
			vq = v;
		else
			held[nheld++] = v;
	}
	for (j = 0; j < nheld; j++)
		krc_vq_close(held[j]);
	return vq;
}

/*
 * breakers: N processes, each on its own VQ, post one request with a bad
 * rkey (a WRITE, an FAA, a CAS, ...) at the same moment: several pooled
 * connections of the peer fail within milliseconds, on both ends. With
 * @dir, each on a connection that carries one of dp_steady's VQs
 * (the ids in @dir/ready.*), so that those VQs must be moved. Each
 * process's exit status says what its request got.
 */
#define BROKE_OWN	10	/* its own REMOTE_ACCESS error: it broke the QP */
#define BROKE_NOT_EXEC	11	/* second on a QP: NOT_EXECUTED_OR_UNKNOWN */
#define BROKE_FLUSHED	12	/* flushed (its VQ's earlier request failed) */

static int do_breakers(const char *peer, const char *info, int n,
		       const char *dir)
{
	static const uint8_t ops[] = {
		KRCORE_WR_WRITE, KRCORE_WR_ATOMIC_FAA, KRCORE_WR_ATOMIC_CAS,
	};
	uint64_t raddr, at = now_ms() + 1500;
	int i, st, bad = 0, own = 0, notex = 0, flushed = 0, nids = 0;
	uint32_t rkey, ids[64];

	read_info(info, &raddr, &rkey);
	if (dir) {
		nids = read_conn_ids(dir, ids, 64);
		if (!nids) {
			FAIL("no connection id in %s/ready.*", dir);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		if (fork())
			continue;
		{
			struct krcore_wr w;
			struct krc_mr mr;
			struct krc_vq *vq = open_on(peer, ids, nids);
			uint32_t s2 = 0;
			char *buf = alloc_buf(4096);
			int k;

			if (!vq)
				_exit(5);
			if (krc_reg_mr(vq, buf, 4096, KRCORE_ACCESS_LOCAL_WRITE,
				       &mr))
				_exit(2);
			fill_rw(&w, ops[i % 3], buf, 8, mr.lkey,
				raddr + 4096 * (i + 1), rkey ^ 0x3c3c00, i);
			while (now_ms() < at)
				usleep(200);
			/* EAGAIN while the other node's breaks are recovered. */
			while ((k = krc_qpush(vq, &w, 1)) == -EAGAIN &&
			       now_ms() < at + 10000)
				usleep(1000);
			if (k != 1)
				_exit(3);
			reap(vq, 1, &s2);
			/* Its own error, or (second on a QP) not executed. */
			_exit(s2 == KRCORE_WC_REM_ACCESS_ERR ? BROKE_OWN :
			      s2 == KRCORE_WC_NOT_EXECUTED_OR_UNKNOWN ? BROKE_NOT_EXEC :
			      s2 == KRCORE_WC_FLUSHED ? BROKE_FLUSHED : 4);
		}
	}
	for (i = 0; i < n; i++) {
		wait(&st);
		if (!WIFEXITED(st))
			bad++;
		else if (WEXITSTATUS(st) == BROKE_OWN)
			own++;
		else if (WEXITSTATUS(st) == BROKE_NOT_EXEC)
			notex++;
		else if (WEXITSTATUS(st) == BROKE_FLUSHED)
			flushed++;
		else if (WEXITSTATUS(st) == 5)
			FAIL("a breaker found no VQ on a steady connection in %d tries",
			     BREAKER_TRIES);
		else
			bad++;
	}
	printf("harden: breakers: %d own errors (REMOTE_ACCESS), %d not executed, %d flushed\n",
	       own, notex, flushed);
	if (bad)
		FAIL("%d of %d breakers did not see their error", bad, n);
	else if (!own)
		FAIL("none of %d breakers broke a connection", n);
	else if (!failures)
		OK("%d bad requests at once on the peer's pooled connections%s", n,
		   dir ? ", each beside a steady VQ" : "");
	return failures ? 1 : 0;
}

/*
 * memcg: N VQs connected to this node, then wait: their kernel memory
 * (structures, slots, rings) is charged to this process's memory cgroup,
 * which the test reads while they are open.
 */
static int do_memcg(const char *self, int n, const char *dir)
{
	struct krc_vq **vqs = calloc((size_t)n, sizeof(*vqs));
	int i, ok = 0;

	if (!vqs)
		return 2;
	wait_file(dir, "memcg.go", 60);
	for (i = 0; i < n; i++) {
		struct krcore_qconnect qc;

		if (krc_vq_open(&vqs[i]))
			break;
		if (krc_qconnect(vqs[i], self, 0, &qc))
			break;
		ok++;
	}
	printf("harden: %d VQs connected\n", ok);
	touch(dir, "memcg.opened");
	wait_file(dir, "memcg.done", 120);
	for (i = 0; i < n; i++)
		if (vqs[i])
			krc_vq_close(vqs[i]);
	return ok == n ? 0 : 1;
}

static long long counter(const char *name)
{
	char path[128], v[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/krcore/counters/%s",
		 name);
	f = fopen(path, "r");
	if (!f || !fgets(v, sizeof(v), f))
		die(path);
	fclose(f);
	return atoll(v);
}

/*
 * A VQ of this process, connected over loopback, with @n READs of its own
 * memory completed (wr_id @tag + i): its ring holds their completions.
 */
static struct krc_vq *vq_with_completions(const char *self, int n,
					  uint64_t tag, void **ring,
					  uint32_t *ring_size)
{
	struct krcore_qconnect qc;
	struct krcore_wr w;
	struct krc_vq *vq;
	struct krc_mr mr;
	char *buf = alloc_buf(8192);
	int i;

	vq = open_connected(self, 0, &qc);
	if (krc_reg_mr(vq, buf, 8192, KRCORE_ACCESS_LOCAL_WRITE |
		       KRCORE_ACCESS_REMOTE_READ, &mr))
		die("reg_mr");
	for (i = 0; i < n; i++) {
		fill_rw(&w, KRCORE_WR_READ, buf, 64, mr.lkey,
			(uintptr_t)buf + 4096, mr.rkey, tag + i);
		if (krc_qpush(vq, &w, 1) != 1)
			die("qpush");
	}
	if (reap(vq, n, NULL))
		FAIL("READs of its own memory failed");
	*ring_size = qc.ring_size;
	*ring = mmap(NULL, qc.ring_size, PROT_READ, MAP_SHARED, krc_vq_fd(vq),
		     KRCORE_MMAP_RING);
	if (*ring == MAP_FAILED)
		die("mmap ring");
	return vq;
}

/* How many of the ring's completions carry a wr_id in [tag, tag + n)? */
static int ring_tagged(const void *ring, uint64_t tag, int n)
{
	const struct krcore_ring *r = ring;
	const struct krcore_cqe *c = (const void *)((const char *)ring +
						    r->entry_offset);
	uint32_t i;
	int k = 0;

	for (i = 0; i < r->entries; i++)
		if (c[i].wr_id >= tag && c[i].wr_id < tag + (uint64_t)n)
			k++;
	return k;
}

static int do_vqonce(const char *self)
{
	uint32_t size;
	void *ring;
	struct krc_vq *vq;

	setenv("KRC_KERNEL_RING", "1", 1);	/* a ring to map */
	vq = vq_with_completions(self, 4, 0x5a5a0000, &ring, &size);

	munmap(ring, size);
	krc_vq_close(vq);
	return failures ? 1 : 0;
}

/*
 * vqcache: a closed VQ's data plane goes to the next qconnect with every
 * byte of its ring zeroed; a data plane whose ring a process still maps
 * is never reused (that process would see the next owner's ring).
 */
static int do_vqcache(const char *self)
{
	const uint64_t tag_a = 0xa11ce00000000000ULL;
	const uint64_t tag_b = 0xb0b0000000000000ULL;
	struct krcore_qconnect qc;
	long long hits, kept;
	const struct krcore_ring *r;
	const unsigned char *p;
	struct krc_vq *vq, *nvq;
	uint32_t size, i, nonzero = 0;
	void *ring, *old;
	pid_t pid;
	int st;

	/* Rings of the kernel's (mapped), as a module of ABI 13 gave. */
	setenv("KRC_KERNEL_RING", "1", 1);
	/* A: a VQ with completions, unmapped and closed: kept. */
	kept = counter("vq_cache_kept");
	pid = fork();
	if (pid == 0) {
		vq = vq_with_completions(self, 8, tag_a, &ring, &size);
		if (ring_tagged(ring, tag_a, 8) != 8)
			FAIL("A's ring shows %d of its 8 completions",
			     ring_tagged(ring, tag_a, 8));
		munmap(ring, size);
		krc_vq_close(vq);
		_exit(failures ? 1 : 0);
	}
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		FAIL("process A failed");
	if (counter("vq_cache_kept") != kept + 1)
		FAIL("A's closed VQ was not kept (vq_cache_kept %lld -> %lld)",
		     kept, counter("vq_cache_kept"));

	/* B, another process: takes A's data plane, its ring all zero. */
	hits = counter("vq_cache_hits");
	if (krc_vq_open(&vq))
		die("open");
	memset(&qc, 0, sizeof(qc));
	if (krc_qconnect(vq, self, 0, &qc))
		die("qconnect");
	if (counter("vq_cache_hits") != hits + 1)
		FAIL("the qconnect after A's close took no kept data plane");
	ring = mmap(NULL, qc.ring_size, PROT_READ, MAP_SHARED, krc_vq_fd(vq),
		    KRCORE_MMAP_RING);
	if (ring == MAP_FAILED)
		die("mmap ring");
	r = ring;
	p = (const unsigned char *)ring + r->entry_offset;
	for (i = 0; i < r->entries * sizeof(struct krcore_cqe); i++)
		nonzero += p[i] != 0;
	if (r->producer || r->consumer || r->recoveries || nonzero ||
	    r->entries != 2 * qc.depth || r->size != qc.ring_size)
		FAIL("reused ring: prod %u cons %u recov %llu, %u bytes set, %u entries, depth %u",
		     r->producer, r->consumer,
		     (unsigned long long)r->recoveries, nonzero, r->entries,
		     qc.depth);
	else
		OK("a closed VQ's data plane reused by another process, zeroed (%u entries)",
		   r->entries);
	munmap(ring, qc.ring_size);
	krc_vq_close(vq);

	/*
	 * C: the file closed while the ring is still mapped: the mapping
	 * holds the VQ, which is neither freed nor kept until it goes.
	 */
	kept = counter("vq_cache_kept");
	vq = vq_with_completions(self, 8, tag_a, &old, &size);
	krc_vq_close(vq);		/* @old stays mapped */
	if (counter("vq_cache_kept") != kept)
		FAIL("a VQ whose ring is mapped was kept at its file's close");
	/* Whatever the next VQs get, @old never shows their completions. */
	for (i = 0; i < 4; i++) {
		nvq = vq_with_completions(self, 8, tag_b + 8 * i, &ring, &size);
		if (ring_tagged(ring, tag_b + 8 * i, 8) != 8)
			FAIL("a new VQ's ring shows %d of its 8 completions",
			     ring_tagged(ring, tag_b + 8 * i, 8));
		munmap(ring, size);
		krc_vq_close(nvq);
	}
	if (ring_tagged(old, tag_b, 32) || ring_tagged(old, tag_a, 8) != 8)
		FAIL("the old mapping changed: %d new completions, %d of its own 8",
		     ring_tagged(old, tag_b, 32), ring_tagged(old, tag_a, 8));
	else
		OK("a ring mapped after the close: its own 8 completions, none of the next 32");
	kept = counter("vq_cache_kept");
	munmap(old, size);
	if (counter("vq_cache_kept") != kept + 1)
		FAIL("its data plane was not kept once the mapping went");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(m, "ring") && argc == 4)
		return do_ring(argv[2], atoi(argv[3]));
	if (!strcmp(m, "rkey") && argc == 3)
		return do_rkey(argv[2]);
	if (!strcmp(m, "breakself") && argc == 3)
		return do_breakself(argv[2]);
	if (!strcmp(m, "limits") && argc == 3)
		return do_limits(argv[2]);
	if (!strcmp(m, "devgone") && argc == 4)
		return do_devgone(argv[2], argv[3]);
	if (!strcmp(m, "throttle") && argc == 4)
		return do_throttle(argv[2], argv[3]);
	if (!strcmp(m, "share") && argc == 5)
		return do_share(argv[2], argv[3], atoi(argv[4]));
	if (!strcmp(m, "bytes") && argc == 4)
		return do_bytes(argv[2], argv[3]);
	if (!strcmp(m, "efault") && argc == 4)
		return do_efault(argv[2], argv[3]);
	if (!strcmp(m, "deep") && argc == 6)
		return do_deep(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (!strcmp(m, "drain") && argc == 5)
		return do_drain(argv[2], argv[3], argv[4]);
	if (!strcmp(m, "probe") && argc == 4)
		return do_probe(argv[2], argv[3]);
	if (!strcmp(m, "breakers") && (argc == 5 || argc == 6))
		return do_breakers(argv[2], argv[3], atoi(argv[4]),
				   argc == 6 ? argv[5] : NULL);
	if (!strcmp(m, "memcg") && argc == 5)
		return do_memcg(argv[2], atoi(argv[3]), argv[4]);
	if (!strcmp(m, "vqcache") && argc == 3)
		return do_vqcache(argv[2]);
	if (!strcmp(m, "vqonce") && argc == 3)
		return do_vqonce(argv[2]);
	if (!strcmp(m, "churn") && argc == 5)
		return do_churn(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: see the header of harden.c\n");
	return 2;
}
