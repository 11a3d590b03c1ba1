/* promoter: see promoter.h for the contract.
 *
 * Ownership of a candidate: once popped from the hot table, a page belongs to the promoter
 * until it is settled with hot_table_done() exactly once. Between intervals it waits on the
 * deferred list (rate limited, -EBUSY with retries left, -ENOMEM). The work array and the
 * deferred list together never hold more than PROMOTER_WORK_MAX pages: a round pops only
 * what both can still take, so re-deferring a page never overflows.
 *
 * Rate limit: the bucket is charged before the move with each page's real size and refunded
 * for pages whose status says they did not move, so only what moved is paid for. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <numaif.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cold_list.h"
#include "config_pub.h"
#include "hot_table.h"
#include "log.h"
#include "procs.h"
#include "promoter.h"
#include "stats.h"
#include "token_bucket.h"
#include "topology.h"
#include "worker.h"

/* move_pages never writes this value: a status still holding it was not written. */
#define STATUS_UNWRITTEN INT_MIN
/* Rounds of pop-and-move per interval when the bucket allows: bounds one interval's work
 * while letting an unlimited promoter keep up with a busy queue. */
#define MAX_ROUNDS 4
/* Entries prefetched ahead of the one being settled (bench_promoter: 64 beat 16 and 256). */
#define SETTLE_AHEAD 64
#define MIB	     (UINT64_C(1) << 20)
/* A demotion item has no hot table entry: its slot is past any table (hot_table_done() ignores
 * it). */
#define NO_SLOT UINT32_MAX
/* Time between two looks at fast nodes' free memory for demotion, when nothing asks sooner. */
#define DEMOTE_CHECK_MS 1000
/* Shortest time the room an exchange made stays reserved for the hot pages it was made for. */
#define EXCHANGE_MIN_TTL_MS 1000

struct work_item {
	struct hot_candidate c;
	pid_t pid;
	uint32_t seq;	  /* arrival order this interval: deferred pages first, then the queue */
	uint32_t group;	  /* seq of the first page of the same process */
	uint16_t retries; /* -EBUSY outcomes, and intervals waited for an exchange, so far */
};

struct interval_tally {
	uint64_t moved, bytes, dry, dry_bytes, deferred, skipped, failed;
};

struct promoter {
	struct promoter_deps d;
	struct promoter_sys sys; /* the real ops' context, when the ops bring none */
	void *ctx;		 /* the ops' context: theirs, or sys */
	struct token_bucket bucket;
	bool bucket_ready;
	struct token_bucket *cur; /* the bucket paying for the pages being moved */
	bool down;		  /* moving cold pages down (see "demotion" below) */
	bool exchanging;	  /* promoting while an exchange window is open (book_room()) */
	bool charged;		  /* pages being moved were paid for: refund the ones that fail */
	bool limited;		  /* this interval ran out of tokens */
	bool free_fresh;	  /* free memory refreshed this interval */
	pid_t near_pid;		  /* the process go_near() moved next to this interval, 0 none */
	bool memo_valid;	  /* last pick_target() answer, valid within one placement query */
	int memo_from, memo_where, memo_target;
	bool paused[TOPO_MAX_NODES];

	struct work_item *work;
	size_t nr_work;
	struct work_item *deferred;
	size_t nr_deferred;
	bool one_proc; /* every page of the work array is of one process */

	/* Scratch for one move_pages call. */
	void *addrs[PROMOTER_MAX_BATCH];
	uint64_t vaddrs[PROMOTER_MAX_BATCH];
	int nodes[PROMOTER_MAX_BATCH];
	int status[PROMOTER_MAX_BATCH];
	uint64_t sizes[PROMOTER_MAX_BATCH];
	uint64_t lookup[PROMOTER_MAX_BATCH]; /* page_sizes() answers, for vaddrs */
	struct work_item *sel[PROMOTER_MAX_BATCH];
	bool known[PROMOTER_MAX_BATCH]; /* placement given by the sample (select_slow) */
	uint64_t node_pages[TOPO_MAX_NODES];
	uint64_t node_bytes[TOPO_MAX_NODES];

	struct interval_tally tally;
	uint64_t base_page;
	uint64_t huge_page; /* a PMD's worth: 2 MiB with 4 KiB pages */

	/* Demotion (see "demotion" below), kept apart from promotion's fields: its own bucket,
	 * where the pages being moved come from and go, and what promotion could not place last
	 * interval, by the node it wanted. */
	struct token_bucket dbucket;
	int down_from, down_target;
	enum stat_demote_reason why;
	uint64_t room_wanted[TOPO_MAX_NODES];
	/* Exchange: bytes an exchange demoted from node n that promotion may fill although the
	 * node is short (below min_free_percent, or paused), until credit_until[n]. */
	uint64_t credit[TOPO_MAX_NODES], credit_until[TOPO_MAX_NODES];
	uint64_t exchange_until; /* the last credit_until[] */
	uint64_t now;		 /* this interval's time */
	uint64_t last_reoffer, last_check, check_gen;
	bool needy;		/* the last look found a fast node that needs room */
	struct cold_page *cold; /* [PROMOTER_WORK_MAX], taken from the cold list */
	struct interval_tally dtally;

	/* Thread. */
	struct worker w;
	atomic_bool kicked; /* a wake-up is pending; saves a write per source record */
	bool near_pinned;   /* run_near() holds the thread on a CPU (move_near_task) */
	struct config_pub *pub;
	int slot;
};

static unsigned batch_size(const struct pghotd_config *cfg)
{
	unsigned b = cfg->promotion.batch;

	if (b == 0)
		return 1;
	return b > PROMOTER_MAX_BATCH ? PROMOTER_MAX_BATCH : b;
}

int promoter_new(const struct promoter_deps *deps, struct promoter **out)
{
	struct promoter *p;
	long ps = sysconf(_SC_PAGESIZE);

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->d = *deps;
	promoter_sys_init(&p->sys, deps->procfs_root);
	p->ctx = deps->ops->ctx ? deps->ops->ctx : &p->sys;
	if (p->d.kick_mark == 0)
		p->d.kick_mark = PROMOTER_MAX_BATCH;
	p->base_page = ps > 0 ? (uint64_t)ps : 4096;
	p->huge_page = promoter_pmd_size(p->base_page);
	p->cur = &p->bucket;
	p->work = calloc(PROMOTER_WORK_MAX, sizeof(*p->work));
	p->deferred = calloc(PROMOTER_WORK_MAX, sizeof(*p->deferred));
	if (deps->cold)
		p->cold = calloc(PROMOTER_WORK_MAX, sizeof(*p->cold));
	int r = worker_init(&p->w, "promoter");

	if (!p->work || !p->deferred || (deps->cold && !p->cold) || r < 0) {
		if (r == 0) {
			worker_fini(&p->w);
			r = -ENOMEM;
		}
		free(p->work);
		free(p->deferred);
		free(p->cold);
		free(p);
		return r;
	}
	atomic_init(&p->kicked, false);
	p->slot = -1;
	*out = p;
	return 0;
}

