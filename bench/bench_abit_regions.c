/* bench_abit_regions: the cost of region sampling's bookkeeping against the I/O it stands in
 * front of.
 *
 * Bookkeeping: a process of 64 GiB covered by max_regions = 1000 regions (min_regions 250,
 * ABIT_SAMPLES_PER_AGGR samples per aggregation interval, as the daemon takes) under a pattern
 * that keeps many regions apart (bands of several access frequencies over a lukewarm
 * background). Per sampling interval the caller runs abit_regions_prepare() and
 * abit_regions_check(); every ABIT_SAMPLES_PER_AGGR-th check also runs the aggregation
 * (snapshot, merge, split). Both are timed, the pattern's own work is not, and
 * reported as ns per region.
 *
 * I/O: what one sampled page costs the caller through page_idle (lazy marking, see
 * abit_sampler.h). On a kernel that is one 8-byte pread of its pagemap entry (its PFN), one
 * 8-byte pwrite of its bitmap word (mark idle) and one 8-byte pread of the word (read back).
 * This host has no page_idle, so the benchmark times the same three calls on a regular
 * temporary file (64 MiB, random 8-byte-aligned offsets): a lower bound, since the kernel's
 * bitmap read takes a reference on each of the word's 64 pages, and on 6.1 a pagemap read
 * walks page tables to the end of its 2 MiB (bench_idle_io measures the real calls).
 *
 * Last line: regions_vs_page_idle_io: <bookkeeping ns per region per sampling interval,
 * aggregation included / I/O ns per sampled page>. Runs alternate, best of RUNS.
 *
 * Usage: bench_abit_regions */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sources/abit/abit_source.h"
#include "sources/abit/abit_regions.h"

#define PAGE	 UINT64_C(4096)
#define GIB	 (UINT64_C(1) << 30)
#define BASE	 (UINT64_C(1) << 40)
#define SPAN	 (64 * GIB)
#define MAX_REG	 1000
#define AGGR	 ABIT_SAMPLES_PER_AGGR
#define AGGRS	 200 /* aggregation intervals per run */
#define IO_PAGES 200000
#define IO_FILE	 (UINT64_C(64) << 20)
#define RUNS	 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Chance in 1024 that a sampled page was accessed: a few bands of different heat over a
 * lukewarm background, so counts differ and regions stay many. */
static bool accessed(uint64_t addr, uint64_t *state)
{
	uint64_t off = addr - BASE, r = abit_rng_splitmix64(state) % 1024;

	if (off % (4 * GIB) < 64 * (UINT64_C(1) << 20))
		return r < 1000;
	if (off % (GIB + 12345 * PAGE) < 256 * (UINT64_C(1) << 20))
		return r < 300;
	return r < 40;
}

struct book {
	double sample_ns, aggr_ns; /* per region */
	double regions;		   /* mean live regions at sampling */
};

static int run_bookkeeping(struct book *out)
{
	struct abit_regions_params p = {.min_regions = MAX_REG / 4,
					.max_regions = MAX_REG,
					.samples_per_aggr = AGGR,
					.page_size = PAGE};
	struct abit_range span = {BASE, BASE + SPAN};
	static uint64_t addr[MAX_REG];
	static bool acc[MAX_REG];
	uint64_t seed = 1, pattern = 2;
	double t_sample = 0, t_aggr = 0, reg_sample = 0, reg_aggr = 0;
	struct abit_regions *rs;
	int r =
	    abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64, .ctx = &seed}, &rs);

	if (r < 0 || (r = abit_regions_update(rs, &span, 1)) < 0)
		return r;
	for (int k = 0; k < AGGRS * AGGR; k++) {
		double t0 = now_ns(), t1, t2, t3;
		int n = abit_regions_prepare(rs, addr, MAX_REG);

		t1 = now_ns();
		for (int i = 0; i < n; i++)
			acc[i] = accessed(addr[i], &pattern);
		t2 = now_ns();
		r = abit_regions_check(rs, acc, (size_t)n);
		t3 = now_ns();
		/* The first aggregation intervals settle from the even start; not counted. */
		if (k < 10 * AGGR)
			continue;
		if (r == 1) {
			t_aggr += t3 - t2;
			reg_aggr += n;
			t_sample += t1 - t0;
		} else {
			t_sample += (t1 - t0) + (t3 - t2);
		}
		reg_sample += n;
	}
	out->sample_ns = t_sample / reg_sample;
	out->aggr_ns = t_aggr / reg_aggr;
	out->regions = reg_sample / ((AGGRS - 10) * AGGR);
	abit_regions_free(rs);
	return 0;
}

/* ns per sampled page of the three 8-byte calls on a temporary file. */
static double run_io(int fd, uint64_t *offs)
{
	uint64_t word = ~UINT64_C(0), v = 0;
	double t0 = now_ns();

	for (int i = 0; i < IO_PAGES; i++) {
		if (pwrite(fd, &word, 8, (off_t)offs[i]) != 8 ||
		    pread(fd, &v, 8, (off_t)offs[i]) != 8 ||
		    pread(fd, &v, 8, (off_t)(IO_FILE - 8 - offs[i])) != 8)
			return -1;
	}
	return (now_ns() - t0) / IO_PAGES;
}

static int io_setup(uint64_t **offs)
{
	char path[] = "/tmp/bench_abit_regions.XXXXXX";
	uint64_t s = 3;
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	unlink(path);
	*offs = malloc(IO_PAGES * sizeof(**offs));
	if (!*offs || ftruncate(fd, (off_t)IO_FILE) < 0) {
		close(fd);
		return -ENOMEM;
	}
	for (int i = 0; i < IO_PAGES; i++)
		(*offs)[i] = abit_rng_splitmix64(&s) % (IO_FILE / 8) * 8;
	return fd;
}

int main(void)
{
	struct book best = {0}, b;
	double io = 0, per_region;
	uint64_t *offs = NULL;
	int fd = io_setup(&offs);

	if (fd < 0) {
		fprintf(stderr, "bench_abit_regions: temporary file: %d\n", fd);
		return 1;
	}
	for (int i = 0; i < RUNS; i++) {
		double t;

		if (run_bookkeeping(&b) < 0)
			return 1;
		t = run_io(fd, offs);
		if (t < 0)
			return 1;
		if (!i || b.sample_ns + b.aggr_ns < best.sample_ns + best.aggr_ns)
			best = b;
		if (!i || t < io)
			io = t;
	}
	close(fd);
	free(offs);
	/* An aggregation pass comes once per AGGR sampling intervals. */
	per_region = best.sample_ns + best.aggr_ns / AGGR;
	printf("span 64 GiB, max_regions %d, min_regions %d, %d samples per aggregation, "
	       "%.0f regions on average; best of %d\n",
	       MAX_REG, MAX_REG / 4, AGGR, best.regions, RUNS);
	printf("bookkeeping per region: %.1f ns per sampling interval (prepare + check), "
	       "%.1f ns per aggregation pass (snapshot, merge, split)\n",
	       best.sample_ns, best.aggr_ns);
	printf("page_idle I/O stand-in per sampled page (pwrite + pread of a bitmap word, "
	       "pread of a pagemap entry, 8 bytes each, regular file): %.1f ns\n",
	       io);
	printf("regions_vs_page_idle_io: %.4f\n", per_region / io);
	return 0;
}
