/* mover tests: the batch path (placement, page sizes, the rate limit, move_pages and every
 * page settled by its status, processes gone or reused), on the fake ops of promoter_fake.h. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "promoter_fake.h"
#include "base/config_pub.h"
#include "base/log.h"

static void bytes_moved_over_a_minute_stay_within_rate_plus_one_burst(void **state)
{
	struct fx *x = *state;
	const uint64_t rate = 8 * MIB, burst = rate / 4; /* interval 250 ms */
	uint64_t addr = 0x100000000, thp = 0x200000000, limit;

	x->cfg->promotion.rate_limit_mbps = 8;
	x->cfg->promotion.interval_ms = 250;
	x->fake.huge_lo = thp;
	x->fake.huge_hi = thp + 1000 * THP;
	for (int i = 0; i < 240; i++) {
		/* Demand above the limit: 600 base pages and one THP per interval. */
		for (int k = 0; k < 600; k++, addr += BASE)
			hot(x, x->self, addr, 0);
		hot(x, x->self, thp, 0);
		thp += THP;
		assert_true(run(x) >= 0);
		x->fake.now += 250;
	}
	limit = rate * 60 + burst;
	assert_true(x->fake.bytes_moved <= limit);
	/* The limit is spent, not just respected: within one burst of the full budget. */
	assert_true(x->fake.bytes_moved >= rate * 60 - burst);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), x->fake.bytes_moved);
	assert_true(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED) > 0);
}

static void thp_is_charged_two_mib_and_deferred_pages_move_later(void **state)
{
	struct fx *x = *state;
	uint64_t base = 0x40000000;

	x->cfg->promotion.rate_limit_mbps = 4; /* interval 1 s: 4 MiB burst */
	x->cfg->promotion.interval_ms = 1000;
	x->fake.huge_lo = base;
	x->fake.huge_hi = base + 3 * THP;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hot(x, x->self, base + i * THP, 0), 1);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.bytes_moved, 2 * THP);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), 2 * THP);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 1);
	assert_int_equal(promoter_deferred(x->p), 1);

	x->fake.now += 1000;
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.bytes_moved, 3 * THP);
	assert_int_equal(promoter_deferred(x->p), 0);
}

static void sizes_the_source_saw_need_no_lookup(void **state)
{
	struct fx *x = *state;
	uint64_t base = 0x40000000;

	/* Two THPs and a base page the scanner sized, and a page it could not size. */
	x->fake.huge_lo = base;
	x->fake.huge_hi = base + 2 * THP;
	assert_int_equal(hot_sized(x, base, HOT_SIZE_HUGE), 1);
	assert_int_equal(hot_sized(x, base + THP, HOT_SIZE_HUGE), 1);
	assert_int_equal(hot_sized(x, base + 2 * THP, HOT_SIZE_BASE), 1);
	assert_int_equal(hot_sized(x, base + 2 * THP + BASE, HOT_SIZE_UNKNOWN), 1);
	assert_int_equal(run(x), 4);
	assert_int_equal(x->fake.size_lookups, 1);
	assert_int_equal(stats_promoted_bytes_total(&x->stats), 2 * THP + 2 * BASE);

	/* Only sized pages: no lookup at all. */
	x->fake.now += 10000;
	assert_int_equal(hot_sized(x, base + 8 * THP, HOT_SIZE_BASE), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.size_lookups, 1);
}

static void base_pages_under_the_same_limit_all_move_at_once(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.rate_limit_mbps = 4;
	x->cfg->promotion.interval_ms = 1000;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hot(x, x->self, 0x40000000 + i * THP, 0), 1);
	assert_int_equal(run(x), 3);
	assert_int_equal(x->fake.bytes_moved, 3 * BASE);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 0);
}

static void pages_that_fail_to_move_give_their_tokens_back(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.rate_limit_mbps = 1; /* interval 1 s: 256 base pages */
	x->cfg->promotion.interval_ms = 1000;
	x->cfg->promotion.batch = 8;
	fake_special(x, getpid(), 0x10000000, SLOW, 1, 0); /* -EBUSY once */
	for (int i = 0; i < 300; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 0);
	/* The busy page's 4 KiB goes back to the bucket and pays for one more page. */
	assert_int_equal(run(x), 256);
	assert_int_equal(x->fake.bytes_moved, 1 * MIB);
}

static void move_calls_carry_batch_sized_groups_of_one_process(void **state)
{
	struct fx *x = *state;
	size_t mine = 0, theirs = 0;

	spawn_child(x);
	x->cfg->promotion.batch = 8;
	for (int i = 0; i < 20; i++) {
		hot(x, x->self, 0x10000000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000000 + i * BASE, 0);
	}
	assert_int_equal(run(x), 40);
	assert_int_equal(x->fake.calls, 6);
	for (size_t c = 0; c < x->fake.calls; c++) {
		/* Each process: 8, 8, 4. */
		assert_int_equal(x->fake.call_size[c], c % 3 == 2 ? 4 : 8);
		if (x->fake.call_pid[c] == getpid())
			mine += x->fake.call_size[c];
		else if (x->fake.call_pid[c] == x->child)
			theirs += x->fake.call_size[c];
		if (c % 3 != 0)
			assert_int_equal(x->fake.call_pid[c], x->fake.call_pid[c - 1]);
	}
	assert_int_equal(mine, 20);
	assert_int_equal(theirs, 20);
}

