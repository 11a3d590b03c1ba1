/* hot_table, single thread: counting, windows, the ready queue's exactly-once rule, promotion
 * outcomes, eviction and process generations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "table/hot_table.h"

#define PAGE	4096u
#define H1	((1u << 16) | 7u) /* procs slot 7, generation 1 */
#define H1_NEXT ((2u << 16) | 7u) /* same slot, next process: the pid was reused */
#define H2	((1u << 16) | 8u)

static const struct hot_params params = {.threshold = 3, .window_ms = 1000, .cooldown_ms = 500};

static int rec(struct hot_table *t, uint32_t proc, uint64_t vaddr, uint64_t now)
{
	struct hot_access a = {.proc = proc, .vaddr = vaddr, .now_ms = now, .node = 2};
	return hot_table_record(t, &a, &params);
}

static unsigned count_of(struct hot_table *t, uint32_t proc, uint64_t vaddr)
{
	unsigned c = 0;
	assert_int_equal(hot_table_peek(t, proc, vaddr, &c), 0);
	return c;
}

static struct hot_table *mk(size_t cap, size_t queue)
{
	struct hot_table *t = NULL;
	assert_int_equal(hot_table_new(cap, queue, &t), 0);
	return t;
}

static void counts_every_access_to_a_page(void **state)
{
	struct hot_table *t = mk(1024, 16);
	(void)state;

	assert_int_equal(rec(t, H1, 0x10000, 1), 0);
	assert_int_equal(rec(t, H1, 0x10000 + 100, 2), 0); /* same page, other byte */
	assert_int_equal(count_of(t, H1, 0x10fff), 2);
	assert_int_equal(hot_table_used(t), 1);
	hot_table_free(t);
}

static void keeps_pages_and_processes_apart(void **state)
{
	struct hot_table *t = mk(1024, 16);
	(void)state;

	rec(t, H1, 0x10000, 1);
	rec(t, H1, 0x11000, 1);
	rec(t, H1, 0x11000, 1);
	rec(t, H2, 0x10000, 1);
	assert_int_equal(count_of(t, H1, 0x10000), 1);
	assert_int_equal(count_of(t, H1, 0x11000), 2);
	assert_int_equal(count_of(t, H2, 0x10000), 1);
	assert_int_equal(hot_table_used(t), 3);
	hot_table_free(t);
}

static void restarts_count_after_a_gap_longer_than_the_window(void **state)
{
	struct hot_table *t = mk(1024, 16);
	(void)state;

	rec(t, H1, 0x10000, 100);
	rec(t, H1, 0x10000, 1100); /* gap == window: same window */
	assert_int_equal(count_of(t, H1, 0x10000), 2);
	rec(t, H1, 0x10000, 2101); /* gap > window */
	assert_int_equal(count_of(t, H1, 0x10000), 1);
	hot_table_free(t);
}

static void queues_a_page_once_when_it_reaches_the_threshold(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[4];
	(void)state;

	assert_int_equal(rec(t, H1, 0x20010, 1), 0);
	assert_int_equal(rec(t, H1, 0x20010, 2), 0);
	assert_int_equal(rec(t, H1, 0x20010, 3), 1);
	assert_int_equal(rec(t, H1, 0x20010, 4), 0);
	assert_int_equal(hot_table_queued(t), 1);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	assert_int_equal(c[0].proc, H1);
	assert_int_equal(c[0].vaddr, 0x20000);
	assert_int_equal(c[0].node, 2);
	assert_int_equal(c[0].count, 3); /* as the access that queued it left it */
	assert_int_equal(hot_table_pop(t, c, 4), 0);
	hot_table_free(t);
}

/* An access of proc H1 to vaddr at now, from node, as seen by a source. */
static struct hot_access seen(uint64_t vaddr, uint64_t now, int node, bool on_slow,
			      enum hot_size size)
{
	return (struct hot_access){.proc = H1,
				   .vaddr = vaddr,
				   .now_ms = now,
				   .node = node,
				   .on_slow = on_slow,
				   .size = size};
}

