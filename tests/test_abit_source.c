/* abit_source: the source's life cycle, thread and rounds: availability, first evidence, arrivals
 * on the slow tier, the round gauge and the CPU budget (abit_fixture.h). */
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

static void test_missing_page_idle_makes_the_source_unavailable(void **state)
{
	struct fx *f = *state;
	char path[256], *logbuf = NULL;
	size_t loglen = 0;
	FILE *logf = open_memstream(&logbuf, &loglen);
	struct abit_deps d = {
	    .procfs_root = f->procfs,
	    .sysfs_root = f->sysfs,
	    .sink = {.deliver = fx_sink, .ctx = f},
	    .stats = &f->stats,
	};
	struct abit *a = (struct abit *)&d; /* must stay untouched */

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	assert_int_equal(unlink(path), 0);
	log_set_stream(logf);
	assert_int_equal(abit_new(&d, &a), -ENOENT);
	assert_ptr_equal(a, (struct abit *)&d);
	fflush(logf);
	assert_non_null(strstr(logbuf, "abit source unavailable: no page_idle"));
	assert_non_null(strstr(logbuf, "page_idle/bitmap"));
	log_set_stream(NULL);
	fclose(logf);
	free(logbuf);
}

static void fx_slow_used(struct fx *f, unsigned used_kib)
{
	fx_node_used(f, 1, used_kib);
}

/* A fresh page (learned by the last look) found accessed by a look within a quarter of a scan
 * interval is first evidence: while the fast node has twice the reserve free, it counts one
 * access more (threshold 1 at the shipped 2, 254 at 255); with less room the configured
 * threshold holds. A later access, or one
 * seen after a longer gap, carries no lower threshold. */
static void test_first_evidence_counts_while_the_fast_node_has_room(void **state)
{
	struct fx *f = *state;

	f->cfg->promotion.threshold = 2;
	f->cfg->promotion.min_free_percent = 5;
	fx_node_used(f, 0, 65536 / 2); /* 50% free: room */
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 2, LRU);
	assert_int_equal(fx_step(f), 0);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[0].threshold, 1);
	/* Its next access is not first evidence, nor is the other page's first one now that the
	 * gap is a whole scan interval (fx_round). */
	fx_access(f, SLOW_PFN + 1);
	fx_access(f, SLOW_PFN + 2);
	assert_int_equal(fx_round(f), 2);
	assert_int_equal(f->ev[1].threshold, 0);
	assert_int_equal(f->ev[2].threshold, 0);

	/* An operator's higher threshold keeps its meaning: first evidence is one access more. */
	f->cfg->promotion.threshold = 255;
	fx_proc(f, 300, "strict", 1, VA, VA + PIECE);
	fx_map(f, 300, VA, SLOW_PFN + 200, LRU);
	assert_true(fx_round(f) >= 0);
	fx_access(f, SLOW_PFN + 200);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[f->nev - 1].pid, 300);
	assert_int_equal(f->ev[f->nev - 1].threshold, 254);
	f->cfg->promotion.threshold = 2;

	/* Node 0 short (6% free, under twice the 5% reserve): the threshold rises. */
	fx_node_used(f, 0, 65536 - 65536 * 6 / 100);
	fx_proc(f, 200, "late", 1, VA, VA + PIECE);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_round(f) >= 0);
	fx_access(f, SLOW_PFN + 130);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[f->nev - 1].pid, 200);
	assert_int_equal(f->ev[f->nev - 1].threshold, 0);
}

static void test_pages_arriving_on_the_slow_tier_wake_backed_off_pieces(void **state)
{
	struct fx *f = *state;

	fx_slow_used(f, 1024);
	fx_proc(f, 100, "app", 0, VA, VA + PIECE); /* nothing on the slow tier yet */
	fx_new_abit(f);
	for (int round = 0; round < 64; round++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), ABIT_MAX_INTERVAL);
	/* A page moves to the slow tier, but the node's use has not grown by 16 MiB: the piece
	 * waits for its turn. */
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_slow_used(f, 1024 + 8192);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	/* 16 MiB more than the lowest reading (an operator moved the process): scanned at once. */
	fx_slow_used(f, 1024 + 16384);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
}

