// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * card.c - node address cards and GIDs: wire encoding, validation, text.
 *
 * Wire layout of a card (64 bytes, little-endian integers):
 *   0 gid[16]  16 mac[6]  22 card_version  23 flags  24 node_id
 *  28 ud_qpn   32 ud_qkey 36 port_num 37 active_mtu 38 reserved0
 *  40 incarnation  48 dct_num  52 reserved1  56 dc_key
 * It is the layout of struct krcore_card on a little-endian host.
 */
#include "card.h"

void krc_card_encode(const struct krcore_card *card, u8 out[KRCORE_CARD_SIZE])
{
	memcpy(out, card->gid, 16);
	memcpy(out + 16, card->mac, 6);
	out[22] = card->card_version;
	out[23] = card->flags;
	krc_put_le32(out + 24, card->node_id);
	krc_put_le32(out + 28, card->ud_qpn);
	krc_put_le32(out + 32, card->ud_qkey);
	out[36] = card->port_num;
	out[37] = card->active_mtu;
	krc_put_le16(out + 38, 0);
	krc_put_le64(out + 40, card->incarnation);
	krc_put_le32(out + 48, card->dct_num);
	krc_put_le32(out + 52, 0);
	krc_put_le64(out + 56, card->dc_key);
}

int krc_card_decode(const u8 in[KRCORE_CARD_SIZE], struct krcore_card *card)
{
	memset(card, 0, sizeof(*card));
	card->card_version = in[22];
	if (card->card_version != KRCORE_CARD_VERSION)
		return -EPROTO;
	memcpy(card->gid, in, 16);
	memcpy(card->mac, in + 16, 6);
	card->flags = in[23];
	card->node_id = krc_get_le32(in + 24);
	card->ud_qpn = krc_get_le32(in + 28);
	card->ud_qkey = krc_get_le32(in + 32);
	card->port_num = in[36];
	card->active_mtu = in[37];
	card->incarnation = krc_get_le64(in + 40);
	card->dct_num = krc_get_le32(in + 48);
	card->dc_key = krc_get_le64(in + 56);
	return krc_card_check(card);
}

int krc_card_check(const struct krcore_card *card)
{
	if (card->card_version != KRCORE_CARD_VERSION)
		return -EPROTO;
	if (krc_gid_is_zero(card->gid) || !card->node_id ||
	    !card->incarnation || !card->port_num)
		return -EINVAL;
	if (card->active_mtu < 1 || card->active_mtu > 5)
		return -EINVAL;
	/* A control QP is QPN 2 or above and fits 24 bits. */
	if (card->ud_qpn == 1 || card->ud_qpn > 0xffffff)
		return -EINVAL;
	if (card->flags & ~(KRCORE_CARD_F_ROCE_V2 | KRCORE_CARD_F_IPV4))
		return -EINVAL;
	if (!!(card->flags & KRCORE_CARD_F_IPV4) != krc_gid_is_v4mapped(card->gid))
		return -EINVAL;
	return 0;
}

