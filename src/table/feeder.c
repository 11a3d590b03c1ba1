/* feeder: access events -> hot table.
 *
 * The selection cache holds one word per procs slot: handle (PROCS_HANDLE_BITS) | config
 * generation (36 bits) | selected (1 bit). A word whose handle or generation differs from the
 * event's is a miss and is recomputed from /proc; two threads racing on a miss compute the same
 * verdict, so relaxed loads and stores suffice (the word carries no other data). */
#include <errno.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/config.h"
#include "table/feeder.h"
#include "table/hot_table.h"
#include "table/proc_filter.h"
#include "table/procs.h"
#include "base/stats.h"
#include "sys/topology.h"

#define SLOTS	 (1u << 16)
#define GEN_BITS 36
#define GEN_MASK ((1ull << GEN_BITS) - 1)

struct feeder {
	struct feeder_deps d;
	_Atomic uint64_t verdict[SLOTS];
};

int feeder_new(const struct feeder_deps *deps, struct feeder **out)
{
	struct feeder *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->d = *deps;
	if (!f->d.now_ms)
		f->d.now_ms = clock_monotonic_ms;
	*out = f; /* calloc: every verdict word is 0, a miss for any valid (non-zero) handle */
	return 0;
}

void feeder_free(struct feeder *f)
{
	free(f);
}

struct access_sink feeder_sink(struct feeder *f)
{
	return (struct access_sink){.deliver = feeder_deliver, .ctx = f};
}

static uint64_t verdict_word(uint32_t handle, uint64_t gen, bool selected)
{
	return (uint64_t)handle << (GEN_BITS + 1) | (gen & GEN_MASK) << 1 | (selected ? 1 : 0);
}

static bool selected(struct feeder *f, const struct pghotd_config *cfg, uint32_t handle, pid_t pid)
{
	_Atomic uint64_t *w = &f->verdict[handle & (SLOTS - 1)];
	uint64_t v = atomic_load_explicit(w, memory_order_relaxed); /* self-contained word */
	struct proc_info info;
	bool sel;

	if ((v & ~1ull) == (verdict_word(handle, cfg->generation, false)))
		return v & 1;
	if (proc_filter_selects_all(cfg))
		sel = true;
	else
		sel = proc_info_read(f->d.procfs_root, pid, &info) == 0 &&
		      proc_filter_match(cfg, &info);
	atomic_store_explicit(w, verdict_word(handle, cfg->generation, sel), memory_order_relaxed);
	return sel;
}

/* The access saw its page on a slow node: what the promoter would otherwise ask move_pages.
 * Only a physical address tells (the Accessed-bit scanner's PFN; IBS/PEBS PHYS_ADDR). */
static bool paddr_on_slow(const struct pghotd_config *cfg, uint64_t paddr)
{
	int node;

	if (!paddr || !cfg->topo)
		return false;
	node = topology_node_of_pfn(cfg->topo, paddr >> 12);
	return node >= 0 && topology_node_is_slow(cfg->topo, node);
}

/* The hot table's verdict on one access from source src. */
static void record_result(struct feeder *f, enum stat_source src, int r)
{
	if (r == 1 && f->d.wake)
		f->d.wake(f->d.wake_ctx, false);
	else if (r == -ENOSPC) {
		stats_add(f->d.stats, ST_HOT_TABLE_QUEUE_FULL, 1);
		if (f->d.wake)
			f->d.wake(f->d.wake_ctx, true);
	} else if (r < 0 && r != -EAGAIN)
		stats_src_add(f->d.stats, src, SS_SAMPLES_DROPPED, 1);
}

/* Selected events go to the hot table in blocks of this many: one batch call lets their lookups'
 * cache misses overlap. */
#define BLOCK 64

static void record_block(struct feeder *f, const struct hot_access *a, const enum stat_source *src,
			 size_t n, const struct hot_params *hp)
{
	int res[BLOCK];

	hot_table_record_batch(f->d.hot, a, n, hp, res);
	for (size_t i = 0; i < n; i++)
		record_result(f, src[i], res[i]);
}

/* The threshold that counts for ev: its own when lower than the configured one. */
static unsigned event_threshold(const struct access_event *ev, unsigned configured)
{
	return ev->threshold && ev->threshold < configured ? ev->threshold : configured;
}

void feeder_deliver(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	struct feeder *f = ctx;
	struct hot_params hp = {.threshold = cfg->promotion.threshold,
				.window_ms = cfg->promotion.window_ms,
				.cooldown_ms = cfg->promotion.cooldown_ms};
	uint64_t now = f->d.now_ms();
	struct hot_access a[BLOCK];
	enum stat_source src[BLOCK];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t h = procs_handle(f->d.procs, ev[i].pid);
		unsigned thr = event_threshold(&ev[i], cfg->promotion.threshold);

		if (h < 0 || !selected(f, cfg, (uint32_t)h, ev[i].pid)) {
			stats_src_add(f->d.stats, ev[i].source, SS_SAMPLES_DROPPED, 1);
			continue;
		}
		/* A block shares one threshold: an event that needs another closes it. */
		if (k && (k == BLOCK || thr != hp.threshold)) {
			record_block(f, a, src, k, &hp);
			k = 0;
		}
		hp.threshold = thr;
		a[k] = (struct hot_access){.proc = (uint32_t)h,
					   .vaddr = ev[i].vaddr,
					   .now_ms = now,
					   .node = ev[i].node,
					   .on_slow = paddr_on_slow(cfg, ev[i].paddr),
					   .size = ev[i].size};
		src[k++] = ev[i].source;
	}
	record_block(f, a, src, k, &hp);
}
