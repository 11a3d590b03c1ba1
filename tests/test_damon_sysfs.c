/* Tests for damon_sysfs: a copy of tests/fixtures/damon-sysfs (two kdamond directories laid
 * out as the kernel makes them, state off, no context) in a temporary directory stands in for
 * DAMON's sysfs; each test sets the kdamonds up as someone else, a killed pghotd or nobody
 * left them, and checks what claim, set_targets and release wrote, and what they left alone.
 * A temporary procfs root holds the comm files that say whether a marking pghotd still runs. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/damon/damon_sysfs.h"

struct fx {
	char root[PATH_MAX];	   /* the sysfs root */
	char procfs[PATH_MAX + 8]; /* the procfs root */
	char why[DAMON_REASON_MAX];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char cmd[3 * PATH_MAX];
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(f);
	assert_non_null(dir);
	snprintf(f->root, sizeof(f->root), "%s/pghotd-damon-XXXXXX", getenv("TMPDIR") ?: "/tmp");
	assert_non_null(mkdtemp(f->root));
	snprintf(cmd, sizeof(cmd), "cp -R '%s/damon-sysfs/.' '%s/' && mkdir '%s/proc'", dir,
		 f->root, f->root);
	assert_int_equal(system(cmd), 0);
	snprintf(f->procfs, sizeof(f->procfs), "%s/proc", f->root);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void put(const struct fx *f, const char *rel, const char *val)
{
	char path[2 * PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" DAMON_ADMIN "/%s", f->root, rel);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%s\n", val);
	assert_int_equal(fclose(fp), 0);
}

/* The first line of an attribute, as the code wrote it (no newline) or the fixture did. */
static const char *get(const struct fx *f, const char *rel)
{
	static char buf[128];
	char path[2 * PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/" DAMON_ADMIN "/%s", f->root, rel);
	fp = fopen(path, "r");
	assert_non_null(fp);
	if (!fgets(buf, sizeof(buf), fp))
		buf[0] = '\0';
	fclose(fp);
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static void assert_why(const struct fx *f, const char *text)
{
	if (!strstr(f->why, text))
		fail_msg("reason \"%s\" lacks \"%s\"", f->why, text);
}

/* kdamond idx as someone else left it: a context, running as pid when pid > 0. */
static void set_up_foreign(const struct fx *f, int idx, int pid)
{
	char rel[64], v[32];

	snprintf(rel, sizeof(rel), "%d/contexts/nr_contexts", idx);
	put(f, rel, "1");
	snprintf(rel, sizeof(rel), "%d/state", idx);
	put(f, rel, pid > 0 ? "on" : "off");
	snprintf(rel, sizeof(rel), "%d/pid", idx);
	snprintf(v, sizeof(v), "%d", pid > 0 ? pid : -1);
	put(f, rel, v);
}

/* kdamond idx as a pghotd of pid owner left it, running as thread kpid. */
static void set_up_marked(const struct fx *f, int idx, int owner, int kpid)
{
	char rel[96], v[32];

	set_up_foreign(f, idx, kpid);
	snprintf(rel, sizeof(rel), "%d/contexts/0/schemes/nr_schemes", idx);
	put(f, rel, "1");
	snprintf(rel, sizeof(rel), "%d/contexts/0/schemes/0/apply_interval_us", idx);
	snprintf(v, sizeof(v), "%llu", (unsigned long long)(DAMON_MARK_BASE + (uint64_t)owner));
	put(f, rel, v);
}

static void live_pghotd(const struct fx *f, int pid)
{
	char path[2 * PATH_MAX];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d", f->procfs, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/comm", f->procfs, pid);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("pghotd\n", fp);
	fclose(fp);
}

static const struct damon_attrs attrs = {.sample_us = 5000,
					 .aggr_us = 100000,
					 .update_us = 1000000,
					 .min_regions = 10,
					 .max_regions = 1000};

static void claims_a_free_kdamond_and_starts_it_marked_with_the_targets(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	const pid_t pids[] = {100, 200};
	char mark[32];

	set_up_foreign(f, 0, 0); /* set up, off: someone's, not free */
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_int_equal(damon_sysfs_index(k), 1);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, NULL, 2), 0);
	assert_string_equal(get(f, "1/state"), "on");
	assert_string_equal(get(f, "1/contexts/nr_contexts"), "1");
	assert_string_equal(get(f, "1/contexts/0/operations"), "vaddr");
	assert_string_equal(get(f, "1/contexts/0/monitoring_attrs/intervals/sample_us"), "5000");
	assert_string_equal(get(f, "1/contexts/0/monitoring_attrs/intervals/aggr_us"), "100000");
	assert_string_equal(get(f, "1/contexts/0/monitoring_attrs/nr_regions/min"), "10");
	assert_string_equal(get(f, "1/contexts/0/monitoring_attrs/nr_regions/max"), "1000");
	assert_string_equal(get(f, "1/contexts/0/targets/nr_targets"), "2");
	assert_string_equal(get(f, "1/contexts/0/targets/0/pid_target"), "100");
	assert_string_equal(get(f, "1/contexts/0/targets/1/pid_target"), "200");
	assert_string_equal(get(f, "1/contexts/0/schemes/nr_schemes"), "1");
	assert_string_equal(get(f, "1/contexts/0/schemes/0/action"), "stat");
	snprintf(mark, sizeof(mark), "%llu", (unsigned long long)(DAMON_MARK_BASE + getpid()));
	assert_string_equal(get(f, "1/contexts/0/schemes/0/apply_interval_us"), mark);
	/* The other's kdamond is as it was. */
	assert_string_equal(get(f, "0/contexts/nr_contexts"), "1");
	assert_string_equal(get(f, "nr_kdamonds"), "2");
	damon_sysfs_release(k);
	assert_string_equal(get(f, "1/state"), "off");
	assert_string_equal(get(f, "1/contexts/nr_contexts"), "0");
	assert_string_equal(get(f, "nr_kdamonds"), "2");
}

