/* pmu_filter: see pmu_filter.h. */
#include "sources/pmu/pmu_filter.h"

#include <string.h>

#include <linux/perf_event.h>

#include "sources/pmu/mem_src.h"
#include "sources/perf/perf_sample.h"
#include "sys/topology.h"

void pmu_filter_init(struct pmu_filter *f, const struct topology *topo, struct stats *stats,
		     enum stat_source source)
{
	memset(f, 0, sizeof(*f));
	f->topo = topo;
	f->stats = stats;
	f->source = source;
}

void pmu_filter_count_drop(struct pmu_filter *f, enum sample_drop why)
{
	if ((unsigned)why >= SAMPLE_DROP__COUNT || why == SAMPLE_KEPT)
		return;
	f->dropped[why]++;
	if (f->stats)
		stats_src_add(f->stats, f->source, SS_SAMPLES_DROPPED, 1);
}

/* Where the page lives, from the physical address; -1 when that cannot be told. */
static int node_of_paddr(const struct pmu_filter *f, uint64_t paddr)
{
	if (!paddr || !f->topo)
		return -1;
	return topology_node_of_pfn(f->topo, paddr >> 12);
}

static enum sample_drop judge(const struct pmu_filter *f, const struct sample_in *in)
{
	int page_node;
	enum mem_src_level lvl;

	if (in->kind != ACCESS_LOAD && in->kind != ACCESS_STORE)
		return SAMPLE_DROP_NOT_MEMOP;
	if (!in->addr_valid || !in->vaddr)
		return SAMPLE_DROP_NO_ADDR;
	if (!sample_addr_is_user(in->vaddr) || in->pid <= 0)
		return SAMPLE_DROP_KERNEL;
	page_node = node_of_paddr(f, in->paddr);
	if (page_node >= 0)
		return topology_node_is_slow(f->topo, page_node) ? SAMPLE_KEPT
								 : SAMPLE_DROP_FAST_NODE;
	lvl = mem_src_level(in->data_src);
	if (mem_src_level_is_near(lvl))
		return SAMPLE_DROP_NEAR_SOURCE;
	if (lvl == MEM_SRC_IO)
		return SAMPLE_DROP_NOT_MEMORY;
	return SAMPLE_KEPT;
}

enum sample_drop pmu_filter_apply(struct pmu_filter *f, const struct sample_in *in,
				  struct access_event *out)
{
	enum sample_drop why = judge(f, in);

	if (why != SAMPLE_KEPT) {
		pmu_filter_count_drop(f, why);
		return why;
	}
	f->kept++;
	out->pid = in->pid;
	out->tid = in->tid;
	out->vaddr = in->vaddr;
	out->paddr = in->paddr;
	out->cpu = in->cpu;
	out->node = (in->cpu >= 0 && f->topo) ? topology_cpu_node(f->topo, in->cpu) : -1;
	out->time_ns = in->time_ns;
	out->source = f->source;
	out->kind = in->kind;
	return SAMPLE_KEPT;
}

void sample_in_from_perf(const struct perf_sample *s, enum access_kind fallback, bool phys_ok,
			 struct sample_in *in)
{
	bool has_src = s->present & PERF_SAMPLE_DATA_SRC;
	enum access_kind k = has_src ? mem_src_kind(s->data_src) : ACCESS_UNKNOWN;

	memset(in, 0, sizeof(*in));
	in->pid = (pid_t)s->pid;
	in->tid = (pid_t)s->tid;
	in->addr_valid = (s->present & PERF_SAMPLE_ADDR) && s->addr;
	in->vaddr = in->addr_valid ? s->addr : 0;
	in->paddr = (phys_ok && (s->present & PERF_SAMPLE_PHYS_ADDR)) ? s->phys_addr : 0;
	in->cpu = (s->present & PERF_SAMPLE_CPU) ? (int)s->cpu : -1;
	in->time_ns = s->time;
	/* without DATA_SRC the level is unknown: op and level NA */
	in->data_src = has_src ? s->data_src
			       : (uint64_t)PERF_MEM_OP_NA | (uint64_t)PERF_MEM_LVL_NA
								<< MEM_SRC_LVL_SHIFT;
	in->kind = k != ACCESS_UNKNOWN ? k : fallback;
}

const char *sample_drop_name(enum sample_drop d)
{
	static const char *const names[SAMPLE_DROP__COUNT] = {
	    [SAMPLE_KEPT] = "kept",
	    [SAMPLE_DROP_NOT_MEMOP] = "not-memop",
	    [SAMPLE_DROP_NO_ADDR] = "no-addr",
	    [SAMPLE_DROP_KERNEL] = "kernel",
	    [SAMPLE_DROP_FAST_NODE] = "fast-node",
	    [SAMPLE_DROP_NEAR_SOURCE] = "near-source",
	    [SAMPLE_DROP_NOT_MEMORY] = "not-memory",
	    [SAMPLE_DROP_MALFORMED] = "malformed",
	};

	return (unsigned)d < SAMPLE_DROP__COUNT ? names[d] : "invalid";
}
