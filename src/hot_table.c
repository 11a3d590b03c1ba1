/* hot_table: lock-free page hotness table and ready queue.
 *
 * Layout. One array of 2^n slots of 16 bytes, allocated once. A slot is two 64-bit atomics:
 *
 *   key:  PEND(63) | proc handle (36-62, 27 bits: slot 16 + generation 11, see procs.h)
 *         | vpn (0-35: 4 KiB pages below 2^48)                 0 = EMPTY
 *   meta: time ms (26-63, 38 bits, compared modulo 2^38 = 8.7 years) | tag (22-25)
 *         | BUSY(21) | DEAD(20) | PROMOTED(19) | QUEUED(18) | node+1 (8-17) | count (0-7)
 *
 * A page lives in the probe window of PROBE_WINDOW slots that starts at hash(key). Lookups scan
 * the whole window (no tombstones needed, since freeing never breaks a chain). The ready queue
 * is a bounded ring of sequence-numbered cells (Vyukov's MPMC queue, used as MPSC) holding
 * slot indices.
 *
 * Entry states and who moves them:
 *   FREE     key 0, meta BUSY              the resting state of an unused slot
 *   CLAIMING key K|PEND, meta BUSY         a writer CASed it from FREE; it owns meta
 *   LIVE     key K, meta not BUSY          counted by any writer with a CAS on meta
 *   QUEUED   LIVE + QUEUED bit             owned by the ready queue / promoter until done()
 *   DEAD     QUEUED + DEAD bit             its process was forgotten; pop() frees it
 *   FREEING  key K, meta BUSY              someone won a CAS on meta to BUSY and will store
 *                                          key 0 next (drop, eviction, forget)
 * Invariant: meta is not BUSY only while key is LIVE. So whoever CASes a non-BUSY meta to BUSY
 * owns a live entry, and whoever CASes key 0 -> K|PEND owns a free slot's meta.
 *
 * Claiming without duplicates. Two writers of the same new page can claim different free
 * slots. After its claim (seq_cst CAS) a writer rescans the window with seq_cst loads; in the
 * single total order the later claimer always sees the earlier one. It backs off (frees its
 * claim) if it sees K LIVE, or K|PEND at a lower window position; it aborts a K|PEND at a
 * higher position (CAS to 0). Then it goes live with a CAS K|PEND -> K, which fails if it was
 * aborted. At most one claim of K survives; a loser restarts its record from the lookup.
 *
 * Retry rules. A writer updates meta with load-acquire, key recheck, CAS; a failed CAS
 * reloads. Meta BUSY on a LIVE key means an owner is mid-transition (two stores long): the
 * writer restarts from the lookup, and after RECORD_TRIES restarts drops the access with
 * -EAGAIN. A successful meta CAS from value m proves the entry was not freed since m was read,
 * up to ABA: each claim bumps the 4-bit tag, so a CAS could only hit a different page after
 * 16 reuses of the slot between one writer's load and its CAS.
 *
 * Counting bound: every record() that returns 0, 1 or -ENOSPC added exactly one to its page's
 * count (saturating at HOT_COUNT_MAX) in the page's current window; -EAGAIN added nothing.
 * Accesses in a promotion cooldown are ignored (return 0). A page is queued exactly once per
 * hot episode: only the writer whose CAS set QUEUED pushes, and QUEUED is cleared only by
 * done() or by that writer when the queue is full. */
#include "hot_table.h"

#include "procs.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PROBE_WINDOW 16u
#define RECORD_TRIES 64

#define VPN_BITS (HOT_VADDR_BITS - HOT_PAGE_SHIFT)
#define VPN_MASK ((UINT64_C(1) << VPN_BITS) - 1)
#define KEY_PEND (UINT64_C(1) << 63)

#define M_COUNT_MASK UINT64_C(0xff)
#define M_NODE_SHIFT 8
#define M_NODE_MASK  (UINT64_C(0x3ff) << M_NODE_SHIFT)
#define M_QUEUED     (UINT64_C(1) << 18)
#define M_PROMOTED   (UINT64_C(1) << 19)
#define M_DEAD	     (UINT64_C(1) << 20)
#define M_BUSY	     (UINT64_C(1) << 21)
#define M_TAG_SHIFT  22
#define M_TAG_MASK   (UINT64_C(0xf) << M_TAG_SHIFT)
#define M_TIME_SHIFT 26
#define TIME_BITS    38
#define TIME_MASK    ((UINT64_C(1) << TIME_BITS) - 1)

