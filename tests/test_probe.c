/* Tests for probe: fixture sysfs trees (sysfs-pmu-amd, sysfs-pmu-intel, sysfs-pmu-hybrid, and
 * sysfs-one-node for a machine with neither PMU nor page_idle) crossed with fixture procfs
 * trees (procfs-root, -user, -perfmon, -sysadmin, -open, -garbled) give each verdict and its
 * reason; probe_decide is also driven with hand-made facts. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/probe.h"

struct lines {
	int n;
	char text[16][1024];
};

static void collect(void *ctx, const char *s)
{
	struct lines *l = ctx;

	assert_true(l->n < 16);
	assert_null(strchr(s, '\n'));
	snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", s);
}

static int find_line(const struct lines *l, const char *needle)
{
	for (int i = 0; i < l->n; i++)
		if (strstr(l->text[i], needle))
			return i;
	return -1;
}

static void fixture(char *buf, size_t size, const char *name)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
}

/* Runs the probe on fixture trees sysfs/procfs with topology t and cfg (NULL: all auto). */
static void run_topo(const char *sysfs, const char *procfs, const struct topology *t,
		     const struct pghotd_config *cfg, struct probe_result *r)
{
	char s[PATH_MAX], p[PATH_MAX];
	struct probe_env env = {s, p};

	fixture(s, sizeof(s), sysfs);
	fixture(p, sizeof(p), procfs);
	assert_int_equal(probe_run(&env, t, cfg, r), 0);
}

static void run(const char *sysfs, const char *procfs, const struct pghotd_config *cfg,
		struct probe_result *r)
{
	run_topo(sysfs, procfs, NULL, cfg, r);
}

static void assert_reason(const struct probe_source *s, int err, const char *text)
{
	assert_int_equal(s->state, PROBE_UNAVAILABLE);
	assert_int_equal(s->err, err);
	if (!strstr(s->reason, text))
		fail_msg("reason \"%s\" lacks \"%s\"", s->reason, text);
}

static void amd_as_root_has_ibs_and_abit_but_not_pebs(void **state)
{
	struct probe_result r;
	char want[PATH_MAX + 128];

	(void)state;
	run("sysfs-pmu-amd", "procfs-root", NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_string_equal(r.source[SRC_IBS].reason, "");
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_AVAILABLE);
	fixture(want, sizeof(want), "sysfs-pmu-amd");
	strcat(want, "/bus/event_source/devices/cpu/events/mem-loads: No such file or directory)");
	assert_reason(&r.source[SRC_PEBS], -ENODEV, "no Intel cpu PMU with mem-loads event (");
	assert_reason(&r.source[SRC_PEBS], -ENODEV, want);
	assert_int_equal(r.nr_available, 2);
}

static void machine_without_pmu_or_page_idle_says_which_file_is_missing(void **state)
{
	struct probe_result r;
	char want[PATH_MAX + 128];

	(void)state;
	run("sysfs-one-node", "procfs-root", NULL, &r);
	fixture(want, sizeof(want), "sysfs-one-node");
	strcat(want, "/bus/event_source/devices/ibs_op/type: No such file or directory)");
	assert_reason(&r.source[SRC_IBS], -ENODEV, "no ibs_op PMU (");
	assert_reason(&r.source[SRC_IBS], -ENODEV, want);
	assert_reason(&r.source[SRC_ABIT], -ENODEV, "no page_idle (");
	assert_reason(&r.source[SRC_ABIT], -ENODEV, "kernel/mm/page_idle/bitmap: No such file");
	assert_int_equal(r.nr_available, 0);
}

static void unprivileged_with_paranoid_2_cannot_sample(void **state)
{
	struct probe_result r;

	(void)state;
	run("sysfs-pmu-amd", "procfs-user", NULL, &r);
	assert_reason(&r.source[SRC_IBS], -EACCES, "perf_event_paranoid is 2");
	assert_reason(&r.source[SRC_IBS], -EACCES, "no CAP_PERFMON or CAP_SYS_ADMIN");
	assert_reason(&r.source[SRC_ABIT], -EACCES, "no CAP_SYS_ADMIN");
	run("sysfs-pmu-intel", "procfs-user", NULL, &r);
	assert_reason(&r.source[SRC_PEBS], -EACCES, "perf_event_paranoid is 2");
}