static void batch_above_512_is_capped(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.batch = 100000;
	for (int i = 0; i < 600; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 0);
	assert_int_equal(run(x), 600);
	assert_int_equal(x->fake.calls, 2);
	assert_int_equal(x->fake.call_size[0], 512);
	assert_int_equal(x->fake.call_size[1], 88);
}

static void busy_page_is_retried_max_retries_times_then_dropped(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x5000;

	fake_special(x, getpid(), a, SLOW, 1000, 0);
	assert_int_equal(hot(x, x->self, a, 0), 1);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(run(x), 0);
		x->fake.now += 100;
	}
	/* The first try and max_retries (2) retries, then no more calls. */
	assert_int_equal(x->fake.calls, 3);
	assert_int_equal(fails(x, FAIL_BUSY), 3);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void busy_page_moves_on_a_later_interval(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x5000;

	fake_special(x, getpid(), a, SLOW, 1, 0);
	assert_int_equal(hot(x, x->self, a, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(promoter_deferred(x->p), 1);
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), a)->node, 1);
	assert_int_equal(fails(x, FAIL_BUSY), 1);
	assert_int_equal(promoted_to(x, 1), 1);
}

static void shared_page_is_counted_and_dropped(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, -EACCES);
	assert_int_equal(hot(x, x->self, 0x3000, 0), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_SHARED), 1);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 1);
}

static void vanished_pages_count_as_gone(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, -EFAULT);
	fake_special(x, getpid(), 0x4000, SLOW, 0, -ENOENT);
	hot(x, x->self, 0x3000, 0);
	hot(x, x->self, 0x4000, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_GONE), 2);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void unwritten_status_is_not_trusted(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x3000, SLOW, 0, UNWRITTEN_ME);
	hot(x, x->self, 0x3000, 0);
	hot(x, x->self, 0x4000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(fails(x, FAIL_OTHER), 1);
	assert_int_equal(promoted_to(x, 0), 1);
	/* Handed back to counting, not freed: another access queues it again. */
	assert_int_equal(hot(x, x->self, 0x3000, 0), 1);
}

static void esrch_on_the_query_forgets_the_process(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	for (int i = 0; i < 4; i++) {
		hot(x, x->self, 0x10000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	}
	x->fake.esrch_query = x->child;
	assert_int_equal(run(x), 4);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_true(procs_valid(x->procs, x->self));
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
	for (size_t c = 0; c < x->fake.calls; c++)
		assert_int_equal(x->fake.call_pid[c], getpid());
}

static void exiting_process_without_memory_is_forgotten_at_once(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	for (int i = 0; i < 4; i++)
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	x->fake.einval_query = x->child;
	assert_int_equal(run(x), 0);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_OTHER), 0); /* not a failure to retry every interval */
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void esrch_on_the_move_forgets_the_process_and_its_deferred_pages(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	x->cfg->promotion.batch = 2;
	fake_special(x, x->child, 0x10000, SLOW, 2, 0); /* -EBUSY twice: stays deferred */
	for (int i = 0; i < 4; i++)
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	assert_int_equal(run(x), 3); /* calls 0 and 1 */
	assert_int_equal(promoter_deferred(x->p), 1);

	/* Call 2: the deferred page (busy again) and one new page; call 3: ESRCH. */
	x->fake.esrch_move = x->child;
	x->fake.esrch_from_call = 3;
	x->fake.now += 100;
	hot(x, x->child_h, 0x20000, 0);
	hot(x, x->child_h, 0x21000, 0);
	hot(x, x->child_h, 0x22000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 4);
	assert_false(procs_valid(x->procs, x->child_h));
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot_table_used(x->hot), 0);
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
}

static void page_seen_on_a_slow_node_moves_without_a_placement_query(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, SLOW, 0, 0);
	hot_seen_slow(x, x->self, 0x1000, 1);
	hot_seen_slow(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.queries, 0);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 0);
}

static void page_seen_slow_from_an_unknown_node_is_still_queried(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, 0, 0, 0); /* already on a fast node */
	hot_seen_slow(x, x->self, 0x1000, -1);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.queries, 1);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
	assert_int_equal(x->fake.calls, 0);
}

static void only_pages_without_a_known_placement_are_queried(void **state)
{
	struct fx *x = *state;

	/* 0x2000 and 0x3000 were sampled without a physical address: asked about, and 0x2000
	 * turns out to be on a fast node already. 0x1000 was seen on a slow node: not asked. */
	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, 1, 0, 0);
	hot_seen_slow(x, x->self, 0x1000, 0);
	hot(x, x->self, 0x2000, 0);
	hot(x, x->self, 0x3000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(x->fake.queries, 1);
	assert_int_equal(x->fake.query_size[0], 2);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 0);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 1);
}