static void assert_seen(const struct hot_candidate *c, int node, bool on_slow, enum hot_size size)
{
	assert_int_equal(c->node, node);
	assert_int_equal(c->on_slow, on_slow);
	assert_int_equal(c->size, size);
}

static void the_last_access_sets_node_placement_and_size(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[2];
	struct hot_access a = seen(0x40000, 1, 64, true, HOT_SIZE_HUGE);
	/* A node and a size out of range read back as unknown. */
	struct hot_access b = seen(0x50000, 1, HOT_NODE_MAX + 1, false, HOT_SIZE_HUGE + 1);
	(void)state;

	/* Page a: seen huge and slow from node 64 twice, then by a source that cannot tell. */
	assert_int_equal(hot_table_record(t, &a, &params), 0);
	assert_int_equal(hot_table_record(t, &a, &params), 0);
	a = seen(0x40000, 1, 3, false, HOT_SIZE_UNKNOWN);
	assert_int_equal(hot_table_record(t, &a, &params), 1);
	for (int i = 0; i < 3; i++)
		hot_table_record(t, &b, &params);
	assert_int_equal(hot_table_pop(t, c, 2), 2);
	assert_seen(&c[0], 3, false, HOT_SIZE_UNKNOWN);
	assert_seen(&c[1], -1, false, HOT_SIZE_UNKNOWN);
	assert_int_equal(c[1].count, 3); /* the fields did not spill into the count */

	/* Past the window counting starts over, and the fields follow the new accesses. */
	hot_table_done(t, &c[0], HOT_RETRY, 2000);
	a = seen(0x40000, 2000, 64, true, HOT_SIZE_HUGE);
	for (int i = 0; i < 3; i++)
		hot_table_record(t, &a, &params);
	assert_int_equal(hot_table_pop(t, c, 2), 1);
	assert_seen(&c[0], 64, true, HOT_SIZE_HUGE);
	hot_table_free(t);
}

static void does_not_requeue_a_page_the_promoter_holds(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[4];
	(void)state;

	for (int i = 0; i < 3; i++)
		rec(t, H1, 0x30000, 10);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	/* Popped but not settled: more accesses, even a whole new window, must not queue it. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(rec(t, H1, 0x30000, 5000), 0);
	assert_int_equal(hot_table_pop(t, c, 4), 0);
	hot_table_free(t);
}

static void pops_in_queueing_order(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[4];
	(void)state;

	for (int i = 0; i < 3; i++) {
		rec(t, H1, 0x50000, 1);
		rec(t, H1, 0x40000, 1);
	}
	assert_int_equal(hot_table_pop(t, c, 1), 1);
	assert_int_equal(c[0].vaddr, 0x50000);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	assert_int_equal(c[0].vaddr, 0x40000);
	hot_table_free(t);
}

static struct hot_candidate make_hot(struct hot_table *t, uint64_t vaddr, uint64_t now)
{
	struct hot_candidate c;

	for (unsigned i = 0; i < params.threshold; i++)
		rec(t, H1, vaddr, now);
	assert_int_equal(hot_table_pop(t, &c, 1), 1);
	return c;
}

static void ignores_accesses_during_cooldown_after_promotion(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c = make_hot(t, 0x60000, 900);
	(void)state;

	hot_table_done(t, &c, HOT_PROMOTED, 1000);
	assert_int_equal(count_of(t, H1, 0x60000), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(rec(t, H1, 0x60000, 1499), 0);
	assert_int_equal(count_of(t, H1, 0x60000), 0);
	/* Cooldown over: a new episode that can queue the page again. */
	assert_int_equal(rec(t, H1, 0x60000, 1500), 0);
	assert_int_equal(rec(t, H1, 0x60000, 1501), 0);
	assert_int_equal(rec(t, H1, 0x60000, 1502), 1);
	hot_table_free(t);
}

