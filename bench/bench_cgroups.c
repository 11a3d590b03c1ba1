/* bench_cgroups: the main thread's CPU each stats interval for the per-cgroup figures (issue
 * 46), with 16, 1,000 and 10,000 processes, each in a cgroup of its own, at the shipped
 * stats.cgroups_max.
 *
 * Each interval the daemon runs engine_tick() and then writes the stats file
 * (src/daemon/main.c): procs_sweep() (every registered process's stat file: the registry's
 * work, not the per-cgroup figures', shown beside them), cgroups_refresh(), and
 * stats_write_file(), whose render ends with cgroups_render() (stats_set_extra(), as
 * engine.c sets it). The bench times these phases, and cgroups_render() on its own, over
 * ROUNDS rounds after the warm-up rounds that read every process once, on a fixture /proc
 * tree (tests/cgroups_fixture.h; no real process is read) with what the daemon gives
 * cgroups_new(): a registry of ENGINE_MAX_PROCS places and the default reads a round
 * (CGROUPS_READS_PER_TICK) and numa_maps allowance. Between rounds every process has a page
 * promoted and one demoted, untimed (the mover's thread calls cgroups_moved()), so every
 * process's counts are summed each round; no hot pages wait (their count walks the hot
 * table, whatever the processes).
 *
 * Figures, a case a row: the CPU time (CLOCK_PROCESS_CPUTIME_ID) of each phase a round,
 * median (min-max); the per-cgroup part (cgroups_refresh() + cgroups_render()) as CPU and
 * wall time (CLOCK_MONOTONIC) a round and CPU a process; the stats file's bytes and the
 * per-cgroup families' share; the growth of the peak RSS (getrusage) over the timed rounds.
 * Then the growth of the peak RSS from the 1,000 case to the 10,000 one, and the ratios of
 * 10,000 to 1,000 a process.
 *
 * Last line: cgroups_per_process_ratio: <per-cgroup CPU a process with 10,000 / with 1,000>
 * (1: linear in the processes; below 1: part of a round does not grow with them).
 *
 * Usage: bench_cgroups (PGHOTD_FIXTURES: tests/fixtures, when not the source tree's) */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "base/config.h"
#include "base/stats.h"
#include "daemon/engine.h"
#include "table/cgroups.h"
#include "table/procs.h"
#include "cgroups_fixture.h"

#define ROUNDS	       21
#define CASES	       3
#define SLOW_PAGES_MAX 1000

enum phase { PH_SWEEP, PH_REFRESH, PH_WRITE, PH_RENDER, PH__COUNT };

static const char *const phase_names[PH__COUNT] = {"procs_sweep", "cgroups_refresh",
						   "stats_write_file", "cgroups_render"};

/* One case's figures: medians and spreads in seconds. */
struct result {
	unsigned procs;
	double cpu[PH__COUNT][3]; /* median, min, max */
	double part_cpu, part_wall;
	size_t file_bytes, cgroup_bytes;
	long rss_growth_kib, maxrss_kib;
};

struct times {
	double cpu[PH__COUNT][ROUNDS];
	double part_cpu[ROUNDS], part_wall[ROUNDS];
};

static int die(const char *what, int r)
{
	fprintf(stderr, "bench_cgroups: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(1);
}

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long maxrss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v[ROUNDS] and keeps its median, min and max in out[3]. */
static void spread(double *v, double *out)
{
	qsort(v, ROUNDS, sizeof(*v), by_value);
	out[0] = v[ROUNDS / 2];
	out[1] = v[0];
	out[2] = v[ROUNDS - 1];
}

static double median(double *v)
{
	double s[3];

	spread(v, s);
	return s[0];
}

/* The shipped stats.cgroups_max: the configuration's default. */
static unsigned shipped_cgroups_max(void)
{
	struct pghotd_config *cfg;
	unsigned max;
	int r = config_new_defaults(&cfg);

	if (r < 0)
		die("config_new_defaults", r);
	max = cfg->stats.cgroups_max;
	config_free(cfg);
	return max;
}

static const char *fixtures_dir(void)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	return dir ? dir : PGHOTD_FIXTURES_DIR;
}

