/* Region sampling's logic on synthetic access patterns: bands of pages, each accessed in a
 * sampling interval with its own probability, everything else cold. The pattern draws from
 * its own generator, the regions from theirs, both seeded, so every run is the same. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/abit/abit_regions.h"

#define PAGE	 UINT64_C(4096)
#define MIB	 (UINT64_C(1) << 20)
#define GIB	 (UINT64_C(1) << 30)
#define BASE	 (UINT64_C(1) << 40) /* where the test's address space starts */
#define MAX_REG	 1000
#define MIN_REG	 10
#define AGGR	 20 /* DAMON's defaults: 5 ms samples, 100 ms aggregation */
#define MAX_BAND 4

struct band {
	uint64_t start, end;
	uint32_t permille; /* chance that a page of it is accessed in a sampling interval */
};

struct sim {
	struct abit_regions *rs;
	uint64_t rng_state, pattern_state;
	struct band band[MAX_BAND];
	size_t nband;
	uint64_t addr[MAX_REG];
	bool acc[MAX_REG];
	struct abit_region_info reg[MAX_REG];
};

#define PIECE 512 /* pages: the daemon's 2 MiB */
#define TAIL  32

/* Whether sim_init() turns tail draws on (half of the samples in the last TAIL pages of a
 * PIECE), as the daemon does. */
static bool tails;

static struct abit_regions_params params(uint32_t min, uint32_t max)
{
	return (struct abit_regions_params){.min_regions = min,
					    .max_regions = max,
					    .samples_per_aggr = AGGR,
					    .page_size = PAGE,
					    .piece_pages = tails ? PIECE : 0,
					    .tail_pages = tails ? TAIL : 0};
}

static void sim_init(struct sim *s, uint32_t min, uint32_t max, uint64_t seed)
{
	struct abit_regions_params p = params(min, max);

	memset(s, 0, sizeof(*s));
	s->rng_state = seed;
	s->pattern_state = seed ^ UINT64_C(0x5eed);
	assert_int_equal(
	    abit_regions_new(
		&p, (struct abit_rng){.next = abit_rng_splitmix64, .ctx = &s->rng_state}, &s->rs),
	    0);
}

static void sim_fini(struct sim *s)
{
	abit_regions_free(s->rs);
}

static void sim_band(struct sim *s, uint64_t start, uint64_t len, uint32_t permille)
{
	assert_true(s->nband < MAX_BAND);
	s->band[s->nband++] = (struct band){start, start + len, permille};
}

static void sim_cover(struct sim *s, const struct abit_range *r, size_t n)
{
	assert_int_equal(abit_regions_update(s->rs, r, n), 0);
}

static bool sim_accessed(struct sim *s, uint64_t addr)
{
	for (size_t i = 0; i < s->nband; i++)
		if (addr >= s->band[i].start && addr < s->band[i].end)
			return abit_rng_splitmix64(&s->pattern_state) % 1000 < s->band[i].permille;
	return false;
}

/* Every region within the limit, in order, disjoint, and no more than max of them. */
static void assert_regions_sane(struct sim *s, uint32_t max)
{
	size_t n = abit_regions_get(s->rs, s->reg, MAX_REG);
	uint64_t lim = abit_regions_size_limit(s->rs);

	assert_true(n <= max);
	for (size_t i = 0; i < n; i++) {
		assert_true(s->reg[i].start < s->reg[i].end);
		assert_true(s->reg[i].end - s->reg[i].start <= lim);
		assert_int_equal(s->reg[i].start % PAGE, 0);
		if (i)
			assert_true(s->reg[i].start >= s->reg[i - 1].end);
	}
}

/* One sampling interval; returns 1 when it closed an aggregation interval. */
static int sim_sample(struct sim *s, uint32_t max)
{
	int n = abit_regions_prepare(s->rs, s->addr, MAX_REG);

	assert_true(n >= 0 && (uint32_t)n <= max);
	for (int i = 0; i < n; i++)
		s->acc[i] = sim_accessed(s, s->addr[i]);
	n = abit_regions_check(s->rs, s->acc, (size_t)n);
	assert_true(n == 0 || n == 1);
	assert_regions_sane(s, max);
	return n;
}

static void sim_aggregate(struct sim *s, uint32_t max)
{
	while (!sim_sample(s, max))
		;
}

