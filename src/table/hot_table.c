/* hot_table: lock-free page hotness table and ready queue.
 *
 * Layout. One array of 2^n slots of 16 bytes, allocated once. A slot is two 64-bit atomics:
 *
 *   key:  PEND(63) | proc handle (36-62, 27 bits: slot 16 + generation 11, see procs.h)
 *         | vpn (0-35: 4 KiB pages below 2^48)                 0 = EMPTY
 *   meta: time ms (26-63, 38 bits, compared modulo 2^38 = 8.7 years) | tag (22-25)
 *         | BUSY(21) | DEAD(20) | PROMOTED(19) | QUEUED(18) | SLOW(17) | size (15-16)
 *         | node+1 (8-14) | count (0-7)
 *
 * SLOW, size and the node describe the last access: the node of its CPU (HOT_NODE_MAX at
 * most; larger ids are kept as unknown), whether it saw the page on a slow node, and the
 * page's mapping size if the source could tell (enum hot_size).
 *
 * A page lives in the probe window of PROBE_WINDOW slots that starts at hash(key). Lookups scan
 * the whole window (no tombstones needed, since freeing never breaks a chain). The ready queue
 * is a bounded ring of sequence-numbered cells (Vyukov's MPMC queue, used as MPSC) holding
 * slot indices, each with a copy of the entry's key and meta as its pusher left them: pop()
 * then reads only the ring, not an entry line per candidate, unless some queued entry was
 * marked DEAD (counted in dead), when it reads the entries to drop those.
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
 * Retry rules. A writer reads each window slot as meta (load-acquire) then key, and on its
 * key CASes meta from that snapshot; a failed CAS reloads meta and rechecks the key. The hit
 * path (the common case: a page already tracked, in its home slot) is that one look and one
 * CAS, inlined; a miss, a rare meta state, a full ring and a retry are out of line. Meta BUSY
 * on a LIVE key means an owner is mid-transition (two stores long): the
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
#include "table/hot_table.h"

#include "table/procs.h"

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

#define M_COUNT_MASK   UINT64_C(0xff)
#define M_NODE_SHIFT   8
#define M_NODE_MASK    (UINT64_C(0x7f) << M_NODE_SHIFT)
#define M_SIZE_SHIFT   15
#define M_SIZE_MASK    (UINT64_C(3) << M_SIZE_SHIFT)
#define M_SLOW	       (UINT64_C(1) << 17)
#define M_QUEUED_SHIFT 18
#define M_QUEUED       (UINT64_C(1) << M_QUEUED_SHIFT)
#define M_PROMOTED     (UINT64_C(1) << 19)
#define M_DEAD	       (UINT64_C(1) << 20)
#define M_BUSY	       (UINT64_C(1) << 21)
#define M_TAG_SHIFT    22
#define M_TAG_MASK     (UINT64_C(0xf) << M_TAG_SHIFT)
#define M_TIME_SHIFT   26
/* What an access sets: its node, SLOW and size fields (access_bits()). */
#define M_ACCESS (M_NODE_MASK | M_SIZE_MASK | M_SLOW)
/* What an access leaves as it was: the state bits and the tag. */
#define M_KEEP	  (((UINT64_C(1) << M_TIME_SHIFT) - 1) & ~(M_COUNT_MASK | M_ACCESS))
#define TIME_BITS 38
#define TIME_MASK ((UINT64_C(1) << TIME_BITS) - 1)

#define HUGE_ALIGN (UINT64_C(2) << 20)

#define NODE_MAX HOT_NODE_MAX
_Static_assert(NODE_MAX + 1 <= (M_NODE_MASK >> M_NODE_SHIFT), "node+1 must fit its field");
_Static_assert(HOT_SIZE_HUGE <= (M_SIZE_MASK >> M_SIZE_SHIFT), "the size must fit its field");

/* Internal: the lookup must start over. */
#define RESTART 2
/* Internal: this access made the entry QUEUED; the caller pushes it (slot_queue()). */
#define PUSH 3

struct hot_slot {
	_Atomic uint64_t key;
	_Atomic uint64_t meta;
};

_Static_assert(sizeof(struct hot_slot) == 16, "entry must stay 16 bytes");

struct ready_cell {
	_Atomic size_t seq;
	uint32_t slot;
	uint64_t key, meta; /* the entry as pushed: key stays while QUEUED */
};