static void cap_perfmon_lifts_paranoid_but_not_page_idle(void **state)
{
	struct probe_result r;

	(void)state;
	run("sysfs-pmu-amd", "procfs-perfmon", NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_reason(&r.source[SRC_ABIT], -EACCES, "pagemap hides PFNs");
}

static void cap_sys_admin_alone_is_enough_for_every_source(void **state)
{
	struct probe_result r;

	(void)state;
	run("sysfs-pmu-amd", "procfs-sysadmin", NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_AVAILABLE);
	run("sysfs-pmu-intel", "procfs-sysadmin", NULL, &r);
	assert_int_equal(r.source[SRC_PEBS].state, PROBE_AVAILABLE);
}

static void paranoid_minus_one_needs_no_capability(void **state)
{
	struct probe_result r;

	(void)state;
	run("sysfs-pmu-amd", "procfs-open", NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_reason(&r.source[SRC_ABIT], -EACCES, "no CAP_SYS_ADMIN");
}

static void intel_pmu_gives_pebs_and_hybrid_uses_cpu_core(void **state)
{
	struct probe_result r;
	struct probe_facts f;
	char s[PATH_MAX], p[PATH_MAX];
	struct probe_env env = {s, p};

	(void)state;
	run("sysfs-pmu-intel", "procfs-root", NULL, &r);
	assert_int_equal(r.source[SRC_PEBS].state, PROBE_AVAILABLE);
	assert_reason(&r.source[SRC_IBS], -ENODEV, "no ibs_op PMU");
	run("sysfs-pmu-hybrid", "procfs-root", NULL, &r);
	assert_int_equal(r.source[SRC_PEBS].state, PROBE_AVAILABLE);
	fixture(s, sizeof(s), "sysfs-pmu-hybrid");
	fixture(p, sizeof(p), "procfs-root");
	assert_int_equal(probe_gather(&env, &f), 0);
	assert_int_equal(f.pebs_event.err, 0);
	assert_non_null(strstr(f.pebs_event.path, "/cpu_core/events/mem-loads"));
}

static void config_off_disables_and_on_marks_required(void **state)
{
	struct pghotd_config cfg = {0};
	struct probe_result r;
	enum stat_source which = SRC__COUNT;
	struct lines l = {0};

	(void)state;
	cfg.sources.ibs.enabled = SOURCE_OFF;
	cfg.sources.abit.enabled = SOURCE_OFF;
	cfg.sources.pebs.enabled = SOURCE_ON;
	run("sysfs-pmu-amd", "procfs-root", &cfg, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_DISABLED);
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_DISABLED);
	assert_true(r.source[SRC_PEBS].required);
	assert_int_equal(r.nr_available, 0);
	assert_int_equal(probe_check_required(&r, &which), -ENODEV);
	assert_int_equal(which, SRC_PEBS);
	probe_describe(&r, NULL, collect, &l);
	assert_string_equal(l.text[0], "source ibs: disabled by config");
	assert_string_equal(l.text[2], "source abit: disabled by config");
	assert_non_null(strstr(l.text[1], "source pebs: unavailable: no Intel cpu PMU"));
	assert_non_null(strstr(l.text[1], "sources.pebs.enabled = on"));
}

static void required_source_that_is_available_passes_the_check(void **state)
{
	struct pghotd_config cfg = {0};
	struct probe_result r;
	enum stat_source which = SRC__COUNT;

	(void)state;
	cfg.sources.ibs.enabled = SOURCE_ON;
	run("sysfs-pmu-amd", "procfs-root", &cfg, &r);
	assert_int_equal(probe_check_required(&r, &which), 0);
	assert_int_equal(which, SRC__COUNT);
	run("sysfs-pmu-amd", "procfs-user", &cfg, &r);
	assert_int_equal(probe_check_required(&r, &which), -EACCES);
	assert_int_equal(which, SRC_IBS);
}

static void numa_balancing_on_draws_a_warning(void **state)
{
	static const struct {
		const char *procfs;
		int mode;
		bool tiering;
		const char *line;
	} cases[] = {
	    {"procfs-root", 0, false, "numa balancing: mode 0 (off)"},
	    {"procfs-user", 1, false, "numa balancing: mode 1 (NUMA balancing)"},
	    {"procfs-perfmon", 2, true, "numa balancing: mode 2 (memory tiering)"},
	    {"procfs-sysadmin", 3, true, "numa balancing: mode 3 (NUMA balancing and"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct probe_result r;
		struct lines l = {0};

		run("sysfs-pmu-amd", cases[i].procfs, NULL, &r);
		assert_int_equal(r.numa_balancing, cases[i].mode);
		assert_int_equal(r.numa_balancing_tiering, cases[i].tiering);
		probe_describe(&r, NULL, collect, &l);
		assert_true(find_line(&l, cases[i].line) >= 0);
		assert_int_equal(
		    find_line(&l, "warning: kernel.numa_balancing has memory tiering") >= 0,
		    cases[i].tiering);
		/* Mode 1 moves pages too: it draws its own warning. */
		assert_int_equal(find_line(&l, "warning: kernel.numa_balancing mode 1 is on") >= 0,
				 cases[i].mode == 1);
	}
}

static void kernel_without_numa_balancing_reports_unknown_mode(void **state)
{
	struct probe_result r;
	struct lines l = {0};

	(void)state;
	run("sysfs-pmu-amd", "procfs-open", NULL, &r);
	assert_int_equal(r.numa_balancing, -1);
	assert_false(r.numa_balancing_tiering);
	probe_describe(&r, NULL, collect, &l);
	assert_true(find_line(&l, "numa balancing: unknown (") >= 0);
	assert_true(find_line(&l, "sys/kernel/numa_balancing: No such file or directory)") >= 0);
}

static void garbled_procfs_is_treated_as_unprivileged_without_crashing(void **state)
{
	struct probe_result r;
	struct probe_facts f;
	char s[PATH_MAX], p[PATH_MAX];
	struct probe_env env = {s, p};

	(void)state;
	run("sysfs-pmu-amd", "procfs-garbled", NULL, &r);
	assert_reason(&r.source[SRC_IBS], -EACCES, "perf_event_paranoid unknown (");
	assert_reason(&r.source[SRC_IBS], -EACCES, "unparsable content");
	assert_reason(&r.source[SRC_ABIT], -EACCES, "no CAP_SYS_ADMIN");
	assert_int_equal(r.numa_balancing, -1);
	fixture(s, sizeof(s), "sysfs-pmu-amd");
	fixture(p, sizeof(p), "procfs-garbled");
	assert_int_equal(probe_gather(&env, &f), 0);
	assert_int_equal(f.status_file.err, -EINVAL);
	assert_int_equal(f.cap_eff, 0);
}

static void missing_roots_make_every_source_unavailable(void **state)
{
	struct probe_env env = {"/nonexistent/sys", "/nonexistent/proc"};
	struct probe_result r;

	(void)state;
	assert_int_equal(probe_run(&env, NULL, NULL, &r), 0);
	for (int i = 0; i < SRC__COUNT; i++)
		assert_int_equal(r.source[i].state, PROBE_UNAVAILABLE);
	assert_int_equal(r.source[SRC_IBS].err, -ENODEV);
	assert_int_equal(r.numa_balancing, -1);
}

static void overlong_root_is_enametoolong_and_leaves_facts_alone(void **state)
{
	char root[PROBE_PATH_MAX + 16];
	struct probe_env env = {root, "/proc"};
	struct probe_facts f;

	(void)state;
	memset(root, 'a', sizeof(root) - 1);
	root[0] = '/';
	root[sizeof(root) - 1] = '\0';
	memset(&f, 0x5a, sizeof(f));
	assert_int_equal(probe_gather(&env, &f), -ENAMETOOLONG);
	assert_int_equal(f.paranoid, 0x5a5a5a5a);
}

static void only_capability_bits_21_and_38_count(void **state)
{
	struct probe_facts f = {.paranoid = 2, .numa_balancing = 0};
	struct probe_result r;

	(void)state;
	/* Every bit but CAP_PERFMON and CAP_SYS_ADMIN: still refused. */
	f.cap_eff = ~((1ull << PROBE_CAP_PERFMON) | (1ull << PROBE_CAP_SYS_ADMIN));
	probe_decide(&f, NULL, NULL, &r);
	assert_reason(&r.source[SRC_IBS], -EACCES, "perf_event_paranoid is 2");
	assert_reason(&r.source[SRC_ABIT], -EACCES, "no CAP_SYS_ADMIN");
	f.cap_eff = 1ull << PROBE_CAP_PERFMON;
	probe_decide(&f, NULL, NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_PEBS].state, PROBE_AVAILABLE);
	f.paranoid = 0;
	f.cap_eff = 0;
	probe_decide(&f, NULL, NULL, &r);
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
}

static void physical_addresses_need_paranoid_1_or_a_capability(void **state)
{
	struct probe_facts f = {.paranoid = 1, .numa_balancing = 0};
	struct probe_result r;

	(void)state;
	probe_decide(&f, NULL, NULL, &r);
	assert_true(r.phys_addr);
	f.paranoid = 2;
	probe_decide(&f, NULL, NULL, &r);
	assert_false(r.phys_addr);
	f.paranoid = 0;
	f.paranoid_file.err = -ENOENT; /* an unknown level grants nothing */
	probe_decide(&f, NULL, NULL, &r);
	assert_false(r.phys_addr);
	f.cap_eff = 1ull << PROBE_CAP_PERFMON;
	probe_decide(&f, NULL, NULL, &r);
	assert_true(r.phys_addr);
	f.cap_eff = 1ull << PROBE_CAP_SYS_ADMIN;
	probe_decide(&f, NULL, NULL, &r);
	assert_true(r.phys_addr);
	run("sysfs-pmu-amd", "procfs-user", NULL, &r); /* paranoid 2, no capability */
	assert_false(r.phys_addr);
	run("sysfs-pmu-amd", "procfs-open", NULL, &r); /* paranoid -1 */
	assert_true(r.phys_addr);
	run("sysfs-pmu-amd", "procfs-perfmon", NULL, &r);
	assert_true(r.phys_addr);
}

/* A kernel built with DAMON and page_idle (RHEL 10, Fedora, Arch), in a VM: no PMU. */
static void auto_runs_page_idle_rather_than_damon_and_says_why_in_a_line(void **state)
{
	struct probe_result r;
	struct lines l = {0};

	(void)state;
	run("sysfs-damon", "procfs-root", NULL, &r);
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_DAMON].state, PROBE_PASSED);
	assert_int_equal(r.nr_available, 1);
	probe_describe(&r, NULL, collect, &l);
	assert_string_equal(l.text[2], "source abit: available");
	assert_non_null(strstr(l.text[3], "source damon: not chosen: page_idle runs: it sees each "
					  "page"));
	assert_string_equal(l.text[4], "auto: abit: " PROBE_WHY_ABIT_OVER_DAMON);
}

