/* procs: process identity, see procs.h for the contract.
 *
 * Layout. slots[] holds one tracked process each. A slot's identity word packs
 * LIVE (bit 63) | generation (bits 32-47) | pid (bits 0-31) so a lock-free reader sees the pid
 * and the generation together in one load. The start time sits beside it and is touched only
 * under the mutex (insert, forget, sweep). index[] is an open-addressing map pid -> slot+1
 * (0 empty, INDEX_TOMB deleted) probed linearly; writers hold the mutex, readers stop after
 * max_probe cells, the longest probe any insert ever used, so tombstones never make a lookup
 * of an unknown pid walk the whole map.
 *
 * Ordering. A writer fills a slot's identity (store-release) before it publishes slot+1 in
 * index[] (store-release); a reader loads the index cell (load-acquire, pairs with that
 * publish) and then the identity (load-acquire, pairs with the identity store), and trusts
 * only an identity that is LIVE and names the pid it looked for. Forget clears LIVE first, so
 * a reader racing a forget either sees the old live identity (the handle was valid a moment
 * ago) or a dead one, never a half-written one. */
#include "sys/procfs.h"
#include "table/procs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDENT_LIVE (UINT64_C(1) << 63)
#define SLOT_BITS  16
#define SLOT_MASK  ((1u << SLOT_BITS) - 1)
#define INDEX_TOMB UINT32_MAX

_Static_assert(PROCS_SLOT(0xffffffffu) == SLOT_MASK, "PROCS_SLOT() must be the slot bits");

struct proc_slot {
	_Atomic uint64_t ident;
	uint64_t starttime; /* under lock */
	unsigned gen;	    /* under lock: generation of the current or last occupant */
};

struct procs {
	char *root;
	unsigned max;
	pthread_mutex_t lock;
	struct proc_slot *slots;
	unsigned *free_stack; /* under lock */
	unsigned free_top;    /* under lock */
	_Atomic uint32_t *index;
	size_t index_mask;
	_Atomic unsigned max_probe;
};

static uint64_t ident_pack(unsigned gen, pid_t pid)
{
	return IDENT_LIVE | ((uint64_t)gen << 32) | (uint32_t)pid;
}

static size_t pid_hash(pid_t pid)
{
	uint64_t x = (uint32_t)pid * UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(x >> 32);
}

static size_t round_pow2(size_t n)
{
	size_t r = 1;
	while (r < n)
		r <<= 1;
	return r;
}

int procs_new(const char *procfs_root, unsigned max, struct procs **out)
{
	struct procs *p;

	if (!procfs_root || max == 0 || max > SLOT_MASK)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->root = strdup(procfs_root);
	p->max = max;
	p->slots = calloc(max, sizeof(*p->slots));
	p->free_stack = calloc(max, sizeof(*p->free_stack));
	p->index_mask = round_pow2((size_t)max * 2) - 1;
	p->index = calloc(p->index_mask + 1, sizeof(*p->index));
	if (!p->root || !p->slots || !p->free_stack || !p->index) {
		procs_free(p);
		return -ENOMEM;
	}
	/* Pop order hands out slot 0 first: the stack holds max-1 .. 0. */
	for (unsigned i = 0; i < max; i++)
		p->free_stack[i] = max - 1 - i;
	p->free_top = max;
	*out = p;
	return 0;
}

void procs_free(struct procs *p)
{
	if (!p)
		return;
	pthread_mutex_destroy(&p->lock);
	free(p->index);
	free(p->free_stack);
	free(p->slots);
	free(p->root);
	free(p);
}

/* -ESRCH when the process is gone (no stat file), other negative errno on a bad file. */
static int procs_read_starttime(const struct procs *p, pid_t pid, uint64_t *out)
{
	struct procfs_stat st;
	int r = procfs_read_stat(p->root, pid, &st);

	if (r < 0)
		return r;
	*out = st.starttime;
	return 0;
}

