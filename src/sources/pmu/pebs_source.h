/* pebs_source: the Intel PEBS source's hardware-specific half: finding the core PMU in sysfs
 * (cpu, or cpu_core on hybrid parts), choosing the events through libpfm4 for the CPU model
 * (load latency MEM_TRANS_RETIRED:LOAD_LATENCY with ldlat, optionally
 * MEM_INST_RETIRED:ALL_STORES, or the config's explicit event), adding the mem-loads-aux group
 * leader where the kernel requires it (Sapphire Rapids and later), finding the highest
 * precise_ip the kernel accepts, and turning samples into access events (pmu_filter).
 * The generic sampler (perf_sampler) opens, maps and drains the per-CPU events.
 *
 * Main thread for everything but pebs_source_convert (source thread). libpfm4 is loaded at
 * the first plan (sources/pmu/pfm_lib.h), and reads LIBPFM_FORCE_PMU once, at its first
 * initialisation in the process. */
#ifndef PGHOTD_PEBS_SOURCE_H
#define PGHOTD_PEBS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "table/access.h"
#include "sources/perf/perf_sampler.h"
#include "sources/pmu/pmu_filter.h"
#include "sources/source.h"

struct perf_sample;
struct pfm_lib;

#define PEBS_MAX_EVENTS	  3
#define PEBS_REASON_MAX	  512
#define PEBS_NAME_MAX	  256
#define PEBS_CPULIST_MAX  256
#define PEBS_LOADS_EVENT  "MEM_TRANS_RETIRED:LOAD_LATENCY"
#define PEBS_STORES_EVENT "MEM_INST_RETIRED:ALL_STORES"

struct pebs_pmu {
	char name[16]; /* "cpu" or "cpu_core" */
	bool hybrid;
	int type;
	bool has_aux;		     /* events/mem-loads-aux exists */
	uint64_t aux_config;	     /* its encoding (event | umask << 8) */
	char cpus[PEBS_CPULIST_MAX]; /* cpu_core/cpus on hybrid parts ("" elsewhere: all) */
};

struct pebs_opts {
	uint64_t period;	   /* sources.pebs.period */
	unsigned ldlat;		   /* sources.pebs.ldlat */
	bool stores;		   /* sources.pebs.stores */
	const char *event;	   /* sources.pebs.event; NULL or "" to choose */
	bool phys_addr;		   /* PHYS_ADDR permitted */
	const struct pfm_lib *pfm; /* NULL: libpfm.so.4, loaded once (pfm_lib_get) */
};

struct pebs_event {
	struct perf_event_attr attr;
	int leader;	       /* index in the plan of the group leader; -1: leads itself */
	bool sampling;	       /* false for the mem-loads-aux leader: it only enables loads */
	enum access_kind kind; /* what its samples are when DATA_SRC carries no op */
	char name[PEBS_NAME_MAX];
};

/* Events in opening order: a leader always comes before its members. */
struct pebs_plan {
	int n;
	struct pebs_event ev[PEBS_MAX_EVENTS];
};

/* Reads <sysfs_root>/bus/event_source/devices/cpu_core (hybrid) or cpu: type, events/mem-loads
 * (must exist), events/mem-loads-aux, cpus. -ENODEV without a PMU that has mem-loads, -EINVAL
 * for a malformed file; reason (may be NULL) names the file. *out untouched on failure. */
int pebs_source_pmu_read(const char *sysfs_root, struct pebs_pmu *out, char *reason, size_t size);
/* Builds the events. The load's -errno when libpfm4 could not be loaded, with reason "cannot
 * load libpfm4: <dlerror()>"; -ENOENT when libpfm4 cannot encode the loads (or the explicit)
 * event, with reason "libpfm4 cannot encode <event>: <pfm error>"; a stores event it cannot
 * encode is left out (a warning in reason, return 0). precise_ip starts at 3: see
 * pick_precise. */
int pebs_source_plan(const struct pebs_pmu *pmu, const struct pebs_opts *o, struct pebs_plan *out,
		     char *reason, size_t size);

/* perf_event_open as the probe uses it; tests inject fakes. open returns an fd or -errno. */
struct pebs_open_ops {
	int (*open)(void *ctx, const struct perf_event_attr *attr, int group_fd);
	void (*close)(void *ctx, int fd);
	void *ctx;
};
/* The real thing on one CPU, pid -1 (ctx: pointer to an int CPU number). */
extern const struct pebs_open_ops pebs_open_real;
/* For each sampling event, tries precise_ip 3, 2, 1 (opening its leader first) and keeps the
 * first the kernel accepts; -EOPNOTSUPP/-EINVAL step down, any other error stops. Returns 0,
 * or the last -errno with reason "perf_event_open <event> precise_ip=<n>: <strerror>". */
int pebs_source_pick_precise(struct pebs_plan *p, const struct pebs_open_ops *ops, char *reason,
			     size_t size);
/* --probe / startup: 0, or -ENODEV with the reason (text after "unavailable: "). */
int pebs_source_available(const char *sysfs_root, char *reason, size_t size);

struct pebs_convert {
	struct pmu_filter filter;
	bool phys_addr;
};
void pebs_source_convert_init(struct pebs_convert *c, const struct pebs_opts *o,
			      const struct topology *topo, struct stats *stats);
/* One parsed sample of event `kind` -> *ev (SAMPLE_KEPT) or a counted drop. Source thread. */
enum sample_drop pebs_source_convert(struct pebs_convert *c, enum access_kind kind,
				     const struct perf_sample *s, struct access_event *ev);

/* "0-3,8,10-11" -> 0 1 2 3 8 10 11. Returns the count (at most max stored), -EINVAL for a
 * malformed list. Pure. */
int pebs_source_parse_cpulist(const char *s, int *out, int max);

/* --- the running source, on perf_sampler --- */

struct pebs_source_params {
	const char *sysfs_root;		   /* "/sys" */
	const struct pghotd_config *cfg;   /* sources.pebs.*, sources.cpu_budget_percent */
	const struct topology *topo;	   /* placement; must outlive the source (may be NULL) */
	bool phys_addr;			   /* PHYS_ADDR permitted */
	const struct pebs_open_ops *probe; /* precise_ip probing; NULL: pebs_open_real */
	const struct pfm_lib *pfm;	   /* NULL: libpfm.so.4, loaded once (pfm_lib_get) */
	/* ring_pages 0: cfg's; cpus NULL: cpu_core's CPUs on hybrid parts, else all */
	struct perf_sampler_params sampler;
};

struct pebs_source;

/* Main thread. Finds the PMU, plans the events with libpfm4, probes precise_ip, opens every
 * per-CPU event (group led by mem-loads-aux where needed) through perf_sampler and starts
 * its thread with the adaptive period controller. On failure: -ENODEV (no PMU, no libpfm4
 * or no event for this model) or the -errno of the refused open; reason holds the text to
 * show after "unavailable: "; pghotd_source_active{pebs} stays 0. */
int pebs_source_start(const struct pebs_source_params *p, struct pebs_source **out, char *reason,
		      size_t size);
void pebs_source_stop(struct pebs_source *s);
uint64_t pebs_source_period(const struct pebs_source *s);

/* The source interface: pebs_source_start on the engine's deps, a config slot of its own. */
extern const struct source_ops pebs_source_ops;

#endif
