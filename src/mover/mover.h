/* mover: the batch path both directions share, and the direction object that tells them apart.
 * Internal to the promoter family (mover_state.h). Built on node_room; used by promotion.c,
 * demotion.c and promoter.c.
 *
 * The work array holds the pages of one round, grouped by process (mover_group_work());
 * mover_process_work() walks it one process and one batch at a time: placement (select),
 * page sizes, tokens from the direction's bucket (charge), move_pages, and every page settled
 * by its status. A direction (struct move_dir) brings its bucket, its tally, its target choice
 * and its settle policy: promotion's pages are hot table entries, kept on the deferred list
 * when they wait; demotion's are cold pages, left to their source when they wait.
 *
 * Ownership of a candidate: once popped from the hot table, a page belongs to the promoter
 * until it is settled with hot_table_done() exactly once. Between intervals it waits on the
 * deferred list (rate limited, -EBUSY with retries left, -ENOMEM). The work array and the
 * deferred list together never hold more than PROMOTER_WORK_MAX pages: a round pops only
 * what both can still take, so re-deferring a page never overflows.
 *
 * Rate limit: the bucket is charged before the move with each page's real size and refunded
 * for pages whose status says they did not move, so only what moved is paid for.
 *
 * Promoter thread only, all of it. */
#ifndef PGHOTD_MOVER_H
#define PGHOTD_MOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "mover/mover_state.h"

/* ---- mover.c: the batch path ---- */

/* A bucket of rate_mbps whose burst is one interval's worth, so an idle spell cannot bank a
 * flood (ready: set up before); the tally and the limit start afresh. */
void mover_dir_begin(struct move_dir *d, bool ready, unsigned rate_mbps, unsigned interval_ms,
		     uint64_t now);
/* Drops what the ops keep about the processes they served. */
void mover_release(struct mover *m);
/* Counts a page that failed and settles it with outcome o. */
void mover_fail(struct mover *m, struct move_dir *d, const struct work_item *it,
		enum stat_fail_reason why, enum hot_outcome o, uint64_t now);
/* Groups the work array by process, keeping arrival order. */
void mover_group_work(struct mover *m);
/* Moves the grouped work array in d's direction. Returns pages moved. */
long mover_process_work(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			uint64_t now);
/* Sizes of m->sel[0..n) of pid into m->sizes. */
void mover_fetch_sizes(struct mover *m, pid_t pid, size_t n);
/* Moves m->sel[0..n) of pid to m->nodes[], sized m->sizes[]; settles every page. charged:
 * the pages were paid for (refund those that fail); can_defer: keep -EBUSY/-ENOMEM pages
 * waiting rather than handing them back. Pages moved, or -ESRCH for a vanished process. */
long mover_move_selected(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			 pid_t pid, size_t n, bool charged, bool can_defer, uint64_t now);
/* ESRCH, or ESTALE (reused): settles rest[0..n) and whatever d holds of the process, then
 * forgets it. */
void mover_forget_process(struct mover *m, struct move_dir *d, uint32_t proc, pid_t pid,
			  struct work_item *rest, size_t n, bool reused, uint64_t now);

#endif