bool krc_gid_is_v4mapped(const u8 gid[16])
{
	static const u8 prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

bool krc_gid_is_zero(const u8 gid[16])
{
	int i;

	for (i = 0; i < 16; i++)
		if (gid[i])
			return false;
	return true;
}

void krc_gid_from_ipv4(u8 gid[16], const u8 ip[4])
{
	memset(gid, 0, 10);
	gid[10] = 0xff;
	gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

u32 krc_gid_node_id(const u8 gid[16])
{
	u32 h = 2166136261u;
	int i;

	if (krc_gid_is_v4mapped(gid)) {
		h = (u32)gid[12] << 24 | (u32)gid[13] << 16 |
		    (u32)gid[14] << 8 | gid[15];
	} else {
		for (i = 0; i < 16; i++)
			h = (h ^ gid[i]) * 16777619u;
	}
	return h ? h : 1;
}

/* Append @s to buf[*pos..len), always NUL-terminated; counts what it skips. */
static void put_str(char *buf, size_t len, size_t *pos, const char *s)
{
	for (; *s; s++, (*pos)++)
		if (*pos + 1 < len)
			buf[*pos] = *s;
	if (len)
		buf[*pos < len ? *pos : len - 1] = '\0';
}

static void put_uint(char *buf, size_t len, size_t *pos, unsigned int v,
		     unsigned int base)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[12];
	int n = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	tmp[n] = '\0';
	/* reverse in place */
	for (int i = 0; i < n / 2; i++) {
		char c = tmp[i];

		tmp[i] = tmp[n - 1 - i];
		tmp[n - 1 - i] = c;
	}
	put_str(buf, len, pos, tmp);
}

int krc_gid_format(const u8 gid[16], char *buf, size_t len)
{
	int best = -1, best_len = 0, i, j;
	size_t pos = 0;
	u16 g[8];

	if (len)
		buf[0] = '\0';
	if (krc_gid_is_v4mapped(gid)) {
		for (i = 12; i < 16; i++) {
			put_uint(buf, len, &pos, gid[i], 10);
			if (i < 15)
				put_str(buf, len, &pos, ".");
		}
		return (int)pos;
	}
	for (i = 0; i < 8; i++)
		g[i] = (u16)(gid[2 * i] << 8 | gid[2 * i + 1]);
	/* The longest run of two or more zero groups becomes "::". */
	for (i = 0; i < 8; i = j + 1) {
		for (j = i; j < 8 && !g[j]; j++)
			;
		if (j - i > best_len && j - i >= 2) {
			best = i;
			best_len = j - i;
		}
	}
	for (i = 0; i < 8; i++) {
		if (i == best) {
			put_str(buf, len, &pos, "::");
			i += best_len - 1;
			continue;
		}
		if (i && i != best + best_len)
			put_str(buf, len, &pos, ":");
		put_uint(buf, len, &pos, g[i], 16);
	}
	return (int)pos;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Dotted IPv4 at s[0..end). Returns 0 or -EINVAL. */
static int parse_ipv4(const char *s, const char *end, u8 ip[4])
{
	int part = 0, digits = 0;
	unsigned int v = 0;

	for (; s < end; s++) {
		if (*s == '.') {
			if (!digits || part == 3)
				return -EINVAL;
			ip[part++] = (u8)v;
			v = 0;
			digits = 0;
		} else if (*s >= '0' && *s <= '9') {
			/* no leading zeros: "010" is ambiguous (octal?) */
			if (digits == 1 && v == 0)
				return -EINVAL;
			v = v * 10 + (unsigned int)(*s - '0');
			if (v > 255 || ++digits > 3)
				return -EINVAL;
		} else {
			return -EINVAL;
		}
	}
	if (!digits || part != 3)
		return -EINVAL;
	ip[3] = (u8)v;
	return 0;
}

/*
 * Colon-separated groups of 1..4 hex digits in s[0..end), the last one
 * possibly a dotted IPv4 address (two groups) when @v4_ok. Empty input
 * gives 0 groups. Returns the number of groups or -EINVAL.
 */
static int parse_groups(const char *s, const char *end, u16 *out, int max,
			bool v4_ok)
{
	int n = 0;
	u8 ip[4];

	if (s == end)
		return 0;
	for (;;) {
		const char *q = s;
		unsigned int v = 0;

		while (q < end && *q != ':')
			q++;
		if (v4_ok && q == end && memchr(s, '.', (size_t)(end - s))) {
			if (n + 2 > max || parse_ipv4(s, end, ip))
				return -EINVAL;
			out[n++] = (u16)(ip[0] << 8 | ip[1]);
			out[n++] = (u16)(ip[2] << 8 | ip[3]);
			return n;
		}
		if (q == s || q - s > 4 || n == max)
			return -EINVAL;
		for (; s < q; s++) {
			if (hexval(*s) < 0)
				return -EINVAL;
			v = v << 4 | (unsigned int)hexval(*s);
		}
		out[n++] = (u16)v;
		if (q == end)
			return n;
		s = q + 1;	/* skip ':', a group must follow */
		if (s == end)
			return -EINVAL;
	}
}

int krc_gid_parse(const char *s, u8 gid[16])
{
	const char *end, *gap;
	u16 head[8], tail[8];
	int nhead, ntail = 0, i;
	u8 ip[4];

	if (!s || !*s)
		return -EINVAL;
	end = s + strlen(s);
	if (end - s > 64)
		return -EINVAL;
	if (!memchr(s, ':', (size_t)(end - s))) {
		if (parse_ipv4(s, end, ip))
			return -EINVAL;
		krc_gid_from_ipv4(gid, ip);
		return 0;
	}
	gap = strstr(s, "::");
	if (gap) {
		if (strstr(gap + 1, "::"))
			return -EINVAL;
		nhead = parse_groups(s, gap, head, 7, false);
		if (nhead < 0)
			return -EINVAL;
		ntail = parse_groups(gap + 2, end, tail, 7 - nhead, true);
		if (ntail < 0)
			return -EINVAL;
	} else {
		nhead = parse_groups(s, end, head, 8, true);
		if (nhead != 8)
			return -EINVAL;
	}
	for (i = 0; i < 8; i++) {
		u16 v = 0;

		if (i < nhead)
			v = head[i];
		else if (i >= 8 - ntail)
			v = tail[i - (8 - ntail)];
		gid[2 * i] = (u8)(v >> 8);
		gid[2 * i + 1] = (u8)v;
	}
	return 0;
}
