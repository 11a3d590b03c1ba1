/* damon_regions: a new target's initial regions (see damon_regions.h). */
#include "base/config.h"
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_feed.h"
#include "sources/damon/damon_regions.h"

#define PAGE UINT64_C(4096)

size_t damon_three_ranges(const struct vma *v, size_t n, struct damon_range out[3])
{
	size_t gap[2] = {0, 0}; /* VMA indexes after the two largest gaps, 0: none */
	uint64_t len[2] = {0, 0};
	size_t k = 0;

	if (n == 0)
		return 0;
	for (size_t i = 1; i < n; i++) {
		uint64_t g = v[i].start > v[i - 1].end ? v[i].start - v[i - 1].end : 0;

		if (g > len[0]) {
			gap[1] = gap[0], len[1] = len[0];
			gap[0] = i, len[0] = g;
		} else if (g > len[1]) {
			gap[1] = i, len[1] = g;
		}
	}
	if (gap[1] && gap[1] < gap[0]) { /* address order */
		size_t t = gap[0];

		gap[0] = gap[1], gap[1] = t;
	}
	out[k++] = (struct damon_range){v[0].start, 0};
	for (int j = 0; j < 2; j++) {
		if (!gap[j])
			continue;
		out[k - 1].end = v[gap[j] - 1].end;
		out[k++] = (struct damon_range){v[gap[j]].start, 0};
	}
	out[k - 1].end = v[n - 1].end;
	return k;
}

/* Appends [a, b) cut into pieces (or whole with pieces 1); false when out is full. */
static bool put_cut(struct damon_range *out, size_t cap, size_t *k, uint64_t a, uint64_t b,
		    uint64_t pieces)
{
	uint64_t step = (b - a) / pieces;

	step -= step % PAGE;
	if (step < PAGE)
		step = PAGE, pieces = (b - a + PAGE - 1) / PAGE;
	for (uint64_t j = 0; j < pieces && a + j * step < b; j++) {
		if (*k == cap)
			return false;
		out[(*k)++] =
		    (struct damon_range){a + j * step, j + 1 == pieces ? b : a + (j + 1) * step};
	}
	return true;
}

size_t damon_cut_ranges(const struct damon_range *r, size_t n, uint32_t want,
			struct damon_range *out, size_t cap)
{
	uint64_t total = 0, sz;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		total += r[i].end - r[i].start;
	sz = want ? total / want : total;
	sz -= sz % PAGE;
	if (sz < PAGE)
		sz = PAGE;
	for (size_t i = 0; i < n; i++) {
		uint64_t len = r[i].end - r[i].start, pieces = len / sz ? len / sz : 1;

		if (k + pieces > cap)
			break;
		put_cut(out, cap, &k, r[i].start, r[i].end, pieces);
	}
	return k;
}

bool damon_aggr_size_add(struct damon_aggr_size *a, const struct pghotd_config *cfg,
			 const struct damon_region *r, uint64_t time_ns)
{
	uint64_t size = r->end > r->start ? r->end - r->start : 0, limit;

	if (time_ns >= a->end_ns) {
		if (a->end_ns)
			a->last = a->sum;
		a->sum = 0;
		a->end_ns = time_ns + damon_aggr_span_ns(cfg);
	}
	a->sum += size;
	limit = a->last / (cfg->sources.damon.min_regions ? cfg->sources.damon.min_regions : 1);
	return a->last && size >= DAMON_OVERSIZED_MIN && size > DAMON_OVERSIZED_TIMES * limit;
}

