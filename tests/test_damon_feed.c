/* Tests for damon_event (the damon_aggregated format of Debian's 6.12 kernel, in
 * tests/fixtures/sysfs-damon, and its records) and damon_feed (a region's pages to the sink
 * and the cold list), with the topology of tests/fixtures/abit-sysfs: node 0 has the CPUs and
 * PFNs 0-1023, node 1 is memory-only (slow) with PFNs 1024-2047. A fake pagemap stands in for
 * the process's. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table/cold_list.h"
#include "base/config.h"
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_feed.h"
#include "sys/pagemap.h"
#include "sys/topology.h"

#define BASE  UINT64_C(0x7f0000000000)
#define PAGES 64

struct fake_pm {
	uint64_t ent[PAGES];
	int calls;
	uint64_t read;
};

static int fake_pagemap(void *ctx, uint64_t vaddr, uint64_t *ent, size_t n)
{
	struct fake_pm *pm = ctx;
	uint64_t first = (vaddr - BASE) / PAGEMAP_PAGE_SIZE;

	pm->calls++;
	if (vaddr < BASE || first >= PAGES)
		return 0;
	if (n > PAGES - first)
		n = (size_t)(PAGES - first);
	memcpy(ent, &pm->ent[first], n * sizeof(*ent));
	pm->read += n;
	return (int)n;
}

struct got {
	struct access_event ev[PAGES];
	size_t n;
};

static void sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		 size_t n)
{
	struct got *g = ctx;

	(void)cfg;
	for (size_t i = 0; i < n && g->n < PAGES; i++)
		g->ev[g->n++] = ev[i];
}

struct fx {
	struct pghotd_config *cfg;
	struct topology *topo;
	struct cold_list *cold;
	struct fake_pm pm;
	struct got got;
	struct damon_feed feed;
	struct damon_feed_proc proc;
};

static void fixture(char *buf, size_t size, const char *name)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
}

static uint64_t present(uint64_t pfn, bool exclusive)
{
	return PAGEMAP_PRESENT | (exclusive ? PAGEMAP_EXCLUSIVE : 0) | pfn;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char sys[PATH_MAX];

	assert_non_null(f);
	fixture(sys, sizeof(sys), "abit-sysfs");
	assert_int_equal(config_new_defaults(&f->cfg), 0);
	assert_int_equal(topology_load(sys, &f->topo), 0);
	assert_int_equal(topology_apply_config(f->topo, f->cfg), 0);
	f->cfg->topo = f->topo;
	/* 20 samples per aggregation, whatever the shipped intervals. */
	f->cfg->sources.damon.sample_us = 5000;
	f->cfg->sources.damon.aggr_us = 100000;
	assert_int_equal(cold_list_new(256, &f->cold), 0);
	/* Pages 0-3 on the slow node, 4-5 on the fast one (5 mapped by two processes), 6 not
	 * present, 7 slow again; the rest absent. */
	for (int i = 0; i < 4; i++)
		f->pm.ent[i] = present(1100 + (uint64_t)i, true);
	f->pm.ent[4] = present(10, true);
	f->pm.ent[5] = present(11, false);
	f->pm.ent[7] = present(1200, true);
	f->feed = (struct damon_feed){.cfg = f->cfg,
				      .pagemap = fake_pagemap,
				      .ctx = &f->pm,
				      .sink = {.deliver = sink, .ctx = &f->got},
				      .cold = f->cold,
				      .want = 1, /* node 0 wants room */
				      .cold_pass = true,
				      .now_ns = UINT64_C(500000) * 1000000};
	f->proc = (struct damon_feed_proc){.pid = 42, .proc = 7, .cpu = 1, .node = 0};
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	f->cfg->topo = NULL;
	config_free(f->cfg);
	topology_free(f->topo);
	cold_list_free(f->cold);
	free(f);
	return 0;
}

static struct damon_region region(uint32_t pages, uint32_t nr_accesses, uint32_t age)
{
	return (struct damon_region){.kdamond = 9,
				     .target = 0,
				     .start = BASE,
				     .end = BASE + pages * PAGEMAP_PAGE_SIZE,
				     .nr_accesses = nr_accesses,
				     .age = age};
}

