/* mover: the batch path both directions share, and the direction object that tells them apart.
 * Internal to the promoter family (promoter.c, mover.c, promotion.c, demotion.c).
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

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "hot_table.h"
#include "promoter_ops.h"
#include "stats.h"
#include "token_bucket.h"
#include "topology.h"

/* move_pages never writes this value: a status still holding it was not written. */
#define MOVER_STATUS_UNWRITTEN INT_MIN

struct work_item {
	struct hot_candidate c;
	pid_t pid;
	uint32_t seq;	  /* arrival order this interval: deferred pages first, then the queue */
	uint32_t group;	  /* seq of the first page of the same process */
	uint16_t retries; /* -EBUSY outcomes, and intervals waited for an exchange, so far */
	bool lent;	  /* its room is booked on its target's loan (mover_book_room()) */
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
	void (*count_moved)(struct mover *m, const struct move_dir *d, int node, uint64_t pages,
			    uint64_t bytes);
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

extern const struct move_dir_kind promotion_kind;

struct mover {
	struct hot_table *hot;
	struct procs *procs;
	struct topology *topo; /* the topology given at creation (tests, benchmark) */
	struct stats *stats;
	struct cold_list *cold; /* NULL: no demotion, no exchange */
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

/* ---- promotion.c: room on the nodes, promotion's target choice, the exchange ---- */

/* The topology in force: the one published with the config, else the one given. */
struct topology *mover_topo(const struct mover *m, const struct pghotd_config *cfg);
/* Reads free memory once per interval; resumes paused nodes that have room again, and sets
 * what each fast node lends. */
void mover_refresh_free_once(struct mover *m, const struct pghotd_config *cfg);
/* Node n is present, not paused and has min_free_percent free (or an unknown size), and more
 * than its kernel mark (topo_node.mem_mark). */
bool mover_node_has_room(const struct mover *m, const struct pghotd_config *cfg, int n);
/* Room an exchange made on node n for promotion, while it lasts. */
bool mover_exchange_room(const struct mover *m, int n);
/* Books a page bound for node n against exchange room when n has none of its own, else
 * against what n lends (the page's trade then owed to demotion); false when both are used up. */
bool mover_book_room(struct mover *m, const struct pghotd_config *cfg, int n,
		     struct work_item *it);
/* A page booked on node n's loan did not go up (no tokens, a failed move): the loan is n's
 * again and nothing is owed for it. */
void mover_unbook_loan(struct mover *m, int n, struct work_item *it);
/* A page chosen for node n takes its room there at once: the node's free memory, read once per
 * interval, is lowered by the page, so one interval's pages (up to a rate limit's worth,
 * 25.6 MiB at the shipped settings) cannot take a node just above promotion.min_free_percent
 * far below it, to where the kernel's OOM killer acts. */
void mover_take_room(struct mover *m, const struct pghotd_config *cfg, int n,
		     const struct work_item *it);
/* A page found every target full asks demotion for room on its preferred node; false when
 * there is no one to ask. */
bool mover_want_room(struct mover *m, const struct pghotd_config *cfg, const struct work_item *it,
		     int where);
/* Whether a page asked demotion for room since the last demotion_run() served the asks, or
 * went up on a node's loan that demotion still owes. */
bool mover_room_wanted(const struct mover *m);
/* Whether hot pages wait to go up: queued in the hot table, or deferred. */
bool mover_hot_waiting(const struct mover *m);
/* move_pages said node is full: pauses moves to it until its free memory recovers. */
void mover_pause_node(struct mover *m, const struct move_dir *d, int node);

#endif
