/* damon_sysfs: pghotd's own kdamond, through DAMON's sysfs interface
 * (<sysfs_root>/kernel/mm/damon/admin/kdamonds).
 *
 * DAMON's sysfs is shared by everyone on the machine, and writing kdamonds/nr_kdamonds
 * rebuilds every kdamond directory (the kernel refuses it while one runs). So pghotd never
 * touches a kdamond it does not own: it claims a free one (state off, no context: nobody set
 * it up), or creates the only one (nr_kdamonds 0 -> 1) when there is none at all; any other
 * kdamond, running or merely set up, makes the source unavailable, with the reason.
 *
 * Ours is marked in its own context, which lives as long as the kdamond does (a file under
 * /run would go with the unit's RuntimeDirectory when a killed pghotd is restarted): one
 * scheme of action "stat" whose apply_interval_us is DAMON_MARK_BASE plus pghotd's pid (the
 * scheme is applied once in DAMON_MARK_BASE microseconds, about 35 days: it costs nothing).
 * A pghotd that was killed leaves its kdamond running (kdamonds run until told to stop): at
 * claim, a marked kdamond whose pghotd is gone (no such pid, or not a pghotd) is stopped and
 * taken over; one whose pghotd still runs is another daemon's; an unmarked one is never ours.
 *
 * One context of operations "vaddr", one target per watched process: the regions come
 * through the damon:damon_aggregated tracepoint (damon_event.h). damon_sysfs_set_targets
 * writes the targets and starts the kdamond, or commits them to the running one; with no
 * target the kdamond is stopped (vaddr kdamonds also stop by themselves when every target
 * exits). damon_sysfs_release stops it, gives the directory back (no context; nr_kdamonds 0
 * again when it is the only one).
 *
 * Threads: one thread at a time per kdamond (the main thread around start and stop, the
 * source thread in between). damon_sysfs_inspect only reads. */
#ifndef PGHOTD_DAMON_SYSFS_H
#define PGHOTD_DAMON_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/damon/damon_regions.h"

#define DAMON_ADMIN	   "kernel/mm/damon/admin/kdamonds"
#define DAMON_MARK_BASE	   UINT64_C(3000000000000) /* us; plus pghotd's pid */
#define DAMON_REASON_MAX   256
#define DAMON_MAX_KDAMONDS 64

struct damon_attrs {
	uint32_t sample_us, aggr_us, update_us;
	uint32_t min_regions, max_regions;
};

struct damon_kdamond;

/* Reads the kdamonds as claim would: 0 when one could be claimed, -ENODEV without DAMON's
 * sysfs, -EBUSY when every kdamond is someone else's (why says which and whether it runs).
 * Changes nothing. */
int damon_sysfs_inspect(const char *sysfs_root, const char *procfs_root, char *why, size_t size);
/* Main thread: claims a kdamond (stopping a stale one of ours first, logged). Errors as
 * inspect, plus -errno of a failed write; *out untouched then. */
int damon_sysfs_claim(const char *sysfs_root, const char *procfs_root, struct damon_kdamond **out,
		      char *why, size_t size);
/* The regions a target starts with (n == 0: DAMON's own). */
struct damon_ranges {
	const struct damon_range *r;
	size_t n;
};

/* Writes attrs and the n targets (pids; init, when not NULL, n regions lists: the regions of
 * targets the kdamond does not have yet, damon_regions.h), then turns the kdamond on, or
 * commits when it is on (off and on again when the kernel refuses the commit); n == 0 turns
 * it off. A target without init has no regions in DAMON's sysfs after the write, so the commit
 * keeps the regions DAMON made of it. Only what changed since the last write is written again
 * (DAMON's sysfs rebuilds the directories under any count written to it). 0 or -errno; after
 * an error, the next write is whole. */
int damon_sysfs_set_targets(struct damon_kdamond *k, const struct damon_attrs *a, const pid_t *pids,
			    const struct damon_ranges *init, size_t n);
/* The kdamond's thread pid; -ESRCH when it is not running. */
int damon_sysfs_kdamond_pid(const struct damon_kdamond *k, pid_t *out);
/* Index of the claimed kdamond (its directory kdamonds/<index>). */
unsigned damon_sysfs_index(const struct damon_kdamond *k);
/* Main thread: stops the kdamond, gives its directory back (no context; nr_kdamonds back to
 * 0 when it is the only one), frees k. NULL is a no-op. */
void damon_sysfs_release(struct damon_kdamond *k);

#endif
