/* Promoter tests: the real hot table, procs, stats and the 3-node fixture topology (nodes 0,1
 * DRAM with CPUs, node 2 CPU-less CXL; distance 0-1 32, to 2 50), with a fake move_pages,
 * clock, free-memory refresh and page-size lookup behind the promoter's ops table. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <numaif.h>

#include "src/cold_list.h"
#include "src/config.h"
#include "src/config_pub.h"
#include "src/hot_table.h"
#include "src/log.h"
#include "src/procs.h"
#include "src/promoter.h"
#include "src/stats.h"
#include "src/topology.h"

#define KIB	     UINT64_C(1024)
#define MIB	     (KIB * KIB)
#define THP	     (2 * MIB)
#define BASE	     (4 * KIB)
#define SLOW	     2
#define MAX_SPECIAL  64
#define MAX_CALLS    4096
#define UNWRITTEN_ME 1 /* force: leave the status entry unwritten */

/* A page with behaviour of its own; every other page sits on SLOW, is 4 KiB (2 MiB inside
 * [huge_lo, huge_hi)) and moves fine. */
struct fake_page {
	pid_t pid;
	uint64_t addr;
	int node;
	int busy;  /* -EBUSY this many more moves */
	int force; /* status to report on move: -EACCES, -EFAULT, ..., or UNWRITTEN_ME */
};

struct fake {
	struct fake_page special[MAX_SPECIAL];
	int nr_special;
	uint64_t huge_lo, huge_hi;
	size_t size_lookups; /* pages whose size page_sizes() was asked */
	pid_t esrch_query, esrch_move;
	pid_t einval_query;	/* the kernel's answer for a task whose mm is gone */
	size_t esrch_from_call; /* esrch_move applies to move calls from this index on */
	bool nomem[3];
	unsigned free_pct[3];
	/* Free memory follows the moves: bytes moved out of (in to) a node since the test began,
	 * added to (taken from) what free_pct gives. */
	bool account;
	int64_t moved_out[3];
	uint64_t now;
	atomic_uint now_reads; /* clock reads, from the promoter thread too */
	/* Move calls (nodes != NULL). */
	size_t calls;
	unsigned long call_size[MAX_CALLS];
	pid_t call_pid[MAX_CALLS];
	size_t queries;
	size_t query_size[MAX_CALLS];
	uint64_t pages_moved, bytes_moved;
	uint64_t moved_to[3];
	/* run_near / run_anywhere: where the promoter thread was asked to run. */
	pid_t near_pid[MAX_CALLS];
	size_t nears, anywheres;
	bool near_at_move[MAX_CALLS]; /* a move call made while near its process */
	pid_t near_now;		      /* 0: anywhere */
};

struct fx {
	struct fake fake;
	struct promoter_ops ops;
	struct topology *topo;
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct pghotd_config *cfg;
	struct promoter *p;
	struct cold_list *cold; /* demotion tests: the promoter takes cold pages from it */
	uint32_t self;
	pid_t child;
	uint32_t child_h;
};

static struct fake_page *fake_find(struct fake *f, pid_t pid, uint64_t addr)
{
	for (int i = 0; i < f->nr_special; i++)
		if (f->special[i].pid == pid && f->special[i].addr == addr)
			return &f->special[i];
	return NULL;
}

static uint64_t fake_size(const struct fake *f, uint64_t addr)
{
	return addr >= f->huge_lo && addr < f->huge_hi ? THP : BASE;
}

static int fake_move_one(struct fake *f, pid_t pid, uint64_t addr, int target, int *status)
{
	struct fake_page *pg = fake_find(f, pid, addr);

	if (pg && pg->force == UNWRITTEN_ME)
		return 1;
	if (pg && pg->force) {
		*status = pg->force;
	} else if (pg && pg->busy > 0) {
		pg->busy--;
		*status = -EBUSY;
	} else if (f->nomem[target]) {
		*status = -ENOMEM;
	} else {
		int from = pg ? pg->node : SLOW;

		f->moved_out[from] += (int64_t)fake_size(f, addr);
		f->moved_out[target] -= (int64_t)fake_size(f, addr);
		if (pg)
			pg->node = target;
		f->pages_moved++;
		f->bytes_moved += fake_size(f, addr);
		f->moved_to[target]++;
		*status = target;
	}
	return 0;
}

static long fake_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages,
			    const int *nodes, int *status, int flags)
{
	struct fake *f = ctx;
	long not_moved = 0;

	if (!nodes) {
		if (f->queries < MAX_CALLS)
			f->query_size[f->queries] = count;
		f->queries++;
		if (pid == f->esrch_query)
			return -ESRCH;
		if (pid == f->einval_query)
			return -EINVAL;
		for (unsigned long i = 0; i < count; i++) {
			struct fake_page *pg = fake_find(f, pid, (uintptr_t)pages[i]);

			status[i] = pg ? pg->node : SLOW;
		}
		return 0;
	}
	assert_int_equal(flags, MPOL_MF_MOVE);
	assert_true(f->calls < MAX_CALLS);
	f->call_size[f->calls] = count;
	f->near_at_move[f->calls] = f->near_now == pid;
	f->call_pid[f->calls++] = pid;
	if (pid == f->esrch_move && f->calls > f->esrch_from_call)
		return -ESRCH;
	for (unsigned long i = 0; i < count; i++) {
		int r = fake_move_one(f, pid, (uintptr_t)pages[i], nodes[i], &status[i]);

		not_moved += r || status[i] != nodes[i];
	}
	return not_moved;
}

static uint64_t fake_now(void *ctx)
{
	struct fake *f = ctx;

	/* Relaxed: a progress counter the test polls; now itself is not changed meanwhile. */
	atomic_fetch_add_explicit(&f->now_reads, 1, memory_order_relaxed);
	return f->now;
}

/* The promoter thread reads the clock once for run_once and once as it starts waiting: after
 * the second read, its first interval is over (a sleep guessed wrong on a loaded machine). */
static void wait_first_interval(struct fx *x)
{
	for (int i = 0; i < 5000 && atomic_load(&x->fake.now_reads) < 2; i++)
		usleep(1000);
	assert_true(atomic_load(&x->fake.now_reads) >= 2);
}