void promoter_free(struct promoter *p)
{
	uint64_t now;

	if (!p)
		return;
	promoter_stop(p);
	now = p->d.ops->now_ms(p->ctx);
	for (size_t i = 0; i < p->nr_deferred; i++)
		hot_table_done(p->d.hot, &p->deferred[i].c, HOT_RETRY, now);
	worker_fini(&p->w);
	promoter_sys_fini(&p->sys);
	free(p->work);
	free(p->deferred);
	free(p->cold);
	free(p);
}

size_t promoter_deferred(const struct promoter *p)
{
	return p->nr_deferred;
}

bool promoter_node_paused(const struct promoter *p, int node)
{
	return node >= 0 && node < TOPO_MAX_NODES && p->paused[node];
}

/* What the ops keep about the processes they served is dropped: the end of an interval, or a
 * process forgotten. */
static void release(struct promoter *p)
{
	if (p->d.ops->release)
		p->d.ops->release(p->ctx);
}

/* ---- settling ---------------------------------------------------------------------- */

/* A page the bucket cannot pay for this interval. A cold page is not kept: the scanner offers it
 * again (cold_list_reoffer()) while it stays idle. */
static void defer(struct promoter *p, const struct work_item *it)
{
	p->tally.deferred++;
	if (p->down)
		return;
	/* Cannot overflow: see the ownership note at the top. */
	p->deferred[p->nr_deferred++] = *it;
}

static void settle(struct promoter *p, const struct work_item *it, enum hot_outcome o, uint64_t now)
{
	if (!p->down)
		hot_table_done(p->d.hot, &it->c, o, now);
}

static void count_rate_limited(struct promoter *p, uint64_t n)
{
	stats_add(p->d.stats, p->down ? ST_DEMOTE_RATE_LIMITED : ST_PROMOTE_RATE_LIMITED, n);
}

static void settle_all(struct promoter *p, struct work_item **sel, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++)
		settle(p, sel[i], HOT_DROP, now);
}

static void fail(struct promoter *p, const struct work_item *it, enum stat_fail_reason why,
		 enum hot_outcome o, uint64_t now)
{
	if (p->down)
		stats_demote_fail(p->d.stats, why, 1);
	else
		stats_fail(p->d.stats, why, 1);
	p->tally.failed++;
	settle(p, it, o, now);
}

/* ---- target choice ----------------------------------------------------------------- */

/* The topology in force: the one published with the config (a reload may change tiers),
 * else the one given at creation (tests, benchmark). */
static struct topology *topo_of(const struct promoter *p, const struct pghotd_config *cfg)
{
	return cfg->topo ? cfg->topo : p->d.topo;
}

static void refresh_free_once(struct promoter *p, const struct pghotd_config *cfg)
{
	struct topology *t = topo_of(p, cfg);
	int r;

	if (p->free_fresh)
		return;
	p->free_fresh = true;
	r = p->d.ops->refresh_free(p->ctx, t);
	if (r < 0)
		log_warning_errno(r, "cannot refresh free memory, using the last reading");
	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		if (!p->paused[n] || topology_free_percent(t, n) <= cfg->promotion.min_free_percent)
			continue;
		p->paused[n] = false;
		log_info("node %d has %u%% free again, resuming promotion to it", n,
			 topology_free_percent(t, n));
	}
}

/* Room an exchange made on node n for promotion (demote_node()), while it lasts. */
static bool exchange_room(const struct promoter *p, int n)
{
	return !p->down && p->credit[n] && p->now < p->credit_until[n];
}

static bool node_has_room(struct promoter *p, const struct pghotd_config *cfg, int n)
{
	const struct topology *t = topo_of(p, cfg);

	if (n < 0 || n >= t->nr_nodes || n >= TOPO_MAX_NODES || !t->node[n].present)
		return false;
	if (p->paused[n])
		return false;
	/* A node whose size is unknown cannot be judged full. */
	if (t->node[n].mem_total == 0)
		return true;
	return topology_free_percent(t, n) >= cfg->promotion.min_free_percent;
}

/* Room of its own, or room an exchange made (only fast nodes hold credit). */
static bool node_usable(struct promoter *p, const struct pghotd_config *cfg, int n)
{
	return node_has_room(p, cfg, n) || (n >= 0 && n < TOPO_MAX_NODES && exchange_room(p, n));
}

/* Books a page bound for node n (chosen by node_usable()) against the room an exchange made
 * when the node has none of its own; false when that room is used up. */
static bool book_room(struct promoter *p, const struct pghotd_config *cfg, int n,
		      const struct work_item *it)
{
	uint64_t size = it->c.size == HOT_SIZE_HUGE ? p->huge_page : p->base_page;

	/* No exchange window open on n: node_usable() chose it for its own room. */
	if (p->now >= p->credit_until[n] || node_has_room(p, cfg, n))
		return true;
	if (p->credit[n] < size)
		return false;
	p->credit[n] -= size;
	return true;
}

static int choose_target(struct promoter *p, const struct pghotd_config *cfg, int from, int where)
{
	int order[TOPO_MAX_NODES];
	int n;

	if (cfg->promotion.target == TARGET_FIXED) {
		for (int i = 0; i < cfg->promotion.target_nodes.n; i++)
			if (node_usable(p, cfg, cfg->promotion.target_nodes.node[i]))
				return cfg->promotion.target_nodes.node[i];
		return -1;
	}
	if (from < 0 || from >= topo_of(p, cfg)->nr_nodes)
		from = where;
	n = topology_fast_nodes_by_distance(topo_of(p, cfg), from, order, TOPO_MAX_NODES);
	for (int i = 0; i < n; i++)
		if (node_usable(p, cfg, order[i]))
			return order[i];
	return -1;
}

/* Target for a page accessed from node `from` (or, when unknown, sitting on `where`);
 * -1 when every candidate node is paused or too full. Remembers the last answer: node
 * state only changes after a move, and select_slow() forgets it per chunk. The caller has
 * read free memory this interval (refresh_free_once()). */
static int pick_target(struct promoter *p, const struct pghotd_config *cfg, int from, int where)
{
	if (p->down)
		return p->down_target;
	if (p->memo_valid && p->memo_from == from && p->memo_where == where)
		return p->memo_target;
	p->memo_from = from;
	p->memo_where = where;
	p->memo_valid = true;
	p->memo_target = choose_target(p, cfg, from, where);
	return p->memo_target;
}

/* The node a page accessed from `from` (sitting on `where`) would go to were none full. */
static int preferred_target(struct promoter *p, const struct pghotd_config *cfg, int from,
			    int where)
{
	int n;

	if (cfg->promotion.target == TARGET_FIXED)
		return cfg->promotion.target_nodes.n ? cfg->promotion.target_nodes.node[0] : -1;
	if (from < 0 || from >= topo_of(p, cfg)->nr_nodes)
		from = where;
	return topology_fast_nodes_by_distance(topo_of(p, cfg), from, &n, 1) == 1 ? n : -1;
}

