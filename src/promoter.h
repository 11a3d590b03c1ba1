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
 * Accessed-bit source with pages idle for demotion.min_idle_ms) to the nearest slow node that
 * is not paused or full, paid from a bucket of demotion.rate_limit_mbps. For the full node it
 * is an exchange: as many bytes go down as the hot pages wait for, and those may then come up
 * although the node stays short (its use is unchanged), so the hot set still comes up without
 * the node's free memory being raised. The promoter also tells the source which fast nodes to
 * watch (cold_list_want()): those under twice the free share at which demotion starts.
 *
 * Every syscall goes through struct promoter_ops, so tests use a fake move_pages and clock.
 * Threads: promoter_run_once() and promoter_move_batch() belong to the promoter thread (or a
 * test/benchmark that plays it); promoter_kick*() from any thread; start/stop/free from the
 * main thread. */
#ifndef PGHOTD_PROMOTER_H
#define PGHOTD_PROMOTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct hot_table;
struct procs;
struct topology;
struct stats;
struct config_pub;
struct hot_candidate;
struct cold_list;

/* Hard cap on pages per move_pages call (the kernel migrates in chunks of this size). */
#define PROMOTER_MAX_BATCH 512
/* Pages the promoter holds at once: the deferred list plus what one round pops. */
#define PROMOTER_WORK_MAX 4096

struct promoter_ops {
	/* move_pages(2): nodes NULL queries placement. Returns 0, the number of pages not
	 * moved (> 0), or -errno for the whole call. */
	long (*move_pages)(void *ctx, pid_t pid, unsigned long count, void **pages,
			   const int *nodes, int *status, int flags);
	/* Monotonic milliseconds (used by the thread loop; run_once takes now as a parameter). */
	uint64_t (*now_ms)(void *ctx);
	/* Updates t's per-node free memory (real: topology_refresh_free). */
	int (*refresh_free)(void *ctx, struct topology *t);
	/* Size in bytes of the page (folio) mapped at each address of pid: what moving it
	 * would move. Fills sizes[n]; on failure the caller charges base pages. */
	int (*page_sizes)(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes);
	/* promotion.move_near_task: move the calling thread to the CPU pid last ran on
	 * (0 or -errno, nothing changed then; a no-op when it is already there), and back to
	 * where it may run anywhere (the promoter does that once it finds no work). NULL:
	 * never. */
	int (*run_near)(void *ctx, pid_t pid);
	void (*run_anywhere)(void *ctx);
	void *ctx;
};

/* The real syscalls. page_sizes uses the PAGEMAP_SCAN ioctl on /proc/PID/pagemap (Linux
 * 6.7+; PAGE_IS_HUGE marks PMD-mapped THP and hugetlb, charged at the PMD size), falling
 * back to /proc/PID/pagemap + /proc/kpageflags (KPF_THP, promoter_sizes_by_kpageflags(); the
 * first -ENOTTY ends the ioctl's tries) on older kernels; when neither can
 * be read (no CAP_SYS_ADMIN for PFNs), pages count as base pages. PTE-mapped multi-size THP
 * folios count as base pages too (an under-charge of the rate limit). */
extern const struct promoter_ops promoter_real_ops;

/* The page-size lookup of kernels before 6.7, on pagemap_fd (a process's
 * /proc/PID/pagemap) and the kpageflags file: sizes[i] of addrs[0..n) (base-page aligned)
 * becomes the PMD size for a page of a THP or hugetlb page whose PFN sits at the address's
 * offset in its PMD (as a PMD-mapped one does), and is left as it is otherwise. Ascending
 * addresses within 2 MiB of pagemap are read in one pread; kpageflags is opened and read only
 * for PFNs so aligned. -errno when kpageflags cannot be opened. */
int promoter_sizes_by_kpageflags(int pagemap_fd, const char *kpageflags, uint64_t base,
				 const uint64_t *addrs, size_t n, uint64_t *sizes);

struct promoter_deps {
	struct hot_table *hot;
	struct procs *procs;
	struct topology *topo;
	struct stats *stats;
	const struct promoter_ops *ops;
	/* Cold pages of fast nodes, from the Accessed-bit source; NULL: no demotion. */
	struct cold_list *cold;
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
