/* Tests of the --status view: stats files of a running daemon 10 s apart
 * (tests/fixtures/stats/running-{a,b}.prom) sorted into snapshots and rendered with the
 * nodes of the sysfs-3node-cxl fixture (node 2 slow); an old daemon's file; a hostile one;
 * when a file is stale or says the daemon stopped. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "base/log.h"
#include "daemon/status.h"

#define WRITTEN_A  1700003600.0
#define SLOW_NODE2 (1u << 2)
#define GiB	   (1024.0 * 1024 * 1024)

static const char *fixtures(void)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	return dir ? dir : "tests/fixtures";
}

static void snap_of(const char *name, double mtime, struct status_snap *s)
{
	char path[512], *text;
	size_t len;
	struct prom_text t;

	snprintf(path, sizeof(path), "%s/stats/%s", fixtures(), name);
	assert_int_equal(file_read_alloc(path, 1 << 20, &text, &len), 0);
	assert_int_equal(prom_text_parse(text, len, STATUS_MAX_SAMPLES, &t), 0);
	free(text);
	assert_int_equal(status_snap_build(&t, mtime, SLOW_NODE2, s), 0);
}

/* The two files of one run, 10 s apart. */
static void snap_pair(struct status_snap *a, struct status_snap *b)
{
	snap_of("running-a.prom", WRITTEN_A, a);
	snap_of("running-b.prom", WRITTEN_A + 10, b);
}

static struct topology *nodes(void)
{
	char path[512];
	struct topology *t;

	snprintf(path, sizeof(path), "%s/sysfs-3node-cxl", fixtures());
	assert_int_equal(topology_load(path, &t), 0);
	snprintf(path, sizeof(path), "%s/procfs-zoneinfo", fixtures());
	assert_int_equal(topology_read_marks(t, path), 0);
	return t;
}

/* The view of cur (after prev, or alone) as a string. */
static char *render(const struct status_snap *cur, const struct status_snap *prev)
{
	struct topology *t = nodes();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	status_render(f, cur, prev, t, cur->mtime + 1.5, 10000);
	fclose(f);
	topology_free(t);
	return buf;
}

static const struct status_cgroup *cgroup(const struct status_snap *s, const char *name)
{
	for (size_t i = 0; i < s->nr_cgroups; i++)
		if (strcmp(s->cgroup[i].name, name) == 0)
			return &s->cgroup[i];
	fail_msg("no cgroup %s", name);
	return NULL;
}

