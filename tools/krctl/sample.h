/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sample.h - one look at the node for krctl: the peers (PEER_INFO and
 * PEER_STATS, matched by address), the counters of sysfs, and the
 * differences between two looks that krctl top shows.
 */
#ifndef KRCTL_SAMPLE_H
#define KRCTL_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

#include "libkrcore.h"

struct krctl_peer {
	struct krcore_peer_info info;	/* info.card.gid: the peer's address */
	struct krcore_peer_stats stats;
	bool has_stats;		/* the peer was still there for PEER_STATS */
};

struct krctl_peers {
	struct krctl_peer *v;
	unsigned int n;
	/* PEER_STATS needs CAP_NET_ADMIN: this user sees no traffic */
	bool stats_denied;
};

/*
 * Every peer of the node, in the module's order; 0 or -errno. Peers come
 * and go between the calls: one listed twice is kept once, one gone before
 * its statistics were read has has_stats false; without CAP_NET_ADMIN
 * no peer has them (stats_denied).
 */
int krctl_peers_get(struct krc_vq *vq, struct krctl_peers *p);
void krctl_peers_free(struct krctl_peers *p);
/* The peer with address @gid, or NULL. */
const struct krctl_peer *krctl_peer_find(const struct krctl_peers *p,
					 const uint8_t gid[16]);
/* VQs on the pooled RC connections listed for a peer. */
uint32_t krctl_peer_rc_vqs(const struct krcore_peer_info *pi);

struct krctl_counter {
	char name[64];
	char text[32];		/* the file's text, without its newline */
	uint64_t value;
	bool numeric;		/* text is a decimal number */
};

struct krctl_counters {
	struct krctl_counter *v;
	unsigned int n;
};

/* The counter files of @dir, sorted by name; 0 or -errno (of opendir). */
int krctl_counters_read(const char *dir, struct krctl_counters *c);
void krctl_counters_free(struct krctl_counters *c);
/* The value of counter @name (0 if there is none or it is no number). */
uint64_t krctl_counter(const struct krctl_counters *c, const char *name);

/*
 * How much a counter that only grows grew from @prev to @cur. A counter
 * that went back started over in between (the peer left the table and
 * was met again, the module was reloaded): then all of @cur is new.
 * Never negative.
 */
static inline uint64_t krctl_delta(uint64_t prev, uint64_t cur)
{
	return cur >= prev ? cur - prev : cur;
}

/* What krctl top shows of one peer for one interval. */
struct krctl_top_row {
	uint8_t gid[16];
	uint32_t node_id;
	bool local;		/* the peer is this node */
	bool is_new;		/* not in the previous sample */
	bool has_stats;
	uint64_t qconnects;	/* deltas */
	uint64_t wr_posted;
	uint64_t wr_bytes;
	uint64_t recoveries;
	uint64_t drops;		/* wr_errors + wr_timeouts */
	uint64_t recoveries_total;
	uint64_t drops_total;
	double connects_per_s;
	double requests_per_s;
	double bytes_per_s;
	uint32_t nconns;
	uint32_t rc_vqs;
	uint32_t dgram_vqs;
};

/*
 * One row per peer of @cur, against @prev (a peer not in @prev is new:
 * its counters started at 0 when the node met it), over @seconds (rates
 * are 0 when it is not positive). Rows sorted by requests/s, highest
 * first, then by address. Returns the number of rows (*rows: malloc'd,
 * NULL when none) or -ENOMEM.
 */
int krctl_top_rows(const struct krctl_peers *prev, const struct krctl_peers *cur,
		   double seconds, struct krctl_top_row **rows);

#endif /* KRCTL_SAMPLE_H */
