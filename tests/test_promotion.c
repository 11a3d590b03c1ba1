/* promotion tests: the target choice (nearest fast node with room, the fixed list), full
 * nodes paused, pages already fast, the cooldown, on the fake ops of promoter_fake.h. */
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

static void nomem_pauses_the_node_until_free_memory_recovers(void **state)
{
	struct fx *x = *state;
	uint64_t a = 0x7000;

	fake_special(x, getpid(), a, SLOW, 0, 0);
	x->fake.nomem[1] = true;
	assert_int_equal(hot(x, x->self, a, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(fails(x, FAIL_NOMEM), 1);
	assert_int_equal(stats_get(&x->stats, ST_NODE_PAUSES), 1);
	assert_true(promoter_node_paused(x->p, 1));

	/* Still full: the deferred page goes to the next nearest fast node. */
	x->fake.free_pct[1] = 5;
	x->fake.now += 100;
	assert_int_equal(run(x), 1);
	assert_int_equal(fake_find(&x->fake, getpid(), a)->node, 0);
	assert_true(promoter_node_paused(x->p, 1));

	/* Recovered above min_free_percent: node 1 takes pages again. */
	x->fake.free_pct[1] = 40;
	x->fake.nomem[1] = false;
	x->fake.now += 100;
	assert_int_equal(hot(x, x->self, 0x9000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_false(promoter_node_paused(x->p, 1));
	assert_int_equal(promoted_to(x, 1), 1);
	assert_int_equal(stats_get(&x->stats, ST_NODE_PAUSES), 1);
}

static void page_accessed_from_node_1_goes_to_node_1(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	fake_special(x, getpid(), 0x2000, SLOW, 0, 0);
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 2);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x2000)->node, 0);
	assert_int_equal(promoted_to(x, 1), 1);
	assert_int_equal(promoted_to(x, 0), 1);
}

static void full_node_falls_back_to_the_next_nearest(void **state)
{
	struct fx *x = *state;

	x->fake.free_pct[1] = 9; /* below min_free_percent 10 */
	hot(x, x->self, 0x1000, 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[0], 1);
	assert_int_equal(x->fake.moved_to[1], 0);
}

/* Each page chosen for a node takes its room there at once: a node two pages above its reserve
 * takes three pages in an interval (the third leaves it under), not every page queued, although
 * free memory is read once per interval. */
static void node_just_above_its_reserve_takes_only_its_room_in_an_interval(void **state)
{
	struct fx *x = *state;

	x->topo->node[0].mem_total = 100 * BASE;
	x->fake.free_pct[0] = 12; /* min_free_percent 10 */
	x->fake.free_pct[1] = 1;
	for (int i = 0; i < 6; i++)
		assert_int_equal(hot(x, x->self, 0x1000 + (uint64_t)i * BASE, 0), 1);
	assert_int_equal(run(x), 3);
	assert_int_equal(x->fake.moved_to[0], 3);
	assert_int_equal(x->fake.moved_to[1], 0);
}

static void no_usable_node_hands_the_page_back(void **state)
{
	struct fx *x = *state;

	x->fake.free_pct[0] = 1;
	x->fake.free_pct[1] = 1;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 0);
	assert_int_equal(promoter_deferred(x->p), 0);
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1); /* back to counting */
}

static void fixed_mode_uses_the_configured_order(void **state)
{
	struct fx *x = *state;

	x->cfg->promotion.target = TARGET_FIXED;
	x->cfg->promotion.target_nodes.n = 2;
	x->cfg->promotion.target_nodes.node[0] = 1;
	x->cfg->promotion.target_nodes.node[1] = 0;
	hot(x, x->self, 0x1000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[1], 1);
	x->fake.free_pct[1] = 2;
	x->fake.now += 100;
	hot(x, x->self, 0x2000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.moved_to[0], 1);
}

static void page_with_unknown_accessing_node_goes_nearest_to_where_it_is(void **state)
{
	struct fx *x = *state;

	hot(x, x->self, 0x1000, -1);
	assert_int_equal(run(x), 1);
	/* From node 2 both DRAM nodes are 50 away: the tie goes to the lower id. */
	assert_int_equal(x->fake.moved_to[0], 1);
}

static void pages_already_on_a_fast_node_are_skipped(void **state)
{
	struct fx *x = *state;

	fake_special(x, getpid(), 0x1000, 0, 0, 0);
	fake_special(x, getpid(), 0x2000, 1, 0, 0);
	hot(x, x->self, 0x1000, 1);
	hot(x, x->self, 0x2000, 0);
	hot(x, x->self, 0x3000, 0);
	assert_int_equal(run(x), 1);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_SKIPPED_FAST), 2);
	assert_int_equal(x->fake.calls, 1);
	assert_int_equal(x->fake.call_size[0], 1);
	assert_int_equal(fake_find(&x->fake, getpid(), 0x1000)->node, 0);
}

static void promoted_page_is_not_moved_again_within_the_cooldown(void **state)
{
	struct fx *x = *state;
	struct fake_page *pg;

	fake_special(x, getpid(), 0x1000, SLOW, 0, 0);
	pg = fake_find(&x->fake, getpid(), 0x1000);
	hot(x, x->self, 0x1000, 1);
	assert_int_equal(run(x), 1);
	pg->node = SLOW; /* demoted again at once */

	x->fake.now += 500; /* cooldown 1000 ms */
	assert_int_equal(hot(x, x->self, 0x1000, 1), 0);
	assert_int_equal(run(x), 0);
	assert_int_equal(x->fake.calls, 1);

	x->fake.now += 600;
	assert_int_equal(hot(x, x->self, 0x1000, 1), 1);
	assert_int_equal(run(x), 1);
	assert_int_equal(x->fake.calls, 2);
	assert_int_equal(pg->node, 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(nomem_pauses_the_node_until_free_memory_recovers),
	    T(page_accessed_from_node_1_goes_to_node_1),
	    T(full_node_falls_back_to_the_next_nearest),
	    T(node_just_above_its_reserve_takes_only_its_room_in_an_interval),
	    T(no_usable_node_hands_the_page_back),
	    T(fixed_mode_uses_the_configured_order),
	    T(page_with_unknown_accessing_node_goes_nearest_to_where_it_is),
	    T(pages_already_on_a_fast_node_are_skipped),
	    T(promoted_page_is_not_moved_again_within_the_cooldown),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
