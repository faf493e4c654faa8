// SPDX-License-Identifier: BSD-2-Clause
/*
 * query.c - the node's card and krcore's ports.
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
