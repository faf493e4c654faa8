// SPDX-License-Identifier: BSD-2-Clause
/*
 * krctl - inspect and exercise krcore on this node (man/krctl.8).
 *
 *   krctl status             module, ports, GIDs, card, control plane, counters
 *   krctl card               the node card, one key=value per line
 *   krctl counters           every counter, one name=value per line
 *   krctl peers              known nodes, their connections and traffic
 *   krctl conns              one line per pooled connection
 *   krctl meta               the MetaServer as this node sees it
 *   krctl members [-w GEN] [-t MS]  the nodes registered (-w: wait for a change)
 *   krctl lookup ADDR [-f]   a node's card (cache, else MetaServer; -f: fresh)
 *   krctl connect ADDR [N]   qconnect N fresh VQs (default 1): path and time
 *   krctl probe ADDR         qconnect, then READ the node's card over the VQ
 *   krctl top [-d S] [-n N]  connects/s, requests/s, recoveries, drops per peer
 *   krctl keygen FILE        write a new cluster key (mode 0600) to FILE
 *
 * --json, anywhere on the line: one JSON document on standard output
 * (top: one per interval). This file: the command line, errors and their
 * hints, exit statuses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "krctl.h"

/* What the errors say, and what to do about them. */
#define MSG_NO_DEVICE \
	"krcore is loaded but there is no %s: check devtmpfs and udev ('udevadm trigger')"
#define MSG_DENIED \
	"%s: permission denied: add the user to group rdma (udev rule 60-krcore.rules) " \
	"or run as root"
#define MSG_ABI \
	"this krctl needs krcore ABI %u or later: load the krcore.ko of its release " \
	"(modinfo krcore; dkms status krcore)"
#define MSG_NO_PORT \
	"no active RoCE port: create a Soft-RoCE device with " \
	"'rdma link add rxe0 type rxe netdev IFACE' or check 'rdma link'"
#define MSG_NO_GID \
	"no active RoCE port has a RoCE v2 GID for an IP address: give its netdev " \
	"an address, or check the gid_index= module parameter"
#define MSG_DOWN \
	"a RoCE port is active and has a GID: check the ibdev= and gid_index= module " \
	"parameters and 'dmesg | grep krcore'"
#define MSG_META \
	"MetaServer %s unreachable: check the meta_server= module parameter and that " \
	"the MetaServer node is up"
#define MSG_NO_META \
	"no MetaServer is configured: set the meta_server= module parameter (see krcore(4))"
#define MSG_NXIO \
	"check the address, and that krcore runs on that node with meta_server= naming " \
	"this cluster's MetaServer"
#define MSG_TIMEDOUT \
	"check that the node is up, runs krcore and is reachable over RoCE " \
	"('rdma link', ping)"

struct krctl_cmd {
	const char *name;
	int (*fn)(struct krctl *k);
	bool own_json;		/* writes its own documents (top) */
};

/* tests/run.sh checks that man/krctl.8 documents every name of this table. */
static const struct krctl_cmd krctl_cmds[] = {
	{ "status", cmd_status, false },
	{ "card", cmd_card, false },
	{ "counters", cmd_counters, false },
	{ "peers", cmd_peers, false },
	{ "conns", cmd_conns, false },
	{ "meta", cmd_meta, false },
	{ "members", cmd_members, false },
	{ "lookup", cmd_lookup, false },
	{ "connect", cmd_connect, false },
	{ "probe", cmd_probe, false },
	{ "top", cmd_top, true },
	{ "keygen", cmd_keygen, false },
};

static void print_synopsis(FILE *f)
{
	fprintf(f, "usage: krctl status|card|counters|peers|conns|meta\n"
		"       krctl members [-w GENERATION] [-t MS]\n"
		"       krctl lookup ADDR [-f]\n"
		"       krctl connect ADDR [N]\n"
		"       krctl probe ADDR\n"
		"       krctl top [-d SECONDS] [-n COUNT]\n"
		"       krctl keygen FILE\n");
}