/* A hot page found every target full: its preferred node asks demotion for its room (an
 * exchange), served at the next interval's demote(). False when there is no one to ask. */
static bool want_room(struct promoter *p, const struct pghotd_config *cfg,
		      const struct work_item *it, int where)
{
	int n;

	if (!p->d.cold || !cfg->demotion.enabled)
		return false;
	n = preferred_target(p, cfg, it->c.node, where);
	if (n < 0 || n >= TOPO_MAX_NODES)
		return false;
	p->room_wanted[n] += it->c.size == HOT_SIZE_HUGE ? p->huge_page : p->base_page;
	return true;
}

static void pause_node(struct promoter *p, int node)
{
	if (node < 0 || node >= TOPO_MAX_NODES || p->paused[node])
		return;
	p->paused[node] = true;
	stats_add(p->d.stats, ST_NODE_PAUSES, 1);
	log_notice("node %d is full (move_pages -ENOMEM), pausing %s to it", node,
		   p->down ? "demotion" : "promotion");
}

/* ---- one move_pages call ----------------------------------------------------------- */

static void flush_promoted(struct promoter *p)
{
	for (int n = 0; n < TOPO_MAX_NODES; n++) {
		if (!p->node_pages[n])
			continue;
		if (p->down)
			stats_demoted(p->d.stats, p->down_from, p->why, p->node_pages[n],
				      p->node_bytes[n]);
		else
			stats_promoted(p->d.stats, n, p->node_pages[n], p->node_bytes[n]);
		p->tally.moved += p->node_pages[n];
		p->tally.bytes += p->node_bytes[n];
		p->node_pages[n] = 0;
		p->node_bytes[n] = 0;
	}
}

/* A page that reached target: counted for flush_promoted() and settled. */
static inline void settle_moved(struct promoter *p, const struct work_item *it, int target,
				uint64_t size, uint64_t now)
{
	p->node_pages[target]++;
	p->node_bytes[target] += size;
	settle(p, it, HOT_PROMOTED, now);
}

/* Settles one page after a move by its status. can_defer: keep -EBUSY/-ENOMEM pages on
 * the deferred list (run_once) rather than handing them back (promoter_move_batch). */
static bool settle_status(struct promoter *p, const struct pghotd_config *cfg, struct work_item *it,
			  int st, int target, uint64_t size, bool can_defer, uint64_t now)
{
	if (st == target) {
		settle_moved(p, it, target, size, now);
		return true;
	}
	if (p->charged)
		token_bucket_refund(p->cur, size);
	switch (st) {
	case -EBUSY:
		if (can_defer && it->retries < cfg->promotion.max_retries) {
			stats_fail(p->d.stats, FAIL_BUSY, 1);
			it->retries++;
			defer(p, it);
		} else {
			fail(p, it, FAIL_BUSY, can_defer ? HOT_DROP : HOT_RETRY, now);
		}
		break;
	case -ENOMEM:
		pause_node(p, target);
		if (can_defer) {
			stats_fail(p->d.stats, FAIL_NOMEM, 1);
			defer(p, it);
		} else {
			fail(p, it, FAIL_NOMEM, HOT_RETRY, now);
		}
		break;
	case -EACCES:
		fail(p, it, FAIL_SHARED, HOT_DROP, now);
		break;
	case -EFAULT:
	case -ENOENT:
		fail(p, it, FAIL_GONE, HOT_DROP, now);
		break;
	default:
		/* Unwritten (not trusted), another node than asked, or an unknown error: the
		 * page did not reach target; let the hot table offer it again. */
		fail(p, it, FAIL_OTHER, st >= 0 || st == STATUS_UNWRITTEN ? HOT_RETRY : HOT_DROP,
		     now);
		break;
	}
	return false;
}

/* move_pages(2) through the ops. A whole-call -EINVAL means the task has no memory left
 * (it is exiting: the kernel finds no mm), since pghotd's flags and nodes are always valid:
 * it is reported as -ESRCH so the process is forgotten at once, not retried every interval. */
static long do_move_pages(struct promoter *p, pid_t pid, unsigned long n, const int *nodes,
			  int *status, int flags)
{
	long r = p->d.ops->move_pages(p->ctx, pid, n, p->addrs, nodes, status, flags);

	return r == -EINVAL ? -ESRCH : r;
}

/* Moves p->sel[0..n) of pid to p->nodes[], sized p->sizes[]. Settles every page. Returns
 * pages moved, or -ESRCH for a vanished process (the caller forgets it). */
static long move_selected(struct promoter *p, const struct pghotd_config *cfg, pid_t pid, size_t n,
			  bool can_defer, uint64_t now)
{
	long r, moved = 0;

	for (size_t i = 0; i < n; i++) {
		p->addrs[i] = (void *)(uintptr_t)p->sel[i]->c.vaddr;
		p->status[i] = STATUS_UNWRITTEN;
	}
	r = do_move_pages(p, pid, n, p->nodes, p->status, MPOL_MF_MOVE);
	if (r == -ESRCH) {
		settle_all(p, p->sel, n, now);
		return r;
	}
	if (r < 0) {
		bool retry = r != -EPERM && r != -EACCES;

		log_warning_errno((int)r, "move_pages pid=%d (%zu pages) failed, %s", (int)pid, n,
				  retry ? "retrying later" : "dropping them");
		for (size_t i = 0; i < n; i++) {
			if (p->charged)
				token_bucket_refund(p->cur, p->sizes[i]);
			fail(p, p->sel[i], FAIL_OTHER, retry ? HOT_RETRY : HOT_DROP, now);
		}
		return 0;
	}
	/* The entries to settle are not in the cache (pop() read the queue's copies, and the
	 * move walked n pages' worth of kernel data): keep SETTLE_AHEAD of them in flight, so
	 * their misses overlap each other and the settling CASes. */
	for (size_t i = 0; i < n && i < SETTLE_AHEAD; i++)
		hot_table_prefetch(p->d.hot, p->sel[i]->c.slot);
	for (size_t i = 0; i < n; i++) {
		int st = p->status[i], target = p->nodes[i];

		if (i + SETTLE_AHEAD < n)
			hot_table_prefetch(p->d.hot, p->sel[i + SETTLE_AHEAD]->c.slot);
		/* Nearly every page arrives: that case skips settle_status()'s call. */
		if (st == target) {
			settle_moved(p, p->sel[i], target, p->sizes[i], now);
			moved++;
		} else {
			moved += settle_status(p, cfg, p->sel[i], st, target, p->sizes[i],
					       can_defer, now);
		}
	}
	flush_promoted(p);
	return moved;
}

