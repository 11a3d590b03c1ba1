/* config_pub under concurrency: workers read the published config in a loop while the main
 * thread swaps; a freed config is poisoned first, so a worker that could still see a
 * reclaimed object reads the poison and fails (and TSan reports the race). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/config_pub.h"

#define WORKERS 3
#define SWAPS	20000
#define MAGIC	0x5eed

static atomic_bool stop;
static _Atomic uint64_t bad_reads;
static _Atomic uint64_t destroyed;

static void poison_destroy(struct pghotd_config *c)
{
	memset(c, 0xa5, sizeof(*c));
	free(c);
	atomic_fetch_add_explicit(&destroyed, 1, memory_order_relaxed);
}

static struct pghotd_config *mk(unsigned v)
{
	struct pghotd_config *c = calloc(1, sizeof(*c));
	c->promotion.threshold = MAGIC;
	c->promotion.batch = v;
	return c;
}

struct worker {
	struct config_pub *pub;
	int slot;
	unsigned last;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	/* Relaxed: stop only ends the loop; no data travels with it. */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		const struct pghotd_config *c = config_pub_get(w->pub, w->slot);
		for (int i = 0; i < 8; i++) {
			if (c->promotion.threshold != MAGIC)
				atomic_fetch_add_explicit(&bad_reads, 1, memory_order_relaxed);
		}
		if (c->promotion.batch < w->last) /* publications are seen in order */
			atomic_fetch_add_explicit(&bad_reads, 1, memory_order_relaxed);
		w->last = c->promotion.batch;
	}
	return NULL;
}

static void test_workers_never_see_a_freed_config(void **state)
{
	(void)state;
	struct config_pub *pub;
	struct worker w[WORKERS];
	pthread_t th[WORKERS];

	assert_int_equal(config_pub_new(mk(0), poison_destroy, &pub), 0);
	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){.pub = pub, .slot = config_pub_register(pub)};
		assert_true(w[i].slot >= 0);
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (unsigned i = 1; i <= SWAPS; i++) {
		config_pub_swap(pub, mk(i));
		config_pub_reclaim(pub);
	}
	atomic_store_explicit(&stop, true, memory_order_relaxed);
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(th[i], NULL);
		config_pub_unregister(pub, w[i].slot);
	}
	assert_int_equal(config_pub_reclaim(pub), 0);
	assert_int_equal(atomic_load(&bad_reads), 0);
	assert_int_equal(atomic_load(&destroyed), SWAPS);
	config_pub_free(pub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_workers_never_see_a_freed_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
