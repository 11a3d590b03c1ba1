/* hot_table: lock-free, fixed-memory table of page hotness shared by every source, plus the
 * bounded ready queue that hands hot pages to the promoter. See hot_table.c's opening comment
 * for the layout, entry states and retry rules.
 *
 * Sources (any number of threads) call hot_table_record(). The promoter thread alone calls
 * hot_table_pop() and hot_table_done(). Memory is allocated once, in hot_table_new(). */
#ifndef PGHOTD_HOT_TABLE_H
#define PGHOTD_HOT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pages are 4 KiB; addresses must lie below 2^HOT_VADDR_BITS (x86-64 4-level and arm64 48-bit
 * user space). hot_table_record() rejects higher addresses with -ERANGE. Counts saturate at
 * HOT_COUNT_MAX, so thresholds above it are treated as HOT_COUNT_MAX. */
#define HOT_PAGE_SHIFT 12
#define HOT_VADDR_BITS 48
#define HOT_COUNT_MAX  255
#define HOT_NODE_MAX   126 /* node+1 is kept in 7 bits of the entry (CONFIG_MAX_NODES is 64) */

/* A page's mapping size as a source saw it: the Accessed-bit scanner knows it from
 * kpageflags (a THP head), so the promoter need not look it up again. */
enum hot_size {
	HOT_SIZE_UNKNOWN,
	HOT_SIZE_BASE,
	HOT_SIZE_HUGE, /* a transparent huge page: moves and is charged as a whole */
};

struct hot_table;

struct hot_access {
	uint32_t proc;	 /* procs handle */
	uint64_t vaddr;	 /* any address inside the page */
	uint64_t now_ms; /* monotonic milliseconds */
	int node;	 /* node of the accessing CPU, -1 unknown; above HOT_NODE_MAX: unknown */
	/* The access came with a physical address on a slow node (the Accessed-bit scanner's
	 * PFN, an IBS/PEBS PHYS_ADDR): the page's placement is known without asking. */
	bool on_slow;
	enum hot_size size; /* as the source saw it; HOT_SIZE_UNKNOWN (0) when it cannot tell */
};

struct hot_params {
	unsigned threshold;   /* accesses within window_ms that make a page hot */
	unsigned window_ms;   /* gap after which the count restarts */
	unsigned cooldown_ms; /* a promoted page is not queued again within this */
};

/* A queued page, as the access that queued it left the entry. */
struct hot_candidate {
	uint64_t vaddr; /* page aligned */
	uint32_t proc;
	int node; /* node of the last accessing CPU, -1 unknown */
	unsigned count;
	uint32_t slot;	    /* entry index, for hot_table_done() */
	enum hot_size size; /* as the last access saw it */
	bool on_slow;	    /* the last access saw the page on a slow node (hot_access.on_slow) */
};

enum hot_outcome {
	HOT_PROMOTED, /* moved: entry enters cooldown */
	HOT_RETRY,    /* transient failure: back to counting, may be queued again */
	HOT_DROP,     /* gone, shared, not on a slow node: entry freed */
};

/* capacity: entries (rounded up to a power of two); queue: ready-queue slots. */
int hot_table_new(size_t capacity, size_t queue_capacity, struct hot_table **out);
void hot_table_free(struct hot_table *t);

/* Any thread. Returns 1 if this access made the page hot and queued it, 0 if counted,
 * -ENOSPC if the ready queue was full (the entry stays hot and is queued by a later access),
 * -EAGAIN if the probe window was full of queued entries or the entry stayed mid-transition
 * through every retry (access dropped, not counted), -EINVAL for a handle outside the procs
 * layout, -ERANGE for an address at or above 2^HOT_VADDR_BITS. */
int hot_table_record(struct hot_table *t, const struct hot_access *a, const struct hot_params *p);

/* Any thread: hot_table_record() for n accesses, res[i] getting what a[i] returned. Pages
 * are looked up in blocks whose cache misses overlap (a source drains its samples in batches
 * anyway), so a page's accesses are counted in order but may count after those of a later
 * page in the same batch. */
void hot_table_record_batch(struct hot_table *t, const struct hot_access *a, size_t n,
			    const struct hot_params *p, int *res);

/* Any thread: count of a tracked page; -ENOENT when untracked, -EINVAL/-ERANGE for bad keys. */
int hot_table_peek(const struct hot_table *t, uint32_t proc, uint64_t vaddr, unsigned *count);

/* Any thread: whether the page was promoted less than cooldown_ms before now_ms (its entry is
 * in its promotion cooldown); false when untracked or for bad keys. The mover asks before it
 * demotes a page, so a page promoted lately is not sent back down while its cooldown would keep
 * it from coming up again. */
bool hot_table_cooling(const struct hot_table *t, uint32_t proc, uint64_t vaddr, uint64_t now_ms,
		       unsigned cooldown_ms);

/* Main thread, before any source starts: lets a writer that needs room reclaim entries whose
 * process handle is stale (valid returns false) before it evicts a live page. */
void hot_table_set_proc_check(struct hot_table *t, bool (*valid)(void *ctx, uint32_t proc),
			      void *ctx);

/* Promoter thread only: up to max candidates, oldest first. */
size_t hot_table_pop(struct hot_table *t, struct hot_candidate *out, size_t max);
/* hot_table_pop() into candidates stride bytes apart, for a caller that keeps each inside a
 * larger record of its own (the promoter's work items): no copy afterwards. */
size_t hot_table_pop_strided(struct hot_table *t, void *out, size_t stride, size_t max);
/* Promoter thread only: start loading a popped candidate's entry (by c->slot) into the
 * cache ahead of hot_table_done(); a hint, no effect on the table. */
void hot_table_prefetch(const struct hot_table *t, uint32_t slot);
/* Promoter thread only: settle a popped candidate. */
void hot_table_done(struct hot_table *t, const struct hot_candidate *c, enum hot_outcome o,
		    uint64_t now_ms);
/* Promoter or main thread: drop every entry of proc (exited or forgotten). Returns count. */
size_t hot_table_forget_proc(struct hot_table *t, uint32_t proc);

/* Any thread, approximate: calls each() with the procs handle of every entry waiting for the
 * promoter (queued, or taken and not yet settled), a walk of the whole table. */
void hot_table_each_waiting(const struct hot_table *t, void (*each)(void *ctx, uint32_t proc),
			    void *ctx);

/* Any thread, approximate. */
size_t hot_table_used(const struct hot_table *t);
size_t hot_table_queued(const struct hot_table *t);
uint64_t hot_table_replacements(const struct hot_table *t); /* live pages evicted for room */
uint64_t hot_table_reclaims(const struct hot_table *t);	    /* stale-process entries reused */
size_t hot_table_capacity(const struct hot_table *t);
size_t hot_table_entry_size(void);

#endif