static void cooling_holds_from_promotion_to_the_end_of_the_cooldown(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c = make_hot(t, 0x60000, 900);
	(void)state;

	assert_false(hot_table_cooling(t, H1, 0x60000, 950, 500)); /* queued, not promoted */
	hot_table_done(t, &c, HOT_PROMOTED, 1000);
	assert_true(hot_table_cooling(t, H1, 0x60000, 1499, 500));
	assert_false(hot_table_cooling(t, H1, 0x60000, 1500, 500));
	assert_false(hot_table_cooling(t, H1, 0x90000, 1200, 500)); /* untracked */
	hot_table_free(t);
}

static void retry_returns_the_page_to_counting(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c = make_hot(t, 0x70000, 10);
	(void)state;

	hot_table_done(t, &c, HOT_RETRY, 20);
	assert_int_equal(count_of(t, H1, 0x70000), 0);
	assert_int_equal(rec(t, H1, 0x70000, 30), 0);
	assert_int_equal(rec(t, H1, 0x70000, 30), 0);
	assert_int_equal(rec(t, H1, 0x70000, 30), 1);
	hot_table_free(t);
}

static void drop_frees_the_entry(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c = make_hot(t, 0x80000, 10);
	unsigned n;
	(void)state;

	hot_table_done(t, &c, HOT_DROP, 20);
	assert_int_equal(hot_table_peek(t, H1, 0x80000, &n), -ENOENT);
	assert_int_equal(hot_table_used(t), 0);
	/* Settling twice is harmless: the entry is no longer the promoter's. */
	hot_table_done(t, &c, HOT_PROMOTED, 30);
	assert_int_equal(hot_table_used(t), 0);
	hot_table_free(t);
}

/* A table of 16 slots is one probe window: every page competes with every other. */
static void evicts_the_coldest_page_when_the_window_is_full(void **state)
{
	struct hot_table *t = mk(16, 32);
	unsigned n;
	(void)state;

	assert_int_equal(hot_table_capacity(t), 16);
	for (uint64_t i = 0; i < 16; i++) {
		rec(t, H1, i * PAGE, 1000);
		if (i != 5)
			rec(t, H1, i * PAGE, 1000 + i);
	}
	assert_int_equal(hot_table_used(t), 16);
	assert_int_equal(rec(t, H1, 100 * PAGE, 1020), 0);
	assert_int_equal(hot_table_replacements(t), 1);
	assert_int_equal(hot_table_peek(t, H1, 5 * PAGE, &n), -ENOENT);
	assert_int_equal(count_of(t, H1, 100 * PAGE), 1);
	for (uint64_t i = 0; i < 16; i++)
		if (i != 5)
			assert_int_equal(count_of(t, H1, i * PAGE), 2);
	hot_table_free(t);
}

static void counts_an_expired_window_as_cold(void **state)
{
	struct hot_table *t = mk(16, 32);
	unsigned n;
	(void)state;

	/* Page 3 had 2 accesses long ago; the others one access each, recently. */
	rec(t, H1, 3 * PAGE, 0);
	rec(t, H1, 3 * PAGE, 0);
	for (uint64_t i = 0; i < 16; i++)
		if (i != 3)
			rec(t, H1, i * PAGE, 5000);
	rec(t, H1, 200 * PAGE, 5001);
	assert_int_equal(hot_table_peek(t, H1, 3 * PAGE, &n), -ENOENT);
	hot_table_free(t);
}

static void never_evicts_a_queued_page(void **state)
{
	struct hot_table *t = mk(16, 32);
	struct hot_params one = params;
	struct hot_access a = {.proc = H1, .now_ms = 1, .node = 0};
	(void)state;

	one.threshold = 1;
	for (uint64_t i = 0; i < 16; i++) {
		a.vaddr = i * PAGE;
		assert_int_equal(hot_table_record(t, &a, &one), 1);
	}
	a.vaddr = 99 * PAGE;
	assert_int_equal(hot_table_record(t, &a, &one), -EAGAIN);
	assert_int_equal(hot_table_replacements(t), 0);
	for (uint64_t i = 0; i < 16; i++)
		assert_int_equal(count_of(t, H1, i * PAGE), 1);
	hot_table_free(t);
}

