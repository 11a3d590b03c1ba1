/* cold_list: the hand-off of demotion candidates, from one thread (test_cold_list_mt has the
 * source and the mover on two). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cold_pages.h"
#include "table/cold_list.h"

static void take_gives_the_coldest_pages_of_the_node_first(void **state)
{
	struct cold_list *cl;
	struct cold_page in[5] = {page(1, 0x1000, 300, 0), page(1, 0x2000, 100, 0),
				  page(2, 0x3000, 200, 1), page(2, 0x4000, 50, 0),
				  page(1, 0x5000, 400, 0)};
	struct cold_page out[8];

	(void)state;
	assert_int_equal(cold_list_new(16, &cl), 0);
	cold_list_offer(cl, in, 5);
	assert_int_equal(cold_list_take(cl, 0, 1000, 10000, 0, out, 2), 2);
	assert_int_equal(out[0].vaddr, 0x4000);
	assert_int_equal(out[1].vaddr, 0x2000);
	/* The rest stays, the other node's page too. */
	assert_int_equal(cold_list_len(cl), 3);
	assert_int_equal(cold_list_take(cl, 0, 1000, 10000, 0, out, 8), 2);
	assert_int_equal(out[0].vaddr, 0x1000);
	assert_int_equal(out[1].vaddr, 0x5000);
	assert_int_equal(cold_list_take(cl, 1, 1000, 10000, 0, out, 8), 1);
	assert_int_equal(out[0].pid, 2);
	assert_int_equal(cold_list_len(cl), 0);
	cold_list_free(cl);
}

static void take_leaves_pages_younger_than_the_idle_time_asked(void **state)
{
	struct cold_list *cl;
	struct cold_page in[2] = {page(1, 0x1000, 100, 0), page(1, 0x2000, 800, 0)};
	struct cold_page out[4];

	(void)state;
	assert_int_equal(cold_list_new(16, &cl), 0);
	cold_list_offer(cl, in, 2);
	/* At 1000 ms: idle 900 and 200 ms; 500 asked. */
	assert_int_equal(cold_list_take(cl, 0, 1000, 10000, 500, out, 4), 1);
	assert_int_equal(out[0].vaddr, 0x1000);
	assert_int_equal(cold_list_len(cl), 1);
	assert_int_equal(cold_list_take(cl, 0, 1000, 10000, 0, out, 4), 1);
	assert_int_equal(out[0].vaddr, 0x2000);
	cold_list_free(cl);
}

/* The source offers a page again (a new epoch) while its first offer waits, too young: the
 * page is taken once, with its latest offer. */
static void page_offered_twice_is_taken_once_with_its_latest_offer(void **state)
{
	struct cold_list *cl;
	struct cold_page first = page(1, 0x1000, 100, 0), again = page(1, 0x1000, 100, 0);
	struct cold_page out[4];

	(void)state;
	again.offered_ms = 1500;
	assert_int_equal(cold_list_new(16, &cl), 0);
	cold_list_offer(cl, &first, 1);
	cold_list_offer(cl, &again, 1);
	assert_int_equal(cold_list_take(cl, 0, 1600, 10000, 0, out, 4), 1);
	assert_int_equal(out[0].offered_ms, 1500);
	assert_int_equal(cold_list_len(cl), 0);
	cold_list_free(cl);
}

static void take_drops_stale_offers_of_every_node(void **state)
{
	struct cold_list *cl;
	struct cold_page in[3] = {page(1, 0x1000, 10, 0), page(1, 0x2000, 20, 1),
				  page(1, 0x3000, 30, 0)};
	struct cold_page out[4];

	(void)state;
	in[2].offered_ms = 5000;
	assert_int_equal(cold_list_new(8, &cl), 0);
	cold_list_offer(cl, in, 3);
	/* At 6000 with a 2000 ms limit only the offer made at 5000 is fresh. */
	assert_int_equal(cold_list_take(cl, 0, 6000, 2000, 0, out, 4), 1);
	assert_int_equal(out[0].vaddr, 0x3000);
	assert_int_equal(cold_list_len(cl), 0);
	cold_list_free(cl);
}

static void full_list_keeps_its_colder_half_and_the_new_offer(void **state)
{
	struct cold_list *cl;
	struct cold_page out[16];

	(void)state;
	assert_int_equal(cold_list_new(8, &cl), 0);
	for (int i = 0; i < 8; i++) {
		struct cold_page c =
		    page(1, 0x1000 * (uint64_t)(i + 1), 100 * (uint64_t)(8 - i), 0);

		cold_list_offer(cl, &c, 1);
	}
	/* Full: the warmest four (idle since 500..800, the most recently used) go, the new one
	 * comes in. */
	{
		struct cold_page c = page(1, 0x9000, 450, 0);

		cold_list_offer(cl, &c, 1);
	}
	assert_int_equal(cold_list_len(cl), 5);
	assert_int_equal(cold_list_take(cl, 0, 1000, 10000, 0, out, 16), 5);
	assert_int_equal(out[0].idle_since_ms, 100);
	assert_int_equal(out[3].idle_since_ms, 400);
	assert_int_equal(out[4].idle_since_ms, 450);
	cold_list_free(cl);
}

static void want_mask_and_epoch_reach_the_source(void **state)
{
	struct cold_list *cl;
	uint32_t e;

	(void)state;
	assert_int_equal(cold_list_new(2, &cl), 0);
	assert_int_equal(cold_list_wanted(cl), 0);
	cold_list_want(cl, UINT64_C(1) << 63 | 1);
	assert_int_equal(cold_list_wanted(cl), UINT64_C(1) << 63 | 1);
	e = cold_list_epoch(cl);
	cold_list_reoffer(cl);
	assert_int_equal(cold_list_epoch(cl), e + 1);
	cold_list_free(cl);
}

static void rejects_a_capacity_below_two(void **state)
{
	struct cold_list *cl = NULL;

	(void)state;
	assert_int_equal(cold_list_new(1, &cl), -EINVAL);
	assert_null(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(take_gives_the_coldest_pages_of_the_node_first),
	    cmocka_unit_test(take_leaves_pages_younger_than_the_idle_time_asked),
	    cmocka_unit_test(page_offered_twice_is_taken_once_with_its_latest_offer),
	    cmocka_unit_test(take_drops_stale_offers_of_every_node),
	    cmocka_unit_test(full_list_keeps_its_colder_half_and_the_new_offer),
	    cmocka_unit_test(want_mask_and_epoch_reach_the_source),
	    cmocka_unit_test(rejects_a_capacity_below_two),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