struct hot_table {
	struct hot_slot *slots;
	size_t mask;
	unsigned shift; /* 64 - log2(slots): key_home() keeps the product's top bits */
	struct ready_cell *ring;
	size_t ring_mask;
	bool (*proc_valid)(void *ctx, uint32_t proc);
	void *proc_ctx;
	_Alignas(64) _Atomic size_t enq_pos; /* producers */
	_Alignas(64) _Atomic size_t deq_pos; /* promoter */
	_Alignas(64) _Atomic size_t used;
	_Atomic uint64_t replacements;
	_Atomic uint64_t reclaims;
	_Atomic size_t dead; /* entries marked DEAD and not yet freed */
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

/* key_check() == 0 in two compares: a valid handle lies in [2^16, 2^PROCS_HANDLE_BITS). */
static inline bool key_valid(uint32_t proc, uint64_t vaddr)
{
	return proc - (UINT32_C(1) << 16) <
		   (UINT32_C(1) << PROCS_HANDLE_BITS) - (UINT32_C(1) << 16) &&
	       !(vaddr >> HOT_VADDR_BITS);
}

static uint32_t key_proc(uint64_t key)
{
	return (uint32_t)((key & ~KEY_PEND) >> VPN_BITS);
}

static inline size_t key_home(const struct hot_table *t, uint64_t key)
{
	/* Fibonacci hashing (multiply by 2^64 / golden ratio, keep the top bits): every key bit
	 * reaches the top through the carries, and consecutive pages land about 0.62 of the
	 * table apart, so a process's neighbouring pages never share a window. Two instructions
	 * on the per-access path, where a full mixer cost as much as the rest of a hit. */
	return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> t->shift);
}

/* Slot index of window position i. wrap false (a window that does not run past the end of
 * the array, all but PROBE_WINDOW - 1 of them) lets the unrolled loops below use constant
 * offsets from the home slot. */
static inline uint32_t window_at(size_t home, unsigned i, size_t mask, bool wrap)
{
	return (uint32_t)(wrap ? (home + i) & mask : home + i);
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
	t->shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)n);
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
	/* Relaxed: a hint for pop() (see there). */
	if (m & M_DEAD)
		atomic_fetch_sub_explicit(&t->dead, 1, memory_order_relaxed);
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
static int ready_push(struct hot_table *t, uint32_t slot, uint64_t key, uint64_t meta)
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
	c->key = key;
	c->meta = meta;
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

/* The node, size and SLOW fields of meta for access a (node -1 or out of range, or a size
 * out of range: unknown). */
static inline uint64_t access_bits(const struct hot_access *a)
{
	uint64_t n = (unsigned)a->node <= NODE_MAX ? ((uint64_t)a->node + 1) << M_NODE_SHIFT : 0;
	uint64_t z = (unsigned)a->size <= HOT_SIZE_HUGE ? (uint64_t)a->size << M_SIZE_SHIFT : 0;

	return n | z | (a->on_slow ? M_SLOW : 0);
}

/* The new meta after one access at time now with node, size and SLOW fields nb
 * (access_bits()), or m itself when the access is ignored (cooldown). record_home() inlines
 * its common case (no cooldown, inside the window, clock in order); this is the general
 * rule. */
static inline uint64_t meta_apply(uint64_t m, uint64_t now, uint64_t nb, const struct hot_params *p)
{
	uint64_t then = meta_time(m);
	uint64_t gap = (now - then) & TIME_MASK;
	uint64_t count = m & M_COUNT_MASK;
	uint64_t keep;

	if (__builtin_expect((m & M_PROMOTED) || (gap >> (TIME_BITS - 1)), 0)) {
		if (gap >> (TIME_BITS - 1)) {
			/* Another thread read the clock a little later and got here first: no
			 * time passed, and the entry keeps the later time. */
			gap = 0;
			now = then;
		}
		if (m & M_PROMOTED) {
			if (gap < p->cooldown_ms)
				return m;
			m &= ~M_PROMOTED;
			gap = 0; /* a new window starts now */
			count = 0;
		}
	}
	/* A gap beyond the window restarts the count, unless the page waits in the queue. */
	keep = (uint64_t)(gap <= p->window_ms) | (m & M_QUEUED) >> M_QUEUED_SHIFT;
	count &= -keep;
	count += count < HOT_COUNT_MAX;
	/* The shift drops the time's bits above TIME_BITS: time is kept modulo 2^38. */
	m = (m & M_KEEP) | count | nb | now << M_TIME_SHIFT;
	/* threshold 0 acts as 1 (count is at least 1 here), above HOT_COUNT_MAX as the max;
	 * setting QUEUED again on a queued entry changes nothing. */
	return m | (uint64_t)((count >= p->threshold) | (count == HOT_COUNT_MAX)) << M_QUEUED_SHIFT;
}

