/* abit_cold: idle pages of watched fast nodes offered to the cold list, the cold window of mode
 * "regions", and the promoter demoting what the scan found cold (abit_fixture.h). */
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

#define COLD_MS 5000 /* demotion.min_idle_ms in these tests: five rounds */
/* The age from which an idle fast page is offered: config_demotion_exchange_ms(), the fixture's
 * promotion.window_ms (3000) here. */
#define OFFER_MS 3000

/* The source with a cold list, one slow page and fast pages at VA + 0x1000.. (PFNs 100..). */
static void fx_cold_setup(struct fx *f, int nfast)
{
	assert_int_equal(cold_list_new(64, &f->cold), 0);
	assert_int_equal(procs_new(f->procfs, 16, &f->registry), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 76, LRU);
	for (int i = 0; i < nfast; i++)
		fx_map(f, 100, VA + 0x1000 * (uint64_t)(i + 1), 100 + (uint64_t)i, LRU);
	fx_new_abit(f);
	assert_int_equal(config_demotion_exchange_ms(f->cfg), OFFER_MS);
}

static size_t fx_take_cold(struct fx *f, struct cold_page *out, size_t max)
{
	return cold_list_take(f->cold, 0, f->clock_ns / 1000000, UINT32_MAX, 0, out, max);
}