/* Whether the hot ranges (count >= min) overlap [start, end). */
static bool hot_overlaps(struct sim *s, uint32_t min, uint64_t start, uint64_t end)
{
	struct abit_range out[MAX_REG];
	size_t n = abit_regions_hot(s->rs, min, out, MAX_REG);

	for (size_t i = 0; i < n; i++)
		if (out[i].start < end && out[i].end > start)
			return true;
	return false;
}

/* Bytes of the hot ranges (count >= min). */
static uint64_t hot_bytes(struct sim *s, uint32_t min)
{
	struct abit_range out[MAX_REG];
	size_t n = abit_regions_hot(s->rs, min, out, MAX_REG);
	uint64_t b = 0;

	for (size_t i = 0; i < n; i++)
		b += out[i].end - out[i].start;
	return b;
}

/* Aggregation intervals for a piece of L pages to shrink under band pages when every split
 * keeps at most 90% of it: ceil(log(L / band) / log(10 / 9)). */
static int shrink_bound(uint64_t lim_pages, uint64_t band_pages)
{
	int k = 0;

	for (uint64_t x = lim_pages * 1000; x > band_pages * 1000; x = x * 9 / 10)
		k++;
	return k;
}

/* Runs seeds 1..seeds with a band of band_len always-accessed bytes in 1 GiB of cold memory,
 * and returns the worst aggregation count until it was reported hot (count >= 1) and, when
 * tight_within > 0, the worst until the ranges with half the possible count held it and at
 * most 4 times its size. */
static void band_worst(uint32_t min, uint64_t band_len, int seeds, int max_aggr, int *found,
		       int *tight)
{
	struct abit_range r = {BASE, BASE + GIB};
	uint64_t hot0 = BASE + 300 * MIB + 7 * PAGE;
	int unused;

	tight = tight ? tight : &unused;
	*found = *tight = 0;
	for (int seed = 1; seed <= seeds; seed++) {
		struct sim s;
		int f = -1, t = -1;

		sim_init(&s, min, MAX_REG, (uint64_t)seed);
		sim_band(&s, hot0, band_len, 1000);
		sim_cover(&s, &r, 1);
		for (int k = 1; k <= max_aggr && (f < 0 || (tight != &unused && t < 0)); k++) {
			sim_aggregate(&s, MAX_REG);
			if (f < 0 && hot_overlaps(&s, 1, hot0, hot0 + band_len))
				f = k;
			if (t < 0 && hot_overlaps(&s, AGGR / 2, hot0, hot0 + band_len) &&
			    hot_bytes(&s, AGGR / 2) <= 4 * band_len)
				t = k;
		}
		sim_fini(&s);
		*found = f < 0 || *found < 0 ? -1 : (f > *found ? f : *found);
		*tight = t < 0 || *tight < 0 ? -1 : (t > *tight ? t : *tight);
	}
}

/* ---- tests ------------------------------------------------------------------------------- */

static void cold_merges_down(uint32_t permille)
{
	struct abit_range r = {BASE, BASE + GIB};
	struct sim s;

	sim_init(&s, MIN_REG, MAX_REG, 1);
	sim_band(&s, BASE, GIB, permille);
	sim_cover(&s, &r, 1);
	assert_int_equal(abit_regions_count(s.rs), MIN_REG);
	for (int k = 0; k < 30; k++) {
		size_t merged;

		sim_aggregate(&s, MAX_REG);
		merged = abit_regions_count_merged(s.rs);
		/* Regions within the limit L = span / min_regions, two neighbours together over
		 * it: min_regions <= merged <= 2 * min_regions + 1. The split then makes 2-3 of
		 * each. */
		assert_true(merged >= MIN_REG && merged <= 2 * MIN_REG + 1);
		assert_true(abit_regions_count(s.rs) <= 3 * merged);
	}
	sim_fini(&s);
}

static void test_uniform_cold_memory_merges_down_to_min_regions(void **state)
{
	(void)state;
	cold_merges_down(0);
	cold_merges_down(30); /* lukewarm: counts of 0-2, alike everywhere */
}

