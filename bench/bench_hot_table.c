/* bench_hot_table: find-or-insert plus count update, pghotd's hot table against liburcu's
 * lock-free hash table (cds_lfht, default memb flavor) doing the same job in the same process.
 *
 * Streams of STREAM_LEN page accesses over PAGES distinct pages, uniform and Zipf(0.99), are
 * generated before any timing. Each case starts from an empty structure, so inserts are part
 * of the cost, and runs 1 or 2 threads over interleaved halves of the stream. The liburcu side
 * gets a pre-allocated node pool (no malloc in the timed loop) and a fixed bucket array the
 * size of the hot table, and bumps a packed count/time word with a CAS, like the hot table.
 * pghotd runs twice: one hot_table_record() per access, and hot_table_record_batch() over
 * blocks of BATCH accesses, the call the daemon's sources make (through the feeder) for each
 * drained block of samples. Last lines: the single-thread Zipf ratios over liburcu, one
 * record() per access first, then ratio_vs_liburcu for the batch call. */
#define _LGPL_SOURCE
#include <urcu.h>
#include <urcu/rculfhash.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "table/hot_table.h"

/* Overridable (-DPAGES=...) to look at the in-cache cost; rank_page() needs a power of 2. */
#ifndef PAGES
#define PAGES (1u << 20) /* distinct pages */
#endif
#ifndef TABLE
#define TABLE (2u << 20) /* hot-table entries and lfht buckets */
#endif
#define STREAM_LEN (8u << 20)
#define RUNS	   3
#define PROC	   ((1u << 16) | 1u)
#define BASE	   UINT64_C(0x7f0000000000)

struct urcu_page {
	struct cds_lfht_node node;
	uint64_t key;
	_Atomic uint64_t meta; /* count (8 bits) | time << 8 */
};

struct urcu_side {
	struct cds_lfht *ht;
	struct urcu_page *pool;
	_Atomic size_t next;
};

struct job {
	const uint32_t *stream;
	size_t from, step;
	struct hot_table *t;
	struct urcu_side *u;
	pthread_barrier_t *start;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Rank -> page: an odd multiplier is a bijection mod 2^20, so hot ranks land far apart. */
static uint32_t rank_page(uint32_t rank)
{
	return (rank * 2654435761u) & (PAGES - 1);
}

static void stream_uniform(uint32_t *s)
{
	uint64_t x = 88172645463325252ull;
	for (size_t i = 0; i < STREAM_LEN; i++)
		s[i] = (uint32_t)(xorshift(&x) >> 20) & (PAGES - 1);
}

/* ln(n+1) - ln(n) = 2 atanh(1/(2n+1)); the series converges fast for z <= 1/3. The bench
 * links no libm, so the Zipf weights are built from this and a short exp series. */
static double ln_step(uint32_t n)
{
	double z = 1.0 / (2.0 * n + 1), z2 = z * z, term = z, sum = 0;

	for (int k = 1; k < 40; k += 2, term *= z2)
		sum += term / k;
	return 2 * sum;
}

/* exp(x) for |x| < 0.2. */
static double exp_small(double x)
{
	double sum = 1, term = 1;

	for (int k = 1; k < 12; k++)
		sum += term *= x / k;
	return sum;
}

/* Zipf(0.99): weight of rank n (1-based) is n^-0.99 = exp(0.01 ln n) / n. */
static int stream_zipf(uint32_t *s)
{
	double *cdf = malloc(PAGES * sizeof(*cdf));
	uint64_t x = 0x2545f4914f6cdd1dull;
	double sum = 0, ln = 0;

	if (!cdf)
		return -1;
	for (uint32_t r = 0; r < PAGES; r++) {
		if (r > 0)
			ln += ln_step(r);
		cdf[r] = (sum += exp_small(0.01 * ln) / (r + 1));
	}
	for (size_t i = 0; i < STREAM_LEN; i++) {
		double u = (double)(xorshift(&x) >> 11) * 0x1.0p-53 * sum;
		uint32_t lo = 0, hi = PAGES - 1;

		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		s[i] = rank_page(lo);
	}
	free(cdf);
	return 0;
}

static const struct hot_params bench_params = {
    .threshold = 200, .window_ms = 1000, .cooldown_ms = 1000};

static void *run_hot(void *arg)
{
	struct job *j = arg;
	struct hot_access a = {.proc = PROC, .node = 0};

	pthread_barrier_wait(j->start);
	for (size_t i = j->from; i < STREAM_LEN; i += j->step) {
		a.vaddr = BASE + ((uint64_t)j->stream[i] << 12);
		a.now_ms = i >> 12;
		(void)hot_table_record(j->t, &a, &bench_params);
	}
	return NULL;
}

/* The same stream through hot_table_record_batch(), BATCH accesses at a time, as the feeder
 * passes a source's drained samples. */
#define BATCH 64

static void *run_hot_batch(void *arg)
{
	struct job *j = arg;
	struct hot_access a[BATCH];
	int res[BATCH];
	size_t n = 0;

	pthread_barrier_wait(j->start);
	for (size_t i = j->from; i < STREAM_LEN; i += j->step) {
		a[n++] = (struct hot_access){.proc = PROC,
					     .vaddr = BASE + ((uint64_t)j->stream[i] << 12),
					     .now_ms = i >> 12,
					     .node = 0};
		if (n == BATCH) {
			hot_table_record_batch(j->t, a, n, &bench_params, res);
			n = 0;
		}
	}
	hot_table_record_batch(j->t, a, n, &bench_params, res);
	return NULL;
}

/* The hot table's hash (Fibonacci hashing), so both sides spread the same keys equally
 * well: cds_lfht takes the bucket from the low bits, which the product spreads over a run of
 * consecutive pages as evenly as the hot table's top bits. */
static unsigned long urcu_hash(uint64_t key)
{
	return (unsigned long)(key * UINT64_C(0x9e3779b97f4a7c15));
}

static int urcu_match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct urcu_page, node)->key == *(const uint64_t *)key;
}