static void evicts_the_only_unqueued_page_even_if_hot(void **state)
{
	struct hot_table *t = mk(16, 32);
	struct hot_params one = params;
	struct hot_access a = {.proc = H1, .now_ms = 1, .node = 0};
	unsigned n;
	(void)state;

	one.threshold = 1;
	for (uint64_t i = 0; i < 15; i++) {
		a.vaddr = i * PAGE;
		hot_table_record(t, &a, &one);
	}
	for (int i = 0; i < 2; i++)
		rec(t, H2, 0x7000000, 1); /* threshold 3: counted, not queued */
	a.vaddr = 99 * PAGE;
	assert_int_equal(hot_table_record(t, &a, &one), 1);
	assert_int_equal(hot_table_peek(t, H2, 0x7000000, &n), -ENOENT);
	assert_int_equal(hot_table_replacements(t), 1);
	hot_table_free(t);
}

static void never_holds_more_pages_than_its_capacity(void **state)
{
	struct hot_table *t = mk(100, 16);
	(void)state;

	assert_int_equal(hot_table_capacity(t), 128);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(rec(t, H1, i * PAGE, i), 0);
	assert_true(hot_table_used(t) <= 128);
	assert_true(hot_table_used(t) >= 64);
	assert_int_equal(hot_table_replacements(t), 1000 - hot_table_used(t));
	hot_table_free(t);
}

static void reports_a_full_queue_and_queues_on_a_later_access(void **state)
{
	struct hot_table *t = mk(1024, 2);
	struct hot_candidate c[4];
	(void)state;

	for (int i = 0; i < 2; i++) {
		rec(t, H1, 0x1000, 1);
		rec(t, H1, 0x2000, 1);
		rec(t, H1, 0x3000, 1);
	}
	rec(t, H1, 0x1000, 1);
	rec(t, H1, 0x2000, 1);
	assert_int_equal(rec(t, H1, 0x3000, 1), -ENOSPC);
	assert_int_equal(hot_table_pop(t, c, 4), 2);
	assert_int_equal(rec(t, H1, 0x3000, 2), 1);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	assert_int_equal(c[0].vaddr, 0x3000);
	assert_int_equal(c[0].count, 4);
	hot_table_free(t);
}

static void never_pops_pages_of_a_forgotten_process(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[4];
	(void)state;

	for (int i = 0; i < 3; i++) {
		rec(t, H1, 0x1000, 1); /* queued */
		rec(t, H2, 0x1000, 1); /* other process: queued too */
	}
	rec(t, H1, 0x2000, 1); /* counted only */
	assert_int_equal(hot_table_forget_proc(t, H1), 2);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	assert_int_equal(c[0].proc, H2);
	assert_int_equal(hot_table_used(t), 1);
	hot_table_free(t);
}

static void keeps_a_reused_pid_apart_from_its_predecessor(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_candidate c[4];
	(void)state;

	rec(t, H1, 0x1000, 1);
	rec(t, H1, 0x1000, 1);
	/* The new process behind the same procs slot starts from zero... */
	assert_int_equal(rec(t, H1_NEXT, 0x1000, 2), 0);
	assert_int_equal(count_of(t, H1_NEXT, 0x1000), 1);
	/* ...and the old one crossing the threshold later is popped under its own handle,
	 * which the promoter then finds stale. */
	assert_int_equal(rec(t, H1, 0x1000, 3), 1);
	assert_int_equal(hot_table_pop(t, c, 4), 1);
	assert_int_equal(c[0].proc, H1);
	assert_int_equal(hot_table_forget_proc(t, H1), 1); /* the popped one: marked */
	hot_table_done(t, &c[0], HOT_PROMOTED, 4);	   /* dead: freed, not cooled */
	assert_int_equal(hot_table_used(t), 1);
	assert_int_equal(count_of(t, H1_NEXT, 0x1000), 1);
	hot_table_free(t);
}

static bool only_h2_valid(void *ctx, uint32_t proc)
{
	(void)ctx;
	return proc == H2;
}

