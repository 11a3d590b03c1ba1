/* procfs: the stat, statm, maps and numa_maps parsers within their bounds, and the reads under a
 * root against tests/fixtures/procfs-hostile: command names holding a newline, parentheses and NUL
 * bytes, a stat file cut before the start time, one longer than PROCFS_STAT_MAX, one that ends
 * before the CPU field, a CPU and a start time out of range, and entries of the root that are
 * not processes. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/procfs.h"

#define STAT_FMT                                                                                   \
	"%d (%s) S 1 %d %d 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 %" PRIu64                       \
	" 3133440 389 18446744073709551615 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

/* procfs_parse_stat() of a whole NUL-terminated line, as the readers of the CPU take it: no
 * CPU field is -EINVAL; outs untouched on failure. */
static int parse_start_cpu(const char *line, uint64_t *start, int *cpu)
{
	struct procfs_stat st;
	int r = procfs_parse_stat(line, strlen(line), &st);

	if (r < 0)
		return r;
	if (st.cpu < 0)
		return -EINVAL;
	*start = st.starttime;
	*cpu = st.cpu;
	return 0;
}

/* procfs_parse_stat() of a whole NUL-terminated line, as procs takes it: the start time only. */
static int parse_starttime(const char *line, uint64_t *out)
{
	struct procfs_stat st;
	int r = procfs_parse_stat(line, strlen(line), &st);

	if (r == 0)
		*out = st.starttime;
	return r;
}

static const char *fixtures(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
	return buf;
}

/* Makes root (a mkdtemp() template) with a process 42 in it and opens its file name for
 * writing; path gets the file's path for proc_file_remove(). */
static FILE *proc_file_create(char *root, const char *name, char *path, size_t size)
{
	FILE *f;

	assert_non_null(mkdtemp(root));
	snprintf(path, size, "%s/42", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, size, "%s/42/%s", root, name);
	f = fopen(path, "w");
	assert_non_null(f);
	return f;
}

static void proc_file_remove(const char *root, char *path, size_t size)
{
	unlink(path);
	snprintf(path, size, "%s/42", root);
	rmdir(path);
	rmdir(root);
}

/* maps_parse_line() of a whole NUL-terminated line. */
static int parse_line(const char *line, struct maps_vma *v)
{
	return maps_parse_line(line, strlen(line), v);
}

static void test_maps_line_parses_range_permissions_and_special_vmas(void **state)
{
	(void)state;
	struct maps_vma v;

	assert_int_equal(
	    parse_line("55d0c0a00000-55d0c0c00000 rw-p 00000000 00:00 0    [heap]\n", &v), 0);
	assert_int_equal(v.start, 0x55d0c0a00000);
	assert_int_equal(v.end, 0x55d0c0c00000);
	assert_true(v.readable);
	assert_false(v.special);
	assert_int_equal(parse_line("7ffd1000-7ffd3000 ---p 00000000 00:00 0", &v), 0);
	assert_false(v.readable);
	assert_int_equal(parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   "
				    "               [vsyscall]",
				    &v),
			 0);
	assert_true(v.special);
	assert_int_equal(parse_line("7f00-7e00 rw-p 0 00:00 0", &v), -EINVAL);
	assert_int_equal(parse_line("garbage", &v), -EINVAL);
	assert_int_equal(parse_line("1000-2001 rw-p 0 00:00 0", &v), -EINVAL);
}

/* A maps line is parsed from its own bytes: one placed at the very end of a readable page,
 * followed by an unreadable one, with no newline and no NUL, parses without a fault; the
 * same line inside a much longer text yields the same VMA, and a name cut short at the
 * length is still recognised. */
