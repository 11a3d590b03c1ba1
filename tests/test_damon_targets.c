/* Tests for damon_targets: a region read with the target list it was counted with, its cut
 * marked on the process's target in force, and the cuts' pace carried from list to list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>

#include <cmocka.h>

#include "sources/damon/damon_targets.h"

#define M	  (UINT64_C(1) << 20)
#define KDAMOND	  4242
#define SWITCH_NS UINT64_C(5000000000)
#define NOW_MS	  UINT64_C(5000)

/* n targets of the pids given, no pagemap open. */
static struct damon_target *list_of(size_t n, const pid_t *pids)
{
	struct damon_target *t = calloc(n, sizeof(*t));

	assert_non_null(t);
	for (size_t i = 0; i < n; i++)
		t[i] = (struct damon_target){.p = {.pid = pids[i]}, .fd = -1};
	return t;
}

static struct damon_region region(uint32_t target, uint64_t start, uint64_t end)
{
	return (struct damon_region){
	    .kdamond = KDAMOND, .target = target, .start = start, .end = end, .nr_accesses = 1};
}

/* Processes 10, 20, 30 were the targets; 30 exited and 40 came, so the list in force is 20,
 * 10, 40 (any order: a commit may reorder when a process goes). */
static void two_lists(struct damon_targets *ts)
{
	const pid_t before[] = {10, 20, 30}, now[] = {20, 10, 40};

	*ts = (struct damon_targets){0};
	damon_targets_switch(ts, list_of(3, before), 3, UINT64_C(1000000000));
	damon_targets_switch(ts, list_of(3, now), 3, SWITCH_NS);
}

static void a_region_is_read_with_the_list_it_was_counted_with(void **state)
{
	struct damon_targets ts;
	struct damon_region r = region(1, 0, 64 * M);

	(void)state;
	two_lists(&ts);
	/* Target 1 was process 20 before the commit, is process 10 after it. */
	assert_int_equal(damon_targets_of(&ts, &r, SWITCH_NS - 1, KDAMOND)->p.pid, 20);
	assert_int_equal(damon_targets_of(&ts, &r, SWITCH_NS, KDAMOND)->p.pid, 10);
	/* Another kdamond's region, or a target past the list: none. */
	assert_null(damon_targets_of(&ts, &r, SWITCH_NS, KDAMOND + 1));
	r.target = 3;
	assert_null(damon_targets_of(&ts, &r, SWITCH_NS, KDAMOND));
	assert_null(damon_targets_of(&ts, &r, SWITCH_NS - 1, KDAMOND));
	damon_targets_clear(&ts);
	assert_null(ts.tg);
	assert_null(ts.old);
}

/* The first aggregation after a commit is counted with the old list: a cut it asks for must
 * reach the list the next commit cuts from (it was lost there until 2026-12-06). */
static void a_cut_asked_before_the_commit_is_marked_on_the_target_in_force(void **state)
{
	struct damon_targets ts;
	struct damon_region r = region(1, 0, 64 * M), gone = region(2, 0, 64 * M);
	struct damon_target *t, *z;

	(void)state;
	two_lists(&ts);
	t = damon_targets_of(&ts, &r, SWITCH_NS - 1, KDAMOND);
	z = damon_targets_now(&ts, t);
	assert_ptr_equal(z, &ts.tg[0]); /* process 20, now first in the list */
	assert_true(damon_target_zoom_add(z, &r, NOW_MS));
	assert_true(damon_targets_recut_pending(&ts));
	assert_int_equal(ts.old[1].nzoom, 0);
	/* A target of the list in force is its own; an exited process has none. */
	assert_ptr_equal(damon_targets_now(&ts, &ts.tg[2]), &ts.tg[2]);
	t = damon_targets_of(&ts, &gone, SWITCH_NS - 1, KDAMOND);
	assert_int_equal(t->p.pid, 30);
	assert_null(damon_targets_now(&ts, t));
	damon_targets_clear(&ts);
}

