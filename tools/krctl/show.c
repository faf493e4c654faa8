// SPDX-License-Identifier: BSD-2-Clause
/*
 * show.c - krctl status, card, counters, peers, conns and meta: what this
 * node's krcore knows, as text or as JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "krctl.h"
#include "sample.h"

static const char *mtu_str(unsigned int mtu)
{
	static const char *const names[] = { "?", "256", "512", "1024", "2048", "4096" };

	return mtu < 6 ? names[mtu] : "?";
}

static void json_mtu(struct json *j, const char *key, unsigned int mtu)
{
	json_key(j, key);
	if (mtu >= 1 && mtu <= 5)
		json_u64(j, 128u << mtu);
	else
		json_null(j);
}

static const char *state_str(unsigned int state)
{
	static const char *const names[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"
	};

	return state < 6 ? names[state] : "?";
}

static void gid_full(const uint8_t g[16], char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x:%02x%02x:%02x%02x:%02x%02x:"
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0], g[1], g[2], g[3],
		 g[4], g[5], g[6], g[7], g[8], g[9],
		 g[10], g[11], g[12], g[13], g[14], g[15]);
}

static void mac_str(const uint8_t m[6], char *buf, size_t len)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2],
		 m[3], m[4], m[5]);
}

void json_hex64(struct json *j, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%016" PRIx64, v);
	json_kv_string(j, key, buf);
}

static void json_addr(struct json *j, const char *key, const uint8_t gid[16])
{
	char a[KRC_GID_STRLEN];

	krc_gid_format(gid, a, sizeof(a));
	json_kv_string(j, key, a);
}

void print_card(const struct krcore_card *c, const char *indent)
{
	char gid[KRC_GID_STRLEN], full[48], mac[24];

	krc_gid_format(c->gid, gid, sizeof(gid));
	gid_full(c->gid, full, sizeof(full));
	mac_str(c->mac, mac, sizeof(mac));
	printf("%snode_id=%u\n", indent, c->node_id);
	printf("%saddr=%s\n", indent, gid);
	printf("%sgid=%s\n", indent, full);
	printf("%smac=%s\n", indent, mac);
	printf("%sport=%u\n%smtu=%s\n", indent, c->port_num, indent,
	       mtu_str(c->active_mtu));
	printf("%sud_qpn=%u\n%sud_qkey=0x%08x\n", indent, c->ud_qpn, indent,
	       c->ud_qkey);
	printf("%sincarnation=%016" PRIx64 "\n", indent, (uint64_t)c->incarnation);
}

void json_card(struct json *j, const char *key, const struct krcore_card *c)
{
	char full[48], mac[24];

	gid_full(c->gid, full, sizeof(full));
	mac_str(c->mac, mac, sizeof(mac));
	json_key(j, key);
	json_object_begin(j);
	json_kv_u64(j, "node_id", c->node_id);
	json_addr(j, "addr", c->gid);
	json_kv_string(j, "gid", full);
	json_kv_string(j, "mac", mac);
	json_kv_u64(j, "port", c->port_num);
	json_mtu(j, "mtu", c->active_mtu);
	json_kv_u64(j, "ud_qpn", c->ud_qpn);
	json_kv_u64(j, "ud_qkey", c->ud_qkey);
	json_hex64(j, "incarnation", c->incarnation);
	json_object_end(j);
}

int cmd_card(struct krctl *k)
{
	struct krcore_card card;
	struct krc_vq *vq;
	int ret;

	if (k->argc)
		return krctl_usage(k, "card takes no argument");
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	ret = krc_query_card(vq, &card);
	if (ret < 0)
		ret = krctl_lib_fail(k, vq, ret, KRCTL_OP_CARD);
	else if (k->json_mode)
		json_card(&k->json, "card", &card);
	else
		print_card(&card, "");
	krc_vq_close(vq);
	return ret;
}

/* The counters: "<indent>name=value" lines, or a JSON object. */
static void show_counters(struct krctl *k, const struct krctl_counters *c,
			  const char *indent)
{
	unsigned int i;

	if (k->json_mode) {
		json_key(&k->json, "counters");
		json_object_begin(&k->json);
		for (i = 0; i < c->n; i++) {
			json_key(&k->json, c->v[i].name);
			if (c->v[i].numeric)
				json_u64(&k->json, c->v[i].value);
			else
				json_string(&k->json, c->v[i].text);
		}
		json_object_end(&k->json);
		return;
	}
	for (i = 0; i < c->n; i++)
		if (c->v[i].text[0])
			printf("%s%s=%s\n", indent, c->v[i].name, c->v[i].text);
}

