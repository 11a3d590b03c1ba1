/* config_pub, one thread playing both roles: when a replaced config may be freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/config_pub.h"

static int destroyed;

static void count_destroy(struct pghotd_config *c)
{
	destroyed++;
	free(c);
}

static struct pghotd_config *mk(unsigned threshold)
{
	struct pghotd_config *c = calloc(1, sizeof(*c));
	c->promotion.threshold = threshold;
	return c;
}

static struct config_pub *setup_pub(void)
{
	struct config_pub *pub;
	destroyed = 0;
	assert_int_equal(config_pub_new(mk(1), count_destroy, &pub), 0);
	return pub;
}

static void test_worker_sees_new_config_after_swap(void **state)
{
	(void)state;
	struct config_pub *pub = setup_pub();
	int w = config_pub_register(pub);

	assert_true(w >= 0);
	assert_int_equal(config_pub_get(pub, w)->promotion.threshold, 1);
	config_pub_swap(pub, mk(2));
	assert_int_equal(config_pub_get(pub, w)->promotion.threshold, 2);
	assert_int_equal(config_pub_current(pub)->promotion.threshold, 2);
	config_pub_free(pub);
}

static void test_old_config_kept_until_every_worker_moved_on(void **state)
{
	(void)state;
	struct config_pub *pub = setup_pub();
	int a = config_pub_register(pub), b = config_pub_register(pub);

	config_pub_get(pub, a);
	config_pub_get(pub, b);
	config_pub_swap(pub, mk(2));
	assert_int_equal(destroyed, 0);
	config_pub_get(pub, a);
	assert_int_equal(config_pub_reclaim(pub), 1);
	assert_int_equal(destroyed, 0);
	config_pub_get(pub, b);
	assert_int_equal(config_pub_reclaim(pub), 0);
	assert_int_equal(destroyed, 1);
	config_pub_free(pub);
	assert_int_equal(destroyed, 2);
}

static void test_stalled_worker_holds_every_later_config(void **state)
{
	(void)state;
	struct config_pub *pub = setup_pub();
	int a = config_pub_register(pub), b = config_pub_register(pub);

	config_pub_get(pub, b);
	for (unsigned i = 2; i <= 5; i++) {
		config_pub_swap(pub, mk(i));
		config_pub_get(pub, a);
	}
	assert_int_equal(destroyed, 0);
	assert_int_equal(config_pub_reclaim(pub), 4);
	config_pub_get(pub, b);
	assert_int_equal(config_pub_reclaim(pub), 0);
	assert_int_equal(destroyed, 4);
	config_pub_free(pub);
}

static void test_unregistered_worker_does_not_block_reclaim(void **state)
{
	(void)state;
	struct config_pub *pub = setup_pub();
	int a = config_pub_register(pub);

	config_pub_get(pub, a);
	config_pub_unregister(pub, a);
	config_pub_swap(pub, mk(2));
	assert_int_equal(destroyed, 0); /* the main thread may still use the old one */
	assert_int_equal(config_pub_reclaim(pub), 0);
	assert_int_equal(destroyed, 1);
	config_pub_free(pub);
}

static void test_register_refuses_beyond_capacity(void **state)
{
	(void)state;
	struct config_pub *pub = setup_pub();

	for (int i = 0; i < CONFIG_PUB_MAX_WORKERS; i++)
		assert_int_equal(config_pub_register(pub), i);
	assert_int_equal(config_pub_register(pub), -ENOSPC);
	config_pub_unregister(pub, 3);
	assert_int_equal(config_pub_register(pub), 3);
	config_pub_free(pub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_worker_sees_new_config_after_swap),
	    cmocka_unit_test(test_old_config_kept_until_every_worker_moved_on),
	    cmocka_unit_test(test_stalled_worker_holds_every_later_config),
	    cmocka_unit_test(test_unregistered_worker_does_not_block_reclaim),
	    cmocka_unit_test(test_register_refuses_beyond_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