static void print_usage(FILE *f)
{
	print_synopsis(f);
	fprintf(f, "       --json (before or after the command): one JSON document on\n"
		"       standard output (top: one per interval, JSON Lines)\n"
		"exit status: 0 success, 1 the operation failed, 2 usage error,\n"
		"       3 krcore not loaded (no /dev/krcore), 4 permission denied on\n"
		"       /dev/krcore, 5 control plane down (no active RoCE port),\n"
		"       6 MetaServer unreachable, 7 krcore.ko older than krctl (ABI)\n"
		"see krctl(8)\n");
}

static void vappend(char *buf, size_t len, const char *fmt, va_list ap)
{
	size_t used = strlen(buf);

	if (used && used + 2 < len) {
		buf[used++] = ' ';
		buf[used] = '\0';
	}
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
}

int krctl_fail(struct krctl *k, int status, int err, const char *fmt, ...)
{
	char msg[sizeof(k->err_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "krctl: %s\n", msg);
	if (!k->err_status) {
		k->err_status = status;
		k->err_errno = err;
		memcpy(k->err_msg, msg, sizeof(msg));
	}
	return status;
}

void krctl_hint(struct krctl *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("krctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	va_start(ap, fmt);
	vappend(k->err_hint, sizeof(k->err_hint), fmt, ap);
	va_end(ap);
}

int krctl_usage(struct krctl *k, const char *fmt, ...)
{
	char msg[sizeof(k->err_msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	krctl_fail(k, KRCTL_USAGE, 0, "%s", msg);
	print_synopsis(stderr);
	fprintf(stderr, "krctl --help: options and exit statuses; krctl(8)\n");
	return KRCTL_USAGE;
}

int krctl_open(struct krctl *k, struct krc_vq **vq)
{
	int ret = krc_vq_open(vq);

	switch (ret) {
	case 0:
		return 0;
	case -ENOENT:
	case -ENXIO:
	case -ENODEV:
		if (ret == -ENOENT && access("/sys/module/krcore", F_OK) == 0)
			return krctl_fail(k, KRCTL_NOT_LOADED, -ret,
					  MSG_NO_DEVICE, KRCORE_DEVICE_PATH);
		return krctl_fail(k, KRCTL_NOT_LOADED, -ret, KRCTL_MSG_NOT_LOADED,
				  KRCORE_DEVICE_PATH);
	case -EACCES:
	case -EPERM:
		return krctl_fail(k, KRCTL_DENIED, -ret, MSG_DENIED, KRCORE_DEVICE_PATH);
	case -EPROTO:
		krctl_fail(k, KRCTL_ABI, -ret, "%s", krc_errmsg());
		krctl_hint(k, MSG_ABI, KRC_LIB_ABI_VERSION);
		return KRCTL_ABI;
	default:
		return krctl_fail(k, KRCTL_FAILED, -ret, "%s", krc_errmsg());
	}
}

int krctl_down(struct krctl *k, struct krc_vq *vq)
{
	struct krcore_port_info p;
	bool active = false, gid = false;
	unsigned int i;

	for (i = 0; krc_query_port(vq, i, &p) == 0; i++) {
		if (!(p.flags & KRCORE_PORT_F_ACTIVE))
			continue;
		active = true;
		if (p.flags & KRCORE_PORT_F_HAS_GID)
			gid = true;
	}
	if (!active)
		krctl_hint(k, MSG_NO_PORT);
	else if (!gid)
		krctl_hint(k, MSG_NO_GID);
	else
		krctl_hint(k, MSG_DOWN);
	return KRCTL_DOWN;
}

int krctl_meta_status(struct krctl *k, const struct krcore_node_info *ni)
{
	char gid[KRC_GID_STRLEN];

	if (!(ni->flags & KRCORE_NODE_F_UP))
		return KRCTL_DOWN;
	if (ni->meta_state != KRCORE_META_DOWN)
		return KRCTL_OK;
	krc_gid_format(ni->meta_gid, gid, sizeof(gid));
	return krctl_fail(k, KRCTL_META_DOWN, 0, MSG_META, gid);
}

/* EHOSTUNREACH of a lookup or connect: no card cached, no MetaServer. */
static int meta_unreachable(struct krctl *k, struct krc_vq *vq)
{
	struct krcore_node_info ni;
	char gid[KRC_GID_STRLEN];

	if (!vq || krc_node_info(vq, &ni) < 0 || ni.meta_state == KRCORE_META_NONE) {
		krctl_hint(k, MSG_NO_META);
		return KRCTL_META_DOWN;
	}
	krc_gid_format(ni.meta_gid, gid, sizeof(gid));
	krctl_hint(k, MSG_META, gid);
	return KRCTL_META_DOWN;
}

int krctl_lib_fail(struct krctl *k, struct krc_vq *vq, int err, enum krctl_op op)
{
	int status = KRCTL_FAILED;

	if (err == -ENODEV && vq)
		status = KRCTL_DOWN;
	if (err == -EHOSTUNREACH && (op == KRCTL_OP_LOOKUP || op == KRCTL_OP_CONNECT))
		status = KRCTL_META_DOWN;
	krctl_fail(k, status, -err, "%s", krc_errmsg());
	if (status == KRCTL_DOWN)
		return krctl_down(k, vq);
	if (status == KRCTL_META_DOWN)
		return meta_unreachable(k, vq);
	switch (err) {
	case -ENXIO:
		krctl_hint(k, MSG_NXIO);
		break;
	case -ETIMEDOUT:
		if (op == KRCTL_OP_CONNECT)
			krctl_hint(k, MSG_TIMEDOUT);
		break;
	}
	return status;
}

void krctl_write_error(struct krctl *k)
{
	struct json *j = &k->json;

	json_key(j, "error");
	json_object_begin(j);
	json_kv_i64(j, "status", k->err_status);
	if (k->err_errno) {
		const char *name = strerrorname_np(k->err_errno);

		json_kv_i64(j, "errno", k->err_errno);
		if (name)
			json_kv_string(j, "errno_name", name);
		else
			json_kv_null(j, "errno_name");
	} else {
		json_kv_null(j, "errno");
		json_kv_null(j, "errno_name");
	}
	json_kv_string(j, "message", k->err_msg);
	if (k->err_hint[0])
		json_kv_string(j, "hint", k->err_hint);
	else
		json_kv_null(j, "hint");
	json_object_end(j);
}

bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static const struct krctl_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(krctl_cmds); i++)
		if (!strcmp(krctl_cmds[i].name, name))
			return &krctl_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct krctl_cmd *cmd = NULL;
	struct krctl k;
	char **args;
	int i, n = 0, status;

	memset(&k, 0, sizeof(k));
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return KRCTL_FAILED;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			k.json_mode = true;
		else
			args[n++] = argv[i];
	}
	if (n && (!strcmp(args[0], "-h") || !strcmp(args[0], "--help"))) {
		print_usage(stdout);
		free(args);
		return KRCTL_OK;
	}
	json_init(&k.json, stdout);
	if (n)
		cmd = find_cmd(args[0]);
	if (!cmd) {
		if (n)
			status = krctl_usage(&k, "unknown command '%s'", args[0]);
		else
			status = krctl_usage(&k, "no command");
	} else {
		k.argc = n - 1;
		k.argv = args + 1;
		if (k.json_mode && !cmd->own_json)
			json_object_begin(&k.json);
		status = cmd->fn(&k);
		if (status && !k.err_status)
			krctl_fail(&k, status, 0, "failed");
	}
	if (k.json_mode && (!cmd || !cmd->own_json || k.err_status)) {
		if (!cmd || cmd->own_json) {
			json_init(&k.json, stdout);
			json_object_begin(&k.json);
		}
		if (k.err_status)
			krctl_write_error(&k);
		json_object_end(&k.json);
		if (json_end(&k.json) < 0) {
			fprintf(stderr, "krctl: internal error: the JSON output is malformed\n");
			status = status ? status : KRCTL_FAILED;
		}
	}
	if (fflush(stdout) == EOF && !status)
		status = KRCTL_FAILED;
	free(args);
	return status;
}
