/* abit_regions: region sampling for the Accessed-bit source, DAMON-style, as pure logic.
 *
 * One object per process covers its slow-tier address ranges with at most max_regions
 * regions. Each sampling interval the caller asks which page to sample in each region (one
 * page per region, drawn by the injected RNG), marks those pages idle, and at the next
 * interval reports which of them were accessed. Every samples_per_aggr sampling intervals (an
 * aggregation interval) the per-region access counts are snapshotted for the hot and idle
 * queries, adjacent regions whose counts differ by at most a threshold are merged (their
 * count the size-weighted mean; no region grows past span / min_regions), and, while the
 * count is at most max_regions / 2, every region is split in 2 (3 when the count did not
 * change since the last split and is under max_regions / 3) at random points 10%..90% in.
 * Cost per sampling interval and memory follow the number of regions, never the size.
 *
 * The bound for a hot page (see abit_regions_miss_bound()): no region is larger than
 * L = ceil(span_pages / min_regions) pages, so each sample of a region finds a band of w
 * pages accessed in every sampling interval with probability at least w / L (w / (2 L) with
 * tail draws, below), independently of the others; n samples all miss it with probability
 * at most exp(-n * w / L) (exp(-n * w / (2 L))). A region
 * that looks idle (its band not found yet) is sampled in turns (abit_regions_sample_every():
 * every interval for 2 aggregation intervals, every 2nd for 2, every 4th for 2, then every
 * ABIT_REGIONS_MAX_SKIP-th), so the band is reported by abit_regions_hot(rs, 1, ...) within
 * the k aggregation intervals whose samples reach n, except with probability at most
 * exp(-n * w / L). max_regions does not enter: it caps the cost; the size limit from
 * min_regions is what keeps the sampling dense. (It holds because max_regions >=
 * 4 * min_regions leaves room for regions of at most L over at most max_regions / 2 coalesced
 * ranges.) The turns are the price of sampling cold memory at an eighth of the cost, as the
 * full scan backs off from cold regions.
 *
 * Where a sample lands (tail_pages > 0): half of the draws are uniform over the region, half
 * uniform over its pages that lie in the last tail_pages of their piece (an address-aligned
 * run of piece_pages pages; uniform over the region when it holds none). The caller reads a
 * sample's pagemap entry, and the kernel walks the page table from the page to the end of
 * its PMD whatever the read's length: a draw near a piece's end costs a short walk. A band of
 * w pages is still hit with probability at least w / (2 L) per sample, and a band of whole
 * pieces, whose runs of c pages each hold tail_pages tail pages, with about w / L as before
 * (abit_regions_miss_bound() has the exact figure).
 *
 * No I/O, no clock: time is the sequence of calls. Memory is fixed at abit_regions_new()
 * (two arrays of max_regions entries) apart from a transient array during an update.
 * Not thread-safe: one object belongs to one thread. */
#ifndef PGHOTD_ABIT_REGIONS_H
#define PGHOTD_ABIT_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* [start, end), page-aligned. */
struct abit_range {
	uint64_t start, end;
};

/* Uniform 64-bit random numbers. */
struct abit_rng {
	uint64_t (*next)(void *ctx);
	void *ctx;
};

/* A splitmix64 generator for abit_rng: ctx points to a uint64_t seed/state. */
uint64_t abit_rng_splitmix64(void *ctx);

struct abit_regions_params {
	uint32_t min_regions;	   /* >= 1 */
	uint32_t max_regions;	   /* >= 4 * min_regions */
	uint32_t samples_per_aggr; /* sampling intervals per aggregation interval, 1..65535 */
	uint64_t page_size;	   /* power of two */
	/* Tail draws (see "Where a sample lands" above): pieces of piece_pages pages, aligned
	 * in the address space, whose last tail_pages pages take half of the draws; powers of
	 * two, tail_pages < piece_pages. tail_pages 0: every draw uniform over the region. */
	uint32_t piece_pages, tail_pages;
};

struct abit_region_info {
	uint64_t start, end;
	uint32_t nr_accesses; /* samples found accessed (this interval; or the snapshot's) */
	uint32_t idle_aggrs;  /* aggregation intervals in a row without an access */
};