int cmd_counters(struct krctl *k)
{
	struct krctl_counters c;
	int ret;

	if (k->argc)
		return krctl_usage(k, "counters takes no argument");
	ret = krctl_counters_read(KRCTL_COUNTERS_DIR, &c);
	if (ret == -ENOENT && access("/sys/module/krcore", F_OK) != 0)
		return krctl_fail(k, KRCTL_NOT_LOADED, ENOENT, KRCTL_MSG_NOT_LOADED,
				  KRCTL_COUNTERS_DIR);
	if (ret < 0)
		return krctl_fail(k, KRCTL_FAILED, -ret, "cannot read %s: %s",
				  KRCTL_COUNTERS_DIR, strerror(-ret));
	show_counters(k, &c, "");
	krctl_counters_free(&c);
	return KRCTL_OK;
}

const char *meta_state_name(unsigned int st)
{
	static const char *const names[] = {
		"none", "connecting", "registered", "down"
	};

	return st < 4 ? names[st] : "unknown";
}

static const char *meta_state_str(unsigned int st)
{
	static const char *const names[] = {
		"none", "connecting", "registered", "down (retrying)"
	};

	return st < 4 ? names[st] : "?";
}

/* What a state of the MetaServer means for this node. */
static const char *meta_meaning(const struct krcore_node_info *ni)
{
	if (!(ni->flags & KRCORE_NODE_F_UP))
		return "the control plane is down (no active RoCE port): "
		       "nothing works until it is up";
	switch (ni->meta_state) {
	case KRCORE_META_NONE:
		return "no MetaServer is configured (meta_server= and meta_host= unset): "
		       "only nodes whose cards are cached can be reached; set meta_server= "
		       "on members, meta_host=1 on the MetaServer node";
	case KRCORE_META_CONNECTING:
		return "connecting to the MetaServer: lookups of nodes not cached wait for it";
	case KRCORE_META_REGISTERED:
		return "registered: this node's card is in the MetaServer's table "
		       "and other nodes' cards are read from it";
	case KRCORE_META_DOWN:
		return "the MetaServer is unreachable, krcore retries in the background: "
		       "pooled connections and cached cards still work, lookups and "
		       "connects of nodes not cached fail (EHOSTUNREACH), this node "
		       "cannot be looked up";
	default:
		return "unknown state";
	}
}