static void test_fast_pages_are_not_tracked_while_no_node_is_watched(void **state)
{
	struct fx *f = *state;

	fx_cold_setup(f, 3);
	for (int r = 0; r < 10; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_false(fx_idle_bit(f, 100));
	assert_int_equal(cold_list_len(f->cold), 0);
}

static void test_idle_fast_page_of_a_watched_node_is_offered_once_with_its_age(void **state)
{
	struct fx *f = *state;
	struct cold_page c[8];
	uint64_t tracked_ms;
	pid_t pid;

	fx_cold_setup(f, 2);
	cold_list_want(f->cold, UINT64_C(1) << 0);
	assert_int_equal(fx_round(f), 0);
	tracked_ms = f->clock_ns / 1000000;
	assert_int_equal(abit_nr_tracked(f->a), 3);
	assert_true(fx_idle_bit(f, 100));
	/* The second fast page is used every round; the first never. */
	for (int r = 0; r < 12; r++) {
		fx_access(f, 101);
		fx_access(f, SLOW_PFN + 76);
		assert_true(fx_round(f) >= 0);
	}
	/* Slow accesses still reach the sink; fast ones never do. */
	assert_true(f->nev >= 1);
	for (size_t i = 0; i < f->nev; i++)
		assert_int_equal(f->ev[i].vaddr, VA);
	assert_int_equal(fx_take_cold(f, c, 8), 1);
	assert_int_equal(c[0].pid, 100);
	/* With the procs registry, the offer names its process as the promoter checks it. */
	assert_true(c[0].proc > 0);
	assert_int_equal(procs_pid(f->registry, c[0].proc, &pid), 0);
	assert_int_equal(pid, 100);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
	assert_int_equal(c[0].node, 0);
	assert_int_equal(c[0].size, HOT_SIZE_BASE);
	assert_true(c[0].idle_since_ms <= tracked_ms + 1 && c[0].idle_since_ms + 1 >= tracked_ms);
	assert_true(c[0].offered_ms - c[0].idle_since_ms >= OFFER_MS);
	/* Offered once: still idle, but not again. */
	for (int r = 0; r < 12; r++) {
		fx_access(f, 101);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(cold_list_len(f->cold), 0);
}

/* A page another process maps too (no PAGEMAP_EXCLUSIVE) is never offered: move_pages(2)
 * refuses to move it (-EACCES). Its idle neighbour mapped once is offered. */
static void test_idle_shared_fast_page_is_not_offered(void **state)
{
	struct fx *f = *state;
	struct cold_page c[8];
	char path[256];

	fx_cold_setup(f, 2);
	fx_path(f, path, sizeof(path), "proc/100/pagemap");
	pwrite_u64(path, (VA + 0x2000) / 4096 * 8, 101 | PAGEMAP_PRESENT); /* shared */
	cold_list_want(f->cold, UINT64_C(1) << 0);
	for (int r = 0; r < 13; r++) {
		fx_access(f, SLOW_PFN + 76);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(fx_take_cold(f, c, 8), 1);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
}

static void test_access_restarts_the_idle_time_and_a_new_epoch_offers_again(void **state)
{
	struct fx *f = *state;
	struct cold_page c[4];
	int rounds = 0;

	fx_cold_setup(f, 1);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 3; r++)
		assert_true(fx_round(f) >= 0);
	fx_access(f, 100); /* used at 3 s: its idle time starts again */
	while (cold_list_len(f->cold) == 0 && rounds < 40) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	/* Found no sooner than OFFER_MS after the access was seen. */
	assert_true(c[0].offered_ms - c[0].idle_since_ms >= OFFER_MS);
	assert_true(rounds >= OFFER_MS / 1000);
	/* Taken and not moved (say the bucket was empty): offered again after a re-offer. */
	for (int r = 0; r < 5; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(cold_list_len(f->cold), 0);
	cold_list_reoffer(f->cold);
	for (int r = 0; r < 40 && cold_list_len(f->cold) == 0; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
}

/* A longer promotion.window_ms makes the offer wait longer: a page idle for less than the
 * window could still be counted hot, so it is not traded for one. */
static void test_longer_promotion_window_holds_the_offer_back(void **state)
{
	struct fx *f = *state;
	int rounds = 0;

	fx_cold_setup(f, 1);
	f->cfg->promotion.window_ms = OFFER_MS + 1000; /* still under demotion.min_idle_ms */
	cold_list_want(f->cold, 1);
	assert_int_equal(fx_round(f), 0); /* first seen where it is: its idle time starts */
	while (cold_list_len(f->cold) == 0 && rounds < 60) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	assert_int_equal(cold_list_len(f->cold), 1);
	assert_true(rounds >= (OFFER_MS + 1000) / 1000);
}

static void test_fast_pages_appearing_do_not_quicken_the_scans_of_their_piece(void **state)
{
	struct fx *f = *state;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 100, LRU);
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	/* A new fast page every round (the process allocating on its fast node): the piece
	 * still backs off as one without slow pages does. */
	for (int r = 1; r <= 40; r++) {
		fx_map(f, 100, VA + 0x1000 * (uint64_t)r, 100 + (uint64_t)r, LRU);
		assert_true(fx_round(f) >= 0);
	}
	assert_true(abit_nr_tracked(f->a) > 1);
	assert_true(abit_piece_interval(f->a, 100, VA) > ABIT_HOT_SPEEDUP);
}

static void test_piece_of_watched_fast_pages_is_seen_every_quarter_idle_time(void **state)
{
	struct fx *f = *state;
	/* Idle time 16 scan intervals: a quarter is 4 intervals, 8 rounds of half an interval
	 * (without the cap the piece would back off to ABIT_MAX_INTERVAL rounds). */
	const uint16_t cap = 8;
	size_t offered = 0;
	struct cold_page c;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	f->cfg->demotion.min_idle_ms = 16 * f->cfg->sources.abit.scan_interval_ms;
	f->cfg->promotion.cooldown_ms = f->cfg->demotion.min_idle_ms;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 100, LRU); /* one fast page, never used: nothing slow to speed up for */
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 8 * ABIT_MAX_INTERVAL; r++) {
		assert_true(fx_round(f) >= 0);
		assert_true(abit_piece_interval(f->a, 100, VA) <= cap);
		/* Each offer taken and not moved, and re-offered: it comes at each scan. */
		offered += cold_list_take(f->cold, 0, f->clock_ns / 1000000, UINT32_MAX, 0, &c, 1);
		cold_list_reoffer(f->cold);
	}
	assert_int_equal(abit_piece_interval(f->a, 100, VA), cap);
	/* Cold after 32 rounds, then offered at every scan: one in cap rounds. */
	assert_true(offered >= (8 * ABIT_MAX_INTERVAL - 32) / cap - 1);
}

/* A piece that backed off before its node was watched (its fast pages then untracked) keeps
 * that pace: a scan that finds a watched fast page idle but too young to offer has the piece
 * scanned again once the page is old enough, not a back-off later. */
static void test_idle_fast_page_is_offered_soon_after_the_exchange_age(void **state)
{
	struct fx *f = *state;
	struct cold_page c;
	int r;

	fx_cold_setup(f, 1);
	f->cfg->demotion.min_idle_ms = 64 * f->cfg->sources.abit.scan_interval_ms;
	f->cfg->promotion.cooldown_ms = f->cfg->demotion.min_idle_ms;
	f->cfg->promotion.window_ms = 6 * f->cfg->sources.abit.scan_interval_ms;
	for (r = 0; r < 64 && abit_piece_interval(f->a, 100, VA) < 4; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 4);
	cold_list_want(f->cold, 1);
	for (r = 0; r < 64 && cold_list_len(f->cold) == 0; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(fx_take_cold(f, &c, 1), 1);
	/* Tracked at the first scan, seen idle 4 s later (too young), then offered at 9 s: the
	 * schedule counts the source's rounds of half a scan interval, and fx_round() is a whole
	 * one. The back-off alone would have waited for the scan 8 rounds later (12 s). */
	assert_true(c.offered_ms - c.idle_since_ms <= 9000);
}

/* The slow tier grows (a new process placing its data there): backed-off pieces are looked
 * at by the next step, but not a piece of watched fast pages only, which keeps the cold side's
 * pace (an idle buffer filling DRAM would be read in full each time). */
static void test_arrivals_leave_a_piece_of_watched_fast_pages_at_its_pace(void **state)
{
	struct fx *f = *state;
	uint64_t before;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	f->cfg->demotion.min_idle_ms = 16 * f->cfg->sources.abit.scan_interval_ms;
	f->cfg->promotion.cooldown_ms = f->cfg->demotion.min_idle_ms;
	fx_node_used(f, 1, 1024); /* the slow node */
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 100, LRU);
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 4 * ABIT_MAX_INTERVAL; r++)
		assert_true(fx_round(f) >= 0);
	assert_true(abit_piece_interval(f->a, 100, VA) > ABIT_HOT_SPEEDUP);
	do { /* up to the round that scans it: its next scan is rounds away */
		before = fx_stat(f, SS_PAGES_SCANNED);
		assert_true(fx_round(f) >= 0);
	} while (fx_stat(f, SS_PAGES_SCANNED) == before);
	before = fx_stat(f, SS_PAGES_SCANNED);
	fx_node_used(f, 1, 1024 + 16384);
	assert_true(fx_step(f) >= 0);
	assert_int_equal(fx_stat(f, SS_PAGES_SCANNED), before);
}