static void test_maps_line_is_parsed_within_its_length(void **state)
{
	(void)state;
	const char line[] = "7f0000000000-7f0000200000 rw-p 00000000 00:00 0          [vdso]";
	long pg = sysconf(_SC_PAGESIZE);
	char *m =
	    mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct maps_vma v;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memcpy(m + pg - (sizeof(line) - 1), line, sizeof(line) - 1);
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), sizeof(line) - 1, &v), 0);
	assert_int_equal(v.start, 0x7f0000000000);
	assert_int_equal(v.end, 0x7f0000200000);
	assert_true(v.special);
	/* Cut before the name: the same range, not special. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 48, &v), 0);
	assert_false(v.special);
	/* Cut inside the fields: malformed, and nothing past the cut is read. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 20, &v), -EINVAL);
	munmap(m, 2 * (size_t)pg);
}

static void test_stat_line_gives_start_time_and_cpu_past_odd_command_names(void **state)
{
	(void)state;
	char line[512];
	uint64_t start = 7;
	int cpu = 7, n;

	n = snprintf(line, sizeof(line), "77 (a) b) (c ) R");
	for (int field = 4; field <= 52; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %d",
			      field == 22   ? 987654
			      : field == 39 ? 13
					    : field);
	assert_int_equal(parse_start_cpu(line, &start, &cpu), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(cpu, 13);

	start = 7;
	cpu = 7;
	assert_int_equal(parse_start_cpu("77 (short) S 1 2 3\n", &start, &cpu), -EINVAL);
	assert_int_equal(parse_start_cpu("no parenthesis", &start, &cpu), -EINVAL);
	assert_int_equal(start, 7);
	assert_int_equal(cpu, 7);
}

static void parses_starttime_of_a_plain_line(void **state)
{
	uint64_t v = 0;
	(void)state;

	assert_int_equal(parse_starttime("13315 (cat) R 13253 13253 3068 0 -1 4194304 101 0 "
					 "0 0 0 0 0 0 20 0 1 0 43153 3133440 389\n",
					 &v),
			 0);
	assert_int_equal(v, 43153);
}

static void parses_starttime_past_a_comm_with_spaces_and_parentheses(void **state)
{
	char line[512];
	uint64_t v = 0;
	(void)state;

	snprintf(line, sizeof(line), STAT_FMT, 77, "a) (b c ) 1 2", 77, 77, UINT64_C(987654321));
	assert_int_equal(parse_starttime(line, &v), 0);
	assert_int_equal(v, 987654321);
}

static void rejects_malformed_stat_lines(void **state)
{
	uint64_t v = 5;
	(void)state;

	assert_int_equal(parse_starttime("13315 cat R 1 2 3", &v), -EINVAL);
	assert_int_equal(parse_starttime("1 (x) R 1 2 3 4 5\n", &v), -EINVAL);
	assert_int_equal(parse_starttime("1 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 "
					 "18 zz 20\n",
					 &v),
			 -EINVAL);
	assert_int_equal(parse_starttime("", &v), -EINVAL);
	assert_int_equal(v, 5);
}

static void test_numa_maps_line_gives_start_and_resident_pages(void **state)
{
	(void)state;
	uint64_t start = 0, pages = 9;
	const char *l1 = "7f0000000000 default anon=3 dirty=3 N0=1 N1=2 kernelpagesize_kB=4";
	const char *l2 = "7e0000000000 default";
	const char *l3 = "55d0c0a00000 default file=/usr/bin/N0=9\\040x mapped=2 N1=2";

	assert_int_equal(numa_maps_parse_line(l1, strlen(l1), &start, &pages), 0);
	assert_int_equal(start, 0x7f0000000000);
	assert_int_equal(pages, 3);
	assert_int_equal(numa_maps_parse_line(l2, strlen(l2), &start, &pages), 0);
	assert_int_equal(start, 0x7e0000000000);
	assert_int_equal(pages, 0);
	/* N0=9 inside the file name follows no blank: not a node count. */
	assert_int_equal(numa_maps_parse_line(l3, strlen(l3), &start, &pages), 0);
	assert_int_equal(pages, 2);
	/* Cut at its length, inside "N0=1": neither count is seen. */
	assert_int_equal(numa_maps_parse_line(l1, 38, &start, &pages), 0);
	assert_int_equal(pages, 0);
	assert_int_equal(numa_maps_parse_line("zz", 2, &start, &pages), -EINVAL);
}

/* Bytes per node: N<node>= times the page size the line states (a hugetlb VMA's huge pages),
 * the base page without one; nodes past nr_nodes left out, sums saturating, and bytes
 * untouched by a malformed line. */