/* The bound of the header: every region at most L = ceil(span / min_regions) pages, so a
 * band of w pages is missed by a sampling interval with probability at most exp(-w / L); over
 * k aggregation intervals at most exp(-k * AGGR * w / L). With 10 e-folds (4.5e-5 a run)
 * every one of the 100 seeded runs must be within it. Once found, a band big enough to keep
 * its region's count apart from its cold neighbours is cut down to: each split keeps at most
 * 90% of the piece holding it, so ceil(log(L / w) / log(10 / 9)) more intervals. */
static void bands_within_the_bound(void)
{
	const uint64_t span = GIB / PAGE, lim = (span + MIN_REG - 1) / MIN_REG;
	const uint64_t bands[] = {512, 64, 16};
	int found, tight;

	for (size_t i = 0; i < 3; i++) {
		uint64_t bound =
		    abit_regions_miss_bound(span, bands[i], MIN_REG, AGGR, 10, tails ? PIECE : 0);
		int refine = (int)bound + shrink_bound(lim, bands[i]);

		band_worst(MIN_REG, bands[i] * PAGE, 100, i == 0 ? refine : (int)bound, &found,
			   i == 0 ? &tight : NULL);
		printf("band of %4llu pages in 1 GiB, min_regions %u%s: reported hot after at most "
		       "%d aggregation intervals (bound %llu)",
		       (unsigned long long)bands[i], MIN_REG, tails ? ", tail draws" : "", found,
		       (unsigned long long)bound);
		if (i == 0)
			printf(", held tight after %d (bound %d)", tight, refine);
		printf("\n");
		assert_true(found > 0 && (uint64_t)found <= bound);
		if (i == 0)
			assert_true(tight > 0 && tight <= refine);
	}
}

/* The band starts 7 pages into a piece, so the 16- and 64-page bands hold no tail page: with
 * tail draws only the uniform half finds them, which the bound allows for. */
static void test_hot_band_in_cold_memory_is_reported_within_the_bound(void **state)
{
	(void)state;
	tails = false;
	bands_within_the_bound();
	tails = true;
	bands_within_the_bound();
	tails = false;
}

/* Tail draws: every sample inside its region; about half plus TAIL / PIECE of the other half in
 * the last TAIL pages of a piece, spread evenly over them; a region that holds no tail page
 * sampled uniformly. */
static void test_tail_draws_land_where_the_pagemap_walk_is_short(void **state)
{
	/* Starts and ends inside pieces: the first piece's tail is partly outside. */
	struct abit_range r = {BASE + (PIECE - 8) * PAGE, BASE + (64 * PIECE + 100) * PAGE};
	struct abit_range head = {BASE + 2 * PIECE * PAGE, BASE + (2 * PIECE + 64) * PAGE};
	unsigned in_tail = 0, n = 0, per_off[TAIL] = {0};
	struct sim s;

	(void)state;
	tails = true;
	sim_init(&s, 1, 4, 5);
	tails = false;
	sim_cover(&s, &r, 1);
	for (int k = 0; k < 40000; k++) {
		int m;

		abit_regions_wake(s.rs); /* every region sampled, none taking turns */
		m = abit_regions_prepare(s.rs, s.addr, MAX_REG);

		assert_true(m >= 1);
		for (int i = 0; i < m; i++) {
			uint64_t off = (s.addr[i] - BASE) / PAGE % PIECE;

			if (s.addr[i] == 0)
				continue; /* an idle region's turn skipped */
			assert_true(s.addr[i] >= r.start && s.addr[i] < r.end);
			assert_int_equal(s.addr[i] % PAGE, 0);
			n++;
			if (off >= PIECE - TAIL) {
				in_tail++;
				per_off[off - (PIECE - TAIL)]++;
			}
		}
		assert_int_equal(abit_regions_check(s.rs, s.acc, (size_t)m) >= 0, 1);
	}
	/* Expected share 1/2 + 1/2 * TAIL / PIECE = 0.531. */
	printf("tail draws: %.3f of %u samples in the last %d pages of a piece\n",
	       (double)in_tail / n, n, TAIL);
	assert_true(in_tail * 1000ull > n * 515ull && in_tail * 1000ull < n * 547ull);
	for (int o = 0; o < TAIL; o++)
		assert_true(per_off[o] * TAIL * 10ull > in_tail * 8ull &&
			    per_off[o] * TAIL * 10ull < in_tail * 12ull);
	sim_fini(&s);

	tails = true;
	sim_init(&s, 1, 4, 6);
	tails = false;
	sim_cover(&s, &head, 1);
	for (int k = 0; k < 1000; k++) {
		int m = abit_regions_prepare(s.rs, s.addr, MAX_REG);

		for (int i = 0; i < m; i++)
			assert_true(s.addr[i] == 0 ||
				    (s.addr[i] >= head.start && s.addr[i] < head.end));
		assert_true(abit_regions_check(s.rs, s.acc, (size_t)m) >= 0);
	}
	sim_fini(&s);
}

