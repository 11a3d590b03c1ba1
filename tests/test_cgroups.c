/* cgroups: the per-cgroup figures from a fixture /proc tree. Bytes on each node and moved pages
 * sum by cgroup; hostile cgroup names (a quote, a backslash, a newline, 0xff, 4,096 bytes)
 * render escaped, fold or count as failures, and the file stays UTF-8; 10,000 cgroups keep the
 * file within the cardinality bound and allocate nothing; the numa_maps walks stay within
 * their allowance; stats.cgroups_max 0 renders nothing. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/config.h"
#include "base/stats.h"
#include "table/cgroups.h"
#include "table/hot_table.h"
#include "table/procs.h"
#include "cgroups_fixture.h"

/* The fixture's results, asserted. */
static struct cgfx *env_new(unsigned max_shown, unsigned max_procs, uint64_t walk_bytes)
{
	const struct cgfx_opts o = {.max_shown = max_shown,
				    .max_procs = max_procs,
				    .reads_per_tick = max_procs,
				    .walk_bytes = walk_bytes};
	const char *fixtures = getenv("PGHOTD_FIXTURES");
	struct cgfx *e = NULL;

	assert_non_null(fixtures);
	assert_int_equal(cgfx_new(fixtures, &o, &e), 0);
	return e;
}

static void add_proc(struct cgfx *e, pid_t pid, const char *path, size_t len, const uint64_t *pages)
{
	assert_int_equal(cgfx_proc(e, pid, path, len, pages), 0);
}

static void env_free(struct cgfx *e)
{
	assert_int_equal(cgfx_free(e), 0);
}

static char *render(struct cgfx *e, size_t *len)
{
	char *text = NULL;

	assert_int_equal(cgfx_render(e, &text, len), 0);
	return text;
}

static bool has_line(const char *text, const char *line)
{
	size_t l = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[l] == '\n')
			return true;
	return false;
}

/* Every line of the NULL-terminated list is a line of text. */
static void has_lines(const char *text, const char *const *lines)
{
	for (; *lines; lines++)
		if (!has_line(text, *lines))
			fail_msg("missing line: %s", *lines);
}

static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

static void figures_sum_by_cgroup_and_node(void **state)
{
	struct cgfx *e = env_new(4, 64, 0);
	static const uint64_t a[] = {10, 0, 5}, b[] = {1, 2, 3}, c[] = {0, 0, 100};
	struct hot_access acc = {.vaddr = 0x7f0000001000, .node = 0, .size = HOT_SIZE_BASE};
	struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 0};
	char *text;
	size_t len;
	(void)state;

	add_proc(e, 10, "/system.slice/db.service", 24, a);
	add_proc(e, 11, "/system.slice/db.service", 24, b);
	add_proc(e, 12, "/user.slice", 11, c);
	/* Moves taken in the round a series appears go to (other): the series start at 0. */
	cgroups_moved(e->cg, (uint32_t)procs_handle(e->procs, 10), CGROUPS_PROMOTED, 7);
	cgroups_refresh(e->cg, e->cfg);
	cgroups_moved(e->cg, (uint32_t)procs_handle(e->procs, 10), CGROUPS_PROMOTED, 4);
	cgroups_moved(e->cg, (uint32_t)procs_handle(e->procs, 11), CGROUPS_PROMOTED, 1);
	cgroups_moved(e->cg, (uint32_t)procs_handle(e->procs, 12), CGROUPS_DEMOTED, 9);
	acc.proc = (uint32_t)procs_handle(e->procs, 12);
	assert_int_equal(hot_table_record(e->hot, &acc, &hp), 1);
	cgroups_refresh(e->cg, e->cfg);
	text = render(e, &len);
	has_lines(
	    text,
	    (const char *const[]){
		"pghotd_cgroups{state=\"shown\"} 2", "pghotd_cgroups{state=\"folded\"} 0",
		"pghotd_cgroup_promoted_pages_total{cgroup=\"/system.slice/db.service\"} 5",
		"pghotd_cgroup_promoted_pages_total{cgroup=\"(other)\"} 7",
		"pghotd_cgroup_demoted_pages_total{cgroup=\"/user.slice\"} 9",
		"pghotd_cgroup_memory_bytes{cgroup=\"/system.slice/db.service\",node=\"0\"} 45056",
		"pghotd_cgroup_memory_bytes{cgroup=\"/system.slice/db.service\",node=\"2\"} 32768",
		"pghotd_cgroup_memory_bytes{cgroup=\"/user.slice\",node=\"2\"} 409600",
		"pghotd_cgroup_memory_bytes{cgroup=\"(other)\",node=\"2\"} 0",
		"pghotd_cgroup_hot_pages{cgroup=\"/user.slice\"} 1",
		"pghotd_cgroup_hot_pages{cgroup=\"/system.slice/db.service\"} 0", NULL});
	free(text);
	env_free(e);
}

