/* bench_promoter: pages per second moved through the promoter versus a plain move_pages(2)
 * loop over the same pages with the same batch size, in the same run, alternating.
 *
 * The promoter side is the whole interval path: hot-table pop, grouping, placement query,
 * target choice, page-size lookup (PAGEMAP_SCAN), move, per-page settling and stats; the
 * raw side is move_pages alone. On a one-node machine node 0 is declared slow and is also
 * the fixed target, so the kernel walks every page but finds it already in place: the
 * figure measures the promoter's overhead on top of the kernel's per-call cost, not
 * migration bandwidth. Recording the pages into the hot table is not timed.
 *
 * Usage: bench_promoter [pages] [reps]. Last line: promoter_vs_raw: <promoter/raw>. */
#include <errno.h>
#include <numaif.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "src/config.h"
#include "src/hot_table.h"
#include "src/log.h"
#include "src/procs.h"
#include "src/promoter.h"
#include "src/stats.h"
#include "src/topology.h"

#define BATCH 512

struct bench {
	size_t n;
	char *mem;
	void **pages;
	int *nodes, *status;
	struct topology *topo;
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct pghotd_config *cfg;
	struct promoter *p;
	uint32_t h;
	uint64_t now_ms;
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int die(const char *what, int r)
{
	fprintf(stderr, "bench_promoter: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

static void bench_setup(struct bench *b)
{
	struct promoter_deps d;
	long ps = sysconf(_SC_PAGESIZE);
	int64_t h;
	int r;

	b->mem = mmap(NULL, b->n * (size_t)ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (b->mem == MAP_FAILED)
		die("mmap", errno);
	/* Base pages on both sides: a THP would move 512 pages per address. */
	madvise(b->mem, b->n * (size_t)ps, MADV_NOHUGEPAGE);
	b->pages = calloc(b->n, sizeof(*b->pages));
	b->nodes = calloc(b->n, sizeof(*b->nodes));
	b->status = calloc(b->n, sizeof(*b->status));
	if (!b->pages || !b->nodes || !b->status)
		die("calloc", ENOMEM);
	for (size_t i = 0; i < b->n; i++) {
		b->mem[i * (size_t)ps] = 1;
		b->pages[i] = b->mem + i * (size_t)ps;
	}
	if ((r = topology_load("/sys", &b->topo)) < 0)
		die("topology_load", r);
	if ((r = config_new_defaults(&b->cfg)) < 0)
		die("config", r);
	b->cfg->tiers.slow_nodes.n = 1;
	b->cfg->tiers.slow_nodes.node[0] = 0;
	b->cfg->promotion.target = TARGET_FIXED;
	b->cfg->promotion.target_nodes.n = 1;
	b->cfg->promotion.target_nodes.node[0] = 0;
	b->cfg->promotion.rate_limit_mbps = 0;
	b->cfg->promotion.min_free_percent = 0;
	b->cfg->promotion.batch = BATCH;
	if ((r = topology_apply_config(b->topo, b->cfg)) < 0)
		die("topology_apply_config", r);
	if ((r = hot_table_new(b->n * 8, b->n, &b->hot)) < 0)
		die("hot_table_new", r);
	if ((r = procs_new("/proc", 16, &b->procs)) < 0)
		die("procs_new", r);
	h = procs_handle(b->procs, getpid());
	if (h <= 0)
		die("procs_handle", (int)h);
	b->h = (uint32_t)h;
	stats_init(&b->stats, b->topo->nr_nodes);
	d = (struct promoter_deps){.hot = b->hot,
				   .procs = b->procs,
				   .topo = b->topo,
				   .stats = &b->stats,
				   .ops = &promoter_real_ops};
	if ((r = promoter_new(&d, &b->p)) < 0)
		die("promoter_new", r);
	b->now_ms = 1000;
}

static void bench_queue_all(struct bench *b)
{
	struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 0};

	b->now_ms += 10000;
	for (size_t i = 0; i < b->n; i++) {
		struct hot_access a = {
		    .proc = b->h, .vaddr = (uintptr_t)b->pages[i], .now_ms = b->now_ms, .node = 0};
		int r = hot_table_record(b->hot, &a, &hp);

		if (r != 1)
			die("hot_table_record did not queue a page", r < 0 ? r : EINVAL);
	}
}

static double run_promoter(struct bench *b)
{
	uint64_t before = stats_promoted_pages_total(&b->stats);
	double t0, t1;
	int r;

	bench_queue_all(b);
	t0 = seconds();
	while ((r = promoter_run_once(b->p, b->cfg, b->now_ms)) > 0)
		;
	t1 = seconds();
	if (r < 0)
		die("promoter_run_once", r);
	if (stats_promoted_pages_total(&b->stats) - before != b->n)
		die("promoter moved fewer pages than queued", EIO);
	return (double)b->n / (t1 - t0);
}

static double run_raw(struct bench *b)
{
	pid_t pid = getpid();
	double t0, t1;

	t0 = seconds();
	for (size_t i = 0; i < b->n; i += BATCH) {
		size_t c = b->n - i < BATCH ? b->n - i : BATCH;

		if (move_pages(pid, c, b->pages + i, b->nodes + i, b->status + i, MPOL_MF_MOVE) < 0)
			die("move_pages", errno);
	}
	t1 = seconds();
	for (size_t i = 0; i < b->n; i++)
		if (b->status[i] != 0)
			die("raw move_pages status", -b->status[i]);
	return (double)b->n / (t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct bench b = {.n = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536};
	int reps = argc > 2 ? atoi(argv[2]) : 7;
	double *prom, *raw;

	if (b.n == 0 || reps <= 0)
		return 2;
	prom = calloc((size_t)reps, sizeof(*prom));
	raw = calloc((size_t)reps, sizeof(*raw));
	if (!prom || !raw)
		return 1;
	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	bench_setup(&b);
	run_raw(&b); /* warm both paths once */
	run_promoter(&b);
	for (int i = 0; i < reps; i++) {
		/* Alternate the order so neither side always runs on a warmer cache. */
		if (i % 2) {
			raw[i] = run_raw(&b);
			prom[i] = run_promoter(&b);
		} else {
			prom[i] = run_promoter(&b);
			raw[i] = run_raw(&b);
		}
	}
	qsort(prom, (size_t)reps, sizeof(*prom), cmp_double);
	qsort(raw, (size_t)reps, sizeof(*raw), cmp_double);
	printf("pages: %zu, batch: %d, repetitions: %d (medians)\n", b.n, BATCH, reps);
	printf("raw move_pages: %.0f pages/s\n", raw[reps / 2]);
	printf("promoter: %.0f pages/s\n", prom[reps / 2]);
	printf("promoter_vs_raw: %.3f\n", prom[reps / 2] / raw[reps / 2]);
	free(prom);
	free(raw);
	return 0;
}
