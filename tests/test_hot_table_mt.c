/* hot_table under concurrency: several writer threads record a known access stream while a
 * promoter thread pops and settles. Every page that crosses the threshold must come out of
 * pop() exactly once per hot episode, and counts must match what the writers were told was
 * counted (hot_table.c: exact, except accesses reported as -EAGAIN). Runs under TSan too. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table/hot_table.h"

#define WRITERS	  3
#define PAGES	  4096
#define THRESHOLD 6
#define PAGE	  4096u
#define BASE	  UINT64_C(0x7f0000000000)

static uint32_t handle(unsigned slot, unsigned gen)
{
	return gen << 16 | slot;
}

struct run {
	struct hot_table *t;
	struct hot_params params;
	uint32_t proc;
	pthread_barrier_t start;
	atomic_bool writers_done;
	/* Per page, written by writers with relaxed atomics (tallies, no data travels). */
	_Atomic unsigned recorded[PAGES];
	_Atomic unsigned pushes;
	_Atomic unsigned full;
	/* Written by the promoter thread only, read after join. */
	unsigned popped[PAGES];
	unsigned popped_count[PAGES];
	unsigned bad;
};

struct writer {
	struct run *run;
	unsigned id;
};

/* Page i gets i % 4 accesses from every writer: totals 0, 3, 6, 9 with threshold 6. */
static unsigned accesses_per_writer(unsigned page)
{
	return page % 4;
}

static void tally(struct run *r, unsigned page, int rc)
{
	/* Relaxed: counters only, read after the threads are joined. */
	if (rc >= 0 || rc == -ENOSPC)
		atomic_fetch_add_explicit(&r->recorded[page], 1, memory_order_relaxed);
	if (rc == 1)
		atomic_fetch_add_explicit(&r->pushes, 1, memory_order_relaxed);
	if (rc == -ENOSPC)
		atomic_fetch_add_explicit(&r->full, 1, memory_order_relaxed);
}

/* Odd writers pass their accesses in batches, as the feeder does, even ones one at a time. */
#define WBATCH 64

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct run *r = w->run;
	struct hot_access a[WBATCH];
	unsigned pages[WBATCH];
	int rc[WBATCH];
	size_t n = 0;

	pthread_barrier_wait(&r->start);
	/* Each writer walks the pages in its own order so claims and counts collide. */
	for (unsigned k = 0; k < PAGES; k++) {
		unsigned page = (k * (2 * w->id + 1) + w->id * 977) % PAGES;

		for (unsigned i = 0; i < accesses_per_writer(page); i++) {
			a[n] = (struct hot_access){.proc = r->proc,
						   .vaddr = BASE + (uint64_t)page * PAGE,
						   .now_ms = 10,
						   .node = (int)w->id};
			if (w->id % 2 == 0) {
				tally(r, page, hot_table_record(r->t, &a[n], &r->params));
				continue;
			}
			pages[n++] = page;
			if (n == WBATCH) {
				hot_table_record_batch(r->t, a, n, &r->params, rc);
				for (size_t j = 0; j < n; j++)
					tally(r, pages[j], rc[j]);
				n = 0;
			}
		}
	}
	hot_table_record_batch(r->t, a, n, &r->params, rc);
	for (size_t j = 0; j < n; j++)
		tally(r, pages[j], rc[j]);
	return NULL;
}

static unsigned page_of(const struct hot_candidate *c)
{
	return (unsigned)((c->vaddr - BASE) / PAGE);
}

static void promoter_take(struct run *r, const struct hot_candidate *c, uint32_t proc)
{
	unsigned page = page_of(c);

	if (c->proc != proc || c->vaddr < BASE || page >= PAGES || c->vaddr % PAGE) {
		r->bad++;
		return;
	}
	r->popped[page]++;
	r->popped_count[page] = c->count;
	hot_table_done(r->t, c, HOT_PROMOTED, 11);
}

