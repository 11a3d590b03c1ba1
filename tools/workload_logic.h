/* workload_logic: the pure parts of tools/workload.c (random numbers, hot set choice, Zipf
 * sampling, placement counting and retries), apart so tests/test_workload drives them without
 * memory placement or syscalls (move_pages(2) comes in as an ops table). */
#ifndef PGHOTD_WORKLOAD_LOGIC_H
#define PGHOTD_WORKLOAD_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* splitmix64 step: seedable, good enough to pick pages. Inline, as wl_hot_unit below: the
 * access loop calls both per access, and under the slow tier's plugin every call's stack
 * traffic is a memory access that costs as much as the one the loop is for. */
static inline uint64_t wl_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}
/* Uniform in [0, 1). */
double wl_rand_unit(uint64_t *state);
/* a[0..n) becomes a seeded random permutation of 0..n-1 (Fisher-Yates). */
void wl_shuffle(size_t *a, size_t n, uint64_t *state);
/* cdf[0..n) becomes the cumulative Zipf weights 1/rank^s, normalised to end at 1; n >= 1. */
void wl_zipf_build(double *cdf, size_t n, double s);
/* The first rank whose cumulative weight reaches u, u in [0, 1]. */
size_t wl_zipf_rank(const double *cdf, size_t n, double u);
/* Unit i (0 <= i < nhot) of phase p's hot set: order[p*nhot + i], wrapping, so the phases'
 * hot sets are disjoint while 2*nhot <= nunits. */
static inline size_t wl_hot_unit(const size_t *order, size_t nunits, size_t nhot, int phase,
				 size_t i)
{
	return order[((size_t)phase * nhot + i) % nunits];
}
/* Of the n pages whose move_pages(2) status is given, how many hot and how many cold are on
 * node. */
void wl_count(const int *status, const bool *hot_page, size_t n, int node, size_t *hot,
	      size_t *cold);

/* Of the n pages, those on node `to` now (status[], a move_pages(2) query) that were on the
 * slow node when placement ended (placed[i]), hot and cold apart: what movers took there
 * since, leaving out the pages placement never got onto the slow node. */
void wl_count_moved(const int *status, const bool *placed, const bool *hot_page, size_t n, int to,
		    size_t *hot, size_t *cold);

/* Placement's retries. A page off the slow node at the workload's first look (the kernel found
 * no room there, or a mover took it before the look) would later read as a mover's work, so it
 * is moved back. The ops are move_pages(2) (tests pass fakes), each returning 0 or negative
 * errno: query fills status[0..n) for addrs[0..n), move asks for addrs[0..n) on node. */
struct wl_place_ops {
	int (*query)(void *ctx, size_t n, void **addrs, int *status);
	int (*move)(void *ctx, size_t n, void **addrs, int node);
	void *ctx;
};

/* Moves the pages of addrs[0..n) that status[] (the last query) shows off node back to it, then
 * queries every page again, at most tries times; off[] (n entries) is scratch. *moved gets the
 * pages that reached node that way (net of any that left meanwhile). Returns the pages still
 * off node (0: all placed), or negative errno when a query fails (*moved untouched, status[]
 * partly rewritten). A move that fails ends the retries: its pages count as still off. */
long wl_place_retry(const struct wl_place_ops *ops, void **addrs, int *status, size_t n, int node,
		    int tries, void **off, size_t *moved);

/* Whether the cold sweep is due at t seconds into a run of duration seconds: next is the time
 * of the next sweep (period > 0; none when period <= 0). Not once the run is over: a sweep at
 * its very end, right before the end check reads every page, would be two reads of each cold
 * page within a second, after the last placement sample. */
bool wl_sweep_due(double t, double next, double period, double duration);

/* Page moves seen between placement samples: a page's node in this sample against the last
 * (last[i] < 0: none known yet). */
struct wl_moves {
	size_t moved;	    /* pages seen moving at least once */
	size_t total;	    /* moves seen, all pages */
	unsigned max;	    /* moves seen of the page that moved most */
	size_t hot_demoted; /* hot pages seen leaving the fast node */
};

/* Takes one sample: status[0..n) (move_pages(2) query: node, or negative errno for a page not
 * present, which keeps its last node) against last[], which it updates; counts in moves[]
 * (saturating at 255) and m. A hot page (hot_page[i]) leaving node fast counts as demoted. */
void wl_track(const int *status, const bool *hot_page, size_t n, int fast, int8_t *last,
	      uint8_t *moves, struct wl_moves *m);

/* The end check: every page carries a word of its own (WL_STAMP_OFFSET bytes in, the last 8
 * bytes of the 4 KiB page: the accesses increment the first word of a cache line and the
 * sweeps only read, so nothing but a lost or corrupted page changes it). wl_stamp() writes
 * the words of pages[0..n) (page_size bytes apart) for seed; wl_verify() reads them back and
 * returns how many differ, the first at *first (its expected and read words in *want and
 * *got), left untouched when none does. */
#define WL_STAMP_OFFSET (4096 - 8)
uint64_t wl_stamp_word(uint64_t seed, size_t page);
void wl_stamp(unsigned char *base, size_t n, size_t page_size, uint64_t seed);
/* The stamp of page alone (wl_stamp() is this for pages 0..n). */
void wl_stamp_page(unsigned char *base, size_t page_size, size_t page, uint64_t seed);
size_t wl_verify(const unsigned char *base, size_t n, size_t page_size, uint64_t seed,
		 size_t *first, uint64_t *want, uint64_t *got);

#endif