static void urcu_bump(struct urcu_page *pg, uint64_t now)
{
	uint64_t m = atomic_load_explicit(&pg->meta, memory_order_acquire);
	uint64_t n;

	do {
		unsigned c = (unsigned)(m & 0xff);
		n = (now << 8) | (c < 255 ? c + 1 : c);
		/* acq_rel CAS, as the hot table's count update. */
	} while (!atomic_compare_exchange_weak_explicit(&pg->meta, &m, n, memory_order_acq_rel,
							memory_order_acquire));
}

static void urcu_record(struct urcu_side *u, uint64_t key, uint64_t now)
{
	unsigned long h = urcu_hash(key);
	struct cds_lfht_iter it;
	struct cds_lfht_node *node;
	struct urcu_page *pg;

	rcu_read_lock();
	cds_lfht_lookup(u->ht, h, urcu_match, &key, &it);
	node = cds_lfht_iter_get_node(&it);
	if (!node) {
		/* Relaxed: a pool index; the node is published by cds_lfht_add_unique. */
		pg = &u->pool[atomic_fetch_add_explicit(&u->next, 1, memory_order_relaxed)];
		pg->key = key;
		atomic_init(&pg->meta, 0);
		cds_lfht_node_init(&pg->node);
		node = cds_lfht_add_unique(u->ht, h, urcu_match, &key, &pg->node);
		/* A racing add won: our pool node is simply wasted (rare, bench only). */
	}
	urcu_bump(caa_container_of(node, struct urcu_page, node), now);
	rcu_read_unlock();
}

static void *run_urcu(void *arg)
{
	struct job *j = arg;

	rcu_register_thread();
	pthread_barrier_wait(j->start);
	for (size_t i = j->from; i < STREAM_LEN; i += j->step)
		urcu_record(j->u, ((uint64_t)PROC << 36) | j->stream[i], i >> 12);
	rcu_unregister_thread();
	return NULL;
}

/* One timed pass over the stream with nthreads; returns updates per second. */
static double run_case(void *(*fn)(void *), const uint32_t *stream, unsigned nthreads,
		       struct hot_table *t, struct urcu_side *u)
{
	pthread_t th[2];
	struct job jobs[2];
	pthread_barrier_t start;
	double t0, t1;

	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (unsigned i = 0; i < nthreads; i++) {
		jobs[i] = (struct job){
		    .stream = stream, .from = i, .step = nthreads, .t = t, .u = u, .start = &start};
		pthread_create(&th[i], NULL, fn, &jobs[i]);
	}
	t0 = now_s();
	pthread_barrier_wait(&start);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	t1 = now_s();
	pthread_barrier_destroy(&start);
	return STREAM_LEN / (t1 - t0);
}

