/* mover: see mover.h for the contract. */
#include <errno.h>
#include <inttypes.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "mover/mover.h"
#include "mover/node_room.h"
#include "table/procs.h"

/* Entries prefetched ahead of the one being settled (bench_promoter: 64 beat 16 and 256). */
#define SETTLE_AHEAD 64
#define MIB	     (UINT64_C(1) << 20)

static unsigned batch_size(const struct pghotd_config *cfg)
{
	unsigned b = cfg->promotion.batch;

	if (b == 0)
		return 1;
	return b > PROMOTER_MAX_BATCH ? PROMOTER_MAX_BATCH : b;
}

void mover_dir_begin(struct move_dir *d, bool ready, unsigned rate_mbps, unsigned interval_ms,
		     uint64_t now)
{
	uint64_t rate = (uint64_t)rate_mbps * MIB;
	uint64_t burst = rate / 1000 * interval_ms + rate % 1000 * interval_ms / 1000;

	if (!ready)
		token_bucket_init(&d->bucket, rate, burst, now);
	token_bucket_configure(&d->bucket, rate, burst);
	token_bucket_refill(&d->bucket, now);
	memset(&d->tally, 0, sizeof(d->tally));
	d->limited = false;
}

void mover_release(struct mover *m)
{
	if (m->ops->release)
		m->ops->release(m->ctx);
}

/* ---- settling ---------------------------------------------------------------------- */

/* A page the bucket cannot pay for this interval, kept for the next one if d keeps pages. */
static void defer(struct mover *m, struct move_dir *d, const struct work_item *it)
{
	d->tally.deferred++;
	if (d->kind->keep)
		d->kind->keep(m, it);
}

static void settle_all(struct mover *m, struct move_dir *d, struct work_item **sel, size_t n,
		       uint64_t now)
{
	for (size_t i = 0; i < n; i++)
		d->kind->settle(m, sel[i], HOT_DROP, now);
}

void mover_fail(struct mover *m, struct move_dir *d, const struct work_item *it,
		enum stat_fail_reason why, enum hot_outcome o, uint64_t now)
{
	d->kind->count_fail(m->stats, why, 1);
	d->tally.failed++;
	d->kind->settle(m, it, o, now);
}

static void count_rate_limited(struct mover *m, const struct move_dir *d, uint64_t n)
{
	stats_add(m->stats, d->kind->rate_limited, n);
}

/* ---- one move_pages call ----------------------------------------------------------- */

/* Counts the pages of process proc that moved in this call. */
static void flush_moved(struct mover *m, struct move_dir *d, uint32_t proc)
{
	for (int n = 0; n < TOPO_MAX_NODES; n++) {
		if (!m->node_pages[n])
			continue;
		d->kind->count_moved(m, d, proc, n, m->node_pages[n], m->node_bytes[n]);
		d->tally.moved += m->node_pages[n];
		d->tally.bytes += m->node_bytes[n];
		m->node_pages[n] = 0;
		m->node_bytes[n] = 0;
	}
}

/* A page that reached target: counted for flush_moved() and settled. */
static inline void settle_moved(struct mover *m, struct move_dir *d, const struct work_item *it,
				int target, uint64_t size, uint64_t now)
{
	m->node_pages[target]++;
	m->node_bytes[target] += size;
	d->kind->settle(m, it, HOT_PROMOTED, now);
}

/* Settles one page after a move by its status. can_defer: keep -EBUSY/-ENOMEM pages waiting
 * (run_once) rather than handing them back (promoter_move_batch). */
