/* Tests for zoneinfo: each node's kernel mark (high watermark with its boost, and the lowmem
 * reserve a movable page must leave, over its zones) from a zoneinfo file in the kernel's format,
 * and the file's bounds. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/zoneinfo.h"

static void fixture_path(char *buf, size_t size, const char *name)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	assert_true((size_t)snprintf(buf, size, "%s/%s", dir, name) < size);
}

/* Writes text to a new file and returns its path in buf (removed by the caller). */
static void write_tmp(char *buf, size_t size, const char *text)
{
	int fd;

	assert_true((size_t)snprintf(buf, size, "/tmp/test_zoneinfo.XXXXXX") < size);
	fd = mkstemp(buf);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The two-node guest's file (Debian's 6.12, node 0 in an OOM run): node 0 is DMA (high 32 +
 * reserve 446) and DMA32 (high 2477, its boost of 1486 included); node 1 is one movable zone
 * (high 506). The boost lines, the per-CPU "high:" lines and the empty zones add nothing. */
static void marks_add_high_and_reserve_over_a_nodes_zones(void **state)
{
	char path[PATH_MAX];
	uint64_t pages[4] = {0};

	(void)state;
	fixture_path(path, sizeof(path), "procfs-zoneinfo/zoneinfo");
	assert_int_equal(zoneinfo_read_marks(path, pages, 4), 0);
	assert_int_equal(pages[0], 32 + 446 + 2477);
	assert_int_equal(pages[1], 506);
	assert_int_equal(pages[2], 0);
	/* Nodes past the caller's array are left out. */
	memset(pages, 0, sizeof(pages));
	assert_int_equal(zoneinfo_read_marks(path, pages, 1), 0);
	assert_int_equal(pages[0], 32 + 446 + 2477);
	assert_int_equal(pages[1], 0);
}

static void a_malformed_or_oversized_zone_line_is_refused(void **state)
{
	static const struct {
		const char *text;
		int r;
	} cases[] = {
	    {"Node 0, zone DMA\n        high     x12\n", -EINVAL},
	    {"Node 0, zone DMA\n        high     12 13\n", -EINVAL},
	    {"Node 0, zone DMA\n        high     99999999999999999999999\n", -ERANGE},
	    {"Node 0, zone DMA\n        protection: (0, 446\n", -EINVAL},
	    {"Node 0, zone DMA\n        protection: 0, 446)\n", -EINVAL},
	    {"Node x, zone DMA\n", -EINVAL},
	};
	char path[64];
	uint64_t pages[2];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(pages, 0, sizeof(pages));
		write_tmp(path, sizeof(path), cases[i].text);
		assert_int_equal(zoneinfo_read_marks(path, pages, 2), cases[i].r);
		unlink(path);
	}
}

/* Lines before the first zone, a huge node number, sums past 64 bits and a line longer than
 * the parser's buffer: counted within bounds, nothing read out of them. */
static void hostile_text_stays_within_bounds(void **state)
{
	char path[64], *text;
	size_t len = 64 * 1024;
	uint64_t pages[2] = {0};
	int off;

	(void)state;
	text = malloc(len + 256);
	assert_non_null(text);
	off = snprintf(text, 256,
		       "        high     7\n"
		       "Node 4294967296, zone DMA\n        high     5\n"
		       "Node 1, zone A\n        high     18446744073709551615\n        high     9\n"
		       "Node 0, zone B\n        high     ");
	memset(text + off, '1', len); /* cut at the buffer: read as a number of its first bytes */
	strcpy(text + off + len, "\n");
	write_tmp(path, sizeof(path), text);
	free(text);
	assert_int_equal(zoneinfo_read_marks(path, pages, 2), -ERANGE);
	assert_int_equal(pages[1], UINT64_MAX); /* saturated, not wrapped */
	unlink(path);
}

static void a_missing_file_is_an_error(void **state)
{
	uint64_t pages[1] = {0};

	(void)state;
	assert_int_equal(zoneinfo_read_marks("/nonexistent/zoneinfo", pages, 1), -ENOENT);
	assert_int_equal(zoneinfo_read_marks("/", pages, 1), -EISDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(marks_add_high_and_reserve_over_a_nodes_zones),
	    cmocka_unit_test(a_malformed_or_oversized_zone_line_is_refused),
	    cmocka_unit_test(hostile_text_stays_within_bounds),
	    cmocka_unit_test(a_missing_file_is_an_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