/* ---- damon_event ---- */

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 8192);

	assert_non_null(fp);
	assert_non_null(buf);
	assert_true(fread(buf, 1, 8191, fp) > 0);
	fclose(fp);
	return buf;
}

static void reads_the_offsets_of_debians_6_12_format(void **state)
{
	char sys[PATH_MAX];
	struct damon_event_format fmt;

	(void)state;
	fixture(sys, sizeof(sys), "sysfs-damon");
	assert_int_equal(damon_event_load(sys, &fmt), 0);
	assert_int_equal(fmt.id, 734);
	assert_int_equal(fmt.pid.offset, 4);
	assert_int_equal(fmt.pid.size, 4);
	assert_int_equal(fmt.target_id.offset, 8);
	assert_int_equal(fmt.target_id.size, 8);
	assert_int_equal(fmt.nr_regions.offset, 16);
	assert_int_equal(fmt.start.offset, 24);
	assert_int_equal(fmt.end.offset, 32);
	assert_int_equal(fmt.nr_accesses.offset, 40);
	assert_int_equal(fmt.age.offset, 44);
	assert_int_equal(fmt.age.size, 4);
	assert_int_equal(fmt.min_size, 48);
}

static void rejects_a_format_without_a_field_or_an_id(void **state)
{
	char sys[PATH_MAX], path[PATH_MAX + 64];
	struct damon_event_format fmt = {.id = 5};
	char *text, *p;

	(void)state;
	fixture(sys, sizeof(sys), "sysfs-damon");
	snprintf(path, sizeof(path), "%s/kernel/tracing/" DAMON_EVENT_REL, sys);
	text = slurp(path);
	p = strstr(text, "nr_accesses;");
	memcpy(p, "nr_accessez;", 12);
	assert_int_equal(damon_event_format_parse(text, &fmt), -EINVAL);
	memcpy(p, "nr_accesses;", 12);
	p = strstr(text, "ID: ");
	memcpy(p, "Id: ", 4);
	assert_int_equal(damon_event_format_parse(text, &fmt), -EINVAL);
	assert_int_equal(fmt.id, 5);
	free(text);
}

static void decodes_a_record_and_refuses_a_short_one(void **state)
{
	char sys[PATH_MAX];
	struct damon_event_format fmt;
	struct damon_region r = {0};
	uint8_t raw[52] = {0};
	uint64_t start = BASE, end = BASE + 8192, target = 3;
	uint32_t pid = 812, nr = 7, acc = 15, age = 40;

	(void)state;
	fixture(sys, sizeof(sys), "sysfs-damon");
	assert_int_equal(damon_event_load(sys, &fmt), 0);
	memcpy(raw + 4, &pid, 4);
	memcpy(raw + 8, &target, 8);
	memcpy(raw + 16, &nr, 4);
	memcpy(raw + 24, &start, 8);
	memcpy(raw + 32, &end, 8);
	memcpy(raw + 40, &acc, 4);
	memcpy(raw + 44, &age, 4);
	assert_int_equal(damon_event_decode(&fmt, raw, 47, &r), -EBADMSG);
	assert_int_equal(r.kdamond, 0);
	assert_int_equal(damon_event_decode(&fmt, raw, sizeof(raw), &r), 0);
	assert_int_equal(r.kdamond, 812);
	assert_int_equal(r.target, 3);
	assert_int_equal(r.nr_regions, 7);
	assert_true(r.start == start && r.end == end);
	assert_int_equal(r.nr_accesses, 15);
	assert_int_equal(r.age, 40);
}

/* ---- damon_feed ---- */