static bool settle_status(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			  struct work_item *it, int st, int target, uint64_t size, bool charged,
			  bool can_defer, uint64_t now)
{
	if (st == target) {
		settle_moved(m, d, it, target, size, now);
		return true;
	}
	if (charged)
		token_bucket_refund(&d->bucket, size);
	node_room_unbook_loan(m, target, it);
	switch (st) {
	case -EBUSY:
		if (can_defer && it->retries < cfg->promotion.max_retries) {
			stats_fail(m->stats, FAIL_BUSY, 1);
			it->retries++;
			defer(m, d, it);
		} else {
			mover_fail(m, d, it, FAIL_BUSY, can_defer ? HOT_DROP : HOT_RETRY, now);
		}
		break;
	case -ENOMEM:
		node_room_pause(m, d, target);
		if (can_defer) {
			stats_fail(m->stats, FAIL_NOMEM, 1);
			defer(m, d, it);
		} else {
			mover_fail(m, d, it, FAIL_NOMEM, HOT_RETRY, now);
		}
		break;
	case -EACCES:
		mover_fail(m, d, it, FAIL_SHARED, HOT_DROP, now);
		break;
	case -EFAULT:
	case -ENOENT:
		mover_fail(m, d, it, FAIL_GONE, HOT_DROP, now);
		break;
	default:
		/* Unwritten (not trusted), another node than asked, or an unknown error: the
		 * page did not reach target; let the hot table offer it again. */
		mover_fail(m, d, it, FAIL_OTHER,
			   st >= 0 || st == MOVER_STATUS_UNWRITTEN ? HOT_RETRY : HOT_DROP, now);
		break;
	}
	return false;
}

/* move_pages(2) through the ops. A whole-call -EINVAL means the task has no memory left
 * (it is exiting: the kernel finds no mm), since pghotd's flags and nodes are always valid:
 * it is reported as -ESRCH so the process is forgotten at once, not retried every interval. */
static long do_move_pages(struct mover *m, pid_t pid, unsigned long n, const int *nodes,
			  int *status, int flags)
{
	long r = m->ops->move_pages(m->ctx, pid, n, m->addrs, nodes, status, flags);

	return r == -EINVAL ? -ESRCH : r;
}

/* A whole-call failure of the move: every page is refunded and handed back. */
static void fail_call(struct mover *m, struct move_dir *d, pid_t pid, size_t n, long r,
		      bool charged, uint64_t now)
{
	bool retry = r != -EPERM && r != -EACCES;

	log_warning_errno((int)r, "move_pages pid=%d (%zu pages) failed, %s", (int)pid, n,
			  retry ? "retrying later" : "dropping them");
	for (size_t i = 0; i < n; i++) {
		if (charged)
			token_bucket_refund(&d->bucket, m->sizes[i]);
		node_room_unbook_loan(m, m->nodes[i], m->sel[i]);
		mover_fail(m, d, m->sel[i], FAIL_OTHER, retry ? HOT_RETRY : HOT_DROP, now);
	}
}

long mover_move_selected(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			 pid_t pid, size_t n, bool charged, bool can_defer, uint64_t now)
{
	long r, moved = 0;

	for (size_t i = 0; i < n; i++) {
		m->addrs[i] = (void *)(uintptr_t)m->sel[i]->c.vaddr;
		m->status[i] = MOVER_STATUS_UNWRITTEN;
	}
	r = do_move_pages(m, pid, n, m->nodes, m->status, MPOL_MF_MOVE);
	if (r == -ESRCH) {
		for (size_t i = 0; i < n; i++)
			node_room_unbook_loan(m, m->nodes[i], m->sel[i]);
		settle_all(m, d, m->sel, n, now);
		return r;
	}
	if (r < 0) {
		fail_call(m, d, pid, n, r, charged, now);
		return 0;
	}
	/* The entries to settle are not in the cache (pop() read the queue's copies, and the
	 * move walked n pages' worth of kernel data): keep SETTLE_AHEAD of them in flight, so
	 * their misses overlap each other and the settling CASes. */
	for (size_t i = 0; i < n && i < SETTLE_AHEAD; i++)
		hot_table_prefetch(m->hot, m->sel[i]->c.slot);
	for (size_t i = 0; i < n; i++) {
		int st = m->status[i], target = m->nodes[i];

		if (i + SETTLE_AHEAD < n)
			hot_table_prefetch(m->hot, m->sel[i + SETTLE_AHEAD]->c.slot);
		/* Nearly every page arrives: that case skips settle_status()'s call. */
		if (st == target) {
			settle_moved(m, d, m->sel[i], target, m->sizes[i], now);
			moved++;
		} else {
			moved += settle_status(m, d, cfg, m->sel[i], st, target, m->sizes[i],
					       charged, can_defer, now);
		}
	}
	if (n)
		flush_moved(m, d, m->sel[0]->c.proc); /* every page of one process */
	return moved;
}