static void reclaims_a_stale_process_entry_before_evicting_a_live_one(void **state)
{
	struct hot_table *t = mk(16, 32);
	unsigned n;
	(void)state;

	hot_table_set_proc_check(t, only_h2_valid, NULL);
	rec(t, H1, 0x1000, 1);
	rec(t, H1, 0x1000, 1); /* warmer than every H2 page */
	for (uint64_t i = 0; i < 15; i++)
		rec(t, H2, i * PAGE, 1);
	assert_int_equal(rec(t, H2, 500 * PAGE, 2), 0);
	assert_int_equal(hot_table_peek(t, H1, 0x1000, &n), -ENOENT);
	assert_int_equal(hot_table_reclaims(t), 1);
	assert_int_equal(hot_table_replacements(t), 0);
	for (uint64_t i = 0; i < 15; i++)
		assert_int_equal(count_of(t, H2, i * PAGE), 1);
	hot_table_free(t);
}

static void rejects_keys_outside_the_packed_layout(void **state)
{
	struct hot_table *t = mk(64, 4);
	(void)state;

	assert_int_equal(rec(t, H1, UINT64_C(1) << HOT_VADDR_BITS, 1), -ERANGE);
	assert_int_equal(rec(t, H1, UINT64_C(0xffff800000000000), 1), -ERANGE);
	assert_int_equal(rec(t, H1, (UINT64_C(1) << HOT_VADDR_BITS) - 1, 1), 0);
	assert_int_equal(rec(t, 0, 0x1000, 1), -EINVAL);
	assert_int_equal(rec(t, 7, 0x1000, 1), -EINVAL);	/* generation 0 */
	assert_int_equal(rec(t, 1u << 27, 0x1000, 1), -EINVAL); /* generation > 11 bits */
	assert_int_equal(hot_table_used(t), 1);
	hot_table_free(t);
}

static void stores_an_entry_in_sixteen_bytes(void **state)
{
	(void)state;
	assert_true(hot_table_entry_size() <= 16);
}

static void records_a_batch_like_single_accesses(void **state)
{
	struct hot_table *t = mk(1024, 16);
	struct hot_access a[150];
	int res[150];
	unsigned queued = 0, bad = 0;
	(void)state;

	/* Three blocks (64 + 64 + 22): ten pages, each new in the first block and then found. */
	for (unsigned i = 0; i < 150; i++)
		a[i] = (struct hot_access){
		    .proc = H1, .vaddr = (uint64_t)(i % 10) * PAGE, .now_ms = i, .node = 1};
	a[39].vaddr = UINT64_C(1) << HOT_VADDR_BITS; /* rejected in place */
	a[140].proc = 0;
	hot_table_record_batch(t, a, 150, &params, res);
	for (unsigned i = 0; i < 150; i++) {
		queued += res[i] == 1;
		bad += res[i] < 0;
		/* Each page's third access (20-29) crosses threshold 3: it alone reports the
		 * push. */
		if (i != 39 && i != 140)
			assert_int_equal(res[i], i / 10 == 2);
	}
	assert_int_equal(res[39], -ERANGE);
	assert_int_equal(res[140], -EINVAL);
	assert_int_equal(queued, 10);
	assert_int_equal(bad, 2);
	assert_int_equal(count_of(t, H1, 0), 14);
	assert_int_equal(count_of(t, H1, 9 * PAGE), 14);
	assert_int_equal(hot_table_queued(t), 10);
	hot_table_record_batch(t, a, 0, &params, NULL);
	hot_table_free(t);
}

/* Fills half of a table with one access pattern: the hash must spread it so that at most
 * max_evicted pages overflow a probe window (0 for the regular patterns a process's address
 * space shows; random keys overflow now and then at any hash), and the rest are found. */
static void fill_half(uint32_t (*proc_of)(unsigned), uint64_t (*vaddr_of)(unsigned),
		      unsigned max_evicted)
{
	enum { CAP = 4096, N = CAP / 2 };
	struct hot_table *t = mk(CAP, 16);
	unsigned found = 0, c;

	for (unsigned i = 0; i < N; i++)
		assert_int_equal(rec(t, proc_of(i), vaddr_of(i), 1), 0);
	assert_true(hot_table_replacements(t) <= max_evicted);
	assert_int_equal(hot_table_used(t) + hot_table_replacements(t), N);
	for (unsigned i = 0; i < N; i++)
		found += hot_table_peek(t, proc_of(i), vaddr_of(i), &c) == 0;
	assert_int_equal(found, hot_table_used(t));
	hot_table_free(t);
}