static int fake_refresh_free(void *ctx, struct topology *t)
{
	struct fake *f = ctx;

	for (int n = 0; n < 3; n++) {
		t->node[n].mem_free = t->node[n].mem_total * f->free_pct[n] / 100;
		if (f->account)
			t->node[n].mem_free += (uint64_t)f->moved_out[n];
	}
	return 0;
}

static int fake_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	struct fake *f = ctx;

	(void)pid;
	f->size_lookups += n;
	for (size_t i = 0; i < n; i++)
		sizes[i] = fake_size(ctx, addrs[i]);
	return 0;
}

static void fake_special(struct fx *x, pid_t pid, uint64_t addr, int node, int busy, int force)
{
	struct fake *f = &x->fake;

	assert_true(f->nr_special < MAX_SPECIAL);
	f->special[f->nr_special++] = (struct fake_page){
	    .pid = pid, .addr = addr, .node = node, .busy = busy, .force = force};
}

static int fake_run_near(void *ctx, pid_t pid)
{
	struct fake *f = ctx;

	if (f->nears < MAX_CALLS)
		f->near_pid[f->nears] = pid;
	f->nears++;
	f->near_now = pid;
	return 0;
}

static void fake_run_anywhere(void *ctx)
{
	struct fake *f = ctx;

	f->anywheres++;
	f->near_now = 0;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	const char *fixtures = getenv("PGHOTD_FIXTURES");
	char path[4096];
	struct promoter_deps d;
	int64_t h;

	assert_non_null(x);
	assert_non_null(fixtures);
	snprintf(path, sizeof(path), "%s/sysfs-3node-cxl", fixtures);
	assert_int_equal(topology_load(path, &x->topo), 0);
	assert_true(topology_node_is_slow(x->topo, SLOW));
	assert_int_equal(hot_table_new(1 << 16, 2 * PROMOTER_WORK_MAX, &x->hot), 0);
	assert_int_equal(procs_new("/proc", 64, &x->procs), 0);
	h = procs_handle(x->procs, getpid());
	assert_true(h > 0);
	x->self = (uint32_t)h;
	stats_init(&x->stats, 3);
	assert_int_equal(config_new_defaults(&x->cfg), 0);
	x->cfg->promotion.rate_limit_mbps = 0;
	x->cfg->promotion.batch = 512;
	x->cfg->promotion.min_free_percent = 10;
	x->cfg->promotion.cooldown_ms = 1000;
	x->cfg->promotion.interval_ms = 100;
	x->cfg->promotion.max_retries = 2;
	x->cfg->promotion.target = TARGET_ACCESSING_NODE;
	for (int n = 0; n < 3; n++)
		x->fake.free_pct[n] = 50;
	x->fake.now = 1000;
	x->ops = (struct promoter_ops){.move_pages = fake_move_pages,
				       .now_ms = fake_now,
				       .refresh_free = fake_refresh_free,
				       .page_sizes = fake_page_sizes,
				       .run_near = fake_run_near,
				       .run_anywhere = fake_run_anywhere,
				       .ctx = &x->fake};
	d = (struct promoter_deps){
	    .hot = x->hot, .procs = x->procs, .topo = x->topo, .stats = &x->stats, .ops = &x->ops};
	assert_int_equal(promoter_new(&d, &x->p), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	promoter_free(x->p);
	cold_list_free(x->cold);
	if (x->child > 0) {
		kill(x->child, SIGKILL);
		waitpid(x->child, NULL, 0);
	}
	config_free(x->cfg);
	procs_free(x->procs);
	hot_table_free(x->hot);
	topology_free(x->topo);
	free(x);
	return 0;
}

/* A live second process to own pages. */
static void spawn_child(struct fx *x)
{
	int64_t h;

	x->child = fork();
	assert_true(x->child >= 0);
	if (x->child == 0) {
		pause();
		_exit(0);
	}
	h = procs_handle(x->procs, x->child);
	assert_true(h > 0);
	x->child_h = (uint32_t)h;
}

/* One access that makes the page hot (threshold 1). */
static int hot(struct fx *x, uint32_t proc, uint64_t addr, int node)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {.proc = proc, .vaddr = addr, .now_ms = x->fake.now, .node = node};

	return hot_table_record(x->hot, &a, &hp);
}

/* Like hot(), for an access whose physical address showed the page on a slow node. */
static int hot_seen_slow(struct fx *x, uint32_t proc, uint64_t addr, int node)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {
	    .proc = proc, .vaddr = addr, .now_ms = x->fake.now, .node = node, .on_slow = true};

	return hot_table_record(x->hot, &a, &hp);
}

/* Like hot_seen_slow(), from a source that also saw the page's size (the abit scanner). */
static int hot_sized(struct fx *x, uint64_t addr, enum hot_size size)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {.proc = x->self,
			       .vaddr = addr,
			       .now_ms = x->fake.now,
			       .node = 0,
			       .on_slow = true,
			       .size = size};

	return hot_table_record(x->hot, &a, &hp);
}

static int run(struct fx *x)
{
	return promoter_run_once(x->p, x->cfg, x->fake.now);
}

static uint64_t fails(struct fx *x, enum stat_fail_reason r)
{
	return atomic_load(&x->stats.fail[r]);
}

static uint64_t promoted_to(struct fx *x, int node)
{
	return atomic_load(&x->stats.promoted_pages[node]);
}

/* ---- rate limit ------------------------------------------------------------------------ */

static void bytes_moved_over_a_minute_stay_within_rate_plus_one_burst(void **state)
{
	struct fx *x = *state;
	const uint64_t rate = 8 * MIB, burst = rate / 4; /* interval 250 ms */
	uint64_t addr = 0x100000000, thp = 0x200000000, limit;

	x->cfg->promotion.rate_limit_mbps = 8;
	x->cfg->promotion.interval_ms = 250;
	x->fake.huge_lo = thp;
	x->fake.huge_hi = thp + 1000 * THP;
	for (int i = 0; i < 240; i++) {
		/* Demand above the limit: 600 base pages and one THP per interval. */
		for (int k = 0; k < 600; k++, addr += BASE)
			hot(x, x->self, addr, 0);
		hot(x, x->self, thp, 0);
		thp += THP;
		assert_true(run(x) >= 0);
		x->fake.now += 250;
	}
	limit = rate * 60 + burst;
	assert_true(x->fake.bytes_moved <= limit);
	/* The limit is spent, not just respected: within one burst of the full budget. */
	assert_true(x->fake.bytes_moved >= rate * 60 - burst);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), x->fake.bytes_moved);
	assert_true(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED) > 0);
}