/* n processes, process i in cgroup /w.slice/job-i with one page on node 0 and
 * (i - 1) % SLOW_PAGES_MAX + 1 on the slow node 2 (the shown set: the largest, and it stays).
 * At most 4 MB resident, so a round's reads stay within the numa_maps allowance
 * (CGROUPS_WALK_BYTES) and every process read has its numa_maps read: every round does the
 * most a round does. */
static struct cgfx *fixture(unsigned n)
{
	const struct cgfx_opts o = {.max_shown = shipped_cgroups_max(),
				    .max_procs = ENGINE_MAX_PROCS};
	struct cgfx *f;
	char path[32];
	int r = cgfx_new(fixtures_dir(), &o, &f);

	if (r < 0)
		die("cgfx_new", r);
	for (unsigned i = 1; i <= n && r == 0; i++) {
		uint64_t pages[CGFX_NODES] = {1, 0, (i - 1) % SLOW_PAGES_MAX + 1};
		int len = snprintf(path, sizeof(path), "/w.slice/job-%u", i);

		r = cgfx_proc(f, (pid_t)(100 + i), path, (size_t)len, pages);
	}
	if (r < 0)
		die("cgfx_proc", r);
	stats_set_extra(&f->stats, cgroups_render, f->cg);
	return f;
}

/* What the mover counts for every process between two intervals. */
static void move_every_process(struct cgfx *f, unsigned n)
{
	for (unsigned i = 1; i <= n; i++) {
		int64_t h = procs_handle(f->procs, (pid_t)(100 + i));

		if (h < 0)
			die("procs_handle", (int)h);
		cgroups_moved(f->cg, (uint32_t)h, CGROUPS_PROMOTED, 1);
		cgroups_moved(f->cg, (uint32_t)h, CGROUPS_DEMOTED, 1);
	}
}

/* cgroups_render() alone into memory: 0 or -errno; its bytes in *bytes. */
static int render_cgroups(struct cgfx *f, size_t *bytes)
{
	char *text;
	int r = cgfx_render(f, &text, bytes);

	if (r == 0)
		free(text);
	return r;
}

/* One interval as the daemon's main thread runs it, each phase's CPU and wall time. */
static void interval(struct cgfx *f, const char *file, double *cpu, double *wall)
{
	double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC), c, w;
	size_t bytes;
	int r;

	for (int p = 0; p < PH__COUNT; p++) {
		if (p == PH_SWEEP)
			r = procs_sweep(f->procs) < 0 ? -EIO : 0;
		else if (p == PH_REFRESH)
			cgroups_refresh(f->cg, f->cfg);
		else if (p == PH_WRITE)
			r = stats_write_file(&f->stats, file);
		else
			r = render_cgroups(f, &bytes);
		if (r < 0)
			die(phase_names[p], r);
		c = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		w = clock_s(CLOCK_MONOTONIC);
		cpu[p] = c - c0;
		wall[p] = w - w0;
		c0 = c;
		w0 = w;
	}
}

/* Rounds until every process has been read once (new ones first, CGROUPS_READS_PER_TICK a
 * round), and two more for the shown set to settle. */
static void warm_up(struct cgfx *f, unsigned n)
{
	for (unsigned i = 0; i < n / CGROUPS_READS_PER_TICK + 3; i++)
		cgroups_refresh(f->cg, f->cfg);
}

static void run_rounds(struct cgfx *f, unsigned n, const char *file, struct times *t)
{
	double cpu[PH__COUNT], wall[PH__COUNT];

	for (int i = 0; i < ROUNDS; i++) {
		move_every_process(f, n);
		interval(f, file, cpu, wall);
		for (int p = 0; p < PH__COUNT; p++)
			t->cpu[p][i] = cpu[p];
		t->part_cpu[i] = cpu[PH_REFRESH] + cpu[PH_RENDER];
		t->part_wall[i] = wall[PH_REFRESH] + wall[PH_RENDER];
	}
}

