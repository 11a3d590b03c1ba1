/* clock: the one place pghotd reads time. CLOCK_MONOTONIC for intervals, ages and deadlines
 * (it never steps back; the perf sources stamp their samples with it too and systemd's
 * MONOTONIC_USEC is on it), and the calling thread's CPU time for what a worker costs.
 * Each returns 0 if the clock cannot be read. Any thread. */
#ifndef PGHOTD_CLOCK_H
#define PGHOTD_CLOCK_H

#include <stdint.h>

uint64_t clock_monotonic_ns(void);
uint64_t clock_monotonic_us(void);
uint64_t clock_monotonic_ms(void);
/* CLOCK_THREAD_CPUTIME_ID: CPU time the calling thread has used. */
uint64_t clock_thread_cpu_ns(void);
/* CLOCK_PROCESS_CPUTIME_ID: CPU time every thread of the process has used, in microseconds. */
uint64_t clock_process_cpu_us(void);

#endif