struct abit_regions;

/* -EINVAL for parameters out of range, -ENOMEM; *out untouched on failure. */
int abit_regions_new(const struct abit_regions_params *p, struct abit_rng rng,
		     struct abit_regions **out);
void abit_regions_free(struct abit_regions *rs);

/* The ranges to cover now (sorted, disjoint, page-aligned, non-empty; n may be 0). Regions
 * follow them: parts of regions outside every range are cut, new ranges get fresh regions,
 * regions that still cover memory keep their counts. More than max_regions / 2 ranges are
 * coalesced across their smallest gaps (a region may then span a hole, whose samples read
 * as not accessed). Drops a pending sample set. -EINVAL (state unchanged), -ENOMEM. */
int abit_regions_update(struct abit_regions *rs, const struct abit_range *ranges, size_t n);

/* Most sampling intervals between two samples of a long idle region. */
#define ABIT_REGIONS_MAX_SKIP 8

/* Sampling intervals between samples of a region idle for idle_aggrs aggregation intervals:
 * 1 for 0-1, doubling every two more, up to ABIT_REGIONS_MAX_SKIP (from 6 on). */
uint32_t abit_regions_sample_every(uint32_t idle_aggrs);

/* Starts a sampling interval: writes the page to sample of each region into addr (region
 * order; 0 for a region this interval skips: an idle region is sampled every
 * abit_regions_sample_every() intervals, in turns, and its skipped samples count as not
 * accessed) and returns how many entries, or -ENOBUFS when cap is too small. */
int abit_regions_prepare(struct abit_regions *rs, uint64_t *addr, size_t cap);

/* Every region counts as just accessed for the back-off: sampled every interval again, as
 * when pages arrived on the slow tier (the idle regions may now hold them). */
void abit_regions_wake(struct abit_regions *rs);

/* Ends the sampling interval: accessed[i] for addr[i] of the last prepare. Returns 1 when it
 * closed an aggregation interval (snapshot taken, regions merged and split), 0 otherwise;
 * -ESTALE without a pending prepare (none, or an update came between), -EINVAL when n is
 * not the prepared count. */
int abit_regions_check(struct abit_regions *rs, const bool *accessed, size_t n);

/* From the last aggregation interval's snapshot: the ranges whose regions counted at least
 * min_accesses (hot), or had at least min_aggrs access-free aggregation intervals in a row
 * (idle), adjacent ones joined. Writes up to cap, returns how many there are. */
size_t abit_regions_hot(const struct abit_regions *rs, uint32_t min_accesses,
			struct abit_range *out, size_t cap);
size_t abit_regions_idle(const struct abit_regions *rs, uint32_t min_aggrs, struct abit_range *out,
			 size_t cap);

/* Introspection (tests, benchmark): live regions, up to cap written, count returned. */
size_t abit_regions_get(const struct abit_regions *rs, struct abit_region_info *out, size_t cap);
size_t abit_regions_count(const struct abit_regions *rs);
/* Regions right after the last merge (before its split). */
size_t abit_regions_count_merged(const struct abit_regions *rs);
/* Largest region allowed: span / min_regions rounded up to a page. */
uint64_t abit_regions_size_limit(const struct abit_regions *rs);

/* Aggregation intervals after which a band of band_pages pages, accessed in every sampling
 * interval, has been reported hot (count >= 1) except with probability at most exp(-efolds):
 * the fewest whose samples, in the turns of a region that looks idle, reach
 * ceil(efolds * L / band_pages) for L = ceil(span_pages / min_regions). With tail draws over
 * pieces of piece_pages pages (0: none), ceil(efolds / p) for the per-sample chance
 * p = band_pages / (2 L) + floor(band_pages / piece_pages) / (2 (ceil(L / piece_pages) + 1)):
 * about twice as many samples for a band smaller than a piece, about as many for whole
 * pieces in regions of many pieces. */
uint64_t abit_regions_miss_bound(uint64_t span_pages, uint64_t band_pages, uint32_t min_regions,
				 uint32_t samples_per_aggr, uint32_t efolds, uint32_t piece_pages);

#endif
