/* cold_list: see cold_list.h for the contract.
 *
 * A plain array under a mutex, unsorted between takes: a take sorts it coldest first (a few
 * thousand entries, once per interval and node while demoting), which also makes an offer
 * into a full list cheap to trim (sort, keep the colder half). The sort also drops a page's
 * repeated entries (a page too young for a take stays listed, and the source may offer it
 * again): one per page and idle time, the latest offer. */
#include "table/cold_list.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

struct cold_list {
	pthread_mutex_t lock;
	struct cold_page *e;
	size_t n, cap;
	_Atomic uint64_t wanted;
	_Atomic uint32_t epoch;
};

int cold_list_new(size_t capacity, struct cold_list **out)
{
	struct cold_list *cl;

	if (capacity < 2)
		return -EINVAL;
	cl = calloc(1, sizeof(*cl));
	if (!cl)
		return -ENOMEM;
	cl->e = calloc(capacity, sizeof(*cl->e));
	if (!cl->e) {
		free(cl);
		return -ENOMEM;
	}
	pthread_mutex_init(&cl->lock, NULL);
	cl->cap = capacity;
	atomic_init(&cl->wanted, 0);
	atomic_init(&cl->epoch, 0);
	*out = cl;
	return 0;
}

void cold_list_free(struct cold_list *cl)
{
	if (!cl)
		return;
	pthread_mutex_destroy(&cl->lock);
	free(cl->e);
	free(cl);
}

/* Coldest first; a page's entries together, its latest offer first. */
static int by_coldness(const void *a, const void *b)
{
	const struct cold_page *x = a, *y = b;

	if (x->idle_since_ms != y->idle_since_ms)
		return x->idle_since_ms < y->idle_since_ms ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->offered_ms > y->offered_ms ? -1 : x->offered_ms < y->offered_ms;
}

/* Sorts coldest first and keeps one entry per page and idle time: a page offered again (a new
 * epoch while its first offer was too young to be taken) keeps its latest offer. */
static void sort_coldest_first(struct cold_list *cl)
{
	size_t k = 0;

	qsort(cl->e, cl->n, sizeof(*cl->e), by_coldness);
	for (size_t i = 0; i < cl->n; i++) {
		const struct cold_page *c = &cl->e[i], *last = k ? &cl->e[k - 1] : NULL;

		if (!last || c->pid != last->pid || c->vaddr != last->vaddr ||
		    c->idle_since_ms != last->idle_since_ms)
			cl->e[k++] = *c;
	}
	cl->n = k;
}

void cold_list_offer(struct cold_list *cl, const struct cold_page *pages, size_t n)
{
	pthread_mutex_lock(&cl->lock);
	for (size_t i = 0; i < n; i++) {
		if (cl->n == cl->cap) {
			sort_coldest_first(cl);
			if (cl->n > cl->cap / 2)
				cl->n = cl->cap / 2; /* the warmer half goes */
		}
		cl->e[cl->n++] = pages[i];
	}
	pthread_mutex_unlock(&cl->lock);
}

size_t cold_list_take(struct cold_list *cl, int node, uint64_t now_ms, uint64_t max_age_ms,
		      uint64_t min_idle_ms, struct cold_page *out, size_t max)
{
	size_t got = 0, k = 0;

	pthread_mutex_lock(&cl->lock);
	sort_coldest_first(cl);
	for (size_t i = 0; i < cl->n; i++) {
		const struct cold_page *c = &cl->e[i];
		bool stale = now_ms > c->offered_ms && now_ms - c->offered_ms > max_age_ms;

		/* An idle time stamped after now (another thread's clock) counts as none. */
		uint64_t idle_ms = now_ms > c->idle_since_ms ? now_ms - c->idle_since_ms : 0;
		bool idle = idle_ms >= min_idle_ms;

		if (stale)
			continue;
		if (c->node == node && idle && got < max)
			out[got++] = *c;
		else
			cl->e[k++] = *c;
	}
	cl->n = k;
	pthread_mutex_unlock(&cl->lock);
	return got;
}

size_t cold_list_len(struct cold_list *cl)
{
	size_t n;

	pthread_mutex_lock(&cl->lock);
	n = cl->n;
	pthread_mutex_unlock(&cl->lock);
	return n;
}

void cold_list_want(struct cold_list *cl, uint64_t node_mask)
{
	/* Release: pairs with the acquire in cold_list_wanted(); a lone flag, ordered only so
	 * the source sees a mask no older than the free-memory reading that set it. */
	atomic_store_explicit(&cl->wanted, node_mask, memory_order_release);
}

uint64_t cold_list_wanted(const struct cold_list *cl)
{
	/* Acquire: pairs with the release store in cold_list_want(). */
	return atomic_load_explicit(&cl->wanted, memory_order_acquire);
}

void cold_list_reoffer(struct cold_list *cl)
{
	/* Release: pairs with the acquire load in cold_list_epoch(). */
	atomic_fetch_add_explicit(&cl->epoch, 1, memory_order_release);
}

uint32_t cold_list_epoch(const struct cold_list *cl)
{
	/* Acquire: pairs with the release increment in cold_list_reoffer(). */
	return atomic_load_explicit(&cl->epoch, memory_order_acquire);
}
