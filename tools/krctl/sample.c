// SPDX-License-Identifier: BSD-2-Clause
/*
 * sample.c - one look at the node (peers, counters) and the differences
 * between two (see sample.h).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sample.h"

static int peers_add(struct krctl_peers *p, unsigned int *cap,
		     const struct krcore_peer_info *pi)
{
	struct krctl_peer *v;

	if (p->n == *cap) {
		unsigned int ncap = *cap ? *cap * 2 : 16;

		v = realloc(p->v, ncap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		p->v = v;
		*cap = ncap;
	}
	memset(&p->v[p->n], 0, sizeof(p->v[0]));
	p->v[p->n].info = *pi;
	p->n++;
	return 0;
}

const struct krctl_peer *krctl_peer_find(const struct krctl_peers *p,
					 const uint8_t gid[16])
{
	unsigned int i;

	for (i = 0; i < p->n; i++)
		if (!memcmp(p->v[i].info.card.gid, gid, 16))
			return &p->v[i];
	return NULL;
}

int krctl_peers_get(struct krc_vq *vq, struct krctl_peers *p)
{
	struct krcore_peer_stats st;
	struct krcore_peer_info pi;
	struct krctl_peer *found;
	unsigned int i, cap = 0;
	int ret;

	p->v = NULL;
	p->n = 0;
	p->stats_denied = false;
	for (i = 0; ; i++) {
		ret = krc_peer_info(vq, i, &pi);
		if (ret == -ENOENT)
			break;
		if (ret < 0)
			goto err;
		if (krctl_peer_find(p, pi.card.gid))
			continue;
		ret = peers_add(p, &cap, &pi);
		if (ret < 0)
			goto err;
	}
	for (i = 0; ; i++) {
		ret = krc_peer_stats(vq, i, &st);
		if (ret == -ENOENT)
			break;
		if (ret == -EPERM) {
			/* Other users' traffic: for operators only. */
			p->stats_denied = true;
			break;
		}
		if (ret < 0)
			goto err;
		found = (struct krctl_peer *)krctl_peer_find(p, st.gid);
		if (found && !found->has_stats) {
			found->stats = st;
			found->has_stats = true;
		}
	}
	return 0;
err:
	krctl_peers_free(p);
	return ret;
}

void krctl_peers_free(struct krctl_peers *p)
{
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

uint32_t krctl_peer_rc_vqs(const struct krcore_peer_info *pi)
{
	uint32_t n = 0;
	unsigned int c;

	for (c = 0; c < pi->nconns && c < KRCORE_PEER_MAX_CONNS; c++)
		n += pi->conns[c].vqs;
	return n;
}

static int counter_cmp(const void *a, const void *b)
{
	return strcmp(((const struct krctl_counter *)a)->name,
		      ((const struct krctl_counter *)b)->name);
}

/* Read one counter file: its text (first line) and its value. */
static void counter_load(const char *dir, struct krctl_counter *c)
{
	char path[512], *end;
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, c->name);
	c->text[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (!fgets(c->text, sizeof(c->text), f))
			c->text[0] = '\0';
		fclose(f);
	}
	len = strlen(c->text);
	if (len && c->text[len - 1] == '\n')
		c->text[--len] = '\0';
	errno = 0;
	c->value = strtoull(c->text, &end, 10);
	c->numeric = len && c->text[0] >= '0' && c->text[0] <= '9' &&
		     !*end && !errno;
	if (!c->numeric)
		c->value = 0;
}

int krctl_counters_read(const char *dir, struct krctl_counters *c)
{
	unsigned int cap = 0, i;
	struct krctl_counter *v;
	struct dirent *de;
	DIR *d;

	c->v = NULL;
	c->n = 0;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(v->name))
			continue;
		if (c->n == cap) {
			cap = cap ? cap * 2 : 128;
			v = realloc(c->v, cap * sizeof(*v));
			if (!v) {
				closedir(d);
				krctl_counters_free(c);
				return -ENOMEM;
			}
			c->v = v;
		}
		memset(&c->v[c->n], 0, sizeof(c->v[0]));
		strcpy(c->v[c->n].name, de->d_name);
		c->n++;
	}
	closedir(d);
	if (c->n)
		qsort(c->v, c->n, sizeof(c->v[0]), counter_cmp);
	for (i = 0; i < c->n; i++)
		counter_load(dir, &c->v[i]);
	return 0;
}

void krctl_counters_free(struct krctl_counters *c)
{
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

uint64_t krctl_counter(const struct krctl_counters *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return c->v[i].value;
	return 0;
}

static double rate(uint64_t delta, double seconds)
{
	return seconds > 0 ? (double)delta / seconds : 0.0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct krctl_top_row *x = a, *y = b;

	if (x->requests_per_s != y->requests_per_s)
		return x->requests_per_s > y->requests_per_s ? -1 : 1;
	return memcmp(x->gid, y->gid, 16);
}

static void row_fill(struct krctl_top_row *r, const struct krctl_peer *prev,
		     const struct krctl_peer *cur, double seconds)
{
	static const struct krcore_peer_stats zero;
	const struct krcore_peer_stats *s = &cur->stats;
	const struct krcore_peer_stats *ps = prev ? &prev->stats : &zero;

	memcpy(r->gid, cur->info.card.gid, 16);
	r->node_id = cur->info.card.node_id;
	r->local = cur->info.flags & KRCORE_PEER_F_LOCAL;
	r->is_new = !prev;
	r->has_stats = cur->has_stats;
	r->nconns = cur->info.nconns;
	r->rc_vqs = krctl_peer_rc_vqs(&cur->info);
	r->dgram_vqs = cur->info.dgram_vqs;
	r->qconnects = krctl_delta(prev ? prev->info.qconnects : 0,
				   cur->info.qconnects);
	if (cur->has_stats) {
		r->recoveries_total = s->recoveries;
		r->drops_total = s->wr_errors + s->wr_timeouts;
	}
	/*
	 * A new peer's counters started at 0 when the node met it. A peer
	 * whose statistics were missing in one of the two looks (it left
	 * the table between the calls) gets no traffic for the interval.
	 */
	if (cur->has_stats && (!prev || prev->has_stats)) {
		r->wr_posted = krctl_delta(ps->wr_posted, s->wr_posted);
		r->wr_bytes = krctl_delta(ps->wr_bytes, s->wr_bytes);
		r->recoveries = krctl_delta(ps->recoveries, s->recoveries);
		r->drops = krctl_delta(ps->wr_errors, s->wr_errors) +
			   krctl_delta(ps->wr_timeouts, s->wr_timeouts);
	}
	r->connects_per_s = rate(r->qconnects, seconds);
	r->requests_per_s = rate(r->wr_posted, seconds);
	r->bytes_per_s = rate(r->wr_bytes, seconds);
}

int krctl_top_rows(const struct krctl_peers *prev, const struct krctl_peers *cur,
		   double seconds, struct krctl_top_row **rows)
{
	struct krctl_top_row *r;
	unsigned int i;

	*rows = NULL;
	if (!cur->n)
		return 0;
	r = calloc(cur->n, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < cur->n; i++)
		row_fill(&r[i], krctl_peer_find(prev, cur->v[i].info.card.gid),
			 &cur->v[i], seconds);
	qsort(r, cur->n, sizeof(r[0]), row_cmp);
	*rows = r;
	return (int)cur->n;
}
