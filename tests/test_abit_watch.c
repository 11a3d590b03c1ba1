/* abit_watch: mode "regions": the pieces the samples watch, within the cap, and the switch
 * between the modes (abit_fixture.h). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/abit/abit_source.h"
#include "sources/abit/abit_regions.h"
#include "sources/abit/abit_sampler.h"
#include "table/cold_list.h"
#include "base/config.h"
#include "base/config_pub.h"
#include "table/hot_table.h"
#include "sources/abit/idle_bitmap.h"
#include "base/log.h"
#include "sys/pagemap.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "sys/topology.h"
#include "abit_fixture.h"

/* What the kernel shows after the band's 64 pages were all accessed: one bitmap word. */
static void fx_access_band(struct fx *f)
{
	char path[256];

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	pwrite_u64(path, SLOW_PFN / 64 * 8, 0);
}

/* The band of w = 64 pages accessed all the time is sampled within
 * k = abit_regions_miss_bound(8192, 64, 16, 8, 10, 512) = 138 aggregation intervals (scan
 * intervals: ceil(2 * 10 * 512 / 64) = 160 samples, since only the uniform half of the draws
 * is counted on (the other half goes to the pieces' tails), 28 in the first six intervals
 * while the band's region looks idle and takes longer turns, one per interval after that) but with
 * probability e^-10, and its pages are reported one scan interval later (the piece becomes
 * watched, the next round learns it, the one after reports): within
 * (k + 1) * ABIT_SAMPLES_PER_AGGR steps. Nothing else is reported, cold pieces are never
 * scanned page by page. */
static void test_region_mode_finds_a_hot_band_within_the_bound(void **state)
{
	struct fx *f = *state;
	uint64_t k =
	    abit_regions_miss_bound(8192, 64, 64 / 4, ABIT_SAMPLES_PER_AGGR, 10, ABIT_PIECE_PAGES);
	int steps = 0;

	assert_int_equal(k, 138);
	fx_regions_proc(f);
	while (f->nev == 0 && steps < (int)(k + 1) * ABIT_SAMPLES_PER_AGGR) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	printf("hot band reported after %d steps (%.2f scan intervals; bound %d)\n", steps,
	       (double)steps / ABIT_SAMPLES_PER_AGGR, (int)(k + 1) * ABIT_SAMPLES_PER_AGGR);
	assert_true(f->nev > 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	assert_true(abit_nr_sample_regions(f->a, 100) <= 64);
	assert_true(abit_nr_sample_regions(f->a, 100) >= 16);
	for (int i = 0; i < 2 * ABIT_SAMPLES_PER_AGGR; i++) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
	}
	/* Every band page is reported, once per round; nothing outside it. */
	for (size_t i = 0; i < f->nev; i++) {
		assert_true(f->ev[i].vaddr >= VA + 5 * PIECE);
		assert_true(f->ev[i].vaddr < VA + 5 * PIECE + 64 * 4096);
	}
	assert_true(f->nev >= 64);
	assert_int_equal(abit_piece_watched(f->a, 100, VA + 5 * PIECE), 1);
	for (uint64_t g = 0; g < 16; g++)
		if (g < 4 || g > 6)
			assert_int_equal(abit_piece_watched(f->a, 100, VA + g * PIECE), 0);
}

/* A sample read back accessed watches its 2 MiB piece at once, not at the end of the
 * aggregation interval (ABIT_SAMPLES_PER_AGGR steps): one piece of 512 slow pages, all used
 * all the time, is watched at the second step (the first reads back nothing) and its pages are
 * reported at the step after that, and again at the next (QUICK_STEPS re-reads), not from the
 * next round: a page used all the time is counted twice two steps after its sample. */
static void test_region_mode_watches_a_sampled_access_at_once(void **state)
{
	struct fx *f = *state;
	char path[256];
	static const char zeros[NR_PFNS / 8];
	int steps = 0;
	size_t nev;

	f->seed = 7;
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.full_scan_mib = 0;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, SLOW_PFN + i, LRU);
	fx_new_abit(f);
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	while (f->nev == 0 && steps < ABIT_SAMPLES_PER_AGGR) {
		write_file(path, zeros, sizeof(zeros)); /* every page accessed again */
		assert_true(fx_round(f) >= 0);
		steps++;
		if (steps == 2)
			assert_int_equal(abit_piece_watched(f->a, 100, VA), 1);
	}
	assert_int_equal(steps, 3);
	/* Every page, but those the step before sampled: marked idle after this fixture's
	 * accesses, which come only between steps (a kernel's come all the time). */
	assert_true(f->nev >= 512 - abit_nr_sample_regions(f->a, 100));
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_true(f->nev - nev >= 512 - abit_nr_sample_regions(f->a, 100));
	/* The re-reads are done: the next call is a round, which reads the piece as every
	 * round does a watched one, and the step after it reports nothing. */
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_true(f->nev > nev);
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_int_equal(f->nev, nev);
}

/* Issue 13's pages that become slow later: the band's pages sit on the fast node for three
 * scan intervals (accessed all along), then move to the slow node, as migratepages(8) would
 * move them. The samples cover the whole address space wherever its pages are, so the band is
 * reported within the same bound as a band that was slow from the start. */