static void *promoter_main(void *arg)
{
	struct run *r = arg;
	struct hot_candidate c[32];

	pthread_barrier_wait(&r->start);
	for (;;) {
		/* Acquire: pairs with the store-release after the writers are joined; any push
		 * they made is then in the ring for the final drain. */
		bool last = atomic_load_explicit(&r->writers_done, memory_order_acquire);
		size_t n = hot_table_pop(r->t, c, 32);

		for (size_t i = 0; i < n; i++)
			promoter_take(r, &c[i], r->proc);
		if (last && n == 0)
			return NULL;
	}
}

static void run_round(struct run *r)
{
	pthread_t wt[WRITERS], pt;
	struct writer w[WRITERS];

	pthread_barrier_init(&r->start, NULL, WRITERS + 1);
	atomic_store_explicit(&r->writers_done, false, memory_order_relaxed);
	assert_int_equal(pthread_create(&pt, NULL, promoter_main, r), 0);
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){.run = r, .id = i};
		assert_int_equal(pthread_create(&wt[i], NULL, writer_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	/* Release: pairs with the promoter's load-acquire. */
	atomic_store_explicit(&r->writers_done, true, memory_order_release);
	pthread_join(pt, NULL);
	pthread_barrier_destroy(&r->start);
}

static unsigned check_round(struct run *r)
{
	unsigned hot = 0, popped = 0, tracked = 0;

	assert_int_equal(r->bad, 0);
	for (unsigned page = 0; page < PAGES; page++) {
		unsigned rec = atomic_load_explicit(&r->recorded[page], memory_order_relaxed);
		unsigned want = rec >= THRESHOLD ? 1 : 0;
		unsigned count = 0;
		int found = hot_table_peek(r->t, r->proc, BASE + (uint64_t)page * PAGE, &count);

		/* Dropped (-EAGAIN) accesses are the only ones missing from rec. */
		assert_true(rec <= WRITERS * accesses_per_writer(page));
		assert_int_equal(r->popped[page], want);
		hot += want;
		popped += r->popped[page];
		if (want) {
			assert_true(r->popped_count[page] >= THRESHOLD);
			assert_true(r->popped_count[page] <= rec);
			assert_int_equal(found, 0);
			assert_int_equal(count, 0); /* promoted; later accesses were in cooldown */
		}
		tracked += rec > 0;
		if (!want && rec > 0) {
			assert_int_equal(found, 0);
			assert_int_equal(count, rec);
		}
	}
	assert_int_equal(popped, hot);
	assert_int_equal(atomic_load(&r->pushes), hot);
	assert_int_equal(atomic_load(&r->full), 0);
	assert_true(hot >= PAGES / 4); /* drops are rare: most 6- and 9-access pages made it */
	return tracked;
}

static void pops_every_hot_page_exactly_once(void **state)
{
	struct run *r = calloc(1, sizeof(*r));
	unsigned tracked;
	(void)state;

	assert_int_equal(hot_table_new(16 * PAGES, PAGES, &r->t), 0);
	r->params = (struct hot_params){
	    .threshold = THRESHOLD, .window_ms = 100000, .cooldown_ms = 1000000};
	/* Rounds reuse one procs slot with a new generation each time, as when a pid is
	 * reused; the previous process's pages are forgotten in between. */
	for (unsigned round = 1; round <= 8; round++) {
		struct hot_table *t = r->t;
		struct hot_params p = r->params;

		memset(r, 0, sizeof(*r));
		r->t = t;
		r->params = p;
		r->proc = handle(5, round);
		run_round(r);
		tracked = check_round(r);
		assert_int_equal(hot_table_forget_proc(r->t, r->proc), tracked);
		assert_int_equal(hot_table_used(r->t), 0);
	}
	assert_int_equal(hot_table_replacements(r->t), 0);
	hot_table_free(r->t);
	free(r);
}

/* Small ring, promoter answers RETRY: pages go round and round. Every push is popped once,
 * and a page is never in the promoter's hands twice at the same time. */
struct churn {
	struct hot_table *t;
	struct hot_params params;
	atomic_bool writers_done;
	pthread_barrier_t start;
	_Atomic unsigned pushes;
	_Atomic unsigned full;
	unsigned pops;	   /* promoter only */
	unsigned overlaps; /* promoter only */
	unsigned char held[PAGES];
};

static void *churn_writer(void *arg)
{
	struct writer *w = arg;
	struct churn *c = (struct churn *)(void *)w->run;
	uint64_t x = 0x9e3779b97f4a7c15ull * (w->id + 1);

	pthread_barrier_wait(&c->start);
	for (unsigned k = 0; k < 100000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		struct hot_access a = {.proc = handle(1, 1),
				       .vaddr = BASE + (x % 512) * PAGE,
				       .now_ms = k / 64,
				       .node = 0};
		int rc = hot_table_record(c->t, &a, &c->params);

		/* Relaxed: tallies read after join. */
		if (rc == 1)
			atomic_fetch_add_explicit(&c->pushes, 1, memory_order_relaxed);
		if (rc == -ENOSPC) {
			atomic_fetch_add_explicit(&c->full, 1, memory_order_relaxed);
			sched_yield(); /* two cores, four threads: let the promoter drain */
		}
	}
	return NULL;
}

static void churn_settle(struct churn *c, struct hot_candidate *held, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		c->held[page_of(&held[i])] = 0;
		hot_table_done(c->t, &held[i], HOT_RETRY, 0);
	}
}