static void thp_is_charged_two_mib_and_deferred_pages_move_later(void **state)
{
	struct fx *x = *state;
	uint64_t base = 0x40000000;

	x->cfg->promotion.rate_limit_mbps = 4; /* interval 1 s: 4 MiB burst */
	x->cfg->promotion.interval_ms = 1000;
	x->fake.huge_lo = base;
	x->fake.huge_hi = base + 3 * THP;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hot(x, x->self, base + i * THP, 0), 1);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.bytes_moved, 2 * THP);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), 2 * THP);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 1);
	assert_int_equal(promoter_deferred(x->p), 1);

	x->fake.now += 1000;
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.bytes_moved, 3 * THP);
	assert_int_equal(promoter_deferred(x->p), 0);
}

static void sizes_the_source_saw_need_no_lookup(void **state)
{
	struct fx *x = *state;
	uint64_t base = 0x40000000;

	/* Two THPs and a base page the scanner sized, and a page it could not size. */
	x->fake.huge_lo = base;
	x->fake.huge_hi = base + 2 * THP;
	assert_int_equal(hot_sized(x, base, HOT_SIZE_HUGE), 1);
	assert_int_equal(hot_sized(x, base + THP, HOT_SIZE_HUGE), 1);
	assert_int_equal(hot_sized(x, base + 2 * THP, HOT_SIZE_BASE), 1);
	assert_int_equal(hot_sized(x, base + 2 * THP + BASE, HOT_SIZE_UNKNOWN), 1);
	assert_int_equal(run(x), 4);
	assert_int_equal(x->fake.size_lookups, 1);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), 2 * THP + 2 * BASE);

	/* Only sized pages: no lookup at all. */
	x->fake.now += 10000;
	assert_int_equal(hot_sized(x, base + 8 * THP, HOT_SIZE_BASE), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.size_lookups, 1);
}

static void base_pages_under_the_same_limit_all_move_at_once(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.rate_limit_mbps = 4;
	x->cfg->promotion.interval_ms = 1000;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hot(x, x->self, 0x40000000 + i * THP, 0), 1);
	assert_int_equal(run(x), 3);
	assert_int_equal(x->fake.bytes_moved, 3 * BASE);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 0);
}

static void pages_that_fail_to_move_give_their_tokens_back(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.rate_limit_mbps = 1; /* interval 1 s: 256 base pages */
	x->cfg->promotion.interval_ms = 1000;
	x->cfg->promotion.batch = 8;
	fake_special(x, getpid(), 0x10000000, SLOW, 1, 0); /* -EBUSY once */
	for (int i = 0; i < 300; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 0);
	/* The busy page's 4 KiB goes back to the bucket and pays for one more page. */
	assert_int_equal(run(x), 256);
	assert_int_equal(x->fake.bytes_moved, 1 * MIB);
}

/* ---- batching and grouping ------------------------------------------------------------- */

static void move_calls_carry_batch_sized_groups_of_one_process(void **state)
{
	struct fx *x = *state;
	size_t mine = 0, theirs = 0;

	spawn_child(x);
	x->cfg->promotion.batch = 8;
	for (int i = 0; i < 20; i++) {
		hot(x, x->self, 0x10000000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000000 + i * BASE, 0);
	}
	assert_int_equal(run(x), 40);
	assert_int_equal(x->fake.calls, 6);
	for (size_t c = 0; c < x->fake.calls; c++) {
		/* Each process: 8, 8, 4. */
		assert_int_equal(x->fake.call_size[c], c % 3 == 2 ? 4 : 8);
		if (x->fake.call_pid[c] == getpid())
			mine += x->fake.call_size[c];
		else if (x->fake.call_pid[c] == x->child)
			theirs += x->fake.call_size[c];
		if (c % 3 != 0)
			assert_int_equal(x->fake.call_pid[c], x->fake.call_pid[c - 1]);
	}
	assert_int_equal(mine, 20);
	assert_int_equal(theirs, 20);
}

static void batch_above_512_is_capped(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.batch = 100000;
	for (int i = 0; i < 600; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 0);
	assert_int_equal(run(x), 600);
	assert_int_equal(x->fake.calls, 2);
	assert_int_equal(x->fake.call_size[0], 512);
	assert_int_equal(x->fake.call_size[1], 88);
}

/* ---- per-page status ------------------------------------------------------------------- */

static void busy_page_is_retried_max_retries_times_then_dropped(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x5000;

	fake_special(x, getpid(), a, SLOW, 1000, 0);
	assert_int_equal(hot(x, x->self, a, 0), 1);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(run(x), 0);
		x->fake.now += 100;
	}
	/* The first try and max_retries (2) retries, then no more calls. */
	assert_int_equal(x->fake.calls, 3);
	assert_int_equal(fails(x, FAIL_BUSY), 3);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void busy_page_moves_on_a_later_interval(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x5000;

	fake_special(x, getpid(), a, SLOW, 1, 0);
	assert_int_equal(hot(x, x->self, a, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(promoter_deferred(x->p), 1);
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), a)->node, 1);
	assert_int_equal(fails(x, FAIL_BUSY), 1);
	assert_int_equal(promoted_to(x, 1), 1);
}

static void nomem_pauses_the_node_until_free_memory_recovers(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x7000;

	fake_special(x, getpid(), a, SLOW, 0, 0);
	x->fake.nomem[1] = true;
	assert_int_equal(hot(x, x->self, a, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_NOMEM), 1);
	assert_int_equal(stats_get(&x->stats, ST_NODE_PAUSES), 1);
	assert_true(promoter_node_paused(x->p, 1));

	/* Still full: the deferred page goes to the next nearest fast node. */
	x->fake.free_pct[1] = 5;
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), a)->node, 0);
	assert_true(promoter_node_paused(x->p, 1));

	/* Recovered above min_free_percent: node 1 takes pages again. */
	x->fake.free_pct[1] = 40;
	x->fake.nomem[1] = false;
	x->fake.now += 100;
	assert_int_equal(hot(x, x->self, 0x9000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_false(promoter_node_paused(x->p, 1));
	assert_int_equal(promoted_to(x, 1), 1);
	assert_int_equal(stats_get(&x->stats, ST_NODE_PAUSES), 1);
}

static void shared_page_is_counted_and_dropped(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, -EACCES);
	assert_int_equal(hot(x, x->self, 0x3000, 0), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_SHARED), 1);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 1);
}

