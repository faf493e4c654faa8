// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_rpc_once - a function-style caller: a new process that makes one
 * call and exits, as a serverless function would, and how long it took.
 *
 *   krc_rpc_once ADDR PORT    one echo call ("hello") to krc_rpc_echo
 *                             serving PORT of node ADDR; print the time
 *                             from main() to the reply, and from fork()
 *                             (exec and loading included) as far as the
 *                             kernel tells it (in clock ticks)
 *
 * Nothing is set up beforehand: the first channel to a node this node
 * never contacted finds it (its card from the MetaServer) and connects.
 *
 * Build: cc krc_rpc_once.c $(pkg-config --cflags --libs libkrcore)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libkrcore.h>

#define M_ECHO	1	/* krc_rpc_echo's method */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

/*
 * Nanoseconds since this process was forked, an upper bound: the kernel
 * gives its start (field 22 of /proc/self/stat) in clock ticks since boot,
 * rounded down. 0 if it cannot tell.
 */
static uint64_t since_fork_ns(uint64_t boot_now, long *tick_us)
{
	unsigned long long start;
	char buf[1024], *p;
	size_t n = 0;
	FILE *f;
	int i;

	f = fopen("/proc/self/stat", "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	/* After "pid (comm)": the comm may hold spaces and parentheses. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	*tick_us = 1000000 / sysconf(_SC_CLK_TCK);
	if (!p)
		return 0;
	start = strtoull(p, NULL, 10);
	return boot_now - start * (uint64_t)*tick_us * 1000;
}

int main(int argc, char **argv)
{
	uint64_t t0 = now_ns(CLOCK_MONOTONIC), t1, boot, fork_ns;
	struct krc_chan *ch;
	char reply[16];
	long tick_us;
	int64_t n;

	if (argc != 3) {
		fprintf(stderr, "usage: krc_rpc_once ADDR PORT\n");
		return 2;
	}
	/* The node's card (a lookup on first contact), a connection. */
	if (krc_chan_open(&ch, argv[1], (uint16_t)atoi(argv[2]), 10000) < 0) {
		fprintf(stderr, "krc_rpc_once: channel: %s\n", krc_errmsg());
		return 1;
	}
	/* -ECONNREFUSED: nothing serves the port; -ETIMEDOUT: no answer. */
	n = krc_call(ch, M_ECHO, "hello", 5, reply, sizeof(reply), 10000);
	t1 = now_ns(CLOCK_MONOTONIC);
	boot = now_ns(CLOCK_BOOTTIME);
	if (n < 0)
		fprintf(stderr, "krc_rpc_once: call: %s\n", krc_errmsg());
	krc_chan_close(ch);
	if (n != 5 || memcmp(reply, "hello", 5)) {
		fprintf(stderr, "krc_rpc_once: no \"hello\" back\n");
		return 1;
	}
	printf("krc_rpc_once: reply from %s:%s in %llu us from start", argv[1],
	       argv[2], (unsigned long long)(t1 - t0) / 1000);
	fork_ns = since_fork_ns(boot, &tick_us);
	if (fork_ns)
		printf(", at most %llu us from fork (counted in %ld us ticks)",
		       (unsigned long long)fork_ns / 1000, tick_us);
	printf("\n");
	return 0;
}
