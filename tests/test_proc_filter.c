/* Process selection: globs on command name and cgroup (with descendants), RSS floor, and
 * reading the facts from a procfs fixture. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "table/proc_filter.h"

static struct pghotd_config *load(const char *text)
{
	struct pghotd_config *cfg = NULL;
	struct config_errors errs = {0};

	if (config_load_string(text, "test.conf", &cfg, &errs) < 0) {
		for (int i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		fail();
	}
	return cfg;
}

static const struct proc_info db = {
    .comm = "postgres", .cgroup = "/system.slice/pg.service/main", .rss_bytes = 512ull << 20};
static const struct proc_info shell = {
    .comm = "bash", .cgroup = "/user.slice/user-0.slice", .rss_bytes = 4ull << 20};

static void test_defaults_select_every_user_process(void **state)
{
	(void)state;
	struct pghotd_config *cfg = load("");
	struct proc_info kthread = {.comm = "kswapd0", .kernel_thread = true};

	assert_true(proc_filter_selects_all(cfg));
	assert_true(proc_filter_match(cfg, &db));
	assert_true(proc_filter_match(cfg, &shell));
	assert_false(proc_filter_match(cfg, &kthread));
	config_free(cfg);
}

static void test_include_comm_glob(void **state)
{
	(void)state;
	struct pghotd_config *cfg =
	    load("processes: { include_comm = [\"post*\", \"redis-server\"]; };");

	assert_false(proc_filter_selects_all(cfg));
	assert_true(proc_filter_match(cfg, &db));
	assert_false(proc_filter_match(cfg, &shell));
	config_free(cfg);
}

static void test_cgroup_pattern_covers_descendants(void **state)
{
	(void)state;
	struct pghotd_config *cfg =
	    load("processes: { include_cgroup = [\"/system.slice/pg.service\"]; };");

	assert_true(proc_filter_match(cfg, &db));
	assert_false(proc_filter_match(cfg, &shell));
	config_free(cfg);
	cfg = load("processes: { exclude_cgroup = [\"/user.slice\"]; };");
	assert_true(proc_filter_match(cfg, &db));
	assert_false(proc_filter_match(cfg, &shell));
	config_free(cfg);
}

static void test_exclude_wins_and_rss_floor(void **state)
{
	(void)state;
	struct pghotd_config *cfg =
	    load("processes: { include_comm = [\"*\"]; exclude_comm = [\"bash\"]; };");

	assert_true(proc_filter_match(cfg, &db));
	assert_false(proc_filter_match(cfg, &shell));
	config_free(cfg);
	cfg = load("processes: { min_rss_mb = 100; };");
	assert_true(proc_filter_match(cfg, &db));
	assert_false(proc_filter_match(cfg, &shell));
	config_free(cfg);
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_reads_comm_cgroup_and_rss_from_procfs(void **state)
{
	(void)state;
	char root[] = "/tmp/pghotd-procfs-XXXXXX", dir[512];
	struct proc_info info = {0};

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/4242", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(dir, "comm", "memcached\n");
	put(dir, "cgroup", "0::/system.slice/memcached.service\n");
	put(dir, "statm", "50000 2560 100 10 0 400 0\n");
	assert_int_equal(proc_info_read(root, 4242, &info), 0);
	assert_string_equal(info.comm, "memcached");
	assert_string_equal(info.cgroup, "/system.slice/memcached.service");
	assert_int_equal(info.rss_bytes, 2560ull * (uint64_t)sysconf(_SC_PAGESIZE));
	assert_false(info.kernel_thread);
	assert_int_equal(proc_info_read(root, 4243, &info), -ESRCH);
	assert_string_equal(info.comm, "memcached"); /* untouched on failure */
	assert_int_equal(proc_info_read("/proc", getpid(), &info), 0);
	assert_true(info.rss_bytes > 0);
	/* A kernel thread (statm all 0) ends at statm: its comm and cgroup are not read. */
	snprintf(dir, sizeof(dir), "%s/2", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(dir, "statm", "0 0 0 0 0 0 0\n");
	assert_int_equal(proc_info_read(root, 2, &info), 0);
	assert_true(info.kernel_thread);
	assert_string_equal(info.comm, "");
	assert_string_equal(info.cgroup, "");
	/* statm, now read first, is hostile input too: garbage, a FIFO (never blocks) and a
	 * symlink (never followed) leave the process unknown, info untouched. */
	snprintf(dir, sizeof(dir), "%s/3", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(dir, "statm", "many pages\n");
	assert_int_equal(proc_info_read(root, 3, &info), -EINVAL);
	snprintf(dir, sizeof(dir), "%s/4", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	char path[600];
	snprintf(path, sizeof(path), "%s/statm", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_true(proc_info_read(root, 4, &info) < 0);
	snprintf(dir, sizeof(dir), "%s/5", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof(path), "%s/5/statm", root);
	assert_int_equal(symlink("../4242/statm", path), 0);
	assert_true(proc_info_read(root, 5, &info) < 0);
	assert_true(info.kernel_thread); /* still pid 2's */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

/* /proc/PID/cgroup is read whole: a v2 path under an excluded cgroup still excludes the
 * process when the file is 1,024 bytes and more (v1 lines first, then a deep path); a path
 * too long to keep, a second v2 line, or a file past the read bound, leaves the process
 * unknown (an error, so the caller skips it) rather than a cgroup of "" that no exclude rule
 * matches, or a cgroup shown by another's name. */
static void test_long_cgroup_file_is_read_whole_or_the_process_is_unknown(void **state)
{
	(void)state;
	char root[] = "/tmp/pghotd-procfs-XXXXXX", dir[512], cmd[600];
	static char text[PROC_CGROUP_FILE_MAX + 64];
	struct proc_info info = {0};
	struct pghotd_config *cfg = load("processes: { exclude_cgroup = [\"/hostile.slice\"]; };");
	size_t n = 0;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/77", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	put(dir, "comm", "hostile\n");
	put(dir, "statm", "50000 2560 100 10 0 400 0\n");
	for (int i = 1; i <= 12; i++)
		n += (size_t)sprintf(text + n, "%d:hierarchy%d:/hostile.slice\n", i, i);
	n += (size_t)sprintf(text + n, "0::/hostile.slice");
	while (n < 2000)
		n += (size_t)sprintf(text + n, "/deeper");
	n += (size_t)sprintf(text + n, "\n");
	put(dir, "cgroup", text);
	assert_int_equal(proc_info_read(root, 77, &info), 0);
	assert_int_equal(strncmp(info.cgroup, "/hostile.slice/deeper/", 22), 0);
	assert_false(proc_filter_match(cfg, &info));

	/* A path longer than PROC_CGROUP_MAX: unknown. */
	n = (size_t)sprintf(text, "0::/hostile.slice");
	while (n < PROC_CGROUP_MAX + 10)
		n += (size_t)sprintf(text + n, "/deeper");
	sprintf(text + n, "\n");
	put(dir, "cgroup", text);
	assert_int_equal(proc_info_read(root, 77, &info), -ENAMETOOLONG);

	/* A second v2 line (a cgroup name with a newline: the kernel prints names as they are),
	 * after the real one or before it: unknown, not the cgroup the name shows. */
	put(dir, "cgroup", "0::/hostile.slice/x\n0::/system.slice/pg.service\n");
	assert_int_equal(proc_info_read(root, 77, &info), -EBADMSG);
	put(dir, "cgroup", "1:name=v1:/y\n0::/system.slice/pg.service\n0::/hostile.slice/x\n");
	assert_int_equal(proc_info_read(root, 77, &info), -EBADMSG);

	/* A file past the read bound: unknown. */
	memset(text, '\n', PROC_CGROUP_FILE_MAX + 8);
	sprintf(text + PROC_CGROUP_FILE_MAX + 8, "0::/hostile.slice\n");
	put(dir, "cgroup", text);
	assert_int_equal(proc_info_read(root, 77, &info), -EFBIG);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_select_every_user_process),
	    cmocka_unit_test(test_include_comm_glob),
	    cmocka_unit_test(test_cgroup_pattern_covers_descendants),
	    cmocka_unit_test(test_exclude_wins_and_rss_floor),
	    cmocka_unit_test(test_reads_comm_cgroup_and_rss_from_procfs),
	    cmocka_unit_test(test_long_cgroup_file_is_read_whole_or_the_process_is_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
