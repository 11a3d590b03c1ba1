/* config_pub: publication of immutable config objects to worker threads.
 *
 * Scheme (quiescent-state based reclamation, after liburcu's QSBR flavour, reduced to one
 * publisher and a fixed set of worker slots):
 * - `cur` holds the current config and `gen` counts publications. The publisher stores the new
 *   pointer, then increments `gen` with release order; a worker that loads `gen` with acquire
 *   order and sees the new value therefore also sees the new pointer.
 * - A worker's get() loads gen, then cur, then stores the gen it saw into its slot's `seen`
 *   with release order: everything it did with its previous config happens-before that store.
 * - A config replaced by publication G is retired with tag G. The publisher frees it once every
 *   registered slot has seen >= G (loaded with acquire, pairing with the worker's release), as
 *   such a worker has called get() after the new pointer was visible and so dropped the old.
 * A worker that races with two swaps stores an older gen and merely delays reclamation. */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/config_pub.h"

struct retired {
	struct pghotd_config *cfg;
	uint64_t tag;
};

struct pub_slot {
	_Atomic uint64_t seen;
	bool used; /* main thread only */
};

struct config_pub {
	_Atomic(struct pghotd_config *) cur;
	_Atomic uint64_t gen;
	struct pub_slot slot[CONFIG_PUB_MAX_WORKERS];
	struct retired *retired; /* main thread only */
	size_t nr_retired;
	size_t cap_retired;
	config_pub_destroy_fn destroy;
};

int config_pub_new(struct pghotd_config *initial, config_pub_destroy_fn destroy,
		   struct config_pub **out)
{
	struct config_pub *pub = calloc(1, sizeof(*pub));

	if (!pub)
		return -ENOMEM;
	atomic_init(&pub->cur, initial);
	atomic_init(&pub->gen, 0);
	for (int i = 0; i < CONFIG_PUB_MAX_WORKERS; i++)
		atomic_init(&pub->slot[i].seen, 0);
	pub->destroy = destroy ? destroy : config_free;
	*out = pub;
	return 0;
}

void config_pub_free(struct config_pub *pub)
{
	if (!pub)
		return;
	for (size_t i = 0; i < pub->nr_retired; i++)
		pub->destroy(pub->retired[i].cfg);
	free(pub->retired);
	pub->destroy(atomic_load_explicit(&pub->cur, memory_order_relaxed)); /* no workers left */
	free(pub);
}

int config_pub_register(struct config_pub *pub)
{
	for (int i = 0; i < CONFIG_PUB_MAX_WORKERS; i++) {
		if (pub->slot[i].used)
			continue;
		/* Relaxed: the worker thread is created after this, and thread creation orders it.
		 */
		atomic_store_explicit(&pub->slot[i].seen,
				      atomic_load_explicit(&pub->gen, memory_order_relaxed),
				      memory_order_relaxed);
		pub->slot[i].used = true;
		return i;
	}
	return -ENOSPC;
}

void config_pub_unregister(struct config_pub *pub, int slot)
{
	if (slot >= 0 && slot < CONFIG_PUB_MAX_WORKERS)
		pub->slot[slot].used = false;
}

const struct pghotd_config *config_pub_get(struct config_pub *pub, int slot)
{
	/* Acquire pairs with the release increment in config_pub_swap(): seeing gen G means
	 * the pointer published with G is visible to the load of cur below. */
	uint64_t g = atomic_load_explicit(&pub->gen, memory_order_acquire);
	struct pghotd_config *c = atomic_load_explicit(&pub->cur, memory_order_acquire);

	/* Release pairs with the acquire load in config_pub_reclaim(): this worker's use of its
	 * previous config happens-before the publisher frees it. */
	atomic_store_explicit(&pub->slot[slot].seen, g, memory_order_release);
	return c;
}

const struct pghotd_config *config_pub_current(struct config_pub *pub)
{
	/* The main thread is the only writer of cur. */
	return atomic_load_explicit(&pub->cur, memory_order_relaxed);
}

static void retire(struct config_pub *pub, struct pghotd_config *old, uint64_t tag)
{
	if (pub->nr_retired == pub->cap_retired) {
		size_t cap = pub->cap_retired ? pub->cap_retired * 2 : 4;
		struct retired *r = realloc(pub->retired, cap * sizeof(*r));

		if (!r) {
			/* Cannot track it: leaking one config beats freeing it under a reader. */
			return;
		}
		pub->retired = r;
		pub->cap_retired = cap;
	}
	pub->retired[pub->nr_retired++] = (struct retired){.cfg = old, .tag = tag};
}

void config_pub_swap(struct config_pub *pub, struct pghotd_config *next)
{
	struct pghotd_config *old = atomic_load_explicit(&pub->cur, memory_order_relaxed);
	uint64_t g = atomic_load_explicit(&pub->gen, memory_order_relaxed) + 1;

	next->generation = g; /* written before the release store below publishes next */
	atomic_store_explicit(&pub->cur, next, memory_order_release);
	/* Release pairs with the acquire load of gen in config_pub_get(). */
	atomic_store_explicit(&pub->gen, g, memory_order_release); /* main thread: only writer */
	retire(pub, old, g);
}

static uint64_t min_seen(struct config_pub *pub)
{
	uint64_t m = UINT64_MAX;

	for (int i = 0; i < CONFIG_PUB_MAX_WORKERS; i++) {
		if (!pub->slot[i].used)
			continue;
		/* Acquire pairs with the release store in config_pub_get(). */
		uint64_t s = atomic_load_explicit(&pub->slot[i].seen, memory_order_acquire);
		if (s < m)
			m = s;
	}
	return m;
}

int config_pub_reclaim(struct config_pub *pub)
{
	uint64_t m = min_seen(pub);
	size_t keep = 0;

	for (size_t i = 0; i < pub->nr_retired; i++) {
		if (pub->retired[i].tag <= m)
			pub->destroy(pub->retired[i].cfg);
		else
			pub->retired[keep++] = pub->retired[i];
	}
	pub->nr_retired = keep;
	return (int)keep;
}