/* Any thread: slot of a live pid, or -1. */
static int procs_lookup(const struct procs *p, pid_t pid)
{
	unsigned probes = atomic_load_explicit(&p->max_probe, memory_order_relaxed);
	size_t h = pid_hash(pid);

	for (unsigned i = 0; i <= probes; i++) {
		/* Acquire: pairs with the store-release in procs_index_insert(). */
		uint32_t c =
		    atomic_load_explicit(&p->index[(h + i) & p->index_mask], memory_order_acquire);
		uint64_t id;

		if (c == 0)
			return -1;
		if (c == INDEX_TOMB)
			continue;
		/* Acquire: pairs with the identity store-release in procs_insert(). */
		id = atomic_load_explicit(&p->slots[c - 1].ident, memory_order_acquire);
		if ((id & IDENT_LIVE) && (pid_t)(uint32_t)id == pid)
			return (int)(c - 1);
	}
	return -1;
}

/* The handle of slot while it holds identity id. */
static uint32_t handle_pack(unsigned slot, uint64_t id)
{
	return slot | (uint32_t)((id >> 32) & 0xffff) << SLOT_BITS;
}

static uint32_t handle_of(const struct procs *p, unsigned slot)
{
	/* Acquire: pairs with the identity store-release in procs_insert(). */
	return handle_pack(slot, atomic_load_explicit(&p->slots[slot].ident, memory_order_acquire));
}

/* Under lock. */
static void procs_index_insert(struct procs *p, pid_t pid, unsigned slot)
{
	size_t h = pid_hash(pid);

	for (unsigned i = 0;; i++) {
		_Atomic uint32_t *c = &p->index[(h + i) & p->index_mask];
		uint32_t v = atomic_load_explicit(c, memory_order_relaxed);

		if (v != 0 && v != INDEX_TOMB)
			continue;
		if (i > atomic_load_explicit(&p->max_probe, memory_order_relaxed))
			/* Relaxed: readers may miss a longer probe for a moment; they then take
			 * the locked path and find the pid there. */
			atomic_store_explicit(&p->max_probe, i, memory_order_relaxed);
		/* Release: pairs with the load-acquire in procs_lookup(). */
		atomic_store_explicit(c, slot + 1, memory_order_release);
		return;
	}
}

/* Under lock. */
static void procs_index_remove(struct procs *p, pid_t pid, unsigned slot)
{
	size_t h = pid_hash(pid);

	for (size_t i = 0; i <= p->index_mask; i++) {
		_Atomic uint32_t *c = &p->index[(h + i) & p->index_mask];
		uint32_t v = atomic_load_explicit(c, memory_order_relaxed);

		if (v == 0)
			return;
		if (v == slot + 1) {
			/* Relaxed: a reader that still sees the old cell checks LIVE in the
			 * identity, which procs_forget_locked() cleared first. */
			atomic_store_explicit(c, INDEX_TOMB, memory_order_relaxed);
			return;
		}
	}
}

/* Under lock. */
static int64_t procs_insert(struct procs *p, pid_t pid)
{
	uint64_t start;
	unsigned slot;
	int r;

	r = procs_read_starttime(p, pid, &start);
	if (r < 0)
		return r;
	if (p->free_top == 0)
		return -ENOSPC;
	slot = p->free_stack[--p->free_top];
	p->slots[slot].gen = p->slots[slot].gen % PROCS_GEN_MAX + 1;
	p->slots[slot].starttime = start;
	/* Release: pairs with the load-acquire of the identity in procs_lookup()/valid(). */
	atomic_store_explicit(&p->slots[slot].ident, ident_pack(p->slots[slot].gen, pid),
			      memory_order_release);
	procs_index_insert(p, pid, slot);
	return handle_of(p, slot);
}

