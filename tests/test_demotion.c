/* demotion tests: fast nodes under their free target or asked for room (an exchange) shed
 * their coldest pages to the nearest slow node, through the same batch path, on the fake ops of
 * promoter_fake.h with a cold list. */
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

/* The promoter again, now with a cold list; node 0 holds NODE0_PAGES base pages, so one percent
 * of it is one page. */
#define NODE0_PAGES 100

static void with_cold(struct fx *x)
{
	struct promoter_deps d = {.hot = x->hot,
				  .procs = x->procs,
				  .topo = x->topo,
				  .stats = &x->stats,
				  .ops = &x->ops,
				  .cgroups = x->cgroups};

	assert_int_equal(cold_list_new(PROMOTER_WORK_MAX, &x->cold), 0);
	d.cold = x->cold;
	promoter_free(x->p);
	assert_int_equal(promoter_new(&d, &x->p), 0);
	x->topo->node[0].mem_total = NODE0_PAGES * BASE;
	x->fake.account = true;
	x->cfg->promotion.min_free_percent = 10;
	x->cfg->demotion.enabled = true;
	x->cfg->demotion.free_target_percent = 0;
	x->cfg->demotion.min_idle_ms = 60000;
	x->cfg->demotion.rate_limit_mbps = 0;
	/* Well past the idle times the tests give their pages: a page idle since 100 ms is as
	 * old as demotion.min_idle_ms asks, for the free target and an exchange alike. */
	x->fake.now = 100000;
}

/* A page of this process on fast node `node`, offered as cold, idle since `since`. */
static void cold_page(struct fx *x, uint64_t addr, int node, uint64_t since)
{
	struct cold_page c = {.pid = getpid(),
			      .vaddr = addr,
			      .idle_since_ms = since,
			      .offered_ms = x->fake.now,
			      .node = node,
			      .size = HOT_SIZE_BASE};

	fake_special(x, getpid(), addr, node, 0, 0);
	cold_list_offer(x->cold, &c, 1);
}

static uint64_t demoted(struct fx *x, int node, enum stat_demote_reason why)
{
	return atomic_load(&x->stats.demoted_pages[why][node]);
}

static int node_of(struct fx *x, uint64_t addr)
{
	return fake_find(&x->fake, getpid(), addr)->node;
}

static void full_fast_node_trades_its_coldest_pages_for_a_blocked_hot_page(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 5; /* below min_free_percent (10): 5 pages free, 10 wanted */
	x->fake.free_pct[1] = 5;
	for (int i = 0; i < 5; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10); /* lower address: colder */
	/* The hot page finds node 0 (its accessing node) and node 1 full: it asks for room, node
	 * 0 is watched, and in the same interval as much goes down as the page needs (one page,
	 * the coldest) and the page comes up although node 0 stays short (6% free): a trade,
	 * without the source having to find the page again. */
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 1);
	assert_true(cold_list_wanted(x->cold) & 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(atomic_load(&x->stats.demoted_bytes[DEMOTE_EXCHANGE][0]), BASE);
	assert_int_equal(node_of(x, 0x100000), SLOW);
	assert_int_equal(node_of(x, 0x101000), 0);
	assert_int_equal(promoted_to(x, 0), 1);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_CANDIDATES), 1);
	assert_int_equal(cold_list_len(x->cold), 4);

	/* A second hot page the next interval: its own room (the next coldest), then the page. */
	x->fake.now += 100;
	assert_int_equal(hot(x, x->self, 0x2000, 0), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 2);
	assert_int_equal(node_of(x, 0x101000), SLOW);
	assert_int_equal(cold_list_len(x->cold), 3);
	assert_int_equal(promoted_to(x, 0), 2);
	/* Both directions are counted for this process's cgroup (or (other)). */
	assert_int_equal(cgroup_sum(x, "pghotd_cgroup_demoted_pages_total"), 2);
	assert_int_equal(cgroup_sum(x, "pghotd_cgroup_promoted_pages_total"), 2);
	assert_int_equal(x->fake.moved_to[SLOW], 2);
}