static void vanished_pages_count_as_gone(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, -EFAULT);
	fake_special(x, getpid(), 0x4000, SLOW, 0, -ENOENT);
	hot(x, x->self, 0x3000, 0);
	hot(x, x->self, 0x4000, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_GONE), 2);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void unwritten_status_is_not_trusted(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, UNWRITTEN_ME);
	hot(x, x->self, 0x3000, 0);
	hot(x, x->self, 0x4000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(fails(x, FAIL_OTHER), 1);
	assert_int_equal(promoted_to(x, 0), 1);
	/* Handed back to counting, not freed: another access queues it again. */
	assert_int_equal(hot(x, x->self, 0x3000, 0), 1);
}

static void esrch_on_the_query_forgets_the_process(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	for (int i = 0; i < 4; i++) {
		hot(x, x->self, 0x10000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	}
	x->fake.esrch_query = x->child;
	assert_int_equal(run(x), 4);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_true(procs_valid(x->procs, x->self));
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
	for (size_t c = 0; c < x->fake.calls; c++)
		assert_int_equal(x->fake.call_pid[c], getpid());
}

static void pages_are_moved_from_their_process_cpu_and_the_thread_is_let_go_when_idle(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	x->cfg->promotion.batch = 2;
	for (int i = 0; i < 3; i++) {
		hot(x, x->self, 0x10000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	}
	assert_int_equal(run(x), 6);
	assert_int_equal(x->fake.nears, 2); /* once per process, not per batch */
	assert_true(x->fake.near_pid[0] != x->fake.near_pid[1]);
	for (size_t c = 0; c < x->fake.calls; c++)
		assert_true(x->fake.near_at_move[c]);
	/* It stays near the last process while there is work, and is let go when idle. */
	assert_int_equal(x->fake.anywheres, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.anywheres, 1);
	assert_int_equal(x->fake.near_now, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.anywheres, 1); /* once */

	/* Off, or in a dry run (nothing moves): the thread stays where it is. */
	x->cfg->promotion.move_near_task = false;
	x->fake.now += 100000;
	hot(x, x->self, 0x90000, 0);
	assert_int_equal(run(x), 1);
	x->cfg->promotion.move_near_task = true;
	x->cfg->dry_run = true;
	hot(x, x->self, 0xa0000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.nears, 2);
}

static void exiting_process_without_memory_is_forgotten_at_once(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	for (int i = 0; i < 4; i++)
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	x->fake.einval_query = x->child;
	assert_int_equal(run(x), 0);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_OTHER), 0); /* not a failure to retry every interval */
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void esrch_on_the_move_forgets_the_process_and_its_deferred_pages(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	x->cfg->promotion.batch = 2;
	fake_special(x, x->child, 0x10000, SLOW, 2, 0); /* -EBUSY twice: stays deferred */
	for (int i = 0; i < 4; i++)
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	assert_int_equal(run(x), 3); /* calls 0 and 1 */
	assert_int_equal(promoter_deferred(x->p), 1);

	/* Call 2: the deferred page (busy again) and one new page; call 3: ESRCH. */
	x->fake.esrch_move = x->child;
	x->fake.esrch_from_call = 3;
	x->fake.now += 100;
	hot(x, x->child_h, 0x20000, 0);
	hot(x, x->child_h, 0x21000, 0);
	hot(x, x->child_h, 0x22000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 4);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
}

/* ---- target choice --------------------------------------------------------------------- */

static void page_accessed_from_node_1_goes_to_node_1(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, SLOW, 0, 0);
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 0);
	assert_int_equal(promoted_to(x, 1), 1);
	assert_int_equal(promoted_to(x, 0), 1);
}

static void full_node_falls_back_to_the_next_nearest(void **state)
{
	struct fx *x = *state;

	x->fake.free_pct[1] = 9; /* below min_free_percent 10 */
	hot(x, x->self, 0x1000, 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[0], 1);
	assert_int_equal(x->fake.moved_to[1], 0);
}

static void no_usable_node_hands_the_page_back(void **state)
{
	struct fx *x = *state;

	x->fake.free_pct[0] = 1;
	x->fake.free_pct[1] = 1;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1); /* back to counting */
}

static void fixed_mode_uses_the_configured_order(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.target = TARGET_FIXED;
	x->cfg->promotion.target_nodes.n = 2;
	x->cfg->promotion.target_nodes.node[0] = 1;
	x->cfg->promotion.target_nodes.node[1] = 0;
	hot(x, x->self, 0x1000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[1], 1);
	x->fake.free_pct[1] = 2;
	x->fake.now += 100;
	hot(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[0], 1);
}

static void page_with_unknown_accessing_node_goes_nearest_to_where_it_is(void **state)
{
	struct fx *x = *state;

	hot(x, x->self, 0x1000, -1);
	assert_int_equal(run(x), 1);
	/* From node 2 both DRAM nodes are 50 away: the tie goes to the lower id. */
	assert_int_equal(x->fake.moved_to[0], 1);
}

/* ---- skips, dry run, cooldown ---------------------------------------------------------- */

static void pages_already_on_a_fast_node_are_skipped(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, 0, 0, 0);
	fake_special(x, getpid(), 0x2000, 1, 0, 0);
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 0);
	hot(x, x->self, 0x3000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 2);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_size[0], 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 0);
}

static void page_seen_on_a_slow_node_moves_without_a_placement_query(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, SLOW, 0, 0);
	hot_seen_slow(x, x->self, 0x1000, 1);
	hot_seen_slow(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.queries, 0);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 0);
}

static void page_seen_slow_from_an_unknown_node_is_still_queried(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, 0, 0, 0); /* already on a fast node */
	hot_seen_slow(x, x->self, 0x1000, -1);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.queries, 1);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
	assert_int_equal(x->fake.calls, 0);
}