int64_t procs_handle(struct procs *p, pid_t pid)
{
	int64_t r;
	int slot;

	if (pid <= 0)
		return -ESRCH;
	slot = procs_lookup(p, pid);
	if (slot >= 0)
		return handle_of(p, (unsigned)slot);
	pthread_mutex_lock(&p->lock);
	slot = procs_lookup(p, pid);
	r = slot >= 0 ? (int64_t)handle_of(p, (unsigned)slot) : procs_insert(p, pid);
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* Any thread: the live identity a handle names, or 0. */
static uint64_t procs_ident(const struct procs *p, uint32_t handle)
{
	unsigned slot = handle & SLOT_MASK;
	uint64_t id;

	if (slot >= p->max)
		return 0;
	/* Acquire: pairs with the identity store-release in procs_insert(). */
	id = atomic_load_explicit(&p->slots[slot].ident, memory_order_acquire);
	if (!(id & IDENT_LIVE) || ((id >> 32) & 0xffff) != handle >> SLOT_BITS)
		return 0;
	return id;
}

int procs_pid(const struct procs *p, uint32_t handle, pid_t *pid)
{
	uint64_t id = procs_ident(p, handle);

	if (!id)
		return -ESTALE;
	*pid = (pid_t)(uint32_t)id;
	return 0;
}

unsigned procs_max(const struct procs *p)
{
	return p->max;
}

int procs_at(const struct procs *p, unsigned slot, uint32_t *handle, pid_t *pid)
{
	uint64_t id;

	if (slot >= p->max)
		return -ESTALE;
	/* Acquire: pairs with the identity store-release in procs_insert(). */
	id = atomic_load_explicit(&p->slots[slot].ident, memory_order_acquire);
	if (!(id & IDENT_LIVE))
		return -ESTALE;
	*handle = handle_pack(slot, id);
	*pid = (pid_t)(uint32_t)id;
	return 0;
}

bool procs_valid(const struct procs *p, uint32_t handle)
{
	return procs_ident(p, handle) != 0;
}

/* Under lock. */
static void procs_forget_locked(struct procs *p, unsigned slot)
{
	uint64_t id = atomic_load_explicit(&p->slots[slot].ident, memory_order_relaxed);

	/* Relaxed is enough for the store itself: readers only ever trust LIVE identities,
	 * and a reader that still sees LIVE just saw a handle that was valid a moment ago. */
	atomic_store_explicit(&p->slots[slot].ident, id & ~IDENT_LIVE, memory_order_relaxed);
	procs_index_remove(p, (pid_t)(uint32_t)id, slot);
	p->free_stack[p->free_top++] = slot;
}

void procs_forget(struct procs *p, uint32_t handle)
{
	pthread_mutex_lock(&p->lock);
	if (procs_ident(p, handle))
		procs_forget_locked(p, handle & SLOT_MASK);
	pthread_mutex_unlock(&p->lock);
}

int procs_sweep(struct procs *p)
{
	int n = 0;

	pthread_mutex_lock(&p->lock);
	for (unsigned s = 0; s < p->max; s++) {
		uint64_t id = atomic_load_explicit(&p->slots[s].ident, memory_order_relaxed);
		uint64_t start;
		int r;

		if (!(id & IDENT_LIVE))
			continue;
		r = procs_read_starttime(p, (pid_t)(uint32_t)id, &start);
		/* A stat file we cannot parse is not proof of exit: keep the process. */
		if (r == -ESRCH || (r == 0 && start != p->slots[s].starttime)) {
			procs_forget_locked(p, s);
			n++;
		}
	}
	pthread_mutex_unlock(&p->lock);
	return n;
}

int procs_verify(struct procs *p, uint32_t handle)
{
	uint64_t start = 0, id = procs_ident(p, handle);
	int r;

	if (!id)
		return -ESTALE;
	/* The read is outside the lock (a file read); the slot is judged under it, and only if it
	 * still holds the same identity. */
	r = procs_read_starttime(p, (pid_t)(uint32_t)id, &start);
	if (r < 0 && r != -ESRCH)
		return r;
	pthread_mutex_lock(&p->lock);
	if (atomic_load_explicit(&p->slots[handle & SLOT_MASK].ident, memory_order_relaxed) != id)
		r = -ESTALE;
	else if (r == 0 && start != p->slots[handle & SLOT_MASK].starttime)
		r = -ESTALE;
	if (r < 0 && procs_ident(p, handle))
		procs_forget_locked(p, handle & SLOT_MASK);
	pthread_mutex_unlock(&p->lock);
	return r;
}