static void test_thp_head_on_a_fast_node_is_offered_as_huge(void **state)
{
	struct fx *f = *state;
	struct cold_page c[4];

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 512, THP_HEAD);
	for (uint64_t i = 1; i < 512; i++)
		fx_map(f, 100, VA + i * 0x1000, 512 + i, THP_TAIL);
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 40 && cold_list_len(f->cold) == 0; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	assert_int_equal(c[0].vaddr, VA);
	assert_int_equal(c[0].size, HOT_SIZE_HUGE);
}

static void test_fast_pages_stop_being_tracked_when_the_node_is_no_longer_watched(void **state)
{
	struct fx *f = *state;

	fx_cold_setup(f, 3);
	cold_list_want(f->cold, 1);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 4);
	cold_list_want(f->cold, 0);
	for (int r = 0; r < 40; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(cold_list_len(f->cold), 0);
	/* demotion.enabled = false overrides a mask left set. */
	cold_list_want(f->cold, 1);
	f->cfg->demotion.enabled = false;
	for (int r = 0; r < 40; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
}

/* The promoter's side of the chain, faked: every page asked about sits on node 0 until moved,
 * and node 0 has free_pct of its memory free. */
struct fake_mover {
	struct fx *f;
	unsigned free_pct;
	unsigned moved, moved_to_1;
	uint64_t moved_addr[16];
};

static long mover_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	struct fake_mover *m = ctx;

	(void)flags;
	assert_int_equal(pid, 100);
	for (unsigned long i = 0; i < count; i++) {
		bool moved = false;

		for (unsigned k = 0; k < m->moved && !moved; k++)
			moved = m->moved_addr[k] == (uintptr_t)pages[i];
		status[i] = nodes ? nodes[i] : moved ? 1 : 0;
		if (nodes && m->moved < 16) {
			m->moved_addr[m->moved++] = (uintptr_t)pages[i];
			m->moved_to_1 += nodes[i] == 1;
		}
	}
	return 0;
}

static uint64_t mover_now(void *ctx)
{
	return ((struct fake_mover *)ctx)->f->clock_ns / 1000000;
}

static int mover_refresh_free(void *ctx, struct topology *t)
{
	struct fake_mover *m = ctx;

	t->node[0].mem_free = t->node[0].mem_total / 100 * m->free_pct;
	return 0;
}

static int mover_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	(void)ctx;
	(void)pid;
	(void)addrs;
	for (size_t i = 0; i < n; i++)
		sizes[i] = 4096;
	return 0;
}

