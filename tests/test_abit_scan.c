/* abit_scan: what a scan of a piece reports, learns and marks, and the pace it sets
 * (abit_fixture.h). */
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

static void test_round_reports_accessed_slow_pages_and_nothing_else(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 76, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 77, LRU);
	fx_map(f, 100, VA + 0x2000, 100, LRU);	       /* fast node */
	fx_map(f, 100, VA + 0x3000, SLOW_PFN + 78, 0); /* off the LRU */
	fx_new_abit(f);

	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	assert_int_equal(abit_nr_tracked(f->a), 2);
	assert_true(fx_idle_bit(f, SLOW_PFN + 76));
	assert_true(fx_idle_bit(f, SLOW_PFN + 77));
	assert_false(fx_idle_bit(f, 100));
	assert_false(fx_idle_bit(f, SLOW_PFN + 78));

	fx_access(f, SLOW_PFN + 76);
	fx_access(f, 100);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].pid, 100);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, (uint64_t)(SLOW_PFN + 76) << 12);
	assert_int_equal(f->ev[0].size, HOT_SIZE_BASE);
	assert_int_equal(f->ev[0].cpu, 1);
	assert_int_equal(f->ev[0].node, 0);
	assert_int_equal(f->ev[0].source, SRC_ABIT);
	assert_int_equal(f->ev[0].time_ns, f->clock_ns);
	/* Re-marked for the next round. */
	assert_true(fx_idle_bit(f, SLOW_PFN + 76));
	assert_int_equal(fx_stat(f, SS_SAMPLES), 1);
	assert_int_equal(fx_stat(f, SS_PAGES_SCANNED), 2 * 512);

	/* Not accessed again: nothing. */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 1);
}

static void test_page_joining_the_lru_later_is_tracked_then(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 5, 0);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	fx_map(f, 100, VA, SLOW_PFN + 5, LRU);
	assert_int_equal(fx_interval(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	fx_access(f, SLOW_PFN + 5);
	assert_int_equal(fx_interval(f), 1);
}

static void test_thp_is_tracked_once_by_its_head(void **state)
{
	struct fx *f = *state;
	uint64_t head = SLOW_PFN + 512;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, head + i, i ? THP_TAIL : THP_HEAD);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, head));
	for (uint64_t i = 1; i < 512; i++)
		assert_false(fx_idle_bit(f, head + i)); /* tails read "not idle" */

	assert_int_equal(fx_round(f), 0); /* head not accessed; tails never reported */
	assert_int_equal(f->nev, 0);
	fx_access(f, head);
	assert_int_equal(fx_interval(f), 1);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, head << 12);
	assert_int_equal(f->ev[0].size, HOT_SIZE_HUGE); /* the promoter needs no lookup */
}

static void test_page_moved_between_mark_and_read_is_not_reported(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 10, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 11, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);

	/* Both pages migrate; their old frames now belong to someone who touched them. */
	fx_access(f, SLOW_PFN + 10);
	fx_access(f, SLOW_PFN + 11);
	fx_map(f, 100, VA, SLOW_PFN + 300, LRU); /* still slow, new frame */
	fx_map(f, 100, VA + 0x1000, 200, LRU);	 /* promoted to the fast node */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, SLOW_PFN + 300));

	/* The new frame is followed from now on. */
	fx_access(f, SLOW_PFN + 300);
	assert_int_equal(fx_interval(f), 1);
	assert_int_equal(f->ev[0].paddr, (uint64_t)(SLOW_PFN + 300) << 12);
}

static void test_without_a_block_map_page_nodes_come_from_the_kernel(void **state)
{
	struct fx *f = *state;

	f->topo->nr_blocks = 0; /* a kernel without CONFIG_MEMORY_HOTPLUG */
	f->ops.page_nodes = fx_page_nodes;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, 7, LRU);	     /* node 1 says the kernel, whatever the PFN */
	fx_map(f, 100, VA + 0x1000, 8, LRU); /* node 0 */
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, 7));
	fx_access(f, 7);
	fx_access(f, 8);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, UINT64_C(7) << 12);
}

static void test_unmapped_page_is_not_reported(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 10, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_unmap(f, 100, VA);
	fx_access(f, SLOW_PFN + 10);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

static void test_hidden_pfns_make_the_source_unavailable(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, 0, 0); /* present, PFN 0: what an unprivileged reader sees */
	fx_new_abit(f);
	assert_null(abit_unavailable_reason(f->a));
	assert_int_equal(fx_round(f), -EPERM);
	assert_non_null(abit_unavailable_reason(f->a));
	assert_non_null(strstr(abit_unavailable_reason(f->a), "CAP_SYS_ADMIN"));
	assert_int_equal(fx_round(f), -EPERM);
}

