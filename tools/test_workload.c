/* Tests of the workload's pure logic: the hot set it picks and how it samples it decide what
 * every VM scenario measures. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "workload_logic.h"

/* The sweep comes every period while the run lasts, and not at its end: a run of 30 s with a
 * sweep every 10 s sweeps at 10 and 20 s, not at 30 s (the last loop pass), just before the
 * end check reads every page. */
static void sweep_is_due_each_period_within_the_run_only(void **state)
{
	(void)state;
	assert_false(wl_sweep_due(9.99, 10, 10, 30));
	assert_true(wl_sweep_due(10.0, 10, 10, 30));
	assert_true(wl_sweep_due(20.3, 20, 10, 30));
	assert_false(wl_sweep_due(30.0, 30, 10, 30));
	assert_false(wl_sweep_due(30.2, 30, 10, 30));
	assert_false(wl_sweep_due(15, 10, 0, 30)); /* no sweep asked for */
}

static void shuffle_yields_a_permutation_that_depends_on_the_seed(void **state)
{
	(void)state;
	enum { N = 1000 };
	size_t a[N], b[N];
	bool seen[N] = {false};
	uint64_t s1 = 1, s2 = 2;
	wl_shuffle(a, N, &s1);
	wl_shuffle(b, N, &s2);
	for (size_t i = 0; i < N; i++) {
		assert_true(a[i] < N);
		assert_false(seen[a[i]]);
		seen[a[i]] = true;
	}
	assert_memory_not_equal(a, b, sizeof(a));
}

static void same_seed_gives_same_hot_set(void **state)
{
	(void)state;
	size_t a[64], b[64];
	uint64_t s1 = 7, s2 = 7;
	wl_shuffle(a, 64, &s1);
	wl_shuffle(b, 64, &s2);
	assert_memory_equal(a, b, sizeof(a));
}

static void phase_two_hot_set_is_disjoint_from_phase_one(void **state)
{
	(void)state;
	enum { UNITS = 100, HOT = 30 };
	size_t order[UNITS];
	bool in_first[UNITS] = {false};
	uint64_t s = 3;
	wl_shuffle(order, UNITS, &s);
	for (size_t i = 0; i < HOT; i++)
		in_first[wl_hot_unit(order, UNITS, HOT, 0, i)] = true;
	for (size_t i = 0; i < HOT; i++)
		assert_false(in_first[wl_hot_unit(order, UNITS, HOT, 1, i)]);
}

static void hot_set_wraps_when_two_phases_do_not_fit(void **state)
{
	(void)state;
	size_t order[10] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
	/* Phase 1's 7th unit is index 7 + 6 = 13, which wraps to 3. */
	assert_int_equal(wl_hot_unit(order, 10, 7, 1, 6), order[3]);
}

static void zipf_first_rank_is_the_most_frequent_and_cdf_ends_at_one(void **state)
{
	(void)state;
	enum { N = 100, DRAWS = 200000 };
	double cdf[N];
	unsigned counts[N] = {0};
	uint64_t s = 11;
	wl_zipf_build(cdf, N, 1.0);
	assert_float_equal(cdf[N - 1], 1.0, 1e-12);
	for (int i = 0; i < DRAWS; i++)
		counts[wl_zipf_rank(cdf, N, wl_rand_unit(&s))]++;
	for (size_t r = 1; r < N; r++)
		assert_true(counts[0] > counts[r]);
	/* Rank 1 has weight 1/H(100) = 0.193; rank 2 half of it. */
	assert_in_range(counts[0], DRAWS * 0.18, DRAWS * 0.21);
	assert_in_range(counts[1], DRAWS * 0.09, DRAWS * 0.105);
}