static int steps_to_find_moved_band(struct fx *f)
{
	int steps = 0;

	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, 64 + i, LRU); /* node 0 */
	for (int i = 0; i < 3 * ABIT_SAMPLES_PER_AGGR; i++) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(f->nev, 0);
	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, SLOW_PFN + i, LRU);
	while (f->nev == 0 && steps < 40 * ABIT_SAMPLES_PER_AGGR) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	return steps;
}

static void test_region_mode_sees_pages_that_become_slow_later(void **state)
{
	struct fx *f = *state;
	uint64_t k =
	    abit_regions_miss_bound(8192, 64, 64 / 4, ABIT_SAMPLES_PER_AGGR, 10, ABIT_PIECE_PAGES);
	int steps;

	fx_regions_proc(f);
	steps = steps_to_find_moved_band(f);
	printf("band moved to the slow node reported after %.2f scan intervals (bound %d)\n",
	       (double)steps / ABIT_SAMPLES_PER_AGGR, (int)k + 1);
	assert_true(f->nev > 0 && steps <= (int)(k + 1) * ABIT_SAMPLES_PER_AGGR);
}

/* Every page accessed all the time, 16 pieces hot: no more than max_watched_mib (4 pieces)
 * are scanned page by page, and only they hold per-page state. */
static void test_region_mode_watches_no_more_than_the_cap(void **state)
{
	struct fx *f = *state;
	char path[256];
	static const char zeros[NR_PFNS / 8];
	size_t watched = 0;

	fx_regions_proc(f);
	f->cfg->sources.abit.max_watched_mib = 8;
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	for (int i = 0; i < 10 * ABIT_SAMPLES_PER_AGGR; i++) {
		write_file(path, zeros, sizeof(zeros)); /* every page accessed again */
		assert_true(fx_round(f) >= 0);
		watched = 0;
		for (uint64_t g = 0; g < 16; g++)
			watched += abit_piece_watched(f->a, 100, VA + g * PIECE) == 1;
		assert_true(watched <= 4);
	}
	assert_int_equal(watched, 4);
	assert_true(abit_nr_tracked(f->a) <= 4 * 64); /* 64 pages mapped in the fullest piece */
	assert_true(f->nev > 0);
}

/* Nothing accessed for ten scan intervals: no piece is watched, no event, and the pages
 * looked at are the samples alone, at most max_regions a step, a fraction of what the full
 * scan looks at. */
static void test_region_mode_looks_at_cold_memory_through_samples_only(void **state)
{
	struct fx *f = *state;
	int steps = 10 * ABIT_SAMPLES_PER_AGGR;

	fx_regions_proc(f);
	for (int i = 0; i < steps; i++)
		assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	for (uint64_t g = 0; g < 16; g++)
		assert_int_equal(abit_piece_watched(f->a, 100, VA + g * PIECE), 0);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) <= (uint64_t)steps * 64);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) >= (uint64_t)steps * 16);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	/* The I/O counted: a pagemap entry for each sampled page, then for the slow ones their
	 * kpageflags, a bitmap word written, and at the next step the entry and word again. */
	assert_true(fx_stat(f, SS_SCAN_IO_BYTES) >= 8 * fx_stat(f, SS_PAGES_SCANNED));
	assert_true(fx_stat(f, SS_SCAN_IO_BYTES) <= 5 * 8 * fx_stat(f, SS_PAGES_SCANNED));
}

/* Mode regions with the shipped full_scan_mib: a process of 32 MiB is scanned in full, every
 * slow page tracked from the first round and no sampler; with the threshold under its size it
 * is sampled, the per-page state going with the full scan. */
static void test_region_mode_scans_small_processes_in_full(void **state)
{
	struct fx *f = *state;

	fx_regions_proc(f);
	f->cfg->sources.abit.full_scan_mib = 32;
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_sample_regions(f->a, 100), 0);
	assert_int_equal(abit_nr_tracked(f->a), 64 + 15 * 32);
	fx_access_band(f);
	for (int i = 0; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(f->nev, 64);
	f->cfg->sources.abit.full_scan_mib = 31;
	f->cfg->generation++;
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

/* The mode follows a reload: full scans every piece, regions samples, full again. */
static void test_mode_follows_the_configuration(void **state)
{
	struct fx *f = *state;

	fx_regions_proc(f);
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	f->cfg->sources.abit.mode = ABIT_MODE_FULL;
	f->cfg->generation++;
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_sample_regions(f->a, 100), 0);
	assert_int_equal(abit_nr_tracked(f->a), 64 + 15 * 32);
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->generation++;
	/* Taken up at the next step, round or not: the per-page state goes with the full scan. */
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

static void test_region_mode_hidden_pfns_make_the_source_unavailable(void **state)
{
	struct fx *f = *state;

	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.full_scan_mib = 0;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, 0, 0);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), -EPERM);
	assert_non_null(strstr(abit_unavailable_reason(f->a), "CAP_SYS_ADMIN"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_region_mode_finds_a_hot_band_within_the_bound),
	    FX(test_region_mode_watches_no_more_than_the_cap),
	    FX(test_region_mode_looks_at_cold_memory_through_samples_only),
	    FX(test_region_mode_sees_pages_that_become_slow_later),
	    FX(test_region_mode_watches_a_sampled_access_at_once),
	    FX(test_region_mode_scans_small_processes_in_full),
	    FX(test_mode_follows_the_configuration),
	    FX(test_region_mode_hidden_pfns_make_the_source_unavailable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