#define HUGE_ALIGN (UINT64_C(2) << 20)

#define NODE_MAX 1022 /* node+1 must fit 10 bits; larger nodes are stored as unknown */

/* Internal: the lookup must start over. */
#define RESTART 2

struct hot_slot {
	_Atomic uint64_t key;
	_Atomic uint64_t meta;
};

_Static_assert(sizeof(struct hot_slot) == 16, "entry must stay 16 bytes");

struct ready_cell {
	_Atomic size_t seq;
	uint32_t slot;
};

struct hot_table {
	struct hot_slot *slots;
	size_t mask;
	struct ready_cell *ring;
	size_t ring_mask;
	bool (*proc_valid)(void *ctx, uint32_t proc);
	void *proc_ctx;
	_Alignas(64) _Atomic size_t enq_pos; /* producers */
	_Alignas(64) _Atomic size_t deq_pos; /* promoter */
	_Alignas(64) _Atomic size_t used;
	_Atomic uint64_t replacements;
	_Atomic uint64_t reclaims;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static size_t round_pow2(size_t n)
{
	size_t r = 1;
	while (r < n)
		r <<= 1;
	return r;
}

static uint64_t key_make(uint32_t proc, uint64_t vaddr)
{
	return (uint64_t)proc << VPN_BITS | (vaddr >> HOT_PAGE_SHIFT);
}

static int key_check(uint32_t proc, uint64_t vaddr)
{
	if (proc >> 16 == 0 || proc >> PROCS_HANDLE_BITS)
		return -EINVAL;
	if (vaddr >> HOT_VADDR_BITS)
		return -ERANGE;
	return 0;
}

static uint32_t key_proc(uint64_t key)
{
	return (uint32_t)((key & ~KEY_PEND) >> VPN_BITS);
}

static size_t key_home(const struct hot_table *t, uint64_t key)
{
	/* splitmix64 finaliser: neighbouring pages of one process spread over the table. */
	key ^= key >> 30;
	key *= UINT64_C(0xbf58476d1ce4e5b9);
	key ^= key >> 27;
	key *= UINT64_C(0x94d049bb133111eb);
	key ^= key >> 31;
	return (size_t)key & t->mask;
}

static unsigned meta_count(uint64_t m)
{
	return (unsigned)(m & M_COUNT_MASK);
}

static uint64_t meta_time(uint64_t m)
{
	return m >> M_TIME_SHIFT;
}

static int meta_node(uint64_t m)
{
	return (int)((m & M_NODE_MASK) >> M_NODE_SHIFT) - 1;
}

static uint64_t meta_with(uint64_t m, unsigned count, uint64_t time)
{
	return (m & ~(M_COUNT_MASK | (TIME_MASK << M_TIME_SHIFT))) | count |
	       (time & TIME_MASK) << M_TIME_SHIFT;
}

/* Milliseconds from then to now modulo 2^38; a negative gap (clocks read by different threads
 * a little out of order) counts as 0. */
static uint64_t time_gap(uint64_t then, uint64_t now)
{
	uint64_t d = (now - then) & TIME_MASK;
	return d >> (TIME_BITS - 1) ? 0 : d;
}

/* Every lookup lands on a random slot: on a table of tens of MB, 4 KiB pages would cost a
 * TLB miss per access, so ask for transparent huge pages (a hint; failure is harmless). */
static struct hot_slot *slots_alloc(size_t n)
{
	size_t bytes = n * sizeof(struct hot_slot);
	struct hot_slot *s;