static void zipf_with_exponent_zero_is_uniform(void **state)
{
	(void)state;
	enum { N = 10, DRAWS = 100000 };
	double cdf[N];
	unsigned counts[N] = {0};
	uint64_t s = 5;
	wl_zipf_build(cdf, N, 0.0);
	for (int i = 0; i < DRAWS; i++)
		counts[wl_zipf_rank(cdf, N, wl_rand_unit(&s))]++;
	for (size_t r = 0; r < N; r++)
		assert_in_range(counts[r], DRAWS / N * 0.95, DRAWS / N * 1.05);
}

static void zipf_rank_of_the_ends_of_the_unit_interval(void **state)
{
	(void)state;
	double cdf[4];
	wl_zipf_build(cdf, 4, 1.0);
	assert_int_equal(wl_zipf_rank(cdf, 4, 0.0), 0);
	assert_int_equal(wl_zipf_rank(cdf, 4, 1.0), 3);
	assert_int_equal(wl_zipf_rank(cdf, 1, 0.5), 0);
}

static void count_splits_pages_on_the_node_into_hot_and_cold(void **state)
{
	(void)state;
	/* Pages on node 0, 1, not present (-ENOENT), 0, 0. */
	int status[] = {0, 1, -2, 0, 0};
	bool hot[] = {true, true, true, false, true};
	size_t h = 99, c = 99;
	wl_count(status, hot, 5, 0, &h, &c);
	assert_int_equal(h, 2);
	assert_int_equal(c, 1);
	wl_count(status, hot, 5, 1, &h, &c);
	assert_int_equal(h, 1);
	assert_int_equal(c, 0);
}

static void track_counts_moves_per_page_and_hot_demotions(void **state)
{
	bool hot[] = {true, true, false, false};
	int8_t last[4];
	uint8_t moves[4] = {0};
	struct wl_moves m = {0};
	int s0[] = {1, 1, 0, -14}; /* placed: two hot and one cold page; one not present */
	int s1[] = {0, 1, 1, 0};   /* hot 0 promoted, cold 2 demoted, page 3 appears */
	int s2[] = {1, -2, 1, 0};  /* hot 0 demoted again; page 1 unknown this time */
	int s3[] = {0, 0, 1, 0};   /* hot 0 promoted a second time, hot 1 promoted */

	(void)state;
	memset(last, -1, sizeof(last));
	wl_track(s0, hot, 4, 0, last, moves, &m);
	assert_int_equal(m.total, 0);
	wl_track(s1, hot, 4, 0, last, moves, &m);
	assert_int_equal(m.total, 2);
	assert_int_equal(m.moved, 2);
	assert_int_equal(m.hot_demoted, 0); /* the cold page's demotion does not count */
	wl_track(s2, hot, 4, 0, last, moves, &m);
	assert_int_equal(m.hot_demoted, 1);
	wl_track(s3, hot, 4, 0, last, moves, &m);
	assert_int_equal(m.total, 5);
	assert_int_equal(m.moved, 3);
	assert_int_equal(m.max, 3);
	assert_int_equal(moves[0], 3);
	assert_int_equal(moves[1], 1); /* the unknown sample kept its node */
	assert_int_equal(moves[3], 0); /* first seen in s1: no move */
}

static void moved_counts_only_pages_that_were_placed_on_the_slow_node(void **state)
{
	(void)state;
	/* Now on node 0, 0, 0, 1, 0; page 2 never reached the slow node, page 4 is absent. */
	int status[] = {0, 0, 0, 1, -2};
	bool placed[] = {true, true, false, true, true};
	bool hot[] = {true, false, false, false, true};
	size_t h = 99, c = 99;
	wl_count_moved(status, placed, hot, 5, 0, &h, &c);
	assert_int_equal(h, 1);
	assert_int_equal(c, 1); /* page 1; page 2 was on node 0 from the start */
}

/* A fake move_pages(2) over N pages: node[i] is page i's node; a page with stuck[i] set stays
 * where it is when moved; each move asks for at most max_asked pages (checked). */
enum { FAKE_N = 6 };
struct fake_pages {
	int node[FAKE_N];
	bool stuck[FAKE_N];
	int moves, queries, fail_query_at, fail_move;
	size_t asked;
};