static void *churn_promoter(void *arg)
{
	struct churn *c = arg;
	struct hot_candidate held[64];
	size_t n;

	pthread_barrier_wait(&c->start);
	for (;;) {
		/* Acquire: pairs with the store-release after the writers are joined. */
		bool last = atomic_load_explicit(&c->writers_done, memory_order_acquire);

		n = hot_table_pop(c->t, held, 64);
		for (size_t i = 0; i < n; i++) {
			if (c->held[page_of(&held[i])]++)
				c->overlaps++;
		}
		c->pops += (unsigned)n;
		churn_settle(c, held, n);
		if (last && n == 0)
			return NULL;
	}
}

static void requeues_after_retry_without_losing_or_duplicating_pushes(void **state)
{
	struct churn *c = calloc(1, sizeof(*c));
	pthread_t wt[WRITERS], pt;
	struct writer w[WRITERS];
	(void)state;

	assert_int_equal(hot_table_new(4096, 16, &c->t), 0);
	c->params = (struct hot_params){.threshold = 3, .window_ms = 50, .cooldown_ms = 0};
	pthread_barrier_init(&c->start, NULL, WRITERS + 1);
	assert_int_equal(pthread_create(&pt, NULL, churn_promoter, c), 0);
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){.run = (struct run *)(void *)c, .id = i};
		assert_int_equal(pthread_create(&wt[i], NULL, churn_writer, &w[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	/* Release: pairs with the promoter's load-acquire. */
	atomic_store_explicit(&c->writers_done, true, memory_order_release);
	pthread_join(pt, NULL);

	assert_int_equal(c->overlaps, 0);
	assert_int_equal(c->pops, atomic_load(&c->pushes));
	assert_true(c->pops > 512); /* pages really went round more than once */
	assert_int_equal(hot_table_queued(c->t), 0);
	pthread_barrier_destroy(&c->start);
	hot_table_free(c->t);
	free(c);
}

/* A table much smaller than the page set: claims, evictions and a forgotten process race.
 * Nothing popped may belong to the forgotten process after forget_proc() returned, and the
 * table never holds more than its capacity. */
struct evict {
	struct hot_table *t;
	struct hot_params params;
	pthread_barrier_t start;
	atomic_bool dead_writer_done;
	atomic_bool writers_done;
	unsigned after_forget; /* promoter only */
	unsigned bad;	       /* promoter only */
	size_t max_used;       /* promoter only */
};

#define DEAD_PROC handle(9, 3)

static void *evict_writer(void *arg)
{
	struct writer *w = arg;
	struct evict *e = (struct evict *)(void *)w->run;
	uint32_t proc = w->id == 0 ? DEAD_PROC : handle(10 + w->id, 1);

	pthread_barrier_wait(&e->start);
	for (unsigned k = 0; k < 60000; k++) {
		struct hot_access a = {.proc = proc,
				       .vaddr = BASE + (uint64_t)((k * 7919u) % 8192) * PAGE,
				       .now_ms = k / 16,
				       .node = 1};
		int rc = hot_table_record(e->t, &a, &e->params);

		if (rc < 0 && rc != -EAGAIN && rc != -ENOSPC)
			abort();
		if (w->id == 0 && k % 4 == 3)
			hot_table_record(e->t, &a, &e->params); /* make some of them hot */
	}
	if (w->id == 0)
		/* Release: pairs with the promoter's load-acquire before forget_proc(). */
		atomic_store_explicit(&e->dead_writer_done, true, memory_order_release);
	return NULL;
}

static void *evict_promoter(void *arg)
{
	struct evict *e = arg;
	struct hot_candidate c[32];
	bool forgotten = false;

	pthread_barrier_wait(&e->start);
	for (;;) {
		/* Acquire: pairs with the store-release after the writers are joined. */
		bool last = atomic_load_explicit(&e->writers_done, memory_order_acquire);
		size_t n = hot_table_pop(e->t, c, 32);

		if (!forgotten &&
		    atomic_load_explicit(&e->dead_writer_done, memory_order_acquire)) {
			hot_table_forget_proc(e->t, DEAD_PROC);
			forgotten = true;
			/* Popped before the forget: settle them unchecked (dead ones are freed). */
			for (size_t i = 0; i < n; i++)
				hot_table_done(e->t, &c[i], HOT_PROMOTED, 0);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			if (forgotten && c[i].proc == DEAD_PROC)
				e->after_forget++;
			if (c[i].vaddr < BASE || c[i].vaddr % PAGE)
				e->bad++;
			hot_table_done(e->t, &c[i], i % 3 ? HOT_PROMOTED : HOT_DROP, 0);
		}
		if (hot_table_used(e->t) > e->max_used)
			e->max_used = hot_table_used(e->t);
		if (last && n == 0)
			return NULL;
	}
}

static void evicts_and_forgets_under_concurrent_writers(void **state)
{
	struct evict *e = calloc(1, sizeof(*e));
	pthread_t wt[WRITERS], pt;
	struct writer w[WRITERS];
	(void)state;

	assert_int_equal(hot_table_new(256, 64, &e->t), 0);
	e->params = (struct hot_params){.threshold = 2, .window_ms = 100, .cooldown_ms = 200};
	pthread_barrier_init(&e->start, NULL, WRITERS + 1);
	assert_int_equal(pthread_create(&pt, NULL, evict_promoter, e), 0);
	for (unsigned i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){.run = (struct run *)(void *)e, .id = i};
		assert_int_equal(pthread_create(&wt[i], NULL, evict_writer, &w[i]), 0);
	}
	for (unsigned i = 0; i < WRITERS; i++)
		pthread_join(wt[i], NULL);
	/* Release: pairs with the promoter's load-acquire. */
	atomic_store_explicit(&e->writers_done, true, memory_order_release);
	pthread_join(pt, NULL);

	assert_int_equal(e->bad, 0);
	assert_int_equal(e->after_forget, 0);
	assert_true(e->max_used <= hot_table_capacity(e->t));
	assert_true(hot_table_replacements(e->t) > 0);
	assert_int_equal(hot_table_forget_proc(e->t, DEAD_PROC), 0);
	pthread_barrier_destroy(&e->start);
	hot_table_free(e->t);
	free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(pops_every_hot_page_exactly_once),
	    cmocka_unit_test(requeues_after_retry_without_losing_or_duplicating_pushes),
	    cmocka_unit_test(evicts_and_forgets_under_concurrent_writers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