/* A trade that made less room than its hot pages asked for (a cold page would not move) trades
 * again in the same interval, from the next coldest page: the last hot page does not wait an
 * interval for it. */
static void short_trade_trades_again_within_the_interval(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 2; /* at its lending floor: nothing lent, the trade first */
	x->fake.free_pct[1] = 2;
	cold_page(x, 0x100000, 0, 100);
	cold_page(x, 0x101000, 0, 110);
	cold_page(x, 0x102000, 0, 120);
	fake_find(&x->fake, getpid(), 0x101000)->busy = 100; /* the second coldest stays busy */
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(hot(x, x->self, 0x2000, 0), 1);
	assert_int_equal(run(x), 2);
	assert_int_equal(node_of(x, 0x100000), SLOW);
	assert_int_equal(node_of(x, 0x101000), 0);
	assert_int_equal(node_of(x, 0x102000), SLOW);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 2);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_BUSY]), 1);
	assert_int_equal(promoted_to(x, 0), 2);
	assert_int_equal(promoter_deferred(x->p), 0);
}

/* A full node lends the free memory of its reserve above its lending floor (a fifth of the
 * reserve), as far as the cold list can pay back: hot pages go up first, and, once none waits,
 * their trade goes down in the same interval (the kernel promotes into its free memory and
 * demotes after). At the floor, or with nothing to pay with, the trade goes down first. */
static void node_above_its_lending_floor_lends_and_is_paid_back(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 5; /* reserve 10 pages, floor 2: lends 3 */
	x->fake.free_pct[1] = 2; /* the other fast node, at its floor: lends nothing */
	for (int i = 0; i < 6; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10);
	for (int i = 0; i < 4; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 0), 1);
	assert_int_equal(run(x), 4);
	/* Three went up on the loan before anything went down; the fourth waited for room. */
	assert_true(x->fake.calls >= 3);
	assert_int_equal(x->fake.call_node[0], 0);
	assert_int_equal(x->fake.call_size[0], 3);
	assert_int_equal(x->fake.call_node[1], SLOW);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 4);
	assert_int_equal(promoted_to(x, 0), 4);
	assert_int_equal(promoter_deferred(x->p), 0);

	/* At the floor (2% free): no loan, the trade first. */
	x->fake.now += 100;
	assert_int_equal(x->fake.moved_out[0], 0); /* four up, four down */
	x->fake.free_pct[0] = 2;
	assert_int_equal(hot(x, x->self, 0x8000, 0), 1);
	x->fake.calls = 0;
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.call_node[0], SLOW);
	assert_int_equal(x->fake.call_node[1], 0);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 5);
}

/* The kernel's mark (high watermarks, boost and lowmem reserve) above the lending floor: the
 * node lends down to the mark only, as the kernel's own tiering promotes down to it. */
static void node_lends_down_to_its_kernel_mark_not_below(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 9;   /* reserve 10 pages, floor 2 */
	x->fake.mark_pages[0] = 6; /* the kernel's mark: lends 3 */
	x->fake.free_pct[1] = 2;
	for (int i = 0; i < 6; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10);
	for (int i = 0; i < 4; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 0), 1);
	assert_int_equal(run(x), 4);
	assert_int_equal(x->fake.call_node[0], 0);
	assert_int_equal(x->fake.call_size[0], 3);
	assert_int_equal(x->fake.call_node[1], SLOW);
	assert_int_equal(promoted_to(x, 0), 4);
	assert_int_equal(promoter_deferred(x->p), 0);
}

/* More hot pages than the loan and the trade can cover, with more cold pages listed than are
 * old enough to trade: the room the trade made is in the free memory read after it, and is not
 * lent again on the strength of the younger ones, so the node keeps its floor (2 pages). */
static void loan_and_trade_together_keep_the_node_above_its_floor(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 8; /* reserve 10 pages, floor 2: lends 6 */
	x->fake.free_pct[1] = 2;
	for (int i = 0; i < 10; i++) /* idle long enough to trade */
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i);
	for (int i = 10; i < 40; i++) /* idle for 100 ms only */
		cold_page(x, 0x100000 + i * BASE, 0, x->fake.now - 100);
	for (int i = 0; i < 30; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 0), 1);
	run(x);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 10);
	assert_int_equal(promoted_to(x, 0), 16); /* the loan, then the trade's room */
	assert_int_equal(8 + x->fake.moved_out[0] / (int64_t)BASE, 2);
}