/* The whole ask: marked where the next commit looks, not within a process's gap, not for a
 * process gone; new only when the span is not remembered as cut. */
static void a_cut_is_new_work_only_for_a_span_not_remembered(void **state)
{
	struct damon_targets ts;
	struct damon_region r = region(1, 0, 64 * M), gone = region(2, 0, 64 * M);
	struct damon_target *t;

	(void)state;
	two_lists(&ts);
	t = damon_targets_of(&ts, &r, SWITCH_NS - 1, KDAMOND); /* process 20, old list */
	assert_true(damon_targets_mark_cut(&ts, t, &r, NOW_MS));
	assert_int_equal(ts.tg[0].nzoom, 1);
	t = damon_targets_of(&ts, &gone, SWITCH_NS - 1, KDAMOND); /* process 30, gone */
	assert_false(damon_targets_mark_cut(&ts, t, &gone, NOW_MS));
	/* Process 10 (in force: index 1) within its gap. */
	ts.tg[1].recut_after_ms = NOW_MS + 1;
	assert_false(damon_targets_mark_cut(&ts, &ts.tg[1], &r, NOW_MS));
	assert_int_equal(ts.tg[1].nzoom, 0);
	/* Process 40 (index 2): its span cut once, held no more but remembered: marked, not new. */
	damon_recent_add(&ts.tg[2].recent, r.start, r.end, NOW_MS - DAMON_RECUT_MIN_MS);
	assert_false(damon_targets_mark_cut(&ts, &ts.tg[2], &r, NOW_MS));
	assert_int_equal(ts.tg[2].nzoom, 1);
	damon_targets_clear(&ts);
}

static void a_span_is_marked_once_and_not_when_cut_lately(void **state)
{
	struct damon_target t = {.fd = -1};
	struct damon_region r = region(0, 0, 64 * M), in = region(0, 32 * M, 40 * M),
			    far = region(0, 128 * M, 192 * M);

	(void)state;
	assert_true(damon_target_zoom_add(&t, &r, NOW_MS));
	assert_false(damon_target_zoom_add(&t, &in, NOW_MS)); /* overlaps a marked span */
	damon_recent_add(&t.recent, far.start, far.end, NOW_MS - 1);
	assert_false(damon_target_zoom_add(&t, &far, NOW_MS));
	assert_true(damon_target_zoom_add(&t, &far, NOW_MS - 1 + DAMON_RECUT_MS));
	assert_int_equal(t.nzoom, 2);
	/* At most DAMON_ZOOM_MAX. */
	for (uint64_t i = t.nzoom; i < DAMON_ZOOM_MAX; i++) {
		struct damon_region x = region(0, (i + 4) * 64 * M, (i + 5) * 64 * M);

		assert_true(damon_target_zoom_add(&t, &x, NOW_MS));
	}
	far = region(0, 1024 * 64 * M, 1025 * 64 * M);
	assert_false(damon_target_zoom_add(&t, &far, NOW_MS));
	assert_int_equal(t.nzoom, DAMON_ZOOM_MAX);
}