static void hot_region_gives_an_access_for_each_slow_page(void **state)
{
	struct fx *f = *state;
	struct damon_region r = region(8, 10, 3); /* 10 of 20 samples */
	size_t expect[] = {0, 1, 2, 3, 7};
	uint64_t slow_hot = 0;

	f->feed.slow_hot = &slow_hot;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 8);
	assert_int_equal(f->got.n, 5);
	assert_int_equal(slow_hot, 5); /* the fast pages 4 and 5 are not counted */
	for (size_t i = 0; i < 5; i++) {
		const struct access_event *e = &f->got.ev[i];

		assert_true(e->vaddr == BASE + expect[i] * PAGEMAP_PAGE_SIZE);
		assert_true(e->paddr == pagemap_pfn(f->pm.ent[expect[i]]) << PAGEMAP_PAGE_SHIFT);
		assert_int_equal(e->pid, 42);
		assert_int_equal(e->cpu, 1);
		assert_int_equal(e->source, SRC_DAMON);
	}
	assert_int_equal(cold_list_len(f->cold), 0);
}

static void only_a_full_region_is_first_evidence(void **state)
{
	struct fx *f = *state;
	struct damon_region half = region(8, 10, 3), full = region(8, 20, 3);

	f->feed.first_thr = 1;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &half, 1000), 8);
	assert_int_equal(f->got.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(f->got.ev[i].threshold, 0);
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &full, 1000), 8);
	assert_int_equal(f->got.n, 10);
	for (size_t i = 5; i < 10; i++)
		assert_int_equal(f->got.ev[i].threshold, 1);
	/* No room on a fast node: the feed's first_thr is 0, and so is the events'. */
	f->feed.first_thr = 0;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &full, 1000), 8);
	assert_int_equal(f->got.ev[10].threshold, 0);
}

static void region_below_half_of_the_samples_is_not_read(void **state)
{
	struct fx *f = *state;
	struct damon_region r = region(8, 9, 3); /* 9 x 2 < 20 samples */

	assert_false(damon_region_hot(f->cfg, &r));
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	assert_int_equal(f->pm.calls, 0);
	assert_int_equal(f->got.n, 0);
	r.nr_accesses = 10; /* 10 x 2 = 20: half */
	assert_true(damon_region_hot(f->cfg, &r));
	f->cfg->sources.damon.aggr_us = 400000; /* 80 samples: 10 is no longer half */
	assert_false(damon_region_hot(f->cfg, &r));
	/* Four samples: half of them is not enough, three are. */
	f->cfg->sources.damon.sample_us = 100000;
	r.nr_accesses = 2;
	assert_false(damon_region_hot(f->cfg, &r));
	r.nr_accesses = 3;
	assert_true(damon_region_hot(f->cfg, &r));
	/* Two samples: both. */
	f->cfg->sources.damon.aggr_us = 200000;
	r.nr_accesses = 1;
	assert_false(damon_region_hot(f->cfg, &r));
	r.nr_accesses = 2;
	assert_true(damon_region_hot(f->cfg, &r));
}

static void idle_region_offers_its_exclusive_fast_pages_on_a_cold_pass(void **state)
{
	struct fx *f = *state;
	/* The exchange age (config_demotion_exchange_ms(): promotion.window_ms, 3000) at 100 ms
	 * per aggregation: age 30. */
	struct damon_region young = region(8, 0, 29), idle = region(8, 0, 700);
	struct cold_page out[8];
	uint64_t now_ms = f->feed.now_ns / 1000000;

	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &young, 1000), 0);
	f->feed.cold_pass = false;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &idle, 1000), 0);
	f->feed.cold_pass = true;
	f->feed.want = 2; /* only node 1 (slow) wants room: nothing on it is a candidate */
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &idle, 1000), 8);
	assert_int_equal(cold_list_len(f->cold), 0);
	f->feed.want = 1;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &idle, 1000), 8);
	assert_int_equal(f->got.n, 0); /* no accesses from an idle region */
	/* Page 4 only: page 5 is mapped twice, the others are slow or absent. */
	assert_int_equal(cold_list_take(f->cold, 0, now_ms, 1000, 0, out, 8), 1);
	assert_true(out[0].vaddr == BASE + 4 * PAGEMAP_PAGE_SIZE);
	assert_int_equal(out[0].pid, 42);
	assert_int_equal(out[0].proc, 7);
	assert_true(out[0].idle_since_ms == now_ms - 70000);
}