/* Cold memory is sampled in turns: after six idle aggregation intervals a sampling interval
 * samples one region in eight (the others get address 0), each region once in eight
 * intervals; a wake brings every region back at once. */
static void test_idle_regions_take_turns_until_woken(void **state)
{
	struct abit_range r = {BASE, BASE + GIB};
	struct sim s;
	size_t taken = 0;
	int n;

	(void)state;
	sim_init(&s, MIN_REG, MAX_REG, 3);
	sim_cover(&s, &r, 1);
	for (int k = 0; k < 7; k++)
		sim_aggregate(&s, MAX_REG);
	n = abit_regions_prepare(s.rs, s.addr, MAX_REG);
	assert_true(n >= MIN_REG);
	for (int i = 0; i < n; i++)
		taken += s.addr[i] != 0;
	assert_true(taken >= (size_t)n / 8 && taken <= (size_t)n / 8 + 1);
	memset(s.acc, 0, sizeof(s.acc));
	assert_true(abit_regions_check(s.rs, s.acc, (size_t)n) >= 0);
	abit_regions_wake(s.rs);
	n = abit_regions_prepare(s.rs, s.addr, MAX_REG);
	for (int i = 0; i < n; i++)
		assert_true(s.addr[i] >= BASE && s.addr[i] < BASE + GIB);
	sim_fini(&s);
}

/* The daemon's setting: min_regions = max_regions / 4, so L = ceil(4 * span / max_regions)
 * and ceil(10 * L / w) samples are needed; a region that looks idle takes turns of 1, 2, 4
 * (two aggregation intervals each) and then 8 sampling intervals, so the first six intervals
 * hold 2 * AGGR + AGGR + AGGR / 2 samples and each later one AGGR / 8. */
static void test_bound_with_min_regions_a_quarter_of_max(void **state)
{
	const uint32_t min = MAX_REG / 4;
	const uint64_t need = (10 * ((4 * (GIB / PAGE) + MAX_REG - 1) / MAX_REG) + 15) / 16;
	const uint64_t six = 2 * AGGR + AGGR + AGGR / 2;
	uint64_t bound = abit_regions_miss_bound(GIB / PAGE, 16, min, AGGR, 10, 0);
	uint64_t whole_u, whole_t;
	int found;

	(void)state;
	assert_true(need > six);
	assert_int_equal(bound, 6 + ((need - six) * 8 + AGGR - 1) / AGGR);
	/* 2 MiB: ceil(10 * 1049 / 512) = 21 samples, one more than the first interval holds. */
	assert_int_equal(abit_regions_miss_bound(GIB / PAGE, 512, min, AGGR, 10, 0), 2);
	/* With tail draws (the daemon's): p = 512 / 2098 + 1 / 8, 28 samples, as many intervals. */
	assert_int_equal(abit_regions_miss_bound(GIB / PAGE, 512, min, AGGR, 10, PIECE), 2);
	/* A whole 48-bit address space in one region: a piece is found about as fast as with
	 * uniform draws (its share of piece ends makes up for the halved uniform part), with no
	 * overflow of lim * (lim / PIECE) on the way. */
	whole_u = abit_regions_miss_bound(UINT64_C(1) << 36, 512, 1, AGGR, 10, 0);
	whole_t = abit_regions_miss_bound(UINT64_C(1) << 36, 512, 1, AGGR, 10, PIECE);
	assert_true(whole_t * 100 >= whole_u * 99 && whole_t * 100 <= whole_u * 101);
	assert_int_equal(abit_regions_sample_every(0), 1);
	assert_int_equal(abit_regions_sample_every(3), 2);
	assert_int_equal(abit_regions_sample_every(5), 4);
	assert_int_equal(abit_regions_sample_every(6), 8);
	assert_int_equal(abit_regions_sample_every(1000), 8);
	band_worst(min, 16 * PAGE, 100, (int)bound, &found, NULL);
	printf("band of 16 pages in 1 GiB, max_regions %u, min_regions %u: reported after at "
	       "most %d aggregation intervals (bound %llu)\n",
	       MAX_REG, min, found, (unsigned long long)bound);
	assert_true(found > 0 && (uint64_t)found <= bound);
}