/* Sizes as the source saw them (the Accessed-bit scanner knows THP heads from kpageflags),
 * else from one page-size lookup for the rest. */
void mover_fetch_sizes(struct mover *m, pid_t pid, size_t n)
{
	size_t k = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		enum hot_size z = m->sel[i]->c.size;

		m->sizes[i] = z == HOT_SIZE_HUGE ? m->huge_page : m->base_page;
		if (z == HOT_SIZE_UNKNOWN)
			m->vaddrs[k++] = m->sel[i]->c.vaddr;
	}
	if (k == 0)
		return;
	r = m->ops->page_sizes(m->ctx, pid, m->vaddrs, k, m->lookup);
	if (r < 0) {
		log_debug("page sizes of pid=%d unknown (%s), charging base pages", (int)pid,
			  strerror(-r));
		return;
	}
	k = 0;
	for (size_t i = 0; i < n; i++)
		if (m->sel[i]->c.size == HOT_SIZE_UNKNOWN)
			m->sizes[i] = m->lookup[k++];
}

/* ---- one process chunk ------------------------------------------------------------- */

void mover_forget_process(struct mover *m, struct move_dir *d, uint32_t proc, pid_t pid,
			  struct work_item *rest, size_t n, bool reused, uint64_t now)
{
	if (reused) {
		stats_add(m->stats, ST_BATCHES_PID_REUSED, 1);
		log_notice("pid=%d now belongs to another process: its pages are not moved",
			   (int)pid);
	}
	d->kind->forget(m, proc, pid, rest, n, reused, now);
}

/* The sample told where the page is: its last access saw it on a slow node, and the
 * accessing CPU's node (the target choice) is known, one of nr_nodes. Such a page needs no
 * placement query. */
static bool placement_known(const struct work_item *it, int nr_nodes)
{
	return it->c.on_slow && it->c.node >= 0 && it->c.node < nr_nodes;
}

/* Placement query (move_pages with nodes NULL) of the pages in items[0..n) whose placement
 * the sample did not give (m->known[i] false), in order into m->status. Returns how many were
 * asked about, 0 when the query failed (those pages are settled here), or -ESRCH (nothing
 * settled). */
static long query_placement(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			    struct work_item *items, size_t n, bool *failed, uint64_t now)
{
	int nr_nodes = mover_topo(m, cfg)->nr_nodes;
	size_t q = 0;
	long r;

	for (size_t i = 0; i < n; i++) {
		m->known[i] = placement_known(&items[i], nr_nodes);
		if (m->known[i])
			continue;
		m->addrs[q] = (void *)(uintptr_t)items[i].c.vaddr;
		m->status[q++] = MOVER_STATUS_UNWRITTEN;
	}
	*failed = false;
	if (q == 0)
		return 0;
	r = do_move_pages(m, items[0].pid, q, NULL, m->status, 0);
	if (r == -ESRCH)
		return r;
	if (r < 0) {
		log_warning_errno((int)r, "placement query of pid=%d failed, retrying later",
				  (int)items[0].pid);
		*failed = true;
		for (size_t i = 0; i < n; i++)
			if (!m->known[i])
				mover_fail(m, d, &items[i], FAIL_OTHER, HOT_RETRY, now);
		return 0;
	}
	return (long)q;
}

/* The node a queried page sits on (>= 0), or -1 after settling a page that is gone, of
 * unknown placement, or not where the direction moves pages from. */
static int judge_placement(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			   struct work_item *it, int st, uint64_t now)
{
	if (st == MOVER_STATUS_UNWRITTEN)
		mover_fail(m, d, it, FAIL_OTHER, HOT_RETRY, now);
	else if (st == -EFAULT || st == -ENOENT)
		mover_fail(m, d, it, FAIL_GONE, HOT_DROP, now);
	else if (st < 0)
		mover_fail(m, d, it, FAIL_OTHER, HOT_DROP, now);
	else
		return d->kind->placed(m, d, cfg, it, st, now);
	return -1;
}

