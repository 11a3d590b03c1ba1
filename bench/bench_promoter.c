/* bench_promoter: pages per second moved through the promoter versus a plain move_pages(2)
 * loop over the same pages with the same batch size, in the same run, alternating.
 *
 * The promoter side is the whole interval path: hot-table pop, grouping, placement, target
 * choice, page-size lookup (PAGEMAP_SCAN), move, per-page settling and stats; the raw side
 * is move_pages alone. Recording the pages into the hot table is not timed.
 *
 * Two settings:
 * - host (default, any machine): node 0 is declared slow and is also the fixed target, so
 *   the kernel walks every page but finds it already in place. The figure measures the
 *   promoter's bookkeeping on top of the kernel's per-call cost, not migration, and so swings
 *   with what a page walk costs on the machine.
 * - real moves (--slow S --fast F, the two-node guest of make bench-vm): before every timed
 *   side the pages are put back on node S (not timed), and both sides move them to node F,
 *   so each side pays the kernel's real migration of the same pages.
 *
 * The pages belong to a child process that sleeps (owner_start()), as a workload's do.
 *
 * The pages are recorded the way the Accessed-bit scanner's events arrive: with the PFN,
 * which puts them on a slow node (hot_access.on_slow), and the page size it read from
 * kpageflags, so the promoter knows their placement and size without asking. The same run
 * also times pages recorded without a physical address or size (as IBS/PEBS samples without
 * PHYS_ADDR), which take the placement query (move_pages with nodes NULL) and the page-size
 * lookup per batch: promoter_query_vs_raw.
 *
 * The machine is shared and its load comes in bursts, so each repetition times the three
 * sides back to back (in a rotating order) and the ratios are the medians of the per-
 * repetition ratios: a burst then slows both sides of the ratios it falls in.
 *
 * Usage: bench_promoter [--slow NODE --fast NODE] [--near 0|1] [pages] [reps], node 0 for both
 * (the host setting), 65536 pages and 41 repetitions by default; --near sets
 * promotion.move_near_task (the shipped default otherwise).
 * Each side's time is split into move_pages (timed around each call) and the rest, so the
 * ratio can be read as kernel time (promoter/raw) and bookkeeping (microseconds per page).
 * Last line: promoter_vs_raw: <promoter/raw>. */
#include <errno.h>
#include <stdbool.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "table/hot_table.h"
#include "base/log.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "sys/topology.h"

#define BATCH 512

struct bench {
	size_t n;
	int slow, fast; /* nodes: the pages start on slow, both sides move them to fast */
	int near;	/* promotion.move_near_task, -1 the shipped default */
	pid_t owner;	/* the process whose pages move */
	char *mem;	/* the pages, at this address in the owner */
	void **pages;
	int *nodes, *back, *status; /* targets: fast (timed), slow (the reset) */
	struct topology *topo;
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct pghotd_config *cfg;
	struct promoter *p;
	struct promoter_ops ops; /* the real ops, move_pages timed */
	double in_kernel;	 /* seconds in move_pages since the last reset */
	uint32_t h;
	uint64_t now_ms;
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct bench *timed; /* the bench whose in_kernel timed_move_pages() adds to */

/* The real move_pages, timed: splits a side's time into the kernel's and the rest. */
static long timed_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	double t0 = seconds();
	long r = promoter_real_ops.move_pages(ctx, pid, count, pages, nodes, status, flags);

	timed->in_kernel += seconds() - t0;
	return r;
}