/* A node above its reserve but not above its kernel mark has no room of its own and lends
 * nothing: the trade goes down first. */
static void node_at_its_kernel_mark_has_no_room_of_its_own(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 20;
	x->fake.mark_pages[0] = 20;
	x->fake.free_pct[1] = 2;
	for (int i = 0; i < 6; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.call_node[0], SLOW);
	assert_int_equal(x->fake.call_node[1], 0);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(promoted_to(x, 0), 1);
}

/* A node just above its reserve: its own room first, then, in the same call, its loan; nothing
 * goes down before them, and only the loan is paid back. */
static void node_above_its_reserve_lends_once_its_own_room_is_taken(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->fake.free_pct[0] = 11; /* its own room down to the reserve of 10, which lends 8 */
	x->fake.free_pct[1] = 2;
	for (int i = 0; i < 6; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10);
	for (int i = 0; i < 5; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 0), 1);
	assert_int_equal(run(x), 5);
	assert_int_equal(x->fake.call_node[0], 0);
	assert_int_equal(x->fake.call_size[0], 5);
	/* Two went up on its own room (down to 10 free pages, 10%), three on the loan. */
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 3);
	assert_int_equal(promoter_deferred(x->p), 0);
}

/* A loan is paid back once no hot page waits to go up, not between their batches (the kernel,
 * too, promotes into its free memory and lets kswapd demote after), or, while hot pages keep
 * coming, once it is a scan interval old. */
static void loan_is_paid_back_once_no_hot_page_waits(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->sources.abit.scan_interval_ms = 1000;
	x->cfg->promotion.interval_ms = 10;
	x->cfg->promotion.rate_limit_mbps = 1; /* 10 ms: 10485 bytes, 2 base pages */
	x->fake.free_pct[0] = 9;	       /* reserve 10 pages, floor 2: lends 7 */
	x->fake.free_pct[1] = 2;
	for (int i = 0; i < 8; i++)
		cold_page(x, 0x100000 + i * BASE, 0, 100 + i * 10);
	for (int i = 0; i < 4; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + i * BASE, 0), 1);
	/* Two go up on the loan, two wait for tokens: nothing goes down yet. */
	assert_int_equal(run(x), 2);
	assert_int_equal(promoter_deferred(x->p), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 0);
	/* The last two go up on what is left of the loan; nothing waits, so all four are paid. */
	x->fake.now += 10;
	assert_int_equal(run(x), 2);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 4);
	assert_int_equal(promoted_to(x, 0), 4);

	/* Hot pages that keep coming: the loan taken now waits while they do... */
	x->fake.now += 10;
	for (int i = 0; i < 3; i++)
		assert_int_equal(hot(x, x->self, 0x10000 + i * BASE, 0), 1);
	assert_int_equal(run(x), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 4);
	/* ...for a scan interval at most: then it is paid (2) with pages still waiting, the next
	 * loan (as far as the last 2 cold pages can pay) waits again, and the third page, which
	 * finds the loan used up, has its room made by a trade (1) and waits for tokens. */
	x->fake.now += 1000;
	assert_int_equal(hot(x, x->self, 0x20000, 0), 1);
	assert_int_equal(hot(x, x->self, 0x21000, 0), 1);
	assert_int_equal(run(x), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 7);
	assert_int_equal(promoter_deferred(x->p), 1);
	assert_int_equal(promoted_to(x, 0), 8);
}

