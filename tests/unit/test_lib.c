// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_lib.c - libkrcore without a module: the errors a user sees first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "libkrcore.h"

static void test_open_without_module(void **state)
{
	struct krc_vq *vq = (struct krc_vq *)1;
	int ret;

	(void)state;
	if (access(KRCORE_DEVICE_PATH, F_OK) == 0)
		skip();		/* a module is loaded on this machine */
	ret = krc_vq_open(&vq);
	assert_int_equal(ret, -ENOENT);
	assert_null(vq);
	assert_non_null(strstr(krc_errmsg(), "krcore.ko is not loaded"));
	assert_non_null(strstr(krc_errmsg(), KRCORE_DEVICE_PATH));
	krc_vq_close(NULL);
}

static void test_gid_api(void **state)
{
	char buf[KRC_GID_STRLEN];
	uint8_t gid[16];

	(void)state;
	assert_int_equal(krc_gid_parse("192.168.7.9", gid), 0);
	krc_gid_format(gid, buf, sizeof(buf));
	assert_string_equal(buf, "192.168.7.9");
	assert_int_equal(krc_gid_parse("192.168.7", gid), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_without_module),
		cmocka_unit_test(test_gid_api),
	};

	return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