/* A band accessed every interval and one accessed a quarter of the time, 64 MiB apart (and,
 * in a second run, side by side): the hottest regions never reach into the cooler band,
 * which is seen on its own. */
static void two_bands_stay_apart(uint64_t gap)
{
	struct abit_range r = {BASE, BASE + GIB};
	uint64_t a0 = BASE + 200 * MIB, b0 = a0 + 2 * MIB + gap;
	int b_seen = 0;
	struct sim s;

	sim_init(&s, MAX_REG / 4, MAX_REG, 7);
	sim_band(&s, a0, 2 * MIB, 1000);
	sim_band(&s, b0, 2 * MIB, 250);
	sim_cover(&s, &r, 1);
	for (int k = 0; k < 100; k++)
		sim_aggregate(&s, MAX_REG);
	for (int k = 0; k < 50; k++) {
		sim_aggregate(&s, MAX_REG);
		assert_true(hot_overlaps(&s, AGGR * 3 / 4, a0, a0 + 2 * MIB));
		assert_false(hot_overlaps(&s, AGGR * 3 / 4, b0 + 256 * 1024, b0 + 2 * MIB));
		b_seen += hot_overlaps(&s, 2, b0 + 256 * 1024, b0 + 2 * MIB);
	}
	printf("bands %llu MiB apart: cooler band seen in %d of 50 intervals\n",
	       (unsigned long long)(gap / MIB), b_seen);
	assert_true(b_seen >= 45);
	sim_fini(&s);
}

static void test_two_bands_of_different_frequency_stay_separate(void **state)
{
	(void)state;
	two_bands_stay_apart(64 * MIB);
	two_bands_stay_apart(0);
}

/* Covered bytes: every range is covered by regions and no region reaches outside the ranges'
 * span (holes inside a coalesced span aside). */
static void assert_covers_exactly(struct sim *s, const struct abit_range *r, size_t nr)
{
	size_t n = abit_regions_get(s->rs, s->reg, MAX_REG), j = 0;

	for (size_t i = 0; i < nr; i++) {
		uint64_t pos = r[i].start;

		while (j < n && s->reg[j].end <= r[i].start)
			j++;
		for (; j < n && s->reg[j].start < r[i].end; j++) {
			assert_true(s->reg[j].start <= pos);
			assert_true(s->reg[j].start >= r[i].start && s->reg[j].end <= r[i].end);
			pos = s->reg[j].end;
		}
		assert_true(pos == r[i].end);
	}
	for (size_t k = 0; k < n; k++) {
		bool inside = false;

		for (size_t i = 0; i < nr && !inside; i++)
			inside = s->reg[k].start >= r[i].start && s->reg[k].end <= r[i].end;
		assert_true(inside);
	}
}

static uint32_t count_at(struct sim *s, uint64_t addr)
{
	size_t n = abit_regions_get(s->rs, s->reg, MAX_REG);

	for (size_t i = 0; i < n; i++)
		if (addr >= s->reg[i].start && addr < s->reg[i].end)
			return s->reg[i].nr_accesses;
	return UINT32_MAX;
}

/* Growth keeps what the regions learned (a hot band stays hot through the update), new
 * ranges get regions, the size limit follows the span; shrinking cuts regions at the new
 * ends, a hole punched in the middle leaves no region over it. */
