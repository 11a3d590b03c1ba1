/* cgroup_top: the shown set's rule. Free places go to the largest cgroups by slow bytes; a
 * shown cgroup stays while offered; a folded one displaces the smallest shown only past twice
 * its bytes; counts of a cgroup's first shown round go to (other); an unreadable or non-UTF-8
 * path stays folded; a resize keeps the largest series and (other)'s counters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "table/cgroup_top.h"

/* Paths by key: key k is "/cg<k>", key 666 has an invalid byte, key 777 cannot be read. */
static int path(void *ctx, uint32_t rep, uint64_t key, char *buf, size_t size)
{
	int *calls = ctx;

	(void)rep;
	(*calls)++;
	if (key == 777)
		return -ESRCH;
	if (key == 666)
		return snprintf(buf, size, "/bad\xff");
	return snprintf(buf, size, "/cg%llu", (unsigned long long)key);
}

/* One round: cgroups keys[i] with slow[i] bytes. */
static void round_of(struct cgroup_top *t, const uint64_t *keys, const uint64_t *slow, size_t n,
		     int *calls)
{
	cgroup_top_begin(t);
	for (size_t i = 0; i < n; i++)
		cgroup_top_offer(t, keys[i], slow[i], (uint32_t)i + 1, true);
	cgroup_top_settle(t, path, calls);
}

static bool shown(struct cgroup_top *t, uint64_t key)
{
	return cgroup_top_gauges(t, key) != cgroup_top_other(t);
}

static void sizes_are(const struct cgroup_top *t, unsigned shown, unsigned folded)
{
	unsigned sh, fo;

	cgroup_top_sizes(t, &sh, &fo);
	assert_int_equal(sh, shown);
	assert_int_equal(fo, folded);
}

static void free_places_go_to_the_largest_and_the_rest_fold(void **state)
{
	static const uint64_t keys[] = {1, 2, 3, 4, 5}, slow[] = {10, 50, 30, 0, 40};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(3, 2, &t), 0);
	round_of(t, keys, slow, 5, &calls);
	assert_true(shown(t, 2) && shown(t, 5) && shown(t, 3));
	assert_false(shown(t, 1) || shown(t, 4));
	sizes_are(t, 3, 2);
	assert_int_equal(calls, 3);
	assert_string_equal(cgroup_top_gauges(t, 2)->label, "/cg2");
	assert_string_equal(cgroup_top_other(t)->label, "(other)");
	cgroup_top_free(t);
}

/* 3 places: a folded cgroup of 70 does not displace one of 40 (not past twice), one of 81 does;
 * a shown cgroup no longer offered gives its place to the largest folded one. */
static void a_folded_cgroup_displaces_only_past_twice_the_smallest(void **state)
{
	static const uint64_t k1[] = {1, 2, 3}, s1[] = {100, 50, 40};
	static const uint64_t k2[] = {1, 2, 3, 4}, s2[] = {100, 50, 40, 70};
	static const uint64_t k3[] = {1, 2, 3, 4}, s3[] = {100, 50, 40, 81};
	static const uint64_t k4[] = {1, 3, 4, 5}, s4[] = {100, 40, 81, 1};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(3, 1, &t), 0);
	round_of(t, k1, s1, 3, &calls);
	round_of(t, k2, s2, 4, &calls);
	assert_true(shown(t, 3));
	assert_false(shown(t, 4));
	round_of(t, k3, s3, 4, &calls);
	assert_false(shown(t, 3));
	assert_true(shown(t, 4) && shown(t, 1) && shown(t, 2));
	round_of(t, k4, s4, 4, &calls);
	assert_false(shown(t, 2));
	assert_true(shown(t, 1) && shown(t, 4) && shown(t, 3));
	cgroup_top_free(t);
}

/* What is counted in a series' first round goes to (other); from the next round to the series.
 * (other) keeps what it counted when a cgroup leaves or joins. */
static void a_series_counts_from_zero_and_other_only_grows(void **state)
{
	static const uint64_t k[] = {1}, s[] = {5};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(2, 1, &t), 0);
	round_of(t, k, s, 1, &calls);
	cgroup_top_counters(t, 1)->promoted += 7;
	assert_int_equal(cgroup_top_gauges(t, 1)->promoted, 0);
	assert_int_equal(cgroup_top_other(t)->promoted, 7);
	round_of(t, k, s, 1, &calls);
	cgroup_top_counters(t, 1)->promoted += 3;
	assert_int_equal(cgroup_top_gauges(t, 1)->promoted, 3);
	round_of(t, NULL, NULL, 0, &calls); /* it left: its counts go to (other) from now on */
	cgroup_top_counters(t, 1)->demoted += 2;
	assert_int_equal(cgroup_top_other(t)->promoted, 7);
	assert_int_equal(cgroup_top_other(t)->demoted, 2);
	cgroup_top_free(t);
}

/* A path that is not UTF-8 or cannot be read is never shown; the place goes to the next. */
static void unreadable_or_invalid_paths_stay_folded(void **state)
{
	static const uint64_t k[] = {666, 777, 9}, s[] = {300, 200, 1};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(3, 1, &t), 0);
	round_of(t, k, s, 3, &calls);
	assert_false(shown(t, 666) || shown(t, 777));
	assert_true(shown(t, 9));
	sizes_are(t, 1, 2);
	cgroup_top_free(t);
}

/* No places: everything folds, no path is read. */
static void zero_places_fold_everything(void **state)
{
	static const uint64_t k[] = {1, 2}, s[] = {1, 2};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(0, 1, &t), 0);
	round_of(t, k, s, 2, &calls);
	assert_int_equal(calls, 0);
	assert_null(cgroup_top_at(t, 0));
	cgroup_top_counters(t, 1)->promoted += 4;
	assert_int_equal(cgroup_top_other(t)->promoted, 4);
	cgroup_top_free(t);
}

static void resize_keeps_the_largest_series_and_other(void **state)
{
	static const uint64_t k[] = {1, 2, 3}, s[] = {10, 30, 20};
	struct cgroup_top *t;
	int calls = 0;
	(void)state;

	assert_int_equal(cgroup_top_new(3, 2, &t), 0);
	round_of(t, k, s, 3, &calls);
	round_of(t, k, s, 3, &calls);
	cgroup_top_counters(t, 2)->promoted += 5;
	cgroup_top_counters(t, 0)->demoted += 6;
	assert_int_equal(cgroup_top_resize(&t, 2), 0);
	assert_int_equal(cgroup_top_max(t), 2);
	assert_true(shown(t, 2) && shown(t, 3));
	assert_false(shown(t, 1));
	assert_int_equal(cgroup_top_gauges(t, 2)->promoted, 5);
	assert_string_equal(cgroup_top_gauges(t, 3)->label, "/cg3");
	assert_int_equal(cgroup_top_other(t)->demoted, 6);
	cgroup_top_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(free_places_go_to_the_largest_and_the_rest_fold),
	    cmocka_unit_test(a_folded_cgroup_displaces_only_past_twice_the_smallest),
	    cmocka_unit_test(a_series_counts_from_zero_and_other_only_grows),
	    cmocka_unit_test(unreadable_or_invalid_paths_stay_folded),
	    cmocka_unit_test(zero_places_fold_everything),
	    cmocka_unit_test(resize_keeps_the_largest_series_and_other),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
