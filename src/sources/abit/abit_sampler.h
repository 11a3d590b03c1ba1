/* abit_sampler: region sampling for one process, with its page_idle I/O. An abit_sampler
 * holds the process's abit_regions and the samples it marked; each sampling step reads back
 * the last step's samples, feeds abit_regions, and marks the next ones.
 *
 * Marking a page: its pagemap entry (is it present, which PFN), its node (the topology's
 * block map, or move_pages(2) without one), then one 8-byte bitmap write with only its bit set
 * (a 0 bit changes nothing). Reading back: its bitmap word. A bit that reads 1 is a page
 * page_idle tracks, idle since the mark. A bit that reads 0 is a page that was used, or one
 * page_idle does not track (off the LRU lists, freed since, or a THP tail, whose idle flag is
 * its head's): its kpageflags then tell which. About three 8-byte system calls per sampled
 * page, four for one found used.
 *
 * Precise marking, for processes with THPs: kpageflags read before the mark, so a THP tail is
 * marked through its head's bit (512 PFNs aligned) and a page it does not track is skipped,
 * and the read-back checks that pagemap still maps the marked PFN: five calls per page. An
 * abit_sampler turns precise when it meets a THP page and lazy again after 4 aggregation
 * intervals without one.
 *
 * All I/O through struct idle_io_ops. Any thread; the arrays belong to the caller. */
#ifndef PGHOTD_ABIT_SAMPLER_H
#define PGHOTD_ABIT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_regions.h"
#include "sources/abit/idle_bitmap.h"

struct topology;

/* A piece: 2 MiB of 4 KiB pages (PAGEMAP_PAGE_SIZE), address-aligned: one PMD, so a
 * PMD-mapped THP is one piece. The Accessed-bit source keeps its per-page state by piece and
 * reads a piece's pagemap in one pread; the samples' tail draws below use the same unit. */
#define ABIT_PIECE_PAGES 512

/* Piece ends (abit_regions.h's tail draws; nothing to do with a THP's tail pages): an 8-byte
 * pagemap read walks the page table from its page to the end of the PMD (the kernel fills a
 * whole PMD's buffer whatever the length asked), so a read near a PMD's end is the cheapest:
 * half of the samples land in the last 32 pages of a PMD, which nearly halves the average read
 * (docs/measurements.md, 2026-12-07). */
#define ABIT_SAMPLE_PIECE_END_PAGES 32

/* A marked sample's PFN with this bit: the idle bit read is its THP head's. */
#define ABIT_SAMPLE_TAIL (UINT64_C(1) << 63)
/* A marked sample's PFN with this bit: the page is on a fast node of io->fast_mask. */
#define ABIT_SAMPLE_FAST (UINT64_C(1) << 62)
/* A marked sample's PFN with this bit: marked lazily, its kpageflags not read. */
#define ABIT_SAMPLE_LAZY (UINT64_C(1) << 61)

struct abit_sample_io {
	const struct idle_io_ops *ops;
	int bitmap_fd, kpf_fd, pagemap_fd;
	pid_t pid;
	const struct topology *topo; /* NULL: no node is slow */
	bool *pfn_seen;		     /* set once a present page shows a PFN */
	uint64_t fast_mask;	     /* fast nodes watched for demotion (cold_list_wanted()) */
	bool precise;		     /* mark through kpageflags (see above); else lazily */
	size_t *thp;		     /* NULL, or counts the THP pages met */
};

/* Marks the slow pages among addr[0..n) idle, and the pages of the fast nodes of
 * io->fast_mask (demotion watches them). pfn[i] becomes the PFN marked for addr[i] (with
 * ABIT_SAMPLE_TAIL for a THP tail, ABIT_SAMPLE_FAST for a fast page, ABIT_SAMPLE_LAZY unless
 * io->precise), or 0 when the page is not marked (absent, on another node, not on an LRU list
 * when precise, or addr[i] is 0: skipped). Returns how
 * many were marked; -ESRCH when the process is gone, -EPERM when pagemap hides PFNs and none
 * was ever seen, other -errno. */
int abit_sample_mark(const struct abit_sample_io *io, const uint64_t *addr, size_t n,
		     uint64_t *pfn);

/* accessed[i] = pfn[i] was marked as a slow page, its idle bit was cleared, and: marked
 * precisely, addr[i] still maps it; lazily, its kpageflags say page_idle tracks it (an access
 * to a page that moved since the mark and whose PFN went to another tracked page is then
 * reported, a rare false access: it makes abit_watch watch the region, which finds nothing).
 * A fast page (ABIT_SAMPLE_FAST) is never reported accessed: when (precise) it is still mapped
 * and its bit still set (idle since the mark), its address goes to idle_fast (may be NULL),
 * *nidle how many. Returns how many were accessed; -ESRCH when the process is gone, other
 * -errno. */
int abit_sample_read(const struct abit_sample_io *io, const uint64_t *addr, const uint64_t *pfn,
		     size_t n, bool *accessed, uint64_t *idle_fast, size_t *nidle);

struct abit_sampler;

/* Regions from max_regions / 4 up to max_regions (16..65536), samples_per_aggr sampling steps
 * per aggregation interval, random numbers from abit_rng_splitmix64(rng_state), which must
 * outlive the sampler. -EINVAL, -ENOMEM; *out untouched on failure. */
int abit_sampler_new(uint32_t max_regions, uint32_t samples_per_aggr, uint64_t *rng_state,
		     struct abit_sampler **out);
void abit_sampler_free(struct abit_sampler *s);
uint32_t abit_sampler_max_regions(const struct abit_sampler *s);
/* The process's ranges now (abit_regions_update()); the step after reads nothing back. */
int abit_sampler_update(struct abit_sampler *s, const struct abit_range *r, size_t n);
/* Pages the next step samples (the regions now). */
size_t abit_sampler_count(const struct abit_sampler *s);
/* One sampling step. Returns 1 when it closed an aggregation interval (abit_sampler_hot() then
 * gives the new hot ranges), 0 otherwise, or the -errno of abit_sample_mark/read. */
int abit_sampler_step(struct abit_sampler *s, const struct abit_sample_io *io);
/* Pages the last step sampled (idle regions take turns: abit_regions_prepare()). */
size_t abit_sampler_taken(const struct abit_sampler *s);
/* Whether the next step marks precisely (a THP met lately). */
bool abit_sampler_precise(const struct abit_sampler *s);
/* Wakes the sampling of idle regions (abit_regions_wake()). */
void abit_sampler_wake(struct abit_sampler *s);
/* The last step's samples that were read back accessed (addresses, *n of them). Valid until
 * the next step. */
const uint64_t *abit_sampler_hits(const struct abit_sampler *s, size_t *n);
/* The last step's samples of pages on a node of io->fast_mask that stayed idle since the step
 * before (addresses, *n of them): where the process has pages a demotion could take. Valid
 * until the next step. */
const uint64_t *abit_sampler_fast(const struct abit_sampler *s, size_t *n);
/* The ranges of the last aggregation interval with at least min_accesses sampled accesses;
 * *n how many. Valid until the next step. */
const struct abit_range *abit_sampler_hot(struct abit_sampler *s, uint32_t min_accesses, size_t *n);

#endif
