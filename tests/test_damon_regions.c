/* Tests for damon_regions: the three ranges of a process's VMAs, as DAMON finds them, and
 * their cut into pieces of one size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/config.h"
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_regions.h"

#define K UINT64_C(4096)
#define M (UINT64_C(1) << 20)

static void three_ranges_leave_out_the_two_largest_gaps(void **state)
{
	/* Program and heap, a 1 GiB gap, the buffer and libraries (a 1 MiB gap between them), a
	 * 100 GiB gap, the stack. */
	const struct vma v[] = {
	    {0x400000, 0x400000 + 64 * K},
	    {0x400000 + 64 * K, 0x400000 + 8 * M},
	    {0x40000000 + 0x400000 + 8 * M, 0x40000000 + 0x400000 + 264 * M},
	    {0x40000000 + 0x400000 + 265 * M, 0x40000000 + 0x400000 + 266 * M},
	    {UINT64_C(0x1A00000000), UINT64_C(0x1A00000000) + 132 * K},
	};
	struct damon_range r[3];

	(void)state;
	assert_int_equal(damon_three_ranges(v, 5, r), 3);
	assert_true(r[0].start == v[0].start && r[0].end == v[1].end);
	assert_true(r[1].start == v[2].start && r[1].end == v[3].end); /* the small gap stays in */
	assert_true(r[2].start == v[4].start && r[2].end == v[4].end);
	/* Two VMAs: two ranges; one: one; none: none. */
	assert_int_equal(damon_three_ranges(&v[1], 2, r), 2);
	assert_true(r[0].end == v[1].end && r[1].start == v[2].start);
	assert_int_equal(damon_three_ranges(v, 1, r), 1);
	assert_true(r[0].start == v[0].start && r[0].end == v[0].end);
	assert_int_equal(damon_three_ranges(v, 0, r), 0);
}

static void cut_gives_pieces_of_one_size_and_every_range_one(void **state)
{
	/* 256 MiB and two small ranges (32 and 132 KiB), cut for 1024 pieces of 256 KiB. */
	const struct damon_range r[] = {{0x400000, 0x400000 + 8 * K},
					{0x10000000, 0x10000000 + 256 * M},
					{0x7ff000000000, 0x7ff000000000 + 33 * K}};
	struct damon_range out[2048];
	size_t n = damon_cut_ranges(r, 3, 1024, out, 2048);

	(void)state;
	assert_int_equal(n, 1 + 1024 + 1);
	assert_true(out[0].start == r[0].start && out[0].end == r[0].end);
	for (size_t i = 1; i <= 1024; i++) {
		assert_true(out[i].end - out[i].start == 64 * K); /* 256 KiB */
		assert_true(out[i].start == out[i - 1].end || i == 1);
	}
	assert_true(out[1].start == r[1].start && out[1024].end == r[1].end);
	assert_true(out[1025].start == r[2].start && out[1025].end == r[2].end);
	/* What does not fit is left out whole; pieces never fall under a page. */
	assert_int_equal(damon_cut_ranges(r, 3, 1024, out, 100), 1);
	assert_int_equal(damon_cut_ranges(r, 1, 1000, out, 100), 8);
	for (size_t i = 0; i < 8; i++)
		assert_true(out[i].start == r[0].start + i * K && out[i].end == out[i].start + K);
}

static struct damon_region rg(uint64_t size)
{
	return (struct damon_region){.start = 0x10000000, .end = 0x10000000 + size};
}

static void oversized_is_sixteen_times_the_merge_limit_of_the_last_aggregation(void **state)
{
	struct pghotd_config *cfg;
	struct damon_aggr_size a = {0};
	const uint64_t ms = 1000000, t0 = 5000 * ms;
	struct damon_region big = rg(64 * M), r;

	(void)state;
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->sources.damon.aggr_us = 400000;
	cfg->sources.damon.min_regions = 1024;
	/* No whole aggregation seen yet: nothing is oversized. 1 GiB in this one (over two
	 * drains, 1 ms apart). */
	assert_false(damon_aggr_size_add(&a, cfg, &big, t0));
	r = rg(960 * M);
	assert_false(damon_aggr_size_add(&a, cfg, &r, t0 + ms));
	/* The next one: the limit is 1 MiB, so 16 MiB is not oversized and 17 MiB is. */
	r = rg(16 * M);
	assert_false(damon_aggr_size_add(&a, cfg, &r, t0 + 400 * ms));
	r = rg(17 * M);
	assert_true(damon_aggr_size_add(&a, cfg, &r, t0 + 401 * ms));
	/* Never under DAMON_OVERSIZED_MIN, however small the memory. */
	cfg->sources.damon.min_regions = 1000000;
	r = rg(4 * M);
	assert_false(damon_aggr_size_add(&a, cfg, &r, t0 + 402 * ms));
	config_free(cfg);
}