static void creates_the_only_kdamond_and_removes_it_at_release(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;

	put(f, "nr_kdamonds", "0");
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_string_equal(get(f, "nr_kdamonds"), "1");
	assert_int_equal(damon_sysfs_index(k), 0);
	damon_sysfs_release(k);
	assert_string_equal(get(f, "nr_kdamonds"), "0");
}

static void refuses_while_another_kdamond_runs_and_writes_nothing(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;

	set_up_foreign(f, 0, 77);
	/* kdamond 1 is free, but someone else's DAMON run is going on: leave DAMON to them. */
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), -EBUSY);
	assert_null(k);
	assert_why(f, "kdamond 0 (pid 77) is running: DAMON is in use by someone else");
	assert_string_equal(get(f, "0/state"), "on");
	assert_string_equal(get(f, "1/contexts/nr_contexts"), "0");
	assert_string_equal(get(f, "nr_kdamonds"), "2");
	assert_int_equal(damon_sysfs_inspect(f->root, f->procfs, f->why, sizeof(f->why)), -EBUSY);
}

static void refuses_when_every_kdamond_is_set_up_by_someone_else(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;

	set_up_foreign(f, 0, 0);
	set_up_foreign(f, 1, 0);
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), -EBUSY);
	assert_why(f, "2 kdamonds are set up by someone else and none free");
	assert_string_equal(get(f, "nr_kdamonds"), "2");
	assert_string_equal(get(f, "0/contexts/nr_contexts"), "1");
}

static void stops_and_takes_over_the_kdamond_of_a_killed_pghotd(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	const pid_t pids[] = {300};

	set_up_marked(f, 1, 999999, 55); /* no /proc/999999: that pghotd is gone */
	assert_int_equal(damon_sysfs_inspect(f->root, f->procfs, f->why, sizeof(f->why)), 0);
	assert_string_equal(get(f, "1/state"), "on"); /* inspect changes nothing */
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_int_equal(damon_sysfs_index(k), 1);
	assert_string_equal(get(f, "1/state"), "off");
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, NULL, 1), 0);
	assert_string_equal(get(f, "1/contexts/0/targets/0/pid_target"), "300");
	assert_string_equal(get(f, "1/state"), "on");
	damon_sysfs_release(k);
}

static void leaves_a_running_pghotds_kdamond_alone(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;

	set_up_marked(f, 0, 4242, 56);
	live_pghotd(f, 4242);
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), -EBUSY);
	assert_why(f, "kdamond 0 is another pghotd's (pid 4242)");
	assert_string_equal(get(f, "0/state"), "on");
}

/* Target t's regions directory with n regions, as the kernel makes it for nr_regions n. */
static void region_dirs(const struct fx *f, unsigned t, unsigned n)
{
	char cmd[3 * PATH_MAX];

	snprintf(cmd, sizeof(cmd),
		 "d='%s/" DAMON_ADMIN "/0/contexts/0/targets/%u/regions' && mkdir -p \"$d\" && "
		 "touch \"$d/nr_regions\" && for i in $(seq 0 %d); do mkdir -p \"$d/$i\" && "
		 "touch \"$d/$i/start\" \"$d/$i/end\"; done",
		 f->root, t, (int)n - 1);
	assert_int_equal(system(cmd), 0);
}

static void commits_new_targets_to_the_running_kdamond_and_stops_without_any(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	const pid_t first[] = {100}, next[] = {100, 101, 102};

	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, first, NULL, 1), 0);
	assert_string_equal(get(f, "0/state"), "on");
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, next, NULL, 3), 0);
	assert_string_equal(get(f, "0/state"), "commit");
	assert_string_equal(get(f, "0/contexts/0/targets/nr_targets"), "3");
	assert_string_equal(get(f, "0/contexts/0/targets/2/pid_target"), "102");
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, first, NULL, 1), 0);
	/* A new target's regions, as the kernel's directories would take them. */
	const struct damon_range cut[] = {{0x10000, 0x20000}, {0x20000, 0x31000}};
	const struct damon_ranges init[] = {{NULL, 0}, {NULL, 0}, {cut, 2}};

	region_dirs(f, 2, 2);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, next, init, 3), 0);
	assert_string_equal(get(f, "0/contexts/0/targets/2/regions/nr_regions"), "2");
	assert_string_equal(get(f, "0/contexts/0/targets/2/regions/0/start"), "65536");
	assert_string_equal(get(f, "0/contexts/0/targets/2/regions/1/end"), "200704");
	/* The targets it had are written without regions (no such directory here). */
	assert_string_equal(get(f, "0/state"), "commit");
	put(f, "0/state", "on"); /* what the kernel reads back after a commit */
	put(f, "0/pid", "812");
	pid_t kpid = 0;
	assert_int_equal(damon_sysfs_kdamond_pid(k, &kpid), 0);
	assert_int_equal(kpid, 812);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, NULL, NULL, 0), 0);
	assert_string_equal(get(f, "0/state"), "off");
	damon_sysfs_release(k);
}

