/* Tests for damon_pace: the kdamond's intervals while there is work and while there is none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/config.h"
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_feed.h"
#include "sources/damon/damon_pace.h"

static int setup(void **state)
{
	struct pghotd_config *cfg;

	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->sources.damon.sample_us = 5000;
	cfg->sources.damon.aggr_us = 100000;
	*state = cfg;
	return 0;
}

static int teardown(void **state)
{
	config_free(*state);
	return 0;
}

static void configured_pace_while_busy_then_slower(void **state)
{
	const struct pghotd_config *cfg = *state;
	struct damon_pace p = {0};

	assert_int_equal(damon_pace_factor(&p, cfg, 1000), DAMON_PACE_IDLE); /* no work yet */
	damon_pace_busy(&p, 1000);
	assert_int_equal(damon_pace_factor(&p, cfg, 1000), 1);
	assert_int_equal(damon_pace_factor(&p, cfg, 1000 + DAMON_PACE_IDLE_MS - 1), 1);
	assert_int_equal(damon_pace_factor(&p, cfg, 1000 + DAMON_PACE_IDLE_MS), DAMON_PACE_IDLE);
	/* More work later keeps it busy from then on. */
	damon_pace_busy(&p, 1500);
	assert_int_equal(damon_pace_factor(&p, cfg, 1000 + DAMON_PACE_IDLE_MS), 1);
	assert_int_equal(damon_pace_factor(&p, cfg, 1500 + DAMON_PACE_IDLE_MS), DAMON_PACE_IDLE);
}

static void idle_pace_keeps_the_aggregation_within_its_bound(void **state)
{
	struct pghotd_config *cfg = *state;
	struct damon_pace p = {0};

	cfg->sources.damon.aggr_us = CONFIG_DAMON_AGGR_US_MAX / 3;
	assert_int_equal(damon_pace_factor(&p, cfg, 0), 3 < DAMON_PACE_IDLE ? 3 : DAMON_PACE_IDLE);
	cfg->sources.damon.aggr_us = CONFIG_DAMON_AGGR_US_MAX;
	assert_int_equal(damon_pace_factor(&p, cfg, 0), 1);
}

static void fixed_where_the_kernel_cannot_rescale(void **state)
{
	const struct pghotd_config *cfg = *state;
	struct damon_pace p = {.fixed = true};

	assert_int_equal(damon_pace_factor(&p, cfg, 1000), 1);
	assert_false(damon_pace_kernel_rescales("6.1.0-28-amd64"));
	assert_false(damon_pace_kernel_rescales("5.19.17"));
	assert_false(damon_pace_kernel_rescales("garbage"));
	assert_false(damon_pace_kernel_rescales(NULL));
	assert_true(damon_pace_kernel_rescales("6.3.0"));
	assert_true(damon_pace_kernel_rescales("6.12.57+deb13-amd64"));
	assert_true(damon_pace_kernel_rescales("7.0.1"));
}

static void the_view_keeps_hot_and_reads_ages_at_the_pace(void **state)
{
	const struct pghotd_config *cfg = *state;
	struct pghotd_config view;
	struct damon_region r = {.start = 0, .end = 4096, .nr_accesses = 10};
	uint32_t cold_age;

	damon_pace_view(cfg, DAMON_PACE_IDLE, &view);
	/* 20 samples an aggregation configured: 10 while idle. */
	assert_int_equal(view.sources.damon.sample_us, 5000 * DAMON_PACE_IDLE * 2);
	assert_int_equal(view.sources.damon.aggr_us, 100000 * DAMON_PACE_IDLE);
	/* Hot is the same share of the samples at either pace (DAMON rescales the counts). */
	assert_true(damon_region_hot(cfg, &r));
	r.nr_accesses = 5;
	assert_true(damon_region_hot(&view, &r));
	r.nr_accesses = 9;
	assert_false(damon_region_hot(cfg, &r));
	r.nr_accesses = 4;
	assert_false(damon_region_hot(&view, &r));
	/* An age is aggregations: the same idle time is fewer of them at the slower pace. */
	r.nr_accesses = 0;
	cold_age = (uint32_t)(config_demotion_exchange_ms(cfg) * 1000 / 100000);
	r.age = (cold_age + DAMON_PACE_IDLE - 1) / DAMON_PACE_IDLE;
	assert_false(damon_region_cold(cfg, &r));
	assert_true(damon_region_cold(&view, &r));
	r.age = cold_age;
	assert_true(damon_region_cold(cfg, &r));
	/* The configured pace is the configured intervals. */
	damon_pace_view(cfg, 1, &view);
	assert_int_equal(view.sources.damon.sample_us, 5000);
	assert_int_equal(view.sources.damon.aggr_us, 100000);
}

/* Fewer than twice DAMON_PACE_IDLE_SAMPLES samples an aggregation: the idle pace keeps them. */
static void few_samples_are_not_halved(void **state)
{
	struct pghotd_config *cfg = *state;
	struct pghotd_config view;

	cfg->sources.damon.aggr_us = 5000 * (2 * DAMON_PACE_IDLE_SAMPLES - 1);
	damon_pace_view(cfg, DAMON_PACE_IDLE, &view);
	assert_int_equal(view.sources.damon.sample_us, 5000 * DAMON_PACE_IDLE);
	assert_int_equal(view.sources.damon.aggr_us, cfg->sources.damon.aggr_us * DAMON_PACE_IDLE);
	cfg->sources.damon.aggr_us = 5000 * 2 * DAMON_PACE_IDLE_SAMPLES;
	damon_pace_view(cfg, DAMON_PACE_IDLE, &view);
	assert_int_equal(view.sources.damon.sample_us, 5000 * DAMON_PACE_IDLE * 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	    T(configured_pace_while_busy_then_slower),
	    T(idle_pace_keeps_the_aggregation_within_its_bound),
	    T(fixed_where_the_kernel_cannot_rescale),
	    T(the_view_keeps_hot_and_reads_ages_at_the_pace),
	    T(few_samples_are_not_halved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
