/* abit_sample: region sampling for one process, with its page_idle I/O. An abit_sampler
 * holds the process's abit_regions and the samples it marked; each sampling step reads back
 * the last step's samples, feeds abit_regions, and marks the next ones.
 *
 * Marking a page: its pagemap entry (is it present, which PFN), its node (the topology's
 * block map, or move_pages(2) without one), its kpageflags (only LRU pages and THP heads have
 * an idle flag of their own; a THP tail's is its head's, 512 PFNs aligned), then one 8-byte
 * bitmap write with only its bit set (a 0 bit changes nothing). Reading back: its pagemap
 * entry again, so a page that moved or went away since the mark is not reported, and its
 * bitmap word. About five 8-byte system calls per sampled slow page, one per other page.
 *
 * All I/O through struct idle_io_ops. Any thread; the arrays belong to the caller. */
#ifndef PGHOTD_ABIT_SAMPLE_H
#define PGHOTD_ABIT_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "abit_regions.h"
#include "idle_bitmap.h"

struct topology;

/* A marked sample's PFN with this bit: the idle bit read is its THP head's. */
#define ABIT_SAMPLE_TAIL (UINT64_C(1) << 63)
/* A marked sample's PFN with this bit: the page is on a fast node of io->fast_mask. */
#define ABIT_SAMPLE_FAST (UINT64_C(1) << 62)

struct abit_sample_io {
	const struct idle_io_ops *ops;
	int bitmap_fd, kpf_fd, pagemap_fd;
	pid_t pid;
	const struct topology *topo; /* NULL: no node is slow */
	bool *pfn_seen;		     /* set once a present page shows a PFN */
	uint64_t fast_mask;	     /* fast nodes watched for demotion (cold_list_wanted()) */
};

/* Marks the slow pages among addr[0..n) idle, and the pages of the fast nodes of
 * io->fast_mask (demotion watches them). pfn[i] becomes the PFN marked for addr[i] (with
 * ABIT_SAMPLE_TAIL for a THP tail, ABIT_SAMPLE_FAST for a fast page), or 0 when the page is not
 * marked (absent, on another node, not on an LRU list, or addr[i] is 0: skipped). Returns how
 * many were marked; -ESRCH when the process is gone, -EPERM when pagemap hides PFNs and none
 * was ever seen, other -errno. */
int abit_sample_mark(const struct abit_sample_io *io, const uint64_t *addr, size_t n,
		     uint64_t *pfn);

/* accessed[i] = pfn[i] was marked as a slow page, addr[i] still maps it and its idle bit was
 * cleared. A fast page (ABIT_SAMPLE_FAST) is never reported accessed: when it is still mapped
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
