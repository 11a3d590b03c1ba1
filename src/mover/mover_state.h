/* mover_state: what the promoter family (promoter.c, mover.c, node_room.c, promotion.c,
 * demotion.c) shares: the work array's pages, the directions, and struct mover, which holds the
 * batch path's scratch and the room on the nodes. Types only; each module's header declares its
 * functions. Promoter thread only. */
#ifndef PGHOTD_MOVER_STATE_H
#define PGHOTD_MOVER_STATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "table/cgroups.h"
#include "table/hot_table.h"
#include "mover/promoter_ops.h"
#include "base/stats.h"
#include "base/token_bucket.h"
#include "sys/topology.h"

/* move_pages never writes this value: a status still holding it was not written. */
#define MOVER_STATUS_UNWRITTEN INT_MIN

struct work_item {
	struct hot_candidate c;
	pid_t pid;
	uint32_t seq;	  /* arrival order this interval: deferred pages first, then the queue */
	uint32_t group;	  /* seq of the first page of the same process */
	uint16_t retries; /* -EBUSY outcomes, and intervals waited for an exchange, so far */
	bool lent;	  /* its room is booked on its target's loan (node_room_book()) */
};

struct interval_tally {
	uint64_t moved, bytes, dry, dry_bytes, deferred, skipped, failed;
};

struct mover;
struct move_dir;

/* What makes a direction: its names, counters, target choice and settle policy. */
struct move_dir_kind {
	const char *verb, *noun; /* "promote", "promotion": the logs */
	enum stat_counter rate_limited, dry_run;
	/* Chunks are sorted by address first (the page-size lookup scans each region once). */
	bool by_address;
	/* The node a page accessed from `from` (sitting on `where`, -1 unknown) goes to; -1:
	 * none has room. */
	int (*target)(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
		      int from, int where);
	/* A queried page sits on node: node when it is to move, else -1 (counted, settled). */
	int (*placed)(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
		      const struct work_item *it, int node, uint64_t now);
	/* Hands a page back with outcome o. */
	void (*settle)(struct mover *m, const struct work_item *it, enum hot_outcome o,
		       uint64_t now);
	/* Keeps a page that waits for the next interval; NULL: a waiting page is let go (its
	 * source offers it again), and busy or full-node pages are not retried. */
	void (*keep)(struct mover *m, const struct work_item *it);
	/* Pages of process proc (a procs handle) that reached node. */
	void (*count_moved)(struct mover *m, const struct move_dir *d, uint32_t proc, int node,
			    uint64_t pages, uint64_t bytes);
	void (*count_fail)(struct stats *s, enum stat_fail_reason why, uint64_t n);
	/* The process of proc is gone or reused: rest[0..n) are its pages not yet settled. */
	void (*forget)(struct mover *m, uint32_t proc, pid_t pid, struct work_item *rest, size_t n,
		       bool reused, uint64_t now);
};

struct move_dir {
	const struct move_dir_kind *kind;
	struct token_bucket bucket; /* pays for the pages this direction moves */
	struct interval_tally tally;
	bool limited; /* this interval ran out of tokens */
	/* Demotion: the fast node being relieved, the slow node its pages go to, and why. */
	int from, target;
	enum stat_demote_reason why;
};

struct mover {
	struct hot_table *hot;
	struct procs *procs;
	struct topology *topo; /* the topology given at creation (tests, benchmark) */
	struct stats *stats;
	struct cold_list *cold; /* NULL: no demotion, no exchange */
	struct cgroups
	    *cgroups; /* pages moved by process, for the per-cgroup figures; NULL: none */
	const struct promoter_ops *ops;
	void *ctx;
	uint64_t base_page;
	uint64_t huge_page; /* a PMD's worth: 2 MiB with 4 KiB pages */

	uint64_t now;	  /* this interval's time */
	bool free_fresh;  /* free memory refreshed this interval */
	pid_t near_pid;	  /* the process go_near() moved next to this interval, 0 none */
	bool near_pinned; /* run_near() holds the thread on a CPU (move_near_task) */
	bool paused[TOPO_MAX_NODES];
	bool memo_valid; /* last promotion target, valid within one placement query */
	int memo_from, memo_where, memo_target;

	/* Exchange: what promotion could not place last interval, by the node it wanted, and
	 * the bytes an exchange demoted from node n that promotion may fill although the node
	 * is short (below min_free_percent, or paused), until credit_until[n]. */
	uint64_t room_wanted[TOPO_MAX_NODES];
	uint64_t credit[TOPO_MAX_NODES], credit_until[TOPO_MAX_NODES];
	uint64_t exchange_until; /* the last credit_until[] */
	uint64_t credit_granted; /* bytes of credit exchanges granted, ever */
	/* An exchange that promotes first: the bytes of fast node n's reserve hot pages may still
	 * take this interval before their trade goes down (set when free memory is read), the
	 * bytes taken that demotion still owes, and since when it owes (the time the debt last
	 * grew from nothing). */
	uint64_t lend[TOPO_MAX_NODES], debt[TOPO_MAX_NODES], debt_since[TOPO_MAX_NODES];

	struct work_item *work;
	size_t nr_work;
	bool one_proc; /* every page of the work array is of one process */
	struct work_item *deferred;
	size_t nr_deferred;

	/* Scratch for one move_pages call. */
	void *addrs[PROMOTER_MAX_BATCH];
	uint64_t vaddrs[PROMOTER_MAX_BATCH];
	int nodes[PROMOTER_MAX_BATCH];
	int status[PROMOTER_MAX_BATCH];
	uint64_t sizes[PROMOTER_MAX_BATCH];
	uint64_t lookup[PROMOTER_MAX_BATCH]; /* page_sizes() answers, for vaddrs */
	struct work_item *sel[PROMOTER_MAX_BATCH];
	bool known[PROMOTER_MAX_BATCH]; /* placement given by the sample (select_pages) */
	uint64_t node_pages[TOPO_MAX_NODES];
	uint64_t node_bytes[TOPO_MAX_NODES];
};

/* The topology in force: the one published with the config, else the one given. */
static inline struct topology *mover_topo(const struct mover *m, const struct pghotd_config *cfg)
{
	return cfg->topo ? cfg->topo : m->topo;
}

#endif