/* A displaced cgroup's series leaves the file and its later moves count in (other). */
static void other_keeps_what_it_counted(void **state)
{
	struct cgfx *e = env_new(1, 64, 0);
	static const uint64_t small[] = {0, 0, 10}, big[] = {0, 0, 21};
	uint32_t h;
	char *text;
	size_t len;
	(void)state;

	add_proc(e, 20, "/a", 2, small);
	cgroups_refresh(e->cg, e->cfg);
	cgroups_refresh(e->cg, e->cfg);
	h = (uint32_t)procs_handle(e->procs, 20);
	cgroups_moved(e->cg, h, CGROUPS_PROMOTED, 3);
	cgroups_refresh(e->cg, e->cfg);
	/* /b has more than twice /a's slow bytes: it takes the place; /a's later moves go to
	 * (other), and /a's series is gone from the file. */
	add_proc(e, 21, "/b", 2, big);
	cgroups_refresh(e->cg, e->cfg);
	cgroups_moved(e->cg, h, CGROUPS_PROMOTED, 2);
	cgroups_refresh(e->cg, e->cfg);
	text = render(e, &len);
	assert_null(strstr(text, "cgroup=\"/a\""));
	has_lines(text,
		  (const char *const[]){"pghotd_cgroup_promoted_pages_total{cgroup=\"/b\"} 0",
					"pghotd_cgroup_promoted_pages_total{cgroup=\"(other)\"} 2",
					"pghotd_cgroups{state=\"folded\"} 1", NULL});
	free(text);
	env_free(e);
}

/* Hostile names: a quote, a backslash and a newline render escaped; 0xff folds into (other)
 * (Prometheus refuses a label value that is not UTF-8: the file stays UTF-8); a 4,095-byte
 * path is shown whole, a 4,096-byte name is too long: a read failure, counted, folded. */
static void hostile_cgroup_names_render_escaped_or_fold(void **state)
{
	struct cgfx *e = env_new(8, 64, 0);
	static const uint64_t p1[] = {0, 0, 1};
	static const char odd[] = "/x\"y\\z\nw", bad[] = "/ok\xff";
	char *longest = malloc(4096), *text;
	size_t len;
	(void)state;

	assert_non_null(longest);
	longest[0] = '/';
	memset(longest + 1, 'n', 4095);
	add_proc(e, 30, odd, sizeof(odd) - 1, p1);
	add_proc(e, 31, bad, sizeof(bad) - 1, p1);
	add_proc(e, 32, longest, 4095, p1);
	longest[4095] = 'n';
	add_proc(e, 33, longest, 4096, p1);
	cgroups_refresh(e->cg, e->cfg);
	text = render(e, &len);
	assert_true(has_line(text, "pghotd_cgroup_hot_pages{cgroup=\"/x\\\"y\\\\z\\nw\"} 0"));
	assert_null(memchr(text, 0xff, len));
	assert_true(stats_label_valid(text, len));
	assert_non_null(strstr(text, "cgroup=\"/nnnnnnnn"));
	has_lines(text, (const char *const[]){"pghotd_cgroups{state=\"shown\"} 2",
					      "pghotd_cgroups{state=\"folded\"} 1", NULL});
	assert_int_equal(stats_get(&e->stats, ST_CGROUP_READ_FAILURES), 1);
	/* Every sample is one line: 12 of the header and pghotd_cgroups, 3 series of 6 lines. */
	assert_int_equal(count_lines(text, len), 12 + 3 * 6);
	free(text);
	free(longest);
	env_free(e);
}

/* 10,000 processes in 10,000 cgroups, 16 places: the 16 largest by slow bytes are shown, the
 * file has its bound of lines (5 families' headers, 2 of pghotd_cgroups, 17 series of 3 + 3
 * nodes), and the rounds allocate nothing that stays (the same bytes in use before as after). */
