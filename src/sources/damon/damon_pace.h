/* damon_pace: how fast pghotd's kdamond samples.
 *
 * The kdamond's work is a page-table walk or two per region per sample (about 2.4 us each
 * in the emulator), so its CPU time follows the region count over the sampling interval,
 * whether or not there is anything left to find; and pghotd reads the pagemap of every hot
 * region at each aggregation, already on a fast node or not. Once the hot data is up, that
 * is all cost. So the source runs at the configured intervals while it is busy: within the
 * last DAMON_PACE_IDLE_MS hot regions had DAMON_PACE_BUSY_PAGES pages on slow nodes in one
 * aggregation, a region with pages on one was to be cut finer and its span not cut lately
 * (damon_regions.h: data that turned hot inside a region mostly cold), or a new process
 * became a target; otherwise at DAMON_PACE_IDLE times the aggregation interval and, where
 * DAMON_PACE_IDLE_SAMPLES samples an aggregation are left, twice that the sampling interval
 * (hot is a share of the samples, so it keeps its meaning; DAMON rescales the regions' counts
 * and ages to the new intervals from Linux 6.3; before, the ages a change left would be read
 * at the wrong interval, so there the configured pace stays). Data that turns hot while idle
 * is seen one slow aggregation later at most (0.8 s at the defaults), and the first such
 * region brings the configured pace back at once. The slower idle pace is the one that cuts
 * the kdamond's CPU most for that delay (docs/measurements.md, 2026-12-07).
 *
 * Pure. One thread (the DAMON source's). */
#ifndef PGHOTD_DAMON_PACE_H
#define PGHOTD_DAMON_PACE_H

#include <stdbool.h>
#include <stdint.h>

struct pghotd_config;

#define DAMON_PACE_IDLE	   8	/* interval multiple while idle */
#define DAMON_PACE_IDLE_MS 2000 /* idle after this long without work */
/* Fewer slow hot pages in an aggregation are no work: the last pages of hot data up already (a
 * region's edge, found a few at a time) must not keep the kdamond at its busy pace. */
#define DAMON_PACE_BUSY_PAGES 32
/* While idle, half the samples an aggregation where this many are left: three of five read
 * as hot by chance too often (the pace went busy for nothing), and the commit of a new target
 * waits for the aggregation's end, so that interval stays 8 x. */
#define DAMON_PACE_IDLE_SAMPLES 10

struct damon_pace {
	uint64_t busy_until_ms; /* 0: never busy yet */
	bool fixed;		/* the configured pace always (damon_pace_kernel_rescales()) */
};

/* Whether a kernel of this uname(2) release rescales DAMON's counts and ages to new intervals
 * (6.3 and later; an unparsable release: no). */
bool damon_pace_kernel_rescales(const char *release);

/* Work was seen at now_ms: the configured pace until DAMON_PACE_IDLE_MS later. */
void damon_pace_busy(struct damon_pace *p, uint64_t now_ms);
/* The multiple of the configured intervals to run at now_ms: 1 while busy or fixed, else
 * DAMON_PACE_IDLE, or less where that would take the aggregation interval past the
 * configuration's bound for it (CONFIG_DAMON_AGGR_US_MAX). */
unsigned damon_pace_factor(const struct damon_pace *p, const struct pghotd_config *cfg,
			   uint64_t now_ms);
/* *out = *cfg (a shallow copy: its pointers are cfg's, read only, never freed, and gone with cfg:
 * keep it no longer than cfg) with the DAMON intervals at the pace of factor (the aggregation
 * interval times factor, the sampling interval twice that while idle where
 * DAMON_PACE_IDLE_SAMPLES are left): what the kdamond's reports mean at that pace. */
void damon_pace_view(const struct pghotd_config *cfg, unsigned factor, struct pghotd_config *out);

#endif