static void a_cold_pass_covers_one_aggregation_over_drains(void **state)
{
	struct fx *f = *state;
	struct damon_cold_pass c = {0};
	const uint64_t ms = 1000000, t0 = 7000 * ms; /* aggregations of 100 ms */

	assert_false(damon_cold_pass_covers(&c, f->cfg, t0)); /* none started */
	damon_cold_pass_start(&c);
	/* The next aggregation's records, over two drains, are in it... */
	assert_true(damon_cold_pass_covers(&c, f->cfg, t0 + 100 * ms));
	assert_true(damon_cold_pass_covers(&c, f->cfg, t0 + 101 * ms));
	assert_true(damon_cold_pass_covers(&c, f->cfg, t0 + 102 * ms));
	/* ...the one after is not. */
	assert_false(damon_cold_pass_covers(&c, f->cfg, t0 + 200 * ms));
	damon_cold_pass_start(&c);
	assert_true(damon_cold_pass_covers(&c, f->cfg, t0 + 300 * ms));
	assert_false(damon_cold_pass_covers(&c, f->cfg, t0 + 400 * ms));
}

/* Passes a quarter of the idle time apart (15 s at the shipped 60 s), at once for a new epoch,
 * and half the exchange age apart (1.5 s) while a watched node's offers run low. */
static void a_warm_pass_comes_once_a_second(void **state)
{
	struct damon_cold_pass c = {0};

	(void)state;
	assert_true(damon_warm_pass_due(&c, 5000));
	assert_true(c.due);
	assert_false(damon_warm_pass_due(&c, 5000 + DAMON_WARM_PASS_MS - 1));
	assert_true(damon_warm_pass_due(&c, 5000 + DAMON_WARM_PASS_MS));
}

static void cold_passes_come_sooner_while_a_watched_node_has_few_offers(void **state)
{
	struct fx *f = *state;
	struct damon_cold_pass c = {0};
	const uint64_t t0 = 7000, quarter = config_demotion_idle_ms(f->cfg) / 4,
		       half = config_demotion_exchange_ms(f->cfg) / 2;

	assert_true(damon_cold_pass_due(&c, f->cfg, t0, 0, 0, 0));	   /* the first */
	assert_false(damon_cold_pass_due(&c, f->cfg, t0 + half, 0, 0, 0)); /* nothing watched */
	assert_false(damon_cold_pass_due(&c, f->cfg, t0 + half, 0, 1, COLD_LIST_LOW));
	assert_false(damon_cold_pass_due(&c, f->cfg, t0 + half - 1, 0, 1, 0));
	assert_true(damon_cold_pass_due(&c, f->cfg, t0 + half, 0, 1, 0)); /* low */
	assert_false(damon_cold_pass_due(&c, f->cfg, t0 + half + 1, 0, 1, 0));
	assert_true(damon_cold_pass_due(&c, f->cfg, t0 + half + 1, 1, 0, 0)); /* asked */
	assert_false(damon_cold_pass_due(&c, f->cfg, t0 + half + quarter, 1, 0, 0));
	assert_true(damon_cold_pass_due(&c, f->cfg, t0 + half + 1 + quarter, 1, 0, 0));
	assert_true(c.due); /* started: the next record opens it */
}

static void probe_finds_a_slow_page_or_says_none(void **state)
{
	struct fx *f = *state;
	struct damon_region r = region(8, 5, 3);

	/* Pages 0-3 and 7 slow: the first probe finds one. */
	assert_true(damon_feed_probe_slow(&f->feed, &r, 4));
	/* Pages 4-6: fast, fast, absent. */
	r.start = BASE + 4 * PAGEMAP_PAGE_SIZE;
	r.end = BASE + 7 * PAGEMAP_PAGE_SIZE;
	assert_false(damon_feed_probe_slow(&f->feed, &r, 32));
	/* Pages 4-7, probed at 4 and 6 only: page 7 is missed; probed at each: found. */
	r.end = BASE + 8 * PAGEMAP_PAGE_SIZE;
	f->pm.calls = 0;
	assert_false(damon_feed_probe_slow(&f->feed, &r, 2));
	assert_int_equal(f->pm.calls, 2);
	assert_true(damon_feed_probe_slow(&f->feed, &r, 4));
}