static void file_sizes(struct cgfx *f, const char *file, struct result *res)
{
	struct stat st;
	int r = stat(file, &st) < 0 ? -errno : render_cgroups(f, &res->cgroup_bytes);

	if (r < 0)
		die(file, r);
	res->file_bytes = (size_t)st.st_size;
}

static void run_case(unsigned n, struct result *res)
{
	static struct times t;
	struct cgfx *f = fixture(n);
	char file[96];
	long rss0;
	int r;

	snprintf(file, sizeof(file), "%s/pghotd.prom", f->root);
	warm_up(f, n);
	rss0 = maxrss_kib();
	run_rounds(f, n, file, &t);
	res->maxrss_kib = maxrss_kib();
	res->rss_growth_kib = res->maxrss_kib - rss0;
	res->procs = n;
	for (int p = 0; p < PH__COUNT; p++)
		spread(t.cpu[p], res->cpu[p]);
	res->part_cpu = median(t.part_cpu);
	res->part_wall = median(t.part_wall);
	file_sizes(f, file, res);
	r = cgfx_free(f);
	if (r < 0)
		die("cgfx_free", r);
}

static void print_case(const struct result *r)
{
	printf("%6u", r->procs);
	for (int p = 0; p < PH__COUNT; p++)
		printf("  %7.3f (%.3f-%.3f)", r->cpu[p][0] * 1e3, r->cpu[p][1] * 1e3,
		       r->cpu[p][2] * 1e3);
	printf("  %7.3f %7.3f  %6.2f  %7zu %6zu  %4ld\n", r->part_cpu * 1e3, r->part_wall * 1e3,
	       r->part_cpu / r->procs * 1e6, r->file_bytes, r->cgroup_bytes, r->rss_growth_kib);
}

/* 10,000 against 1,000, a process. */
static double per_process_ratio(double hi, double lo, const struct result *res)
{
	return (hi / res[2].procs) / (lo / res[1].procs);
}

static void print_ratios(const struct result *res)
{
	printf("peak RSS: %ld KiB after the %u case, %ld after the %u case: %+ld KiB\n",
	       res[1].maxrss_kib, res[1].procs, res[2].maxrss_kib, res[2].procs,
	       res[2].maxrss_kib - res[1].maxrss_kib);
	printf("%u against %u, CPU a process:", res[2].procs, res[1].procs);
	for (int p = 0; p < PH__COUNT; p++)
		printf(" %s %.2f", phase_names[p],
		       per_process_ratio(res[2].cpu[p][0], res[1].cpu[p][0], res));
	printf("; cgroups_render a round %.2f\n",
	       res[2].cpu[PH_RENDER][0] / res[1].cpu[PH_RENDER][0]);
	printf("cgroups_per_process_ratio: %.3f\n",
	       per_process_ratio(res[2].part_cpu, res[1].part_cpu, res));
}

int main(void)
{
	static const unsigned procs[CASES] = {16, 1000, 10000};
	struct result res[CASES];

	printf("processes in a cgroup each, stats.cgroups_max %u, registry %u places, %d rounds; "
	       "CPU ms a round, median (min-max)\n",
	       shipped_cgroups_max(), ENGINE_MAX_PROCS, ROUNDS);
	printf("%6s", "procs");
	for (int p = 0; p < PH__COUNT; p++)
		printf("  %-23s", phase_names[p]);
	printf("  per-cgroup: cpu_ms wall_ms us/proc  file_B cgrp_B  rss+KiB\n");
	for (int i = 0; i < CASES; i++) {
		run_case(procs[i], &res[i]);
		print_case(&res[i]);
		fflush(stdout);
	}
	print_ratios(res);
	return 0;
}