static void ten_thousand_cgroups_stay_within_the_bound(void **state)
{
	struct cgfx *e = env_new(16, 16384, UINT64_C(1) << 40); /* every numa_maps in one round */
	struct mallinfo2 before, after;
	char path[32], *text;
	size_t len;
	(void)state;

	for (int i = 1; i <= 10000; i++) {
		uint64_t pages[CGFX_NODES] = {1, 0, (uint64_t)i};
		int n = snprintf(path, sizeof(path), "/w.slice/job-%d", i);

		add_proc(e, 100 + i, path, (size_t)n, pages);
	}
	cgroups_refresh(e->cg, e->cfg);
	before = mallinfo2();
	cgroups_refresh(e->cg, e->cfg);
	cgroups_refresh(e->cg, e->cfg);
	after = mallinfo2();
	assert_int_equal(after.uordblks, before.uordblks);
	text = render(e, &len);
	assert_int_equal(count_lines(text, len), 10 + 2 + 17 * (3 + CGFX_NODES));
	has_lines(text,
		  (const char *const[]){
		      "pghotd_cgroups{state=\"shown\"} 16", "pghotd_cgroups{state=\"folded\"} 9984",
		      "pghotd_cgroup_hot_pages{cgroup=\"/w.slice/job-10000\"} 0",
		      "pghotd_cgroup_hot_pages{cgroup=\"/w.slice/job-9985\"} 0", NULL});
	assert_null(strstr(text, "cgroup=\"/w.slice/job-9984\""));
	/* (other): node 0 holds a page of each of the 9,984 folded processes. */
	assert_true(
	    has_line(text, "pghotd_cgroup_memory_bytes{cgroup=\"(other)\",node=\"0\"} 40894464"));
	free(text);
	env_free(e);
}

/* A process whose resident set the round's allowance cannot pay for has its numa_maps walked
 * once the allowance has banked enough: 10 MiB at 1 MiB a round (the small one took 64 KiB of
 * the first), the eleventh round. */
static void numa_maps_walks_stay_within_their_allowance(void **state)
{
	struct cgfx *e = env_new(4, 64, 1 << 20);
	static const uint64_t big[] = {0, 0, 2560}, small[] = {0, 0, 16};
	char *text;
	size_t len;
	(void)state;

	add_proc(e, 40, "/big", 4, big);
	add_proc(e, 41, "/small", 6, small);
	for (int round = 1; round <= 11; round++) {
		cgroups_refresh(e->cg, e->cfg);
		text = render(e, &len);
		assert_true(has_line(text,
				     "pghotd_cgroup_memory_bytes{cgroup=\"/small\",node=\"2\"} "
				     "65536"));
		assert_true(has_line(
		    text, round < 11 ? "pghotd_cgroup_memory_bytes{cgroup=\"/big\",node=\"2\"} 0"
				     : "pghotd_cgroup_memory_bytes{cgroup=\"/big\",node=\"2\"} "
				       "10485760"));
		free(text);
	}
	env_free(e);
}

static void zero_cgroups_max_renders_nothing_until_raised(void **state)
{
	struct cgfx *e = env_new(0, 64, 0);
	static const uint64_t p[] = {1, 1, 1};
	char *text;
	size_t len;
	(void)state;

	add_proc(e, 50, "/a", 2, p);
	cgroups_moved(e->cg, (uint32_t)procs_handle(e->procs, 50), CGROUPS_PROMOTED, 3);
	cgroups_refresh(e->cg, e->cfg);
	text = render(e, &len);
	assert_int_equal(len, 0);
	free(text);
	assert_int_equal(cgroups_resize(e->cg, 2), 0);
	cgroups_refresh(e->cg, e->cfg);
	text = render(e, &len);
	has_lines(text, (const char *const[]){
			    "pghotd_cgroups{state=\"shown\"} 1",
			    "pghotd_cgroup_promoted_pages_total{cgroup=\"(other)\"} 0", NULL});
	free(text);
	env_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(figures_sum_by_cgroup_and_node),
	    cmocka_unit_test(other_keeps_what_it_counted),
	    cmocka_unit_test(hostile_cgroup_names_render_escaped_or_fold),
	    cmocka_unit_test(ten_thousand_cgroups_stay_within_the_bound),
	    cmocka_unit_test(numa_maps_walks_stay_within_their_allowance),
	    cmocka_unit_test(zero_cgroups_max_renders_nothing_until_raised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
