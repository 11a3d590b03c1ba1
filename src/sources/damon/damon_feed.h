/* damon_feed: what one aggregated DAMON region of a process means to the mover.
 *
 * A region is hot when at least 1/DAMON_HOT_SHARE (half) of the aggregation's samples found
 * it accessed: its present pages on slow nodes go to the sink as access events, once per
 * aggregation, so the hot table's threshold and window decide as they do for the other
 * sources (a region hot in two aggregations within promotion.window_ms is promoted at the
 * shipped threshold of 2). A full region (every sample of the aggregation found it accessed)
 * is first evidence: its pages go with the feed's first_thr, so while a fast node has room
 * one aggregation makes them hot (evidence.h). A region no sample found accessed for the demotion
 * idle time (age x aggregation interval) is cold: on a cold pass, its present, exclusively mapped
 * pages on the fast nodes the cold list wants go to the cold list, idle since the region's age
 * began. A region whose history shows broad use (damon_heat.h: warm) is never a cold
 * candidate, and its part that was warm in the aggregation before too (damon_heat_note()) is
 * hot while a fast node has room (evidence_fast_room()), the region is not beside data hot by
 * its samples (damon_heat_by_intense(): the edge of a hot unit, whose cold pages read warm
 * from it), and the region's own samples show
 * little use (fewer than DAMON_HOT_MIN: more, and it is used intensely in part, which the cuts
 * isolate; moved whole it took the cold rest of 2 MiB hot units' regions), in one
 * aggregation a second (a warm pass, DAMON_WARM_PASS_MS). A warm region between warm
 * neighbours (warm_inside: inside data used broadly) is first evidence, its pages promoted at
 * the first such pass; one at the edge of warm data, which DAMON's regions there (split and
 * merged at random between aggregations) cover now and then, together with memory never used,
 * goes at the threshold: at the shipped 2 its pages must be covered at two passes a second
 * apart. The pagemap reads of data used broadly (hundreds of MiB) come once a second, not at
 * every aggregation. Everything else is
 * left alone, and the pages of a region are read only when it is hot or a cold candidate, so the
 * cost follows the hot and cold regions, not the memory.
 *
 * Why a share and not any access: DAMON samples one page per region per sampling interval,
 * and a region whose pages are read once in a while (a cold sweep) shows an access now and
 * then; a region the process really works in shows them in most samples. Half, not less: a
 * region promoted whole is at least half hot, so the cold pages moved with a hot set are at
 * most as many as its pages (a quarter let several times more cold pages through:
 * docs/measurements.md, 2026-12-07). And at least DAMON_HOT_MIN samples (all, with fewer in
 * an aggregation): with four samples, half is two, which a region whose pages are a tenth hot
 * shows in one aggregation of 19 (a binomial tail), so one such region in 16 would reach the
 * threshold's two within a window of eight aggregations, moving its cold pages with it; three
 * of four it shows in one aggregation of 270, and one region in 2,600 is promoted so. A hot
 * set scattered page by page among cold pages looks like neither: DAMON's regions cannot
 * tell its pages apart (page_idle, page by page, can).
 *
 * Pure but for the pagemap reads, which go through the caller's function. One thread. */
#ifndef PGHOTD_DAMON_FEED_H
#define PGHOTD_DAMON_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "table/access.h"
#include "base/config.h"
#include "sources/damon/damon_event.h"

#define DAMON_HOT_SHARE	 2   /* hot: nr_accesses >= samples per aggregation / this */
#define DAMON_HOT_MIN	 3   /* and at least this many (all of fewer) */
#define DAMON_FEED_PAGES 512 /* pagemap entries per read */

struct cold_list;
struct stats;