static void reads_no_more_than_the_page_budget(void **state)
{
	struct fx *f = *state;
	struct damon_region r = region(PAGES, 20, 1);

	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 3), 3);
	assert_true(f->pm.read == 3);
	assert_int_equal(f->got.n, 3);
}

static void warm_region_is_hot_only_while_a_fast_node_has_room(void **state)
{
	struct fx *f = *state;
	struct damon_region r =
	    region(8, 0, 700); /* no sample found it used, idle long: cold too */

	f->feed.warm = true;
	f->feed.warm_lo = r.start, f->feed.warm_hi = r.end;
	f->feed.warm_pass = true;
	f->feed.room = false;
	/* Warm is never cold: its fast pages are not offered, its slow ones not fed. */
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	assert_int_equal(cold_list_len(f->cold), 0);
	f->feed.room = true;
	f->feed.warm_pass = false; /* only in a warm pass */
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	f->feed.warm_pass = true;
	f->feed.first_thr = 1;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 8);
	assert_int_equal(f->got.n, 5); /* the slow pages 0-3 and 7 */
	/* At the edge of warm data a warm region is no first evidence: two passes make it hot. */
	assert_int_equal(f->got.ev[0].threshold, 0);
	/* Inside warm data (warm neighbours on both sides), it is: one pass. */
	f->got.n = 0;
	f->feed.warm_inside = true;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 8);
	assert_int_equal(f->got.n, 5);
	assert_int_equal(f->got.ev[0].threshold, 1);
	f->feed.warm_inside = false;
	f->feed.first_thr = 0;
	/* Only the part warm the aggregation before too: pages 1 and 2. */
	f->got.n = 0;
	f->feed.warm_lo = r.start + PAGEMAP_PAGE_SIZE;
	f->feed.warm_hi = r.start + 3 * PAGEMAP_PAGE_SIZE;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 2);
	assert_int_equal(f->got.n, 2);
	assert_true(f->got.ev[0].vaddr == r.start + PAGEMAP_PAGE_SIZE);
	f->feed.warm_lo = f->feed.warm_hi = 0; /* none: not hot */
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	/* Used in DAMON_HOT_MIN samples of 20: intensely in part, left to the cuts. */
	f->feed.warm_lo = r.start, f->feed.warm_hi = r.end;
	r.nr_accesses = DAMON_HOT_MIN;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	r.nr_accesses = DAMON_HOT_MIN - 1;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 8);
	/* Beside intense data its warmth may be theirs: not promoted for it. */
	f->feed.by_intense = true;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 0);
	f->feed.by_intense = false;
	r.nr_accesses = 0;
	f->feed.warm = false;
	f->got.n = 0;
	assert_int_equal(damon_feed_region(&f->feed, &f->proc, &r, 1000), 8); /* cold now */
	assert_int_equal(f->got.n, 0);
	assert_int_equal(cold_list_len(f->cold), 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_the_offsets_of_debians_6_12_format),
	    cmocka_unit_test(rejects_a_format_without_a_field_or_an_id),
	    cmocka_unit_test(decodes_a_record_and_refuses_a_short_one),
	    T(hot_region_gives_an_access_for_each_slow_page),
	    T(only_a_full_region_is_first_evidence),
	    T(a_cold_pass_covers_one_aggregation_over_drains),
	    T(cold_passes_come_sooner_while_a_watched_node_has_few_offers),
	    T(region_below_half_of_the_samples_is_not_read),
	    T(idle_region_offers_its_exclusive_fast_pages_on_a_cold_pass),
	    T(probe_finds_a_slow_page_or_says_none),
	    T(reads_no_more_than_the_page_budget),
	    T(warm_region_is_hot_only_while_a_fast_node_has_room),
	    cmocka_unit_test(a_warm_pass_comes_once_a_second),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
