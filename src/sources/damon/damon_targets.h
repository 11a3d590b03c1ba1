/* damon_targets: the DAMON source's processes as its kdamond's targets, and their cuts.
 *
 * DAMON numbers targets by position; a region report names its target by that number. The
 * list in force is `tg`; `old` is the one before the last commit, for the regions counted
 * before the commit took effect (reported before switch_ns). A region is always read with the
 * list it was counted with, but a cut it asks for (damon_regions.h) is marked on the
 * process's target in the list in force, which the next commit cuts: marked on the old list,
 * it would be lost (the first aggregation after every commit is counted with it). Pure but
 * for closing the targets' pagemaps (a list freed, or one closed for another to open). One
 * thread (the DAMON source's). */
#ifndef PGHOTD_DAMON_TARGETS_H
#define PGHOTD_DAMON_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/damon/damon_event.h"
#include "sources/damon/damon_feed.h"
#include "sources/damon/damon_regions.h"

/* Pagemaps held open at once over both lists, at most: a target's is opened when one of its
 * regions is first read, and up to DAMON_MAX_TARGETS processes (a local user's, each of 8 MiB)
 * would otherwise hold that many descriptors, past systemd's soft RLIMIT_NOFILE of 1024 with
 * the region files damon_sysfs holds (below half the limit), and every other open of pghotd's
 * would fail. The DAMON source holds a quarter of the limit, at most this many. */
#define DAMON_PAGEMAP_FDS_MAX 256

struct damon_target {
	struct damon_feed_proc p;
	int fd;		  /* its pagemap, -1 until first needed (or closed for another) */
	uint64_t fd_used; /* damon_targets.fd_clock at its last read */
	const char *procfs_root;
	uint64_t recut_after_ms; /* not cut again before */
	/* Spans of oversized or zoom regions (damon_region_zoom()): cut at the next commit. */
	struct damon_range zoom[DAMON_ZOOM_MAX];
	size_t nzoom;
	struct damon_recent recent; /* spans cut lately: not again yet */
};

struct damon_targets {
	struct damon_target *tg, *old; /* in force, before the last commit */
	size_t ntg, nold;
	uint64_t switch_ns; /* CLOCK_MONOTONIC when tg took over */
	uint64_t fd_clock;  /* counts pagemap reads, for fd_used */
};

/* t's pagemap is about to be read: stamps it, and when t has none open and max are open in
 * tg and old, closes the one read least lately. */
void damon_targets_fd_use(struct damon_targets *ts, struct damon_target *t, size_t max);
/* Closes the pagemaps of t[0..n) and frees t (NULL: nothing). */
void damon_targets_free(struct damon_target *t, size_t n);
/* Index of pid in t[0..n), or n. */
size_t damon_target_find(const struct damon_target *t, size_t n, pid_t pid);
/* Whether a[0..na) and b[0..nb) are the same processes in the same order. */
bool damon_targets_same_pids(const struct damon_target *a, size_t na, const struct damon_target *b,
			     size_t nb);

/* The list t[0..n) about to be committed takes over the cuts' pace from the list in force:
 * each process's recent spans and gap, and a process with spans marked has them remembered as
 * cut at now_ms and is not cut again for DAMON_RECUT_GAP_MS. *recut: some process has spans
 * marked; *added: some process is new. */
void damon_targets_carry(const struct damon_targets *ts, struct damon_target *t, size_t n,
			 uint64_t now_ms, bool *recut, bool *added);
/* The committed list t[0..n) is in force from now_ns; the one before it is kept as old and
 * the older one freed. */
void damon_targets_switch(struct damon_targets *ts, struct damon_target *t, size_t n,
			  uint64_t now_ns);
/* Frees both lists. */
void damon_targets_clear(struct damon_targets *ts);

/* The target the region recorded at time_ns by the kdamond thread `kdamond` was counted
 * with: NULL for another kdamond's (or an earlier one of ours: kpid is ours now) or an index
 * past its list. */
struct damon_target *damon_targets_of(struct damon_targets *ts, const struct damon_region *r,
				      uint64_t time_ns, pid_t kpid);
/* The target of t's process in the list in force (t itself when it is of that list), or NULL
 * when the process is a target no more. */
struct damon_target *damon_targets_now(struct damon_targets *ts, struct damon_target *t);

/* Marks the region's span on t for its next cut, unless it overlaps a span marked already or
 * one cut lately (damon_recent), or DAMON_ZOOM_MAX are marked; true when it did. */
bool damon_target_zoom_add(struct damon_target *t, const struct damon_region *r, uint64_t now_ms);
/* A region t was counted with asks for a cut: marks it (damon_target_zoom_add()) on the
 * target of t's process in force (damon_targets_now()) unless that process was cut within
 * DAMON_RECUT_GAP_MS. True when marked and the span is new: not cut again while remembered
 * (damon_recent_knows()), which is what the source's pace counts as work. */
bool damon_targets_mark_cut(struct damon_targets *ts, struct damon_target *t,
			    const struct damon_region *r, uint64_t now_ms);
/* Whether a target in force has spans marked. */
bool damon_targets_recut_pending(const struct damon_targets *ts);
/* After a commit attempt at now_ms: the marks go (a failed commit's with them: not cut again
 * before DAMON_RECUT_GAP_MS). */
void damon_targets_recut_done(struct damon_targets *ts, uint64_t now_ms);

#endif