static void test_fast_pages_the_scan_finds_cold_are_demoted_by_the_promoter(void **state)
{
	struct fx *f = *state;
	struct fake_mover m = {.f = f, .free_pct = 50};
	struct promoter_ops ops = {.move_pages = mover_move_pages,
				   .now_ms = mover_now,
				   .refresh_free = mover_refresh_free,
				   .page_sizes = mover_page_sizes,
				   .ctx = &m};
	struct hot_table *hot;
	struct promoter *p;
	int rounds = 0;

	fx_cold_setup(f, 3);
	f->cfg->demotion.free_target_percent = 20;
	f->cfg->demotion.rate_limit_mbps = 0;
	assert_int_equal(hot_table_new(1024, 4096, &hot), 0);
	assert_int_equal(promoter_new(&(struct promoter_deps){.hot = hot,
							      .procs = f->registry,
							      .topo = f->topo,
							      .stats = &f->stats,
							      .ops = &ops,
							      .cold = f->cold},
				      &p),
			 0);
	/* Node 0 has room: not watched, fast pages untracked. */
	assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	/* Short of its target: watched at once, and its three idle pages go down once cold. */
	m.free_pct = 10;
	f->clock_ns += UINT64_C(2000000000);
	while (m.moved < 3 && rounds++ < 40) {
		assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(m.moved, 3);
	assert_int_equal(m.moved_to_1, 3);
	assert_int_equal(atomic_load(&f->stats.demoted_pages[DEMOTE_FREE_TARGET][0]), 3);
	assert_true(rounds >= COLD_MS / 1000);
	/* The slow page was never offered, and nothing moves twice: offered again after a new
	 * epoch, the pages are found on the slow node already and skipped. */
	for (unsigned k = 0; k < m.moved; k++)
		assert_true(m.moved_addr[k] != VA);
	for (int r = 0; r < 30; r++) {
		assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(m.moved, 3);
	assert_true(stats_get(&f->stats, ST_DEMOTE_SKIPPED) >= 3);
	promoter_free(p);
	hot_table_free(hot);
}

/* Demotion in mode regions: eight idle pages of node 0 in piece 3 and eight in piece 9 that
 * are used all the time, among the fixture's slow pages. Samples that land on them put their
 * pieces in the cold window (about one step in 64 per piece: 8 of its 512 pages), where
 * they are scanned page by page: the idle ones are offered, with their age, the used ones
 * never. Without the cold window no page is offered, as promotion watches no piece here.
 * The bound: a hint is missed for 640 steps with probability (63/64)^640 < e^-10. */
static void test_region_mode_offers_idle_fast_pages_through_the_cold_window(void **state)
{
	struct fx *f = *state;
	struct cold_page c[16];
	int steps = 0;
	size_t n;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	assert_int_equal(procs_new(f->procfs, 16, &f->registry), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_regions_proc(f);
	for (uint64_t i = 0; i < 8; i++) {
		fx_map(f, 100, VA + 3 * PIECE + (2 * i + 1) * 4096, 100 + i, LRU);
		fx_map(f, 100, VA + 9 * PIECE + (2 * i + 1) * 4096, 200 + i, LRU);
	}
	cold_list_want(f->cold, 1);
	while (cold_list_len(f->cold) < 8 && steps < 640 + 40 * ABIT_SAMPLES_PER_ROUND) {
		for (uint64_t i = 0; i < 8; i++)
			fx_access(f, 200 + i);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	printf("eight idle fast pages offered after %d steps\n", steps);
	n = fx_take_cold(f, c, 16);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].pid, 100);
		assert_int_equal(c[i].node, 0);
		assert_true(c[i].vaddr > VA + 3 * PIECE && c[i].vaddr < VA + 4 * PIECE);
		assert_true(c[i].offered_ms - c[i].idle_since_ms >= OFFER_MS);
	}
	/* The used pages are never offered; nothing slow is. */
	for (int i = 0; i < 20 * ABIT_SAMPLES_PER_ROUND; i++) {
		for (uint64_t k = 0; k < 8; k++)
			fx_access(f, 200 + k);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(cold_list_len(f->cold), 0);
	assert_int_equal(f->nev, 0);
	/* Demotion wants no more: the window lets its pieces go, with their per-page state. */
	cold_list_want(f->cold, 0);
	for (int i = 0; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_region_mode_offers_idle_fast_pages_through_the_cold_window),
	    FX(test_fast_pages_are_not_tracked_while_no_node_is_watched),
	    FX(test_idle_fast_page_of_a_watched_node_is_offered_once_with_its_age),
	    FX(test_idle_shared_fast_page_is_not_offered),
	    FX(test_access_restarts_the_idle_time_and_a_new_epoch_offers_again),
	    FX(test_longer_promotion_window_holds_the_offer_back),
	    FX(test_fast_pages_appearing_do_not_quicken_the_scans_of_their_piece),
	    FX(test_piece_of_watched_fast_pages_is_seen_every_quarter_idle_time),
	    FX(test_arrivals_leave_a_piece_of_watched_fast_pages_at_its_pace),
	    FX(test_idle_fast_page_is_offered_soon_after_the_exchange_age),
	    FX(test_thp_head_on_a_fast_node_is_offered_as_huge),
	    FX(test_fast_pages_the_scan_finds_cold_are_demoted_by_the_promoter),
	    FX(test_fast_pages_stop_being_tracked_when_the_node_is_no_longer_watched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
