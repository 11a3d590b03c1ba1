/* Tests for damon_heat: regions' access histories across aggregations. The statistical tests
 * drive it with a simulated kdamond: a process whose address space holds data used once a
 * second (broadly), data read once every 10 s by a sweep, and data never used, cut into new
 * random regions at every aggregation as DAMON's splits and merges do, each region's
 * nr_accesses drawn as DAMON counts them (one random page per sample, accessed within the
 * sampling interval or not), from a fixed seed. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sources/damon/damon_heat.h"

#define MIB	  UINT64_C(1048576)
#define BASE	  (UINT64_C(0x7f0000000000))
#define AGGR_US	  100000
#define SAMPLE_US 5000
#define SPAN_NS	  ((uint64_t)AGGR_US * 1000 / 2)

static struct damon_region reg(uint64_t start_mib, uint64_t end_mib, uint32_t nr)
{
	return (struct damon_region){
	    .start = BASE + start_mib * MIB, .end = BASE + end_mib * MIB, .nr_accesses = nr};
}

static uint64_t ms(uint64_t v)
{
	return v * 1000000;
}

static void a_new_range_has_its_own_samples_only(void **state)
{
	struct damon_heat h = {0};
	struct damon_heat_span s;
	struct damon_region r = reg(0, 4, 3);

	(void)state;
	assert_int_equal(damon_heat_note(&h, &r, ms(1000), SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.hits == 1.0f); /* an aggregation that found it accessed, however often */
	assert_true(fabsf(s.expo_s - 0.1f) < 1e-6f);
	assert_false(damon_heat_warm(&s, AGGR_US)); /* fewer than DAMON_HEAT_HITS */
	r.nr_accesses = 0;
	r.start = r.end, r.end += 4 * MIB; /* the same aggregation: no history of its own */
	assert_int_equal(damon_heat_note(&h, &r, ms(1010), SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.hits == 0.0f);
	/* Warm: DAMON_HEAT_HITS, at one per DAMON_HEAT_PERIOD_MS of exposure or more (two
	 * aggregation intervals where those are longer). */
	s = (struct damon_heat_span){.hits = DAMON_HEAT_HITS, .expo_s = 9.0f};
	assert_true(damon_heat_warm(&s, AGGR_US));
	s.expo_s = 9.1f;
	assert_false(damon_heat_warm(&s, AGGR_US));
	assert_true(damon_heat_warm(&s, 2000000));
	assert_int_equal(damon_heat_note(&h, &(struct damon_region){.start = 5, .end = 5}, ms(1020),
					 SPAN_NS, AGGR_US, false, &s),
			 -EINVAL);
	damon_heat_free(&h);
}

