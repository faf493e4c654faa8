// SPDX-License-Identifier: BSD-2-Clause
/*
 * kvs_demo - the elastic key-value store of issue 11 (KRCore's RACE
 * experiment): a memory node holds a RACE-like hash table (common/kvs.h)
 * in registered memory; workers on compute nodes reach it with one-sided
 * READs (lookups), WRITEs and CAS (inserts), either through krcore or
 * through raw verbs with rdma_cm. Nodes pass addresses and rkeys through
 * files in a shared directory DIR, as bench/read_bench.c does.
 *
 *   kvs_demo memnode DIR ADDR KEYS
 *       allocate and format a table for KEYS keys at half load, register
 *       it with krcore (if the module is loaded) and with verbs (an
 *       rdma_cm listener bound to ADDR, port KVS_VERBS_PORT), publish
 *       DIR/kvs.krcore and DIR/kvs.verbs (struct kvs_pub), then
 *       DIR/kvs.ready; serve until DIR/stop exists.
 *   kvs_demo load DIR METHOD KEYS
 *       insert keys 0 .. KEYS-1 (an existing key counts as loaded).
 *   kvs_demo worker DIR METHOD SECONDS
 *       a new worker: open, connect, READ the table's header, the first
 *       GET, then GETs of random keys for SECONDS, each value checked.
 * METHOD is krcore or verbs.
 *
 * Output lines, one per event, for a script to turn into a timeline.
 * Times in microseconds; T0 is the worker's start: the CLOCK_REALTIME
 * microseconds in $KRC_KVS_T0_US if the launcher set it just before
 * starting the process (then exec and loading count), else main()'s
 * first instruction.
 *   S first_get METHOD PID T0 OPEN_US CONNECT_US FIRST_GET_US MAIN_US
 *       (each from T0: device/VQ open done, connection ready, first
 *       GET answered, main() entered: FIRST_GET_US - MAIN_US is the
 *       worker's own time, without exec and loading)
 *   T METHOD PID ELAPSED_US GETS
 *       every 5 ms (GETS: completed so far, ELAPSED_US from T0)
 *   S done METHOD PID SECONDS GETS MISSES ERRORS GETS_PER_S
 *   S load METHOD KEYS LOADED EXISTING US INSERTS_PER_S
 *   S memnode GROUPS LOGS LOG_SIZE BYTES KEYS
 * Anything else (progress, errors) goes to stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libkrcore.h"
#include "bench.h"
#include "kvs_backend.h"

#define SAMPLE_US	5000	/* one T line per 5 ms */
#define LOAD_PCT	50	/* table load at KEYS keys */
#define LOG_SIZE	(256U << 10)
#define SPARE_LOGS	8	/* areas beyond what the load needs */
#define VAL_LEN		32

static double real_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* CLOCK_REALTIME microseconds when main() began. */
static double main_us;

static u32 key_of(uint64_t i, char *k)
{
	int n = snprintf(k, KRC_KVS_KEY_MAX + 1, "key%012llu",
			 (unsigned long long)i);

	return n < KRC_KVS_KEY_MAX ? (u32)n : KRC_KVS_KEY_MAX;
}

/* The value of key @i: checkable by any worker. */
static u32 val_of(uint64_t i, char *v)
{
	u32 n = (u32)snprintf(v, KRC_KVS_VAL_MAX + 1, "value-of-%llu-",
			      (unsigned long long)i);

	for (; n < VAL_LEN; n++)
		v[n] = (char)('a' + (i + n) % 26);
	v[n] = '\0';
	return n;
}

static int stop_requested(const char *dir)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/stop", dir);
	return !stat(path, &st);
}

