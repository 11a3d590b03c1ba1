/* promoter: drains the hot table's ready queue and moves hot pages from slow nodes to fast
 * ones with move_pages(2).
 *
 * Each interval (promoter_run_once): take deferred pages first, then pop the queue; group by
 * process; per batch of promotion.batch pages, query placement (move_pages with nodes NULL)
 * and skip pages no longer on a slow node; pick a target node (nearest fast node to the
 * accessing node, or the fixed list) that is not paused and has min_free_percent free; pay
 * for each page from a byte token bucket at its real size (THP = 2 MiB); move; settle every
 * page with the hot table by its per-page status. Pages the bucket cannot pay for, and
 * -EBUSY/-ENOMEM pages, stay on the promoter's deferred list for the next interval.
 *
 * Demotion, the other direction through the same steps: at the start of an interval, a fast
 * node whose free memory is under demotion.free_target_percent, or that hot pages found full
 * (below min_free_percent) last interval, sheds its coldest pages (cold_list, filled by the
 * page-table sources, Accessed-bit and DAMON, with pages idle for demotion.min_idle_ms) to the
 * nearest slow node that
 * is not paused or full, paid from a bucket of demotion.rate_limit_mbps. For the full node it
 * is an exchange: as many bytes go down as the hot pages wait for, and those may then come up
 * although the node stays short (its use is unchanged), so the hot set still comes up without
 * the node's free memory being raised. The promoter also tells the source which fast nodes to
 * watch (cold_list_want()): those under twice the free share at which demotion starts.
 *
 * Every syscall goes through struct promoter_ops (promoter_ops.h), so tests use a fake
 * move_pages and clock. The moves themselves are the mover's (mover.h: one batch path, and a
 * direction object each for promotion.c and demotion.c).
 * Threads: promoter_run_once() and promoter_move_batch() belong to the promoter thread (or a
 * test/benchmark that plays it); promoter_kick*() from any thread; start/stop/free from the
 * main thread. */
#ifndef PGHOTD_PROMOTER_H
#define PGHOTD_PROMOTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "mover/promoter_ops.h"

struct hot_table;
struct procs;
struct topology;
struct stats;
struct config_pub;
struct hot_candidate;
struct cold_list;
struct cgroups;

struct promoter_deps {
	struct hot_table *hot;
	struct procs *procs;
	struct topology *topo;
	struct stats *stats;
	/* The syscalls; ctx NULL with the real ones: the promoter's own context. */
	const struct promoter_ops *ops;
	/* Where the real ops read /proc; NULL: "/proc". Must outlive the promoter. */
	const char *procfs_root;
	/* Cold pages of fast nodes, from the Accessed-bit and DAMON sources; NULL: no demotion. */
	struct cold_list *cold;
	/* Where pages moved are counted by process (cgroups_moved()); NULL: nowhere. */
	struct cgroups *cgroups;
	/* Ready-queue depth at which promoter_kick_if_full() wakes the thread; 0 = 512. */
	size_t kick_mark;
};

struct promoter;

/* Main thread. The deps must outlive the promoter. -errno on failure. */
int promoter_new(const struct promoter_deps *deps, struct promoter **out);
/* Main thread, after promoter_stop() and before hot_table_free(): hands deferred pages
 * back to the hot table (HOT_RETRY) and frees. */
void promoter_free(struct promoter *p);

/* Promoter thread (or a test acting as it): one interval's work at time now_ms. Returns the
 * number of pages moved (would-be moved in dry_run), or -errno. */
int promoter_run_once(struct promoter *p, const struct pghotd_config *cfg, uint64_t now_ms);

/* Promoter thread (tests, benchmark): moves up to PROMOTER_MAX_BATCH candidates of one
 * process to target, with no placement check, target choice or rate limit; settles each
 * candidate with the hot table when settle is true and counts outcomes in stats.
 * status[n] receives the per-page status. Returns pages moved or -errno for the call. */
int promoter_move_batch(struct promoter *p, const struct pghotd_config *cfg, pid_t pid,
			const struct hot_candidate *c, size_t n, int target, int *status,
			bool settle, uint64_t now_ms);

/* Main thread: registers a config_pub slot and starts the thread, which calls
 * config_pub_get() at the top of each loop and wakes every promotion.interval_ms or when
 * kicked. -errno on failure (nothing started). */
int promoter_start(struct promoter *p, struct config_pub *pub);
/* Main thread: stops and joins the thread, unregisters the slot. No-op if not started. */
void promoter_stop(struct promoter *p);

/* Any thread, async-signal-safe: wake the thread now. */
void promoter_kick(struct promoter *p);
/* Any thread (sources, after hot_table_record() returned 1): wake the thread early when
 * the ready queue holds kick_mark pages or more. */
void promoter_kick_if_full(struct promoter *p);

/* Promoter thread: pages currently waiting on the deferred list. */
size_t promoter_deferred(const struct promoter *p);
/* Promoter thread: true while move_pages reported the node full (-ENOMEM) and its free
 * memory has not yet recovered above min_free_percent. */
bool promoter_node_paused(const struct promoter *p, int node);

#endif
