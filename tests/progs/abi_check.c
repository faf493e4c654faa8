// SPDX-License-Identifier: BSD-2-Clause
/*
 * abi_check - open a VQ with the libkrcore it is linked with and report
 * what happened. build/tests/abi_check links the library as built;
 * build/tests/abi_check_next links one built for the next ABI version
 * (-DKRC_LIB_ABI_VERSION=N+1), which today's module must refuse.
 *
 * Prints lib_abi=, open= (0 or the negative errno), module_abi= (when
 * open) and msg= (krc_errmsg() when not). Exit 0 if the open succeeded.
 */
#include <stdio.h>

#include "libkrcore.h"

int main(void)
{
	struct krc_vq *vq;
	int ret = krc_vq_open(&vq);

	printf("lib_abi=%d\nopen=%d\n", KRC_LIB_ABI_VERSION, ret);
	if (ret < 0) {
		printf("msg=%s\n", krc_errmsg());
		return 1;
	}
	printf("module_abi=%u\n", krc_vq_version(vq)->abi_version);
	krc_vq_close(vq);
	return 0;
}