static void only_pages_without_a_known_placement_are_queried(void **state)
{
	struct fx *x = *state;

	/* 0x2000 and 0x3000 were sampled without a physical address: asked about, and 0x2000
	 * turns out to be on a fast node already. 0x1000 was seen on a slow node: not asked. */
	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, 1, 0, 0);
	hot_seen_slow(x, x->self, 0x1000, 0);
	hot(x, x->self, 0x2000, 0);
	hot(x, x->self, 0x3000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.queries, 1);
	assert_int_equal(x->fake.query_size[0], 2);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 0);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 1);
}

static void dry_run_decides_and_counts_but_moves_nothing(void **state)
{
	struct fx *x = *state;

	x->cfg->dry_run = true;
	for (int i = 0; i < 10; i++)
		hot(x, x->self, 0x10000 + i * BASE, 1);
	fake_special(x, getpid(), 0x90000, 0, 0, 0); /* on a fast node: skipped, not counted */
	hot(x, x->self, 0x90000, 1);
	assert_int_equal(run(x), 10);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(x->fake.pages_moved, 0);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_DRY_RUN), 10);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 0);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
}

static void dry_run_respects_the_rate_limit(void **state)
{
	struct fx *x = *state;

	x->cfg->dry_run = true;
	x->cfg->promotion.rate_limit_mbps = 1;
	x->cfg->promotion.interval_ms = 1000; /* 1 MiB: 256 base pages */
	for (int i = 0; i < 300; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 1);
	assert_int_equal(run(x), 256);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 44);
	assert_int_equal(x->fake.calls, 0);
}

static void promoted_page_is_not_moved_again_within_the_cooldown(void **state)
{
	struct fx *x = *state;
	struct fake_page *pg;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	pg = fake_find(&x->fake, getpid(), 0x1000);
	hot(x, x->self, 0x1000, 1);
	assert_int_equal(run(x), 1);
	pg->node = SLOW; /* demoted again at once */

	x->fake.now += 500; /* cooldown 1000 ms */
	assert_int_equal(hot(x, x->self, 0x1000, 1), 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 1);

	x->fake.now += 600;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 2);
	assert_int_equal(pg->node, 1);
}

static void a_round_of_only_gone_pages_does_not_end_the_interval(void **state)
{
	struct fx *x = *state;

	/* A whole round's worth of a vanished process, then one live page behind it. */
	spawn_child(x);
	for (uint64_t i = 0; i < PROMOTER_WORK_MAX; i++)
		assert_int_equal(hot(x, x->child_h, 0x100000 + i * BASE, 0), 1);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	procs_forget(x->procs, x->child_h);
	assert_int_equal(run(x), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), PROMOTER_WORK_MAX);
	assert_int_equal(promoted_to(x, 0), 1);
}

static void gone_process_handle_is_dropped_before_any_syscall(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	hot(x, x->child_h, 0x1000, 0);
	procs_forget(x->procs, x->child_h);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.queries, 0);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
}

/* A /proc/PID/stat line of pid at dir, with start time start (field 22). */
static void put_stat(const char *root, pid_t pid, uint64_t start)
{
	char path[4096], line[512];
	int n = snprintf(line, sizeof(line), "%d (app) S", (int)pid);
	FILE *f;

	for (int field = 4; field <= 52; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %llu",
			      field == 22 ? (unsigned long long)start : 0ull);
	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", line);
	fclose(f);
}

/* The pid of a hot page's process is checked just before its batch is moved, not only on the
 * stats timer: a pid that exited and was reused by another process between the page's
 * accesses and the move (its start time changed) has nothing moved, the batch is counted
 * once, and its handle goes stale, so nothing of the old process is moved later either. The
 * same process, still there, is moved as ever. */
static void batch_of_a_reused_pid_is_dropped_before_the_move(void **state)
{
	struct fx *x = *state;
	char root[] = "/tmp/pghotd-procs-XXXXXX", cmd[128];
	struct promoter_deps d = {
	    .hot = x->hot, .topo = x->topo, .stats = &x->stats, .ops = &x->ops};
	int64_t h, same;

	assert_non_null(mkdtemp(root));
	put_stat(root, 4242, 100);
	put_stat(root, 4343, 100);
	promoter_free(x->p);
	procs_free(x->procs);
	assert_int_equal(procs_new(root, 64, &x->procs), 0);
	d.procs = x->procs;
	assert_int_equal(promoter_new(&d, &x->p), 0);
	h = procs_handle(x->procs, 4242);
	same = procs_handle(x->procs, 4343);
	assert_true(h > 0 && same > 0);
	hot(x, (uint32_t)h, 0x1000, 0);
	hot(x, (uint32_t)h, 0x2000, 0);
	hot(x, (uint32_t)same, 0x1000, 0);
	put_stat(root, 4242, 200); /* 4242 exited; a new process has its pid */
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_pid[0], 4343);
	assert_int_equal(atomic_load(&x->stats.c[ST_BATCHES_PID_REUSED]), 1);
	assert_false(procs_valid(x->procs, (uint32_t)h));
	assert_true(procs_valid(x->procs, (uint32_t)same));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* ---- thread ---------------------------------------------------------------------------- */

static void kick_wakes_the_thread_before_the_interval(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg;
	struct config_pub *pub;
	struct timespec t0, t1;

	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 60000;
	cfg->promotion.rate_limit_mbps = 0;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(x->p, pub), 0);
	wait_first_interval(x); /* what follows needs the kick */
	for (int i = 0; i < 5; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 1), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	promoter_kick(x->p);
	for (int i = 0; i < 2000 && stats_promoted_pages_total(&x->stats) < 5; i++)
		usleep(1000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 5);
	assert_true(t1.tv_sec - t0.tv_sec < 10);
	promoter_stop(x->p);
	config_pub_free(pub);
}

static void kick_if_full_waits_for_the_mark(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg;
	struct config_pub *pub;
	struct promoter *p2;
	struct promoter_deps d = {.hot = x->hot,
				  .procs = x->procs,
				  .topo = x->topo,
				  .stats = &x->stats,
				  .ops = &x->ops,
				  .kick_mark = 3};

	assert_int_equal(promoter_new(&d, &p2), 0);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 60000;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(p2, pub), 0);
	wait_first_interval(x); /* the first (empty) interval must not see the pages */
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 1);
	promoter_kick_if_full(p2);
	usleep(200000);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 0);
	hot(x, x->self, 0x3000, 1);
	promoter_kick_if_full(p2);
	for (int i = 0; i < 2000 && stats_promoted_pages_total(&x->stats) < 3; i++)
		usleep(1000);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 3);
	promoter_stop(p2);
	promoter_free(p2);
	config_pub_free(pub);
}