/* Debian 13's and Amazon Linux's kernels: DAMON only. */
static void damon_alone_says_what_it_finds_and_what_not(void **state)
{
	struct probe_facts f = {.paranoid = -1, .numa_balancing = 0};
	struct probe_result r;
	struct lines l = {0};

	(void)state;
	f.cap_eff = 1ull << PROBE_CAP_SYS_ADMIN;
	f.ibs_pmu.err = f.pebs_event.err = f.page_idle.err = -ENOENT;
	probe_decide(&f, NULL, NULL, &r);
	assert_int_equal(r.source[SRC_DAMON].state, PROBE_AVAILABLE);
	probe_describe(&r, NULL, collect, &l);
	assert_string_equal(l.text[4], "auto: damon: " PROBE_WHY_DAMON_ONLY);
	assert_non_null(strstr(l.text[4], "scattered page by page"));
	f.damon_sysfs.err = -ENOENT; /* nothing left: no auto line, the no-source one */
	probe_decide(&f, NULL, NULL, &r);
	assert_string_equal(r.choice, "");
}

static void damon_gives_way_to_a_pmu_and_page_idle_to_damon_on(void **state)
{
	struct probe_facts f = {.paranoid = -1, .numa_balancing = 0};
	struct pghotd_config cfg = {0};
	struct probe_result r;

	(void)state;
	f.cap_eff = 1ull << PROBE_CAP_SYS_ADMIN;
	f.pebs_event.err = -ENOENT;
	probe_decide(&f, NULL, NULL, &r); /* IBS, page_idle and DAMON all there */
	assert_int_equal(r.source[SRC_IBS].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_DAMON].state, PROBE_PASSED);
	assert_non_null(strstr(r.source[SRC_DAMON].reason, "a PMU source runs"));
	cfg.sources.damon.enabled = SOURCE_ON; /* on: runs beside the PMU, abit gives way */
	probe_decide(&f, &cfg, NULL, &r);
	assert_int_equal(r.source[SRC_DAMON].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_PASSED);
	assert_non_null(strstr(r.source[SRC_ABIT].reason, "sources.damon is on"));
	assert_string_equal(r.choice, "auto: ibs and damon: the CPU's samples name each page and "
				      "cost no kernel thread");
	f.ibs_pmu.err = -ENOENT;
	probe_decide(&f, &cfg, NULL, &r);
	assert_string_equal(r.choice, "auto: damon: sources.damon is on");
	cfg.sources.damon.enabled = SOURCE_AUTO;
	probe_decide(&f, &cfg, NULL, &r); /* both auto: page_idle */
	assert_int_equal(r.source[SRC_ABIT].state, PROBE_AVAILABLE);
	assert_int_equal(r.source[SRC_DAMON].state, PROBE_PASSED);
	assert_non_null(strstr(r.source[SRC_DAMON].reason, "page_idle runs"));
}