static void exchange_room_lapses_when_its_hot_page_does_not_come(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	/* Room kept 1 s (the least); the page goes back to counting, does not wait. */
	x->cfg->sources.abit.scan_interval_ms = 10;
	x->cfg->promotion.max_retries = 0;
	assert_int_equal(config_exchange_wait_intervals(x->cfg), 0);
	x->fake.free_pct[0] = 2; /* at the lending floor */
	x->fake.free_pct[1] = 2;
	cold_page(x, 0x100000, 0, 100);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0);
	x->fake.now += 100;
	assert_int_equal(run(x), 0); /* the room is made; the page is not back yet */
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	x->fake.now += 3000;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0); /* too late: node 0 is short again for it */
	assert_int_equal(promoted_to(x, 0), 0);
}

/* An exchange takes a page idle for the exchange age (promotion.window_ms here), well under
 * demotion.min_idle_ms; the free target leaves such a page where it is. */
static void exchange_takes_pages_idle_for_the_window_the_free_target_waits(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.window_ms = 3000;
	assert_int_equal(config_demotion_exchange_ms(x->cfg), 3000);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 16; /* 4 pages short of the target */
	cold_page(x, 0x100000, 0, x->fake.now - 3500);
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	/* A hot page waits: now it goes, for an exchange, and the page comes up. */
	x->cfg->demotion.free_target_percent = 0;
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(node_of(x, 0x100000), SLOW);
}

/* A page promoted within promotion.cooldown_ms is not demoted for an exchange although it
 * stayed idle since: its cooldown would keep it from coming back up. */
static void page_promoted_within_its_cooldown_is_not_demoted(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.cooldown_ms = 60000;
	assert_int_equal(hot(x, x->self, 0x100000, 0), 1);
	fake_special(x, getpid(), 0x100000, SLOW, 0, 0);
	assert_int_equal(run(x), 1); /* promoted: cooling from now */
	assert_int_equal(node_of(x, 0x100000), 0);
	x->fake.now += 5000;
	cold_page(x, 0x100000, 0, x->fake.now - 5000);
	cold_page(x, 0x101000, 0, x->fake.now - 4000);
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(demoted(x, 0, DEMOTE_EXCHANGE), 1);
	assert_int_equal(node_of(x, 0x100000), 0); /* the colder, but cooling */
	assert_int_equal(node_of(x, 0x101000), SLOW);
}

/* A page that found every node full waits for an exchange's room two scan intervals (the
 * source's time to offer cold pages again), at least max_retries intervals, then goes back to
 * counting. */
static void hot_page_waits_two_scan_intervals_for_room_then_goes_back(void **state)
{
	struct fx *x = *state;
	unsigned n;

	with_cold(x); /* and no cold page to trade */
	x->cfg->promotion.max_retries = 2;
	x->cfg->promotion.interval_ms = 100;
	x->cfg->sources.abit.scan_interval_ms = 250;
	n = config_exchange_wait_intervals(x->cfg);
	assert_int_equal(n, 5);
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	for (unsigned i = 0; i <= n; i++) {
		assert_int_equal(run(x), 0);
		assert_int_equal(promoter_deferred(x->p), i < n ? 1 : 0);
		x->fake.now += 100;
	}
	/* Back to counting: the source can queue it again. */
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(x->fake.calls, 0);
	/* A short scan interval: max_retries is the least. */
	x->cfg->sources.abit.scan_interval_ms = 50;
	assert_int_equal(config_exchange_wait_intervals(x->cfg), 2);
}

/* An exchange the cold list cannot serve asks the source to offer again, at most once per half
 * a scan interval (the source's rounds), while hot pages wait. */
static void exchange_short_of_cold_pages_asks_again_each_round(void **state)
{
	struct fx *x = *state;
	uint32_t e0;

	with_cold(x); /* no cold page */
	x->cfg->sources.abit.scan_interval_ms = 1000;
	x->fake.free_pct[0] = 5;
	x->fake.free_pct[1] = 5;
	e0 = cold_list_epoch(x->cold);
	assert_int_equal(hot(x, x->self, 0x1000, 0), 1);
	assert_int_equal(run(x), 0); /* the page asks for room, the demotion after asks again */
	assert_int_equal(cold_list_epoch(x->cold) - e0, 1);
	for (int i = 1; i <= 10; i++) {
		x->fake.now += 100;
		assert_int_equal(run(x), 0);
		/* Asked in the first interval that wanted room, then every 500 ms. */
		assert_int_equal(cold_list_epoch(x->cold) - e0, 1 + (unsigned)i / 5);
	}
}