/* The writer whose CAS set QUEUED: push the entry, or hand it back when the ring is full. */
static __attribute__((noinline)) int slot_queue(struct hot_table *t, uint32_t idx)
{
	struct hot_slot *s = &t->slots[idx];
	/* Relaxed: the queue owns the entry now (its key cannot change until done()), and the
	 * copy travels to pop() under the cell's release. Meta is as fresh as a read can be; a
	 * DEAD mark after it is caught by done(). The line is ours from the CAS just made. */
	uint64_t key = atomic_load_explicit(&s->key, memory_order_relaxed);
	uint64_t meta = atomic_load_explicit(&s->meta, memory_order_relaxed);

	if (ready_push(t, idx, key, meta) == 0)
		return 1;
	slot_unqueue(t, &t->slots[idx]);
	return -ENOSPC;
}

/* Count one access into slot s: 0, PUSH (the caller pushes) or RESTART. The caller loaded m from
 * its meta (acquire) and then saw key in the slot: the key load cannot be older than the go-live
 * that m's incarnation was published after (the claim stores key before releasing meta), and a
 * successful CAS from m proves meta, hence the key, did not change in between (up to tag ABA, see
 * the top). */
static inline int slot_count(struct hot_slot *s, uint64_t key, uint64_t m,
			     const struct hot_access *a, const struct hot_params *p)
{
	uint64_t nb = access_bits(a), n;

	for (;;) {
		if (__builtin_expect(m & M_BUSY, 0))
			return RESTART;
		/* CAS even when n == m (count saturated, same millisecond, cooldown): skipping
		 * it saved nothing measurable and was a branch the CPU could not predict. */
		n = meta_apply(m, a->now_ms, nb, p);
		/* Release: pairs with the meta load-acquire of other writers and of pop();
		 * acquire on failure: the reloaded m is checked like a fresh load, below. */
		if (__builtin_expect(atomic_compare_exchange_weak_explicit(&s->meta, &m, n,
									   memory_order_acq_rel,
									   memory_order_acquire),
				     1))
			break;
		/* Relaxed: ordered after the acquire reload of m, as at the first look. */
		if (atomic_load_explicit(&s->key, memory_order_relaxed) != key)
			return RESTART;
	}
	/* Rarely true, so well predicted even though it waits for the entry's line. */
	return __builtin_expect(n & ~m & M_QUEUED, 0) ? PUSH : 0;
}

/* After claiming window position pos for key: resolve a race with other claims of key. */
static inline bool claim_rescan(struct hot_slot *slots, size_t mask, size_t home, unsigned pos,
				uint64_t key, bool wrap)
{
	/* Unrolled: every new page pays for this rescan, and the window's lines are in L1. */
#pragma GCC unroll 16
	for (unsigned i = 0; i < PROBE_WINDOW; i++) {
		_Atomic uint64_t *o = &slots[window_at(home, i, mask, wrap)].key;
		/* seq_cst: with the seq_cst claim CAS, the later of two claimers sees the
		 * earlier (store-load ordering, as in Dekker's algorithm). */
		uint64_t k = atomic_load_explicit(o, memory_order_seq_cst);

		/* One test for "neither key nor key|PEND": the shift drops the PEND bit. Our
		 * own claim at pos passes it and is skipped next. */
		if (__builtin_expect(((k ^ key) << 1) != 0, 1) || i == pos)
			continue;
		if (k == key || i < pos)
			return false;
		/* Abort the higher claim; its go-live CAS then fails. If it went live first,
		 * we lose instead. */
		if (!atomic_compare_exchange_strong_explicit(o, &k, 0, memory_order_seq_cst,
							     memory_order_seq_cst) &&
		    k == key)
			return false;
	}
	return true;
}