static void damon_in_use_or_without_tracefs_is_unavailable(void **state)
{
	struct probe_facts f = {.paranoid = -1, .numa_balancing = 0};
	struct probe_result r;

	(void)state;
	f.cap_eff = 1ull << PROBE_CAP_SYS_ADMIN;
	f.ibs_pmu.err = f.pebs_event.err = f.page_idle.err = -ENOENT;
	f.damon_busy = -EBUSY;
	snprintf(f.damon_busy_why, sizeof(f.damon_busy_why), "kdamond 0 (pid 7) is running");
	probe_decide(&f, NULL, NULL, &r);
	assert_reason(&r.source[SRC_DAMON], -EBUSY, "kdamond 0 (pid 7) is running");
	f.damon_busy = 0;
	f.damon_event.err = -ENOENT;
	probe_decide(&f, NULL, NULL, &r);
	assert_reason(&r.source[SRC_DAMON], -ENODEV, "no damon:damon_aggregated tracepoint");
	f.damon_event.err = 0;
	f.cap_eff = 0;
	probe_decide(&f, NULL, NULL, &r);
	assert_reason(&r.source[SRC_DAMON], -EACCES, "no CAP_SYS_ADMIN");
}

static void describe_lists_sources_numa_balancing_and_tiers(void **state)
{
	char sys[PATH_MAX];
	struct topology *t = NULL;
	struct probe_result r;
	struct lines l = {0};

	(void)state;
	fixture(sys, sizeof(sys), "sysfs-3node-cxl");
	assert_int_equal(topology_load(sys, &t), 0);
	run_topo("sysfs-pmu-amd", "procfs-root", t, NULL, &r);
	assert_int_equal(r.nr_slow, 1);
	assert_int_equal(r.nr_fast, 2);
	probe_describe(&r, t, collect, &l);
	assert_string_equal(l.text[0], "source ibs: available");
	assert_non_null(strstr(l.text[1], "source pebs: unavailable: no Intel cpu PMU with "
					  "mem-loads event ("));
	assert_string_equal(l.text[2], "source abit: available");
	assert_non_null(strstr(l.text[3], "source damon: unavailable: no DAMON sysfs interface ("));
	assert_string_equal(l.text[4], "auto: ibs and abit: the CPU's samples name each page and "
				       "cost no kernel thread");
	assert_string_equal(l.text[5], "numa balancing: mode 0 (off)");
	assert_non_null(strstr(l.text[6], tier_source_describe(TIER_FROM_SYSFS)));
	assert_non_null(strstr(l.text[9], "node 2: slow"));
	assert_int_equal(l.n, 10);
	assert_int_equal(find_line(&l, "no slow tier"), -1);
	topology_free(t);
}

