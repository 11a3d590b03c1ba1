/* Tests of the pointer chase's pure logic: the chain decides what a load costs (no short loop a
 * cache could hold), the calibration step decides the ratio a slow-tier run gets, and the
 * verdict decides when a run says its slow tier is off. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "chase_logic.h"

/* From slot 0, following next visits all n slots before it returns: one cycle. */
static void cycle_visits_every_slot_once(void **state)
{
	(void)state;
	static const size_t sizes[] = {2, 3, 64, 4096};
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		size_t *next = malloc(n * sizeof(*next));
		bool *seen = calloc(n, sizeof(*seen));
		chase_cycle(next, n, 44);
		size_t p = 0, steps = 0;
		do {
			assert_true(next[p] < n);
			assert_false(seen[p]);
			seen[p] = true;
			p = next[p];
			steps++;
		} while (p != 0);
		assert_int_equal(steps, n);
		free(next);
		free(seen);
	}
}

static void cycle_depends_on_the_seed(void **state)
{
	(void)state;
	size_t a[256], b[256];
	chase_cycle(a, 256, 1);
	chase_cycle(b, 256, 2);
	size_t same = 0;
	for (size_t i = 0; i < 256; i++)
		same += a[i] == b[i];
	assert_true(same < 16);
}

/* 64 consecutive slots use 64 different lines of their pages. */
static void slots_spread_over_the_page_lines(void **state)
{
	(void)state;
	bool used[64] = {false};
	for (size_t i = 0; i < 64; i++) {
		size_t off = chase_slot_offset(i);
		assert_int_equal(off % 64, 0);
		assert_true(off + sizeof(void *) <= 4096);
		assert_false(used[off / 64]);
		used[off / 64] = true;
	}
}

/* Ratio 2 on a base of 120 ns: 120 ns more per slow load; ratio 1 or less: none. */
static void first_extra_is_ratio_minus_one_times_base(void **state)
{
	(void)state;
	assert_float_equal(chase_first_extra(2.0, 120), 120, 1e-9);
	assert_float_equal(chase_first_extra(3.5, 100), 250, 1e-9);
	assert_float_equal(chase_first_extra(1.0, 100), 0, 1e-9);
	assert_float_equal(chase_first_extra(0.5, 100), 0, 1e-9);
}

/* The charge landed short or long (the spin undershot, or the host preempted the spinning vCPU
 * so each nanosecond asked cost 1.7): the step divides the shortfall by the gain read from the
 * uncharged round to the last, so it converges instead of swinging between 0 and twice the
 * need. */
static void next_extra_closes_the_gap(void **state)
{
	(void)state;
	const double gains[] = {0.9, 1.7, 3.0};
	for (size_t k = 0; k < sizeof(gains) / sizeof(gains[0]); k++) {
		double fast = 130;
		double e1 = chase_first_extra(2.0, 120), s1 = fast + gains[k] * e1;
		for (int round = 0; round < 4; round++) {
			double g = chase_gain(0, 1, e1, s1 / fast, fast);
			e1 = chase_next_extra(e1, 2.0, fast, s1, g);
			s1 = fast + gains[k] * e1;
		}
		assert_float_equal(s1 / fast, 2.0, 0.01);
	}
	/* The rounds of 2026-12-07 that sent the charge to 0 (uncharged 1.050; 143 ns gave
	 * 2.589 at 134.6 ns a fast load, 164.7 ns 2.599 the round before): from the uncharged
	 * round the gain reads 1.45, and the step lands near 2, not at 0. */
	{
		double g = chase_gain(0, 1.050, 143.0, 2.589, 134.6);
		double next = chase_next_extra(143.0, 2.0, 134.6, 348.4, g);

		assert_float_equal(g, 1.449, 0.01);
		assert_float_equal(1.050 + g * next / 134.6, 2.0, 0.1);
	}
	assert_float_equal(chase_next_extra(100, 2.0, 100, 400, 1), 0, 1e-9); /* never below 0 */
}

/* The gain is the slope between two rounds, bounded, and 1 without a slope to read. */
static void gain_is_the_bounded_slope(void **state)
{
	(void)state;
	assert_float_equal(chase_gain(0, 1, 100, 2.7, 100), 1.7, 1e-9);
	assert_float_equal(chase_gain(50, 1, 50.5, 3, 100), 1, 1e-9);
	assert_float_equal(chase_gain(0, 1, 100, 0.9, 100), 0.5, 1e-9);
	assert_float_equal(chase_gain(0, 1, 100, 10, 100), 4, 1e-9);
}

/* Within 25% of the requested ratio, relative to it: 2.0 accepts 1.5 to 2.5. */
static void ratio_is_ok_within_a_quarter(void **state)
{
	(void)state;
	assert_true(chase_ratio_ok(2.0, 2.0));
	assert_true(chase_ratio_ok(2.0, 1.5));
	assert_true(chase_ratio_ok(2.0, 2.5));
	assert_false(chase_ratio_ok(2.0, 1.49));
	assert_false(chase_ratio_ok(2.0, 2.51));
	assert_false(chase_ratio_ok(2.0, 1.0)); /* the plugin charged nothing */
	assert_false(chase_ratio_ok(0, 1.0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(cycle_visits_every_slot_once),
	    cmocka_unit_test(cycle_depends_on_the_seed),
	    cmocka_unit_test(slots_spread_over_the_page_lines),
	    cmocka_unit_test(first_extra_is_ratio_minus_one_times_base),
	    cmocka_unit_test(next_extra_closes_the_gap),
	    cmocka_unit_test(gain_is_the_bounded_slope),
	    cmocka_unit_test(ratio_is_ok_within_a_quarter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