/* ---- demotion ----------------------------------------------------------------------------- */

/* The promoter again, now with a cold list; node 0 holds NODE0_PAGES base pages, so one percent
 * of it is one page. */
#define NODE0_PAGES 100

static void with_cold(struct fx *x)
{
	struct promoter_deps d = {
	    .hot = x->hot, .procs = x->procs, .topo = x->topo, .stats = &x->stats, .ops = &x->ops};

	assert_int_equal(cold_list_new(PROMOTER_WORK_MAX, &x->cold), 0);
	d.cold = x->cold;
	promoter_free(x->p);
	assert_int_equal(promoter_new(&d, &x->p), 0);
	x->topo->node[0].mem_total = NODE0_PAGES * BASE;
	x->fake.account = true;
	x->cfg->promotion.min_free_percent = 10;
	x->cfg->demotion.enabled = true;
	x->cfg->demotion.free_target_percent = 0;
	x->cfg->demotion.min_idle_ms = 60000;
	x->cfg->demotion.rate_limit_mbps = 0;
	/* Well past the idle times the tests give their pages: a page idle since 100 ms is as
	 * old as demotion.min_idle_ms asks, for the free target and an exchange alike. */
	x->fake.now = 100000;
}

/* A page of this process on fast node `node`, offered as cold, idle since `since`. */
static void cold_page(struct fx *x, uint64_t addr, int node, uint64_t since)
{
	struct cold_page c = {.pid = getpid(),
			      .vaddr = addr,
			      .idle_since_ms = since,
			      .offered_ms = x->fake.now,
			      .node = node,
			      .size = HOT_SIZE_BASE};

	fake_special(x, getpid(), addr, node, 0, 0);
	cold_list_offer(x->cold, &c, 1);
}

static uint64_t demoted(struct fx *x, int node, enum stat_demote_reason why)
{
	return atomic_load(&x->stats.demoted_pages[why][node]);
}

static int node_of(struct fx *x, uint64_t addr)
{
	return fake_find(&x->fake, getpid(), addr)->node;
}

static void full_fast_node_trades_its_coldest_pages_for_a_blocked_hot_page(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 5; /* below min_free_percent (10): 5 pages free, 10 wanted */
	x->fake.free_pct[1] = 5;
	for (int i = 0; i < 5; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10); /* lower address: colder */
	/* The hot page finds node 0 (its accessing node) and node 1 full: it waits on the
	 * deferred list, and node 0 is watched. */
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 0);
	assert_int_equal(promoter_deferred(x->p), 1);
	assert_true(cold_list_wanted(x->cold) & 1);

	/* Next interval: as much goes down as the page needs (one page, the coldest), and the
	 * waiting page comes up although node 0 stays short (6% free): a trade, without the
	 * source having to find the page again. A second hot page finds no room left. */
	x->fake.now += 100;
	assert_int_equal(hot(x, x->self, 0x2000, 0), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(atomic_load(&x->stats.demoted_bytes[DEMOTE_EXCHANGE][0]), BASE);
	assert_int_equal(node_of(x, 0x100000), SLOW);
	assert_int_equal(node_of(x, 0x101000), 0);
	assert_int_equal(promoted_to(x, 0), 1);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_CANDIDATES), 1);
	assert_int_equal(cold_list_len(x->cold), 4);

	/* The interval after: the second page's room, then the page. */
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 2);
	assert_int_equal(node_of(x, 0x101000), SLOW);
	assert_int_equal(promoted_to(x, 0), 2);
	assert_int_equal(x->fake.moved_to[SLOW], 2);
}

static void exchange_room_lapses_when_its_hot_page_does_not_come(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->sources.abit.scan_interval_ms = 1000; /* room kept 2 s */
	x->cfg->promotion.max_retries = 0; /* the page goes back to counting, does not wait */
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	cold_page(x, 0x100000, 0, 100);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 0); /* the room is made; the page is not back yet */
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	x->fake.now += 3000;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0); /* too late: node 0 is short again for it */
	assert_int_equal(promoted_to(x, 0), 0);
}

/* An exchange takes a page idle for the exchange age (promotion.window_ms here), well under
 * demotion.min_idle_ms; the free target leaves such a page where it is. */
static void exchange_takes_pages_idle_for_the_window_the_free_target_waits(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.window_ms = 3000;
	assert_int_equal(config_demotion_exchange_ms(x->cfg), 3000);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 16; /* 4 pages short of the target */
	cold_page(x, 0x100000, 0, x->fake.now - 3500);
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	/* Hot pages wait: now it goes, for an exchange. */
	x->cfg->demotion.free_target_percent = 0;
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(node_of(x, 0x100000), SLOW);
}

/* A page promoted within promotion.cooldown_ms is not demoted for an exchange although it
 * stayed idle since: its cooldown would keep it from coming back up. */
static void page_promoted_within_its_cooldown_is_not_demoted(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.cooldown_ms = 60000;
	assert_int_equal(hot(x, x->self, 0x100000, 0), 1);
	fake_special(x, getpid(), 0x100000, SLOW, 0, 0);
	assert_int_equal(run(x), 1); /* promoted: cooling from now */
	assert_int_equal(node_of(x, 0x100000), 0);
	x->fake.now += 5000;
	cold_page(x, 0x100000, 0, x->fake.now - 5000);
	cold_page(x, 0x101000, 0, x->fake.now - 4000);
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(node_of(x, 0x100000), 0); /* the colder, but cooling */
	assert_int_equal(node_of(x, 0x101000), SLOW);
}

static void hot_page_waits_max_retries_intervals_for_room_then_goes_back(void **state)
{
	struct fx *x = *state;

	with_cold(x); /* and no cold page to trade */
	x->cfg->promotion.max_retries = 2;
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(run(x), 0);
		assert_int_equal(promoter_deferred(x->p), i < 2 ? 1 : 0);
		x->fake.now += 100;
	}
	/* Back to counting: the source can queue it again. */
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(x->fake.calls, 0);
}