/* Sizes of p->sel[0..n) into p->sizes: as the source saw them (the Accessed-bit scanner
 * knows THP heads from kpageflags), else from one page-size lookup for the rest. */
static void fetch_sizes(struct promoter *p, pid_t pid, size_t n)
{
	size_t k = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		enum hot_size z = p->sel[i]->c.size;

		p->sizes[i] = z == HOT_SIZE_HUGE ? p->huge_page : p->base_page;
		if (z == HOT_SIZE_UNKNOWN)
			p->vaddrs[k++] = p->sel[i]->c.vaddr;
	}
	if (k == 0)
		return;
	r = p->d.ops->page_sizes(p->ctx, pid, p->vaddrs, k, p->lookup);
	if (r < 0) {
		log_debug("page sizes of pid=%d unknown (%s), charging base pages", (int)pid,
			  strerror(-r));
		return;
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (p->sel[i]->c.size == HOT_SIZE_UNKNOWN)
			p->sizes[i] = p->lookup[k++];
}

/* ---- one process chunk ------------------------------------------------------------- */

/* ESRCH, or ESTALE (reused: the pid now names another process): settles rest[0..n) and
 * every deferred page of the process, then forgets it. Everything we hold is settled first:
 * forget_proc frees entries, and a later done() on a freed slot could land on a reused one. */
static void forget_process(struct promoter *p, uint32_t proc, pid_t pid, struct work_item *rest,
			   size_t n, bool reused, uint64_t now)
{
	size_t k = 0;

	if (reused) {
		stats_add(p->d.stats, ST_BATCHES_PID_REUSED, 1);
		log_notice("pid=%d now belongs to another process: its pages are not moved",
			   (int)pid);
	}
	if (p->down) {
		/* Cold pages hold no hot table entry; the process is the sources' to forget. */
		if (!reused)
			stats_demote_fail(p->d.stats, FAIL_NOPROC, 1);
		release(p);
		return;
	}
	for (size_t i = 0; i < n; i++)
		settle(p, &rest[i], HOT_DROP, now);
	for (size_t i = 0; i < p->nr_deferred; i++) {
		if (p->deferred[i].c.proc == proc)
			settle(p, &p->deferred[i], HOT_DROP, now);
		else
			p->deferred[k++] = p->deferred[i];
	}
	p->nr_deferred = k;
	if (!reused)
		stats_fail(p->d.stats, FAIL_NOPROC, 1);
	hot_table_forget_proc(p->d.hot, proc);
	procs_forget(p->d.procs, proc);
	release(p);
	stats_add(p->d.stats, ST_PROCESSES_FORGOTTEN, 1);
	if (!reused)
		log_info("pid=%d is gone, forgetting its pages", (int)pid);
}

/* The sample told where the page is: its last access saw it on a slow node, and the
 * accessing CPU's node (the target choice) is known, one of nr_nodes. Such a page needs no
 * placement query. */
static bool placement_known(const struct work_item *it, int nr_nodes)
{
	return it->c.on_slow && it->c.node >= 0 && it->c.node < nr_nodes;
}

/* Placement query (move_pages with nodes NULL) of the pages in items[0..n) whose placement
 * the sample did not give (p->known[i] false), in order into p->status. Returns how many were asked
 * about, 0 when the query failed (those pages are settled here), or -ESRCH (nothing settled). */
static long query_placement(struct promoter *p, const struct pghotd_config *cfg,
			    struct work_item *items, size_t n, bool *failed, uint64_t now)
{
	int nr_nodes = topo_of(p, cfg)->nr_nodes;
	size_t q = 0;
	long r;

	for (size_t i = 0; i < n; i++) {
		p->known[i] = placement_known(&items[i], nr_nodes);
		if (p->known[i])
			continue;
		p->addrs[q] = (void *)(uintptr_t)items[i].c.vaddr;
		p->status[q++] = STATUS_UNWRITTEN;
	}
	*failed = false;
	if (q == 0)
		return 0;
	r = do_move_pages(p, items[0].pid, q, NULL, p->status, 0);
	if (r == -ESRCH)
		return r;
	if (r < 0) {
		log_warning_errno((int)r, "placement query of pid=%d failed, retrying later",
				  (int)items[0].pid);
		*failed = true;
		for (size_t i = 0; i < n; i++)
			if (!p->known[i])
				fail(p, &items[i], FAIL_OTHER, HOT_RETRY, now);
		return 0;
	}
	return (long)q;
}

/* The node a queried page sits on (>= 0), or -1 after settling a page that is gone, not
 * on a slow node, or of unknown placement. */
static int judge_placement(struct promoter *p, const struct pghotd_config *cfg,
			   struct work_item *it, int st, uint64_t now)
{
	if (st == STATUS_UNWRITTEN) {
		fail(p, it, FAIL_OTHER, HOT_RETRY, now);
	} else if (st == -EFAULT || st == -ENOENT) {
		fail(p, it, FAIL_GONE, HOT_DROP, now);
	} else if (st < 0) {
		fail(p, it, FAIL_OTHER, HOT_DROP, now);
	} else if (p->down) {
		if (st == p->down_from)
			return st;
		stats_add(p->d.stats, ST_DEMOTE_SKIPPED, 1);
		p->tally.skipped++;
	} else if (!topology_node_is_slow(topo_of(p, cfg), st)) {
		stats_add(p->d.stats, ST_PROMOTE_SKIPPED_FAST, 1);
		p->tally.skipped++;
		settle(p, it, HOT_DROP, now);
	} else {
		return st;
	}
	return -1;
}

/* Keeps in p->sel the pages still on a slow node that have a target (in p->nodes), settles
 * the rest. A page whose sample gave its placement skips the query; the others are asked
 * about in one move_pages call. Demoting, the pages still on down_from are kept, all bound for
 * the node pick_target() gives. Returns how many were kept, or -ESRCH (none settled). */
static long select_slow(struct promoter *p, const struct pghotd_config *cfg,
			struct work_item *items, size_t n, uint64_t now)
{
	bool failed;
	long q = query_placement(p, cfg, items, n, &failed, now);
	size_t k = 0, qi = 0;

	if (q == -ESRCH) {
		for (size_t i = 0; i < n; i++)
			settle(p, &items[i], HOT_DROP, now);
		return q;
	}
	p->memo_valid = false;
	refresh_free_once(p, cfg); /* once per interval: pick_target() judges room by it */
	for (size_t i = 0; i < n; i++) {
		int where = -1, target;

		if (!p->known[i]) {
			if (failed)
				continue; /* settled by query_placement() */
			where = judge_placement(p, cfg, &items[i], p->status[qi++], now);
			if (where < 0)
				continue;
		}
		target = pick_target(p, cfg, items[i].c.node, where);
		if (p->exchanging && target >= 0 && !book_room(p, cfg, target, &items[i]))
			target = -1;
		if (target < 0) {
			/* Every target is full or paused: ask demotion for room. The page waits on
			 * the deferred list for the next interval, whose demote() makes that room
			 * first, up to max_retries intervals; with no one to ask, or waited out,
			 * it goes back to counting. */
			if (want_room(p, cfg, &items[i], where) &&
			    items[i].retries < cfg->promotion.max_retries) {
				items[i].retries++;
				defer(p, &items[i]);
			} else {
				settle(p, &items[i], HOT_RETRY, now);
			}
			continue;
		}
		p->sel[k] = &items[i];
		p->nodes[k++] = target;
	}
	return (long)k;
}