static double bench_hot(void *(*fn)(void *), const uint32_t *stream, unsigned nthreads,
			double *bytes_per_page)
{
	struct hot_table *t;
	long before = rss_kib();
	double ups;

	if (hot_table_new(TABLE, 1u << 16, &t) < 0)
		exit(1);
	ups = run_case(fn, stream, nthreads, t, NULL);
	*bytes_per_page = (double)(rss_kib() - before) * 1024 / hot_table_used(t);
	hot_table_free(t);
	return ups;
}

static double bench_urcu(const uint32_t *stream, unsigned nthreads, double *bytes_per_page)
{
	struct urcu_side u = {0};
	long before = rss_kib();
	double ups;

	u.ht = cds_lfht_new(TABLE, TABLE, TABLE, 0, NULL);
	u.pool = malloc((size_t)(PAGES + 1024) * sizeof(*u.pool));
	if (!u.ht || !u.pool)
		exit(1);
	/* Fault the pool in before timing, as hot_table_new() initialises every slot. */
	memset(u.pool, 0, (size_t)(PAGES + 1024) * sizeof(*u.pool));
	ups = run_case(run_urcu, stream, nthreads, NULL, &u);
	*bytes_per_page = (double)(rss_kib() - before) * 1024 /
			  atomic_load_explicit(&u.next, memory_order_relaxed);
	cds_lfht_destroy(u.ht, NULL);
	free(u.pool);
	return ups;
}

struct result {
	double one, batch, urcu;
	double one_mem, urcu_mem;
};

/* Runs alternate between the three so a busy machine slows them alike; best of RUNS. */
static struct result bench_stream(const uint32_t *stream, unsigned nthreads)
{
	struct result best = {0}, r;

	for (int i = 0; i < RUNS; i++) {
		double mem;

		r.one = bench_hot(run_hot, stream, nthreads, &r.one_mem);
		r.batch = bench_hot(run_hot_batch, stream, nthreads, &mem);
		r.urcu = bench_urcu(stream, nthreads, &r.urcu_mem);
		best.one = r.one > best.one ? r.one : best.one;
		best.batch = r.batch > best.batch ? r.batch : best.batch;
		best.urcu = r.urcu > best.urcu ? r.urcu : best.urcu;
		best.one_mem = r.one_mem;
		best.urcu_mem = r.urcu_mem;
	}
	return best;
}

int main(void)
{
	uint32_t *uni = malloc(STREAM_LEN * sizeof(*uni));
	uint32_t *zipf = malloc(STREAM_LEN * sizeof(*zipf));
	struct result zipf1 = {0};

	if (!uni || !zipf || stream_zipf(zipf) < 0)
		return 1;
	stream_uniform(uni);
	printf("streams: %u accesses over %u distinct pages; hot table %u entries; best of %d\n",
	       STREAM_LEN, PAGES, TABLE, RUNS);
	for (unsigned nt = 1; nt <= 2; nt++) {
		for (int z = 0; z < 2; z++) {
			struct result r = bench_stream(z ? zipf : uni, nt);

			printf("%-7s threads=%u  pghotd record %6.2f M/s  record_batch %6.2f M/s  "
			       "liburcu %6.2f M/s  ratio %.2f / %.2f\n",
			       z ? "zipf" : "uniform", nt, r.one / 1e6, r.batch / 1e6, r.urcu / 1e6,
			       r.one / r.urcu, r.batch / r.urcu);
			if (nt == 1 && z)
				zipf1 = r;
		}
	}
	printf("memory per entry: pghotd %zu B/slot, %.1f B/tracked page (RSS, table 2x pages); "
	       "liburcu node %zu B, %.1f B/tracked page (RSS, pool + buckets)\n",
	       hot_table_entry_size(), zipf1.one_mem, sizeof(struct urcu_page), zipf1.urcu_mem);
	printf("ratio_vs_liburcu_single: %.2f\n", zipf1.one / zipf1.urcu);
	printf("ratio_vs_liburcu: %.2f\n", zipf1.batch / zipf1.urcu);
	free(uni);
	free(zipf);
	return 0;
}
