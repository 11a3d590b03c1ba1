/* engine with fake perf syscalls on a fixture sysfs (three nodes, one of them CXL, and an
 * IBS PMU): the table of sources starts, restarts and stops a perf source, a required one that
 * cannot open fails the start, and the probe's PHYS_ADDR verdict reaches the events, for the
 * --probe trial as for the running source. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "fake_perf.h"
#include "base/config_pub.h"
#include "daemon/engine.h"
#include "base/log.h"
#include "sources/perf/perf_sampler.h"
#include "sys/topology.h"

struct fixture {
	char sysfs[PATH_MAX], procfs[PATH_MAX];
	struct fake_perf f;
	struct perf_sampler_ops ops;
	struct stats st;
	struct engine_env env;
	struct probe_result probe; /* IBS available, every other source off */
};

static void fixture_path(char *buf, size_t size, const char *name)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
}

/* A sysfs of sysfs-3node-cxl's nodes and sysfs-ibs-zen4's PMU, through two symlinks. */
static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));
	char target[PATH_MAX], link[PATH_MAX + 16];

	assert_non_null(x);
	snprintf(x->sysfs, sizeof(x->sysfs), "%s/pghotd-engine-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(x->sysfs));
	fixture_path(target, sizeof(target), "sysfs-3node-cxl/devices");
	snprintf(link, sizeof(link), "%s/devices", x->sysfs);
	assert_int_equal(symlink(target, link), 0);
	fixture_path(target, sizeof(target), "sysfs-ibs-zen4/bus");
	snprintf(link, sizeof(link), "%s/bus", x->sysfs);
	assert_int_equal(symlink(target, link), 0);
	/* perf_event_paranoid 2 and no capability: the probe's own verdict would refuse
	 * PHYS_ADDR here, so only the verdict passed in can grant it */
	fixture_path(x->procfs, sizeof(x->procfs), "procfs-user");
	x->ops = fake_perf_ops(&x->f);
	stats_init(&x->st, 3);
	x->env = (struct engine_env){
	    .sysfs_root = x->sysfs, .procfs_root = x->procfs, .stats = &x->st, .perf_ops = &x->ops};
	for (int i = 0; i < SRC__COUNT; i++)
		x->probe.source[i].state = PROBE_DISABLED;
	x->probe.source[SRC_IBS].state = PROBE_AVAILABLE;
	x->probe.nr_available = 1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;
	char link[PATH_MAX + 16];

	snprintf(link, sizeof(link), "%s/devices", x->sysfs);
	unlink(link);
	snprintf(link, sizeof(link), "%s/bus", x->sysfs);
	unlink(link);
	rmdir(x->sysfs);
	free(x);
	return 0;
}

static void destroy_config(struct pghotd_config *cfg)
{
	topology_free(cfg->topo);
	config_free(cfg);
}

static struct pghotd_config *new_config(const struct fixture *x, uint64_t ibs_period)
{
	struct pghotd_config *cfg = NULL;

	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->sources.ibs.period = ibs_period;
	assert_int_equal(topology_load(x->sysfs, &cfg->topo), 0);
	assert_int_equal(topology_apply_config(cfg->topo, cfg), 0);
	return cfg;
}

static void probe_trial_takes_phys_addr_from_the_verdict_and_marks_a_refusal(void **state)
{
	struct fixture *x = *state;
	struct pghotd_config *cfg = new_config(x, 0x10000);
	struct probe_result r = x->probe;

	r.phys_addr = true;
	assert_int_equal(engine_probe_perf(&x->env, cfg, &r), 0);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_int_equal(r.nr_available, 1);
	assert_true(x->f.last.sample_type & PERF_SAMPLE_PHYS_ADDR);
	assert_non_null(strstr(r.perf_sampling, "ok: "));
	assert_int_equal(x->f.open_fds, 0);

	r = x->probe;
	r.phys_addr = false;
	assert_int_equal(engine_probe_perf(&x->env, cfg, &r), 0);
	assert_false(x->f.last.sample_type & PERF_SAMPLE_PHYS_ADDR);

	r = x->probe;
	x->f.open_err = -EACCES;
	assert_int_equal(engine_probe_perf(&x->env, cfg, &r), 0);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_UNAVAILABLE);
	assert_int_equal(r.source[SRC_IBS].err, -EACCES);
	assert_int_equal(r.nr_available, 0);
	assert_non_null(strstr(r.source[SRC_IBS].reason, "Permission denied"));
	assert_non_null(strstr(r.perf_sampling, "refused: "));
	destroy_config(cfg);
}