static void test_regions_follow_vma_growth_and_shrink(void **state)
{
	const uint64_t hot0 = BASE + 100 * MIB;
	struct abit_range one = {BASE, BASE + 256 * MIB};
	struct abit_range grown[2] = {{BASE, BASE + 512 * MIB},
				      {BASE + GIB, BASE + GIB + 64 * MIB}};
	struct abit_range cut[2] = {{BASE + 64 * MIB, BASE + 96 * MIB},
				    {BASE + 99 * MIB, BASE + 300 * MIB}};
	struct sim s;

	(void)state;
	sim_init(&s, MIN_REG, MAX_REG, 3);
	sim_band(&s, hot0, 2 * MIB, 1000);
	sim_cover(&s, &one, 1);
	assert_covers_exactly(&s, &one, 1);
	for (int k = 0; k < 40; k++)
		sim_aggregate(&s, MAX_REG);
	assert_true(hot_overlaps(&s, AGGR / 2, hot0, hot0 + 2 * MIB));
	/* Half an aggregation interval, then the VMA grows: the counts so far stay. */
	for (int k = 0; k < AGGR / 2; k++)
		assert_int_equal(sim_sample(&s, MAX_REG), 0);
	assert_true(count_at(&s, hot0 + MIB) >= AGGR / 2 - 1);
	sim_cover(&s, grown, 2);
	assert_covers_exactly(&s, grown, 2);
	assert_regions_sane(&s, MAX_REG);
	assert_int_equal(abit_regions_size_limit(s.rs),
			 ((576 * MIB / PAGE + MIN_REG - 1) / MIN_REG) * PAGE);
	assert_true(count_at(&s, hot0 + MIB) >= AGGR / 2 - 1);
	sim_aggregate(&s, MAX_REG);
	assert_true(hot_overlaps(&s, AGGR / 2, hot0, hot0 + 2 * MIB));

	sim_cover(&s, cut, 2);
	assert_covers_exactly(&s, cut, 2);
	assert_regions_sane(&s, MAX_REG);
	sim_aggregate(&s, MAX_REG);
	assert_true(hot_overlaps(&s, AGGR / 2, hot0, hot0 + 2 * MIB));
	assert_false(hot_overlaps(&s, 0, BASE + 96 * MIB, BASE + 99 * MIB));
	assert_false(hot_overlaps(&s, 0, BASE + 300 * MIB, BASE + GIB * 2));

	/* The hole filled again: one span, the regions on both sides stretched over it. */
	cut[0].end = cut[1].start;
	sim_cover(&s, cut, 2);
	assert_covers_exactly(&s, cut, 2);
	assert_regions_sane(&s, MAX_REG);

	sim_cover(&s, NULL, 0);
	assert_int_equal(abit_regions_count(s.rs), 0);
	assert_int_equal(abit_regions_prepare(s.rs, s.addr, 0), 0);
	sim_fini(&s);
}

/* More ranges than max_regions / 2 are joined across their smallest gaps: every range is
 * still covered and the regions fit; gaps that need not be closed are not. */
static void coalesce_small_vmas(uint32_t max)
{
	enum { NR = 300 };
	static struct abit_range r[NR];
	struct sim s;
	size_t n, j = 0;

	for (size_t i = 0; i < NR; i++) {
		/* 30 groups, 1 GiB apart, of ten 64 KiB VMAs 4 KiB apart. */
		uint64_t at = BASE + i * 68 * 1024 + (i / 10) * GIB;

		r[i] = (struct abit_range){at, at + 64 * 1024};
	}
	sim_init(&s, 4, max, 5);
	sim_cover(&s, r, NR);
	n = abit_regions_get(s.rs, s.reg, MAX_REG);
	assert_true(n <= max);
	for (size_t i = 0; i < NR; i++) {
		while (j < n && s.reg[j].end <= r[i].start)
			j++;
		assert_true(j < n && s.reg[j].start <= r[i].start && s.reg[j].end > r[i].start);
	}
	/* At most max / 2 spans (runs of touching regions), so splits have room. */
	for (size_t k = 1, spans = 1; k < n; k++) {
		spans += s.reg[k].start != s.reg[k - 1].end;
		assert_true(spans <= max / 2);
	}
	/* 30 groups fit in max / 2 spans from max = 60 on: no region over a 1 GiB gap then. */
	for (size_t k = 0; k < n && max >= 60; k++)
		assert_true(s.reg[k].end - s.reg[k].start < GIB);
	for (int k = 0; k < 20; k++)
		sim_aggregate(&s, max);
	sim_fini(&s);
}

static void test_many_small_vmas_are_coalesced_across_small_gaps(void **state)
{
	(void)state;
	coalesce_small_vmas(80);
	coalesce_small_vmas(40);
	coalesce_small_vmas(16);
}

/* A small max_regions, a pattern of many bands of every frequency, and updates in between:
 * after every sampling interval and update, at most max_regions regions, each within the
 * limit (assert_regions_sane). */
