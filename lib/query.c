// SPDX-License-Identifier: BSD-2-Clause
/*
 * query.c - the node's card, krcore's ports and the cluster's members.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int krc_query_card(struct krc_vq *vq, struct krcore_card *card)
{
	int ret = krcl_ioctl(vq, KRCORE_IOC_QUERY_CARD, card);

	if (ret == -ENODEV)
		return krcl_fail(ret, "no active RoCE port with an IP address");
	if (ret < 0)
		return krcl_fail(ret, "query of the node card failed");
	return 0;
}

int krc_query_port(struct krc_vq *vq, unsigned int index,
		   struct krcore_port_info *info)
{
	int ret;

	memset(info, 0, sizeof(*info));
	info->index = index;
	ret = krcl_ioctl(vq, KRCORE_IOC_QUERY_PORT, info);
	if (ret == -ENOENT)
		return krcl_fail(ret, "no RDMA port %u", index);
	if (ret < 0)
		return krcl_fail(ret, "query of port %u failed", index);
	return 0;
}

#define KRCL_MSG_MEMBERS_NO_META \
	"no MetaServer to list the members of (none configured, or not connected now)"
#define KRCL_MSG_MEMBERS_2BIG \
	"more members than this node lists (module parameter members_list_max)"
#define KRCL_MSG_MEMBERS_IO \
	"the MetaServer's member list kept changing or did not check; try again"

int krc_members_wait(struct krc_vq *vq, uint64_t since, unsigned int timeout_ms,
		     struct krcore_member *out, unsigned int max,
		     uint64_t *gen)
{
	struct krcore_members ms;
	int ret;

	memset(&ms, 0, sizeof(ms));
	ms.entries = (uintptr_t)out;
	ms.max = out ? max : 0;
	ms.since_gen = since;
	ms.timeout_ms = timeout_ms;
	ret = krcl_ioctl(vq, KRCORE_IOC_MEMBERS, &ms);
	if (ret == -EHOSTUNREACH)
		return krcl_fail(ret, "%s", KRCL_MSG_MEMBERS_NO_META);
	if (ret == -E2BIG)
		return krcl_fail(ret, "%s", KRCL_MSG_MEMBERS_2BIG);
	if (ret == -EIO)
		return krcl_fail(ret, "%s", KRCL_MSG_MEMBERS_IO);
	if (ret < 0)
		return krcl_fail(ret, "member query failed");
	if (gen)
		*gen = ms.gen;
	return (int)ms.count;
}

int krc_members(struct krc_vq *vq, struct krcore_member *out,
		unsigned int max, uint64_t *gen)
{
	return krc_members_wait(vq, 0, 0, out, max, gen);
}
