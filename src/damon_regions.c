/* damon_regions: a new target's initial regions (see damon_regions.h). */
#include "config.h"
#include "damon_event.h"
#include "damon_regions.h"

#define PAGE UINT64_C(4096)

size_t damon_three_ranges(const struct abit_vma *v, size_t n, struct damon_range out[3])
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
		uint64_t step = len / pieces;

		step -= step % PAGE;
		if (k + pieces > cap)
			break;
		for (uint64_t j = 0; j < pieces; j++)
			out[k++] = (struct damon_range){
			    r[i].start + j * step,
			    j + 1 == pieces ? r[i].end : r[i].start + (j + 1) * step};
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
		a->end_ns = time_ns + (uint64_t)cfg->sources.damon.aggr_us * 1000 / 2;
	}
	a->sum += size;
	limit = a->last / (cfg->sources.damon.min_regions ? cfg->sources.damon.min_regions : 1);
	return a->last && size >= DAMON_OVERSIZED_MIN && size > DAMON_OVERSIZED_TIMES * limit;
}