/* A page with no target: every one is full or paused. It asks demotion for room and waits on
 * the deferred list: promoter_run_once() runs that demotion right after and takes the page
 * again in the same interval once it made room; otherwise the page waits for the intervals
 * after, up to config_exchange_wait_intervals(); with no one to ask, or waited out, it goes
 * back to counting. */
static void no_target(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
		      struct work_item *it, int where, uint64_t now)
{
	if (node_room_want(m, cfg, it, where) &&
	    it->retries < config_exchange_wait_intervals(cfg)) {
		it->retries++;
		defer(m, d, it);
	} else {
		d->kind->settle(m, it, HOT_RETRY, now);
	}
}

/* Keeps in m->sel the pages still where d moves them from that have a target (in m->nodes),
 * settles the rest. A page whose sample gave its placement skips the query; the others are
 * asked about in one move_pages call. Returns how many were kept, or -ESRCH (none settled). */
static long select_pages(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			 struct work_item *items, size_t n, uint64_t now)
{
	bool failed;
	long q = query_placement(m, d, cfg, items, n, &failed, now);
	size_t k = 0, qi = 0;

	if (q == -ESRCH) {
		for (size_t i = 0; i < n; i++)
			d->kind->settle(m, &items[i], HOT_DROP, now);
		return q;
	}
	m->memo_valid = false;
	node_room_refresh_once(m, cfg); /* once per interval: the target choice judges room */
	for (size_t i = 0; i < n; i++) {
		int where = -1, target;

		if (!m->known[i]) {
			if (failed)
				continue; /* settled by query_placement() */
			where = judge_placement(m, d, cfg, &items[i], m->status[qi++], now);
			if (where < 0)
				continue;
		}
		target = d->kind->target(m, d, cfg, items[i].c.node, where);
		if (target >= 0 && !node_room_book(m, cfg, target, &items[i]))
			target = -1;
		if (target < 0) {
			no_target(m, d, cfg, &items[i], where, now);
			continue;
		}
		node_room_take(m, cfg, target, &items[i]);
		m->sel[k] = &items[i];
		m->nodes[k++] = target;
	}
	return (long)k;
}

/* Takes tokens for m->sel[0..n) in order, deferring each page the bucket cannot pay for
 * (a base page may still fit where a THP did not). Compacts the paid pages to the front
 * and returns how many there are. */
static size_t charge(struct mover *m, struct move_dir *d, size_t n)
{
	size_t paid = 0;

	if (d->bucket.rate == 0)
		return n; /* unlimited: every take would succeed */
	for (size_t i = 0; i < n; i++) {
		if (!token_bucket_take(&d->bucket, m->sizes[i])) {
			d->limited = true;
			count_rate_limited(m, d, 1);
			node_room_unbook_loan(m, m->nodes[i], m->sel[i]);
			defer(m, d, m->sel[i]);
			continue;
		}
		m->sel[paid] = m->sel[i];
		m->nodes[paid] = m->nodes[i];
		m->sizes[paid++] = m->sizes[i];
	}
	return paid;
}

static void dry_run(struct mover *m, struct move_dir *d, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++) {
		log_debug("would %s pid=%d addr=0x%" PRIx64 " to node %d", d->kind->verb,
			  (int)m->sel[i]->pid, m->sel[i]->c.vaddr, m->nodes[i]);
		d->tally.dry_bytes += m->sizes[i];
		/* Settled as promoted so the cooldown spaces out repeated decisions. */
		d->kind->settle(m, m->sel[i], HOT_PROMOTED, now);
	}
	stats_add(m->stats, d->kind->dry_run, n);
	d->tally.dry += n;
}

