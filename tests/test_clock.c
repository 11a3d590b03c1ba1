/* clock: the monotonic readings agree with each other and with clock_gettime, never step
 * back, and advance across a sleep; the thread CPU clock advances with work and not with a
 * sleep. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "base/clock.h"

static uint64_t gettime_ns(clockid_t id)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(id, &ts), 0);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec d = {.tv_sec = 0, .tv_nsec = ms * 1000000};

	while (nanosleep(&d, &d) != 0)
		;
}

static void monotonic_units_agree_with_clock_gettime(void **state)
{
	uint64_t before = gettime_ns(CLOCK_MONOTONIC);
	uint64_t ns = clock_monotonic_ns(), us = clock_monotonic_us(), ms = clock_monotonic_ms();
	uint64_t after = gettime_ns(CLOCK_MONOTONIC);

	(void)state;
	assert_true(before <= ns && ns <= after);
	assert_true(before / 1000u <= us && us <= after / 1000u);
	assert_true(before / 1000000u <= ms && ms <= after / 1000000u);
}

static void monotonic_advances_across_a_sleep(void **state)
{
	uint64_t ns = clock_monotonic_ns(), ms = clock_monotonic_ms();

	(void)state;
	sleep_ms(20);
	assert_true(clock_monotonic_ns() - ns >= 20000000u);
	assert_true(clock_monotonic_ms() - ms >= 19u); /* whole milliseconds: one may straddle */
}

static void thread_cpu_counts_work_not_sleep(void **state)
{
	uint64_t t0 = clock_thread_cpu_ns(), t1;
	volatile uint64_t spin = 0;

	(void)state;
	assert_true(t0 > 0);
	sleep_ms(50);
	t1 = clock_thread_cpu_ns();
	assert_true(t1 - t0 < 25000000u); /* asleep for 50 ms: a few microseconds of CPU */
	while (clock_thread_cpu_ns() - t1 < 5000000u) /* 5 ms of this thread's CPU */
		spin++;
	assert_true(spin > 0);
	assert_true(clock_thread_cpu_ns() - t1 >= 5000000u);
}

/* The process's clock counts this thread's work too (pghotd_cpu_seconds_total reads it). */
static void process_cpu_includes_the_threads_work(void **state)
{
	uint64_t p0 = clock_process_cpu_us(), t1 = clock_thread_cpu_ns();
	volatile uint64_t spin = 0;

	(void)state;
	while (clock_thread_cpu_ns() - t1 < 5000000u)
		spin++;
	assert_true(spin > 0);
	assert_true(clock_process_cpu_us() - p0 >= 5000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(monotonic_units_agree_with_clock_gettime),
	    cmocka_unit_test(monotonic_advances_across_a_sleep),
	    cmocka_unit_test(thread_cpu_counts_work_not_sleep),
	    cmocka_unit_test(process_cpu_includes_the_threads_work),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
