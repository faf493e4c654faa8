// SPDX-License-Identifier: BSD-2-Clause
/*
 * ops.c - krctl lookup, connect and probe: exercise the control plane.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "krctl.h"

#define KRCTL_MAX_CONNECTS	1000000

/* An address krc_gid_parse() cannot read is a usage error. */
static int check_addr(struct krctl *k, const char *addr)
{
	uint8_t gid[16];

	if (krc_gid_parse(addr, gid) == 0)
		return 0;
	return krctl_fail(k, KRCTL_USAGE, EINVAL,
			  "\"%s\" is neither an IPv4 address nor a GID (Invalid argument)",
			  addr);
}

int cmd_lookup(struct krctl *k)
{
	const char *addr = NULL;
	struct krcore_lookup lk;
	unsigned int flags = 0;
	struct krc_vq *vq;
	char path[64];
	int i, ret;

	for (i = 0; i < k->argc; i++) {
		if (!strcmp(k->argv[i], "-f"))
			flags |= KRCORE_LOOKUP_F_NOCACHE;
		else if (!addr)
			addr = k->argv[i];
		else
			return krctl_usage(k, "lookup takes one ADDR and -f");
	}
	if (!addr)
		return krctl_usage(k, "lookup needs an ADDR");
	ret = check_addr(k, addr);
	if (ret)
		return ret;
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	ret = krc_lookup(vq, addr, flags, &lk);
	if (ret < 0) {
		ret = krctl_lib_fail(k, vq, ret, KRCTL_OP_LOOKUP);
		krc_vq_close(vq);
		return ret;
	}
	krc_path_str(lk.path, path, sizeof(path));
	if (k->json_mode) {
		json_kv_string(&k->json, "path", path);
		json_kv_u64(&k->json, "path_bits", lk.path);
		json_kv_u64(&k->json, "reads", lk.reads);
		json_kv_u64(&k->json, "elapsed_ns", lk.elapsed_ns);
		json_card(&k->json, "card", &lk.card);
	} else {
		printf("path=%s\nreads=%u\nelapsed_ns=%llu\n", path, lk.reads,
		       (unsigned long long)lk.elapsed_ns);
		print_card(&lk.card, "");
	}
	krc_vq_close(vq);
	return KRCTL_OK;
}

static void json_qconnect(struct json *j, const struct krcore_qconnect *qc,
			  const char *path)
{
	json_object_begin(j);
	json_kv_string(j, "path", path);
	json_kv_u64(j, "path_bits", qc->path);
	json_kv_u64(j, "reads", qc->reads);
	json_kv_u64(j, "attempts", qc->attempts);
	json_kv_u64(j, "conn", qc->conn_id);
	json_kv_u64(j, "qpn", qc->qpn);
	json_kv_u64(j, "elapsed_ns", qc->elapsed_ns);
	json_kv_u64(j, "peer_node", qc->card.node_id);
	json_object_end(j);
}

/* Connect @n VQs to @addr one after the other; @probe: READ over the VQ. */
static int do_connect(struct krctl *k, const char *addr, unsigned long n, bool probe)
{
	struct json *j = &k->json;
	struct krcore_qconnect qc;
	struct krcore_probe pr;
	struct krc_vq *vq;
	unsigned long i;
	char path[64];
	int ret = 0;

	if (k->json_mode && !probe) {
		json_key(j, "connects");
		json_array_begin(j);
	}
	for (i = 0; i < n && !ret; i++) {
		ret = krctl_open(k, &vq);
		if (ret)
			break;
		ret = krc_qconnect(vq, addr, 0, &qc);
		if (ret < 0) {
			ret = krctl_lib_fail(k, vq, ret, KRCTL_OP_CONNECT);
			krc_vq_close(vq);
			break;
		}
		krc_path_str(qc.path, path, sizeof(path));
		if (k->json_mode) {
			if (probe)
				json_key(j, "connect");
			json_qconnect(j, &qc, path);
		} else {
			printf("path=%s reads=%u attempts=%u conn=%u qpn=%u "
			       "elapsed_ns=%llu peer_node=%u\n", path, qc.reads,
			       qc.attempts, qc.conn_id, qc.qpn,
			       (unsigned long long)qc.elapsed_ns, qc.card.node_id);
		}
		if (probe) {
			fflush(stdout);
			ret = krc_probe(vq, &pr);
			if (ret < 0) {
				ret = krctl_lib_fail(k, vq, ret, KRCTL_OP_PROBE);
			} else if (k->json_mode) {
				json_key(j, "probe");
				json_object_begin(j);
				json_kv_u64(j, "elapsed_ns", pr.elapsed_ns);
				json_card(j, "card", &pr.card);
				json_object_end(j);
			} else {
				printf("probe: READ the peer's card in %llu ns\n",
				       (unsigned long long)pr.elapsed_ns);
				print_card(&pr.card, "  ");
			}
		}
		krc_vq_close(vq);
	}
	if (k->json_mode && !probe)
		json_array_end(j);
	return ret;
}

int cmd_connect(struct krctl *k)
{
	unsigned long n = 1;
	int ret;

	if (k->argc < 1 || k->argc > 2)
		return krctl_usage(k, "connect needs an ADDR and optionally a count");
	if (k->argc == 2 && (!parse_uint(k->argv[1], KRCTL_MAX_CONNECTS, &n) || !n))
		return krctl_usage(k, "connect: N must be a number from 1 to %d",
				   KRCTL_MAX_CONNECTS);
	ret = check_addr(k, k->argv[0]);
	if (ret)
		return ret;
	return do_connect(k, k->argv[0], n, false);
}

int cmd_probe(struct krctl *k)
{
	int ret;

	if (k->argc != 1)
		return krctl_usage(k, "probe needs one ADDR");
	ret = check_addr(k, k->argv[0]);
	if (ret)
		return ret;
	return do_connect(k, k->argv[0], 1, true);
}