static size_t fake_index(void *addr)
{
	return (size_t)(uintptr_t)addr / 4096;
}

static int fake_query(void *ctx, size_t n, void **addrs, int *status)
{
	struct fake_pages *f = ctx;
	if (++f->queries == f->fail_query_at)
		return -EPERM;
	for (size_t i = 0; i < n; i++)
		status[i] = f->node[fake_index(addrs[i])];
	return 0;
}

static int fake_move(void *ctx, size_t n, void **addrs, int node)
{
	struct fake_pages *f = ctx;
	f->moves++;
	f->asked += n;
	if (f->fail_move)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!f->stuck[fake_index(addrs[i])])
			f->node[fake_index(addrs[i])] = node;
	return 0;
}

/* One retry case: the fake's pages at the first look 1, 0, 1, 1, 0, 1 (two off node 1), its
 * addresses page i * 4096, the status move_pages(2) gave, moved poisoned to see it written. */
struct retry_case {
	struct fake_pages f;
	void *addrs[FAKE_N], *off[FAKE_N];
	int status[FAKE_N];
	size_t moved;
	struct wl_place_ops ops;
};

static void retry_setup(struct retry_case *c)
{
	static const int start[FAKE_N] = {1, 0, 1, 1, 0, 1};
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < FAKE_N; i++) {
		c->f.node[i] = start[i];
		c->status[i] = start[i];
		c->addrs[i] = (void *)(uintptr_t)(i * 4096);
	}
	c->moved = 99;
	c->ops = (struct wl_place_ops){fake_query, fake_move, &c->f};
}

static long retry(struct retry_case *c, int node, int tries)
{
	return wl_place_retry(&c->ops, c->addrs, c->status, FAKE_N, node, tries, c->off, &c->moved);
}

static void place_retry_moves_back_the_pages_placement_left_elsewhere(void **state)
{
	struct retry_case c;

	(void)state;
	retry_setup(&c);
	assert_int_equal(retry(&c, 1, 3), 0);
	assert_int_equal(c.moved, 2);
	assert_int_equal(c.f.moves, 1);
	assert_int_equal(c.f.asked, 2); /* only the two pages off node 1 */
	for (size_t i = 0; i < FAKE_N; i++)
		assert_int_equal(c.status[i], 1);
}

static void place_retry_gives_up_after_its_tries_and_reports_what_it_could_not_place(void **state)
{
	struct retry_case c;

	(void)state;
	retry_setup(&c);
	c.f.stuck[4] = true;
	assert_int_equal(retry(&c, 1, 3), 1);
	assert_int_equal(c.moved, 1);
	assert_int_equal(c.f.moves, 3);
	assert_int_equal(c.f.asked, 2 + 1 + 1);
	assert_int_equal(c.status[4], 0);
}

static void place_retry_leaves_a_placed_buffer_alone(void **state)
{
	struct retry_case c;

	(void)state;
	retry_setup(&c);
	assert_int_equal(retry(&c, 0, 0), 4);
	assert_int_equal(c.moved, 0); /* no tries: the first look's four pages off node 0 stay */
	for (size_t i = 0; i < FAKE_N; i++)
		c.status[i] = 1;
	assert_int_equal(retry(&c, 1, 3), 0);
	assert_int_equal(c.moved, 0);
	assert_int_equal(c.f.moves, 0);
	assert_int_equal(c.f.queries, 0);
}

static void place_retry_fails_on_a_failed_query_and_stops_on_a_failed_move(void **state)
{
	struct retry_case c;

	(void)state;
	retry_setup(&c);
	c.f.fail_query_at = 1;
	assert_int_equal(retry(&c, 1, 3), -EPERM);
	assert_int_equal(c.moved, 99); /* untouched on failure */
	retry_setup(&c);
	c.f.fail_move = 1;
	assert_int_equal(retry(&c, 1, 3), 2);
	assert_int_equal(c.moved, 0);
	assert_int_equal(c.f.moves, 1);
	assert_int_equal(c.f.queries, 0);
}