/* Takes tokens for p->sel[0..n) in order, deferring each page the bucket cannot pay for
 * (a base page may still fit where a THP did not). Compacts the paid pages to the front
 * and returns how many there are. */
static size_t charge(struct promoter *p, size_t n)
{
	size_t paid = 0;

	if (p->cur->rate == 0)
		return n; /* unlimited: every take would succeed */
	for (size_t i = 0; i < n; i++) {
		if (!token_bucket_take(p->cur, p->sizes[i])) {
			p->limited = true;
			count_rate_limited(p, 1);
			defer(p, p->sel[i]);
			continue;
		}
		p->sel[paid] = p->sel[i];
		p->nodes[paid] = p->nodes[i];
		p->sizes[paid++] = p->sizes[i];
	}
	return paid;
}

static void dry_run(struct promoter *p, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++) {
		log_debug("would %s pid=%d addr=0x%" PRIx64 " to node %d",
			  p->down ? "demote" : "promote", (int)p->sel[i]->pid, p->sel[i]->c.vaddr,
			  p->nodes[i]);
		p->tally.dry_bytes += p->sizes[i];
		/* Settled as promoted so the cooldown spaces out repeated decisions. */
		settle(p, p->sel[i], HOT_PROMOTED, now);
	}
	stats_add(p->d.stats, p->down ? ST_DEMOTE_DRY_RUN : ST_PROMOTE_DRY_RUN, n);
	p->tally.dry += n;
}

static long process_chunk(struct promoter *p, const struct pghotd_config *cfg,
			  struct work_item *items, size_t n, uint64_t now)
{
	long k = select_slow(p, cfg, items, n, now);
	size_t paid;
	int r;

	if (k <= 0)
		return k;
	fetch_sizes(p, items[0].pid, (size_t)k);
	paid = charge(p, (size_t)k);
	if (paid == 0)
		return 0;
	if (cfg->dry_run) {
		dry_run(p, paid, now);
		return (long)paid;
	}
	p->charged = true;
	/* The pid was resolved when the pages were gathered; a process that exited since and
	 * whose pid was reused would have the new process's pages moved. */
	r = procs_verify(p->d.procs, items[0].c.proc);
	if (r == -ESTALE || r == -ESRCH) {
		for (size_t i = 0; i < paid; i++)
			token_bucket_refund(p->cur, p->sizes[i]);
		settle_all(p, p->sel, paid, now);
		return r;
	}
	return move_selected(p, cfg, items[0].pid, paid, !p->down, now);
}

/* ---- one interval ------------------------------------------------------------------ */

