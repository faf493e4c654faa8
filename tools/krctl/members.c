// SPDX-License-Identifier: BSD-2-Clause
/*
 * members.c - krctl members: the nodes registered with the MetaServer,
 * and a wait for that list to change.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "krctl.h"

#define KRCTL_MEMBERS_WAIT_MS	10000

/* A number of the command line (@base 16: hex, as printed), or a usage error. */
static int parse_u64(struct krctl *k, const char *what, const char *s,
		     int base, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, base);
	if (errno || end == s || *end || s[0] == '-' || *v > max)
		return krctl_usage(k, "members: %s \"%s\" is not a number up to %" PRIu64,
				   what, s, max);
	return 0;
}

static void print_members(struct krctl *k, const struct krcore_member *m,
			  int n, uint64_t gen)
{
	char gid[KRC_GID_STRLEN];
	int i;

	if (k->json_mode) {
		json_hex64(&k->json, "generation", gen);
		json_kv_u64(&k->json, "count", (uint64_t)n);
		json_key(&k->json, "members");
		json_array_begin(&k->json);
		for (i = 0; i < n; i++) {
			krc_gid_format(m[i].gid, gid, sizeof(gid));
			json_object_begin(&k->json);
			json_kv_string(&k->json, "addr", gid);
			json_kv_u64(&k->json, "node_id", m[i].node_id);
			json_hex64(&k->json, "incarnation", m[i].incarnation);
			json_kv_bool(&k->json, "self",
				     m[i].flags & KRCORE_MEMBER_F_SELF);
			json_kv_bool(&k->json, "metaserver",
				     m[i].flags & KRCORE_MEMBER_F_META_HOST);
			json_object_end(&k->json);
		}
		json_array_end(&k->json);
		return;
	}
	printf("generation: %016" PRIx64 "\n", gen);
	printf("members: %d\n", n);
	for (i = 0; i < n; i++) {
		krc_gid_format(m[i].gid, gid, sizeof(gid));
		printf("%s node %u incarnation %016" PRIx64 "%s%s\n", gid,
		       m[i].node_id, (uint64_t)m[i].incarnation,
		       m[i].flags & KRCORE_MEMBER_F_SELF ? " self" : "",
		       m[i].flags & KRCORE_MEMBER_F_META_HOST ? " metaserver" : "");
	}
}

int cmd_members(struct krctl *k)
{
	uint64_t since = 0, timeout = KRCTL_MEMBERS_WAIT_MS, gen, v;
	struct krcore_member *m;
	unsigned int max;
	bool wait = false;
	struct krc_vq *vq;
	int i, n, ret;

	for (i = 0; i < k->argc; i++) {
		if (i + 1 >= k->argc)
			return krctl_usage(k, "members: %s needs a value", k->argv[i]);
		if (!strcmp(k->argv[i], "-w")) {
			ret = parse_u64(k, "generation", k->argv[++i], 16, UINT64_MAX,
					&since);
			wait = true;
		} else if (!strcmp(k->argv[i], "-t")) {
			ret = parse_u64(k, "timeout", k->argv[++i], 10,
					KRCORE_MEMBERS_MAX_WAIT_MS, &timeout);
		} else {
			return krctl_usage(k, "members takes -w GEN and -t MS");
		}
		if (ret)
			return ret;
	}
	ret = krctl_open(k, &vq);
	if (ret)
		return ret;
	/* One call for clusters of up to 256 nodes; else ask until it fits. */
	max = 256;
	m = calloc(max, sizeof(*m));
	if (!m) {
		krc_vq_close(vq);
		return krctl_fail(k, KRCTL_FAILED, ENOMEM, "out of memory");
	}
	for (;;) {
		v = wait ? timeout : 0;
		n = krc_members_wait(vq, since, (unsigned int)v, m, max, &gen);
		if (n < 0 || (unsigned int)n <= max)
			break;
		free(m);
		max = (unsigned int)n + 16;
		m = calloc(max, sizeof(*m));
		if (!m) {
			n = -ENOMEM;
			break;
		}
		/* the list has been seen: no second wait */
		wait = false;
	}
	if (n < 0) {
		ret = krctl_lib_fail(k, vq, n, KRCTL_OP_LOOKUP);
	} else {
		print_members(k, m, n, gen);
		ret = KRCTL_OK;
	}
	free(m);
	krc_vq_close(vq);
	return ret;
}