static void node_under_its_free_target_sheds_the_shortfall_coldest_first(void **state)
{
	struct fx *x = *state;
	/* Idle since: a shuffled order, so address order is not coldness order. */
	static const uint64_t since[8] = {500, 100, 700, 300, 800, 200, 600, 400};

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 16; /* 4 pages short */
	for (int i = 0; i < 8; i++)
		cold_page(x, 0x200000 + i * BASE, 0, since[i]);
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 4);
	for (int i = 0; i < 8; i++)
		assert_int_equal(node_of(x, 0x200000 + i * BASE), since[i] <= 400 ? SLOW : 0);
	assert_int_equal(x->fake.moved_to[SLOW], 4);
	/* Back at the target: the next interval leaves the rest. */
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 4);
	assert_int_equal(cold_list_len(x->cold), 4);
}

static void offer_is_trusted_two_scan_intervals_under_a_short_idle_time(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.min_idle_ms = 4000; /* a quarter: 1 s, less than a scan interval... */
	x->cfg->promotion.cooldown_ms = 4000;
	x->cfg->sources.abit.scan_interval_ms = 1500; /* ...whose rounds stamp their offers */
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0x200000, 0, 100);
	cold_page(x, 0x201000, 0, 100);
	x->fake.now += 2900; /* under two intervals after the round that offered them */
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 2);
	/* Older than two intervals: dropped as stale, although the node is short again. */
	cold_page(x, 0x202000, 0, 100);
	x->fake.free_pct[0] = 16; /* with the 2 pages moved out: 2 short */
	x->fake.now += 3100;
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 2);
	assert_int_equal(cold_list_len(x->cold), 0);
}

static void node_with_room_demotes_nothing_and_is_not_watched(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 10;
	x->fake.free_pct[0] = 50;
	x->fake.free_pct[1] = 50;
	cold_page(x, 0x300000, 0, 100);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls + x->fake.queries, 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	assert_int_equal(cold_list_wanted(x->cold), 0);
	/* Under twice the target (20%): watched, not yet demoted. */
	x->fake.free_pct[1] = 15;
	x->fake.now += 2000;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold), UINT64_C(1) << 1);
	assert_int_equal(x->fake.calls, 0);
}

static void disabled_demotion_moves_nothing_and_watches_nothing(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.enabled = false;
	x->cfg->demotion.free_target_percent = 50;
	x->fake.free_pct[0] = 5;
	cold_page(x, 0x300000, 0, 100);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(cold_list_wanted(x->cold), 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	/* On, the short node is watched (and shed); off again, the mask clears at once. */
	x->cfg->demotion.enabled = true;
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold) & 1, 1);
	x->cfg->demotion.enabled = false;
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold), 0);
}

static void dry_run_decides_demotions_and_moves_nothing(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->dry_run = true;
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	for (int i = 0; i < 3; i++)
		cold_page(x, 0x400000 + i * BASE, 0, 100 + i);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_DRY_RUN), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 0);
	assert_int_equal(node_of(x, 0x400000), 0);
}

static void cold_page_that_left_its_fast_node_is_skipped(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 17;
	cold_page(x, 0x500000, 0, 100);
	cold_page(x, 0x501000, 0, 200);
	cold_page(x, 0x502000, 0, 300);
	/* Moved since it was found: to the other fast node, and to the slow one. */
	fake_find(&x->fake, getpid(), 0x500000)->node = 1;
	fake_find(&x->fake, getpid(), 0x501000)->node = SLOW;
	assert_int_equal(run(x), 0);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_SKIPPED), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 1);
	assert_int_equal(node_of(x, 0x500000), 1);
	assert_int_equal(x->fake.moved_to[SLOW], 1);
}

static void demotion_pays_from_its_own_bucket_coldest_first(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.rate_limit_mbps = 1;
	x->cfg->promotion.interval_ms = 100;
	x->cfg->demotion.rate_limit_mbps = 1; /* 100 ms: 104857 bytes, 25 base pages */
	x->cfg->demotion.free_target_percent = 90;
	x->fake.free_pct[0] = 10;
	for (int i = 0; i < 40; i++)
		cold_page(x, 0x600000 + i * BASE, 0, 1000 - i); /* higher address: colder */
	/* Hot pages too: promotion's own bucket still pays for its 25. */
	for (int i = 0; i < 30; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 1);
	assert_int_equal(run(x), 25);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 25);
	for (int i = 0; i < 40; i++)
		assert_int_equal(node_of(x, 0x600000 + i * BASE), i >= 15 ? SLOW : 0);
	assert_int_equal(promoted_to(x, 1), 25);
	/* Only what the bucket could pay for was taken: the other 15 wait in the list, and an
	 * empty bucket takes none. */
	assert_int_equal(cold_list_len(x->cold), 15);
	x->fake.now += 1;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_len(x->cold), 15);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_RATE_LIMITED), 0);
}

static void full_slow_node_pauses_demotion_and_counts_apart(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	x->fake.nomem[SLOW] = true;
	cold_page(x, 0x700000, 0, 100);
	cold_page(x, 0x701000, 0, 200);
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOMEM]), 2);
	assert_int_equal(fails(x, FAIL_NOMEM), 0);
	assert_true(promoter_node_paused(x->p, SLOW));
	/* Still short of memory: no slow node takes pages, nothing is tried, and promotion goes
	 * on. */
	x->fake.free_pct[SLOW] = 5;
	x->fake.now += 100;
	cold_page(x, 0x702000, 0, 50);
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 2); /* the failed demotion, then the promotion */
	assert_int_equal(node_of(x, 0x702000), 0);
	assert_true(promoter_node_paused(x->p, SLOW));
}

static void vanished_process_of_a_cold_page_is_left_to_the_sources(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0x800000, 0, 100);
	x->fake.esrch_query = getpid();
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOPROC]), 1);
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 0);
	x->fake.esrch_query = 0;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1); /* its handle is still good */
	assert_int_equal(run(x), 1);
}

static char journal_seen[4096]; /* the last journal entry's fields, joined by '|' */

static int fake_journal(const struct iovec *iov, int n)
{
	size_t len = 0;

	journal_seen[0] = '\0';
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(journal_seen + len, sizeof(journal_seen) - len, "%.*s|",
					(int)iov[i].iov_len, (const char *)iov[i].iov_base);
		if (len >= sizeof(journal_seen))
			break;
	}
	return 0;
}

