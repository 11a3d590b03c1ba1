/* damon_feed: a DAMON region's pages to the hot table and the cold list (see damon_feed.h). */
#include <errno.h>

#include "table/cold_list.h"
#include "sources/damon/damon_feed.h"
#include "sys/pagemap.h"
#include "base/stats.h"
#include "sys/topology.h"

#define BATCH 64

struct feed_out {
	struct access_event ev[BATCH];
	struct cold_page cold[BATCH];
	size_t nev, ncold;
	uint64_t *slow_hot; /* f->slow_hot for a region hot by its samples, else NULL */
};

static uint32_t samples_per_aggr(const struct pghotd_config *cfg)
{
	uint32_t s = cfg->sources.damon.aggr_us / cfg->sources.damon.sample_us;

	return s ? s : 1;
}

bool damon_region_hot(const struct pghotd_config *cfg, const struct damon_region *r)
{
	uint32_t n = samples_per_aggr(cfg);

	return r->nr_accesses >= (n < DAMON_HOT_MIN ? n : DAMON_HOT_MIN) &&
	       (uint64_t)r->nr_accesses * DAMON_HOT_SHARE >= n;
}

/* Milliseconds the region has kept its access level. */
static uint64_t region_age_ms(const struct pghotd_config *cfg, const struct damon_region *r)
{
	return (uint64_t)r->age * cfg->sources.damon.aggr_us / 1000;
}

/* Idle for the exchange age, as the Accessed-bit source offers: the mover takes such pages for
 * an exchange, and waits for demotion.min_idle_ms for the free target. */
bool damon_region_cold(const struct pghotd_config *cfg, const struct damon_region *r)
{
	return r->nr_accesses == 0 && region_age_ms(cfg, r) >= config_demotion_exchange_ms(cfg);
}

uint64_t damon_aggr_span_ns(const struct pghotd_config *cfg)
{
	return (uint64_t)cfg->sources.damon.aggr_us * 1000 / 2;
}

void damon_cold_pass_start(struct damon_cold_pass *c)
{
	c->due = true;
}

bool damon_cold_pass_due(struct damon_cold_pass *c, const struct pghotd_config *cfg,
			 uint64_t now_ms, uint32_t epoch, uint64_t want, size_t offers)
{
	bool low = want && offers < COLD_LIST_LOW &&
		   now_ms >= c->last_ms + config_demotion_exchange_ms(cfg) / 2;

	if (now_ms < c->next_ms && epoch == c->epoch && !low)
		return false;
	c->next_ms = now_ms + config_demotion_idle_ms(cfg) / 4;
	c->last_ms = now_ms;
	c->epoch = epoch;
	damon_cold_pass_start(c);
	return true;
}

bool damon_warm_pass_due(struct damon_cold_pass *c, uint64_t now_ms)
{
	if (now_ms < c->next_ms)
		return false;
	c->next_ms = now_ms + DAMON_WARM_PASS_MS;
	damon_cold_pass_start(c);
	return true;
}

bool damon_cold_pass_covers(struct damon_cold_pass *c, const struct pghotd_config *cfg,
			    uint64_t time_ns)
{
	if (c->due) {
		c->end_ns = time_ns + damon_aggr_span_ns(cfg);
		c->due = false;
	}
	return time_ns < c->end_ns;
}

static void flush(const struct damon_feed *f, struct feed_out *o)
{
	access_deliver(&f->sink, f->cfg, o->ev, o->nev);
	if (o->ncold && f->cold)
		cold_list_offer(f->cold, o->cold, o->ncold);
	o->nev = o->ncold = 0;
}

static void hot_page(const struct damon_feed *f, const struct damon_feed_proc *p,
		     struct feed_out *o, uint64_t vaddr, uint64_t pfn, unsigned threshold)
{
	o->ev[o->nev++] = (struct access_event){
	    .pid = p->pid,
	    .tid = p->pid,
	    .vaddr = vaddr,
	    .paddr = pfn << PAGEMAP_PAGE_SHIFT,
	    .cpu = p->cpu,
	    .node = p->node,
	    .time_ns = f->now_ns,
	    .source = SRC_DAMON,
	    .kind = ACCESS_UNKNOWN,
	    .size = HOT_SIZE_BASE,
	    .threshold = threshold,
	};
	if (o->slow_hot)
		(*o->slow_hot)++;
	if (o->nev == BATCH)
		flush(f, o);
}

static void cold_page(const struct damon_feed *f, const struct damon_feed_proc *p,
		      struct feed_out *o, uint64_t vaddr, int node, uint64_t idle_ms)
{
	uint64_t now_ms = f->now_ns / 1000000;

	o->cold[o->ncold++] = (struct cold_page){
	    .pid = p->pid,
	    .proc = p->proc,
	    .vaddr = vaddr,
	    .idle_since_ms = now_ms > idle_ms ? now_ms - idle_ms : 0,
	    .offered_ms = now_ms,
	    .node = node,
	    .size = HOT_SIZE_BASE,
	};
	if (o->ncold == BATCH)
		flush(f, o);
}