static void test_thread_runs_rounds_and_stops_promptly(void **state)
{
	struct fx *f = *state;
	struct config_pub *pub;
	struct pghotd_config *cfg;
	struct timespec t0, t1;
	double ms;

	f->ops = idle_io_real_ops;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->topo = f->topo;
	cfg->sources.abit.scan_interval_ms = 3600000; /* the longest sleep there is */
	cfg->sources.abit.mode = ABIT_MODE_FULL;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	assert_int_equal(abit_start(f->a, pub), 0);
	for (int i = 0; i < 500 && fx_stat(f, SS_PAGES_SCANNED) == 0; i++)
		usleep(2000);
	assert_int_equal(fx_stat(f, SS_PAGES_SCANNED), 512);
	assert_int_equal(atomic_load(&f->stats.src_active[SRC_ABIT]), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	abit_stop(f->a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms < 500);
	assert_int_equal(atomic_load(&f->stats.src_active[SRC_ABIT]), 0);
	cfg->topo = NULL;
	config_pub_free(pub);
}

/* pghotd_source_scan_round_seconds in mode regions is the time of the whole round: its
 * sampling steps since the round before, and the round's own scan, not only the last call
 * (the clock here moves 1 ms at each read of the source). */
static void test_round_gauge_holds_the_steps_of_the_whole_round(void **state)
{
	struct fx *f = *state;
	unsigned calls;

	fx_regions_proc(f);
	f->io_tick_ns = 1000000;
	assert_true(fx_round(f) >= 0); /* step 0 is a round */
	calls = f->io_calls;
	for (int i = 1; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_true(f->io_calls > calls); /* the sampling steps read pages */
	assert_true(fx_round(f) >= 0);	  /* the next round */
	assert_int_equal(atomic_load(&f->stats.src_scan_round_us[SRC_ABIT]),
			 (uint64_t)(f->io_calls - calls) * 1000);
}

#define MS UINT64_C(1000000)

/* The thread's CPU budget: a burst of up to a window's share (500 ms at 50% of a 1000 ms
 * window) is followed by steps at their pace; past it, a sleep earns the debt back, so over
 * time the share stays at pct of one CPU; never less than a step. */
static void test_cpu_budget_allows_a_window_then_lengthens_the_sleep(void **state)
{
	struct abit_cpu_pace p = {0};
	uint64_t now = 1000 * MS, cpu = 0, wall0 = now;
	unsigned s;

	(void)state;
	assert_int_equal(abit_cpu_pace_ms(&p, now, 400 * MS, 50, 125, 1000), 125); /* 100 left */
	now += 125 * MS + 200 * MS; /* the sleep, then a call of 200 ms */
	assert_int_equal(abit_cpu_pace_ms(&p, now, 200 * MS, 50, 125, 1000), 125); /* 62.5 left */
	now += 125 * MS + 800 * MS;
	/* 62.5 + 462.5 earned, 500 kept at most, less 800: 300 ms short, earned back in 600 ms. */
	assert_int_equal(abit_cpu_pace_ms(&p, now, 800 * MS, 50, 125, 1000), 601);
	/* Cheap calls after the debt is paid: the step. */
	now += 601 * MS + 1 * MS;
	assert_int_equal(abit_cpu_pace_ms(&p, now, 1 * MS, 50, 125, 1000), 125);
	/* No budget (100%) or none set: the step. */
	assert_int_equal(abit_cpu_pace_ms(&p, now, 900 * MS, 100, 125, 1000), 125);
	/* A lower share: 400 ms at 10% of a 1000 ms window (100 ms banked at most). */
	p = (struct abit_cpu_pace){0};
	assert_int_equal(abit_cpu_pace_ms(&p, now, 400 * MS, 10, 125, 1000), 3001);
	/* Over many costly calls the share is pct, within the window's burst. */
	p = (struct abit_cpu_pace){0};
	now = wall0;
	for (int i = 0; i < 200; i++) {
		now += 300 * MS; /* a call of 300 ms of CPU */
		cpu += 300 * MS;
		s = abit_cpu_pace_ms(&p, now, 300 * MS, 50, 125, 1000);
		now += s * MS;
	}
	assert_true(cpu <= (now - wall0) / 2 + 500 * MS);
	assert_true(cpu >= (now - wall0) / 2 - 50 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_round_gauge_holds_the_steps_of_the_whole_round),
	    FX(test_cpu_budget_allows_a_window_then_lengthens_the_sleep),
	    FX(test_missing_page_idle_makes_the_source_unavailable),
	    FX(test_first_evidence_counts_while_the_fast_node_has_room),
	    FX(test_pages_arriving_on_the_slow_tier_wake_backed_off_pieces),
	    FX(test_thread_runs_rounds_and_stops_promptly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