static int by_proc_seq(const void *a, const void *b)
{
	const struct work_item *x = a, *y = b;

	if (x->c.proc != y->c.proc)
		return x->c.proc < y->c.proc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_group_seq(const void *a, const void *b)
{
	const struct work_item *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_vaddr(const void *a, const void *b)
{
	const struct work_item *x = a, *y = b;

	return x->c.vaddr < y->c.vaddr ? -1 : x->c.vaddr > y->c.vaddr;
}

/* Groups the work by process, keeping arrival order: processes in the order of their oldest
 * page, pages of one process oldest first. Sorting by handle or address instead would let
 * low handles and low addresses starve the rest whenever the rate limit bites. */
static void group_work(struct promoter *p)
{
	size_t i = 0;

	if (p->one_proc)
		return;
	qsort(p->work, p->nr_work, sizeof(*p->work), by_proc_seq);
	while (i < p->nr_work) {
		size_t end = i;

		while (end < p->nr_work && p->work[end].c.proc == p->work[i].c.proc)
			p->work[end++].group = p->work[i].seq;
		i = end;
	}
	qsort(p->work, p->nr_work, sizeof(*p->work), by_group_seq);
}

/* Within one move_pages call order does not matter to the kernel; ascending addresses let
 * the page-size lookup scan each region once. */
static void sort_chunk(struct work_item *items, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (items[i - 1].c.vaddr > items[i].c.vaddr) {
			qsort(items, n, sizeof(*items), by_vaddr);
			return;
		}
	}
}

/* The last process handle gather() resolved to a pid (handles are never 0). */
struct pid_memo {
	uint32_t proc;
	pid_t pid;
};

/* Resolves c's process to memo (a new run of pages); false, after settling c, when the
 * process is gone. */
static bool memo_resolve(struct promoter *p, const struct hot_candidate *c, struct pid_memo *memo,
			 uint64_t now)
{
	if (procs_pid(p->d.procs, c->proc, &memo->pid) < 0) {
		memo->proc = 0;
		fail(p, &(struct work_item){.c = *c}, FAIL_NOPROC, HOT_DROP, now);
		return false;
	}
	memo->proc = c->proc;
	return true;
}

/* Appends candidate c (popped in place, or a deferred page with its retries) to the work
 * array with its process's pid, or settles it if the process is gone. Pages of one process
 * come in runs: one lookup per run. */
static inline void work_add(struct promoter *p, const struct hot_candidate *c, uint16_t retries,
			    struct pid_memo *memo, uint64_t now)
{
	struct work_item *w = &p->work[p->nr_work];

	if (c->proc != memo->proc && !memo_resolve(p, c, memo, now))
		return;
	if (&w->c != c) /* popped in place and nothing dropped before it: already there */
		w->c = *c;
	w->pid = memo->pid;
	w->seq = (uint32_t)p->nr_work;
	w->group = 0;
	w->retries = retries;
	p->one_proc &= c->proc == p->work[0].c.proc;
	p->nr_work++;
}

/* Fills the work array: deferred pages first (first round only), then the queue, dropping
 * pages of processes that are gone. Returns how many were popped. */
static size_t gather(struct promoter *p, bool first_round, uint64_t now)
{
	struct pid_memo memo = {0};
	size_t room, got, deferred = first_round ? p->nr_deferred : 0;

	p->nr_work = 0;
	p->one_proc = true;
	/* The deferred list is refilled only by process_work(), after this copy. */
	if (first_round) {
		p->nr_deferred = 0;
		for (size_t i = 0; i < deferred; i++)
			work_add(p, &p->deferred[i].c, p->deferred[i].retries, &memo, now);
	}
	room = PROMOTER_WORK_MAX - p->nr_work - p->nr_deferred;
	/* Straight into the work array; work_add() then compacts over pages it drops. */
	got = hot_table_pop_strided(p->d.hot, &p->work[p->nr_work].c, sizeof(*p->work), room);
	for (size_t i = 0, from = p->nr_work; i < got; i++)
		work_add(p, &p->work[from + i].c, 0, &memo, now);
	stats_add(p->d.stats, ST_PROMOTE_CANDIDATES, got);
	return got;
}

/* promotion.move_near_task: from the task's own CPU, the per-page TLB flush of a migration
 * (kernels before 6.4) needs no interrupt to another CPU for a single-threaded task. */
static bool go_near(struct promoter *p, const struct pghotd_config *cfg, pid_t pid)
{
	/* Once per process and interval: finding the task's CPU reads its /proc stat file. */
	if (pid == p->near_pid)
		return true;
	if (!cfg->promotion.move_near_task || cfg->dry_run || !p->d.ops->run_near ||
	    p->d.ops->run_near(p->ctx, pid) < 0)
		return false;
	p->near_pid = pid;
	return true;
}

/* Walks the grouped work array one process and one batch at a time. */
static long process_work(struct promoter *p, const struct pghotd_config *cfg, uint64_t now)
{
	unsigned batch = batch_size(cfg);
	long moved = 0;
	size_t i = 0, end = 0;
	bool near = false;

	while (i < p->nr_work) {
		size_t n;
		long r;

		/* End of this process's group: found once per group, not once per batch. */
		if (i >= end) {
			end = p->one_proc ? p->nr_work : i;
			while (end < p->nr_work && p->work[end].c.proc == p->work[i].c.proc)
				end++;
			near |= go_near(p, cfg, p->work[i].pid);
		}
		if (token_bucket_exhausted(p->cur)) {
			p->limited = true;
			count_rate_limited(p, end - i);
			for (; i < end; i++)
				defer(p, &p->work[i]);
			continue;
		}
		n = end - i < batch ? end - i : batch;
		if (!p->down) /* cold pages come coldest first, and need no size lookup */
			sort_chunk(&p->work[i], n);
		r = process_chunk(p, cfg, &p->work[i], n, now);
		if (r == -ESRCH || r == -ESTALE) {
			forget_process(p, p->work[i].c.proc, p->work[i].pid, &p->work[i + n],
				       end - i - n, r == -ESTALE, now);
			i = end;
			continue;
		}
		moved += r;
		i += n;
	}
	/* Stay where the last process ran: the next busy interval most likely wants the same CPU,
	 * and every affinity change costs the kernel a CPU stop. Released when idle. */
	p->near_pinned |= near;
	return moved;
}

/* A bucket of rate_mbps whose burst is one interval's worth, so an idle spell cannot bank a
 * flood; ready says whether it was set up before. */
static void bucket_begin(struct token_bucket *b, bool ready, unsigned rate_mbps,
			 unsigned interval_ms, uint64_t now)
{
	uint64_t rate = (uint64_t)rate_mbps * MIB;
	uint64_t burst = rate / 1000 * interval_ms + rate % 1000 * interval_ms / 1000;

	if (!ready)
		token_bucket_init(b, rate, burst, now);
	token_bucket_configure(b, rate, burst);
	token_bucket_refill(b, now);
}

static void begin_interval(struct promoter *p, const struct pghotd_config *cfg, uint64_t now)
{
	bucket_begin(&p->bucket, p->bucket_ready, cfg->promotion.rate_limit_mbps,
		     cfg->promotion.interval_ms, now);
	bucket_begin(&p->dbucket, p->bucket_ready, cfg->demotion.rate_limit_mbps,
		     cfg->promotion.interval_ms, now);
	p->bucket_ready = true;
	memset(&p->tally, 0, sizeof(p->tally));
	memset(&p->dtally, 0, sizeof(p->dtally));
	p->now = now;
	p->limited = false;
	p->free_fresh = false;
	p->near_pid = 0;
}

/* ---- demotion -----------------------------------------------------------------------
 *
 * At the start of an interval, before promotion, each fast node that needs room has its
 * coldest pages (from the cold list the Accessed-bit source fills) moved to the nearest
 * usable slow node, through the same chunks as promotion: placement query (the page must
 * still be on that fast node), page sizes, the demotion bucket, dry_run, move, per-page
 * status. A node needs room while its free memory is under demotion.free_target_percent, or
 * when hot pages found it full last interval (an exchange: as many bytes as those pages,
 * which promotion may then place there although the node stays short, book_room()). Cold
 * pages the bucket cannot pay for, busy ones, and those of a
 * full slow node stay where they are; the source offers them again later. */

static uint64_t pct_of(const struct topology *t, int n, unsigned pct)
{
	return t->node[n].mem_total / 100 * pct;
}

/* Bytes fast node n should shed this interval (0: none), and why. */
static uint64_t demote_need(const struct promoter *p, const struct pghotd_config *cfg, int n,
			    enum stat_demote_reason *why)
{
	const struct topology *t = topo_of(p, cfg);
	uint64_t free = t->node[n].mem_free, need = 0, want, room;

	if (t->node[n].mem_total == 0)
		return 0;
	want = pct_of(t, n, cfg->demotion.free_target_percent);
	if (want > free) {
		need = want - free;
		*why = DEMOTE_FREE_TARGET;
	}
	/* An exchange: as many bytes down as hot pages wait for, less the room still open. */
	room = exchange_room(p, n) ? p->credit[n] : 0;
	if (p->room_wanted[n] > room && p->room_wanted[n] - room > need) {
		need = p->room_wanted[n] - room;
		*why = DEMOTE_EXCHANGE;
	}
	return need;
}

/* Whether the source should measure idle ages on fast node n: from twice the free share at
 * which demotion starts, so pages have an age when it does. */
static bool demote_watch(const struct promoter *p, const struct pghotd_config *cfg, int n)
{
	unsigned level = cfg->demotion.free_target_percent > cfg->promotion.min_free_percent
			     ? cfg->demotion.free_target_percent
			     : cfg->promotion.min_free_percent;

	const struct topology *t = topo_of(p, cfg);

	if (p->room_wanted[n] || p->paused[n])
		return true;
	/* A node whose size is unknown cannot be judged short, as in node_usable(). */
	return t->node[n].mem_total && topology_free_percent(t, n) < 2 * level;
}

/* The usable slow node nearest to fast node from (ties by id), -1 when none. */
static int nearest_slow(struct promoter *p, const struct pghotd_config *cfg, int from)
{
	const struct topology *t = topo_of(p, cfg);
	int best = -1;

	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		if (!t->node[n].slow || !node_usable(p, cfg, n))
			continue;
		if (best < 0 || t->distance[from][n] < t->distance[from][best])
			best = n;
	}
	return best;
}

/* Appends cold page c to the work array, grouped by its procs handle like a hot page; false
 * (counted) when its process is gone or its pid now names another process, and false when the
 * page was promoted within promotion.cooldown_ms: sent down now, it could not come back up until
 * the cooldown ends (an exchange takes pages younger than the cooldown). */