size_t damon_cut_spans(const struct damon_range *r, size_t n, const struct damon_range *z,
		       size_t nz, uint32_t pieces, struct damon_range *out, size_t cap)
{
	size_t k = 0, j = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t at = r[i].start;

		for (; j < nz && z[j].start < r[i].end; j++) {
			uint64_t a = z[j].start > at ? z[j].start : at;
			uint64_t b = z[j].end < r[i].end ? z[j].end : r[i].end;

			a -= a % PAGE;
			if (b <= a || b <= at)
				continue;
			if ((a > at && !put_cut(out, cap, &k, at, a, 1)) ||
			    !put_cut(out, cap, &k, a, b, pieces))
				return 0;
			at = b;
		}
		if (j > 0 && z[j - 1].end > r[i].end)
			j--; /* the span goes on into the next range */
		if (at < r[i].end && !put_cut(out, cap, &k, at, r[i].end, 1))
			return 0;
	}
	return k;
}

bool damon_region_zoom(const struct damon_aggr_size *a, const struct pghotd_config *cfg,
		       const struct damon_region *r, bool warm)
{
	uint64_t size = r->end > r->start ? r->end - r->start : 0;

	return a->last && !warm && r->nr_accesses > 0 && !damon_region_hot(cfg, r) &&
	       size >= DAMON_OVERSIZED_MIN &&
	       size >= DAMON_ZOOM_TIMES * (a->last / DAMON_INIT_REGIONS_MAX);
}

uint32_t damon_zoom_pieces(size_t nzoom, size_t room)
{
	size_t fit;

	/* Beside each span at most one whole range, and the three ranges' last parts. */
	if (nzoom == 0 || room < 3 + 3 * nzoom)
		return 0;
	fit = (room - 3 - nzoom) / nzoom;
	return fit < DAMON_ZOOM_PIECES ? (uint32_t)fit : DAMON_ZOOM_PIECES;
}

/* When the span at i is forgotten. */
static uint64_t recent_forgotten_ms(const struct damon_recent *c, size_t i)
{
	return c->until_ms[i] + c->hold_ms[i];
}

/* Index of the first span overlapping [start, end) that is held (held) or remembered at
 * now_ms, or c->n. */
static size_t recent_find(const struct damon_recent *c, uint64_t start, uint64_t end,
			  uint64_t now_ms, bool held)
{
	size_t i = 0;

	while (i < c->n && !(now_ms < (held ? c->until_ms[i] : recent_forgotten_ms(c, i)) &&
			     damon_range_overlaps(&c->span[i], start, end)))
		i++;
	return i;
}

bool damon_recent_covers(const struct damon_recent *c, uint64_t start, uint64_t end,
			 uint64_t now_ms)
{
	return recent_find(c, start, end, now_ms, true) < c->n;
}

bool damon_recent_knows(const struct damon_recent *c, uint64_t start, uint64_t end, uint64_t now_ms)
{
	return recent_find(c, start, end, now_ms, false) < c->n;
}

void damon_recent_add(struct damon_recent *c, uint64_t start, uint64_t end, uint64_t now_ms)
{
	uint32_t hold = DAMON_RECUT_MIN_MS;
	size_t at, i = 0;

	while (i < c->n) /* the forgotten ones go */
		if (now_ms >= recent_forgotten_ms(c, i)) {
			c->n--;
			c->span[i] = c->span[c->n], c->until_ms[i] = c->until_ms[c->n];
			c->hold_ms[i] = c->hold_ms[c->n];
		} else {
			i++;
		}
	at = recent_find(c, start, end, now_ms, false);
	if (at < c->n) { /* cut again: held longer */
		hold = c->hold_ms[at] < DAMON_RECUT_MS / 2 ? 2 * c->hold_ms[at] : DAMON_RECUT_MS;
	} else if (c->n == DAMON_RECENT_MAX) { /* full: in place of the one forgotten first */
		at = 0;
		for (i = 1; i < c->n; i++)
			if (recent_forgotten_ms(c, i) < recent_forgotten_ms(c, at))
				at = i;
	} else {
		c->n++;
	}
	c->span[at] = (struct damon_range){start, end};
	c->until_ms[at] = now_ms + hold;
	c->hold_ms[at] = hold;
}