static void random_unit_stays_in_the_half_open_interval(void **state)
{
	(void)state;
	uint64_t s = 0;
	double lo = 1, hi = 0;
	for (int i = 0; i < 100000; i++) {
		double u = wl_rand_unit(&s);
		assert_true(u >= 0.0 && u < 1.0);
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
	}
	assert_true(lo < 0.001);
	assert_true(hi > 0.999);
}

/* The end check: stamped pages read back equal after what the workload's own accesses do
 * (the first word of every cache line incremented, the first byte of every page set), and a
 * page whose contents changed (another page's, or zeros: a lost page) is found. */
static void verify_finds_only_pages_whose_contents_changed(void **state)
{
	(void)state;
	enum { N = 64, PG = 4096 };
	unsigned char *buf = calloc(N, PG);
	size_t first = 99;
	uint64_t want = 0, got = 0;

	assert_non_null(buf);
	wl_stamp(buf, N, PG, 7);
	for (size_t i = 0; i < N; i++) {
		buf[i * PG] = (unsigned char)i;
		for (size_t line = 0; line < PG / 64; line++)
			for (int k = 0; k < 3; k++)
				((volatile uint64_t *)(buf + i * PG + line * 64))[0] += 1;
	}
	assert_int_equal(wl_verify(buf, N, PG, 7, &first, &want, &got), 0);
	assert_int_equal(first, 99); /* untouched */
	assert_int_not_equal(wl_stamp_word(7, 3), wl_stamp_word(7, 4));
	assert_int_not_equal(wl_stamp_word(7, 3), wl_stamp_word(8, 3));
	memset(buf + 5 * PG, 0, PG);		 /* a page lost: zeros */
	memcpy(buf + 9 * PG, buf + 10 * PG, PG); /* another page's contents */
	assert_int_equal(wl_verify(buf, N, PG, 7, &first, &want, &got), 2);
	assert_int_equal(first, 5);
	assert_int_equal(want, wl_stamp_word(7, 5));
	assert_int_equal(got, 0);
	/* A different seed: every page differs. */
	assert_int_equal(wl_verify(buf, N, PG, 8, &first, &want, &got), N);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(sweep_is_due_each_period_within_the_run_only),
	    cmocka_unit_test(shuffle_yields_a_permutation_that_depends_on_the_seed),
	    cmocka_unit_test(same_seed_gives_same_hot_set),
	    cmocka_unit_test(phase_two_hot_set_is_disjoint_from_phase_one),
	    cmocka_unit_test(hot_set_wraps_when_two_phases_do_not_fit),
	    cmocka_unit_test(zipf_first_rank_is_the_most_frequent_and_cdf_ends_at_one),
	    cmocka_unit_test(zipf_with_exponent_zero_is_uniform),
	    cmocka_unit_test(zipf_rank_of_the_ends_of_the_unit_interval),
	    cmocka_unit_test(count_splits_pages_on_the_node_into_hot_and_cold),
	    cmocka_unit_test(track_counts_moves_per_page_and_hot_demotions),
	    cmocka_unit_test(moved_counts_only_pages_that_were_placed_on_the_slow_node),
	    cmocka_unit_test(place_retry_moves_back_the_pages_placement_left_elsewhere),
	    cmocka_unit_test(
		place_retry_gives_up_after_its_tries_and_reports_what_it_could_not_place),
	    cmocka_unit_test(place_retry_leaves_a_placed_buffer_alone),
	    cmocka_unit_test(place_retry_fails_on_a_failed_query_and_stops_on_a_failed_move),
	    cmocka_unit_test(random_unit_stays_in_the_half_open_interval),
	    cmocka_unit_test(verify_finds_only_pages_whose_contents_changed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
