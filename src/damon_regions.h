/* damon_regions: the regions pghotd gives a process it adds to a running kdamond.
 *
 * DAMON cuts each target into sources.damon.min_regions regions when its kdamond starts, but a
 * target committed to a running kdamond starts with the three regions DAMON's next update
 * finds (the address space less its two largest gaps), and only DAMON's random splits, two or
 * three ways once per aggregation, bring them down to the process's hot data (seven rounds
 * from 256 MiB to 2 MiB hot units: about 3 s at aggregations of 400 ms in scenario-fulldram on
 * Debian's kernel, 2026-12-06), where a start cuts them at once. So the source computes the
 * start's cut itself from the process's maps and writes it with the commit: the same three
 * ranges (from every VMA, as DAMON's), cut into pieces of one size so that there are about `want`
 * of them. DAMON's update later stretches the outer edges to its own three regions and fills
 * any hole, keeping the pieces. Pure. */
#ifndef PGHOTD_DAMON_REGIONS_H
#define PGHOTD_DAMON_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abit_vmas.h"

/* A region this many times DAMON's merge limit (the regions' total size / min_regions) did
 * not come from merges: DAMON filled a hole or stretched an edge with it when the process
 * mapped more after its cut (at least DAMON_OVERSIZED_MIN bytes). Its target is cut again,
 * at most every DAMON_RECUT_MS. */
#define DAMON_OVERSIZED_TIMES 16
#define DAMON_OVERSIZED_MIN   (UINT64_C(8) << 20)
#define DAMON_RECUT_MS	      10000

/* A process with more VMAs than this is not cut (reading its maps would hold the source's
 * thread: 65,000 lines take seconds in the emulator): it starts with DAMON's three regions. */
#define DAMON_CUT_VMAS_MAX 4096

/* At most this many regions written for the targets of one commit (each costs sysfs writes:
 * a process that keeps starting large programs must not make the source's work follow it). */
#define DAMON_INIT_REGIONS_MAX 1024

struct damon_range {
	uint64_t start, end; /* [start, end), page aligned */
};

/* The three ranges of the VMAs v[0..n) (address order, not overlapping): from the first start
 * to the last end, less the two largest gaps between VMAs (fewer ranges when there are fewer
 * gaps). Returns the number written to out (0 for no VMA). */
size_t damon_three_ranges(const struct abit_vma *v, size_t n, struct damon_range out[3]);
/* The ranges r[0..n) cut into pieces of total / want bytes (page aligned, one page at least),
 * each range into at least one piece, written to out (at most cap). Returns the pieces
 * written; ranges that do not fit in cap are left out whole. */
size_t damon_cut_ranges(const struct damon_range *r, size_t n, uint32_t want,
			struct damon_range *out, size_t cap);

/* The total size of the last whole aggregation's regions, summed record by record (one
 * aggregation's records come within half an interval of each other, maybe over several
 * drains). Zeroed: nothing seen yet. */
struct damon_aggr_size {
	uint64_t sum, last; /* this aggregation's so far; the last whole one's */
	uint64_t end_ns;    /* records before this belong to this aggregation */
};

struct pghotd_config;
struct damon_region;

/* Counts the region recorded at time_ns; true when it is oversized against the last whole
 * aggregation (false until one was seen). Pure. */
bool damon_aggr_size_add(struct damon_aggr_size *a, const struct pghotd_config *cfg,
			 const struct damon_region *r, uint64_t time_ns);

#endif