static void test_round_with_word_sized_transfers_finds_the_same_accesses(void **state)
{
	struct fx *f = *state;

	f->max_io = 8; /* one word, one pagemap entry per call */
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 100; i++)
		fx_map(f, 100, VA + i * 4096, SLOW_PFN + i, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 100);
	fx_access(f, SLOW_PFN + 3);
	fx_access(f, SLOW_PFN + 70);
	assert_int_equal(fx_round(f), 2);
	assert_int_equal(f->ev[0].vaddr, VA + 3 * 4096);
	assert_int_equal(f->ev[1].vaddr, VA + 70 * 4096);
	assert_true(f->io_calls > 512); /* the pagemap alone took 512 calls a round */
}

static void test_pages_looked_at_stay_within_max_pages_per_sec(void **state)
{
	struct fx *f = *state;
	uint64_t prev = 0;

	/* Eight pieces with one slow page each; 1024 pages a second pays two pieces. */
	f->cfg->sources.abit.max_pages_per_sec = 1024;
	f->cfg->sources.abit.scan_interval_ms = 1000;
	fx_proc(f, 100, "app", 0, VA, VA + 8 * PIECE);
	for (uint64_t i = 0; i < 8; i++)
		fx_map(f, 100, VA + i * PIECE, SLOW_PFN + 64 * i, LRU);
	fx_new_abit(f);
	for (int round = 1; round <= 4; round++) {
		assert_int_equal(fx_round(f), 0);
		assert_int_equal(fx_stat(f, SS_PAGES_SCANNED) - prev, 1024);
		prev = fx_stat(f, SS_PAGES_SCANNED);
		/* The cursor moves on: every piece is reached within four rounds. */
		assert_int_equal(abit_nr_tracked(f->a), 2 * (size_t)round);
	}
	for (int round = 0; round < 16; round++) {
		for (uint64_t i = 0; i < 8; i++)
			fx_access(f, SLOW_PFN + 64 * i); /* all hot: every piece wants a scan */
		assert_true(fx_round(f) >= 0);
	}
	/* 20 seconds at 1024/s, plus one burst. */
	assert_true(fx_stat(f, SS_PAGES_SCANNED) <= 20 * 1024 + 1024);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) >= 19 * 1024);
	assert_true(fx_stat(f, SS_SAMPLES) > 0);
}

static void test_piece_intervals_follow_the_accesses(void **state)
{
	struct fx *f = *state;
	unsigned cold_events = 0;

	fx_proc(f, 100, "app", 0, VA, VA + 2 * PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);		 /* hot */
	fx_map(f, 100, VA + PIECE, SLOW_PFN + 200, LRU); /* cold */
	fx_new_abit(f);
	for (int round = 0; round < 64; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + PIECE), ABIT_MAX_INTERVAL);
	/* 64 rounds of the hot piece, far fewer of the cold one: 2,2,4,4,8,8,16,16 apart. */
	assert_true(fx_stat(f, SS_PAGES_SCANNED) < (64 + 12) * 512);

	/* The cold piece heats up: found at its next scan, then scanned every round. */
	fx_access(f, SLOW_PFN + 200);
	for (int round = 0; round < ABIT_MAX_INTERVAL; round++) {
		size_t before = f->nev;

		fx_access(f, SLOW_PFN + 200);
		assert_true(fx_round(f) >= 0);
		for (size_t i = before; i < f->nev; i++)
			cold_events += f->ev[i].vaddr == VA + PIECE;
	}
	assert_true(cold_events >= 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 7 * PIECE), -ENOENT);
}

static void test_piece_with_accesses_is_scanned_twice_per_interval(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0); /* learned */
	/* Accessed all the time: seen at every round, ABIT_HOT_SPEEDUP times per interval. */
	for (int round = 0; round < 3 * ABIT_HOT_SPEEDUP; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_round(f), 1);
		assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	}
	/* One quiet scan keeps the pace; ABIT_BACKOFF_SCANS of them: once per scan interval. */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), ABIT_HOT_SPEEDUP);
}

/* Mode full: a process that starts between rounds is found by the next step and its pages
 * learned there; the next two steps look again, so a page used all the time is seen twice
 * within three steps (under half a round), and its first sighting (accesses where the last
 * look found none) asks for two more; after that the rounds take over. */
