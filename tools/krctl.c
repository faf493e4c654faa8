// SPDX-License-Identifier: BSD-2-Clause
/*
 * krctl - inspect krcore on this node.
 *
 *   krctl status     module version, ports, GIDs, the node card, counters
 *   krctl card       the node card, one key=value per line
 *   krctl counters   every counter, one name=value per line
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkrcore.h"

#define COUNTERS_DIR "/sys/class/misc/krcore/counters"

static const char *mtu_str(unsigned int mtu)
{
	static const char *const names[] = { "?", "256", "512", "1024", "2048", "4096" };

	return mtu < 6 ? names[mtu] : "?";
}

static const char *state_str(unsigned int state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"
	};

	return state < 6 ? names[state] : "?";
}

static void print_card(const struct krcore_card *c, const char *indent)
{
	char gid[KRC_GID_STRLEN];

	krc_gid_format(c->gid, gid, sizeof(gid));
	printf("%snode_id=%u\n", indent, c->node_id);
	printf("%saddr=%s\n", indent, gid);
	printf("%sgid=", indent);
	for (int i = 0; i < 16; i += 2)
		printf("%02x%02x%s", c->gid[i], c->gid[i + 1], i < 14 ? ":" : "\n");
	printf("%smac=%02x:%02x:%02x:%02x:%02x:%02x\n", indent, c->mac[0],
	       c->mac[1], c->mac[2], c->mac[3], c->mac[4], c->mac[5]);
	printf("%sport=%u\n%smtu=%s\n", indent, c->port_num, indent,
	       mtu_str(c->active_mtu));
	printf("%sud_qpn=%u\n%sud_qkey=0x%08x\n", indent, c->ud_qpn, indent,
	       c->ud_qkey);
	printf("%sincarnation=%016" PRIx64 "\n", indent, (uint64_t)c->incarnation);
}

static int cmd_card(struct krc_vq *vq)
{
	struct krcore_card card;
	int ret = krc_query_card(vq, &card);

	if (ret < 0) {
		fprintf(stderr, "krctl: %s\n", krc_errmsg());
		return 1;
	}
	print_card(&card, "");
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Print every counter as "<indent>name=value"; 0 or -errno. */
static int print_counters(const char *indent)
{
	char *names[256], path[512], buf[64];
	struct dirent *de;
	size_t n = 0, i;
	DIR *d;

	d = opendir(COUNTERS_DIR);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < 256) {
		if (de->d_name[0] != '.')
			names[n++] = strdup(de->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	for (i = 0; i < n; i++) {
		FILE *f;

		snprintf(path, sizeof(path), COUNTERS_DIR "/%s", names[i]);
		f = fopen(path, "r");
		if (f && fgets(buf, sizeof(buf), f))
			printf("%s%s=%s", indent, names[i], buf);
		if (f)
			fclose(f);
		free(names[i]);
	}
	return 0;
}

static int cmd_counters(void)
{
	int ret = print_counters("");

	if (ret < 0) {
		fprintf(stderr, "krctl: cannot read %s: %s\n", COUNTERS_DIR,
			strerror(-ret));
		return 1;
	}
	return 0;
}

static int cmd_status(struct krc_vq *vq)
{
	const struct krcore_version *v = krc_vq_version(vq);
	struct krcore_port_info p;
	struct krcore_card card;
	char gid[KRC_GID_STRLEN];
	unsigned int i;

	printf("krcore %s, ABI %u (libkrcore ABI %u)\n", v->module_version,
	       v->abi_version, KRC_LIB_ABI_VERSION);
	printf("ports:\n");
	for (i = 0; krc_query_port(vq, i, &p) == 0; i++) {
		krc_gid_format(p.gid, gid, sizeof(gid));
		printf("  %s/%u: %s, mtu %s, netdev %s, gid[%d] %s%s\n", p.ibdev,
		       p.port_num, state_str(p.state), mtu_str(p.active_mtu),
		       p.netdev[0] ? p.netdev : "-", p.gid_index,
		       (p.flags & KRCORE_PORT_F_HAS_GID) ? gid : "none",
		       (p.flags & KRCORE_PORT_F_PRIMARY) ? " (primary)" : "");
		printf("    max_qp %u, max_qp_wr %u, max_cqe %u, max_sge %u\n",
		       p.max_qp, p.max_qp_wr, p.max_cqe, p.max_sge);
	}
	if (i == 0)
		printf("  none\n");
	printf("card:\n");
	if (krc_query_card(vq, &card) == 0)
		print_card(&card, "  ");
	else
		printf("  none: %s\n", krc_errmsg());
	printf("counters:\n");
	if (print_counters("  ") < 0)
		printf("  unavailable (%s)\n", COUNTERS_DIR);
	return 0;
}

static void print_usage(FILE *f)
{
	fprintf(f, "usage: krctl status|card|counters\n");
}

int main(int argc, char **argv)
{
	struct krc_vq *vq;
	int ret;

	if (argc != 2) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "counters"))
		return cmd_counters();
	if (strcmp(argv[1], "status") && strcmp(argv[1], "card")) {
		print_usage(stderr);
		return 2;
	}
	ret = krc_vq_open(&vq);
	if (ret < 0) {
		fprintf(stderr, "krctl: %s\n", krc_errmsg());
		return 1;
	}
	ret = !strcmp(argv[1], "status") ? cmd_status(vq) : cmd_card(vq);
	krc_vq_close(vq);
	return ret;
}