static void zoom_is_a_large_warm_region_not_a_hot_or_idle_one(void **state)
{
	struct pghotd_config *cfg;
	struct damon_aggr_size a = {0};
	struct damon_region r = rg(41 * M);

	(void)state;
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->sources.damon.sample_us = 5000; /* 20 samples an aggregation */
	cfg->sources.damon.aggr_us = 100000;
	cfg->sources.damon.min_regions = 100;
	cfg->sources.damon.max_regions = 1000;
	r.nr_accesses = 1;
	assert_false(damon_region_zoom(&a, cfg, &r, false)); /* no whole aggregation seen */
	a.last = UINT64_C(4096) * M;			     /* 4 GiB: pieces of 4 MiB */
	assert_true(damon_region_zoom(&a, cfg, &r, false));
	assert_false(damon_region_zoom(&a, cfg, &r, true)); /* warm: used broadly, left whole */
	r.nr_accesses = 0;				    /* idle */
	assert_false(damon_region_zoom(&a, cfg, &r, false));
	r.nr_accesses = 10; /* hot */
	assert_false(damon_region_zoom(&a, cfg, &r, false));
	r = rg(8 * M); /* two pieces */
	r.nr_accesses = 1;
	assert_true(damon_region_zoom(&a, cfg, &r, false));
	r = rg(6 * M); /* under two pieces */
	r.nr_accesses = 1;
	assert_false(damon_region_zoom(&a, cfg, &r, false));
	config_free(cfg);
}

static void cut_spans_cuts_the_spans_and_leaves_the_rest_whole(void **state)
{
	/* Two ranges; a span inside the first, one across the gap into the second, one in the
	 * gap only. */
	const struct damon_range r[] = {{0x100000, 0x900000}, {0x1000000, 0x1800000}};
	const struct damon_range z[] = {
	    {0x200000, 0x400000}, {0x800000, 0x1100000}, {0x1200000, 0x1200000}};
	struct damon_range out[64];
	size_t n = damon_cut_spans(r, 2, z, 2, 4, out, 64);

	(void)state;
	/* [1M,2M) whole, [2M,4M) in 4, [4M,8M) whole, [8M,9M) in 4; [16M,17M) in 4, [17M,24M)
	 * whole. */
	assert_int_equal(n, 1 + 4 + 1 + 4 + 4 + 1);
	assert_true(out[0].start == 0x100000 && out[0].end == 0x200000);
	assert_true(out[1].start == 0x200000 && out[1].end == 0x280000);
	assert_true(out[4].end == 0x400000);
	assert_true(out[5].start == 0x400000 && out[5].end == 0x800000);
	assert_true(out[6].start == 0x800000 && out[9].end == 0x900000);
	assert_true(out[10].start == 0x1000000 && out[13].end == 0x1100000);
	assert_true(out[14].start == 0x1100000 && out[14].end == 0x1800000);
	for (size_t i = 1; i < n; i++)
		assert_true(out[i].start == out[i - 1].end || out[i].start == 0x1000000);
	/* The pieces a span as room allows. */
	assert_int_equal(damon_zoom_pieces(2, 1024), DAMON_ZOOM_PIECES);
	assert_int_equal(damon_zoom_pieces(16, 1024), 62); /* (1024 - 3 - 16) / 16 */
	assert_int_equal(damon_zoom_pieces(2, 9), 2);
	assert_int_equal(damon_zoom_pieces(2, 8), 0);
	assert_int_equal(damon_zoom_pieces(0, 1024), 0);
	/* No span: the ranges as they are; no room: nothing. */
	assert_int_equal(damon_cut_spans(r, 2, z, 0, 4, out, 64), 2);
	assert_true(out[0].start == r[0].start && out[1].end == r[1].end);
	assert_int_equal(damon_cut_spans(r, 2, z, 2, 4, out, 5), 0);
}