static void starts_restarts_on_a_changed_section_and_stops_a_perf_source(void **state)
{
	struct fixture *x = *state;
	struct pghotd_config *cfg = new_config(x, 0x10000);
	const struct pghotd_config *old;
	struct config_pub *pub;
	struct engine *e;
	int opens;

	assert_int_equal(engine_new(&x->env, cfg, &e), 0);
	assert_int_equal(config_pub_new(cfg, destroy_config, &pub), 0);
	x->probe.phys_addr = true;
	assert_int_equal(engine_start(e, pub, &x->probe), 1);
	assert_string_equal(engine_source_names(e), "ibs");
	assert_int_equal(atomic_load(&x->st.src_active[SRC_IBS]), 1);
	assert_true(x->f.last.sample_type & PERF_SAMPLE_PHYS_ADDR);
	opens = x->f.opens;
	assert_true(opens > 0);

	/* the same settings: the source keeps running as it is */
	config_pub_swap(pub, new_config(x, 0x10000));
	old = cfg;
	assert_int_equal(engine_apply(e, pub, old, &x->probe), 1);
	assert_int_equal(x->f.opens, opens);

	/* sources.ibs changed: its events are opened again with the new period */
	old = config_pub_current(pub);
	config_pub_swap(pub, new_config(x, 0x20000));
	assert_int_equal(engine_apply(e, pub, old, &x->probe), 1);
	assert_int_equal(x->f.opens, 2 * opens);
	assert_int_equal(x->f.open_fds, opens);

	/* the probe no longer allows it: stopped, everything closed */
	x->probe.source[SRC_IBS].state = PROBE_UNAVAILABLE;
	assert_int_equal(engine_apply(e, pub, config_pub_current(pub), &x->probe), 0);
	assert_string_equal(engine_source_names(e), "");
	assert_int_equal(atomic_load(&x->st.src_active[SRC_IBS]), 0);
	assert_int_equal(x->f.open_fds, 0);
	assert_int_equal(x->f.maps, 0);
	engine_stop(e, pub);
	engine_free(e);
	config_pub_free(pub);
}

static void a_required_perf_source_that_cannot_open_fails_the_start(void **state)
{
	struct fixture *x = *state;
	struct pghotd_config *cfg = new_config(x, 0x10000);
	struct config_pub *pub;
	struct engine *e;

	assert_int_equal(engine_new(&x->env, cfg, &e), 0);
	assert_int_equal(config_pub_new(cfg, destroy_config, &pub), 0);
	x->f.open_err = -EACCES;
	assert_int_equal(engine_start(e, pub, &x->probe), 0); /* "auto": started without it */
	assert_int_equal(engine_sources_running(e), 0);
	engine_stop(e, pub);
	x->probe.source[SRC_IBS].required = true;
	assert_int_equal(engine_start(e, pub, &x->probe), -EACCES);
	assert_int_equal(engine_sources_running(e), 0);
	assert_int_equal(atomic_load(&x->st.src_active[SRC_IBS]), 0);
	assert_int_equal(x->f.maps, 0);
	engine_stop(e, pub);
	engine_free(e);
	config_pub_free(pub);
}