static int run_memnode(const char *dir, const char *addr, uint64_t keys)
{
	struct kvs_verbs_srv *srv = NULL;
	struct kvs_pub pk = {}, pv = {};
	struct krc_kvs_geom g;
	uint64_t logs;
	void *mem;
	int ret, have_krc, have_verbs;

	logs = (keys * KRC_KVS_BLOCK_MAX + LOG_SIZE - 1) / LOG_SIZE +
	       SPARE_LOGS;
	if (logs > KRC_KVS_MAX_LOGS ||
	    krc_kvs_geom_init(&g, krc_kvs_groups_for(keys, LOAD_PCT),
			      (u32)logs, LOG_SIZE,
			      (uint64_t)time(NULL) ^ getpid())) {
		fprintf(stderr, "kvs_demo: no table for %llu keys\n",
			(unsigned long long)keys);
		return 1;
	}
	mem = mmap(NULL, g.region_size, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED || krc_kvs_format(mem, g.region_size, &g)) {
		perror("kvs_demo: region");
		return 1;
	}
	snprintf(pk.addr, sizeof(pk.addr), "%s", addr);
	pk.keys = keys;
	pv = pk;
	pv.port = KVS_VERBS_PORT;
	have_krc = !kvs_krcore_serve(mem, g.region_size, &pk);
	have_verbs = !kvs_verbs_serve(mem, g.region_size, &pv, &srv);
	if (!have_krc && !have_verbs)
		return 1;
	ret = 0;
	if (have_krc)
		ret |= bench_write_file(dir, "kvs.krcore", &pk, sizeof(pk));
	if (have_verbs)
		ret |= bench_write_file(dir, "kvs.verbs", &pv, sizeof(pv));
	ret |= bench_write_file(dir, "kvs.ready", "", 0);
	if (ret) {
		perror("kvs_demo: publish");
		return 1;
	}
	printf("S memnode %u %u %u %llu %llu\n", g.ngroups, g.nlogs,
	       g.log_size, (unsigned long long)g.region_size,
	       (unsigned long long)keys);
	fflush(stdout);
	fprintf(stderr, "kvs_demo: memnode serving %s%s%s\n",
		have_krc ? "krcore" : "", have_krc && have_verbs ? " and " : "",
		have_verbs ? "verbs" : "");
	while (!stop_requested(dir)) {
		if (srv)
			kvs_verbs_poll(srv, 100);
		else
			usleep(100000);
	}
	return 0;
}

/*
 * Read what the memory node published for @method and connect; *t_conn
 * (if not NULL) gets the CLOCK_REALTIME the connect started at.
 */
static int connect_method(const char *dir, const char *method,
			  struct kvs_conn *conn, struct kvs_pub *pub,
			  double *t_conn)
{
	char name[64];

	if (strcmp(method, "krcore") && strcmp(method, "verbs")) {
		fprintf(stderr, "kvs_demo: METHOD is krcore or verbs\n");
		return -EINVAL;
	}
	snprintf(name, sizeof(name), "kvs.%s", method);
	if (bench_read_file(dir, name, pub, sizeof(*pub)))
		return -ENOENT;
	pub->addr[sizeof(pub->addr) - 1] = '\0';
	memset(conn, 0, sizeof(*conn));
	if (t_conn)
		*t_conn = real_us();
	return strcmp(method, "krcore") ? kvs_verbs_connect(pub, conn) :
					  kvs_krcore_connect(pub, conn);
}

static int run_load(const char *dir, const char *method, uint64_t keys)
{
	char k[KRC_KVS_KEY_MAX + 1], v[KRC_KVS_VAL_MAX + 1];
	uint64_t i, loaded = 0, existing = 0;
	struct kvs_conn conn;
	struct kvs_pub pub;
	struct krc_kvs c;
	double t0, us;
	int ret;

	if (connect_method(dir, method, &conn, &pub, NULL))
		return 1;
	ret = krc_kvs_open(&c, conn.ops, conn.ctx, conn.region_len);
	if (ret) {
		fprintf(stderr, "kvs_demo: open the table: %s\n",
			strerror(-ret));
		return 1;
	}
	t0 = now_us();
	for (i = 0; i < keys; i++) {
		u32 kl = key_of(i, k), vl = val_of(i, v);

		ret = krc_kvs_insert(&c, k, kl, v, vl);
		if (ret && ret != -EEXIST) {
			fprintf(stderr, "kvs_demo: insert %s: %s\n", k,
				strerror(-ret));
			return 1;
		}
		existing += ret == -EEXIST;
		loaded += !ret;
		if (keys >= 10 && (i + 1) % (keys / 10) == 0)
			fprintf(stderr, "kvs_demo: loaded %llu%%\n",
				(unsigned long long)((i + 1) * 100 / keys));
	}
	us = now_us() - t0;
	printf("S load %s %llu %llu %llu %.0f %.0f\n", conn.method,
	       (unsigned long long)keys, (unsigned long long)loaded,
	       (unsigned long long)existing, us, keys / (us / 1e6));
	fprintf(stderr, "kvs_demo: %llu CAS lost, %llu duplicates removed, %llu retries\n",
		(unsigned long long)c.st.cas_failed,
		(unsigned long long)c.st.dups_removed,
		(unsigned long long)c.st.retries);
	conn.close(conn.ctx);
	return 0;
}