static bool claim_survives(struct hot_table *t, size_t home, unsigned pos, uint64_t key)
{
	if (__builtin_expect(home + PROBE_WINDOW <= t->mask + 1, 1))
		return claim_rescan(t->slots, t->mask, home, pos, key, false);
	return claim_rescan(t->slots, t->mask, home, pos, key, true);
}

/* Claim the free slot at window position pos for key and make it live, with this access
 * already counted in its first meta (one CAS fewer per new page). Returns 0, PUSH (the
 * access made it QUEUED: the caller pushes) or RESTART. */
static int slot_claim(struct hot_table *t, size_t home, unsigned pos, uint64_t key,
		      const struct hot_access *a, const struct hot_params *p, uint32_t *idx)
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
	m = ((m + (UINT64_C(1) << M_TAG_SHIFT)) & M_TAG_MASK) | a->now_ms << M_TIME_SHIFT;
	m = meta_apply(m, a->now_ms, access_bits(a), p);
	/* Release: pairs with the meta load-acquire in window_find() and pop(). */
	atomic_store_explicit(&s->meta, m, memory_order_release);
	atomic_fetch_add_explicit(&t->used, 1, memory_order_relaxed);
	*idx = (uint32_t)i;
	return m & M_QUEUED ? PUSH : 0;
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

/* No free slot in the window: free the coldest live entry (preferring one of a stale
 * process), whose window position goes to *pos. Returns 0, -EAGAIN or RESTART. */
static int window_make_room(struct hot_table *t, size_t home, const struct hot_access *a,
			    const struct hot_params *p, int *pos)
{
	struct victim v = {.pos = -1};
	int r;

	for (unsigned i = 0; i < PROBE_WINDOW; i++) {
		struct hot_slot *s = &t->slots[(home + i) & t->mask];
		/* Relaxed: a hint; victim_evict() decides with an acquire load and a CAS. */
		uint64_t k = atomic_load_explicit(&s->key, memory_order_relaxed);

		if (k != 0 && !(k & KEY_PEND))
			victim_consider(t, &v, s, k, i, a->now_ms, p);
	}
	if (v.pos < 0)
		return -EAGAIN;
	r = victim_evict(t, home, &v);
	if (r == 0)
		*pos = v.pos;
	return r;
}

/* Window position of key, or PROBE_WINDOW. Relaxed: a key seen here is only a hint, checked
 * again after the meta load-acquire (record_lookup()). Unrolled: a new page scans the whole
 * window, and loop overhead was most of that cost. */
static inline unsigned window_scan(const struct hot_slot *slots, size_t mask, size_t home,
				   uint64_t key, bool wrap)
{
#pragma GCC unroll 16
	for (unsigned i = 0; i < PROBE_WINDOW; i++)
		if (atomic_load_explicit(&slots[window_at(home, i, mask, wrap)].key,
					 memory_order_relaxed) == key)
			return i;
	return PROBE_WINDOW;
}

/* First window position whose key is 0 (free), or -1. Relaxed: the claim CAS decides. */
static int window_first_free(const struct hot_slot *slots, size_t mask, size_t home)
{
	for (unsigned i = 0; i < PROBE_WINDOW; i++)
		if (atomic_load_explicit(&slots[(home + i) & mask].key, memory_order_relaxed) == 0)
			return (int)i;
	return -1;
}

/* True with the page's slot in *idx, or false with the first free window position in
 * *empty (-1: none). */
static inline bool window_find(const struct hot_table *t, uint64_t key, size_t home, uint32_t *idx,
			       int *empty)
{
	/* Loaded once: the atomic loads would otherwise make the compiler reload them. */
	const struct hot_slot *slots = t->slots;
	size_t mask = t->mask;
	unsigned i;

	if (__builtin_expect(home + PROBE_WINDOW <= mask + 1, 1))
		i = window_scan(slots, mask, home, key, false);
	else
		i = window_scan(slots, mask, home, key, true);
	if (i < PROBE_WINDOW) {
		*idx = (uint32_t)((home + i) & mask);
		return true;
	}
	/* The lines are in L1 now, and at the table's usual load the first free slot is
	 * near home: cheaper than tracking it during the scan. */
	*empty = window_first_free(slots, mask, home);
	return false;
}