static void test_new_process_is_looked_at_by_the_next_steps(void **state)
{
	struct fx *f = *state;

	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	assert_int_equal(fx_step(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	for (int step = 0; step < 3; step++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_step(f), 1);
	}
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 0); /* no quick look left: the round sees it */
	assert_int_equal(fx_round(f), 1);
}

/* Mode full: a piece accessed at every round gets no look between them, but one whose scan
 * found accesses after quiet scans (a hot set moving in) is looked at again by the next
 * steps. */
static void test_piece_waking_from_idleness_gets_quick_looks(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	for (int step = 0; step < 3; step++)
		assert_int_equal(fx_step(f), 0); /* the learned page, not used */
	for (int round = 0; round < 4; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_round(f), 1);
		fx_access(f, SLOW_PFN + 1);
		/* First used at round 0: two looks between rounds follow (here the steps after
		 * rounds 0 and 1); used at every round since: none. */
		assert_int_equal(fx_step(f), round < 2 ? 1 : 0);
	}
	assert_int_equal(fx_round(f), 1); /* the access the last step did not look at */
	/* Quiet for a while, then used again: the steps after that scan look again. */
	for (int round = 0; round < 8; round++)
		assert_int_equal(fx_round(f), 0);
	assert_true(abit_piece_interval(f->a, 100, VA) > 1);
	fx_access(f, SLOW_PFN + 1);
	for (int round = 0; round < ABIT_MAX_INTERVAL && fx_round(f) == 0; round++)
		fx_access(f, SLOW_PFN + 1);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 1);
}

static void test_piece_populated_late_is_scanned_every_round_again(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_new_abit(f);
	/* Empty for a while: nothing to watch, so its scans back off. */
	for (int round = 0; round < 12; round++)
		assert_true(fx_round(f) >= 0);
	assert_true(abit_piece_interval(f->a, 100, VA) > 1);
	/* The workload populates it: once its pages are learned it is scanned every round, so
	 * the first access after that is found at the very next round. */
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	for (int round = 0; round < ABIT_MAX_INTERVAL && abit_nr_tracked(f->a) == 0; round++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_round(f), 1);
}

/* A page the fetch read idle keeps its mark, so only the pages found accessed (and those just
 * learned) are marked again; an access to a page not marked since its first scan is still
 * found. */
static void test_only_pages_found_accessed_are_marked_again(void **state)
{
	struct fx *f = *state;
	uint64_t before;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (unsigned i = 0; i < 64; i++)
		fx_map(f, 100, VA + i * 0x1000, SLOW_PFN + 100 + i, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->bits_marked, 64);
	fx_access(f, SLOW_PFN + 101);
	before = f->bits_marked;
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->bits_marked - before, 1);
	assert_true(fx_idle_bit(f, SLOW_PFN + 101));
	before = f->bits_marked;
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->bits_marked - before, 0);
	/* Marked at the first round only, never since: its access is found. */
	fx_access(f, SLOW_PFN + 150);
	fx_access(f, SLOW_PFN + 101);
	assert_int_equal(fx_round(f), 2);
	assert_int_equal(abit_nr_tracked(f->a), 64);
}

/* Touches one page in each of pieces [first, first + n) of pid 100. */
static void access_pieces(struct fx *f, unsigned first, unsigned n)
{
	for (unsigned k = first; k < first + n; k++)
		fx_access(f, SLOW_PFN + k * 64);
}

/* A round and the steps up to the next, as the source's thread runs them: the accesses the
 * round found (the steps are asserted to find none). */
static int round_and_steps(struct fx *f)
{
	int r = fx_round(f);

	for (int step = 1; step < ABIT_SAMPLES_PER_ROUND; step++)
		assert_int_equal(fx_step(f), 0);
	return r;
}

/* Pieces 0..3 used all the time and piece 7 never, so 7 backs off; then nothing is used for
 * three rounds: the process is quiet, and 0..3, at every other round now, are due at the next.
 * Piece 7 is used then too. */
static void quiet_process(struct fx *f)
{
	fx_proc(f, 100, "app", 0, VA, VA + 8 * PIECE);
	for (unsigned k = 0; k < 8; k++)
		fx_map(f, 100, VA + k * PIECE, SLOW_PFN + k * 64, LRU);
	fx_new_abit(f);
	assert_int_equal(round_and_steps(f), 0);
	for (int round = 0; round < 20; round++) {
		access_pieces(f, 0, ABIT_WAKE_SCANS);
		assert_int_equal(round_and_steps(f), ABIT_WAKE_SCANS);
	}
	for (int round = 0; round < 3; round++)
		assert_int_equal(round_and_steps(f), 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), ABIT_HOT_SPEEDUP);
	assert_true(abit_piece_interval(f->a, 100, VA + 7 * PIECE) > 4);
	fx_access(f, SLOW_PFN + 7 * 64);
}