static void node_under_its_free_target_sheds_the_shortfall_coldest_first(void **state)
{
	struct fx *x = *state;
	/* Idle since: a shuffled order, so address order is not coldness order. */
	static const uint64_t since[8] = {500, 100, 700, 300, 800, 200, 600, 400};

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 16; /* 4 pages short */
	for (int i = 0; i < 8; i++)
		cold_page(x, 0x200000 + i * BASE, 0, since[i]);
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 4);
	for (int i = 0; i < 8; i++)
		assert_int_equal(node_of(x, 0x200000 + i * BASE), since[i] <= 400 ? SLOW : 0);
	assert_int_equal(x->fake.moved_to[SLOW], 4);
	/* Back at the target: the next interval leaves the rest. */
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 4);
	assert_int_equal(cold_list_len(x->cold), 4);
}

static void offer_is_trusted_two_scan_intervals_under_a_short_idle_time(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.min_idle_ms = 4000; /* a quarter: 1 s, less than a scan interval... */
	x->cfg->promotion.cooldown_ms = 4000;
	x->cfg->sources.abit.scan_interval_ms = 1500; /* ...whose rounds stamp their offers */
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0x200000, 0, 100);
	cold_page(x, 0x201000, 0, 100);
	x->fake.now += 2900; /* under two intervals after the round that offered them */
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 2);
	/* Older than two intervals: dropped as stale, although the node is short again. */
	cold_page(x, 0x202000, 0, 100);
	x->fake.free_pct[0] = 16; /* with the 2 pages moved out: 2 short */
	x->fake.now += 3100;
	assert_int_equal(run(x), 0);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 2);
	assert_int_equal(cold_list_len(x->cold), 0);
}

static void node_with_room_demotes_nothing_and_is_not_watched(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 10;
	x->fake.free_pct[0] = 50;
	x->fake.free_pct[1] = 50;
	cold_page(x, 0x300000, 0, 100);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls + x->fake.queries, 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	assert_int_equal(cold_list_wanted(x->cold), 0);
	/* Under twice the target (20%): watched, not yet demoted. */
	x->fake.free_pct[1] = 15;
	x->fake.now += 2000;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold), UINT64_C(1) << 1);
	assert_int_equal(x->fake.calls, 0);
}

static void disabled_demotion_moves_nothing_and_watches_nothing(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.enabled = false;
	x->cfg->demotion.free_target_percent = 50;
	x->fake.free_pct[0] = 5;
	cold_page(x, 0x300000, 0, 100);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(cold_list_wanted(x->cold), 0);
	assert_int_equal(cold_list_len(x->cold), 1);
	/* On, the short node is watched (and shed); off again, the mask clears at once. */
	x->cfg->demotion.enabled = true;
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold) & 1, 1);
	x->cfg->demotion.enabled = false;
	x->fake.now += 100;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_wanted(x->cold), 0);
}

static void dry_run_decides_demotions_and_moves_nothing(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->dry_run = true;
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	for (int i = 0; i < 3; i++)
		cold_page(x, 0x400000 + i * BASE, 0, 100 + i);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_DRY_RUN), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 0);
	assert_int_equal(node_of(x, 0x400000), 0);
}

static void cold_page_that_left_its_fast_node_is_skipped(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 17;
	cold_page(x, 0x500000, 0, 100);
	cold_page(x, 0x501000, 0, 200);
	cold_page(x, 0x502000, 0, 300);
	/* Moved since it was found: to the other fast node, and to the slow one. */
	fake_find(&x->fake, getpid(), 0x500000)->node = 1;
	fake_find(&x->fake, getpid(), 0x501000)->node = SLOW;
	assert_int_equal(run(x), 0);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_SKIPPED), 2);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 1);
	assert_int_equal(node_of(x, 0x500000), 1);
	assert_int_equal(x->fake.moved_to[SLOW], 1);
}