/* Runs engine_start with the probe's verdicts and returns what it logged (into buf). */
static void start_logged(struct fixture *x, char *buf, size_t size)
{
	struct pghotd_config *cfg = new_config(x, 0x10000);
	struct config_pub *pub;
	struct engine *e;
	FILE *f = fmemopen(buf, size, "w");

	assert_non_null(f);
	assert_int_equal(engine_new(&x->env, cfg, &e), 0);
	assert_int_equal(config_pub_new(cfg, destroy_config, &pub), 0);
	log_set_stream(f);
	assert_true(engine_start(e, pub, &x->probe) >= 0);
	log_set_stream(NULL);
	fclose(f);
	engine_stop(e, pub);
	engine_free(e);
	config_pub_free(pub);
}

/* Of page_idle and DAMON the probe chooses one (probe_choose); when it cannot start (the
 * fixture has neither page_idle nor DAMON), the one passed over is tried, but never DAMON
 * beside a PMU source. */
static void the_source_passed_over_is_tried_when_the_chosen_one_cannot_start(void **state)
{
	struct fixture *x = *state;
	char buf[8192];

	x->probe.source[SRC_IBS].state = PROBE_DISABLED;
	x->probe.source[SRC_ABIT].state = PROBE_AVAILABLE;
	x->probe.source[SRC_DAMON].state = PROBE_PASSED;
	start_logged(x, buf, sizeof(buf));
	assert_non_null(strstr(buf, "source abit did not start: falling back to damon"));
	x->probe.source[SRC_ABIT].state = PROBE_PASSED; /* DAMON "on" */
	x->probe.source[SRC_DAMON].state = PROBE_AVAILABLE;
	start_logged(x, buf, sizeof(buf));
	assert_non_null(strstr(buf, "source damon did not start: falling back to abit"));
	x->probe.source[SRC_IBS].state = PROBE_AVAILABLE; /* a PMU: DAMON stays out */
	x->probe.source[SRC_ABIT].state = PROBE_AVAILABLE;
	x->probe.source[SRC_DAMON].state = PROBE_PASSED;
	x->f.open_err = -ENOENT;
	start_logged(x, buf, sizeof(buf));
	assert_null(strstr(buf, "falling back"));
}

/* The hot table takes twice the slow tier's pages, at least ENGINE_TABLE_FLOOR, at most the
 * configured capacity; fast nodes and absent ones do not count. */
static void hot_table_is_sized_to_the_slow_tier_within_its_capacity(void **state)
{
	struct topology t = {.nr_nodes = 3};
	const uint64_t mib = 1 << 20;

	(void)state;
	t.node[0] = (struct topo_node){.present = true, .mem_total = 64 * 1024 * mib};
	t.node[1] = (struct topo_node){.present = true, .slow = true, .mem_total = 512 * mib};
	t.node[2] = (struct topo_node){.present = false, .slow = true, .mem_total = 8192 * mib};
	/* 131,072 slow pages: 262,144 entries, a quarter of the shipped capacity. */
	assert_int_equal(engine_table_capacity(&t, 1048576, 4096), 262144);
	/* A smaller slow tier: the floor. */
	t.node[1].mem_total = 64 * mib;
	assert_int_equal(engine_table_capacity(&t, 1048576, 4096), ENGINE_TABLE_FLOOR);
	/* A big one: the configured capacity. */
	t.node[1].mem_total = 64 * 1024 * mib;
	assert_int_equal(engine_table_capacity(&t, 1048576, 4096), 1048576);
	/* An operator's smaller capacity holds, under the floor too. */
	assert_int_equal(engine_table_capacity(&t, 4096, 4096), 4096);
	/* No slow tier yet (its memory onlined later): the floor. */
	t.node[1].present = false;
	assert_int_equal(engine_table_capacity(&t, 1048576, 4096), ENGINE_TABLE_FLOOR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hot_table_is_sized_to_the_slow_tier_within_its_capacity),
	    cmocka_unit_test_setup_teardown(
		probe_trial_takes_phys_addr_from_the_verdict_and_marks_a_refusal, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		starts_restarts_on_a_changed_section_and_stops_a_perf_source, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		the_source_passed_over_is_tried_when_the_chosen_one_cannot_start, setup, teardown),
	    cmocka_unit_test_setup_teardown(a_required_perf_source_that_cannot_open_fails_the_start,
					    setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