static void test_numa_maps_line_gives_bytes_on_each_node(void **state)
{
	(void)state;
	uint64_t b[2] = {0, 0};
	const char *l1 = "7f0000000000 default anon=3 dirty=3 N0=1 N1=2 kernelpagesize_kB=4";
	const char *l2 =
	    "7e0000000000 default file=/dev/hugepages/x huge N1=3 kernelpagesize_kB=2048";
	const char *l3 = "7d0000000000 default anon=9 N0=1 N5=8";
	const char *l4 = "7c0000000000 default anon=1 N0=18446744073709551615";

	assert_int_equal(numa_maps_node_bytes(l1, strlen(l1), 4096, b, 2), 0);
	assert_int_equal(b[0], 4096);
	assert_int_equal(b[1], 8192);
	assert_int_equal(numa_maps_node_bytes(l2, strlen(l2), 4096, b, 2), 0);
	assert_int_equal(b[1], 8192 + 3 * (2u << 20));
	assert_int_equal(numa_maps_node_bytes(l3, strlen(l3), 65536, b, 2), 0);
	assert_int_equal(b[0], 4096 + 65536);
	assert_int_equal(numa_maps_node_bytes(l4, strlen(l4), 4096, b, 2), 0);
	assert_true(b[0] == UINT64_MAX);
	assert_int_equal(numa_maps_node_bytes("zz N0=1", 7, 4096, b, 2), -EINVAL);
	assert_int_equal(b[1], 8192 + 3 * (2u << 20));
}

/* A numa_maps file under the root sums over its lines; a line longer than the buffer is cut
 * (its node fields past the cut are not seen) and the lines after it still count; a gone
 * process is -ESRCH. */
static void test_numa_maps_file_sums_every_line_within_its_buffer(void **state)
{
	(void)state;
	char root[] = "/tmp/pghotd-numa-XXXXXX", path[256], buf[128];
	uint64_t b[2] = {7, 7};
	FILE *f = proc_file_create(root, "numa_maps", path, sizeof(path));

	fprintf(f, "7f0000000000 default anon=2 N0=2\n");
	fprintf(f, "7f1000000000 default file=/");
	for (int i = 0; i < 300; i++)
		fputc('x', f);
	fprintf(f, " N1=100\n7f2000000000 default anon=5 N1=5 kernelpagesize_kB=4\n");
	fclose(f);
	assert_int_equal(procfs_read_numa_bytes(root, 42, buf, sizeof(buf), 4096, b, 2), 0);
	assert_int_equal(b[0], 2 * 4096);
	assert_int_equal(b[1], 5 * 4096);
	assert_int_equal(procfs_read_numa_bytes(root, 43, buf, sizeof(buf), 4096, b, 2), -ESRCH);
	proc_file_remove(root, path, sizeof(path));
}

/* The v2 path runs from "0::" to the end of the file less its final newline, whatever bytes a
 * cgroup's name holds (a quote, a backslash, a newline, 0xff); a second "0::" line, a NUL byte
 * or a path past the buffer is an error, never a cut or a guessed path, and out stays as it
 * was then. */
