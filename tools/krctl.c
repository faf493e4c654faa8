// SPDX-License-Identifier: BSD-2-Clause
/*
 * krctl - inspect krcore on this node.
 *
 *   krctl status             module, ports, GIDs, card, control plane, counters
 *   krctl card               the node card, one key=value per line
 *   krctl counters           every counter, one name=value per line
 *   krctl peers              known nodes and the pooled connections to them
 *   krctl lookup ADDR [-f]   a node's card (cache, else MetaServer; -f: fresh)
 *   krctl connect ADDR [N]   qconnect N fresh VQs (default 1): path and time
 *   krctl probe ADDR         qconnect, then READ the node's card over the VQ
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

static const char *meta_state_str(unsigned int st)
{
	static const char *const names[] = {
		"none", "connecting", "registered", "down (retrying)"
	};

	return st < 4 ? names[st] : "?";
}

static const char *conn_state_str(unsigned int st)
{
	static const char *const names[] = {
		"spare", "connecting", "half-open", "ready", "error"
	};

	return st < 5 ? names[st] : "?";
}

static void print_node(struct krc_vq *vq)
{
	struct krcore_node_info ni;
	char gid[KRC_GID_STRLEN];

	printf("control plane:\n");
	if (krc_node_info(vq, &ni) < 0 || !(ni.flags & KRCORE_NODE_F_UP)) {
		printf("  down\n");
		return;
	}
	krc_gid_format(ni.meta_gid, gid, sizeof(gid));
	printf("  metaserver: %s%s%s, table %u slots",
	       meta_state_str(ni.meta_state),
	       ni.meta_state ? " at " : "", ni.meta_state ? gid : "",
	       ni.meta_nslots);
	if (ni.flags & KRCORE_NODE_F_META_HOST)
		printf(", hosted here: %u cards", ni.meta_used);
	printf("\n  peers %u, pooled connections %u (pool size %u), spare QPs %u\n",
	       ni.peers, ni.conns, ni.pool_size, ni.spares);
}

static int cmd_peers(struct krc_vq *vq)
{
	struct krcore_peer_info pi;
	char gid[KRC_GID_STRLEN];
	unsigned int i, c;

	for (i = 0; krc_peer_info(vq, i, &pi) == 0; i++) {
		krc_gid_format(pi.card.gid, gid, sizeof(gid));
		printf("peer %s%s: node %u, card %s, incarnation %016llx, ",
		       gid, (pi.flags & KRCORE_PEER_F_LOCAL) ? " (this node)" : "",
		       pi.card.node_id,
		       (pi.flags & KRCORE_PEER_F_CARD) ? "cached" : "none",
		       (unsigned long long)pi.card.incarnation);
		printf("%u conns, %llu qconnects, %llu handshakes, %u VQs on datagrams\n",
		       pi.nconns, (unsigned long long)pi.qconnects,
		       (unsigned long long)pi.handshakes, pi.dgram_vqs);
		for (c = 0; c < pi.nconns && c < KRCORE_PEER_MAX_CONNS; c++)
			printf("  conn %u: %s, qp %u -> %u, %u VQs, %s\n",
			       pi.conns[c].id, conn_state_str(pi.conns[c].state),
			       pi.conns[c].qpn, pi.conns[c].remote_qpn,
			       pi.conns[c].vqs,
			       pi.conns[c].initiator ? "initiated here" : "accepted");
	}
	if (!i)
		printf("no peers\n");
	return 0;
}

static int cmd_lookup(struct krc_vq *vq, const char *addr, unsigned int flags)
{
	struct krcore_lookup lk;
	char path[64];

	if (krc_lookup(vq, addr, flags, &lk) < 0) {
		fprintf(stderr, "krctl: %s\n", krc_errmsg());
		return 1;
	}
	printf("path=%s\nreads=%u\nelapsed_ns=%llu\n",
	       krc_path_str(lk.path, path, sizeof(path)), lk.reads,
	       (unsigned long long)lk.elapsed_ns);
	print_card(&lk.card, "");
	return 0;
}

static int cmd_connect(const char *addr, int n, int probe)
{
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	struct krc_vq *vq;
	char path[64];
	int i;

	for (i = 0; i < n; i++) {
		if (krc_vq_open(&vq) < 0 || krc_qconnect(vq, addr, 0, &qc) < 0) {
			fprintf(stderr, "krctl: %s\n", krc_errmsg());
			return 1;
		}
		printf("path=%s reads=%u attempts=%u conn=%u qpn=%u elapsed_ns=%llu peer_node=%u\n",
		       krc_path_str(qc.path, path, sizeof(path)), qc.reads,
		       qc.attempts, qc.conn_id, qc.qpn,
		       (unsigned long long)qc.elapsed_ns, qc.card.node_id);
		if (probe) {
			if (krc_probe(vq, &pr) < 0) {
				fprintf(stderr, "krctl: %s\n", krc_errmsg());
				krc_vq_close(vq);
				return 1;
			}
			printf("probe: READ the peer's card in %llu ns\n",
			       (unsigned long long)pr.elapsed_ns);
			print_card(&pr.card, "  ");
		}
		krc_vq_close(vq);
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
	print_node(vq);
	printf("counters:\n");
	if (print_counters("  ") < 0)
		printf("  unavailable (%s)\n", COUNTERS_DIR);
	return 0;
}

static void print_usage(FILE *f)
{
	fprintf(f, "usage: krctl status|card|counters|peers\n"
		"       krctl lookup ADDR [-f]\n"
		"       krctl connect ADDR [N]\n"
		"       krctl probe ADDR\n");
}

int main(int argc, char **argv)
{
	struct krc_vq *vq;
	int ret;

	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(cmd, "counters"))
		return cmd_counters();
	if ((argc == 3 || argc == 4) && !strcmp(cmd, "connect"))
		return cmd_connect(argv[2], argc == 4 ? atoi(argv[3]) : 1, 0);
	if (argc == 3 && !strcmp(cmd, "probe"))
		return cmd_connect(argv[2], 1, 1);
	if (!((argc == 2 && (!strcmp(cmd, "status") || !strcmp(cmd, "card") ||
			     !strcmp(cmd, "peers"))) ||
	      ((argc == 3 || argc == 4) && !strcmp(cmd, "lookup")))) {
		print_usage(stderr);
		return 2;
	}
	ret = krc_vq_open(&vq);
	if (ret < 0) {
		fprintf(stderr, "krctl: %s\n", krc_errmsg());
		return 1;
	}
	if (!strcmp(cmd, "status"))
		ret = cmd_status(vq);
	else if (!strcmp(cmd, "card"))
		ret = cmd_card(vq);
	else if (!strcmp(cmd, "peers"))
		ret = cmd_peers(vq);
	else
		ret = cmd_lookup(vq, argv[2], argc == 4 && !strcmp(argv[3], "-f") ?
				 KRCORE_LOOKUP_F_NOCACHE : 0);
	krc_vq_close(vq);
	return ret;
}