static void test_region_count_never_exceeds_max_regions(void **state)
{
	struct abit_range r[3] = {{BASE, BASE + 64 * MIB},
				  {BASE + 128 * MIB, BASE + 130 * MIB},
				  {BASE + 200 * MIB, BASE + 400 * MIB}};
	struct sim s;

	(void)state;
	for (uint64_t seed = 1; seed <= 20; seed++) {
		sim_init(&s, 3, 12, seed);
		sim_band(&s, BASE + 10 * MIB, 4 * MIB, 900);
		sim_band(&s, BASE + 129 * MIB, MIB, 500);
		sim_band(&s, BASE + 250 * MIB, 60 * MIB, 120);
		sim_band(&s, BASE + 330 * MIB, 8 * 4096, 1000);
		for (int k = 0; k < 60; k++) {
			size_t nr = 1 + abit_rng_splitmix64(&s.pattern_state) % 3;

			sim_cover(&s, r + 3 - nr, nr);
			assert_regions_sane(&s, 12);
			for (int j = 0; j < AGGR / 3; j++)
				sim_sample(&s, 12);
		}
		sim_fini(&s);
	}
}

/* The same seed gives the same regions and reports; another seed does not. */
static void run_to_snapshot(uint64_t seed, struct abit_region_info *reg, size_t *n,
			    struct abit_range *hot, size_t *nhot)
{
	struct abit_range r = {BASE, BASE + GIB};
	struct sim s;

	sim_init(&s, MIN_REG, MAX_REG, seed);
	sim_band(&s, BASE + 300 * MIB, 2 * MIB, 1000);
	sim_band(&s, BASE + 600 * MIB, 8 * MIB, 300);
	sim_cover(&s, &r, 1);
	for (int k = 0; k < 30; k++)
		sim_aggregate(&s, MAX_REG);
	*n = abit_regions_get(s.rs, reg, MAX_REG);
	*nhot = abit_regions_hot(s.rs, 1, hot, MAX_REG);
	sim_fini(&s);
}

static void test_seeded_runs_are_deterministic(void **state)
{
	static struct abit_region_info r1[MAX_REG], r2[MAX_REG], r3[MAX_REG];
	static struct abit_range h1[MAX_REG], h2[MAX_REG], h3[MAX_REG];
	size_t n1, n2, n3, nh1, nh2, nh3;

	(void)state;
	run_to_snapshot(42, r1, &n1, h1, &nh1);
	run_to_snapshot(42, r2, &n2, h2, &nh2);
	run_to_snapshot(43, r3, &n3, h3, &nh3);
	assert_int_equal(n1, n2);
	assert_int_equal(nh1, nh2);
	assert_memory_equal(r1, r2, n1 * sizeof(*r1));
	assert_memory_equal(h1, h2, nh1 * sizeof(*h1));
	assert_true(n1 != n3 || memcmp(r1, r3, n1 * sizeof(*r1)) != 0);
}

/* Regions without an access for N aggregation intervals are reported idle from the Nth on;
 * an access starts the count again. */
static void test_long_idle_regions_are_reported_by_age(void **state)
{
	struct abit_range r = {BASE, BASE + 256 * MIB}, out[MAX_REG];
	const uint64_t hot0 = BASE + 64 * MIB;
	struct sim s;
	size_t n;

	(void)state;
	sim_init(&s, MIN_REG, MAX_REG, 9);
	sim_cover(&s, &r, 1);
	for (uint32_t k = 1; k <= 5; k++)
		sim_aggregate(&s, MAX_REG);
	assert_int_equal(abit_regions_idle(s.rs, 5, out, MAX_REG), 1);
	assert_int_equal(abit_regions_idle(s.rs, 6, out, MAX_REG), 0);
	/* A band becomes hot: everything else keeps ageing, the band never shows as idle. */
	sim_band(&s, hot0, 4 * MIB, 1000);
	for (uint32_t k = 6; k <= 17; k++) {
		sim_aggregate(&s, MAX_REG);
		n = abit_regions_idle(s.rs, k, out, MAX_REG);
		assert_true(n >= 1);
		assert_true(out[n - 1].end == r.end && out[n - 1].start <= r.end - 128 * MIB);
		for (size_t i = 0; i < n; i++)
			assert_false(out[i].start < hot0 + 4 * MIB && out[i].end > hot0);
		assert_int_equal(abit_regions_idle(s.rs, k + 1, out, MAX_REG), 0);
	}
	/* The band cools: idle again, counted from then, not from before it was hot. */
	s.nband = 0;
	for (uint32_t k = 1; k <= 3; k++)
		sim_aggregate(&s, MAX_REG);
	n = abit_regions_idle(s.rs, 3, out, MAX_REG);
	assert_int_equal(n, 1);
	assert_true(out[0].start == r.start && out[0].end == r.end);
	n = abit_regions_idle(s.rs, 4, out, MAX_REG);
	for (size_t i = 0; i < n; i++)
		assert_false(out[i].start < hot0 + 4 * MIB && out[i].end > hot0);
	sim_fini(&s);
}