static void test_cgroup_path_keeps_hostile_names_and_rejects_ambiguity(void **state)
{
	(void)state;
	static const char hostile[] = "1:name=systemd:/x\n0::/a\"q\\b\nc\xff/0:: d\n";
	static char big[PROCFS_CGROUP_MAX + 16];
	char out[PROCFS_CGROUP_MAX];
	size_t n;

	assert_int_equal(procfs_parse_cgroup(hostile, sizeof(hostile) - 1, out, sizeof(out)), 15);
	assert_memory_equal(out, "/a\"q\\b\nc\xff/0:: d", 16);
	assert_int_equal(procfs_parse_cgroup("0::/\n", 5, out, sizeof(out)), 1);
	assert_string_equal(out, "/");
	assert_int_equal(procfs_parse_cgroup("0::/no/newline", 14, out, sizeof(out)), 11);
	assert_string_equal(out, "/no/newline");
	assert_int_equal(procfs_parse_cgroup("3:cpu:/v1\n", 10, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	strcpy(out, "kept");
	assert_int_equal(procfs_parse_cgroup("0::/a\n0::/b\n", 12, out, sizeof(out)), -EBADMSG);
	assert_int_equal(procfs_parse_cgroup("0::/a\0b\n", 7, out, sizeof(out)), -EBADMSG);
	assert_int_equal(procfs_parse_cgroup("0::/abc\n", 8, out, 4), -ENAMETOOLONG);
	assert_string_equal(out, "kept");
	/* A name of 4,095 bytes fits with its NUL; one more byte does not. */
	n = (size_t)sprintf(big, "0::/");
	memset(big + n, 'n', PROCFS_CGROUP_MAX - 2);
	n += PROCFS_CGROUP_MAX - 2;
	big[n++] = '\n';
	assert_int_equal(procfs_parse_cgroup(big, n, out, sizeof(out)), PROCFS_CGROUP_MAX - 1);
	big[n - 1] = 'n';
	assert_int_equal(procfs_parse_cgroup(big, n, out, sizeof(out)), -ENAMETOOLONG);
}

static void test_stat_is_parsed_within_its_length_past_newlines_and_nul_bytes(void **state)
{
	(void)state;
	const char text[] = "9 (a\0b)\n(c) S 1 2 3 4 5 6 7 8 9 10 14 15 13 14 15 16 17 18 777 20\n"
			    "garbage) 1 2";
	struct procfs_stat st = {0};

	/* The last ')' within the length is the end of the command name: cut before the
	 * "garbage)" that follows. */
	assert_int_equal(
	    procfs_parse_stat(
		text,
		strlen("9 (a") + 1 +
		    strlen("b)\n(c) S 1 2 3 4 5 6 7 8 9 10 14 15 13 14 15 16 17 18 777 20\n"),
		&st),
	    0);
	assert_int_equal(st.starttime, 777);
	assert_int_equal(st.utime, 14);
	assert_int_equal(st.stime, 15);
	assert_int_equal(st.cpu, -1);
	/* The whole text: its last ')' leaves no start time. */
	assert_int_equal(procfs_parse_stat(text, sizeof(text) - 1, &st), -EINVAL);
	/* Cut inside the start time: what was read is all there is. */
	assert_int_equal(
	    procfs_parse_stat("1 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 123", 55, &st),
	    0);
	assert_int_equal(st.starttime, 12);
	assert_int_equal(
	    procfs_parse_stat("1 (x) R  1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19", 56, &st),
	    -EINVAL);
	assert_int_equal(procfs_parse_stat("", 0, &st), -EINVAL);
}

static void test_stat_files_of_hostile_processes_are_read_within_bounds(void **state)
{
	(void)state;
	char root[PATH_MAX];
	struct procfs_stat st = {.starttime = 5, .cpu = 5};

	fixtures("procfs-hostile", root, sizeof(root));
	assert_int_equal(procfs_read_stat(root, 100, &st), 0); /* "we\nird) (x" */
	assert_int_equal(st.starttime, 4242);
	assert_int_equal(st.cpu, 1);
	assert_int_equal(st.utime, 7);
	assert_int_equal(st.stime, 3);
	memset(&st, 0, sizeof(st));
	assert_int_equal(procfs_read_stat(root, 101, &st), 0); /* "a\0b)\0" */
	assert_int_equal(st.starttime, 4242);
	assert_int_equal(st.cpu, 1);
	st = (struct procfs_stat){.starttime = 5, .cpu = 5};
	assert_int_equal(procfs_read_stat(root, 102, &st), -EINVAL); /* cut at field 20 */
	assert_int_equal(procfs_read_stat(root, 103, &st), -EFBIG);  /* 5,153 bytes */
	assert_int_equal(procfs_read_stat(root, 106, &st), -ERANGE); /* a 23-digit start time */
	assert_int_equal(st.starttime, 5);
	assert_int_equal(st.cpu, 5);
	assert_int_equal(procfs_read_stat(root, 104, &st), 0); /* ends at field 24 */
	assert_int_equal(st.starttime, 4242);
	assert_int_equal(st.cpu, -1);
	assert_int_equal(procfs_read_stat(root, 105, &st), 0); /* CPU 99999999 */
	assert_int_equal(st.cpu, -1);
	assert_int_equal(procfs_read_stat(root, 999, &st), -ESRCH);
}

static void test_pids_are_the_numeric_entries_of_the_root_sorted(void **state)
{
	(void)state;
	char root[PATH_MAX];
	pid_t *pids = NULL;
	size_t n = 0;
	const pid_t want[] = {100, 101, 102, 103, 104, 105, 106};

	fixtures("procfs-hostile", root, sizeof(root));
	assert_int_equal(procfs_list_pids(root, &pids, &n), 0); /* not "self", "12x" nor "0" */
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	assert_memory_equal(pids, want, sizeof(want));
	free(pids);
	assert_int_equal(procfs_list_pids("/nonexistent", &pids, &n), -ENOENT);
}

static void test_pagemap_opens_under_the_root_and_paths_are_bounded(void **state)
{
	(void)state;
	char root[PATH_MAX], path[32];
	int fd;

	fixtures("procfs-hostile", root, sizeof(root));
	fd = procfs_open_pagemap(root, 100);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(procfs_open_pagemap(root, 101), -ENOENT);
	assert_int_equal(procfs_path(path, sizeof(path), "/proc", 4194304, "numa_maps"), 0);
	assert_string_equal(path, "/proc/4194304/numa_maps");
	assert_int_equal(
	    procfs_path(path, sizeof(path), "/proc/../proc/../proc", 4194304, "numa_maps"),
	    -ENAMETOOLONG);
}

static void test_statm_text_gives_size_and_resident_and_rejects_the_malformed(void **state)
{
	(void)state;
	struct procfs_statm sm = {0};
	static const char *const bad[] = {"", "many pages\n", "100\n", "100 5x 0\n", " 5\n"};

	assert_int_equal(procfs_parse_statm("1073741829 5 0 1 0 5 0\n", &sm), 0);
	assert_int_equal(sm.size, 1073741829);
	assert_int_equal(sm.resident, 5);
	assert_int_equal(procfs_parse_statm("0 0 0 0 0 0 0\n", &sm), 0); /* a kernel thread */
	assert_int_equal(sm.size, 0);
	assert_int_equal(procfs_parse_statm("100 50", &sm), 0); /* no newline */
	assert_int_equal(sm.resident, 50);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sm = (struct procfs_statm){.size = 7, .resident = 7};
		assert_int_equal(procfs_parse_statm(bad[i], &sm), -EINVAL);
		assert_int_equal(sm.size, 7); /* untouched */
		assert_int_equal(sm.resident, 7);
	}
}

static void test_statm_is_read_under_the_root_and_a_gone_process_is_esrch(void **state)
{
	(void)state;
	char root[] = "/tmp/test_procfs_statm.XXXXXX", path[PATH_MAX];
	struct procfs_statm sm = {0};
	FILE *f = proc_file_create(root, "statm", path, sizeof(path));

	fputs("50000 2560 100 10 0 400 0\n", f);
	fclose(f);
	assert_int_equal(procfs_read_statm(root, 42, &sm), 0);
	assert_int_equal(sm.size, 50000);
	assert_int_equal(sm.resident, 2560);
	assert_int_equal(procfs_read_statm(root, 43, &sm), -ESRCH);
	proc_file_remove(root, path, sizeof(path));
}

static void test_last_cpu_is_the_stat_files_cpu_or_minus_one(void **state)
{
	(void)state;
	char root[PATH_MAX];
	int cpu = 5;

	fixtures("procfs-hostile", root, sizeof(root));
	assert_int_equal(procfs_last_cpu(root, 100, &cpu), 0);
	assert_int_equal(cpu, 1);
	assert_int_equal(procfs_last_cpu(root, 104, &cpu), -EINVAL); /* ends before field 39 */
	assert_int_equal(cpu, -1);
	cpu = 5;
	assert_int_equal(procfs_last_cpu(root, 999, &cpu), -ESRCH); /* gone */
	assert_int_equal(cpu, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_maps_line_parses_range_permissions_and_special_vmas),
	    cmocka_unit_test(test_maps_line_is_parsed_within_its_length),
	    cmocka_unit_test(test_stat_line_gives_start_time_and_cpu_past_odd_command_names),
	    cmocka_unit_test(parses_starttime_of_a_plain_line),
	    cmocka_unit_test(parses_starttime_past_a_comm_with_spaces_and_parentheses),
	    cmocka_unit_test(rejects_malformed_stat_lines),
	    cmocka_unit_test(test_numa_maps_line_gives_start_and_resident_pages),
	    cmocka_unit_test(test_stat_is_parsed_within_its_length_past_newlines_and_nul_bytes),
	    cmocka_unit_test(test_stat_files_of_hostile_processes_are_read_within_bounds),
	    cmocka_unit_test(test_pids_are_the_numeric_entries_of_the_root_sorted),
	    cmocka_unit_test(test_pagemap_opens_under_the_root_and_paths_are_bounded),
	    cmocka_unit_test(test_statm_text_gives_size_and_resident_and_rejects_the_malformed),
	    cmocka_unit_test(test_statm_is_read_under_the_root_and_a_gone_process_is_esrch),
	    cmocka_unit_test(test_last_cpu_is_the_stat_files_cpu_or_minus_one),
	    cmocka_unit_test(test_numa_maps_line_gives_bytes_on_each_node),
	    cmocka_unit_test(test_numa_maps_file_sums_every_line_within_its_buffer),
	    cmocka_unit_test(test_cgroup_path_keeps_hostile_names_and_rejects_ambiguity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
