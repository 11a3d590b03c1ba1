/* promoter tests: gathering from the hot table, the rounds of an interval, the thread and its
 * kick, on the fake ops of promoter_fake.h. */
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

static void pages_are_moved_from_their_process_cpu_and_the_thread_is_let_go_when_idle(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	x->cfg->promotion.batch = 2;
	for (int i = 0; i < 3; i++) {
		hot(x, x->self, 0x10000 + i * BASE, 0);
		hot(x, x->child_h, 0x10000 + i * BASE, 0);
	}
	assert_int_equal(run(x), 6);
	assert_int_equal(cgroup_sum(x, "pghotd_cgroup_promoted_pages_total"), 6);
	assert_int_equal(x->fake.nears, 2); /* once per process, not per batch */
	assert_true(x->fake.near_pid[0] != x->fake.near_pid[1]);
	for (size_t c = 0; c < x->fake.calls; c++)
		assert_true(x->fake.near_at_move[c]);
	/* It stays near the last process while there is work, and is let go when idle. */
	assert_int_equal(x->fake.anywheres, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.anywheres, 1);
	assert_int_equal(x->fake.near_now, 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.anywheres, 1); /* once */

	/* Off, or in a dry run (nothing moves): the thread stays where it is. */
	x->cfg->promotion.move_near_task = false;
	x->fake.now += 100000;
	hot(x, x->self, 0x90000, 0);
	assert_int_equal(run(x), 1);
	x->cfg->promotion.move_near_task = true;
	x->cfg->dry_run = true;
	hot(x, x->self, 0xa0000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.nears, 2);
}

static void a_round_of_only_gone_pages_does_not_end_the_interval(void **state)
{
	struct fx *x = *state;

	/* A whole round's worth of a vanished process, then one live page behind it. */
	spawn_child(x);
	for (uint64_t i = 0; i < PROMOTER_WORK_MAX; i++)
		assert_int_equal(hot(x, x->child_h, 0x100000 + i * BASE, 0), 1);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	procs_forget(x->procs, x->child_h);
	assert_int_equal(run(x), 1);
	assert_int_equal(fails(x, FAIL_NOPROC), PROMOTER_WORK_MAX);
	assert_int_equal(promoted_to(x, 0), 1);
}

static void gone_process_handle_is_dropped_before_any_syscall(void **state)
{
	struct fx *x = *state;

	spawn_child(x);
	hot(x, x->child_h, 0x1000, 0);
	procs_forget(x->procs, x->child_h);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.queries, 0);
	assert_int_equal(fails(x, FAIL_NOPROC), 1);
}

static void kick_wakes_the_thread_before_the_interval(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg;
	struct config_pub *pub;
	struct timespec t0, t1;

	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 60000;
	cfg->promotion.rate_limit_mbps = 0;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(x->p, pub), 0);
	wait_first_interval(x); /* what follows needs the kick */
	for (int i = 0; i < 5; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 1), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	promoter_kick(x->p);
	for (int i = 0; i < 2000 && stats_promoted_pages_total(&x->stats) < 5; i++)
		usleep(1000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 5);
	assert_true(t1.tv_sec - t0.tv_sec < 10);
	promoter_stop(x->p);
	config_pub_free(pub);
}

static void kick_if_full_waits_for_the_mark(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg;
	struct config_pub *pub;
	struct promoter *p2;
	struct promoter_deps d = {.hot = x->hot,
				  .procs = x->procs,
				  .topo = x->topo,
				  .stats = &x->stats,
				  .ops = &x->ops,
				  .kick_mark = 3};

	assert_int_equal(promoter_new(&d, &p2), 0);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 60000;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(p2, pub), 0);
	wait_first_interval(x); /* the first (empty) interval must not see the pages */
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 1);
	promoter_kick_if_full(p2);
	usleep(200000);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 0);
	hot(x, x->self, 0x3000, 1);
	promoter_kick_if_full(p2);
	for (int i = 0; i < 2000 && stats_promoted_pages_total(&x->stats) < 3; i++)
		usleep(1000);
	assert_int_equal(stats_promoted_pages_total(&x->stats), 3);
	promoter_stop(p2);
	promoter_free(p2);
	config_pub_free(pub);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(pages_are_moved_from_their_process_cpu_and_the_thread_is_let_go_when_idle),
	    T(gone_process_handle_is_dropped_before_any_syscall),
	    T(a_round_of_only_gone_pages_does_not_end_the_interval),
	    T(kick_wakes_the_thread_before_the_interval),
	    T(kick_if_full_waits_for_the_mark),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
