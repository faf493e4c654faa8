// SPDX-License-Identifier: BSD-2-Clause
/*
 * prog.c - a user of an installed libkrcore, built outside the tree by the
 * tests of tests/pkg/ with the flags pkg-config gives: the library's
 * header, the UAPI header it includes, the library. Harmless calls only:
 * an address parsed and printed, the ABI version of the header, an open
 * of /dev/krcore (without the module: -ENOENT and a clear message).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <libkrcore.h>

int main(void)
{
	char text[KRC_GID_STRLEN] = "";
	const struct krcore_version *v;
	struct krc_vq *vq;
	uint8_t gid[16];
	int ret;

	if (krc_gid_parse("192.0.2.7", gid) ||
	    krc_gid_format(gid, text, sizeof(text)) < 0 ||
	    strcmp(text, "192.0.2.7")) {
		fprintf(stderr, "prog: 192.0.2.7 came back as \"%s\"\n", text);
		return 1;
	}
	printf("abi %d\n", KRCORE_ABI_VERSION);
	ret = krc_vq_open(&vq);
	if (ret == -ENOENT) {
		printf("no module: %s\n", krc_errmsg());
		return 0;
	}
	if (ret < 0) {
		fprintf(stderr, "prog: %s\n", krc_errmsg());
		return 1;
	}
	v = krc_vq_version(vq);
	printf("module %s, abi %u\n", v->module_version, v->abi_version);
	krc_vq_close(vq);
	return 0;
}