/* The line of out that starts with prefix. */
static const char *line_of(const char *out, const char *prefix)
{
	for (const char *p = out; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return p;
	fail_msg("no line starting with '%s' in:\n%s", prefix, out);
	return NULL;
}

static void snapshot_sorts_the_families_by_node_source_and_cgroup(void **state)
{
	struct status_snap s;
	const struct status_cgroup *pg;
	(void)state;

	snap_of("running-a.prom", WRITTEN_A, &s);
	assert_true(s.has_up && s.up == 1 && s.start_time == 1700000000);
	assert_true(s.promoted_pages[0] == 100000 && s.promoted_pages[1] == 5000);
	assert_true(s.demoted_pages[0] == 2100); /* both reasons */
	assert_true(s.demoted_why[DEMOTE_EXCHANGE] == 100);
	assert_true(s.promote_failed == 5);
	assert_true(s.source[SRC_ABIT].active == 1 && s.source[SRC_DAMON].active == 0);
	assert_true(s.has_cpu && s.cpu_s == 36.0);
	assert_true(s.has_cgroups && s.cgroups_shown == 3 && s.cgroups_folded == 2);
	assert_int_equal(s.nr_cgroups, 4);
	pg = cgroup(&s, "/system.slice/postgresql.service");
	assert_true(pg->slow_bytes == 3 * GiB && pg->fast_bytes == 2 * GiB);
	assert_true(pg->promoted == 80000 && pg->demoted == 1000 && pg->hot == 900);
	/* The label as the format unescapes it: ESC as it is, the backslash and quotes too. */
	assert_true(cgroup(&s, "/evil\x1b[2J\\name\"quoted\"")->slow_bytes == 512 * 1024 * 1024);
	status_snap_free(&s);
}

static void rates_are_over_the_daemons_last_two_writes(void **state)
{
	struct status_snap a, b;
	char *out;
	(void)state;

	snap_pair(&a, &b);
	out = render(&b, &a);
	assert_non_null(
	    strstr(out, "rates: over the last 10.0 s, between two writes of the daemon"));
	assert_non_null(strstr(out, "pghotd up 1 h 0 min"));
	assert_non_null(strstr(out, "stats written 1.5 s ago (every 10.0 s)"));
	/* 3000 pages in 10 s, 4 KiB each (108000 in all, over nodes 0 and 1); 510 demoted, 500
	 * of them for the free target. */
	assert_non_null(strstr(out, "\npromoted          300.0      1.2 MiB/s         108000\n"));
	assert_non_null(strstr(out, "\ndemoted            51.0    204.0 KiB/s           2610\n"));
	assert_non_null(strstr(out, "demoted for: free_target 50.0/s, exchange 1.0/s"));
	assert_non_null(strstr(out, "failed 1.0/s up"));
	assert_non_null(strstr(out, "CPU: pghotd 1.0% of one CPU"));
	assert_non_null(strstr(line_of(out, "abit "), "running"));
	assert_non_null(strstr(line_of(out, "abit "), "65536.0"));
	/* Node 0 took the promotions; node 2 is slow, with no rate of its own. */
	assert_non_null(strstr(line_of(out, "0 "), "1.2 MiB/s"));
	assert_non_null(strstr(line_of(out, "2 "), "slow"));
	free(out);
	status_snap_free(&a);
	status_snap_free(&b);
}

static void cgroups_rank_by_slow_memory_with_other_last(void **state)
{
	struct status_snap a, b;
	const char *pg, *lng, *evil, *other;
	char *out;
	(void)state;

	snap_pair(&a, &b);
	out = render(&b, &a);
	assert_non_null(strstr(out, "CGROUPS: 3 shown by pghotd, 2 folded into (other)"));
	pg = line_of(out, "/system.slice/postgresql.service ");
	lng = line_of(out, "...");
	evil = line_of(out, "/evil");
	other = line_of(out, "(other) ");
	assert_true(pg < lng && lng < evil && evil < other);
	assert_non_null(strstr(pg, "3.0 GiB    2.0 GiB       250.0       20.0"));
	/* The name's tail shows (the unit), cut on the left to the column. */
	assert_non_null(strstr(lng, "cut-on-the-left.scope "));
	/* No byte of the hostile name reaches the terminal as it is. */
	assert_non_null(strstr(evil, "/evil\\x1b[2J\\x5cname\"quoted\""));
	assert_null(strchr(out, '\x1b'));
	free(out);
	status_snap_free(&a);
	status_snap_free(&b);
}

static void one_file_alone_gives_averages_since_the_start(void **state)
{
	struct status_snap b;
	char *out;
	(void)state;

	snap_of("running-b.prom", WRITTEN_A + 10, &b);
	out = render(&b, NULL);
	assert_non_null(strstr(out, "rates: averages since the start (1 h 0 min)"));
	/* 108000 pages over 3610 s. */
	assert_non_null(strstr(line_of(out, "promoted "), " 29.9 "));
	free(out);
	status_snap_free(&b);
}

static void a_new_start_between_the_files_gives_averages_again(void **state)
{
	struct status_snap a, b;
	char *out;
	(void)state;

	snap_pair(&a, &b);
	a.start_time -= 1; /* another run wrote the first file */
	out = render(&b, &a);
	assert_non_null(strstr(out, "rates: averages since the start"));
	free(out);
	status_snap_free(&a);
	status_snap_free(&b);
}

static void an_older_daemons_file_says_what_it_lacks(void **state)
{
	struct status_snap s;
	char *out;
	(void)state;

	snap_of("old-daemon.prom", WRITTEN_A, &s);
	assert_false(s.has_cgroups);
	out = render(&s, NULL);
	assert_non_null(strstr(out, "cgroups: not in this stats file"));
	assert_non_null(strstr(out, "CPU: not in this stats file"));
	assert_non_null(strstr(line_of(out, "promoted "), "105000"));
	free(out);
	status_snap_free(&s);
}

static void stale_stopped_and_foreign_files_are_told_apart(void **state)
{
	struct status_snap s;
	char msg[512];
	(void)state;

	snap_of("running-a.prom", WRITTEN_A, &s);
	assert_int_equal(status_check(&s, WRITTEN_A + 29, 10000, "/x/stats.prom", msg, sizeof(msg)),
			 0);
	assert_int_equal(status_check(&s, WRITTEN_A + 95, 10000, "/x/stats.prom", msg, sizeof(msg)),
			 -ESTALE);
	assert_string_equal(msg, "/x/stats.prom was last written 1 min 35 s ago, more than 3 x "
				 "stats.interval_ms (30.0 s, 2 s at least): pghotd is not running "
				 "or is stuck; see systemctl status pghotd");
	/* At 100 ms intervals a file 0.3 s old is late, not stale: 2 s at least. */
	assert_int_equal(status_check(&s, WRITTEN_A + 1.9, 100, "/x/stats.prom", msg, sizeof(msg)),
			 0);
	assert_int_equal(status_check(&s, WRITTEN_A + 2.1, 100, "/x/stats.prom", msg, sizeof(msg)),
			 -ESTALE);
	s.up = 0;
	assert_int_equal(status_check(&s, WRITTEN_A + 5, 10000, "/x/stats.prom", msg, sizeof(msg)),
			 -ESRCH);
	assert_non_null(strstr(msg, "it stopped 5.0 s ago"));
	status_snap_free(&s);

	snap_of("hostile.prom", WRITTEN_A, &s);
	assert_int_equal(s.text.malformed, 19);
	assert_int_equal(status_check(&s, WRITTEN_A, 10000, "/x/stats.prom", msg, sizeof(msg)),
			 -EBADMSG);
	assert_non_null(strstr(msg, "not a pghotd stats file"));
	status_snap_free(&s);
}

static void labels_print_escaped_and_cut_on_the_left(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	status_put_label(f, "/a\tb\xff", 12);
	fputc('|', f);
	status_put_label(f, "/0123456789abcdef", 10);
	fclose(f);
	assert_string_equal(buf, "/a\\x09b\\xff |...9abcdef");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(snapshot_sorts_the_families_by_node_source_and_cgroup),
	    cmocka_unit_test(rates_are_over_the_daemons_last_two_writes),
	    cmocka_unit_test(cgroups_rank_by_slow_memory_with_other_last),
	    cmocka_unit_test(one_file_alone_gives_averages_since_the_start),
	    cmocka_unit_test(a_new_start_between_the_files_gives_averages_again),
	    cmocka_unit_test(an_older_daemons_file_says_what_it_lacks),
	    cmocka_unit_test(stale_stopped_and_foreign_files_are_told_apart),
	    cmocka_unit_test(labels_print_escaped_and_cut_on_the_left),
	};

	log_set_level(LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
