// SPDX-License-Identifier: BSD-2-Clause
/*
 * krc_rpc_echo - an RPC service and its caller in one page.
 *
 *   krc_rpc_echo serve PORT             answer every call with its own
 *                                       bytes, until SIGTERM or Ctrl-C;
 *                                       then print how many calls it served
 *   krc_rpc_echo call ADDR PORT TEXT    one call to node ADDR, print the
 *                                       reply; exit 0 if it is TEXT
 *
 * Errors: a libkrcore call that fails returns -errno, and krc_errmsg()
 * then says why in a sentence (this thread's last failure).
 *
 * Build: cc krc_rpc_echo.c $(pkg-config --cflags --libs libkrcore)
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libkrcore.h>

#define M_ECHO	1	/* the method number: the caller and server agree on it */

/* Set by SIGTERM or SIGINT (an atomic: safe in a signal handler). */
static atomic_int stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int serve_echo(int port)
{
	/* The largest request we take: the caller of a bigger one gets -EMSGSIZE. */
	struct krc_srv_opts opts = { .max_req = 1 << 20 };
	struct sigaction sa = { .sa_handler = on_signal };
	unsigned long served = 0;
	struct krc_srv *srv;
	struct krc_req *req;
	int n;

	/* Bind PORT of this node: -EADDRINUSE if another process has it. */
	if (krc_srv_open(&srv, (uint16_t)port, &opts) < 0) {
		fprintf(stderr, "krc_rpc_echo: serve: %s\n", krc_errmsg());
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("krc_rpc_echo: serving port %d\n", port);
	fflush(stdout);
	while (!stop) {
		/*
		 * The next request, or 0 after 200 ms without one (then we
		 * look at the flag the signal handler sets). A call the
		 * caller sends again (it heard nothing yet) is not handed
		 * out twice: each request runs once.
		 */
		n = krc_srv_next(srv, &req, 200);
		if (n == -EINTR)
			continue;	/* a signal: look at the flag */
		if (n < 0) {
			fprintf(stderr, "krc_rpc_echo: next: %s\n", krc_errmsg());
			break;
		}
		if (!n)
			continue;
		/*
		 * Status 0 and the request's bytes. The reply frees req (a
		 * one-way request gets no reply: this only frees it). An
		 * error here means the reply could not go now; the caller
		 * asks again and gets it then, so there is nothing to do.
		 */
		if (req->method == M_ECHO)
			krc_srv_reply(srv, req, 0, req->data, req->len);
		else	/* the caller gets -EOPNOTSUPP */
			krc_srv_reply(srv, req, EOPNOTSUPP, NULL, 0);
		served++;
	}
	/* Closing unbinds the port: callers then get -ECONNREFUSED. */
	krc_srv_close(srv);
	printf("krc_rpc_echo: served %lu calls\n", served);
	return 0;
}

static int call_echo(const char *addr, int port, const char *text)
{
	size_t len = strlen(text);
	char *reply = malloc(len + 1);
	struct krc_chan *ch;
	int64_t n;

	if (!reply)
		return 1;
	/*
	 * A channel to (node, port): finds the node (its address card from
	 * the MetaServer on first contact) and connects, within 10 s.
	 * -ENXIO: no such node; -ETIMEDOUT: it did not answer.
	 */
	if (krc_chan_open(&ch, addr, (uint16_t)port, 10000) < 0) {
		fprintf(stderr, "krc_rpc_echo: channel to %s:%d: %s\n", addr,
			port, krc_errmsg());
		free(reply);
		return 1;
	}
	/*
	 * Call and wait up to 10 s: the reply's length, or -errno:
	 * -ECONNREFUSED (no process serves the port), -ETIMEDOUT, -EMSGSIZE
	 * (the reply is larger than our buffer), or the server's status.
	 */
	n = krc_call(ch, M_ECHO, text, len, reply, len, 10000);
	if (n < 0)
		fprintf(stderr, "krc_rpc_echo: call: %s\n", krc_errmsg());
	/* Closing a channel gives up what it still has outstanding. */
	krc_chan_close(ch);
	if (n >= 0) {
		reply[n] = '\0';
		printf("%s\n", reply);
	}
	n = n == (int64_t)len && !memcmp(reply, text, len);
	free(reply);
	return n ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve_echo(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "call"))
		return call_echo(argv[2], atoi(argv[3]), argv[4]);
	fprintf(stderr, "usage: krc_rpc_echo serve PORT | call ADDR PORT TEXT\n");
	return 2;
}