struct damon_feed {
	const struct pghotd_config *cfg; /* topology, intervals, demotion idle time */
	/* Reads n pagemap entries of the region's process from vaddr: entries read, or
	 * -errno (the process is gone: the region is dropped). */
	int (*pagemap)(void *ctx, uint64_t vaddr, uint64_t *ent, size_t n);
	void *ctx;
	struct access_sink sink;
	struct cold_list *cold;	   /* NULL: no cold pages are looked for */
	uint64_t want;		   /* fast nodes the cold list wants (cold_list_wanted()) */
	bool cold_pass;		   /* look for cold pages in this aggregation */
	bool warm;		   /* the region's history shows broad use (damon_heat_warm()) */
	uint64_t warm_lo, warm_hi; /* and its part warm twice running (damon_heat_note()) */
	bool warm_inside;	   /* warm, and its neighbours on both sides too */
	bool by_intense;	   /* beside intense data (damon_heat_by_intense()) */
	bool warm_pass;		   /* the region is in a warm pass (damon_warm_pass_due()) */
	bool room;		   /* a fast node has room (evidence_fast_room()) */
	uint64_t now_ns;	   /* CLOCK_MONOTONIC */
	/* The threshold a full region's pages are delivered with (evidence_first_threshold(),
	 * read once per drain); 0: promotion.threshold as usual. */
	unsigned first_thr;
	struct stats *stats; /* NULL: not counted */
	/* NULL, or: counts the pages fed from slow nodes of regions hot by their samples (not
	 * warm ones: data used broadly is watched at the idle pace, whose longer sampling
	 * interval sees more of its use, damon_pace.h) */
	uint64_t *slow_hot;
};

/* The process a region belongs to. */
struct damon_feed_proc {
	pid_t pid;
	uint32_t proc; /* procs handle for cold pages (0: none) */
	int cpu, node; /* where it last ran, -1 unknown: the events' accessing CPU */
};

/* Pure: how long after an aggregation's first record its last one may come (DAMON writes
 * one aggregation's records at once): half an aggregation interval. */
uint64_t damon_aggr_span_ns(const struct pghotd_config *cfg);

/* A cold pass (cold pages looked for in every region) covers one whole aggregation, whose
 * records may come over several drains: the ring wakes the reader at a quarter full, and an
 * aggregation of a few thousand regions fills it more than once. From the first record after
 * damon_cold_pass_start() until damon_aggr_span_ns() later, and no further. Pure; zeroed, no pass
 * is under way. */
struct damon_cold_pass {
	uint64_t end_ns;	   /* records before this belong to the pass */
	bool due;		   /* started; the next record opens it */
	uint64_t next_ms, last_ms; /* the next pass by the clock, the last one's start */
	uint32_t epoch;		   /* the cold list's epoch at the last pass */
};

void damon_cold_pass_start(struct damon_cold_pass *c);
/* Starts a pass (damon_cold_pass_start()) when one is due at now_ms, and says whether it did:
 * a quarter of the idle time after the last (offers stay trusted that long), at once when the
 * mover asked for more (epoch, cold_list_epoch(), moved on), and half the exchange age after the
 * last while a node is watched (want) and the cold list holds fewer than COLD_LIST_LOW
 * offers (offers): data that settled since the last pass (a process done with its buffers)
 * is on offer before hot pages wait for room, not up to a quarter of the idle time later. */
bool damon_cold_pass_due(struct damon_cold_pass *c, const struct pghotd_config *cfg,
			 uint64_t now_ms, uint32_t epoch, uint64_t want, size_t offers);
/* Warm passes: one aggregation a second (damon_cold_pass_covers() tells the records in it). */
#define DAMON_WARM_PASS_MS 1000
/* Starts a warm pass when the last began DAMON_WARM_PASS_MS before now_ms or longer; whether
 * it did. */
bool damon_warm_pass_due(struct damon_cold_pass *c, uint64_t now_ms);
/* Whether the region recorded at time_ns (CLOCK_MONOTONIC) is in the pass (cold or warm). */
bool damon_cold_pass_covers(struct damon_cold_pass *c, const struct pghotd_config *cfg,
			    uint64_t time_ns);

/* Pure: the region is hot under cfg. */
bool damon_region_hot(const struct pghotd_config *cfg, const struct damon_region *r);
/* Pure: the region is a cold candidate under cfg (no access for the exchange age,
 * config_demotion_exchange_ms()). */
bool damon_region_cold(const struct pghotd_config *cfg, const struct damon_region *r);
/* Whether any of `probes` pages spread evenly through the region (its first among them) is
 * present on a slow node: a region to cut finer is work for the source only then (the
 * workload's own bookkeeping on a fast node is warm too). One pagemap entry read a probe. */
bool damon_feed_probe_slow(const struct damon_feed *f, const struct damon_region *r,
			   unsigned probes);
/* Feeds one region (hot pages to the sink, cold pages to the cold list), reading at most
 * max_pages pagemap entries. Returns the pagemap entries read (0 for a region neither hot nor
 * cold), or -errno of a failed read. */
long damon_feed_region(const struct damon_feed *f, const struct damon_feed_proc *p,
		       const struct damon_region *r, uint64_t max_pages);

#endif