/* The quiet process wakes, ABIT_WAKE_SCANS pieces used: piece 7, due only rounds from now, is
 * looked at by the next step and its access found there. */
static void test_quiet_process_that_wakes_has_every_piece_looked_at(void **state)
{
	struct fx *f = *state;

	unsigned step =
	    f->cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND;

	quiet_process(f);
	(void)abit_step_pause_ms(f->a, f->cfg); /* the pause after quiet_process()'s calls */
	assert_int_equal(abit_step_pause_ms(f->a, f->cfg), step);
	access_pieces(f, 0, ABIT_WAKE_SCANS);
	assert_int_equal(fx_round(f), ABIT_WAKE_SCANS); /* piece 7 is not due */
	/* The wake hurries the step that looks: once. */
	assert_int_equal(abit_step_pause_ms(f->a, f->cfg), step / ABIT_HURRY_DIV);
	assert_int_equal(abit_step_pause_ms(f->a, f->cfg), step);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[f->nev - 1].vaddr, VA + 7 * PIECE);
}

/* A young process that placed its data and went quiet: at each step ABIT_WAKE_SCANS of its
 * pieces get a look in turn, so the use that follows wakes it at the first step after it
 * starts, and the next step looks at every other piece; a process past its first rounds waits
 * for the round. */
static void test_young_quiet_process_wakes_at_a_step(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + 8 * PIECE);
	for (unsigned k = 0; k < 8; k++)
		fx_map(f, 100, VA + k * PIECE, SLOW_PFN + k * 64, LRU);
	fx_new_abit(f);
	assert_int_equal(round_and_steps(f), 0); /* learned */
	assert_int_equal(round_and_steps(f), 0); /* quiet: the sentinel looks find nothing */
	access_pieces(f, 0, 8);
	assert_int_equal(fx_step(f), ABIT_WAKE_SCANS);
	assert_int_equal(fx_step(f), 8 - ABIT_WAKE_SCANS);
	assert_int_equal(f->nev, 8);
}

static void test_old_quiet_process_waits_for_the_round(void **state)
{
	struct fx *f = *state;

	quiet_process(f);
	access_pieces(f, 0, 8);
	for (int step = 1; step < ABIT_SAMPLES_PER_ROUND; step++)
		assert_int_equal(fx_step(f), 0);
}

/* One piece used is a stray access: piece 7 keeps its pace. */
static void test_one_access_does_not_wake_a_quiet_process(void **state)
{
	struct fx *f = *state;

	quiet_process(f);
	access_pieces(f, 0, 1);
	assert_int_equal(fx_round(f), 1);
	for (int step = 1; step < ABIT_SAMPLES_PER_ROUND; step++)
		assert_int_equal(fx_step(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_round_reports_accessed_slow_pages_and_nothing_else),
	    FX(test_page_joining_the_lru_later_is_tracked_then),
	    FX(test_thp_is_tracked_once_by_its_head),
	    FX(test_page_moved_between_mark_and_read_is_not_reported),
	    FX(test_without_a_block_map_page_nodes_come_from_the_kernel),
	    FX(test_unmapped_page_is_not_reported),
	    FX(test_hidden_pfns_make_the_source_unavailable),
	    FX(test_round_with_word_sized_transfers_finds_the_same_accesses),
	    FX(test_pages_looked_at_stay_within_max_pages_per_sec),
	    FX(test_piece_intervals_follow_the_accesses),
	    FX(test_piece_with_accesses_is_scanned_twice_per_interval),
	    FX(test_new_process_is_looked_at_by_the_next_steps),
	    FX(test_piece_waking_from_idleness_gets_quick_looks),
	    FX(test_piece_populated_late_is_scanned_every_round_again),
	    FX(test_only_pages_found_accessed_are_marked_again),
	    FX(test_quiet_process_that_wakes_has_every_piece_looked_at),
	    FX(test_one_access_does_not_wake_a_quiet_process),
	    FX(test_young_quiet_process_wakes_at_a_step),
	    FX(test_old_quiet_process_waits_for_the_round),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