static long process_chunk(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			  struct work_item *items, size_t n, uint64_t now)
{
	long k = select_pages(m, d, cfg, items, n, now);
	size_t paid;
	int r;

	if (k <= 0)
		return k;
	mover_fetch_sizes(m, items[0].pid, (size_t)k);
	paid = charge(m, d, (size_t)k);
	if (paid == 0)
		return 0;
	if (cfg->dry_run) {
		dry_run(m, d, paid, now);
		return (long)paid;
	}
	/* The pid was resolved when the pages were gathered; a process that exited since and
	 * whose pid was reused would have the new process's pages moved. */
	r = procs_verify(m->procs, items[0].c.proc);
	if (r == -ESTALE || r == -ESRCH) {
		for (size_t i = 0; i < paid; i++) {
			token_bucket_refund(&d->bucket, m->sizes[i]);
			node_room_unbook_loan(m, m->nodes[i], m->sel[i]);
		}
		settle_all(m, d, m->sel, paid, now);
		return r;
	}
	return mover_move_selected(m, d, cfg, items[0].pid, paid, true, d->kind->keep != NULL, now);
}

/* ---- the work array ---------------------------------------------------------------- */

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

/* Processes in the order of their oldest page, pages of one process oldest first. Sorting by
 * handle or address instead would let low handles and low addresses starve the rest whenever
 * the rate limit bites. */
void mover_group_work(struct mover *m)
{
	size_t i = 0;

	if (m->one_proc)
		return;
	qsort(m->work, m->nr_work, sizeof(*m->work), by_proc_seq);
	while (i < m->nr_work) {
		size_t end = i;

		while (end < m->nr_work && m->work[end].c.proc == m->work[i].c.proc)
			m->work[end++].group = m->work[i].seq;
		i = end;
	}
	qsort(m->work, m->nr_work, sizeof(*m->work), by_group_seq);
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

/* promotion.move_near_task: from the task's own CPU, the per-page TLB flush of a migration
 * (kernels before 6.4) needs no interrupt to another CPU for a single-threaded task. */
static bool go_near(struct mover *m, const struct pghotd_config *cfg, pid_t pid)
{
	/* Once per process and interval: finding the task's CPU reads its /proc stat file. */
	if (pid == m->near_pid)
		return true;
	if (!cfg->promotion.move_near_task || cfg->dry_run || !m->ops->run_near ||
	    m->ops->run_near(m->ctx, pid) < 0)
		return false;
	m->near_pid = pid;
	return true;
}

/* The bucket is empty: the rest of this process's pages, work[i..end), wait. */
static void defer_rest(struct mover *m, struct move_dir *d, size_t i, size_t end)
{
	d->limited = true;
	count_rate_limited(m, d, end - i);
	for (; i < end; i++)
		defer(m, d, &m->work[i]);
}

long mover_process_work(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			uint64_t now)
{
	unsigned batch = batch_size(cfg);
	long moved = 0;
	size_t i = 0, end = 0;
	bool near = false;

	while (i < m->nr_work) {
		size_t n;
		long r;

		/* End of this process's group: found once per group, not once per batch. */
		if (i >= end) {
			end = m->one_proc ? m->nr_work : i;
			while (end < m->nr_work && m->work[end].c.proc == m->work[i].c.proc)
				end++;
			near |= go_near(m, cfg, m->work[i].pid);
		}
		if (token_bucket_exhausted(&d->bucket)) {
			defer_rest(m, d, i, end);
			i = end;
			continue;
		}
		n = end - i < batch ? end - i : batch;
		if (d->kind->by_address)
			sort_chunk(&m->work[i], n);
		r = process_chunk(m, d, cfg, &m->work[i], n, now);
		if (r == -ESRCH || r == -ESTALE) {
			mover_forget_process(m, d, m->work[i].c.proc, m->work[i].pid,
					     &m->work[i + n], end - i - n, r == -ESTALE, now);
			i = end;
			continue;
		}
		moved += r;
		i += n;
	}
	/* Stay where the last process ran: the next busy interval most likely wants the same CPU,
	 * and every affinity change costs the kernel a CPU stop. Released when idle. */
	m->near_pinned |= near;
	return moved;
}