/* One pagemap read's worth of the region from vaddr. */
static void feed_entries(const struct damon_feed *f, const struct damon_feed_proc *p,
			 struct feed_out *o, uint64_t vaddr, const uint64_t *ent, size_t n,
			 bool hot, unsigned threshold, uint64_t idle_ms)
{
	const struct topology *t = f->cfg->topo;

	for (size_t i = 0; i < n; i++) {
		uint64_t pfn = pagemap_pfn(ent[i]), va = vaddr + i * PAGEMAP_PAGE_SIZE;
		int node = pfn && t ? topology_node_of_pfn(t, pfn) : -1;

		if (node < 0)
			continue;
		if (hot && topology_node_is_slow(t, node))
			hot_page(f, p, o, va, pfn, threshold);
		else if (!hot && node < 64 && (f->want >> node & 1) &&
			 topology_node_is_fast(t, node) && (ent[i] & PAGEMAP_EXCLUSIVE))
			cold_page(f, p, o, va, node, idle_ms);
	}
}

bool damon_feed_probe_slow(const struct damon_feed *f, const struct damon_region *r,
			   unsigned probes)
{
	const struct topology *t = f->cfg->topo;
	uint64_t pages = r->end > r->start ? (r->end - r->start) / PAGEMAP_PAGE_SIZE : 0;

	if (pages < probes)
		probes = (unsigned)pages;
	for (unsigned i = 0; t && i < probes; i++) {
		uint64_t va = (r->start & ~(PAGEMAP_PAGE_SIZE - 1)) +
			      pages * i / probes * PAGEMAP_PAGE_SIZE,
			 ent, pfn;
		int node;

		if (f->pagemap(f->ctx, va, &ent, 1) != 1)
			continue;
		pfn = pagemap_pfn(ent);
		node = pfn ? topology_node_of_pfn(t, pfn) : -1;
		if (node >= 0 && topology_node_is_slow(t, node))
			return true;
	}
	return false;
}

long damon_feed_region(const struct damon_feed *f, const struct damon_feed_proc *p,
		       const struct damon_region *r, uint64_t max_pages)
{
	bool intense = damon_region_hot(f->cfg, r);
	/* A region found used in DAMON_HOT_MIN samples of this aggregation but not hot is used
	 * intensely in part: the cuts isolate that part (damon_regions.h), where a warm move
	 * would take its cold rest too. */
	bool hot = intense || (f->warm && f->warm_pass && f->room && !f->by_intense &&
			       f->warm_hi > f->warm_lo && r->nr_accesses < DAMON_HOT_MIN);
	/* Warm alone: only the part warm twice running (damon_heat_note()). */
	uint64_t start = intense || !hot || f->warm_lo < r->start ? r->start : f->warm_lo;
	uint64_t end = intense || !hot || f->warm_hi > r->end ? r->end : f->warm_hi;
	/* First evidence: a full region, or a warm one inside warm data. */
	unsigned thr =
	    hot && (r->nr_accesses >= samples_per_aggr(f->cfg) || (!intense && f->warm_inside))
		? f->first_thr
		: 0;
	bool cold =
	    !hot && !f->warm && f->cold && f->want && f->cold_pass && damon_region_cold(f->cfg, r);
	uint64_t ent[DAMON_FEED_PAGES], read = 0;
	struct feed_out o;
	long r2 = 0;

	if ((!hot && !cold) || end <= start)
		return 0;
	o.nev = o.ncold = 0;
	o.slow_hot = intense ? f->slow_hot : NULL;
	for (uint64_t va = start & ~(PAGEMAP_PAGE_SIZE - 1); va < end && read < max_pages;) {
		uint64_t left = (end - va + PAGEMAP_PAGE_SIZE - 1) / PAGEMAP_PAGE_SIZE;
		size_t n = left < DAMON_FEED_PAGES ? (size_t)left : DAMON_FEED_PAGES;

		if (n > max_pages - read)
			n = (size_t)(max_pages - read);
		r2 = f->pagemap(f->ctx, va, ent, n);
		if (r2 <= 0)
			break;
		feed_entries(f, p, &o, va, ent, (size_t)r2, hot, thr, region_age_ms(f->cfg, r));
		read += (uint64_t)r2;
		va += (uint64_t)r2 * PAGEMAP_PAGE_SIZE;
	}
	flush(f, &o);
	if (f->stats) {
		stats_src_add(f->stats, SRC_DAMON, SS_PAGES_SCANNED, read);
		stats_src_add(f->stats, SRC_DAMON, SS_SCAN_IO_BYTES, read * sizeof(uint64_t));
	}
	return r2 < 0 ? r2 : (long)read;
}
