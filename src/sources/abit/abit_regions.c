/* abit_regions: adaptive region sampling (pure logic; see the header for the contract).
 *
 * Regions are kept sorted by address in one array of max_regions entries; merge and split
 * work in place (split writes its pieces from the array's end backwards, so it never
 * overwrites a region it has not read yet), and only an update builds into a transient
 * array, because cutting a region at a hole can duplicate it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sources/abit/abit_regions.h"

struct rgn_vec {
	struct abit_region_info *r;
	size_t n, cap;
};

struct abit_regions {
	struct abit_regions_params p;
	struct abit_rng rng;
	struct rgn_vec live;
	struct abit_region_info *snap; /* the last aggregation interval, before its merge */
	size_t nsnap;
	uint64_t limit;	   /* largest region, bytes */
	uint32_t nsamples; /* sampling intervals done in this aggregation interval */
	size_t npending;   /* regions sampled by the last prepare, while one is pending */
	bool pending;
	size_t nmerged;	     /* regions after the last merge */
	size_t last_split_n; /* regions at the last split */
	size_t nsubs;	     /* pieces per region of the split under way */
	uint64_t tick;	     /* prepares so far: which idle regions this one samples */
};

uint64_t abit_rng_splitmix64(void *ctx)
{
	uint64_t *s = ctx, z = (*s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Uniform in [0, n); the modulo bias is below n / 2^64. */
static uint64_t rand_below(struct abit_regions *rs, uint64_t n)
{
	return rs->rng.next(rs->rng.ctx) % n;
}

static uint64_t rgn_pages(const struct abit_regions *rs, const struct abit_region_info *r)
{
	return (r->end - r->start) / rs->p.page_size;
}

/* Pages of [0, x) (page numbers) in the last tail_pages of their piece (powers of two). */
static uint64_t tails_below(const struct abit_regions *rs, uint64_t x)
{
	uint64_t c = rs->p.piece_pages, t = rs->p.tail_pages, off = x & (c - 1);

	return x / c * t + (off > c - t ? off - (c - t) : 0);
}

/* The page of region r to sample (see "Where a sample lands" in the header). With tail draws
 * one random number decides both: its low bit uniform or tail, the rest where. */
static uint64_t sample_page(struct abit_regions *rs, const struct abit_region_info *r)
{
	uint64_t ps = rs->p.page_size, s = r->start / ps, n = rgn_pages(rs, r);
	uint64_t c = rs->p.piece_pages, t = rs->p.tail_pages, x, nt, g;

	if (t == 0)
		return r->start + rand_below(rs, n) * ps;
	x = rs->rng.next(rs->rng.ctx);
	nt = x & 1 ? 0 : tails_below(rs, s + n) - tails_below(rs, s);
	if (nt == 0)
		return r->start + (x >> 1) % n * ps;
	/* The g-th tail page of the address space: in piece g / t, at c - t + g % t. */
	g = tails_below(rs, s) + (x >> 1) % nt;
	return (g / t * c + (c - t) + (g & (t - 1))) * ps;
}

/* ---- merge ------------------------------------------------------------------------------ */

static uint32_t count_diff(uint32_t a, uint32_t b)
{
	return a > b ? a - b : b - a;
}

/* Folds c into p: the count is the size-weighted mean (rounded), idleness the shorter one. */
static void rgn_absorb(const struct abit_regions *rs, struct abit_region_info *p,
		       const struct abit_region_info *c)
{
	uint64_t sp = rgn_pages(rs, p), sc = rgn_pages(rs, c);

	p->nr_accesses =
	    (uint32_t)((p->nr_accesses * sp + c->nr_accesses * sc + (sp + sc) / 2) / (sp + sc));
	p->idle_aggrs = p->idle_aggrs < c->idle_aggrs ? p->idle_aggrs : c->idle_aggrs;
	p->end = c->end;
}

/* One pass: merges each region into its left neighbour when they touch, their counts differ by
 * at most thres and the result stays within limit. */
static void merge_pass(const struct abit_regions *rs, struct rgn_vec *v, uint32_t thres,
		       uint64_t limit)
{
	size_t w = 0;

	for (size_t i = 1; i < v->n; i++) {
		struct abit_region_info *p = &v->r[w], *c = &v->r[i];

		if (p->end == c->start && count_diff(p->nr_accesses, c->nr_accesses) <= thres &&
		    c->end - p->start <= limit)
			rgn_absorb(rs, p, c);
		else
			v->r[++w] = *c;
	}
	if (v->n)
		v->n = w + 1;
}

/* Like kdamond_merge_regions' loop: while the regions do not fit in max, passes with a
 * threshold doubling from a tenth of the possible count; then one merging whatever touches
 * within the size limit (at most 2 * min_regions + spans regions remain), and, as a last
 * resort, one without the limit. */
static void merge_to_fit(const struct abit_regions *rs, struct rgn_vec *v, size_t max)
{
	uint32_t top = rs->p.samples_per_aggr;

	for (uint32_t thres = top / 10 ? top / 10 : 1; v->n > max && thres <= top; thres *= 2)
		merge_pass(rs, v, thres, rs->limit);
	if (v->n > max)
		merge_pass(rs, v, UINT32_MAX, rs->limit);
	if (v->n > max)
		merge_pass(rs, v, UINT32_MAX, UINT64_MAX);
}

/* ---- split ------------------------------------------------------------------------------ */

/* Writes the part of *r from cut on as the piece left of those already written (the array is
 * filled from its end backwards), and keeps the part before cut in *r. */
static void put_right_piece(struct rgn_vec *v, size_t *w, struct abit_region_info *r, uint64_t cut)
{
	v->r[--*w] = *r;
	v->r[*w].start = cut;
	r->end = cut;
}

/* Cuts r into pieces written right to left at v->r[--*w]; returns the pieces beyond one, at
 * most budget. */
typedef size_t (*cut_fn)(struct abit_regions *rs, struct rgn_vec *v, size_t *w,
			 struct abit_region_info r, size_t budget);

/* Splits every region in place, last first, into the space at the array's end: the pieces
 * written never reach a region not read yet because the total stays within v->cap, which
 * the budget of extra pieces guarantees. */
static void split_backwards(struct abit_regions *rs, struct rgn_vec *v, cut_fn cut, size_t budget)
{
	size_t w = v->cap;

	for (size_t i = v->n; i-- > 0;)
		budget -= cut(rs, v, &w, v->r[i], budget);
	memmove(v->r, v->r + w, (v->cap - w) * sizeof(*v->r));
	v->n = v->cap - w;
}

/* kdamond_split_regions' pieces: up to nsubs - 1 cuts, each 10%..90% into the region's
 * remaining left part, while that part is over two pages. */
static size_t random_cuts(struct abit_regions *rs, struct rgn_vec *v, size_t *w,
			  struct abit_region_info r, size_t budget)
{
	uint64_t page = rs->p.page_size;
	size_t nc = 0, want = rs->nsubs - 1 < budget ? rs->nsubs - 1 : budget;

	for (size_t k = 0; k < want && rgn_pages(rs, &r) > 2; k++) {
		uint64_t pages = rgn_pages(rs, &r);
		uint64_t sub = (1 + rand_below(rs, 9)) * pages / 10 * page;

		if (sub == 0 || sub >= r.end - r.start)
			continue;
		put_right_piece(v, w, &r, r.start + sub);
		nc++;
	}
	v->r[--*w] = r;
	return nc;
}

/* Equal page-aligned pieces of at most the size limit, as many as the budget allows. */
static size_t even_cuts(struct abit_regions *rs, struct rgn_vec *v, size_t *w,
			struct abit_region_info r, size_t budget)
{
	uint64_t page = rs->p.page_size, sz = r.end - r.start;
	uint64_t pieces = (sz + rs->limit - 1) / rs->limit, q;
	size_t nc = 0;

	if (pieces - 1 > budget)
		pieces = budget + 1;
	q = ((sz + pieces - 1) / pieces + page - 1) & ~(page - 1);
	for (uint64_t k = pieces - 1; k > 0; k--) {
		if (k * q >= sz)
			continue;
		put_right_piece(v, w, &r, r.start + k * q);
		nc++;
	}
	v->r[--*w] = r;
	return nc;
}

/* Like kdamond_split_regions: only while at most max / 2 regions, so the pieces fit; in 3
 * when the count has not moved since the last split and stays under max / 3. */
static void split_regions(struct abit_regions *rs)
{
	size_t n = rs->live.n, max = rs->p.max_regions;

	if (n == 0 || n > max / 2)
		return;
	rs->nsubs = rs->last_split_n == n && n < max / 3 ? 3 : 2;
	rs->last_split_n = n;
	split_backwards(rs, &rs->live, random_cuts, (rs->nsubs - 1) * n);
}

/* ---- update ----------------------------------------------------------------------------- */

static bool ranges_valid(const struct abit_range *r, size_t n, uint64_t page)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].start >= r[i].end || ((r[i].start | r[i].end) & (page - 1)) ||
		    (i && r[i].start < r[i - 1].end))
			return false;
	return true;
}