static void demotion_pays_from_its_own_bucket_coldest_first(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->promotion.rate_limit_mbps = 1;
	x->cfg->promotion.interval_ms = 100;
	x->cfg->demotion.rate_limit_mbps = 1; /* 100 ms: 104857 bytes, 25 base pages */
	x->cfg->demotion.free_target_percent = 90;
	x->fake.free_pct[0] = 10;
	for (int i = 0; i < 40; i++)
		cold_page(x, 0x600000 + i * BASE, 0, 1000 - i); /* higher address: colder */
	/* Hot pages too: promotion's own bucket still pays for its 25. */
	for (int i = 0; i < 30; i++)
		hot(x, x->self, 0x10000000 + i * BASE, 1);
	assert_int_equal(run(x), 25);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 25);
	for (int i = 0; i < 40; i++)
		assert_int_equal(node_of(x, 0x600000 + i * BASE), i >= 15 ? SLOW : 0);
	assert_int_equal(promoted_to(x, 1), 25);
	/* Only what the bucket could pay for was taken: the other 15 wait in the list, and an
	 * empty bucket takes none. */
	assert_int_equal(cold_list_len(x->cold), 15);
	x->fake.now += 1;
	assert_int_equal(run(x), 0);
	assert_int_equal(cold_list_len(x->cold), 15);
	assert_int_equal(stats_get(&x->stats, ST_DEMOTE_RATE_LIMITED), 0);
}

static void full_slow_node_pauses_demotion_and_counts_apart(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	x->fake.nomem[SLOW] = true;
	cold_page(x, 0x700000, 0, 100);
	cold_page(x, 0x701000, 0, 200);
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOMEM]), 2);
	assert_int_equal(fails(x, FAIL_NOMEM), 0);
	assert_true(promoter_node_paused(x->p, SLOW));
	/* Still short of memory: no slow node takes pages, nothing is tried, and promotion goes
	 * on. */
	x->fake.free_pct[SLOW] = 5;
	x->fake.now += 100;
	cold_page(x, 0x702000, 0, 50);
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 2); /* the failed demotion, then the promotion */
	assert_int_equal(node_of(x, 0x702000), 0);
	assert_true(promoter_node_paused(x->p, SLOW));
}

static void vanished_process_of_a_cold_page_is_left_to_the_sources(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0x800000, 0, 100);
	x->fake.esrch_query = getpid();
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOPROC]), 1);
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 0);
	x->fake.esrch_query = 0;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1); /* its handle is still good */
	assert_int_equal(run(x), 1);
}

static char journal_seen[4096]; /* the last journal entry's fields, joined by '|' */

static int fake_journal(const struct iovec *iov, int n)
{
	size_t len = 0;

	journal_seen[0] = '\0';
	for (int i = 0; i < n; i++) {
		len += (size_t)snprintf(journal_seen + len, sizeof(journal_seen) - len, "%.*s|",
					(int)iov[i].iov_len, (const char *)iov[i].iov_base);
		if (len >= sizeof(journal_seen))
			break;
	}
	return 0;
}

static void each_demoting_interval_logs_one_demote_event(void **state)
{
	struct fx *x = *state;

	with_cold(x);
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	cold_page(x, 0xa00000, 0, 100);
	cold_page(x, 0xa01000, 0, 200);
	log_set_journal_sender(fake_journal);
	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	journal_seen[0] = '\0';
	assert_int_equal(run(x), 0);
	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	log_set_journal_sender(NULL);
	assert_non_null(strstr(journal_seen, "PGHOTD_EVENT=demote|"));
	assert_non_null(strstr(journal_seen, "MESSAGE=demoted 2 pages (8 KiB), left 0, skipped 0, "
					     "failed 0|"));
}