/* DAMON's sysfs rebuilds every directory under a count written to it, the same count too: a
 * commit writes the counts, pids and region values that changed since the last, and all again
 * after a failed write. */
static void writes_only_what_changed_since_the_last_commit(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	const pid_t pids[] = {100, 101};
	struct damon_range cut[] = {{0x10000, 0x20000}, {0x20000, 0x31000}};
	const struct damon_ranges init[] = {{cut, 2}, {NULL, 0}}, none[] = {{NULL, 0}, {NULL, 0}};
	const char *const same[] = {
	    "0/contexts/0/targets/nr_targets", "0/contexts/0/targets/1/pid_target",
	    "0/contexts/0/targets/0/regions/nr_regions", "0/contexts/0/targets/0/regions/0/start"};

	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, NULL, 2), 0);
	region_dirs(f, 0, 2);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, init, 2), 0);
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/nr_regions"), "2");
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/1/end"), "200704");
	/* Marks where nothing is to be written again. */
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		put(f, same[i], "x");
	cut[1].end = 0x40000;
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, init, 2), 0);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		assert_string_equal(get(f, same[i]), "x");
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/1/end"), "262144");
	/* No regions this time: the ones written go, so the commit keeps DAMON's own. */
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, none, 2), 0);
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/nr_regions"), "0");
	assert_string_equal(get(f, "0/contexts/0/targets/nr_targets"), "x");
	/* A write that fails (the directory gone): everything is written again next time. */
	char cmd[2 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "rm -r '%s/" DAMON_ADMIN "/0/contexts/0/targets/0/regions'",
		 f->root);
	assert_int_equal(system(cmd), 0);
	assert_true(damon_sysfs_set_targets(k, &attrs, pids, init, 2) < 0);
	region_dirs(f, 0, 2);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, init, 2), 0);
	assert_string_equal(get(f, "0/contexts/0/targets/nr_targets"), "2");
	assert_string_equal(get(f, "0/contexts/0/targets/1/pid_target"), "101");
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/0/start"), "65536");
	damon_sysfs_release(k);
}

/* Region files are held open only in the lower half of RLIMIT_NOFILE: what the source opens
 * besides (a pagemap per target) keeps the upper half. */
static void holds_region_files_only_in_the_lower_half_of_the_fd_limit(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	const pid_t pids[] = {100};
	struct damon_range cut[60];
	const struct damon_ranges init[] = {{cut, 60}};
	struct rlimit old, low;
	int top = -1;
	DIR *d;
	struct dirent *e;

	for (int i = 0; i < 60; i++)
		cut[i] = (struct damon_range){0x10000 + i * 0x1000, 0x11000 + i * 0x1000};
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = 96;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)), 0);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, NULL, 1), 0);
	region_dirs(f, 0, 60);
	assert_int_equal(damon_sysfs_set_targets(k, &attrs, pids, init, 1), 0);
	assert_string_equal(get(f, "0/contexts/0/targets/0/regions/59/end"), "311296");
	d = opendir("/proc/self/fd");
	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d) && atoi(e->d_name) > top)
			top = atoi(e->d_name);
	closedir(d);
	assert_true(top >= 3 && top < 48); /* 120 values written, none held at 48 or above */
	damon_sysfs_release(k);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

static void kernel_without_damon_sysfs_is_enodev(void **state)
{
	struct fx *f = *state;
	struct damon_kdamond *k = NULL;
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/" DAMON_ADMIN "/nr_kdamonds", f->root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(damon_sysfs_claim(f->root, f->procfs, &k, f->why, sizeof(f->why)),
			 -ENODEV);
	assert_why(f, "no DAMON sysfs interface");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(claims_a_free_kdamond_and_starts_it_marked_with_the_targets),
	    T(creates_the_only_kdamond_and_removes_it_at_release),
	    T(refuses_while_another_kdamond_runs_and_writes_nothing),
	    T(refuses_when_every_kdamond_is_set_up_by_someone_else),
	    T(stops_and_takes_over_the_kdamond_of_a_killed_pghotd),
	    T(leaves_a_running_pghotds_kdamond_alone),
	    T(commits_new_targets_to_the_running_kdamond_and_stops_without_any),
	    T(writes_only_what_changed_since_the_last_commit),
	    T(holds_region_files_only_in_the_lower_half_of_the_fd_limit),
	    T(kernel_without_damon_sysfs_is_enodev),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