	if (bytes < HUGE_ALIGN)
		return aligned_alloc(64, bytes);
	s = aligned_alloc(HUGE_ALIGN, bytes);
	if (s)
		(void)madvise(s, bytes, MADV_HUGEPAGE);
	return s;
}

int hot_table_new(size_t capacity, size_t queue_capacity, struct hot_table **out)
{
	struct hot_table *t;
	size_t n, q;

	if (capacity == 0 || queue_capacity == 0 || capacity > (size_t)UINT32_MAX + 1)
		return -EINVAL;
	n = round_pow2(capacity < PROBE_WINDOW ? PROBE_WINDOW : capacity);
	q = round_pow2(queue_capacity < 2 ? 2 : queue_capacity);
	t = aligned_alloc(64, sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->slots = slots_alloc(n);
	t->ring = calloc(q, sizeof(*t->ring));
	if (!t->slots || !t->ring) {
		hot_table_free(t);
		return -ENOMEM;
	}
	t->mask = n - 1;
	t->ring_mask = q - 1;
	/* Relaxed: the table is published to other threads by whatever starts them. */
	for (size_t i = 0; i < n; i++) {
		atomic_init(&t->slots[i].key, 0);
		atomic_init(&t->slots[i].meta, M_BUSY);
	}
	for (size_t i = 0; i < q; i++)
		atomic_init(&t->ring[i].seq, i);
	*out = t;
	return 0;
}

void hot_table_free(struct hot_table *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t->ring);
	free(t);
}

/* Owner of a live entry's meta value m: free the slot. Fails (false) if meta moved on. */
static bool slot_free(struct hot_table *t, struct hot_slot *s, uint64_t m)
{
	uint64_t busy = M_BUSY | (m & M_TAG_MASK);

	/* acq_rel: acquire pairs with the writers' meta CAS release (we see their counts);
	 * release orders nothing we need but keeps the CAS symmetrical for readers. */
	if (!atomic_compare_exchange_strong_explicit(&s->meta, &m, busy, memory_order_acq_rel,
						     memory_order_relaxed))
		return false;
	/* Relaxed gauge, but before the key store: the next claimer's increment then happens
	 * after this decrement, so used never reads above the capacity. */
	atomic_fetch_sub_explicit(&t->used, 1, memory_order_relaxed);
	/* Release: pairs with the seq_cst claim CAS in slot_claim(); the claimer then sees meta
	 * BUSY with this tag. */
	atomic_store_explicit(&s->key, 0, memory_order_release);
	return true;
}

/* Ready queue, producer side (any writer). Vyukov's bounded queue: a cell is free for the
 * producer at position pos when its seq equals pos. */
static int ready_push(struct hot_table *t, uint32_t slot)
{
	size_t pos = atomic_load_explicit(&t->enq_pos, memory_order_relaxed);
	struct ready_cell *c;

	for (;;) {
		c = &t->ring[pos & t->ring_mask];
		/* Acquire: pairs with the consumer's store-release of seq in hot_table_pop(), so
		 * its read of c->slot happened before we overwrite it. */
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t diff = (intptr_t)seq - (intptr_t)pos;

		if (diff < 0)
			return -ENOSPC;
		if (diff > 0) {
			pos = atomic_load_explicit(&t->enq_pos, memory_order_relaxed);
			continue;
		}
		/* Relaxed: the CAS only hands out the cell; the data is published by seq. */
		if (atomic_compare_exchange_weak_explicit(
			&t->enq_pos, &pos, pos + 1, memory_order_relaxed, memory_order_relaxed))
			break;
	}
	c->slot = slot;
	/* Release: pairs with the load-acquire of seq in hot_table_pop(). */
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	return 0;
}

/* Writer that set QUEUED but found the ring full: hand the entry back to counting, or free it
 * if its process was forgotten meanwhile (nobody else would). */
static void slot_unqueue(struct hot_table *t, struct hot_slot *s)
{
	uint64_t m = atomic_load_explicit(&s->meta, memory_order_acquire);

	for (;;) {
		if (m & M_DEAD) {
			if (slot_free(t, s, m))
				return;
			m = atomic_load_explicit(&s->meta, memory_order_acquire);
			continue;
		}
		/* Release/acquire: pairs with the writers' meta CAS in slot_count(). */
		if (atomic_compare_exchange_weak_explicit(
			&s->meta, &m, m & ~M_QUEUED, memory_order_acq_rel, memory_order_acquire))
			return;
	}
}

/* The new meta after one access, or m itself when the access is ignored (cooldown). */
static uint64_t meta_apply(uint64_t m, const struct hot_access *a, const struct hot_params *p,
			   unsigned threshold)
{
	uint64_t gap = time_gap(meta_time(m), a->now_ms);
	unsigned count = meta_count(m);
	uint64_t now = gap == 0 && a->now_ms != meta_time(m) ? meta_time(m) : a->now_ms;
	uint64_t node = a->node >= 0 && a->node <= NODE_MAX ? (uint64_t)a->node + 1 : 0;

	if (m & M_PROMOTED) {
		if (gap < p->cooldown_ms)
			return m;
		m &= ~M_PROMOTED;
		count = 0;
	} else if (gap > p->window_ms && !(m & M_QUEUED)) {
		count = 0;
	}
	if (count < HOT_COUNT_MAX)
		count++;
	m = meta_with(m, count, now);
	m = (m & ~M_NODE_MASK) | node << M_NODE_SHIFT;
	if (!(m & M_QUEUED) && count >= threshold)
		m |= M_QUEUED;
	return m;
}

/* Count one access into slot idx, which held key when looked up. */
static int slot_count(struct hot_table *t, uint32_t idx, uint64_t key, const struct hot_access *a,
		      const struct hot_params *p)
{
	struct hot_slot *s = &t->slots[idx];
	unsigned threshold = p->threshold == 0		    ? 1
			     : p->threshold > HOT_COUNT_MAX ? HOT_COUNT_MAX
							    : p->threshold;
	uint64_t m, n;

	/* Acquire: pairs with the fresh-meta store-release in slot_claim() and the CAS release
	 * of other writers, so the key recheck below cannot see an older key. */
	m = atomic_load_explicit(&s->meta, memory_order_acquire);
	for (;;) {
		if (m & M_BUSY)
			return RESTART;
		/* Relaxed: ordered after the acquire load of meta above. */
		if (atomic_load_explicit(&s->key, memory_order_relaxed) != key)
			return RESTART;
		n = meta_apply(m, a, p, threshold);
		if (n == m)
			return 0;
		/* Release: pairs with the acquire load above in other writers and in pop();
		 * acquire on failure: the reloaded m is checked like a fresh load. */
		if (atomic_compare_exchange_weak_explicit(&s->meta, &m, n, memory_order_acq_rel,
							  memory_order_acquire))
			break;
	}
	if (!(n & M_QUEUED) || (m & M_QUEUED))
		return 0;
	if (ready_push(t, idx) == 0)
		return 1;
	slot_unqueue(t, s);
	return -ENOSPC;
}

/* After claiming window position pos for key: resolve a race with other claims of key. */
static bool claim_survives(struct hot_table *t, size_t home, unsigned pos, uint64_t key)
{
	for (unsigned i = 0; i < PROBE_WINDOW; i++) {
		struct hot_slot *o = &t->slots[(home + i) & t->mask];
		uint64_t k;

		if (i == pos)
			continue;
		/* seq_cst: with the seq_cst claim CAS, the later of two claimers sees the
		 * earlier (store-load ordering, as in Dekker's algorithm). */
		k = atomic_load_explicit(&o->key, memory_order_seq_cst);
		if (k == key)
			return false;
		if (k != (key | KEY_PEND))
			continue;
		if (i < pos)
			return false;
		/* Abort the higher claim; its go-live CAS then fails. If it went live first,
		 * we lose instead. */
		if (!atomic_compare_exchange_strong_explicit(&o->key, &k, 0, memory_order_seq_cst,
							     memory_order_seq_cst) &&
		    k == key)
			return false;
	}
	return true;
}

/* Claim the free slot at window position pos for key and make it live. */
static int slot_claim(struct hot_table *t, size_t home, unsigned pos, uint64_t key, uint64_t now,
		      uint32_t *idx)
{
	size_t i = (home + pos) & t->mask;
	struct hot_slot *s = &t->slots[i];
	uint64_t expect = 0, m;

	/* seq_cst: pairs with the key store-release in slot_free() (we then own meta) and
	 * orders this claim before our rescan in claim_survives(). */
	if (!atomic_compare_exchange_strong_explicit(&s->key, &expect, key | KEY_PEND,
						     memory_order_seq_cst, memory_order_relaxed))
		return RESTART;
	expect = key | KEY_PEND;
	if (!claim_survives(t, home, pos, key)) {
		/* Relaxed: meta stays BUSY, the slot is simply FREE again. It may have been
		 * aborted (and even re-claimed) already, in which case this CAS fails. */
		atomic_compare_exchange_strong_explicit(&s->key, &expect, 0, memory_order_relaxed,
							memory_order_relaxed);
		return RESTART;
	}
	/* seq_cst: a failure means a lower claim aborted us (see claim_survives()). */
	if (!atomic_compare_exchange_strong_explicit(&s->key, &expect, key, memory_order_seq_cst,
						     memory_order_relaxed))
		return RESTART;
	m = atomic_load_explicit(&s->meta, memory_order_relaxed); /* ours: BUSY since free */
	m = ((m + (UINT64_C(1) << M_TAG_SHIFT)) & M_TAG_MASK) | (now & TIME_MASK) << M_TIME_SHIFT;
	/* Release: pairs with the meta load-acquire in slot_count() and pop(). */
	atomic_store_explicit(&s->meta, m, memory_order_release);
	atomic_fetch_add_explicit(&t->used, 1, memory_order_relaxed);
	*idx = (uint32_t)i;
	return 0;
}

struct victim {
	int pos;
	bool stale;
	unsigned count;
	uint64_t age;
};

/* Is slot s (holding live key k) a colder eviction victim than v? */
static void victim_consider(const struct hot_table *t, struct victim *v, const struct hot_slot *s,
			    uint64_t k, unsigned pos, uint64_t now, const struct hot_params *p)
{
	uint64_t m = atomic_load_explicit(&s->meta, memory_order_relaxed);
	uint64_t age = time_gap(meta_time(m), now);
	unsigned count = age > p->window_ms ? 0 : meta_count(m);
	bool stale;

	if (m & (M_BUSY | M_QUEUED) || v->stale)
		return;
	stale = t->proc_valid && !t->proc_valid(t->proc_ctx, key_proc(k));
	if (v->pos >= 0 && !stale && (count > v->count || (count == v->count && age <= v->age)))
		return;
	*v = (struct victim){.pos = (int)pos, .stale = stale, .count = count, .age = age};
}

/* Free the victim's slot so the caller can claim it; counts why. */
static int victim_evict(struct hot_table *t, size_t home, const struct victim *v)
{
	struct hot_slot *s = &t->slots[(home + (unsigned)v->pos) & t->mask];
	uint64_t m = atomic_load_explicit(&s->meta, memory_order_acquire);

	if (m & (M_BUSY | M_QUEUED) || !slot_free(t, s, m))
		return RESTART;
	/* Relaxed: statistics only. */
	atomic_fetch_add_explicit(v->stale ? &t->reclaims : &t->replacements, 1,
				  memory_order_relaxed);
	return 0;
}

static int slot_find_or_claim(struct hot_table *t, uint64_t key, const struct hot_access *a,
			      const struct hot_params *p, uint32_t *idx)
{
	size_t home = key_home(t, key);
	struct victim v = {.pos = -1};
	int empty = -1;
	int r;

	for (unsigned i = 0; i < PROBE_WINDOW; i++) {
		struct hot_slot *s = &t->slots[(home + i) & t->mask];
		/* Acquire: pairs with the go-live CAS in slot_claim(). */
		uint64_t k = atomic_load_explicit(&s->key, memory_order_acquire);

		if (k == key) {
			*idx = (uint32_t)((home + i) & t->mask);
			return 0;
		}
		if (k == 0 && empty < 0)
			empty = (int)i;
		else if (k != 0 && !(k & KEY_PEND) && empty < 0)
			victim_consider(t, &v, s, k, i, a->now_ms, p);
	}
	if (empty < 0) {
		if (v.pos < 0)
			return -EAGAIN;
		r = victim_evict(t, home, &v);
		if (r)
			return r;
		empty = v.pos;
	}
	return slot_claim(t, home, (unsigned)empty, key, a->now_ms, idx);
}

static int record_key(struct hot_table *t, uint64_t key, const struct hot_access *a,
		      const struct hot_params *p)
{
	uint32_t idx;
	int r;

	for (int tries = 0; tries < RECORD_TRIES; tries++) {
		r = slot_find_or_claim(t, key, a, p, &idx);
		if (r == 0)
			r = slot_count(t, idx, key, a, p);
		if (r != RESTART)
			return r;
		cpu_relax();
	}
	return -EAGAIN;
}

int hot_table_record(struct hot_table *t, const struct hot_access *a, const struct hot_params *p)
{
	int r = key_check(a->proc, a->vaddr);

	if (r < 0)
		return r;
	return record_key(t, key_make(a->proc, a->vaddr), a, p);
}

#define BATCH_AHEAD 16

static void prefetch_home(const struct hot_table *t, const struct hot_access *a)
{
	if (key_check(a->proc, a->vaddr) == 0)
		__builtin_prefetch(&t->slots[key_home(t, key_make(a->proc, a->vaddr))], 1);
}

size_t hot_table_record_batch(struct hot_table *t, const struct hot_access *a, size_t n,
			      const struct hot_params *p, size_t *dropped)
{
	size_t queued = 0, lost = 0;

	/* Keep BATCH_AHEAD windows in flight: enough to overlap misses, few enough that the
	 * lines are still in L1 when their turn comes. */
	for (size_t i = 0; i < n && i < BATCH_AHEAD; i++)
		prefetch_home(t, &a[i]);
	for (size_t i = 0; i < n; i++) {
		int r;

		if (i + BATCH_AHEAD < n)
			prefetch_home(t, &a[i + BATCH_AHEAD]);
		r = hot_table_record(t, &a[i], p);
		queued += r == 1;
		lost += r < 0 && r != -ENOSPC;
	}
	if (dropped)
		*dropped = lost;
	return queued;
}

int hot_table_peek(const struct hot_table *t, uint32_t proc, uint64_t vaddr, unsigned *count)
{
	int r = key_check(proc, vaddr);
	uint64_t key;
	size_t home;

	if (r < 0)
		return r;
	key = key_make(proc, vaddr);
	home = key_home(t, key);
	for (unsigned i = 0; i < PROBE_WINDOW; i++) {
		const struct hot_slot *s = &t->slots[(home + i) & t->mask];
		/* Acquire: pairs with the go-live CAS and fresh-meta store in slot_claim(). */
		uint64_t m = atomic_load_explicit(&s->meta, memory_order_acquire);

		if (atomic_load_explicit(&s->key, memory_order_relaxed) == key && !(m & M_BUSY)) {
			*count = meta_count(m);
			return 0;
		}
	}
	return -ENOENT;
}

void hot_table_set_proc_check(struct hot_table *t, bool (*valid)(void *ctx, uint32_t proc),
			      void *ctx)
{
	t->proc_valid = valid;
	t->proc_ctx = ctx;
}

/* Promoter: turn a popped slot into a candidate; frees it instead if its process is gone. */
static bool slot_candidate(struct hot_table *t, uint32_t idx, struct hot_candidate *c)
{
	struct hot_slot *s = &t->slots[idx];

	for (;;) {
		/* Acquire: pairs with the writers' meta CAS release (count, node). */
		uint64_t m = atomic_load_explicit(&s->meta, memory_order_acquire);
		uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

		if ((m & (M_BUSY | M_QUEUED)) != M_QUEUED)
			return false; /* cannot happen: a queued entry is ours */
		if (m & M_DEAD) {
			if (slot_free(t, s, m))
				return false;
			continue;
		}
		*c = (struct hot_candidate){
		    .proc = key_proc(k),
		    .vaddr = (k & VPN_MASK) << HOT_PAGE_SHIFT,
		    .node = meta_node(m),
		    .count = meta_count(m),
		    .slot = idx,
		};
		return true;
	}
}

size_t hot_table_pop(struct hot_table *t, struct hot_candidate *out, size_t max)
{
	size_t n = 0;

	while (n < max) {
		/* Relaxed: only this thread writes deq_pos. */
		size_t pos = atomic_load_explicit(&t->deq_pos, memory_order_relaxed);
		struct ready_cell *c = &t->ring[pos & t->ring_mask];
		/* Acquire: pairs with the store-release of seq in ready_push(). */
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		uint32_t idx;

		if (seq != pos + 1)
			break;
		idx = c->slot;
		/* Release: pairs with the load-acquire of seq in ready_push(). */
		atomic_store_explicit(&c->seq, pos + t->ring_mask + 1, memory_order_release);
		atomic_store_explicit(&t->deq_pos, pos + 1, memory_order_relaxed);
		if (slot_candidate(t, idx, &out[n]))
			n++;
	}
	return n;
}

void hot_table_done(struct hot_table *t, const struct hot_candidate *c, enum hot_outcome o,
		    uint64_t now_ms)
{
	struct hot_slot *s;
	uint64_t key, m, n;

	if (c->slot > t->mask || key_check(c->proc, c->vaddr) < 0)
		return;
	s = &t->slots[c->slot];
	key = key_make(c->proc, c->vaddr);
	/* Acquire: pairs with the writers' meta CAS release. */
	m = atomic_load_explicit(&s->meta, memory_order_acquire);
	for (;;) {
		if ((m & (M_BUSY | M_QUEUED)) != M_QUEUED ||
		    atomic_load_explicit(&s->key, memory_order_relaxed) != key)
			return;
		if (o == HOT_DROP || (m & M_DEAD)) {
			if (slot_free(t, s, m))
				return;
			m = atomic_load_explicit(&s->meta, memory_order_acquire);
			continue;
		}
		n = m & ~M_QUEUED;
		n = o == HOT_PROMOTED ? meta_with(n | M_PROMOTED, 0, now_ms)
				      : meta_with(n, 0, meta_time(n));
		/* Release: pairs with the writers' meta load-acquire in slot_count(). */
		if (atomic_compare_exchange_weak_explicit(&s->meta, &m, n, memory_order_acq_rel,
							  memory_order_acquire))
			return;
	}
}

/* Drop one entry of a forgotten process; false if it changed under us (caller moves on). */
static bool slot_forget(struct hot_table *t, struct hot_slot *s, uint64_t key)
{
	for (;;) {
		/* Acquire: pairs with the writers' meta CAS release and slot_claim()'s store. */
		uint64_t m = atomic_load_explicit(&s->meta, memory_order_acquire);

		/* Relaxed: ordered after the acquire above; a key still equal to ours means m
		 * belongs to a live entry of this page. */
		if (atomic_load_explicit(&s->key, memory_order_relaxed) != key || (m & M_BUSY))
			return false;
		if (m & M_DEAD)
			return false;
		if (!(m & M_QUEUED)) {
			if (slot_free(t, s, m))
				return true;
			continue;
		}
		/* The queue still points here: mark it, pop() or the pusher frees it. */
		if (atomic_compare_exchange_weak_explicit(
			&s->meta, &m, m | M_DEAD, memory_order_acq_rel, memory_order_relaxed))
			return true;
	}
}

size_t hot_table_forget_proc(struct hot_table *t, uint32_t proc)
{
	size_t n = 0;

	for (size_t i = 0; i <= t->mask; i++) {
		struct hot_slot *s = &t->slots[i];
		uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

		if (k == 0 || (k & KEY_PEND) || key_proc(k) != proc)
			continue;
		if (slot_forget(t, s, k))
			n++;
	}
	return n;
}

size_t hot_table_used(const struct hot_table *t)
{
	/* Relaxed: an approximate gauge. */
	return atomic_load_explicit(&t->used, memory_order_relaxed);
}

size_t hot_table_queued(const struct hot_table *t)
{
	/* Relaxed: an approximate gauge; read deq first so the difference never goes below 0
	 * by much, and clamp what remains. */
	size_t deq = atomic_load_explicit(&t->deq_pos, memory_order_relaxed);
	size_t enq = atomic_load_explicit(&t->enq_pos, memory_order_relaxed);

	return enq > deq ? enq - deq : 0;
}

uint64_t hot_table_replacements(const struct hot_table *t)
{
	return atomic_load_explicit(&t->replacements, memory_order_relaxed);
}

uint64_t hot_table_reclaims(const struct hot_table *t)
{
	return atomic_load_explicit(&t->reclaims, memory_order_relaxed);
}

size_t hot_table_capacity(const struct hot_table *t)
{
	return t->mask + 1;
}

size_t hot_table_entry_size(void)
{
	return sizeof(struct hot_slot);
}