static void no_slow_tier_and_no_source_each_get_a_line(void **state)
{
	char sys[PATH_MAX], proc[PATH_MAX];
	struct probe_env env = {sys, proc};
	struct topology *t = NULL;
	struct probe_result r;
	struct lines l = {0};

	(void)state;
	fixture(sys, sizeof(sys), "sysfs-one-node");
	fixture(proc, sizeof(proc), "procfs-user");
	assert_int_equal(topology_load(sys, &t), 0);
	assert_int_equal(probe_run(&env, t, NULL, &r), 0);
	assert_int_equal(r.nr_slow, 0);
	assert_int_equal(r.nr_fast, 1);
	probe_describe(&r, t, collect, &l);
	assert_string_equal(
	    l.text[l.n - 1],
	    "no slow tier: pghotd stays idle until one appears (reload to re-detect)");
	assert_true(find_line(&l, "no usable source") >= 0);
	topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(amd_as_root_has_ibs_and_abit_but_not_pebs),
	    cmocka_unit_test(machine_without_pmu_or_page_idle_says_which_file_is_missing),
	    cmocka_unit_test(unprivileged_with_paranoid_2_cannot_sample),
	    cmocka_unit_test(cap_perfmon_lifts_paranoid_but_not_page_idle),
	    cmocka_unit_test(cap_sys_admin_alone_is_enough_for_every_source),
	    cmocka_unit_test(paranoid_minus_one_needs_no_capability),
	    cmocka_unit_test(intel_pmu_gives_pebs_and_hybrid_uses_cpu_core),
	    cmocka_unit_test(config_off_disables_and_on_marks_required),
	    cmocka_unit_test(required_source_that_is_available_passes_the_check),
	    cmocka_unit_test(numa_balancing_on_draws_a_warning),
	    cmocka_unit_test(kernel_without_numa_balancing_reports_unknown_mode),
	    cmocka_unit_test(garbled_procfs_is_treated_as_unprivileged_without_crashing),
	    cmocka_unit_test(missing_roots_make_every_source_unavailable),
	    cmocka_unit_test(overlong_root_is_enametoolong_and_leaves_facts_alone),
	    cmocka_unit_test(only_capability_bits_21_and_38_count),
	    cmocka_unit_test(physical_addresses_need_paranoid_1_or_a_capability),
	    cmocka_unit_test(describe_lists_sources_numa_balancing_and_tiers),
	    cmocka_unit_test(auto_runs_page_idle_rather_than_damon_and_says_why_in_a_line),
	    cmocka_unit_test(damon_alone_says_what_it_finds_and_what_not),
	    cmocka_unit_test(damon_gives_way_to_a_pmu_and_page_idle_to_damon_on),
	    cmocka_unit_test(damon_in_use_or_without_tracefs_is_unavailable),
	    cmocka_unit_test(no_slow_tier_and_no_source_each_get_a_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