static void test_calls_out_of_order_and_bad_input_are_refused(void **state)
{
	struct abit_range r = {BASE, BASE + 64 * MIB};
	struct abit_range bad[2] = {{BASE, BASE + 8 * MIB}, {BASE + 4 * MIB, BASE + 16 * MIB}};
	struct abit_range odd = {BASE, BASE + 100};
	struct abit_regions_params p = params(10, 39);
	struct abit_regions *rs = NULL;
	struct sim s;
	int n;

	(void)state;
	assert_int_equal(abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64}, &rs),
			 -EINVAL);
	p = params(0, 40);
	assert_int_equal(abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64}, &rs),
			 -EINVAL);
	p = params(10, 40);
	p.piece_pages = 32;
	p.tail_pages = 32;
	assert_int_equal(abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64}, &rs),
			 -EINVAL);
	p.piece_pages = 48;
	p.tail_pages = 16;
	assert_int_equal(abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64}, &rs),
			 -EINVAL);
	p = params(10, 40);
	p.page_size = 3000;
	assert_int_equal(abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64}, &rs),
			 -EINVAL);
	assert_null(rs);

	sim_init(&s, MIN_REG, MAX_REG, 11);
	sim_cover(&s, &r, 1);
	assert_int_equal(abit_regions_check(s.rs, s.acc, MIN_REG), -ESTALE);
	assert_int_equal(abit_regions_prepare(s.rs, s.addr, MIN_REG - 1), -ENOBUFS);
	n = abit_regions_prepare(s.rs, s.addr, MAX_REG);
	assert_int_equal(n, MIN_REG);
	for (int i = 0; i < n; i++) {
		/* One page per region, inside it. */
		assert_int_equal(s.addr[i] % PAGE, 0);
		assert_true(s.addr[i] >= BASE + (uint64_t)i * 64 * MIB / MIN_REG - PAGE);
	}
	assert_int_equal(abit_regions_check(s.rs, s.acc, (size_t)n - 1), -EINVAL);
	assert_int_equal(abit_regions_update(s.rs, bad, 2), -EINVAL);
	assert_int_equal(abit_regions_update(s.rs, &odd, 1), -EINVAL);
	assert_int_equal(abit_regions_check(s.rs, s.acc, (size_t)n), 0); /* still pending */
	n = abit_regions_prepare(s.rs, s.addr, MAX_REG);
	sim_cover(&s, &r, 1);
	assert_int_equal(abit_regions_check(s.rs, s.acc, (size_t)n), -ESTALE);
	sim_fini(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_uniform_cold_memory_merges_down_to_min_regions),
	    cmocka_unit_test(test_hot_band_in_cold_memory_is_reported_within_the_bound),
	    cmocka_unit_test(test_tail_draws_land_where_the_pagemap_walk_is_short),
	    cmocka_unit_test(test_bound_with_min_regions_a_quarter_of_max),
	    cmocka_unit_test(test_idle_regions_take_turns_until_woken),
	    cmocka_unit_test(test_two_bands_of_different_frequency_stay_separate),
	    cmocka_unit_test(test_regions_follow_vma_growth_and_shrink),
	    cmocka_unit_test(test_many_small_vmas_are_coalesced_across_small_gaps),
	    cmocka_unit_test(test_region_count_never_exceeds_max_regions),
	    cmocka_unit_test(test_seeded_runs_are_deterministic),
	    cmocka_unit_test(test_long_idle_regions_are_reported_by_age),
	    cmocka_unit_test(test_calls_out_of_order_and_bad_input_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
