/* bench_abit_find: how soon region sampling first samples every unit of a hot set it knows
 * nothing of, against a uniform random sampler making as many samples a second. A model of
 * the daemon's sampler, no I/O: abit_regions with the daemon's parameters (max_regions 1000,
 * min_regions 250, ABIT_SAMPLES_PER_AGGR steps an aggregation, tail draws over 2 MiB pieces)
 * over one range of SIZE MiB, a step every 125 ms (the shipped scan_interval_ms of 1000 over
 * ABIT_HOT_SPEEDUP and ABIT_SAMPLES_PER_ROUND).
 *
 * Each trial runs a minute of steps in which nothing is accessed (the regions merge, split and
 * back off as a quiet process's do), then places UNITS units of 2 MiB at random page offsets,
 * accessed at every step, and counts the steps until a sample has landed in each unit. That is
 * the part of the time to 95% of scenario-scale's hot set (13 units, all of them needed) that
 * no later step can shorten: each unit is watched page by page only after its first sample.
 *
 * Prints the median and 90th percentile of that time and the samples a second, as shipped and
 * with every region woken at every step (what pages arriving on the slow tier do for two
 * aggregation intervals). Uniform random sampling at R samples a second finds the last of n
 * units after H(n) * pages / (512 * R) seconds on average (H the harmonic number).
 *
 * Last line: find_vs_uniform: <median time as shipped / that expectation at the same rate>.
 *
 * Usage: bench_abit_find [--size-mib N] [--units N] [--trials N] */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/abit/abit_source.h"
#include "sources/abit/abit_regions.h"
#include "sources/abit/abit_sampler.h"

#define PAGE	   UINT64_C(4096)
#define BASE	   (UINT64_C(1) << 40)
#define MAX_REG	   1000
#define UNIT_PAGES 512
#define STEPS_S	   (1000.0 / (1000 / ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND))
#define QUIET_S	   60
#define MAX_UNITS  64

struct trial_out {
	double seconds; /* until every unit was sampled once; the cap when not */
	uint64_t samples, steps;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One trial; awake: every region woken before each step of the second part. */
static int trial(uint64_t pages, int units, uint64_t seed, bool awake, struct trial_out *out)
{
	struct abit_regions_params p = {.min_regions = MAX_REG / 4,
					.max_regions = MAX_REG,
					.samples_per_aggr = ABIT_SAMPLES_PER_AGGR,
					.page_size = PAGE,
					.piece_pages = ABIT_PIECE_PAGES,
					.tail_pages = ABIT_SAMPLE_PIECE_END_PAGES};
	struct abit_range r = {BASE, BASE + pages * PAGE};
	uint64_t rng = seed, place = seed ^ UINT64_C(0x9e3779b97f4a7c15), unit[MAX_UNITS];
	uint64_t addr[MAX_REG];
	bool acc[MAX_REG], seen[MAX_UNITS] = {false};
	uint64_t cap = (uint64_t)(STEPS_S * 600);
	struct abit_regions *rs;
	int left = units, n;

	if (abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64, .ctx = &rng}, &rs) <
	    0)
		return -1;
	if (abit_regions_update(rs, &r, 1) < 0)
		goto fail;
	memset(acc, 0, sizeof(acc));
	for (int s = 0; s < (int)(STEPS_S * QUIET_S); s++) {
		n = abit_regions_prepare(rs, addr, MAX_REG);
		if (n < 0 || abit_regions_check(rs, acc, (size_t)n) < 0)
			goto fail;
	}
	for (int u = 0; u < units; u++)
		unit[u] = BASE + abit_rng_splitmix64(&place) % (pages - UNIT_PAGES) * PAGE;
	*out = (struct trial_out){0};
	while (left > 0 && out->steps < cap) {
		if (awake)
			abit_regions_wake(rs);
		n = abit_regions_prepare(rs, addr, MAX_REG);
		if (n < 0)
			goto fail;
		for (int i = 0; i < n; i++) {
			acc[i] = false;
			if (!addr[i])
				continue;
			out->samples++;
			for (int u = 0; u < units; u++) {
				if (addr[i] < unit[u] || addr[i] >= unit[u] + UNIT_PAGES * PAGE)
					continue;
				acc[i] = true;
				if (!seen[u]) {
					seen[u] = true;
					left--;
				}
			}
		}
		if (abit_regions_check(rs, acc, (size_t)n) < 0)
			goto fail;
		out->steps++;
	}
	out->seconds = (double)out->steps / STEPS_S;
	abit_regions_free(rs);
	return 0;
fail:
	abit_regions_free(rs);
	return -1;
}

/* Median and 90th percentile over trials; returns samples a second. */
static double run(uint64_t pages, int units, int trials, bool awake, double *med, double *p90)
{
	double *t = calloc((size_t)trials, sizeof(*t));
	uint64_t samples = 0, steps = 0;

	if (!t)
		return -1;
	for (int k = 0; k < trials; k++) {
		struct trial_out o;

		if (trial(pages, units, UINT64_C(1000) + (uint64_t)k, awake, &o) < 0) {
			free(t);
			return -1;
		}
		t[k] = o.seconds;
		samples += o.samples;
		steps += o.steps;
	}
	qsort(t, (size_t)trials, sizeof(*t), cmp_double);
	*med = t[trials / 2];
	*p90 = t[trials * 9 / 10];
	free(t);
	return steps ? (double)samples / ((double)steps / STEPS_S) : 0;
}

int main(int argc, char **argv)
{
	uint64_t mib = 4096;
	int units = 13, trials = 200;
	double med, p90, rate, wmed, wp90, wrate, h = 0, expect;
	uint64_t pages;

	bool bad = argc % 2 == 0;

	for (int i = 1; i + 1 < argc && !bad; i += 2) {
		if (strcmp(argv[i], "--size-mib") == 0)
			mib = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--units") == 0)
			units = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--trials") == 0)
			trials = atoi(argv[i + 1]);
		else
			bad = true;
	}
	pages = mib * (1024 * 1024 / PAGE);
	if (bad || units < 1 || units > MAX_UNITS || trials < 1 ||
	    pages < (uint64_t)UNIT_PAGES * (uint64_t)units * 2) {
		fprintf(stderr,
			"usage: bench_abit_find [--size-mib N] [--units 1..%d] "
			"[--trials N] (at least two units' room per unit)\n",
			MAX_UNITS);
		return 2;
	}
	rate = run(pages, units, trials, false, &med, &p90);
	wrate = run(pages, units, trials, true, &wmed, &wp90);
	if (rate <= 0 || wrate <= 0) {
		fprintf(stderr, "bench_abit_find: abit_regions refused the model\n");
		return 1;
	}
	for (int k = 1; k <= units; k++)
		h += 1.0 / k;
	expect = h * (double)pages / UNIT_PAGES / rate;
	printf("%" PRIu64 " MiB, %d units of 2 MiB, %d trials, a step every %.0f ms\n", mib, units,
	       trials, 1000 / STEPS_S);
	printf("as shipped: %.0f samples/s, every unit sampled after %.2f s (median), %.2f s "
	       "(90th percentile); uniform at that rate: %.2f s\n",
	       rate, med, p90, expect);
	printf("every region awake: %.0f samples/s, %.2f s (median), %.2f s (90th percentile); "
	       "uniform at that rate: %.2f s\n",
	       wrate, wmed, wp90, h * (double)pages / UNIT_PAGES / wrate);
	printf("find_vs_uniform: %.2f\n", med / expect);
	return 0;
}