static void cold_page_of_a_process_forgotten_since_the_offer_is_not_moved(void **state)
{
	struct fx *x = *state;
	struct cold_page c = {.pid = getpid(),
			      .vaddr = 0xb00000,
			      .idle_since_ms = 100,
			      .offered_ms = x->fake.now,
			      .node = 0,
			      .size = HOT_SIZE_BASE};
	int64_t h;

	with_cold(x);
	c.offered_ms = x->fake.now; /* with_cold() set the clock */
	x->cfg->demotion.free_target_percent = 20;
	x->fake.free_pct[0] = 18;
	spawn_child(x);
	fake_special(x, x->child, 0xb00000, 0, 0, 0);
	c.pid = x->child;
	c.proc = x->child_h;
	procs_forget(x->procs, x->child_h); /* as after a pid reuse: the handle is stale */
	cold_list_offer(x->cold, &c, 1);
	/* Offered as the source's own process: good. */
	h = procs_handle(x->procs, getpid());
	cold_page(x, 0xb01000, 0, 200);
	assert_int_equal(run(x), 0);
	assert_int_equal(atomic_load(&x->stats.demote_fail[FAIL_NOPROC]), 1);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_pid[0], getpid());
	assert_int_equal(fake_find(&x->fake, x->child, 0xb00000)->node, 0);
	assert_int_equal(node_of(x, 0xb01000), SLOW);
	assert_true(h > 0);
}

static void reload_turns_demotion_on_and_changes_its_target(void **state)
{
	struct fx *x = *state;
	struct pghotd_config *cfg, *cfg2;
	struct config_pub *pub;

	with_cold(x);
	x->fake.free_pct[0] = 15;
	for (int i = 0; i < 10; i++)
		cold_page(x, 0x900000 + i * BASE, 0, 100 + i);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.interval_ms = 10;
	cfg->demotion.enabled = false;
	cfg->demotion.free_target_percent = 20;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	atomic_store(&x->fake.now_reads, 0);
	assert_int_equal(promoter_start(x->p, pub), 0);
	wait_first_interval(x);
	assert_int_equal(x->fake.calls, 0);

	assert_int_equal(config_new_defaults(&cfg2), 0);
	cfg2->promotion.interval_ms = 10;
	cfg2->demotion.free_target_percent = 20; /* 5 pages short */
	config_pub_swap(pub, cfg2);
	promoter_kick(x->p);
	for (int i = 0; i < 5000 && demoted(x, 0, DEMOTE_FREE_TARGET) < 5; i++)
		usleep(1000);
	promoter_stop(x->p);
	assert_int_equal(demoted(x, 0, DEMOTE_FREE_TARGET), 5);
	config_pub_free(pub);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(full_fast_node_trades_its_coldest_pages_for_a_blocked_hot_page),
	    T(short_trade_trades_again_within_the_interval),
	    T(node_above_its_lending_floor_lends_and_is_paid_back),
	    T(node_above_its_reserve_lends_once_its_own_room_is_taken),
	    T(loan_is_paid_back_once_no_hot_page_waits),
	    T(node_lends_down_to_its_kernel_mark_not_below),
	    T(loan_and_trade_together_keep_the_node_above_its_floor),
	    T(node_at_its_kernel_mark_has_no_room_of_its_own),
	    T(exchange_takes_pages_idle_for_the_window_the_free_target_waits),
	    T(page_promoted_within_its_cooldown_is_not_demoted),
	    T(hot_page_waits_two_scan_intervals_for_room_then_goes_back),
	    T(exchange_short_of_cold_pages_asks_again_each_round),
	    T(exchange_room_lapses_when_its_hot_page_does_not_come),
	    T(node_under_its_free_target_sheds_the_shortfall_coldest_first),
	    T(offer_is_trusted_two_scan_intervals_under_a_short_idle_time),
	    T(node_with_room_demotes_nothing_and_is_not_watched),
	    T(disabled_demotion_moves_nothing_and_watches_nothing),
	    T(dry_run_decides_demotions_and_moves_nothing),
	    T(cold_page_that_left_its_fast_node_is_skipped),
	    T(demotion_pays_from_its_own_bucket_coldest_first),
	    T(full_slow_node_pauses_demotion_and_counts_apart),
	    T(vanished_process_of_a_cold_page_is_left_to_the_sources),
	    T(reload_turns_demotion_on_and_changes_its_target),
	    T(each_demoting_interval_logs_one_demote_event),
	    T(cold_page_of_a_process_forgotten_since_the_offer_is_not_moved),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