/* Counts into slot idx from snapshot m, finishing a push; RESTART passes through. */
static inline int record_count(struct hot_table *t, uint32_t idx, uint64_t key, uint64_t m,
			       const struct hot_access *a, const struct hot_params *p)
{
	int r = slot_count(&t->slots[idx], key, m, a, p);

	return r == PUSH ? slot_queue(t, idx) : r;
}

/* The page is not in its window: claim the first free slot (empty, or -1 when none was
 * seen) or make room, then count the access there. RESTART: start over. */
static int record_claim(struct hot_table *t, uint64_t key, size_t home, int empty,
			const struct hot_access *a, const struct hot_params *p)
{
	uint32_t idx;
	int r;

	if (empty < 0) {
		r = window_make_room(t, home, a, p, &empty);
		if (r)
			return r;
	}
	r = slot_claim(t, home, (unsigned)empty, key, a, p, &idx);
	return r == PUSH ? slot_queue(t, idx) : r;
}

/* One attempt at recording: find the page and count it, or claim a slot for it. RESTART:
 * start over. */
static inline int record_lookup(struct hot_table *t, uint64_t key, size_t home,
				const struct hot_access *a, const struct hot_params *p)
{
	struct hot_slot *s;
	uint32_t idx;
	uint64_t m;
	int empty;

	if (!window_find(t, key, home, &idx, &empty))
		return record_claim(t, key, home, empty, a, p);
	s = &t->slots[idx];
	/* Acquire, then the key again: the pair slot_count() needs. */
	m = atomic_load_explicit(&s->meta, memory_order_acquire);
	if (atomic_load_explicit(&s->key, memory_order_relaxed) != key)
		return RESTART;
	return record_count(t, idx, key, m, a, p);
}

/* A race made an attempt start over: retry a bounded number of times. */
static __attribute__((noinline)) int record_retry(struct hot_table *t, uint64_t key, size_t home,
						  const struct hot_access *a,
						  const struct hot_params *p)
{
	for (int tries = 1; tries < RECORD_TRIES; tries++) {
		int r;

		cpu_relax();
		r = record_lookup(t, key, home, a, p);
		if (r != RESTART)
			return r;
	}
	return -EAGAIN;
}

/* The page is not in its home slot: the rest of the window, or a new entry. */
static __attribute__((noinline)) int record_probe(struct hot_table *t, uint64_t key, size_t home,
						  const struct hot_access *a,
						  const struct hot_params *p)
{
	int r = record_lookup(t, key, home, a, p);

	return r == RESTART ? record_retry(t, key, home, a, p) : r;
}

/* An access to the live entry in slot home that the hit path could not finish: the rare
 * meta states, or a lost CAS race (m then holds the value that beat us). */
static __attribute__((noinline)) int record_slow(struct hot_table *t, size_t home, uint64_t key,
						 uint64_t m, const struct hot_access *a,
						 const struct hot_params *p)
{
	int r = record_count(t, (uint32_t)home, key, m, a, p);

	return r == RESTART ? record_retry(t, key, home, a, p) : r;
}

/* Not in its home slot (internal): the caller looks through the rest of the window. */
#define NOT_HOME 4

/* The hit path, for a page found in its home slot (most tracked pages sit there): two loads
 * and one CAS from a new meta value computed without branching on the entry, with every rare
 * case out of line. Returns 0, 1, -ENOSPC, -EAGAIN or NOT_HOME. */
static inline int record_home(struct hot_table *t, uint64_t key, size_t home,
			      const struct hot_access *a, const struct hot_params *p)
{
	struct hot_slot *s = &t->slots[home];
	uint64_t stamp = access_bits(a) | a->now_ms << M_TIME_SHIFT; /* before the miss */
	uint64_t m, n, count, gap;

	/* Acquire, then the key: the pair slot_count() needs. */
	m = atomic_load_explicit(&s->meta, memory_order_acquire);
	if (__builtin_expect(atomic_load_explicit(&s->key, memory_order_relaxed) != key, 0))
		return NOT_HOME;
	/* meta_apply() for the common case: no cooldown, inside the window, clock in order. */
	gap = (a->now_ms - meta_time(m)) & TIME_MASK;
	if (__builtin_expect((m & (M_BUSY | M_PROMOTED)) || gap > p->window_ms, 0))
		return record_slow(t, home, key, m, a, p);
	count = m & M_COUNT_MASK;
	count += count < HOT_COUNT_MAX;
	n = (m & M_KEEP) | count | stamp |
	    (uint64_t)((count >= p->threshold) | (count == HOT_COUNT_MAX)) << M_QUEUED_SHIFT;
	/* Release: pairs with the meta load-acquire of other writers and of pop(). */
	if (__builtin_expect(!atomic_compare_exchange_strong_explicit(
				 &s->meta, &m, n, memory_order_acq_rel, memory_order_acquire),
			     0))
		return record_slow(t, home, key, m, a, p);
	if (__builtin_expect(n & ~m & M_QUEUED, 0))
		return slot_queue(t, (uint32_t)home);
	return 0;
}

