/* abit_params: the Accessed-bit source's fixed rules (rounds, steps, batches), shared by its
 * public header and its modules. abit_source.h tells how they fit together. */
#ifndef PGHOTD_ABIT_PARAMS_H
#define PGHOTD_ABIT_PARAMS_H

#define ABIT_HOT_SPEEDUP    2  /* rounds per scan interval: hot pieces are scanned this often */
#define ABIT_MAX_INTERVAL   32 /* rounds between scans of a piece without accesses */
#define ABIT_BACKOFF_SCANS  2  /* access-free scans before the interval doubles */
#define ABIT_REFRESH_ROUNDS 8  /* rounds between re-reads of the process list and VMAs */
/* Scans with accesses that wake a process quiet for a round (abit_scan_wake()): a process
 * that starts using its data, not one stray access. */
#define ABIT_WAKE_SCANS 4
/* After a wake, the step before the quick looks is this many times shorter: a page used all
 * the time is counted twice within a fraction of a step, not a step and a half. */
#define ABIT_HURRY_DIV 4
/* A young process (its first ABIT_REFRESH_ROUNDS rounds) that went quiet after placing its
 * data has ABIT_WAKE_SCANS of its pieces looked at, in turn, at each step, so the use that
 * follows wakes it within a step, not at the next round; at most this many such looks a step
 * over all processes. */
#define ABIT_SENTINELS_PER_STEP 16
/* Re-reads of a process that find its size and resident set (statm) unchanged keep its
 * pieces without reading its maps, this many times in a row at most (a mprotect or a mremap
 * changes neither), unless pieces of it were left out for a cap. */
#define ABIT_MAPS_KEEP_MAX 8
/* Pids new to the process listing and passed over (not selected yet, or nothing mapped yet)
 * looked at again at each step of their first ABIT_REFRESH_ROUNDS rounds, at most: a burst of
 * new processes beyond it waits for the periodic re-read, as every new pid once did. */
#define ABIT_RETRY_MAX	 32
#define ABIT_EVENT_BATCH 256
/* Mode "regions": sampling steps per round, per aggregation interval (one scan interval), and
 * the fewest pages per sampling region a process is given. A sampled page costs about five
 * 8-byte system calls and two reverse-map walks in the kernel, several times a scanned page,
 * so a region is sampled eight times a scan interval at most, and cold ones take turns
 * (abit_regions_sample_every()). */
#define ABIT_SAMPLES_PER_ROUND 4
#define ABIT_SAMPLES_PER_AGGR  (ABIT_SAMPLES_PER_ROUND * ABIT_HOT_SPEEDUP)
#define ABIT_REGION_MIN_PAGES  16

#endif
