/* Tests for the adaptive period controller: grows with CPU use over the budget, shrinks when
 * well under it but never below the configured period, backs off and holds on LOST/THROTTLE,
 * keeps still inside the band, and obeys the IBS period rules. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sources/pmu/ibs_decode.h"
#include "sources/perf/period_ctl.h"

#define SEC 1000000000ull

/* One second in which the sampler used pct percent of a CPU handling n samples. */
static struct period_ctl_input second(double pct, uint64_t n)
{
	struct period_ctl_input in = {
	    .interval_ns = SEC, .samples = n, .cpu_ns = (uint64_t)(pct * SEC / 100.0)};
	return in;
}

static void init_takes_configured_period_as_floor(void **state)
{
	struct period_ctl c;

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	assert_true(c.period == 1000 && c.min == 1000 && c.max == 1000000);
	period_ctl_init(&c, 100007, 0, 5, ibs_period_rules(false));
	assert_true(c.period == 100000);
	assert_true(c.max == IBS_PERIOD_MAX);
	period_ctl_init(&c, 100000, 0, 5, ibs_period_rules(true));
	assert_true(c.max == IBS_PERIOD_MAX_EXT);
}

static void over_budget_grows_period_in_proportion(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(10.0, 5000);
	bool changed = false;

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	/* 10% used, 5% allowed, aiming at 4%: x2.5 */
	assert_true(period_ctl_update(&c, &in, &changed) == 2500);
	assert_true(changed);
	in = second(100.0, 5000); /* x25 wanted, at most x4 per step */
	assert_true(period_ctl_update(&c, &in, &changed) == 10000);
}

static void inside_band_keeps_period(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(3.0, 1000);
	bool changed = true;

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	c.period = 4000;
	assert_true(period_ctl_update(&c, &in, &changed) == 4000);
	assert_false(changed);
	in = second(5.0, 1000); /* exactly at budget: still fine */
	assert_true(period_ctl_update(&c, &in, &changed) == 4000);
	assert_false(changed);
}

static void well_under_budget_shrinks_but_not_below_configured(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(1.0, 100);

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	c.period = 8000;
	/* 1% of a 4% target: x0.25 wanted, at most /2 per step */
	assert_true(period_ctl_update(&c, &in, NULL) == 4000);
	in = second(1.6, 100); /* x0.5 */
	assert_true(period_ctl_update(&c, &in, NULL) == 2000);
	in = second(0.1, 100);
	assert_true(period_ctl_update(&c, &in, NULL) == 1000);
	assert_true(period_ctl_update(&c, &in, NULL) == 1000);
}

static void no_samples_steps_down(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(0.0, 0);

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	c.period = 64000;
	assert_true(period_ctl_update(&c, &in, NULL) == 32000);
}

static void lost_records_double_period_and_hold_it(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(0.5, 100);

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	in.lost = 3;
	assert_true(period_ctl_update(&c, &in, NULL) == 2000);
	in.lost = 0;
	for (int i = 0; i < PERIOD_CTL_HOLD_INTERVALS - 1; i++)
		assert_true(period_ctl_update(&c, &in, NULL) == 2000);
	/* hold over: low CPU brings it back down */
	assert_true(period_ctl_update(&c, &in, NULL) == 1000);
}

static void throttle_over_budget_backs_off_harder(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(20.0, 100);

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	in.throttles = 1;
	assert_true(period_ctl_update(&c, &in, NULL) == 4000);
	assert_int_equal(c.hold, PERIOD_CTL_HOLD_INTERVALS);
}

static void ibs_rules_round_and_cap(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(7.0, 100);
	uint64_t p;

	(void)state;
	period_ctl_init(&c, 0x10000, 0, 5, ibs_period_rules(false));
	p = period_ctl_update(&c, &in, NULL); /* x1.75 = 0x1C000 */
	assert_true(p == 0x1C000);
	in = second(100.0, 100);
	for (int i = 0; i < 4; i++)
		p = period_ctl_update(&c, &in, NULL);
	assert_true(p == IBS_PERIOD_MAX);
	period_ctl_init(&c, 0x10010, 0, 5, ibs_period_rules(true));
	in = second(6.0, 100); /* x1.5: 0x18018, rounded down to 16 */
	p = period_ctl_update(&c, &in, NULL);
	assert_true(p % 16 == 0);
	assert_true(p == 0x18010);
	assert_true(period_ctl_apply_rules(ibs_period_rules(false), 5) == IBS_PERIOD_MIN);
	assert_true(period_ctl_apply_rules(PERIOD_RULES_ANY, 0) == 1);
}

static void explicit_max_caps_growth(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = second(100.0, 100);

	(void)state;
	period_ctl_init(&c, 1000, 3000, 5, PERIOD_RULES_ANY);
	assert_true(period_ctl_update(&c, &in, NULL) == 3000);
}

static void empty_interval_changes_nothing(void **state)
{
	struct period_ctl c;
	struct period_ctl_input in = {0};
	bool changed = true;

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	in.lost = 5;
	assert_true(period_ctl_update(&c, &in, &changed) == 1000);
	assert_false(changed);
}

static void tick_decides_once_per_interval_from_differences(void **state)
{
	struct period_ctl c;
	struct period_ctl_clock k = {0};
	uint64_t p = 0;

	(void)state;
	period_ctl_init(&c, 1000, 0, 5, PERIOD_RULES_ANY);
	/* first call only takes the marks */
	assert_false(period_ctl_tick(&c, &k, 10 * SEC, 7 * SEC, 500, 9, 9, &p));
	/* half a second later: too early, even at 100% CPU */
	assert_false(period_ctl_tick(&c, &k, 10 * SEC + SEC / 2, 7 * SEC + SEC / 2, 900, 9, 9, &p));
	assert_true(p == 0);
	/* a second in: 10% CPU over the interval, no new losses (totals unchanged): x2.5 */
	assert_true(period_ctl_tick(&c, &k, 11 * SEC, 7 * SEC + SEC / 10, 1500, 9, 9, &p));
	assert_true(p == 2500);
	/* next second: 3% CPU, but one new LOST record: doubles */
	assert_true(
	    period_ctl_tick(&c, &k, 12 * SEC, 7 * SEC + SEC / 10 + 3 * SEC / 100, 1600, 10, 9, &p));
	assert_true(p == 5000);
	/* a clock going backwards restarts the marks without a decision */
	assert_false(period_ctl_tick(&c, &k, 1 * SEC, 0, 0, 0, 0, &p));
	assert_true(c.period == 5000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(init_takes_configured_period_as_floor),
	    cmocka_unit_test(over_budget_grows_period_in_proportion),
	    cmocka_unit_test(inside_band_keeps_period),
	    cmocka_unit_test(well_under_budget_shrinks_but_not_below_configured),
	    cmocka_unit_test(no_samples_steps_down),
	    cmocka_unit_test(lost_records_double_period_and_hold_it),
	    cmocka_unit_test(throttle_over_budget_backs_off_harder),
	    cmocka_unit_test(ibs_rules_round_and_cap),
	    cmocka_unit_test(explicit_max_caps_growth),
	    cmocka_unit_test(empty_interval_changes_nothing),
	    cmocka_unit_test(tick_decides_once_per_interval_from_differences),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