static bool cold_add(struct promoter *p, const struct pghotd_config *cfg, const struct cold_page *c,
		     uint64_t now)
{
	int64_t h = c->proc ? (int64_t)c->proc : procs_handle(p->d.procs, c->pid);
	pid_t pid;

	if (h <= 0 || procs_pid(p->d.procs, (uint32_t)h, &pid) < 0 || pid != c->pid) {
		stats_demote_fail(p->d.stats, FAIL_NOPROC, 1);
		return false;
	}
	if (p->d.hot &&
	    hot_table_cooling(p->d.hot, (uint32_t)h, c->vaddr, now, cfg->promotion.cooldown_ms)) {
		p->tally.skipped++;
		return false;
	}
	p->work[p->nr_work] = (struct work_item){
	    .c = {.vaddr = c->vaddr,
		  .proc = (uint32_t)h,
		  .node = -1,
		  .slot = NO_SLOT,
		  .size = c->size},
	    .pid = pid,
	    .seq = (uint32_t)p->nr_work,
	};
	p->one_proc &= p->work[p->nr_work].c.proc == p->work[0].c.proc;
	p->nr_work++;
	return true;
}

/* Takes cold pages of node n worth need bytes (coldest first) into the work array, as many as
 * the bucket can pay for now; what the take returned beyond need goes back to the list.
 * Returns false when the list held fewer than were asked for. */
static bool take_cold(struct promoter *p, const struct pghotd_config *cfg, int n, uint64_t need,
		      uint64_t now)
{
	uint64_t max = need / p->base_page + 1, bytes = 0, min_idle;
	uint64_t paid = p->cur->tokens > 0 ? (uint64_t)p->cur->tokens / p->base_page : 0;
	size_t got, k = 0;

	p->one_proc = true;
	p->nr_work = 0;
	/* No more than the bucket can pay for now, the rest would only go back to the list; none
	 * when it cannot pay for a base page, unless it is full (a full bucket pays for a THP). */
	if (p->cur->rate && paid == 0 && p->cur->tokens < p->cur->burst)
		return true;
	if (p->cur->rate && paid < max)
		max = paid ? paid : 1;
	if (max > PROMOTER_WORK_MAX)
		max = PROMOTER_WORK_MAX;
	/* An exchange takes what the source offered; the free target waits for the idle time. */
	min_idle = p->why == DEMOTE_EXCHANGE ? config_demotion_exchange_ms(cfg)
					     : config_demotion_idle_ms(cfg);
	got = cold_list_take(p->d.cold, n, now, config_demotion_trust_ms(cfg), min_idle, p->cold,
			     max);
	for (; k < got && bytes < need; k++) {
		const struct cold_page *c = &p->cold[k];

		if (cold_add(p, cfg, c, now))
			bytes += c->size == HOT_SIZE_HUGE ? p->huge_page : p->base_page;
	}
	cold_list_offer(p->d.cold, p->cold + k, got - k);
	stats_add(p->d.stats, ST_DEMOTE_CANDIDATES, k);
	return got == max;
}

/* An exchange moved bytes off fast node n: the hot pages that wait for it may fill that much
 * although the node stays short (the trade leaves its use unchanged), until their source has
 * seen them again: they went back to counting, and are queued anew within a scan interval. */
static void grant_credit(struct promoter *p, const struct pghotd_config *cfg, int n, uint64_t bytes,
			 uint64_t now)
{
	uint64_t ttl = 2 * (uint64_t)cfg->sources.abit.scan_interval_ms;

	if (!bytes)
		return;
	if (now >= p->credit_until[n])
		p->credit[n] = 0;
	p->credit[n] += bytes;
	p->credit_until[n] = now + (ttl > EXCHANGE_MIN_TTL_MS ? ttl : EXCHANGE_MIN_TTL_MS);
	p->exchange_until =
	    p->exchange_until > p->credit_until[n] ? p->exchange_until : p->credit_until[n];
}

/* Moves up to need bytes of node n's coldest pages down. */
static void demote_node(struct promoter *p, const struct pghotd_config *cfg, int n, uint64_t need,
			uint64_t now)
{
	uint64_t before;
	bool enough;

	p->down_from = n;
	p->down_target = nearest_slow(p, cfg, n);
	if (p->down_target < 0)
		return;
	enough = take_cold(p, cfg, n, need, now);
	/* The list ran short: let the source offer again what it offered before, at most once
	 * per stale age (an offer older than that is dropped anyway), or for an exchange, which
	 * hot pages wait for, once per two scan intervals (the source looks at the node's pages
	 * again at once for it). */
	if (!enough &&
	    now - p->last_reoffer >= (p->why == DEMOTE_EXCHANGE
					  ? 2 * (uint64_t)cfg->sources.abit.scan_interval_ms
					  : config_demotion_trust_ms(cfg))) {
		cold_list_reoffer(p->d.cold);
		p->last_reoffer = now;
	}
	if (p->nr_work == 0)
		return;
	before = p->tally.bytes + p->tally.dry_bytes;
	group_work(p);
	process_work(p, cfg, now);
	p->nr_work = 0;
	if (p->why == DEMOTE_EXCHANGE)
		grant_credit(p, cfg, n, p->tally.bytes + p->tally.dry_bytes - before, now);
}

static void demote(struct promoter *p, const struct pghotd_config *cfg, uint64_t now)
{
	const struct topology *t = topo_of(p, cfg);
	uint64_t watch = 0;
	bool limited = p->limited, asked = false;

	if (!p->d.cold)
		return;
	if (!cfg->demotion.enabled) {
		/* Off (a reload may have turned it off): the source stops watching fast pages. */
		cold_list_want(p->d.cold, 0);
		p->needy = false;
		return;
	}
	for (int n = 0; n < TOPO_MAX_NODES; n++)
		asked |= p->room_wanted[n] != 0;
	/* Free memory is read once per DEMOTE_CHECK_MS unless promotion asked for room or the
	 * last look found a node short: an idle promoter on a machine with free DRAM does not
	 * read node meminfo every interval. */
	if (!asked && !p->needy && p->last_check && p->check_gen == cfg->generation &&
	    now - p->last_check < DEMOTE_CHECK_MS)
		return;
	p->last_check = now;
	p->check_gen = cfg->generation; /* a reload is taken up at once */
	p->needy = false;
	refresh_free_once(p, cfg);
	p->down = true;
	p->cur = &p->dbucket;
	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		enum stat_demote_reason why = DEMOTE_FREE_TARGET;
		uint64_t need;

		if (!topology_node_is_fast(t, n))
			continue;
		if (demote_watch(p, cfg, n))
			watch |= UINT64_C(1) << n;
		need = demote_need(p, cfg, n, &why);
		p->why = why;
		p->needy |= need != 0;
		if (need)
			demote_node(p, cfg, n, need, now);
	}
	cold_list_want(p->d.cold, watch);
	p->down = false;
	p->cur = &p->bucket;
	p->limited = limited;
	p->dtally = p->tally;
	memset(&p->tally, 0, sizeof(p->tally));
	memset(p->room_wanted, 0, sizeof(p->room_wanted));
	if (p->dtally.moved)
		p->free_fresh = false; /* promotion judges the room just made */
}

