/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * krctl.h - what the parts of krctl share: exit statuses, the command
 * context, errors, and the commands themselves.
 */
#ifndef KRCTL_H
#define KRCTL_H

#include <stdbool.h>
#include <stdint.h>

#include "json.h"
#include "libkrcore.h"

#define KRCTL_COUNTERS_DIR	"/sys/class/misc/krcore/counters"
#define KRCTL_MSG_NOT_LOADED \
	"krcore is not loaded (no %s): load it with 'modprobe krcore' (see krcore(4))"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Exit statuses: man/krctl.8 (EXIT STATUS) and krctl --help list them. */
enum krctl_status {
	KRCTL_OK		= 0,	/* success */
	KRCTL_FAILED		= 1,	/* the operation failed */
	KRCTL_USAGE		= 2,	/* a wrong command line */
	KRCTL_NOT_LOADED	= 3,	/* krcore is not loaded (no /dev/krcore) */
	KRCTL_DENIED		= 4,	/* permission denied on /dev/krcore */
	KRCTL_DOWN		= 5,	/* control plane down, no active RoCE port */
	KRCTL_META_DOWN		= 6,	/* the MetaServer is unreachable */
	KRCTL_ABI		= 7,	/* the module's ABI is older than krctl's */
};

/* What failed, for the hint of a libkrcore error. */
enum krctl_op {
	KRCTL_OP_QUERY,		/* a query of this node */
	KRCTL_OP_CARD,		/* this node's card */
	KRCTL_OP_LOOKUP,	/* a lookup of another node's card */
	KRCTL_OP_CONNECT,	/* a qconnect */
	KRCTL_OP_PROBE,		/* a READ over a connection */
};

struct krctl {
	bool json_mode;		/* --json */
	struct json json;	/* the writer on standard output */
	int argc;		/* the command's arguments, after its name */
	char **argv;
	/* The first failure, for the "error" object of --json. */
	int err_status;
	int err_errno;		/* positive errno, 0: none */
	char err_msg[320];
	char err_hint[320];
};

/* main.c: errors. Each prints "krctl: ..." lines and returns the status. */
int krctl_fail(struct krctl *k, int status, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A wrong command line: the message, then the usage; KRCTL_USAGE. */
int krctl_usage(struct krctl *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A hint line after a failure (what to do about it). */
void krctl_hint(struct krctl *k, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* libkrcore's -errno @err (message: krc_errmsg()) of operation @op. */
int krctl_lib_fail(struct krctl *k, struct krc_vq *vq, int err, enum krctl_op op);
/* Open a VQ: 0, or the failure reported and its status returned. */
int krctl_open(struct krctl *k, struct krc_vq **vq);
/* Why the control plane is down, as a hint; returns KRCTL_DOWN. */
int krctl_down(struct krctl *k, struct krc_vq *vq);
/* The exit status of a state of the MetaServer (and its hint). */
int krctl_meta_status(struct krctl *k, const struct krcore_node_info *ni);
void krctl_write_error(struct krctl *k);

/* show.c: status, card, counters, peers, conns, meta */
int cmd_status(struct krctl *k);
int cmd_card(struct krctl *k);
int cmd_counters(struct krctl *k);
int cmd_peers(struct krctl *k);
int cmd_conns(struct krctl *k);

/* A 64-bit value (an incarnation, a generation) as 16 hex digits. */
void json_hex64(struct json *j, const char *key, uint64_t v);

/* members.c */
int cmd_members(struct krctl *k);
int cmd_meta(struct krctl *k);
void print_card(const struct krcore_card *c, const char *indent);
void json_card(struct json *j, const char *key, const struct krcore_card *c);
const char *meta_state_name(unsigned int st);

/* ops.c: lookup, connect, probe */
int cmd_lookup(struct krctl *k);
int cmd_connect(struct krctl *k);
int cmd_probe(struct krctl *k);

/* top.c */
int cmd_top(struct krctl *k);
int cmd_keygen(struct krctl *k);

/* main.c: the command line */
bool parse_uint(const char *s, unsigned long max, unsigned long *out);

#endif /* KRCTL_H */
