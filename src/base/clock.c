/* clock: see clock.h. */
#include "base/clock.h"

#include <time.h>

static uint64_t clock_read_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t clock_monotonic_ns(void)
{
	return clock_read_ns(CLOCK_MONOTONIC);
}

uint64_t clock_monotonic_us(void)
{
	return clock_read_ns(CLOCK_MONOTONIC) / 1000u;
}

uint64_t clock_monotonic_ms(void)
{
	return clock_read_ns(CLOCK_MONOTONIC) / 1000000u;
}

uint64_t clock_thread_cpu_ns(void)
{
	return clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t clock_process_cpu_us(void)
{
	return clock_read_ns(CLOCK_PROCESS_CPUTIME_ID) / 1000u;
}