static void log_interval(const struct promoter *p)
{
	const struct interval_tally *d = &p->dtally;
	const struct interval_tally *t = &p->tally;

	/* PGHOTD_EVENT=demote: an operator filters the journal for what left the fast tier. */
	if (d->dry)
		log_event(LOG_LVL_INFO, "demote",
			  "dry run: would demote %" PRIu64 " pages (%" PRIu64
			  " KiB), skipped %" PRIu64 ", failed %" PRIu64,
			  d->dry, d->dry_bytes >> 10, d->skipped, d->failed);
	else if (d->moved || d->failed)
		log_event(LOG_LVL_INFO, "demote",
			  "demoted %" PRIu64 " pages (%" PRIu64 " KiB), left %" PRIu64
			  ", skipped %" PRIu64 ", failed %" PRIu64,
			  d->moved, d->bytes >> 10, d->deferred, d->skipped, d->failed);

	if (t->dry)
		log_info("dry run: would promote %" PRIu64 " pages (%" PRIu64
			 " KiB), deferred %" PRIu64 ", skipped %" PRIu64 ", failed %" PRIu64,
			 t->dry, t->dry_bytes >> 10, t->deferred, t->skipped, t->failed);
	else if (t->moved || t->deferred || t->failed)
		log_info("promoted %" PRIu64 " pages (%" PRIu64 " KiB), deferred %" PRIu64
			 ", skipped %" PRIu64 ", failed %" PRIu64,
			 t->moved, t->bytes >> 10, t->deferred, t->skipped, t->failed);
}

int promoter_run_once(struct promoter *p, const struct pghotd_config *cfg, uint64_t now_ms)
{
	long moved = 0;

	begin_interval(p, cfg, now_ms);
	demote(p, cfg, now_ms);
	p->exchanging = now_ms < p->exchange_until;
	for (int round = 0; round < MAX_ROUNDS && !p->limited; round++) {
		size_t popped = gather(p, round == 0, now_ms);

		if (p->nr_work == 0 && popped > 0)
			continue; /* every page was of a gone process: take more */
		if (p->nr_work == 0) {
			if (round == 0 && p->near_pinned && p->d.ops->run_anywhere) {
				p->d.ops->run_anywhere(p->ctx); /* idle: let it run anywhere */
				p->near_pinned = false;
			}
			break;
		}
		group_work(p);
		moved += process_work(p, cfg, now_ms);
		p->nr_work = 0;
		if (popped == 0)
			break;
	}
	release(p);
	log_interval(p);
	return moved > INT_MAX ? INT_MAX : (int)moved;
}

int promoter_move_batch(struct promoter *p, const struct pghotd_config *cfg, pid_t pid,
			const struct hot_candidate *c, size_t n, int target, int *status,
			bool settle_it, uint64_t now_ms)
{
	struct work_item items[PROMOTER_MAX_BATCH];
	long r;

	if (n > PROMOTER_MAX_BATCH || target < 0 || target >= TOPO_MAX_NODES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		items[i] = (struct work_item){.c = c[i], .pid = pid};
		p->sel[i] = &items[i];
		p->nodes[i] = target;
	}
	fetch_sizes(p, pid, n);
	release(p); /* one call is its own interval */
	if (!settle_it) {
		/* No hot table behind the candidates: count nothing, report statuses only. */
		for (size_t i = 0; i < n; i++) {
			p->addrs[i] = (void *)(uintptr_t)c[i].vaddr;
			status[i] = STATUS_UNWRITTEN;
		}
		r = p->d.ops->move_pages(p->ctx, pid, n, p->addrs, p->nodes, status, MPOL_MF_MOVE);
		if (r < 0)
			return (int)r;
		r = 0;
		for (size_t i = 0; i < n; i++)
			r += status[i] == target;
		return (int)r;
	}
	memset(&p->tally, 0, sizeof(p->tally));
	p->charged = false;
	r = move_selected(p, cfg, pid, n, false, now_ms);
	memcpy(status, p->status, n * sizeof(*status));
	if (r == -ESRCH && n > 0)
		forget_process(p, c[0].proc, pid, NULL, 0, false, now_ms);
	return (int)r;
}

/* ---- thread ------------------------------------------------------------------------ */

void promoter_kick(struct promoter *p)
{
	/* acq_rel: pairs with the release store that clears the flag in worker_sleep(); only
	 * the kicker that flips it writes, so a busy queue costs one syscall per wake-up. */
	if (!atomic_exchange_explicit(&p->kicked, true, memory_order_acq_rel))
		worker_wake(&p->w);
}

void promoter_kick_if_full(struct promoter *p)
{
	if (hot_table_queued(p->d.hot) >= p->d.kick_mark)
		promoter_kick(p);
}

/* Sleeps until the next interval, or until kicked unless this interval was rate limited
 * (waking early then would only find an empty bucket). */
static void wait_interval(struct promoter *p, unsigned interval_ms)
{
	uint64_t start = p->d.ops->now_ms(p->ctx);
	uint64_t deadline = start + interval_ms, now = start;

	while (!worker_stopping(&p->w) && now < deadline) {
		if (worker_sleep(&p->w, (int)(deadline - now), &p->kicked) && !p->limited)
			return;
		now = p->d.ops->now_ms(p->ctx);
	}
}

static void *promoter_thread(void *arg)
{
	struct promoter *p = arg;

	while (!worker_stopping(&p->w)) {
		const struct pghotd_config *cfg = config_pub_get(p->pub, p->slot);
		int r = promoter_run_once(p, cfg, p->d.ops->now_ms(p->ctx));

		if (r < 0)
			log_warning_errno(r, "promotion interval failed");
		wait_interval(p, cfg->promotion.interval_ms ? cfg->promotion.interval_ms : 1);
	}
	return NULL;
}

int promoter_start(struct promoter *p, struct config_pub *pub)
{
	int slot, r;

	if (p->w.running)
		return -EALREADY;
	slot = config_pub_register(pub);
	if (slot < 0)
		return log_error_errno(slot, "cannot register the promoter with the config");
	p->pub = pub;
	p->slot = slot;
	r = worker_start(&p->w, promoter_thread, p);
	if (r < 0) {
		config_pub_unregister(pub, slot);
		p->slot = -1;
	}
	return r;
}

void promoter_stop(struct promoter *p)
{
	if (!p->w.running)
		return;
	worker_stop(&p->w);
	config_pub_unregister(p->pub, p->slot);
	p->slot = -1;
}