static void a_span_cut_lately_is_not_cut_again_until_it_expires(void **state)
{
	struct damon_recent c = {0};
	const uint64_t t = 1000, hold = DAMON_RECUT_MIN_MS;

	(void)state;
	damon_recent_add(&c, 16 * M, 32 * M, t);
	assert_true(damon_recent_covers(&c, 20 * M, 21 * M, t));	   /* inside */
	assert_true(damon_recent_covers(&c, 8 * M, 17 * M, t + hold - 1)); /* overlapping */
	assert_false(damon_recent_covers(&c, 32 * M, 40 * M, t));	   /* beside: new data */
	assert_false(damon_recent_covers(&c, 20 * M, 21 * M, t + hold));
	/* Full: the span forgotten first gives way; forgotten ones go first. */
	for (uint64_t i = 1; i < DAMON_RECENT_MAX; i++)
		damon_recent_add(&c, (64 + i) * M, (65 + i) * M, t + i);
	assert_int_equal(c.n, DAMON_RECENT_MAX);
	damon_recent_add(&c, 4096 * M, 4097 * M, t + 100);
	assert_int_equal(c.n, DAMON_RECENT_MAX);
	assert_false(damon_recent_covers(&c, 16 * M, 32 * M, t + 100)); /* the first, replaced */
	assert_true(damon_recent_covers(&c, 65 * M, 66 * M, t + 100));
	assert_true(damon_recent_covers(&c, 4096 * M, 4097 * M, t + 100));
	damon_recent_add(&c, 0, M, t + 2 * hold + DAMON_RECENT_MAX);
	assert_int_equal(c.n, 2); /* all but the one added at t + 100 forgotten */
	assert_true(damon_recent_covers(&c, 0, M, t + 2 * hold + DAMON_RECENT_MAX));
}

/* A span cut again and again is held twice as long each time, up to DAMON_RECUT_MS; one left
 * alone for a hold after its last ran out is forgotten, and held briefly again. */
static void a_span_cut_over_and_over_is_held_longer(void **state)
{
	struct damon_recent c = {0};
	uint64_t now = 1000, hold = DAMON_RECUT_MIN_MS;

	(void)state;
	damon_recent_add(&c, 16 * M, 32 * M, now);
	for (int i = 0; i < 6; i++) {
		assert_true(damon_recent_covers(&c, 16 * M, 32 * M, now + hold - 1));
		assert_false(damon_recent_covers(&c, 16 * M, 32 * M, now + hold));
		now += hold; /* cut again as soon as it may be, a part of it */
		damon_recent_add(&c, 20 * M, 24 * M, now);
		hold = 2 * hold < DAMON_RECUT_MS ? 2 * hold : DAMON_RECUT_MS;
	}
	assert_int_equal(hold, DAMON_RECUT_MS);
	assert_int_equal(c.n, 1);
	/* Known while remembered, held or not; not beside it. */
	assert_true(damon_recent_knows(&c, 16 * M, 22 * M, now + 2 * DAMON_RECUT_MS - 1));
	assert_false(damon_recent_knows(&c, 16 * M, 20 * M, now));
	assert_false(damon_recent_knows(&c, 20 * M, 24 * M, now + 2 * DAMON_RECUT_MS));
	assert_false(damon_recent_covers(&c, 16 * M, 20 * M, now)); /* the part kept */
	assert_true(damon_recent_covers(&c, 20 * M, 24 * M, now + DAMON_RECUT_MS - 1));
	/* Left alone until forgotten: held briefly again. */
	now += 2 * DAMON_RECUT_MS;
	damon_recent_add(&c, 20 * M, 24 * M, now);
	assert_true(damon_recent_covers(&c, 20 * M, 24 * M, now + DAMON_RECUT_MIN_MS - 1));
	assert_false(damon_recent_covers(&c, 20 * M, 24 * M, now + DAMON_RECUT_MIN_MS));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(three_ranges_leave_out_the_two_largest_gaps),
	    cmocka_unit_test(cut_gives_pieces_of_one_size_and_every_range_one),
	    cmocka_unit_test(oversized_is_sixteen_times_the_merge_limit_of_the_last_aggregation),
	    cmocka_unit_test(zoom_is_a_large_warm_region_not_a_hot_or_idle_one),
	    cmocka_unit_test(cut_spans_cuts_the_spans_and_leaves_the_rest_whole),
	    cmocka_unit_test(a_span_cut_lately_is_not_cut_again_until_it_expires),
	    cmocka_unit_test(a_span_cut_over_and_over_is_held_longer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