static void json_meta(struct json *j, const char *key, const struct krcore_node_info *ni)
{
	bool up = ni->flags & KRCORE_NODE_F_UP;
	bool host = ni->flags & KRCORE_NODE_F_META_HOST;

	json_key(j, key);
	json_object_begin(j);
	json_kv_string(j, "state", up ? meta_state_name(ni->meta_state) : "unknown");
	if (up && ni->meta_state != KRCORE_META_NONE)
		json_addr(j, "address", ni->meta_gid);
	else
		json_kv_null(j, "address");
	if (ni->meta_nslots)
		json_kv_u64(j, "table_slots", ni->meta_nslots);
	else
		json_kv_null(j, "table_slots");
	json_kv_bool(j, "hosted_here", host);
	if (host)
		json_kv_u64(j, "cards", ni->meta_used);
	else
		json_kv_null(j, "cards");
	if (ni->meta_incarnation)
		json_hex64(j, "incarnation", ni->meta_incarnation);
	else
		json_kv_null(j, "incarnation");
	json_kv_string(j, "meaning", meta_meaning(ni));
	json_object_end(j);
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

static void json_ports(struct json *j, struct krc_vq *vq)
{
	struct krcore_port_info p;
	unsigned int i;

	json_key(j, "ports");
	json_array_begin(j);
	for (i = 0; krc_query_port(vq, i, &p) == 0; i++) {
		json_object_begin(j);
		json_kv_string(j, "ibdev", p.ibdev);
		json_kv_u64(j, "port", p.port_num);
		json_kv_string(j, "state", state_str(p.state));
		json_kv_bool(j, "active", p.flags & KRCORE_PORT_F_ACTIVE);
		json_kv_bool(j, "primary", p.flags & KRCORE_PORT_F_PRIMARY);
		json_mtu(j, "mtu", p.active_mtu);
		if (p.netdev[0])
			json_kv_string(j, "netdev", p.netdev);
		else
			json_kv_null(j, "netdev");
		json_kv_i64(j, "gid_index", p.gid_index);
		if (p.flags & KRCORE_PORT_F_HAS_GID)
			json_addr(j, "gid", p.gid);
		else
			json_kv_null(j, "gid");
		json_kv_u64(j, "max_qp", p.max_qp);
		json_kv_u64(j, "max_qp_wr", p.max_qp_wr);
		json_kv_u64(j, "max_cqe", p.max_cqe);
		json_kv_u64(j, "max_sge", p.max_sge);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_status(struct krctl *k, struct krc_vq *vq,
			const struct krcore_node_info *ni, bool ni_ok,
			const struct krctl_counters *c, bool c_ok)
{
	const struct krcore_version *v = krc_vq_version(vq);
	struct json *j = &k->json;
	struct krcore_card card;

	json_key(j, "module");
	json_object_begin(j);
	json_kv_string(j, "version", v->module_version);
	json_kv_u64(j, "abi", v->abi_version);
	json_object_end(j);
	json_kv_u64(j, "libkrcore_abi", KRC_LIB_ABI_VERSION);
	json_ports(j, vq);
	if (krc_query_card(vq, &card) == 0) {
		json_card(j, "card", &card);
	} else {
		json_kv_null(j, "card");
		json_kv_string(j, "card_error", krc_errmsg());
	}
	json_key(j, "control_plane");
	json_object_begin(j);
	json_kv_bool(j, "up", ni_ok && (ni->flags & KRCORE_NODE_F_UP));
	if (ni_ok && (ni->flags & KRCORE_NODE_F_UP)) {
		json_meta(j, "metaserver", ni);
		json_kv_u64(j, "peers", ni->peers);
		json_kv_u64(j, "conns", ni->conns);
		json_kv_u64(j, "pool_size", ni->pool_size);
		json_kv_u64(j, "spares", ni->spares);
	}
	json_object_end(j);
	if (c_ok)
		show_counters(k, c, "");
	else
		json_kv_null(j, "counters");
}

int cmd_status(struct krctl *k)
{
	const struct krcore_version *v;
	struct krctl_counters c;
	struct krcore_node_info ni;
	struct krcore_port_info p;
	struct krcore_card card;
	char gid[KRC_GID_STRLEN];
	struct krc_vq *vq;
	bool ni_ok, c_ok;
	unsigned int i;
	int ret;

	if (k->argc)
		return krctl_usage(k, "status takes no argument");
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	ni_ok = krc_node_info(vq, &ni) == 0;
	c_ok = krctl_counters_read(KRCTL_COUNTERS_DIR, &c) == 0;
	if (k->json_mode) {
		json_status(k, vq, &ni, ni_ok, &c, c_ok);
		goto out;
	}
	v = krc_vq_version(vq);
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
	if (c_ok)
		show_counters(k, &c, "  ");
	else
		printf("  unavailable (%s)\n", KRCTL_COUNTERS_DIR);
out:
	fflush(stdout);
	/* The node's health: control plane down 5, MetaServer down 6. */
	if (!ni_ok || !(ni.flags & KRCORE_NODE_F_UP)) {
		krctl_fail(k, KRCTL_DOWN, ENODEV, "the control plane is down");
		ret = krctl_down(k, vq);
	} else {
		ret = krctl_meta_status(k, &ni);
	}
	if (c_ok)
		krctl_counters_free(&c);
	krc_vq_close(vq);
	return ret;
}

static const char *conn_state_str(unsigned int st)
{
	static const char *const names[] = {
		"spare", "connecting", "half-open", "ready", "error"
	};

	return st < 5 ? names[st] : "?";
}

static void print_traffic(const struct krcore_peer_stats *s)
{
	printf("  traffic: wr_posted=%" PRIu64 " wr_bytes=%" PRIu64
	       " wr_errors=%" PRIu64 " wr_reposted=%" PRIu64
	       " wr_not_executed=%" PRIu64 " wr_timeouts=%" PRIu64
	       " conn_errors=%" PRIu64 " recoveries=%" PRIu64
	       " dg_sent=%" PRIu64 " dg_retransmits=%" PRIu64
	       " dg_switches=%" PRIu64 "\n",
	       (uint64_t)s->wr_posted, (uint64_t)s->wr_bytes,
	       (uint64_t)s->wr_errors, (uint64_t)s->wr_reposted,
	       (uint64_t)s->wr_not_executed, (uint64_t)s->wr_timeouts,
	       (uint64_t)s->conn_errors, (uint64_t)s->recoveries,
	       (uint64_t)s->dg_sent, (uint64_t)s->dg_retransmits,
	       (uint64_t)s->dg_switches);
}

static void json_traffic(struct json *j, const struct krctl_peer *p)
{
	const struct krcore_peer_stats *s = &p->stats;

	json_key(j, "traffic");
	if (!p->has_stats) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_kv_u64(j, "wr_posted", s->wr_posted);
	json_kv_u64(j, "wr_bytes", s->wr_bytes);
	json_kv_u64(j, "wr_errors", s->wr_errors);
	json_kv_u64(j, "wr_reposted", s->wr_reposted);
	json_kv_u64(j, "wr_not_executed", s->wr_not_executed);
	json_kv_u64(j, "wr_timeouts", s->wr_timeouts);
	json_kv_u64(j, "conn_errors", s->conn_errors);
	json_kv_u64(j, "recoveries", s->recoveries);
	json_kv_u64(j, "dg_sent", s->dg_sent);
	json_kv_u64(j, "dg_retransmits", s->dg_retransmits);
	json_kv_u64(j, "dg_switches", s->dg_switches);
	json_object_end(j);
}

static void json_conn(struct json *j, const struct krcore_peer_info *pi,
		      const struct krcore_conn_info *ci, bool with_peer)
{
	json_object_begin(j);
	if (with_peer)
		json_addr(j, "peer", pi->card.gid);
	json_kv_u64(j, "id", ci->id);
	json_kv_string(j, "state", conn_state_str(ci->state));
	json_kv_u64(j, "qpn", ci->qpn);
	json_kv_u64(j, "remote_qpn", ci->remote_qpn);
	json_kv_u64(j, "vqs", ci->vqs);
	json_kv_bool(j, "initiated_here", ci->initiator);
	json_object_end(j);
}

static void json_peer(struct json *j, const struct krctl_peer *p)
{
	const struct krcore_peer_info *pi = &p->info;
	unsigned int c;

	json_object_begin(j);
	json_addr(j, "addr", pi->card.gid);
	json_kv_bool(j, "local", pi->flags & KRCORE_PEER_F_LOCAL);
	json_kv_u64(j, "node_id", pi->card.node_id);
	json_kv_bool(j, "card_cached", pi->flags & KRCORE_PEER_F_CARD);
	json_hex64(j, "incarnation", pi->card.incarnation);
	json_kv_u64(j, "nconns", pi->nconns);
	json_kv_u64(j, "qconnects", pi->qconnects);
	json_kv_u64(j, "handshakes", pi->handshakes);
	json_kv_u64(j, "dgram_vqs", pi->dgram_vqs);
	json_key(j, "conns");
	json_array_begin(j);
	for (c = 0; c < pi->nconns && c < KRCORE_PEER_MAX_CONNS; c++)
		json_conn(j, pi, &pi->conns[c], false);
	json_array_end(j);
	json_traffic(j, p);
	json_object_end(j);
}

/*
 * peers and conns: no arguments, a VQ, the peers read. 0, or the failure
 * reported and its exit status (nothing left open).
 */
static int open_peers(struct krctl *k, const char *cmd, struct krc_vq **vq,
		      struct krctl_peers *peers)
{
	int ret;

	if (k->argc)
		return krctl_usage(k, "%s takes no argument", cmd);
	ret = krctl_open(k, vq);
	if (ret)
		return ret;
	ret = krctl_peers_get(*vq, peers);
	if (ret < 0) {
		ret = krctl_lib_fail(k, *vq, ret, KRCTL_OP_QUERY);
		krc_vq_close(*vq);
	}
	return ret;
}

int cmd_peers(struct krctl *k)
{
	struct krctl_peers peers;
	char gid[KRC_GID_STRLEN];
	struct krc_vq *vq;
	unsigned int i, c;
	int ret;

	ret = open_peers(k, "peers", &vq, &peers);
	if (ret)
		return ret;
	if (k->json_mode) {
		json_key(&k->json, "peers");
		json_array_begin(&k->json);
		for (i = 0; i < peers.n; i++)
			json_peer(&k->json, &peers.v[i]);
		json_array_end(&k->json);
	}
	for (i = 0; i < peers.n && !k->json_mode; i++) {
		const struct krcore_peer_info *pi = &peers.v[i].info;

		krc_gid_format(pi->card.gid, gid, sizeof(gid));
		printf("peer %s%s: node %u, card %s, incarnation %016llx, ",
		       gid, (pi->flags & KRCORE_PEER_F_LOCAL) ? " (this node)" : "",
		       pi->card.node_id,
		       (pi->flags & KRCORE_PEER_F_CARD) ? "cached" : "none",
		       (unsigned long long)pi->card.incarnation);
		printf("%u conns, %llu qconnects, %llu handshakes, %u VQs on datagrams\n",
		       pi->nconns, (unsigned long long)pi->qconnects,
		       (unsigned long long)pi->handshakes, pi->dgram_vqs);
		for (c = 0; c < pi->nconns && c < KRCORE_PEER_MAX_CONNS; c++)
			printf("  conn %u: %s, qp %u -> %u, %u VQs, %s\n",
			       pi->conns[c].id, conn_state_str(pi->conns[c].state),
			       pi->conns[c].qpn, pi->conns[c].remote_qpn,
			       pi->conns[c].vqs,
			       pi->conns[c].initiator ? "initiated here" : "accepted");
		if (peers.v[i].has_stats)
			print_traffic(&peers.v[i].stats);
	}
	if (!peers.n && !k->json_mode)
		printf("no peers\n");
	if (peers.stats_denied && !k->json_mode)
		printf("(traffic counters: for CAP_NET_ADMIN only)\n");
	krctl_peers_free(&peers);
	krc_vq_close(vq);
	return KRCTL_OK;
}

int cmd_conns(struct krctl *k)
{
	struct krctl_peers peers;
	char gid[KRC_GID_STRLEN];
	struct krc_vq *vq;
	unsigned int i, c, lines = 0;
	struct json *j = &k->json;
	int ret;

	ret = open_peers(k, "conns", &vq, &peers);
	if (ret)
		return ret;
	if (k->json_mode) {
		json_key(j, "conns");
		json_array_begin(j);
		for (i = 0; i < peers.n; i++) {
			const struct krcore_peer_info *pi = &peers.v[i].info;

			for (c = 0; c < pi->nconns && c < KRCORE_PEER_MAX_CONNS; c++)
				json_conn(j, pi, &pi->conns[c], true);
		}
		json_array_end(j);
		json_key(j, "peers");
		json_array_begin(j);
		for (i = 0; i < peers.n; i++) {
			const struct krcore_peer_info *pi = &peers.v[i].info;

			json_object_begin(j);
			json_addr(j, "addr", pi->card.gid);
			json_kv_u64(j, "nconns", pi->nconns);
			json_kv_u64(j, "listed", pi->nconns < KRCORE_PEER_MAX_CONNS ?
				    pi->nconns : KRCORE_PEER_MAX_CONNS);
			json_kv_u64(j, "rc_vqs", krctl_peer_rc_vqs(pi));
			json_kv_u64(j, "dgram_vqs", pi->dgram_vqs);
			json_object_end(j);
		}
		json_array_end(j);
		goto out;
	}
	for (i = 0; i < peers.n; i++) {
		const struct krcore_peer_info *pi = &peers.v[i].info;

		krc_gid_format(pi->card.gid, gid, sizeof(gid));
		for (c = 0; c < pi->nconns && c < KRCORE_PEER_MAX_CONNS; c++, lines++)
			printf("%s conn %u: %s, qp %u -> %u, %u VQs, %s\n", gid,
			       pi->conns[c].id, conn_state_str(pi->conns[c].state),
			       pi->conns[c].qpn, pi->conns[c].remote_qpn,
			       pi->conns[c].vqs,
			       pi->conns[c].initiator ? "initiated here" : "accepted");
		if (pi->nconns > KRCORE_PEER_MAX_CONNS)
			printf("%s: %u more connections not listed\n", gid,
			       pi->nconns - KRCORE_PEER_MAX_CONNS);
		if (pi->dgram_vqs) {
			printf("%s datagrams: %u VQs\n", gid, pi->dgram_vqs);
			lines++;
		}
	}
	if (!lines)
		printf("no connections\n");
out:
	krctl_peers_free(&peers);
	krc_vq_close(vq);
	return KRCTL_OK;
}

int cmd_meta(struct krctl *k)
{
	struct krcore_node_info ni;
	char gid[KRC_GID_STRLEN];
	struct krc_vq *vq;
	int ret;

	if (k->argc)
		return krctl_usage(k, "meta takes no argument");
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	ret = krc_node_info(vq, &ni);
	if (ret < 0) {
		ret = krctl_lib_fail(k, vq, ret, KRCTL_OP_QUERY);
		krc_vq_close(vq);
		return ret;
	}
	if (k->json_mode) {
		json_meta(&k->json, "metaserver", &ni);
	} else if (!(ni.flags & KRCORE_NODE_F_UP)) {
		printf("state: unknown\n");
		printf("meaning: %s\n", meta_meaning(&ni));
	} else {
		krc_gid_format(ni.meta_gid, gid, sizeof(gid));
		printf("state: %s\n", meta_state_name(ni.meta_state));
		printf("address: %s\n", ni.meta_state ? gid : "none");
		if (ni.meta_nslots)
			printf("table: %u slots\n", ni.meta_nslots);
		else
			printf("table: unknown\n");
		if (ni.flags & KRCORE_NODE_F_META_HOST)
			printf("hosted here: %u cards\n", ni.meta_used);
		else
			printf("hosted here: no\n");
		if (ni.meta_incarnation)
			printf("incarnation: %016" PRIx64 "\n", (uint64_t)ni.meta_incarnation);
		else
			printf("incarnation: unknown\n");
		printf("meaning: %s\n", meta_meaning(&ni));
	}
	fflush(stdout);
	if (!(ni.flags & KRCORE_NODE_F_UP)) {
		krctl_fail(k, KRCTL_DOWN, ENODEV, "the control plane is down");
		ret = krctl_down(k, vq);
	} else {
		ret = krctl_meta_status(k, &ni);
	}
	krc_vq_close(vq);
	return ret;
}