static void dry_run_decides_and_counts_but_moves_nothing(void **state)
{
	struct fx *x = *state;

	x->cfg->dry_run = true;
	for (int i = 0; i < 10; i++)
		hot(x, x->self, 0x10000 + i * BASE, 1);
	fake_special(x, getpid(), 0x90000, 0, 0, 0); /* on a fast node: skipped, not counted */
	hot(x, x->self, 0x90000, 1);
	assert_int_equal(run(x), 10);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(x->fake.pages_moved, 0);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_DRY_RUN), 10);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 0);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 1);
}

static void dry_run_respects_the_rate_limit(void **state)
{
	struct fx *x = *state;

	x->cfg->dry_run = true;
	x->cfg->promotion.rate_limit_mbps = 1;
	x->cfg->promotion.interval_ms = 1000; /* 1 MiB: 256 base pages */
	for (int i = 0; i < 300; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 1);
	assert_int_equal(run(x), 256);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_RATE_LIMITED), 44);
	assert_int_equal(x->fake.calls, 0);
}

/* A /proc/PID/stat line of pid at dir, with start time start (field 22). */
static void put_stat(const char *root, pid_t pid, uint64_t start)
{
	char path[4096], line[512];
	int n = snprintf(line, sizeof(line), "%d (app) S", (int)pid);
	FILE *f;

	for (int field = 4; field <= 52; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %llu",
			      field == 22 ? (unsigned long long)start : 0ull);
	snprintf(path, sizeof(path), "%s/%d", root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", root, (int)pid);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", line);
	fclose(f);
}

/* The pid of a hot page's process is checked just before its batch is moved, not only on the
 * stats timer: a pid that exited and was reused by another process between the page's
 * accesses and the move (its start time changed) has nothing moved, the batch is counted
 * once, and its handle goes stale, so nothing of the old process is moved later either. The
 * same process, still there, is moved as ever. */
static void batch_of_a_reused_pid_is_dropped_before_the_move(void **state)
{
	struct fx *x = *state;
	char root[] = "/tmp/pghotd-procs-XXXXXX", cmd[128];
	struct promoter_deps d = {
	    .hot = x->hot, .topo = x->topo, .stats = &x->stats, .ops = &x->ops};
	int64_t h, same;

	assert_non_null(mkdtemp(root));
	put_stat(root, 4242, 100);
	put_stat(root, 4343, 100);
	promoter_free(x->p);
	procs_free(x->procs);
	assert_int_equal(procs_new(root, 64, &x->procs), 0);
	d.procs = x->procs;
	assert_int_equal(promoter_new(&d, &x->p), 0);
	h = procs_handle(x->procs, 4242);
	same = procs_handle(x->procs, 4343);
	assert_true(h > 0 && same > 0);
	hot(x, (uint32_t)h, 0x1000, 0);
	hot(x, (uint32_t)h, 0x2000, 0);
	hot(x, (uint32_t)same, 0x1000, 0);
	put_stat(root, 4242, 200); /* 4242 exited; a new process has its pid */
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_pid[0], 4343);
	assert_int_equal(atomic_load(&x->stats.c[ST_BATCHES_PID_REUSED]), 1);
	assert_false(procs_valid(x->procs, (uint32_t)h));
	assert_true(procs_valid(x->procs, (uint32_t)same));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(bytes_moved_over_a_minute_stay_within_rate_plus_one_burst),
	    T(thp_is_charged_two_mib_and_deferred_pages_move_later),
	    T(sizes_the_source_saw_need_no_lookup),
	    T(base_pages_under_the_same_limit_all_move_at_once),
	    T(pages_that_fail_to_move_give_their_tokens_back),
	    T(move_calls_carry_batch_sized_groups_of_one_process),
	    T(batch_above_512_is_capped),
	    T(busy_page_is_retried_max_retries_times_then_dropped),
	    T(busy_page_moves_on_a_later_interval),
	    T(shared_page_is_counted_and_dropped),
	    T(vanished_pages_count_as_gone),
	    T(unwritten_status_is_not_trusted),
	    T(esrch_on_the_query_forgets_the_process),
	    T(exiting_process_without_memory_is_forgotten_at_once),
	    T(esrch_on_the_move_forgets_the_process_and_its_deferred_pages),
	    T(page_seen_on_a_slow_node_moves_without_a_placement_query),
	    T(page_seen_slow_from_an_unknown_node_is_still_queried),
	    T(only_pages_without_a_known_placement_are_queried),
	    T(dry_run_decides_and_counts_but_moves_nothing),
	    T(dry_run_respects_the_rate_limit),
	    T(batch_of_a_reused_pid_is_dropped_before_the_move),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
