/* pmu_filter: turns one decoded hardware sample (IBS or PEBS, live or replayed) into an
 * access event, or drops it, counting why.
 *
 * Dropped: samples that are neither a load nor a store, that carry no user virtual address,
 * that touch kernel memory; with a physical address, samples on pages the topology puts on a
 * fast node (a promotion target has nothing to gain); without one, samples whose data source
 * says a cache or local DRAM served them, or I/O memory. Everything else, including samples
 * whose tier cannot be told, goes on to the hot table.
 *
 * One filter per source thread (the counters are plain), the topology is read-only. */
#ifndef PGHOTD_PMU_FILTER_H
#define PGHOTD_PMU_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "table/access.h"
#include "base/stats.h"

struct topology;

enum sample_drop {
	SAMPLE_KEPT,
	SAMPLE_DROP_NOT_MEMOP,	 /* neither load nor store */
	SAMPLE_DROP_NO_ADDR,	 /* no valid linear address */
	SAMPLE_DROP_KERNEL,	 /* kernel address or kernel thread */
	SAMPLE_DROP_FAST_NODE,	 /* physical address on a fast node */
	SAMPLE_DROP_NEAR_SOURCE, /* no physical address; data source cache or local DRAM */
	SAMPLE_DROP_NOT_MEMORY,	 /* I/O or uncached memory */
	SAMPLE_DROP_MALFORMED,	 /* RAW payload unusable (counted by the source) */
	SAMPLE_DROP__COUNT
};

/* A sample reduced to what the filter needs; each source fills it from its own format. */
struct sample_in {
	pid_t pid, tid;
	bool addr_valid;
	uint64_t vaddr;
	uint64_t paddr; /* 0: unknown */
	int cpu;	/* -1: unknown */
	uint64_t time_ns;
	uint64_t data_src; /* union perf_mem_data_src; PERF_MEM_NA-like when unknown */
	enum access_kind kind;
};

struct pmu_filter {
	const struct topology *topo; /* NULL: no placement knowledge (every page counts slow) */
	struct stats *stats;	     /* may be NULL (tests, replay) */
	enum stat_source source;
	uint64_t kept;
	uint64_t dropped[SAMPLE_DROP__COUNT];
};

void pmu_filter_init(struct pmu_filter *f, const struct topology *topo, struct stats *stats,
		     enum stat_source source);
/* Fills *out and returns SAMPLE_KEPT, or returns the drop reason (counted in f->dropped and
 * in SS_SAMPLES_DROPPED) and leaves *out untouched. Source thread. */
enum sample_drop pmu_filter_apply(struct pmu_filter *f, const struct sample_in *in,
				  struct access_event *out);
/* Counts a drop decided by the source itself (e.g. SAMPLE_DROP_MALFORMED). */
void pmu_filter_count_drop(struct pmu_filter *f, enum sample_drop why);
const char *sample_drop_name(enum sample_drop d);

struct perf_sample;
/* Fills *in from a sample the kernel decoded itself (ADDR, PHYS_ADDR, DATA_SRC): the address
 * is valid when non-zero, the kind comes from the data source's mem_op, else `fallback` (the
 * kind of access the event counts). phys_ok false ignores PHYS_ADDR. */
void sample_in_from_perf(const struct perf_sample *s, enum access_kind fallback, bool phys_ok,
			 struct sample_in *in);

/* x86-64 user addresses have bit 63 clear, with 4- and 5-level paging alike. */
static inline bool sample_addr_is_user(uint64_t vaddr)
{
	return !(vaddr >> 63);
}

#endif
