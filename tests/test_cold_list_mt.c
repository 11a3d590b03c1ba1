/* cold_list with the source offering on one thread and the mover taking on another (the
 * concurrent suite: also run under TSan). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cold_pages.h"
#include "table/cold_list.h"

#define MT_PAGES 20000

static void *offerer(void *arg)
{
	struct cold_list *cl = arg;

	for (int i = 0; i < MT_PAGES; i++) {
		struct cold_page c = page(1, 0x1000 * (uint64_t)i, (uint64_t)i, i % 2);

		cold_list_offer(cl, &c, 1);
		if (i % 1000 == 0)
			cold_list_reoffer(cl);
	}
	return NULL;
}

static void offers_and_takes_from_two_threads_lose_and_invent_nothing(void **state)
{
	struct cold_list *cl;
	pthread_t t;
	struct cold_page out[64];
	size_t got = 0;
	uint64_t last_epoch = 0;

	(void)state;
	/* Room for everything: nothing is dropped for space, so every page is taken once. */
	assert_int_equal(cold_list_new(MT_PAGES, &cl), 0);
	assert_int_equal(pthread_create(&t, NULL, offerer, cl), 0);
	while (got < MT_PAGES) {
		for (int node = 0; node < 2; node++) {
			size_t n = cold_list_take(cl, node, 1000, 10000, 0, out, 64);

			for (size_t i = 0; i < n; i++) {
				assert_int_equal(out[i].node, node);
				assert_int_equal(out[i].vaddr / 0x1000 % 2, (uint64_t)node);
			}
			got += n;
		}
		cold_list_want(cl, got);
		assert_true(cold_list_epoch(cl) >= last_epoch);
		last_epoch = cold_list_epoch(cl);
	}
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(got, MT_PAGES);
	assert_int_equal(cold_list_len(cl), 0);
	cold_list_free(cl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(offers_and_takes_from_two_threads_lose_and_invent_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