int hot_table_record(struct hot_table *t, const struct hot_access *a, const struct hot_params *p)
{
	uint64_t key;
	size_t home;
	int r;

	if (__builtin_expect(!key_valid(a->proc, a->vaddr), 0))
		return key_check(a->proc, a->vaddr);
	key = key_make(a->proc, a->vaddr);
	home = key_home(t, key);
	r = record_home(t, key, home, a, p);
	return r == NOT_HOME ? record_probe(t, key, home, a, p) : r;
}

/* A batch is taken in blocks: every page's home line is prefetched first, then the hits are
 * counted; a page missing from its home slot has the rest of its window prefetched and waits
 * for the end of the block, so the lines of new pages also arrive in parallel. */
#define BATCH_BLOCK 64

/* always_inline: GCC 12 found an out-of-line prefetch helper pure and dropped the calls,
 * prefetches and all (the batch then ran no faster than single records). */
static inline __attribute__((always_inline)) void prefetch_window(const struct hot_table *t,
								  size_t home)
{
	/* Lines after the home slot's, up to the window's last slot. */
	for (size_t off = 4; off < PROBE_WINDOW + 3; off += 4)
		__builtin_prefetch(&t->slots[(home + off) & t->mask], 1);
}

static void record_block(struct hot_table *t, const struct hot_access *a, size_t n,
			 const struct hot_params *p, int *res)
{
	size_t home[BATCH_BLOCK];
	uint64_t key[BATCH_BLOCK];
	uint8_t later[BATCH_BLOCK];
	size_t nlater = 0;

	for (size_t i = 0; i < n; i++) {
		key[i] = key_make(a[i].proc, a[i].vaddr);
		home[i] = key_home(t, key[i]);
		__builtin_prefetch(&t->slots[home[i]], 1);
	}
	for (size_t i = 0; i < n; i++) {
		if (__builtin_expect(!key_valid(a[i].proc, a[i].vaddr), 0)) {
			res[i] = key_check(a[i].proc, a[i].vaddr);
			continue;
		}
		res[i] = record_home(t, key[i], home[i], &a[i], p);
		if (res[i] == NOT_HOME) {
			prefetch_window(t, home[i]);
			later[nlater++] = (uint8_t)i;
		}
	}
	for (size_t j = 0; j < nlater; j++) {
		size_t i = later[j];

		res[i] = record_probe(t, key[i], home[i], &a[i], p);
	}
}

void hot_table_record_batch(struct hot_table *t, const struct hot_access *a, size_t n,
			    const struct hot_params *p, int *res)
{
	for (size_t i = 0; i < n; i += BATCH_BLOCK)
		record_block(t, a + i, n - i < BATCH_BLOCK ? n - i : BATCH_BLOCK, p, res + i);
}

/* The meta of proc's page at vaddr, as a reader sees it: 0, -ENOENT when untracked, or the
 * key's error. */
static int peek_meta(const struct hot_table *t, uint32_t proc, uint64_t vaddr, uint64_t *meta)
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
			*meta = m;
			return 0;
		}
	}
	return -ENOENT;
}

int hot_table_peek(const struct hot_table *t, uint32_t proc, uint64_t vaddr, unsigned *count)
{
	uint64_t m;
	int r = peek_meta(t, proc, vaddr, &m);

	if (r == 0)
		*count = meta_count(m);
	return r;
}

