/* damon_regions: the regions pghotd gives a process it adds to a running kdamond, and the
 * finer cut of a region DAMON is slow to split.
 *
 * DAMON cuts each target into sources.damon.min_regions regions when its kdamond starts, but a
 * target committed to a running kdamond starts with the three regions DAMON's next update
 * finds (the address space less its two largest gaps), and only DAMON's random splits, two or
 * three ways once per aggregation, bring them down to the process's hot data, several
 * aggregations later (seconds), where a start cuts them at once. So the source cuts the
 * process itself from its maps and writes the cut with the commit: the same three ranges
 * (from every VMA, as DAMON's), cut into pieces of one size so that there are about `want` of
 * them (max_regions: finer than a start's min_regions, which DAMON merges back where the
 * pieces are alike). DAMON's update later stretches the outer edges to its own three regions
 * and fills any hole, keeping the pieces.
 *
 * Later, a region that is oversized (damon_aggr_size_add()) or used in part and large
 * (damon_region_zoom()) has its span remembered, and the process is cut again at once: those
 * spans into DAMON_ZOOM_PIECES pieces each, the rest of its ranges whole, which DAMON's commit
 * keeps as it has them (damon_cut_spans()). A span is not cut again within DAMON_RECUT_MS
 * of its cut (struct damon_recent), a process not within DAMON_RECUT_GAP_MS of its last cut
 * (the first right after the start's cut, which is coarse by design: min_regions pieces,
 * 41 MiB in 4 GiB). Pure. */
#ifndef PGHOTD_DAMON_REGIONS_H
#define PGHOTD_DAMON_REGIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/vmas.h"

/* A region this many times DAMON's merge limit (the regions' total size / min_regions) did
 * not come from merges: DAMON filled a hole or stretched an edge with it when the process
 * mapped more after its cut (at least DAMON_OVERSIZED_MIN bytes). Such a region, and a warm
 * one DAMON_ZOOM_TIMES a 1024th of the memory, are cut. */
#define DAMON_OVERSIZED_TIMES 16
#define DAMON_OVERSIZED_MIN   (UINT64_C(8) << 20)
/* A hot unit not warm at a process's cut waits for the next, so a span cut once is held
 * briefly, one cut over and over longer, and a process only for a commit and a drain: the
 * shortest holds that keep the commits rare (docs/measurements.md, 2026-12-07). */
#define DAMON_RECUT_MIN_MS 500	/* a span cut once is not cut again before (damon_recent) */
#define DAMON_RECUT_MS	   3000 /* a span cut over and over: at most this often */
#define DAMON_RECUT_GAP_MS 250	/* a process is not cut again before: a commit and a drain */
#define DAMON_RECENT_MAX   64	/* spans of a process remembered as cut */
#define DAMON_ZOOM_TIMES   2
#define DAMON_ZOOM_PIECES  64
#define DAMON_ZOOM_MAX	   16 /* spans of a target remembered for its next cut */

/* A process with more VMAs than this is not cut (reading its maps would hold the source's
 * thread: 65,000 lines take seconds in the emulator): it starts with DAMON's three regions. */
#define DAMON_CUT_VMAS_MAX 4096

/* At most this many regions written for the targets of one commit (each costs sysfs writes:
 * a process that keeps starting large programs must not make the source's work follow it). */
#define DAMON_INIT_REGIONS_MAX 1024

struct damon_range {
	uint64_t start, end; /* [start, end), page aligned */
};

/* Whether r and [start, end) overlap. */
static inline bool damon_range_overlaps(const struct damon_range *r, uint64_t start, uint64_t end)
{
	return start < r->end && r->start < end;
}

/* The spans of a process cut lately, not cut again yet: DAMON merges the cold pieces of a cut
 * back, and a span that stays warm (a hot unit's cold neighbours) would be cut over and over,
 * each commit holding the source's thread for a tenth of a second or more. So a span is held
 * after its cut, DAMON_RECUT_MIN_MS at first and twice as long each time it is cut again
 * within its hold after the last one ran out, up to DAMON_RECUT_MS; one not cut again in that
 * time is forgotten. A span cut once, as a process fills its memory (a warm sweep through
 * it) or as its data turns hot, is free again soon: a long hold keeps a hot unit that comes
 * into such a span out of reach for the whole hold. A span elsewhere, new hot data, is cut
 * DAMON_RECUT_GAP_MS after the last cut. Pure. */
struct damon_recent {
	struct damon_range span[DAMON_RECENT_MAX];
	uint64_t until_ms[DAMON_RECENT_MAX]; /* not cut again before */
	uint32_t hold_ms[DAMON_RECENT_MAX];  /* the last hold: forgotten at until_ms + this */
	size_t n;
};

/* True when [start, end) overlaps a span held at now_ms. */
bool damon_recent_covers(const struct damon_recent *c, uint64_t start, uint64_t end,
			 uint64_t now_ms);
/* True when [start, end) overlaps a span remembered at now_ms, held or not (not forgotten). */
bool damon_recent_knows(const struct damon_recent *c, uint64_t start, uint64_t end,
			uint64_t now_ms);
/* Remembers [start, end) as cut at now_ms: in place of a span it overlaps that is still
 * remembered, held twice that one's hold (at most DAMON_RECUT_MS); else held
 * DAMON_RECUT_MIN_MS, when full in place of the span forgotten first. */
void damon_recent_add(struct damon_recent *c, uint64_t start, uint64_t end, uint64_t now_ms);

/* The three ranges of the VMAs v[0..n) (address order, not overlapping): from the first start
 * to the last end, less the two largest gaps between VMAs (fewer ranges when there are fewer
 * gaps). Returns the number written to out (0 for no VMA). */
size_t damon_three_ranges(const struct vma *v, size_t n, struct damon_range out[3]);
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
/* Pieces a span for a cut of nzoom spans into room regions: DAMON_ZOOM_PIECES, or fewer so
 * that every span and the whole ranges beside them fit; 0 when not even two a span do. */
uint32_t damon_zoom_pieces(size_t nzoom, size_t room);
/* True when the region is worth cutting finer: accessed in some of its samples but not hot
 * (hot data, a 2 MiB unit say, inside a region mostly cold, which DAMON's random splits take
 * many seconds to isolate), not warm by its history (damon_heat.h: used broadly, it has no hot
 * part to isolate, and the configured pace a cut brings would blind the source to it, its use
 * showing in too few of a short aggregation's samples), and at least DAMON_ZOOM_TIMES
 * the size of a piece of the last whole aggregation's memory cut into DAMON_INIT_REGIONS_MAX
 * (and DAMON_OVERSIZED_MIN). It is cut into DAMON_ZOOM_PIECES; DAMON merges the cold pieces
 * back at its next aggregations, so the regions, and the kdamond's work, return to what they
 * were but around the hot data. Pure. */
bool damon_region_zoom(const struct damon_aggr_size *a, const struct pghotd_config *cfg,
		       const struct damon_region *r, bool warm);
/* The ranges r[0..n) (address order) as ranges again, with the spans z[0..nz) (address order,
 * not overlapping) cut into `pieces` pieces each (page aligned, one page at least) where they
 * fall within r; the rest of r stays whole, so DAMON keeps the regions it has there. Written
 * to out (at most cap; what does not fit is left out, 0 then). Pure. */
size_t damon_cut_spans(const struct damon_range *r, size_t n, const struct damon_range *z,
		       size_t nz, uint32_t pieces, struct damon_range *out, size_t cap);

#endif
