// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_card.c - node cards and GIDs (common/card.c), no VM needed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card.h"

static struct krcore_card sample_card(void)
{
	struct krcore_card c;
	const u8 ip[4] = { 10, 77, 0, 2 };

	memset(&c, 0, sizeof(c));
	krc_gid_from_ipv4(c.gid, ip);
	memcpy(c.mac, "\x52\x54\x00\x4b\x52\x02", 6);
	c.card_version = KRCORE_CARD_VERSION;
	c.flags = KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4;
	c.node_id = krc_gid_node_id(c.gid);
	c.ud_qpn = 0x11;
	c.ud_qkey = 0x4b524331;
	c.port_num = 1;
	c.active_mtu = 3;
	c.incarnation = 0x0123456789abcdefULL;
	c.dct_num = 0xabcdef;
	c.dc_key = 0xfedcba9876543210ULL;
	return c;
}

static void test_card_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct krcore_card), KRCORE_CARD_SIZE);
	assert_int_equal(offsetof(struct krcore_card, node_id), 24);
	assert_int_equal(offsetof(struct krcore_card, incarnation), 40);
	assert_int_equal(offsetof(struct krcore_card, dc_key), 56);
}

static void test_card_roundtrip(void **state)
{
	struct krcore_card c = sample_card(), d;
	u8 wire[KRCORE_CARD_SIZE];

	(void)state;
	krc_card_encode(&c, wire);
	/* little-endian on the wire, whatever the host */
	assert_int_equal(wire[24], 2);
	assert_int_equal(wire[27], 10);
	assert_int_equal(wire[40], 0xef);
	assert_int_equal(wire[47], 0x01);
	assert_int_equal(krc_card_decode(wire, &d), 0);
	assert_memory_equal(&c, &d, sizeof(c));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_memory_equal(&c, wire, sizeof(c));
#endif
}

static void test_card_rejects(void **state)
{
	struct krcore_card c, d;
	u8 wire[KRCORE_CARD_SIZE];

	(void)state;
	c = sample_card();
	c.card_version = 2;
	krc_card_encode(&c, wire);
	assert_int_equal(krc_card_decode(wire, &d), -EPROTO);

	c = sample_card();
	c.incarnation = 0;
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	memset(c.gid, 0, 16);
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	c.node_id = 0;
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	c.ud_qpn = 1 << 24;
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	c.active_mtu = 6;
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	c.flags &= (u8)~KRCORE_CARD_F_IPV4;	/* flag must match the GID */
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	c.flags |= 0x80;
	assert_int_equal(krc_card_check(&c), -EINVAL);
	c = sample_card();
	assert_int_equal(krc_card_check(&c), 0);
}

static void test_node_id(void **state)
{
	u8 gid[16];
	const u8 ip[4] = { 10, 77, 0, 1 };

	(void)state;
	krc_gid_from_ipv4(gid, ip);
	assert_int_equal(krc_gid_node_id(gid), 0x0a4d0001);
	assert_int_equal(krc_gid_parse("fe80::1", gid), 0);
	assert_int_not_equal(krc_gid_node_id(gid), 0);
	memset(gid, 0, 16);
	assert_int_not_equal(krc_gid_node_id(gid), 0);
}

static void test_gid_format(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "10.77.0.1", "10.77.0.1" },
		{ "::ffff:10.77.0.1", "10.77.0.1" },
		{ "fe80::5054:ff:fe4b:5201", "fe80::5054:ff:fe4b:5201" },
		{ "0000:0000:0000:0000:0000:0000:0000:0001", "::1" },
		{ "2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1" },
		{ "2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1" },
		{ "1:0:0:2:0:0:0:3", "1:0:0:2::3" },
		{ "FE80::ABCD", "fe80::abcd" },
		{ "::", "::" },
		{ "1::", "1::" },
	};
	char buf[KRC_GID_STRLEN];
	u8 gid[16];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(krc_gid_parse(cases[i].in, gid), 0);
		krc_gid_format(gid, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].out);
	}
	/* truncation is safe and NUL-terminated */
	assert_int_equal(krc_gid_parse("10.77.0.1", gid), 0);
	assert_int_equal(krc_gid_format(gid, buf, 4), 9);
	assert_string_equal(buf, "10.");
}

static void test_gid_parse_rejects(void **state)
{
	static const char *const bad[] = {
		"", "1", "10.77.0", "10.77.0.1.2", "256.1.1.1", "010.1.1.1",
		"1.2.3.", ".1.2.3", "1..2.3", "a.b.c.d", ":", ":::", "1:::2",
		"1::2::3", "12345::", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
		":1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:", "1:2:3:4:5:6:7::8",
		"g::1", "::ffff:1.2.3", "::1.2.3.4.5", "1.2.3.4::",
		"1:2:3:4:5:6:7:1.2.3.4", " 10.0.0.1", "10.0.0.1 ",
	};
	u8 gid[16];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (krc_gid_parse(bad[i], gid) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	assert_int_equal(krc_gid_parse(NULL, gid), -EINVAL);
}

/* Differential check against the C library's inet_pton on random text. */
static void test_gid_parse_vs_inet_pton(void **state)
{
	static const char alphabet[] = "0123456789abcdefABCDEF:.:::..";
	unsigned int seed = 12345;
	char s[48];
	u8 a[16], b[16];
	int i, n, k, agree = 0;

	(void)state;
	for (i = 0; i < 200000; i++) {
		n = 1 + rand_r(&seed) % 40;
		for (k = 0; k < n; k++)
			s[k] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		s[n] = '\0';
		if (!strchr(s, ':'))
			continue;	/* IPv4 rules differ on purpose (no octal) */
		int mine = krc_gid_parse(s, a) == 0;
		int libc = inet_pton(AF_INET6, s, b) == 1;

		if (mine != libc)
			fail_msg("\"%s\": krc_gid_parse %d, inet_pton %d", s, mine, libc);
		if (mine)
			assert_memory_equal(a, b, 16);
		agree++;
	}
	assert_true(agree > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_card_layout),
		cmocka_unit_test(test_card_roundtrip),
		cmocka_unit_test(test_card_rejects),
		cmocka_unit_test(test_node_id),
		cmocka_unit_test(test_gid_format),
		cmocka_unit_test(test_gid_parse_rejects),
		cmocka_unit_test(test_gid_parse_vs_inet_pton),
	};

	return cmocka_run_group_tests_name("card", tests, NULL, NULL);
}