bool hot_table_cooling(const struct hot_table *t, uint32_t proc, uint64_t vaddr, uint64_t now_ms,
		       unsigned cooldown_ms)
{
	uint64_t m;

	if (peek_meta(t, proc, vaddr, &m) < 0 || !(m & M_PROMOTED))
		return false;
	return ((now_ms - meta_time(m)) & TIME_MASK) < cooldown_ms;
}

void hot_table_set_proc_check(struct hot_table *t, bool (*valid)(void *ctx, uint32_t proc),
			      void *ctx)
{
	t->proc_valid = valid;
	t->proc_ctx = ctx;
}

static struct hot_candidate candidate_of(uint32_t idx, uint64_t k, uint64_t m)
{
	return (struct hot_candidate){
	    .proc = key_proc(k),
	    .vaddr = (k & VPN_MASK) << HOT_PAGE_SHIFT,
	    .node = meta_node(m),
	    .count = meta_count(m),
	    .slot = idx,
	    .on_slow = (m & M_SLOW) != 0,
	    .size = (enum hot_size)((m & M_SIZE_MASK) >> M_SIZE_SHIFT),
	};
}

/* Promoter: a popped slot's candidate from the entry itself; frees it instead if its process
 * was forgotten (DEAD). */
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
		*c = candidate_of(idx, k, m);
		return true;
	}
}

size_t hot_table_pop_strided(struct hot_table *t, void *out, size_t stride, size_t max)
{
	char *o = out;
	/* Relaxed: only this thread writes deq_pos. */
	size_t pos = atomic_load_explicit(&t->deq_pos, memory_order_relaxed);
	/* Relaxed: a hint. A DEAD mark it misses was made after the pusher's copy, as if after
	 * this pop: done() frees such an entry. */
	bool look = atomic_load_explicit(&t->dead, memory_order_relaxed) != 0;
	size_t n = 0;

	while (n < max) {
		struct ready_cell *c = &t->ring[pos & t->ring_mask];
		/* Acquire: pairs with the store-release of seq in ready_push(). */
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		uint32_t idx;
		uint64_t k, m;

		if (seq != pos + 1)
			break;
		idx = c->slot;
		k = c->key;
		m = c->meta;
		/* Release: pairs with the load-acquire of seq in ready_push(). */
		atomic_store_explicit(&c->seq, pos + t->ring_mask + 1, memory_order_release);
		pos++;
		if (!look)
			*(struct hot_candidate *)(o + n++ * stride) = candidate_of(idx, k, m);
		else if (slot_candidate(t, idx, (struct hot_candidate *)(o + n * stride)))
			n++;
	}
	/* Relaxed: deq_pos only feeds the hot_table_queued() estimate besides this thread. */
	atomic_store_explicit(&t->deq_pos, pos, memory_order_relaxed);
	return n;
}

size_t hot_table_pop(struct hot_table *t, struct hot_candidate *out, size_t max)
{
	return hot_table_pop_strided(t, out, sizeof(*out), max);
}

void hot_table_prefetch(const struct hot_table *t, uint32_t slot)
{
	if (slot > t->mask)
		return;
	__builtin_prefetch(&t->slots[slot], 1);
	/* An empty volatile asm: without it a link-time optimiser may find this function pure
	 * and drop its calls (see prefetch_window()). */
	__asm__ __volatile__("");
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
		/* The queue still points here: mark it, pop(), done() or the pusher frees it. */
		if (atomic_compare_exchange_weak_explicit(
			&s->meta, &m, m | M_DEAD, memory_order_acq_rel, memory_order_relaxed)) {
			/* Relaxed: a hint for pop(); slot_free() takes it back. */
			atomic_fetch_add_explicit(&t->dead, 1, memory_order_relaxed);
			return true;
		}
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

void hot_table_each_waiting(const struct hot_table *t, void (*each)(void *ctx, uint32_t proc),
			    void *ctx)
{
	for (size_t i = 0; i <= t->mask; i++) {
		/* Relaxed: an estimate. An entry that changes under the walk counts as it was at
		 * either load; nothing is dereferenced from them. */
		uint64_t m = atomic_load_explicit(&t->slots[i].meta, memory_order_relaxed);
		uint64_t k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);

		if ((m & (M_QUEUED | M_DEAD | M_BUSY)) == M_QUEUED && k && !(k & KEY_PEND))
			each(ctx, key_proc(k));
	}
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