static int die(const char *what, int r)
{
	fprintf(stderr, "bench_promoter: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

/* The pages belong to a child, as a workload's do: the daemon never moves its own. A process
 * moving its own pages has the kernel flush its TLB for each one it unmaps, which the test
 * guest's emulator makes dear for the loads that follow (the promoter's bookkeeping read 0.58
 * us/page so, 0.47 with a child, 2026-12-02); moving a sleeping process's pages flushes
 * nothing of the mover's. */
static void owner_start(struct bench *b, size_t ps)
{
	pid_t parent = getpid();
	int fd[2];
	char *mem;

	if (pipe(fd) < 0)
		die("pipe", errno);
	b->owner = fork();
	if (b->owner < 0)
		die("fork", errno);
	if (b->owner == 0) {
		/* Dies with the benchmark, also when that came before the prctl. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(1);
		mem = mmap(NULL, b->n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			   0);
		if (mem == MAP_FAILED)
			_exit(1);
		/* Base pages on both sides: a THP would move 512 pages per address. */
		madvise(mem, b->n * ps, MADV_NOHUGEPAGE);
		for (size_t i = 0; i < b->n; i++)
			mem[i * ps] = 1;
		if (write(fd[1], &mem, sizeof(mem)) != sizeof(mem))
			_exit(1);
		for (;;)
			pause();
	}
	close(fd[1]);
	if (read(fd[0], &b->mem, sizeof(b->mem)) != sizeof(b->mem))
		die("the pages' owner did not start", EIO);
	close(fd[0]);
}

static void bench_setup(struct bench *b)
{
	struct promoter_deps d;
	long ps = sysconf(_SC_PAGESIZE);
	int64_t h;
	int r;

	owner_start(b, (size_t)ps);
	b->pages = calloc(b->n, sizeof(*b->pages));
	b->nodes = calloc(b->n, sizeof(*b->nodes));
	b->back = calloc(b->n, sizeof(*b->back));
	b->status = calloc(b->n, sizeof(*b->status));
	if (!b->pages || !b->nodes || !b->back || !b->status)
		die("calloc", ENOMEM);
	for (size_t i = 0; i < b->n; i++) {
		b->pages[i] = b->mem + i * (size_t)ps;
		b->nodes[i] = b->fast;
		b->back[i] = b->slow;
	}
	if ((r = topology_load("/sys", &b->topo)) < 0)
		die("topology_load", r);
	if ((r = config_new_defaults(&b->cfg)) < 0)
		die("config", r);
	b->cfg->tiers.slow_nodes.n = 1;
	b->cfg->tiers.slow_nodes.node[0] = b->slow;
	if (b->fast != b->slow) {
		b->cfg->tiers.fast_nodes.n = 1;
		b->cfg->tiers.fast_nodes.node[0] = b->fast;
	}
	b->cfg->promotion.target = TARGET_FIXED;
	b->cfg->promotion.target_nodes.n = 1;
	b->cfg->promotion.target_nodes.node[0] = b->fast;
	b->cfg->promotion.rate_limit_mbps = 0;
	b->cfg->promotion.min_free_percent = 0;
	b->cfg->promotion.batch = BATCH;
	if (b->near >= 0)
		b->cfg->promotion.move_near_task = b->near != 0;
	if ((r = topology_apply_config(b->topo, b->cfg)) < 0)
		die("topology_apply_config", r);
	if ((r = hot_table_new(b->n * 8, b->n, &b->hot)) < 0)
		die("hot_table_new", r);
	if ((r = procs_new("/proc", 16, &b->procs)) < 0)
		die("procs_new", r);
	h = procs_handle(b->procs, b->owner);
	if (h <= 0)
		die("procs_handle", (int)h);
	b->h = (uint32_t)h;
	stats_init(&b->stats, b->topo->nr_nodes);
	b->ops = promoter_real_ops;
	b->ops.move_pages = timed_move_pages;
	timed = b;
	d = (struct promoter_deps){
	    .hot = b->hot, .procs = b->procs, .topo = b->topo, .stats = &b->stats, .ops = &b->ops};
	if ((r = promoter_new(&d, &b->p)) < 0)
		die("promoter_new", r);
	b->now_ms = 1000;
}

static void bench_queue_all(struct bench *b, bool on_slow)
{
	struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 0};

	b->now_ms += 10000;
	for (size_t i = 0; i < b->n; i++) {
		struct hot_access a = {.proc = b->h,
				       .vaddr = (uintptr_t)b->pages[i],
				       .now_ms = b->now_ms,
				       .node = 0,
				       .on_slow = on_slow,
				       .size = on_slow ? HOT_SIZE_BASE : HOT_SIZE_UNKNOWN};
		int r = hot_table_record(b->hot, &a, &hp);

		if (r != 1)
			die("hot_table_record did not queue a page", r < 0 ? r : EINVAL);
	}
}

/* Moves every page to the node in nodes[] (all the same), batch by batch, and checks each
 * page's status names that node. The time in move_pages adds to b->in_kernel. */
static void move_all(struct bench *b, int *nodes)
{
	for (size_t i = 0; i < b->n; i += BATCH) {
		size_t c = b->n - i < BATCH ? b->n - i : BATCH;
		double t0 = seconds();

		if (move_pages(b->owner, c, b->pages + i, nodes + i, b->status + i, MPOL_MF_MOVE) <
		    0)
			die("move_pages", errno);
		b->in_kernel += seconds() - t0;
	}
	for (size_t i = 0; i < b->n; i++)
		if (b->status[i] != nodes[i])
			die("move_pages status", b->status[i] < 0 ? -b->status[i] : EIO);
}

/* Real-move setting: every page back on the slow node before a timed side. */
static void reset_to_slow(struct bench *b)
{
	if (b->slow != b->fast)
		move_all(b, b->back);
}

/* A timed side: pages per second, and the seconds of it spent in move_pages. */
struct side {
	double rate, kernel;
};

static struct side run_promoter(struct bench *b, bool on_slow)
{
	uint64_t before = stats_promoted_pages_total(&b->stats);
	double t0, t1;
	int r;

	reset_to_slow(b);
	bench_queue_all(b, on_slow);
	b->in_kernel = 0;
	t0 = seconds();
	while ((r = promoter_run_once(b->p, b->cfg, b->now_ms)) > 0)
		;
	t1 = seconds();
	if (r < 0)
		die("promoter_run_once", r);
	if (stats_promoted_pages_total(&b->stats) - before != b->n)
		die("promoter moved fewer pages than queued", EIO);
	return (struct side){(double)b->n / (t1 - t0), b->in_kernel};
}

static struct side run_raw(struct bench *b)
{
	double t0, t1;

	reset_to_slow(b);
	b->in_kernel = 0;
	t0 = seconds();
	move_all(b, b->nodes);
	t1 = seconds();
	return (struct side){(double)b->n / (t1 - t0), b->in_kernel};
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct bench b = {.n = 65536, .near = -1};
	int reps = 41, arg = 1;
	double *prom, *query, *raw, *r_prom, *r_query, *r_kernel, *outside;

	for (; arg + 1 < argc && argv[arg][0] == '-'; arg += 2) {
		if (strcmp(argv[arg], "--slow") == 0)
			b.slow = atoi(argv[arg + 1]);
		else if (strcmp(argv[arg], "--fast") == 0)
			b.fast = atoi(argv[arg + 1]);
		else if (strcmp(argv[arg], "--near") == 0)
			b.near = atoi(argv[arg + 1]);
		else
			break;
	}
	if (arg < argc)
		b.n = strtoul(argv[arg++], NULL, 0);
	if (arg < argc)
		reps = atoi(argv[arg++]);
	if (b.n == 0 || reps <= 0 || arg < argc || b.slow < 0 || b.fast < 0) {
		fprintf(stderr, "usage: bench_promoter [--slow NODE --fast NODE] [--near 0|1] "
				"[PAGES [REPS]]\n");
		return 2;
	}
	prom = calloc((size_t)reps, sizeof(*prom));
	query = calloc((size_t)reps, sizeof(*query));
	raw = calloc((size_t)reps, sizeof(*raw));
	r_prom = calloc((size_t)reps, sizeof(*r_prom));
	r_query = calloc((size_t)reps, sizeof(*r_query));
	r_kernel = calloc((size_t)reps, sizeof(*r_kernel));
	outside = calloc((size_t)reps, sizeof(*outside));
	if (!prom || !query || !raw || !r_prom || !r_query || !r_kernel || !outside)
		return 1;
	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	bench_setup(&b);
	run_raw(&b); /* warm every path once */
	run_promoter(&b, true);
	run_promoter(&b, false);
	for (int i = 0; i < reps; i++) {
		struct side sr = {0}, sp = {0}, sq = {0};

		/* Rotate the order so no side always runs on a warmer cache. */
		for (int k = 0; k < 3; k++) {
			switch ((i + k) % 3) {
			case 0:
				sr = run_raw(&b);
				break;
			case 1:
				sp = run_promoter(&b, true);
				break;
			default:
				sq = run_promoter(&b, false);
				break;
			}
		}
		raw[i] = sr.rate;
		prom[i] = sp.rate;
		query[i] = sq.rate;
		r_prom[i] = prom[i] / raw[i];
		r_query[i] = query[i] / raw[i];
		/* Where the promoter's time goes: the kernel's move_pages against the raw side's,
		 * and what is left (bookkeeping, in microseconds per page). */
		r_kernel[i] = sp.kernel / sr.kernel;
		outside[i] = ((double)b.n / sp.rate - sp.kernel) / (double)b.n * 1e6;
	}
	qsort(prom, (size_t)reps, sizeof(*prom), cmp_double);
	qsort(query, (size_t)reps, sizeof(*query), cmp_double);
	qsort(raw, (size_t)reps, sizeof(*raw), cmp_double);
	qsort(r_prom, (size_t)reps, sizeof(*r_prom), cmp_double);
	qsort(r_query, (size_t)reps, sizeof(*r_query), cmp_double);
	qsort(r_kernel, (size_t)reps, sizeof(*r_kernel), cmp_double);
	qsort(outside, (size_t)reps, sizeof(*outside), cmp_double);
	printf("pages: %zu, batch: %d, repetitions: %d, node %d to node %d%s (medians; ratios: "
	       "medians of the per-repetition ratios)\n",
	       b.n, BATCH, reps, b.slow, b.fast, b.slow == b.fast ? " (no migration)" : "");
	printf("raw move_pages: %.0f pages/s\n", raw[reps / 2]);
	printf("promoter, placement from the sample: %.0f pages/s\n", prom[reps / 2]);
	printf("promoter, placement query: %.0f pages/s\n", query[reps / 2]);
	printf("promoter's move_pages time / raw's: %.3f (%.3f-%.3f)\n", r_kernel[reps / 2],
	       r_kernel[0], r_kernel[reps - 1]);
	printf("promoter outside move_pages: %.3f us/page (%.3f-%.3f)\n", outside[reps / 2],
	       outside[0], outside[reps - 1]);
	printf("promoter_query_vs_raw: %.3f\n", r_query[reps / 2]);
	printf("promoter_vs_raw: %.3f\n", r_prom[reps / 2]);
	kill(b.owner, SIGKILL);
	waitpid(b.owner, NULL, 0);
	free(r_prom);
	free(r_query);
	free(r_kernel);
	free(outside);
	free(prom);
	free(query);
	free(raw);
	return 0;
}
