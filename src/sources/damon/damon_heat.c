/* damon_heat: regions' access histories across aggregations (see damon_heat.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "sources/damon/damon_heat.h"

static int grow(struct damon_heat *h)
{
	size_t cap = h->cap ? h->cap * 2 : 16;
	struct damon_heat_span *p, *c;

	if (cap > DAMON_HEAT_SPANS)
		cap = DAMON_HEAT_SPANS;
	p = realloc(h->prev, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	h->prev = p;
	c = realloc(h->cur, cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	h->cur = c;
	h->cap = cap;
	return 0;
}

/* The next aggregation: this one's spans become the ones to carry from. */
static void turn(struct damon_heat *h, uint64_t time_ns)
{
	struct damon_heat_span *t = h->prev;

	h->prev = h->cur, h->nprev = h->ncur, h->prev_ns = h->cur_ns;
	h->cur = t, h->ncur = 0, h->at = 0;
	h->cur_ns = time_ns;
}

/* The size-weighted mean of the previous aggregation's histories over [start, end), decayed
 * to time_ns; ranges it did not cover count as no history. */
static void carry(struct damon_heat *h, uint64_t start, uint64_t end, uint64_t time_ns,
		  struct damon_heat_span *out)
{
	double hits = 0, expo = 0, len = (double)(end - start), d;

	while (h->at < h->nprev && h->prev[h->at].end <= start)
		h->at++;
	for (size_t j = h->at; j < h->nprev && h->prev[j].start < end; j++) {
		const struct damon_heat_span *p = &h->prev[j];
		uint64_t lo = p->start > start ? p->start : start, hi = p->end < end ? p->end : end;

		if (hi <= lo)
			continue;
		hits += p->hits * (double)(hi - lo);
		expo += p->expo_s * (double)(hi - lo);
		if (p->warm) {
			out->warm_lo = out->warm_hi ? out->warm_lo : lo;
			out->warm_hi = hi;
		}
		out->near_intense |= p->intense;
	}
	d = exp(-(double)(time_ns - h->prev_ns) / 1e6 / DAMON_HEAT_TAU_MS);
	out->hits = (float)(hits / len * d);
	out->expo_s = (float)(expo / len * d);
}

/* An aggregation's hits: its samples that found the region accessed, at most one a second of
 * the aggregation (at least one): a region in which a sweep passes shows several at once. */
static float aggr_hits(uint32_t nr_accesses, uint32_t aggr_us)
{
	float cap = (float)aggr_us / 1e6f;

	cap = cap < 1.0f ? 1.0f : cap;
	return (float)nr_accesses < cap ? (float)nr_accesses : cap;
}

int damon_heat_note(struct damon_heat *h, const struct damon_region *r, uint64_t time_ns,
		    uint64_t span_ns, uint32_t aggr_us, bool intense, struct damon_heat_span *out)
{
	struct damon_heat_span s = {.start = r->start, .end = r->end, .intense = intense};

	if (r->end <= r->start)
		return -EINVAL;
	if (h->ncur == 0 || time_ns >= h->cur_ns + span_ns || time_ns < h->cur_ns ||
	    r->start < h->cur[h->ncur - 1].start)
		turn(h, time_ns);
	if (h->nprev && time_ns >= h->prev_ns)
		carry(h, r->start, r->end, time_ns, &s);
	s.hits += aggr_hits(r->nr_accesses, aggr_us);
	s.expo_s += (float)aggr_us / 1e6f;
	s.warm = damon_heat_warm(&s, aggr_us);
	if (h->ncur == h->cap && h->cap < DAMON_HEAT_SPANS && grow(h) < 0)
		return -ENOMEM;
	if (h->ncur < h->cap)
		h->cur[h->ncur++] = s;
	*out = s;
	return 0;
}

bool damon_heat_warm(const struct damon_heat_span *s, uint32_t aggr_us)
{
	float period = DAMON_HEAT_PERIOD_MS / 1000.0f;

	if (period < 2 * (float)aggr_us / 1e6f)
		period = 2 * (float)aggr_us / 1e6f;
	return s->hits >= DAMON_HEAT_HITS && s->hits * period >= s->expo_s;
}

/* Whether region o, flagged, is r's neighbour in one target of one kdamond. */
static bool beside(const struct damon_region *r, const struct damon_region *o, bool flag)
{
	return o && flag && o->kdamond == r->kdamond && o->target == r->target &&
	       (o->end == r->start || r->end == o->start);
}

bool damon_heat_inside(const struct damon_region *r, const struct damon_region *prev,
		       bool prev_warm, const struct damon_region *next, bool next_warm)
{
	return beside(r, prev, prev_warm) && beside(r, next, next_warm);
}

bool damon_heat_by_intense(const struct damon_heat_span *s, const struct damon_region *r,
			   const struct damon_region *prev, bool prev_intense,
			   const struct damon_region *next, bool next_intense)
{
	return s->near_intense || beside(r, prev, prev_intense) || beside(r, next, next_intense);
}

void damon_heat_free(struct damon_heat *h)
{
	free(h->prev);
	free(h->cur);
	*h = (struct damon_heat){0};
}

struct damon_heat *damon_heats_of(struct damon_heats *hs, pid_t pid)
{
	struct damon_heat *n;

	for (size_t i = 0; i < hs->n; i++)
		if (hs->h[i].pid == pid)
			return &hs->h[i];
	n = realloc(hs->h, (hs->n + 1) * sizeof(*n));
	if (!n)
		return NULL;
	hs->h = n;
	hs->h[hs->n] = (struct damon_heat){.pid = pid};
	return &hs->h[hs->n++];
}

void damon_heats_keep(struct damon_heats *hs, const pid_t *pids, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < hs->n; i++) {
		bool keep = false;

		for (size_t j = 0; j < n && !keep; j++)
			keep = hs->h[i].pid == pids[j];
		if (keep)
			hs->h[k++] = hs->h[i];
		else
			damon_heat_free(&hs->h[i]);
	}
	hs->n = k;
}

void damon_heats_free(struct damon_heats *hs)
{
	for (size_t i = 0; i < hs->n; i++)
		damon_heat_free(&hs->h[i]);
	free(hs->h);
	*hs = (struct damon_heats){0};
}
