/* source: the interface every access source implements, as the kernel's DAMON core drives
 * vaddr and paddr through struct damon_operations. Each source (sources/pmu/ibs_source,
 * pebs_source, sources/damon/damon_source, sources/abit/abit_source) exports one const
 * struct source_ops; the engine starts, stops, restarts and falls back between them through
 * it alone, and the probe's verdicts (daemon/probe.h) say which may run.
 *
 * A started source owns its thread and whatever it opened or claimed (perf events, a kdamond,
 * page_idle), and its config_pub slot: it registers the slot at start and gives it back at
 * stop. It feeds the sink (and the cold list, when it finds idle pages) from its own thread
 * until stop has returned. Every op runs on the main thread. */
#ifndef PGHOTD_SOURCE_H
#define PGHOTD_SOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/stats.h"
#include "table/access.h"

/* The reason a source gives for not starting, as the log and --probe show it. */
#define SOURCE_REASON_MAX 512

struct cold_list;
struct config_pub;
struct perf_sampler_ops;
struct pghotd_config;
struct procs;
struct topology;

/* What the engine gives a source to start from; every pointer outlives the source. */
struct source_deps {
	const char *sysfs_root;	 /* "/sys" live */
	const char *procfs_root; /* "/proc" live */
	struct stats *stats;	 /* NULL in the --probe trial */
	struct access_sink sink; /* the feeder's (any source thread); discards in the trial */
	struct cold_list *cold;	 /* demotion candidates, for the sources that find idle pages */
	struct procs *procs;	 /* process handles of the cold list's offers */
	/* Hardware facts (node of a physical address, of a CPU) the PMU sources' filters keep
	 * for their life; NULL in the trial. */
	const struct topology *topo;
	const struct perf_sampler_ops *perf_ops; /* the perf sources' syscalls; NULL: real */
	bool phys_addr; /* the probe's verdict: perf samples may carry PHYS_ADDR */
	bool required;	/* the config says "on": not starting is an error */
	/* The running config: the source registers a slot and reads it every round. NULL in
	 * the trial, which takes cfg (unused with pub) as it is. */
	struct config_pub *pub;
	const struct pghotd_config *cfg;
};

struct source_ops {
	enum stat_source id; /* its counters and name (stat_source_name()) */
	/* 1 started (*out set, the thread running); 0 unavailable and not required;
	 * -errno when required, or when the source could not be given what it needs. Logs why
	 * not, once. */
	int (*start)(const struct source_deps *d, void **out);
	/* After start returned 1: stops and joins the thread, closes and gives back all it
	 * holds, frees the handle. */
	void (*stop)(void *handle);
	/* --probe's trial, NULL for sources that have none: opens what start would (d->pub
	 * NULL, nothing fed) and closes it again, so that a kernel refusing it shows. 0, or
	 * -errno with reason the text after "unavailable: " (the caller shows it). */
	int (*trial)(const struct source_deps *d, char *reason, size_t size);
	/* A running source restarts when a key under this prefix ("sources.ibs.") or
	 * sources.cpu_budget_percent changes: it takes them at start. NULL: it reads its
	 * section every round. */
	const char *restart_prefix;
	/* Per-page samples from the CPU's PMU: beside one, a source that yields_to_pmu is not
	 * started in another's stead. */
	bool pmu;
	/* Clears the Accessed bits, so of such sources one runs at a time: when the one the
	 * probe chose does not start, one it passed over (PROBE_PASSED) starts instead. */
	bool clears_accessed;
	bool yields_to_pmu;
};

/* source_ops.start's return for a start that gave r: 0 with handle, or -errno (why logged). */
static inline int source_start_result(const struct source_deps *d, int r, void *handle, void **out)
{
	if (r < 0)
		return d->required ? r : 0;
	*out = handle;
	return 1;
}

#endif
