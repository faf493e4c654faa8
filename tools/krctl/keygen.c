// SPDX-License-Identifier: BSD-2-Clause
/*
 * keygen.c - krctl keygen FILE: a new cluster key (docs/trust-model.md).
 *
 * 32 bytes from the kernel's random generator, written as 64 hex digits
 * and a newline to FILE, created owned by the caller (root, for krcore
 * to take it) with mode 0600, never over an existing file. Every node of
 * a cluster then gets a copy of it, as krcore's key_file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "krctl.h"

int cmd_keygen(struct krctl *k)
{
	unsigned char key[32];
	char text[2 * sizeof(key) + 2];
	size_t i, got = 0;
	int fd, ret;

	if (k->argc != 1)
		return krctl_usage(k, "keygen takes one file name");
	while (got < sizeof(key)) {
		ssize_t n = getrandom(key + got, sizeof(key) - got, 0);

		if (n < 0 && errno != EINTR)
			return krctl_fail(k, KRCTL_FAILED, errno,
					  "no random bytes: %s", strerror(errno));
		if (n > 0)
			got += n;
	}
	for (i = 0; i < sizeof(key); i++)
		snprintf(text + 2 * i, 3, "%02x", key[i]);
	text[2 * sizeof(key)] = '\n';
	memset(key, 0, sizeof(key));
	fd = open(k->argv[0], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return krctl_fail(k, KRCTL_FAILED, errno, "%s: %s%s", k->argv[0],
				  strerror(errno), errno == EEXIST ?
				  " (a key is never overwritten: remove it first)" : "");
	ret = write(fd, text, 2 * sizeof(key) + 1) == 2 * sizeof(key) + 1 ?
	      0 : -1;
	if (fsync(fd) || close(fd))
		ret = -1;
	memset(text, 0, sizeof(text));
	if (ret)
		return krctl_fail(k, KRCTL_FAILED, errno, "%s: cannot write: %s",
				  k->argv[0], strerror(errno));
	if (k->json_mode)
		json_kv_string(&k->json, "key_file", k->argv[0]);
	else
		printf("a new cluster key in %s: copy it to every node's key_file\n",
		       k->argv[0]);
	return KRCTL_OK;
}