static void a_split_region_keeps_the_history_of_its_range(void **state)
{
	struct damon_heat h = {0};
	struct damon_heat_span s, a, b, c;
	struct damon_region whole = reg(0, 8, 20), left = reg(0, 4, 0), right = reg(4, 8, 0),
			    beyond = reg(8, 16, 0);

	(void)state;
	assert_int_equal(damon_heat_note(&h, &whole, ms(1000), SPAN_NS, AGGR_US, false, &s), 0);
	/* The next aggregation (100 ms on): each half carries the whole's history (one hit: at
	 * most one a second of aggregation, however many samples found it used), decayed. */
	assert_int_equal(damon_heat_note(&h, &left, ms(1100), SPAN_NS, AGGR_US, false, &a), 0);
	assert_int_equal(damon_heat_note(&h, &right, ms(1100), SPAN_NS, AGGR_US, false, &b), 0);
	assert_int_equal(damon_heat_note(&h, &beyond, ms(1100), SPAN_NS, AGGR_US, false, &c), 0);
	assert_true(fabsf(a.hits - expf(-100.0f / DAMON_HEAT_TAU_MS)) < 1e-4f);
	assert_true(a.hits == b.hits && a.expo_s == b.expo_s);
	assert_true(a.expo_s > 0.19f && a.expo_s < 0.2f);
	assert_true(c.hits == 0.0f); /* never covered before */
	/* Neither half warm, nor the whole before them: no part warm twice running. */
	assert_false(a.warm || b.warm || c.warm);
	assert_true(a.warm_lo == 0 && a.warm_hi == 0);
	/* Merged again, the halves' histories are averaged by size: here the same. */
	whole.nr_accesses = 0;
	assert_int_equal(damon_heat_note(&h, &whole, ms(1200), SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(fabsf(s.hits - a.hits * expf(-100.0f / DAMON_HEAT_TAU_MS)) < 1e-4f);
	/* At aggregations of 2 s, up to two hits an aggregation. */
	whole.nr_accesses = 5;
	assert_int_equal(damon_heat_note(&h, &whole, ms(5000), SPAN_NS * 20, 2000000, false, &s), 0);
	assert_true(s.hits > 2.0f && s.hits < 2.7f);
	damon_heat_free(&h);
}

static void a_region_below_the_last_opens_the_next_aggregation(void **state)
{
	struct damon_heat h = {0};
	struct damon_heat_span s;
	struct damon_region a = reg(0, 4, 5), b = reg(4, 8, 0);

	(void)state;
	assert_int_equal(damon_heat_note(&h, &a, ms(1000), SPAN_NS, AGGR_US, false, &s), 0);
	assert_int_equal(damon_heat_note(&h, &b, ms(1001), SPAN_NS, AGGR_US, false, &s), 0);
	/* Within the span of time, but the address went back: a new aggregation, so a's range
	 * carries its hit instead of taking b's place in this one. */
	a.nr_accesses = 0;
	assert_int_equal(damon_heat_note(&h, &a, ms(1002), SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.hits > 0.99f);
	/* And a record past the aggregation's span of time opens the next one too. */
	assert_int_equal(damon_heat_note(&h, &b, ms(1002) + SPAN_NS, SPAN_NS, AGGR_US, false, &s), 0);
	assert_int_equal(h.ncur, 1);
	damon_heat_free(&h);
}

/* ---- the simulated kdamond ------------------------------------------------------------ */

/* The process: [0, 32) MiB used once a second, [32, 48) read by a sweep every 10 s (taking
 * 0.5 s), [48, 64) never. */
#define BROAD_END 32
#define SWEEP_END 48
#define ALL_END	  64
/* Regions that overlap both the broad data and the sweep's are partly warm, and their history
 * is shared among the regions that overlap them later: the sweep's data is judged from two
 * regions' widths (4 MiB at most each) past the edge. */
#define EDGE_END 40

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
	return *x;
}

static double unit(uint64_t *x)
{
	return (double)(rnd(x) >> 11) / 9007199254740992.0;
}

/* Whether the page at mib (a fraction of MiB) was accessed within the sample ending at t_s. */
static bool accessed(double mib, double t_s, double stop_broad_s, uint64_t *x)
{
	double dt = SAMPLE_US / 1e6;

	if (mib < BROAD_END) /* once a second on average: a Poisson use */
		return t_s < stop_broad_s && unit(x) < 1 - exp(-dt / 1.0);
	if (mib < SWEEP_END) { /* the sweep reads it at 0.5 s * offset into each 10 s */
		double at = (mib - BROAD_END) / (SWEEP_END - BROAD_END) * 0.5;
		double in = fmod(t_s, 10.0);

		return in >= at && in - dt < at;
	}
	return false;
}

struct sim {
	double warm[3]; /* MiB of each zone read warm, summed over the aggregations judged (the
			 * sweep's from EDGE_END) */
	unsigned aggrs; /* aggregations judged */
};

/* One aggregation at t_s: random regions of 0.5-4 MiB, each noted and judged. */
static void aggregate(struct damon_heat *h, double t_s, double stop_broad_s, uint64_t *x,
		      struct sim *out)
{
	double at = 0;
	unsigned samples = AGGR_US / SAMPLE_US;

	while (at < ALL_END) {
		double len = 0.5 + unit(x) * 3.5, end = at + len;
		uint32_t nr = 0;
		struct damon_region r;
		struct damon_heat_span s;

		if (end > ALL_END || ALL_END - end < 0.5)
			end = ALL_END;
		for (unsigned k = 0; k < samples; k++)
			nr += accessed(at + unit(x) * (end - at),
				       t_s - (samples - 1 - k) * SAMPLE_US / 1e6, stop_broad_s, x);
		r = (struct damon_region){.start = BASE + (uint64_t)(at * MIB),
					  .end = BASE + (uint64_t)(end * MIB),
					  .nr_accesses = nr};
		assert_int_equal(
		    damon_heat_note(h, &r, (uint64_t)(t_s * 1e9), SPAN_NS, AGGR_US, false, &s), 0);
		if (damon_heat_warm(&s, AGGR_US)) {
			/* Charge each zone the part of the region inside it. */
			double lo = at, hi = end;
			double b = fmin(hi, BROAD_END) - lo,
			       w = fmin(hi, SWEEP_END) - fmax(lo, EDGE_END),
			       n = hi - fmax(lo, SWEEP_END);

			out->warm[0] += b > 0 ? b : 0;
			out->warm[1] += w > 0 ? w : 0;
			out->warm[2] += n > 0 ? n : 0;
		}
		at = end;
	}
	out->aggrs++;
}

/* Runs aggregations from from_s to to_s, judging those from judge_s on. */
static struct sim run(struct damon_heat *h, double from_s, double to_s, double judge_s,
		      double stop_broad_s, uint64_t *x)
{
	struct sim all = {0}, judged = {0};

	for (double t = from_s; t < to_s - 1e-9; t += AGGR_US / 1e6)
		aggregate(h, t, stop_broad_s, x, t >= judge_s ? &judged : &all);
	return judged;
}

static void data_used_once_a_second_turns_warm_within_eight_seconds(void **state)
{
	struct damon_heat h = {0};
	uint64_t x = 88172645463325252ULL;
	struct sim s;

	(void)state;
	/* From 8 s to 40 s, 90% or more of it on average (its edge with the sweep's data shares
	 * that data's history); the sweep's and the never-used ranges past the edge never. */
	s = run(&h, 0.1, 40, 8, 1e9, &x);
	assert_true(s.warm[0] / s.aggrs >= 0.9 * BROAD_END);
	assert_true(s.warm[1] == 0);
	assert_true(s.warm[2] == 0);
	damon_heat_free(&h);
}

static void a_sweep_every_ten_seconds_is_never_warm(void **state)
{
	struct damon_heat h = {0};
	uint64_t x = 1234567;
	struct sim s;

	(void)state;
	/* The broad data unused from the start: only the sweep is seen, for 60 s. */
	s = run(&h, 0.1, 60, 0, 0, &x);
	assert_true(s.warm[0] == 0 && s.warm[1] == 0 && s.warm[2] == 0);
	damon_heat_free(&h);
}

static void data_no_longer_used_cools_within_ten_seconds(void **state)
{
	struct damon_heat h = {0};
	uint64_t x = 42;
	struct sim s;

	(void)state;
	run(&h, 0.1, 20, 20, 20, &x); /* used until 20 s */
	s = run(&h, 20, 40, 30, 20, &x);
	assert_true(s.warm[0] == 0);
	damon_heat_free(&h);
}

static void only_the_part_warm_twice_running_is_given(void **state)
{
	struct damon_heat h = {0};
	struct damon_heat_span s;
	struct damon_region used = reg(0, 4, 1), never = reg(4, 8, 0), both = reg(2, 8, 0);
	uint64_t t = ms(1000);

	(void)state;
	/* 4 MiB found accessed every aggregation for 1 s is warm; the 4 MiB after it never. */
	for (int i = 0; i < 10; i++, t += ms(100)) {
		assert_int_equal(damon_heat_note(&h, &used, t, SPAN_NS, AGGR_US, false, &s), 0);
		assert_int_equal(damon_heat_note(&h, &never, t + 1000, SPAN_NS, AGGR_US, false, &s), 0);
	}
	assert_int_equal(damon_heat_note(&h, &used, t, SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.warm);
	assert_true(s.warm_lo == used.start && s.warm_hi == used.end);
	assert_int_equal(damon_heat_note(&h, &never, t + 1000, SPAN_NS, AGGR_US, false, &s), 0);
	assert_false(s.warm);
	/* DAMON merges a piece of the used data with the never-used: warm on the piece's
	 * history, but only the piece was warm before. */
	t += ms(100);
	assert_int_equal(damon_heat_note(&h, &both, t, SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.warm_lo == both.start && s.warm_hi == used.end);
	damon_heat_free(&h);
}

/* A region that overlaps one intense the aggregation before, or touches one intense now, may
 * owe its warmth to it. */
static void warmth_beside_intense_data_is_told(void **state)
{
	struct damon_heat h = {0};
	struct damon_heat_span s;
	struct damon_region unit = {.kdamond = 7, .target = 1, .start = 0, .end = 8192,
				    .nr_accesses = 20};
	struct damon_region rest = {.kdamond = 7, .target = 1, .start = 8192, .end = 16384};
	struct damon_region edge = {.kdamond = 7, .target = 1, .start = 4096, .end = 12288};
	struct damon_region far = {.kdamond = 7, .target = 1, .start = 12288, .end = 20480};

	(void)state;
	assert_int_equal(damon_heat_note(&h, &unit, ms(1000), SPAN_NS, AGGR_US, true, &s), 0);
	assert_true(s.intense);
	assert_false(s.near_intense);
	assert_int_equal(damon_heat_note(&h, &rest, ms(1001), SPAN_NS, AGGR_US, false, &s), 0);
	assert_false(s.near_intense);
	/* Touching the intense unit in the same drain. */
	assert_true(damon_heat_by_intense(&s, &rest, &unit, true, NULL, false));
	assert_false(damon_heat_by_intense(&s, &rest, &unit, false, NULL, false));
	/* The next aggregation cuts across the unit's edge: it overlaps the intense span. */
	assert_int_equal(damon_heat_note(&h, &edge, ms(1100), SPAN_NS, AGGR_US, false, &s), 0);
	assert_true(s.near_intense);
	assert_true(damon_heat_by_intense(&s, &edge, NULL, false, NULL, false));
	/* Memory that overlapped no intense span, beside no intense region, owes it nothing. */
	assert_int_equal(damon_heat_note(&h, &far, ms(1101), SPAN_NS, AGGR_US, false, &s), 0);
	assert_false(s.near_intense);
	assert_false(damon_heat_by_intense(&s, &far, &edge, false, NULL, false));
	assert_true(damon_heat_by_intense(&s, &far, &edge, true, NULL, false));
	far.target = 2; /* another process's intense region is no neighbour */
	assert_false(damon_heat_by_intense(&s, &far, &edge, true, NULL, false));
	damon_heat_free(&h);
}

static void a_region_is_inside_warm_data_between_warm_neighbours(void **state)
{
	struct damon_region a = {.kdamond = 7, .target = 1, .start = 0, .end = 4096};
	struct damon_region b = {.kdamond = 7, .target = 1, .start = 4096, .end = 12288};
	struct damon_region c = {.kdamond = 7, .target = 1, .start = 12288, .end = 16384};
	struct damon_region other = c;

	(void)state;
	assert_true(damon_heat_inside(&b, &a, true, &c, true));
	assert_false(damon_heat_inside(&b, &a, false, &c, true)); /* a cold neighbour: the edge */
	assert_false(damon_heat_inside(&b, &a, true, &c, false));
	assert_false(damon_heat_inside(&b, NULL, false, &c, true)); /* the drain's first */
	assert_false(damon_heat_inside(&b, &a, true, NULL, false)); /* and last */
	other.target = 2;					    /* another process's region */
	assert_false(damon_heat_inside(&b, &a, true, &other, true));
	other = c;
	other.kdamond = 8;
	assert_false(damon_heat_inside(&b, &a, true, &other, true));
	other = c;
	other.start += 4096, other.end += 4096; /* a gap: another mapping */
	assert_false(damon_heat_inside(&b, &a, true, &other, true));
}

static void keeps_the_histories_of_the_listed_processes_only(void **state)
{
	struct damon_heats hs = {0};
	struct damon_heat_span s;
	struct damon_region r = reg(0, 4, 1);
	pid_t keep[] = {7};

	(void)state;
	assert_non_null(damon_heats_of(&hs, 5));
	assert_int_equal(damon_heat_note(damon_heats_of(&hs, 7), &r, ms(1), SPAN_NS, AGGR_US, false, &s),
			 0);
	assert_int_equal(hs.n, 2);
	assert_ptr_equal(damon_heats_of(&hs, 7), &hs.h[1]);
	damon_heats_keep(&hs, keep, 1);
	assert_int_equal(hs.n, 1);
	assert_int_equal(hs.h[0].pid, 7);
	assert_int_equal(hs.h[0].ncur, 1);
	damon_heats_keep(&hs, NULL, 0);
	assert_int_equal(hs.n, 0);
	damon_heats_free(&hs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_new_range_has_its_own_samples_only),
	    cmocka_unit_test(a_split_region_keeps_the_history_of_its_range),
	    cmocka_unit_test(a_region_below_the_last_opens_the_next_aggregation),
	    cmocka_unit_test(data_used_once_a_second_turns_warm_within_eight_seconds),
	    cmocka_unit_test(a_sweep_every_ten_seconds_is_never_warm),
	    cmocka_unit_test(data_no_longer_used_cools_within_ten_seconds),
	    cmocka_unit_test(only_the_part_warm_twice_running_is_given),
	    cmocka_unit_test(a_region_is_inside_warm_data_between_warm_neighbours),
	    cmocka_unit_test(warmth_beside_intense_data_is_told),
	    cmocka_unit_test(keeps_the_histories_of_the_listed_processes_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