static uint32_t one_proc(unsigned i)
{
	(void)i;
	return H1;
}

static uint32_t many_procs(unsigned i)
{
	return (1u << 16) | (i % 64); /* 64 processes, 32 pages each */
}

static uint64_t dense(unsigned i)
{
	return UINT64_C(0x7f0000000000) + (uint64_t)i * PAGE;
}

static uint64_t thp_heads(unsigned i)
{
	return UINT64_C(0x7f0000000000) + (uint64_t)i * (2u << 20);
}

static uint64_t gib_apart(unsigned i)
{
	return (uint64_t)(i + 1) << 30;
}

static uint64_t same_pages(unsigned i)
{
	return UINT64_C(0x400000) + (uint64_t)(i / 64) * PAGE;
}

static uint64_t scattered(unsigned i)
{
	uint64_t x = (uint64_t)(i + 1) * UINT64_C(0x9e3779b97f4a7c15);

	return (x ^ x >> 29) & ((UINT64_C(1) << HOT_VADDR_BITS) - PAGE);
}

static void spreads_common_page_patterns_without_evicting_at_half_load(void **state)
{
	(void)state;
	fill_half(one_proc, dense, 0);
	fill_half(one_proc, thp_heads, 0);
	fill_half(one_proc, gib_apart, 0);
	fill_half(many_procs, same_pages, 0);
	fill_half(one_proc, scattered, 4);
}

static void rejects_zero_sizes(void **state)
{
	struct hot_table *t = NULL;
	(void)state;

	assert_int_equal(hot_table_new(0, 4, &t), -EINVAL);
	assert_int_equal(hot_table_new(4, 0, &t), -EINVAL);
	assert_null(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(counts_every_access_to_a_page),
	    cmocka_unit_test(keeps_pages_and_processes_apart),
	    cmocka_unit_test(restarts_count_after_a_gap_longer_than_the_window),
	    cmocka_unit_test(queues_a_page_once_when_it_reaches_the_threshold),
	    cmocka_unit_test(the_last_access_sets_node_placement_and_size),
	    cmocka_unit_test(does_not_requeue_a_page_the_promoter_holds),
	    cmocka_unit_test(pops_in_queueing_order),
	    cmocka_unit_test(cooling_holds_from_promotion_to_the_end_of_the_cooldown),
	    cmocka_unit_test(ignores_accesses_during_cooldown_after_promotion),
	    cmocka_unit_test(retry_returns_the_page_to_counting),
	    cmocka_unit_test(drop_frees_the_entry),
	    cmocka_unit_test(evicts_the_coldest_page_when_the_window_is_full),
	    cmocka_unit_test(counts_an_expired_window_as_cold),
	    cmocka_unit_test(never_evicts_a_queued_page),
	    cmocka_unit_test(evicts_the_only_unqueued_page_even_if_hot),
	    cmocka_unit_test(never_holds_more_pages_than_its_capacity),
	    cmocka_unit_test(reports_a_full_queue_and_queues_on_a_later_access),
	    cmocka_unit_test(never_pops_pages_of_a_forgotten_process),
	    cmocka_unit_test(keeps_a_reused_pid_apart_from_its_predecessor),
	    cmocka_unit_test(reclaims_a_stale_process_entry_before_evicting_a_live_one),
	    cmocka_unit_test(rejects_keys_outside_the_packed_layout),
	    cmocka_unit_test(stores_an_entry_in_sixteen_bytes),
	    cmocka_unit_test(records_a_batch_like_single_accesses),
	    cmocka_unit_test(spreads_common_page_patterns_without_evicting_at_half_load),
	    cmocka_unit_test(rejects_zero_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
