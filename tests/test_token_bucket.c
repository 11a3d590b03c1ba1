/* token_bucket tests: credit, the burst ceiling, debt from an oversized charge, the unlimited
 * rate and a clock that goes backwards, on the bucket alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/token_bucket.h"

#define THP (UINT64_C(2) << 20)

static void bucket_keeps_fractional_credit_across_short_refills(void **state)
{
	struct token_bucket b;

	(void)state;
	token_bucket_init(&b, 1500, 10000, 0);
	assert_true(token_bucket_take(&b, 10000));
	for (uint64_t ms = 1; ms <= 10; ms++)
		token_bucket_refill(&b, ms);
	/* 1.5 bytes per ms: 15 bytes after 10 ms, not 10 from rounding each step down. */
	assert_true(token_bucket_take(&b, 15));
	assert_false(token_bucket_take(&b, 1));
}

static void bucket_caps_credit_at_the_burst(void **state)
{
	struct token_bucket b;

	(void)state;
	token_bucket_init(&b, 1000, 500, 0);
	token_bucket_refill(&b, 100000);
	assert_true(token_bucket_take(&b, 500));
	assert_false(token_bucket_take(&b, 1));
	token_bucket_refund(&b, 10000);
	assert_true(token_bucket_take(&b, 500));
	assert_false(token_bucket_take(&b, 1));
}

static void bucket_lets_a_full_bucket_pay_an_oversized_charge_into_debt(void **state)
{
	struct token_bucket b;

	(void)state;
	token_bucket_init(&b, 1000, 100, 0);
	assert_true(token_bucket_take(&b, 300)); /* full: pays, 200 in debt */
	assert_true(token_bucket_exhausted(&b));
	token_bucket_refill(&b, 250); /* +250: 50 */
	assert_false(token_bucket_take(&b, 300));
	assert_true(token_bucket_take(&b, 50));
}

static void bucket_with_rate_zero_is_unlimited(void **state)
{
	struct token_bucket b;

	(void)state;
	token_bucket_init(&b, 0, 0, 0);
	for (int i = 0; i < 1000; i++)
		assert_true(token_bucket_take(&b, THP));
	assert_false(token_bucket_exhausted(&b));
}

static void bucket_ignores_a_clock_going_backwards(void **state)
{
	struct token_bucket b;

	(void)state;
	token_bucket_init(&b, 1000, 1000, 5000);
	assert_true(token_bucket_take(&b, 1000));
	token_bucket_refill(&b, 4000);
	assert_false(token_bucket_take(&b, 1));
	token_bucket_refill(&b, 5010);
	assert_true(token_bucket_take(&b, 10));
	assert_false(token_bucket_take(&b, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bucket_keeps_fractional_credit_across_short_refills),
	    cmocka_unit_test(bucket_caps_credit_at_the_burst),
	    cmocka_unit_test(bucket_lets_a_full_bucket_pay_an_oversized_charge_into_debt),
	    cmocka_unit_test(bucket_with_rate_zero_is_unlimited),
	    cmocka_unit_test(bucket_ignores_a_clock_going_backwards),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