static void the_next_list_takes_over_the_cuts_pace(void **state)
{
	struct damon_targets ts;
	const pid_t next[] = {10, 40, 50};
	struct damon_target *t = list_of(3, next);
	struct damon_region r = region(0, 0, 64 * M);
	bool recut, added;

	(void)state;
	two_lists(&ts);
	ts.tg[1].recut_after_ms = 77; /* process 10: no span marked, its gap kept */
	assert_true(damon_target_zoom_add(&ts.tg[2], &r, NOW_MS)); /* process 40 */
	damon_targets_carry(&ts, t, 3, NOW_MS, &recut, &added);
	assert_true(recut);
	assert_true(added); /* process 50 */
	assert_int_equal(t[0].recut_after_ms, 77);
	assert_int_equal(t[1].recut_after_ms, NOW_MS + DAMON_RECUT_GAP_MS);
	assert_true(damon_recent_covers(&t[1].recent, r.start, r.end, NOW_MS + 1));
	assert_false(damon_recent_covers(&t[0].recent, r.start, r.end, NOW_MS + 1));
	assert_int_equal(t[1].nzoom, 0); /* the new list starts with none marked */
	damon_targets_switch(&ts, t, 3, SWITCH_NS + 1);
	assert_false(damon_targets_recut_pending(&ts));
	/* The same processes, nothing marked: neither. */
	t = list_of(3, next);
	damon_targets_carry(&ts, t, 3, NOW_MS, &recut, &added);
	assert_false(recut);
	assert_false(added);
	assert_true(damon_targets_same_pids(t, 3, ts.tg, ts.ntg));
	assert_false(damon_targets_same_pids(t, 2, ts.tg, ts.ntg));
	damon_targets_free(t, 3);
	damon_targets_clear(&ts);
}

/* A commit that failed leaves the marks: they go, and the process waits out the gap. */
static void a_failed_cut_waits_out_the_gap(void **state)
{
	struct damon_targets ts;
	struct damon_region r = region(0, 0, 64 * M);

	(void)state;
	two_lists(&ts);
	assert_true(damon_target_zoom_add(&ts.tg[0], &r, NOW_MS));
	damon_targets_recut_done(&ts, NOW_MS);
	assert_false(damon_targets_recut_pending(&ts));
	assert_int_equal(ts.tg[0].recut_after_ms, NOW_MS + DAMON_RECUT_GAP_MS);
	assert_int_equal(ts.tg[1].recut_after_ms, 0);
	damon_targets_clear(&ts);
}

/* At most N pagemaps open over both lists: the one read least lately
 * (here in the old list) is closed before another opens; a target reading its open one
 * closes none. */
static void pagemaps_held_open_are_bounded(void **state)
{
	enum { N = 16 };
	pid_t pids[N + 1];
	struct damon_targets ts = {0};
	struct damon_target *old, *tg;

	(void)state;
	for (size_t i = 0; i <= N; i++)
		pids[i] = (pid_t)(100 + i);
	old = list_of(1, pids);
	tg = list_of(N + 1, pids);
	damon_targets_switch(&ts, old, 1, 1);
	damon_targets_switch(&ts, tg, N + 1, 2);
	/* The old list's target read first, then N - 1 of the new list's: N open. */
	damon_targets_fd_use(&ts, &old[0], N);
	old[0].fd = open("/dev/null", O_RDONLY);
	for (size_t i = 0; i < N - 1; i++) {
		damon_targets_fd_use(&ts, &tg[i], N);
		tg[i].fd = open("/dev/null", O_RDONLY);
		assert_true(tg[i].fd >= 0);
	}
	damon_targets_fd_use(&ts, &tg[0], N); /* open already: none closed */
	assert_true(old[0].fd >= 0);
	damon_targets_fd_use(&ts, &tg[N - 1], N); /* the N + 1st: the oldest goes */
	assert_int_equal(old[0].fd, -1);
	tg[N - 1].fd = open("/dev/null", O_RDONLY);
	damon_targets_fd_use(&ts, &tg[N], N); /* then tg[1]: tg[0] was read since */
	assert_int_equal(tg[1].fd, -1);
	assert_true(tg[0].fd >= 0);
	damon_targets_clear(&ts);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(a_region_is_read_with_the_list_it_was_counted_with),
	    cmocka_unit_test(a_cut_asked_before_the_commit_is_marked_on_the_target_in_force),
	    cmocka_unit_test(a_cut_is_new_work_only_for_a_span_not_remembered),
	    cmocka_unit_test(a_span_is_marked_once_and_not_when_cut_lately),
	    cmocka_unit_test(the_next_list_takes_over_the_cuts_pace),
	    cmocka_unit_test(a_failed_cut_waits_out_the_gap),
	    cmocka_unit_test(pagemaps_held_open_are_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
