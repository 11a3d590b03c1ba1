/* damon_heat: a DAMON region's access history across aggregations, for data used broadly
 * but not intensely.
 *
 * DAMON samples one page of a region per sampling interval and counts the samples whose page
 * was accessed within it. A page used once a second is found accessed in one sample of 200
 * at 5 ms: a few hundred MiB used once per pass (a graph search, a scan of an index) reads as
 * nr_accesses 0 or 1 of 20 in most aggregations, never at damon_feed's share of half. Worse,
 * DAMON merges neighbouring regions whose counts differ by a tenth of the largest count or less,
 * and the merged count is the size-weighted mean rounded down (mm/damon/core.c): a 1 beside a 0
 * reads 0, so much of that use never reaches the report. Over time, though, such a region is
 * found accessed about once per second of sampling whatever the intervals (more of it survives
 * the merges at the idle pace's longer aggregations), where memory never used shows nothing,
 * and a sweep that
 * reads each page once in 10 s one access every 10 s. So each region's history is kept: hits
 * (the aggregations' counts, at most one a second of aggregation: a sweep passing through a
 * region shows several samples at once) and exposure (the aggregations' time), decayed by
 * DAMON_HEAT_TAU_MS. DAMON splits and merges regions between aggregations: a region takes the
 * size-weighted mean of the histories of the previous aggregation's regions over its range
 * (each of its pages keeps the history of the regions that covered it), plus its own
 * aggregation. A region whose history has DAMON_HEAT_HITS hits at a rate of one per
 * DAMON_HEAT_PERIOD_MS of exposure (or two aggregation intervals, where those are longer) or
 * more is warm (damon_heat_warm()).
 *
 * What it cannot tell: a region one tenth of whose pages are used intensely shows the same
 * samples as one whose every page is used now and then (each sample finds its page used with
 * the same chance), so a hot set scattered page by page among cold pages reads as warm. The
 * feed promotes warm regions only while a fast node has room, and none beside a region hot by
 * its own samples (damon_heat_by_intense(), damon_feed.h).
 *
 * Pure. One thread (the DAMON source's). */
#ifndef PGHOTD_DAMON_HEAT_H
#define PGHOTD_DAMON_HEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/damon/damon_event.h"

/* A history halves in about 5.5 s (e^-1 in this): a range used once a second and seen in
 * every sample holds about 8 hits, one read once in 10 s (a cold sweep) about 1.4 just after
 * the sweep passed. */
#define DAMON_HEAT_TAU_MS 8000
/* Warm: at least one hit per this much exposure. A cold sweep of 10 s is a third of it. */
#define DAMON_HEAT_PERIOD_MS 3000
/* And at least this many hits: a sweep's history never holds 3 (above); a range used once a
 * second has them after about 3 s. */
#define DAMON_HEAT_HITS 3
/* Spans one process's history keeps at most (DAMON's max_nr_regions per target is commonly
 * 1,000); the regions past it carry no history. */
#define DAMON_HEAT_SPANS 4096

struct damon_heat_span {
	uint64_t start, end;
	float hits, expo_s; /* decayed accesses seen, and seconds of sampling */
	bool warm;	    /* damon_heat_warm() when noted */
	/* The part of [start, end) that regions warm in the aggregation before covered, from
	 * the first such byte to the last (both 0: none). */
	uint64_t warm_lo, warm_hi;
	bool intense;	   /* hot by its own samples when noted (damon_region_hot()) */
	bool near_intense; /* overlaps a span intense in the aggregation before */
};

/* One process's history. Zeroed: empty (damon_heat_free() releases it). */
struct damon_heat {
	pid_t pid;
	struct damon_heat_span *prev, *cur; /* the last whole aggregation's spans, this one's */
	size_t nprev, ncur, cap, at;	    /* at: prev's first span still to overlap */
	uint64_t prev_ns, cur_ns;	    /* when each aggregation's first region came */
};

/* Notes region r, recorded at time_ns, of an aggregation of aggr_us whose records come within
 * span_ns of its first (damon_aggr_span_ns()); a record past that, or one starting below the
 * last, opens the next aggregation. *out: the region's history with this aggregation in it,
 * whether it is warm, and where regions warm the aggregation before covered it: a region that
 * reaches from warm data into memory never used (DAMON merges the two, both reading about 0)
 * can read warm on the history of its warm part, so only that part is warm twice running.
 * -ENOMEM (out untouched) when the spans cannot grow; past DAMON_HEAT_SPANS the region's own
 * samples only. */
int damon_heat_note(struct damon_heat *h, const struct damon_region *r, uint64_t time_ns,
		    uint64_t span_ns, uint32_t aggr_us, bool intense, struct damon_heat_span *out);
/* Whether region r, warm, lies inside warm data: its neighbours on both sides, prev and next
 * (NULL: none in this drain), are warm, of the same target of the same kdamond, and touch it.
 * At the edge of warm data DAMON's regions straddle used and unused memory, differently at
 * each aggregation, so a warm region there may hold memory never used. */
bool damon_heat_inside(const struct damon_region *r, const struct damon_region *prev,
		       bool prev_warm, const struct damon_region *next, bool next_warm);
/* Whether the warmth of region r, noted as s, may be that of data used intensely beside it: r
 * overlaps a span intense in the aggregation before (s->near_intense), or its neighbour prev
 * or next (NULL: none in this drain), of the same target of the same kdamond and touching it,
 * is intense now. A region holding the edge of a hot unit, or the cold pages DAMON's regions
 * shared with one lately, reads warm (its history carries the unit's hits, or its few hot pages
 * show in some samples) the way data used broadly does; broad data is almost never intense
 * itself (its use shows in few of an aggregation's samples), so beside intense data warmth is
 * no evidence (the cuts find the hot part, damon_regions.h). */
bool damon_heat_by_intense(const struct damon_heat_span *s, const struct damon_region *r,
			   const struct damon_region *prev, bool prev_intense,
			   const struct damon_region *next, bool next_intense);
/* Whether the history shows broad use (above), at aggregations of aggr_us. */
bool damon_heat_warm(const struct damon_heat_span *s, uint32_t aggr_us);
void damon_heat_free(struct damon_heat *h);

/* The histories of a source's processes. */
struct damon_heats {
	struct damon_heat *h;
	size_t n;
};

/* pid's history, a new empty one when it had none; NULL on ENOMEM. */
struct damon_heat *damon_heats_of(struct damon_heats *hs, pid_t pid);
/* Forgets the processes not among pids[0..n). */
void damon_heats_keep(struct damon_heats *hs, const pid_t *pids, size_t n);
void damon_heats_free(struct damon_heats *hs);

#endif