/* Spans the ranges make when gaps of at most gap bytes are closed. */
static size_t spans_with_gap(const struct abit_range *r, size_t n, uint64_t gap)
{
	size_t k = n ? 1 : 0;

	for (size_t i = 1; i < n; i++)
		k += r[i].start - r[i - 1].end > gap;
	return k;
}

/* The smallest gap to close so that at most kmax spans remain (binary search: the span count
 * only falls as the gap grows). */
static uint64_t coalesce_gap(const struct abit_range *r, size_t n, size_t kmax)
{
	uint64_t lo = 0, hi = 0;

	for (size_t i = 1; i < n; i++)
		if (r[i].start - r[i - 1].end > hi)
			hi = r[i].start - r[i - 1].end;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (spans_with_gap(r, n, mid) <= kmax)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The span starting at range i; returns the index of the range after it. */
static size_t next_span(const struct abit_range *r, size_t n, uint64_t gap, size_t i,
			struct abit_range *out)
{
	*out = r[i];
	for (i++; i < n && r[i].start - out->end <= gap; i++)
		out->end = r[i].end;
	return i;
}

/* Appends to out the regions covering span t: the old regions from index i on that overlap
 * it, cut to it, the first and last stretched to its ends and holes given to the region
 * before them (DAMON's damon_set_regions), or one fresh region when none overlaps. Returns
 * the first old region that may still overlap the next span. */
static size_t cover_span(const struct rgn_vec *old, struct abit_range t, size_t i,
			 struct rgn_vec *out)
{
	size_t first = out->n;

	while (i < old->n && old->r[i].end <= t.start)
		i++;
	for (; i < old->n && old->r[i].start < t.end; i++) {
		struct abit_region_info c = old->r[i];

		c.start = c.start < t.start ? t.start : c.start;
		c.end = c.end > t.end ? t.end : c.end;
		if (out->n > first)
			out->r[out->n - 1].end = c.start;
		out->r[out->n++] = c;
		if (old->r[i].end > t.end)
			break;
	}
	if (out->n == first) {
		out->r[out->n++] = (struct abit_region_info){.start = t.start, .end = t.end};
		return i;
	}
	out->r[first].start = t.start;
	out->r[out->n - 1].end = t.end;
	return i;
}

int abit_regions_update(struct abit_regions *rs, const struct abit_range *ranges, size_t n)
{
	size_t kmax = rs->p.max_regions / 2, nspans;
	uint64_t page = rs->p.page_size, gap, span = 0, lim_pages;
	struct rgn_vec tmp = {0};
	struct abit_range t;

	if (n && !ranges_valid(ranges, n, page))
		return -EINVAL;
	gap = coalesce_gap(ranges, n, kmax);
	nspans = spans_with_gap(ranges, n, gap);
	for (size_t i = 0; i < n;) {
		i = next_span(ranges, n, gap, i, &t);
		span += t.end - t.start;
	}
	/* Old regions reach each span they overlap (one more per closed hole at most), one
	 * fresh region per span, and the even split adds at most span / limit = min_regions. */
	tmp.cap = rs->live.n + 2 * nspans + rs->p.min_regions;
	tmp.r = malloc(tmp.cap * sizeof(*tmp.r));
	if (!tmp.r)
		return -ENOMEM;
	lim_pages = (span / page + rs->p.min_regions - 1) / rs->p.min_regions;
	rs->limit = (lim_pages ? lim_pages : 1) * page;
	for (size_t i = 0, k = 0; k < n;) {
		k = next_span(ranges, n, gap, k, &t);
		i = cover_span(&rs->live, t, i, &tmp);
	}
	split_backwards(rs, &tmp, even_cuts, tmp.cap - tmp.n);
	merge_to_fit(rs, &tmp, rs->p.max_regions);
	memcpy(rs->live.r, tmp.r, tmp.n * sizeof(*tmp.r));
	rs->live.n = tmp.n;
	rs->pending = false;
	free(tmp.r);
	return 0;
}

/* ---- sampling --------------------------------------------------------------------------- */

uint32_t abit_regions_sample_every(uint32_t idle_aggrs)
{
	uint32_t k = idle_aggrs / 2, every = 1;

	while (k-- && every < ABIT_REGIONS_MAX_SKIP)
		every *= 2;
	return every;
}

int abit_regions_prepare(struct abit_regions *rs, uint64_t *addr, size_t cap)
{
	if (cap < rs->live.n)
		return -ENOBUFS;
	rs->tick++;
	for (size_t i = 0; i < rs->live.n; i++) {
		const struct abit_region_info *r = &rs->live.r[i];

		/* Idle regions take turns, so each step samples about as many of them. */
		if ((rs->tick + i) % abit_regions_sample_every(r->idle_aggrs))
			addr[i] = 0;
		else
			addr[i] = sample_page(rs, r);
	}
	rs->pending = true;
	rs->npending = rs->live.n;
	return (int)rs->live.n;
}

/* At the end of an aggregation interval: idleness, the snapshot the queries read, then
 * kdamond's merge, reset and split. */
static void aggregate(struct abit_regions *rs)
{
	uint32_t top = rs->p.samples_per_aggr;
	struct rgn_vec *v = &rs->live;

	for (size_t i = 0; i < v->n; i++)
		if (v->r[i].nr_accesses)
			v->r[i].idle_aggrs = 0;
		else if (v->r[i].idle_aggrs < UINT32_MAX)
			v->r[i].idle_aggrs++;
	memcpy(rs->snap, v->r, v->n * sizeof(*v->r));
	rs->nsnap = v->n;
	merge_pass(rs, v, top / 10 ? top / 10 : 1, rs->limit);
	merge_to_fit(rs, v, rs->p.max_regions);
	rs->nmerged = v->n;
	for (size_t i = 0; i < v->n; i++)
		v->r[i].nr_accesses = 0;
	split_regions(rs);
}

int abit_regions_check(struct abit_regions *rs, const bool *accessed, size_t n)
{
	if (!rs->pending)
		return -ESTALE;
	if (n != rs->npending)
		return -EINVAL;
	rs->pending = false;
	for (size_t i = 0; i < n; i++)
		rs->live.r[i].nr_accesses += accessed[i];
	if (++rs->nsamples < rs->p.samples_per_aggr)
		return 0;
	rs->nsamples = 0;
	aggregate(rs);
	return 1;
}

void abit_regions_wake(struct abit_regions *rs)
{
	for (size_t i = 0; i < rs->live.n; i++)
		rs->live.r[i].idle_aggrs = 0;
}

/* ---- queries ---------------------------------------------------------------------------- */

static size_t report(const struct abit_regions *rs, bool idle, uint32_t min, struct abit_range *out,
		     size_t cap)
{
	size_t k = 0;
	uint64_t last_end = 0;

	for (size_t i = 0; i < rs->nsnap; i++) {
		const struct abit_region_info *s = &rs->snap[i];

		if ((idle ? s->idle_aggrs : s->nr_accesses) < min)
			continue;
		if (k && last_end == s->start) {
			if (k <= cap)
				out[k - 1].end = s->end;
		} else {
			if (k < cap)
				out[k] = (struct abit_range){.start = s->start, .end = s->end};
			k++;
		}
		last_end = s->end;
	}
	return k;
}

size_t abit_regions_hot(const struct abit_regions *rs, uint32_t min_accesses,
			struct abit_range *out, size_t cap)
{
	return report(rs, false, min_accesses, out, cap);
}

size_t abit_regions_idle(const struct abit_regions *rs, uint32_t min_aggrs, struct abit_range *out,
			 size_t cap)
{
	return report(rs, true, min_aggrs, out, cap);
}

size_t abit_regions_get(const struct abit_regions *rs, struct abit_region_info *out, size_t cap)
{
	memcpy(out, rs->live.r, (cap < rs->live.n ? cap : rs->live.n) * sizeof(*out));
	return rs->live.n;
}

size_t abit_regions_count(const struct abit_regions *rs)
{
	return rs->live.n;
}

size_t abit_regions_count_merged(const struct abit_regions *rs)
{
	return rs->nmerged;
}

uint64_t abit_regions_size_limit(const struct abit_regions *rs)
{
	return rs->limit;
}

/* Samples a region that looks idle from its first aggregation interval on (it holds the band
 * but no sample hit it yet) gets in its first k intervals at least: idleness a takes turns of
 * abit_regions_sample_every(a), and m steps at one turn length e hold floor(m / e) turns. */
static uint64_t samples_while_idle(uint64_t k, uint32_t samples_per_aggr)
{
	uint64_t n = 0, j = 0;

	while (j < k) {
		uint32_t e = abit_regions_sample_every((uint32_t)(j < UINT32_MAX ? j : UINT32_MAX));
		uint64_t len = 1;

		/* The turn length holds while idleness stays below the next doubling. */
		while (j + len < k && abit_regions_sample_every((uint32_t)(j + len)) == e)
			len++;
		n += len * samples_per_aggr / e;
		j += len;
	}
	return n;
}

/* Samples that miss a band of w pages in regions of at most lim pages with probability at
 * most exp(-efolds): ceil(efolds / p) for the per-sample chance p. Uniform draws: p = w / lim.
 * Tail draws over pieces of c pages: the uniform half gives w / (2 lim); the tail half, as
 * the band holds floor(w / c) whole pieces' tails and a region touches at most
 * ceil(lim / c) + 1 pieces, at least floor(w / c) / (2 (ceil(lim / c) + 1)). */
static uint64_t samples_needed(uint64_t lim, uint64_t w, uint32_t efolds, uint64_t c)
{
	uint64_t q, n;
	double need;

	if (c == 0)
		return (efolds * lim + w - 1) / w;
	q = (lim + c - 1) / c + 1;
	/* In doubles: lim * q nears lim^2 / c, past 64 bits for spans near the 2^36 pages of a
	 * 48-bit address space; exact for the integers of any real span. */
	need = 2.0 * efolds * (double)lim * (double)q /
	       ((double)w * (double)q + (double)(w / c) * (double)lim);
	n = (uint64_t)need;
	return n + (need > (double)n); /* rounded up */
}

uint64_t abit_regions_miss_bound(uint64_t span_pages, uint64_t band_pages, uint32_t min_regions,
				 uint32_t samples_per_aggr, uint32_t efolds, uint32_t piece_pages)
{
	uint64_t lim = (span_pages + min_regions - 1) / min_regions;
	uint64_t need = samples_needed(lim, band_pages, efolds, piece_pages), k = 1;
	uint64_t full = 0, settled = 0;

	/* Turns settle at the longest after a few intervals; past that, each interval adds
	 * samples_per_aggr / ABIT_REGIONS_MAX_SKIP. */
	while (abit_regions_sample_every((uint32_t)settled) < ABIT_REGIONS_MAX_SKIP)
		settled++;
	for (k = 1; k <= settled; k++)
		if (samples_while_idle(k, samples_per_aggr) >= need)
			return k;
	full = samples_while_idle(settled, samples_per_aggr);
	return settled +
	       ((need - full) * ABIT_REGIONS_MAX_SKIP + samples_per_aggr - 1) / samples_per_aggr;
}

/* ---- life cycle ------------------------------------------------------------------------- */

#define ABIT_REGIONS_MAX (1u << 20)

int abit_regions_new(const struct abit_regions_params *p, struct abit_rng rng,
		     struct abit_regions **out)
{
	struct abit_regions *rs;

	if (!p->min_regions || p->max_regions / 4 < p->min_regions ||
	    p->max_regions > ABIT_REGIONS_MAX || !p->samples_per_aggr ||
	    p->samples_per_aggr > UINT16_MAX || !p->page_size ||
	    (p->page_size & (p->page_size - 1)) || !rng.next ||
	    (p->tail_pages &&
	     (p->tail_pages >= p->piece_pages || (p->tail_pages & (p->tail_pages - 1)) ||
	      (p->piece_pages & (p->piece_pages - 1)))))
		return -EINVAL;
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->p = *p;
	rs->rng = rng;
	rs->limit = p->page_size;
	rs->live.cap = p->max_regions;
	rs->live.r = calloc(p->max_regions, sizeof(*rs->live.r));
	rs->snap = calloc(p->max_regions, sizeof(*rs->snap));
	if (!rs->live.r || !rs->snap) {
		abit_regions_free(rs);
		return -ENOMEM;
	}
	*out = rs;
	return 0;
}

void abit_regions_free(struct abit_regions *rs)
{
	if (!rs)
		return;
	free(rs->live.r);
	free(rs->snap);
	free(rs);
}
