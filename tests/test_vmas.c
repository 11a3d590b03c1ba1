/* vmas: the per-process allowance and the global cap of the Accessed-bit source's
 * pieces, the cut that keeps them, and the numa_maps reading behind them. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/vmas.h"
#include "sys/pagemap.h"

#define MIB2 (UINT64_C(2) << 20)

static void test_allowance_follows_the_resident_set(void **state)
{
	(void)state;
	assert_int_equal(vmas_allowance(0), VMAS_FLOOR);
	assert_int_equal(vmas_allowance(1), VMAS_FLOOR + VMAS_PER_HUGE);
	assert_int_equal(vmas_allowance(512), VMAS_FLOOR + VMAS_PER_HUGE);
	assert_int_equal(vmas_allowance(513), VMAS_FLOOR + 2 * VMAS_PER_HUGE);
	/* 16 GiB resident: room for 16 times its 8,192 pieces. */
	assert_int_equal(vmas_allowance(UINT64_C(4) << 20), VMAS_FLOOR + 16 * 8192);
	/* 24 GiB of memory: 2 pieces per 2 MiB and 64 floors. */
	assert_int_equal(vmas_total_cap(UINT64_C(6) << 20), 2 * 12288 + 64 * VMAS_FLOOR);
}

static void test_fit_keeps_the_first_pieces_and_counts_the_rest(void **state)
{
	(void)state;
	struct vma v[3] = {
	    {.start = 0x1000, .end = 0x3000},		     /* 1 piece */
	    {.start = 10 * MIB2 + 0x1000, .end = 20 * MIB2}, /* 10 pieces, the first partial */
	    {.start = 30 * MIB2, .end = 31 * MIB2},	     /* 1 piece */
	};
	struct vmas s = {.v = malloc(sizeof(v)), .n = 3, .cap = 3};

	assert_non_null(s.v);
	memcpy(s.v, v, sizeof(v));
	assert_int_equal(vmas_pieces(&s), 12);
	assert_int_equal(vmas_fit(&s, 12), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(vmas_fit(&s, 5), 7);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[1].start, 10 * MIB2 + 0x1000);
	assert_int_equal(s.v[1].end, 14 * MIB2); /* 4 pieces: [10, 14) x 2 MiB */
	assert_int_equal(vmas_pieces(&s), 5);
	assert_int_equal(vmas_fit(&s, 0), 5);
	assert_int_equal(s.n, 0);
	vmas_free(&s);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The maps of a process with a 4 TiB mapping and nothing resident in it, and its numa_maps:
 * the mapping is dropped as empty, the others are kept. */
static void test_empty_vmas_are_dropped_by_their_numa_maps_lines(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_abit_vmas.XXXXXX", maps[128], numa[128], cmd[160];
	struct vmas s = {0};

	assert_non_null(mkdtemp(dir));
	snprintf(maps, sizeof(maps), "%s/maps", dir);
	snprintf(numa, sizeof(numa), "%s/numa_maps", dir);
	put(maps, "10000000-10200000 rw-p 00000000 00:00 0 \n"
		  "7b0000000000-7f0000000000 r--p 00000000 00:00 0 \n"
		  "7f0000200000-7f0000400000 rw-p 00000000 00:00 0 \n"
		  "7fff00000000-7fff00001000 r--p 00000000 00:00 0    [vvar]\n");
	put(numa, "10000000 default anon=4 dirty=4 N1=4 kernelpagesize_kB=4\n"
		  "7b0000000000 default\n"
		  "7f0000200000 default anon=1 dirty=1 N0=1 kernelpagesize_kB=4\n"
		  "7fff00000000 default\n");
	assert_int_equal(vmas_read_maps(&s, maps), 0);
	assert_int_equal(s.n, 3);
	assert_int_equal(vmas_pieces(&s), 2 + (UINT64_C(4) << 40) / MIB2);
	assert_int_equal(vmas_drop_empty(&s, numa), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.v[0].start, 0x10000000);
	assert_int_equal(s.v[1].start, 0x7f0000200000);
	/* No numa_maps (a kernel without NUMA): the list stays as it was. */
	assert_int_equal(vmas_read_maps(&s, maps), 0);
	assert_true(vmas_drop_empty(&s, "/nonexistent/numa_maps") < 0);
	assert_int_equal(s.n, 3);
	/* Every VMA (the DAMON source's cut: [vvar] too), and a bound on how many. */
	s.all = true;
	assert_int_equal(vmas_read_maps(&s, maps), 0);
	assert_int_equal(s.n, 4);
	s.max = 2;
	assert_int_equal(vmas_read_maps(&s, maps), -E2BIG);
	vmas_free(&s);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allowance_follows_the_resident_set),
	    cmocka_unit_test(test_fit_keeps_the_first_pieces_and_counts_the_rest),
	    cmocka_unit_test(test_empty_vmas_are_dropped_by_their_numa_maps_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