static void each_demoting_interval_logs_one_demote_event(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0xa00000, 0, 100);
	cold_page(x, 0xa01000, 0, 200);
	log_set_journal_sender(fake_journal);
	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	journal_seen[0] = '\0';
	assert_int_equal(run(x), 0);
	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	log_set_journal_sender(NULL);
	assert_non_null(strstr(journal_seen, "PGHOTD_EVENT=demote|"));
	assert_non_null(strstr(journal_seen, "MESSAGE=demoted 2 pages (8 KiB), left 0, skipped 0, "
					     "failed 0|"));
}

static void cold_page_of_a_process_forgotten_since_the_offer_is_not_moved(void **state)
{
	struct fx *x = *state;
	struct cold_page c = {.pid = getpid(),
			      .vaddr = 0xb00000,
			      .idle_since_ms = 100,
			      .offered_ms = x->fake.now,
			      .node = 0,
			      .size = HOT_SIZE_BASE};
	int64_t h;

	with_cold(x);
	c.offered_ms = x->fake.now; /* with_cold() set the clock */
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	spawn_child(x);
	fake_special(x, x->child, 0xb00000, 0, 0, 0);
	c.pid = x->child;
	c.proc = x->child_h;
	procs_forget(x->procs, x->child_h); /* as after a pid reuse: the handle is stale */
	cold_list_offer(x->cold, &c, 1);
	/* Offered as the source's own process: good. */
	h = procs_handle(x->procs, getpid());
	cold_page(x, 0xb01000, 0, 200);
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOPROC]), 1);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_pid[0], getpid());
	assert_int_equal(fake_find(&x->fake, x->child, 0xb00000)->node, 0);
	assert_int_equal(node_of(x, 0xb01000), SLOW);
	assert_true(h > 0);
}

static void reload_turns_demotion_on_and_changes_its_target(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg, *cfg2;
	struct config_pub *pub;

	with_cold(x);
	x->fake.free_pct[0] = 15;
	for (int i = 0; i < 10; i++)
		cold_page(x, 0x900000 + i * BASE, 0, 100 + i);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 10;
	cfg->demotion.enabled = false;
	cfg->demotion.free_target_percent = 20;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(x->p, pub), 0);
	wait_first_interval(x);
	assert_int_equal(x->fake.calls, 0);

	assert_int_equal(config_new_defaults(&cfg2), 0);
	cfg2->promotion.interval_ms = 10;
	cfg2->demotion.free_target_percent = 20; /* 5 pages short */
	config_pub_swap(pub, cfg2);
	promoter_kick(x->p);
	for (int i = 0; i < 5000 && demoted(x, 0, DEMOTE_FREE_TARGET) < 5; i++)
		usleep(1000);
	promoter_stop(x->p);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 5);
	config_pub_free(pub);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(bytes_moved_over_a_minute_stay_within_rate_plus_one_burst),
	    T(thp_is_charged_two_mib_and_deferred_pages_move_later),
	    T(sizes_the_source_saw_need_no_lookup),
	    T(base_pages_under_the_same_limit_all_move_at_once),
	    T(pages_that_fail_to_move_give_their_tokens_back),
	    T(move_calls_carry_batch_sized_groups_of_one_process),
	    T(batch_above_512_is_capped),
	    T(busy_page_is_retried_max_retries_times_then_dropped),
	    T(busy_page_moves_on_a_later_interval),
	    T(nomem_pauses_the_node_until_free_memory_recovers),
	    T(shared_page_is_counted_and_dropped),
	    T(vanished_pages_count_as_gone),
	    T(unwritten_status_is_not_trusted),
	    T(esrch_on_the_query_forgets_the_process),
	    T(pages_are_moved_from_their_process_cpu_and_the_thread_is_let_go_when_idle),
	    T(exiting_process_without_memory_is_forgotten_at_once),
	    T(esrch_on_the_move_forgets_the_process_and_its_deferred_pages),
	    T(page_accessed_from_node_1_goes_to_node_1),
	    T(full_node_falls_back_to_the_next_nearest),
	    T(no_usable_node_hands_the_page_back),
	    T(fixed_mode_uses_the_configured_order),
	    T(page_with_unknown_accessing_node_goes_nearest_to_where_it_is),
	    T(pages_already_on_a_fast_node_are_skipped),
	    T(page_seen_on_a_slow_node_moves_without_a_placement_query),
	    T(page_seen_slow_from_an_unknown_node_is_still_queried),
	    T(only_pages_without_a_known_placement_are_queried),
	    T(dry_run_decides_and_counts_but_moves_nothing),
	    T(dry_run_respects_the_rate_limit),
	    T(promoted_page_is_not_moved_again_within_the_cooldown),
	    T(gone_process_handle_is_dropped_before_any_syscall),
	    T(batch_of_a_reused_pid_is_dropped_before_the_move),
	    T(a_round_of_only_gone_pages_does_not_end_the_interval),
	    T(kick_wakes_the_thread_before_the_interval),
	    T(kick_if_full_waits_for_the_mark),
	    T(full_fast_node_trades_its_coldest_pages_for_a_blocked_hot_page),
	    T(exchange_takes_pages_idle_for_the_window_the_free_target_waits),
	    T(page_promoted_within_its_cooldown_is_not_demoted),
	    T(hot_page_waits_max_retries_intervals_for_room_then_goes_back),
	    T(exchange_room_lapses_when_its_hot_page_does_not_come),
	    T(node_under_its_free_target_sheds_the_shortfall_coldest_first),
	    T(offer_is_trusted_two_scan_intervals_under_a_short_idle_time),
	    T(node_with_room_demotes_nothing_and_is_not_watched),
	    T(disabled_demotion_moves_nothing_and_watches_nothing),
	    T(dry_run_decides_demotions_and_moves_nothing),
	    T(cold_page_that_left_its_fast_node_is_skipped),
	    T(demotion_pays_from_its_own_bucket_coldest_first),
	    T(full_slow_node_pauses_demotion_and_counts_apart),
	    T(vanished_process_of_a_cold_page_is_left_to_the_sources),
	    T(reload_turns_demotion_on_and_changes_its_target),
	    T(each_demoting_interval_logs_one_demote_event),
	    T(cold_page_of_a_process_forgotten_since_the_offer_is_not_moved),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