/* One GET of a random key, its value checked: 0, 1 (miss) or -errno. */
static int one_get(struct krc_kvs *c, uint64_t keys)
{
	char k[KRC_KVS_KEY_MAX + 1], v[KRC_KVS_VAL_MAX + 1];
	u8 got[KRC_KVS_VAL_MAX];
	uint64_t i = (uint64_t)lrand48() % (keys ? keys : 1);
	u32 kl = key_of(i, k), vl = val_of(i, v), glen;
	int ret;

	ret = krc_kvs_get(c, k, kl, got, sizeof(got), &glen);
	if (ret == -ENOENT)
		return 1;
	if (ret)
		return ret;
	if (glen != vl || memcmp(got, v, vl))
		return -EBADMSG;
	return 0;
}

static int run_worker(const char *dir, const char *method, double secs)
{
	const char *env = getenv("KRC_KVS_T0_US");
	double t0 = env ? atof(env) : main_us, end, next;
	unsigned long long gets = 0, misses = 0, errors = 0;
	struct kvs_conn conn;
	struct kvs_pub pub;
	struct krc_kvs c;
	double t_start, t_first;
	int ret;

	ret = connect_method(dir, method, &conn, &pub, &t_start);
	if (ret)
		return 1;
	ret = krc_kvs_open(&c, conn.ops, conn.ctx, conn.region_len);
	if (ret) {
		fprintf(stderr, "kvs_demo: open the table: %s\n",
			strerror(-ret));
		return 1;
	}
	ret = one_get(&c, pub.keys);
	if (ret < 0) {
		fprintf(stderr, "kvs_demo: first GET: %s\n", strerror(-ret));
		return 1;
	}
	t_first = real_us();
	gets = 1;
	misses = ret;
	printf("S first_get %s %d %.0f %.0f %.0f %.0f %.0f\n", conn.method,
	       (int)getpid(), t0, t_start - t0 + conn.open_us,
	       t_start - t0 + conn.connect_us, t_first - t0, main_us - t0);
	next = t_first - t0 + SAMPLE_US;
	end = t_first + secs * 1e6;
	for (;;) {
		double now = real_us();

		if (now - t0 >= next) {
			printf("T %s %d %.0f %llu\n", conn.method,
			       (int)getpid(), now - t0, gets);
			next += SAMPLE_US;
			if (next < now - t0)
				next = now - t0 + SAMPLE_US;
		}
		if (now >= end)
			break;
		ret = one_get(&c, pub.keys);
		if (ret < 0) {
			if (++errors <= 5)
				fprintf(stderr, "kvs_demo: GET: %s\n",
					strerror(-ret));
			if (ret == -ETIMEDOUT || ret == -EIO)
				break;	/* the connection is gone */
			continue;
		}
		gets++;
		misses += ret;
	}
	printf("S done %s %d %.1f %llu %llu %llu %.0f\n", conn.method,
	       (int)getpid(), secs, gets, misses, errors,
	       gets / ((real_us() - t_first) / 1e6));
	conn.close(conn.ctx);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	main_us = real_us();
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand48(getpid() ^ (long)real_us());
	if (argc == 5 && !strcmp(argv[1], "memnode"))
		return run_memnode(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "load"))
		return run_load(argv[2], argv[3], strtoull(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "worker"))
		return run_worker(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr, "usage: kvs_demo memnode DIR ADDR KEYS\n"
		"       kvs_demo load DIR METHOD KEYS\n"
		"       kvs_demo worker DIR METHOD SECONDS\n"
		"METHOD: krcore or verbs\n");
	return 2;
}
