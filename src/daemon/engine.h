/* engine: the data path the daemon runs — process registry, hot table, feeder (the sink every
 * source delivers to), promoter thread, and the source threads — built from the startup
 * config, started and stopped as one. Main thread only. */
#ifndef PGHOTD_ENGINE_H
#define PGHOTD_ENGINE_H

#include "table/access.h"
#include "base/config.h"
#include "base/config_pub.h"
#include "daemon/probe.h"
#include "base/stats.h"
#include "sys/topology.h"

struct engine;
struct perf_sampler_ops;

struct engine_env {
	const char *sysfs_root;
	const char *procfs_root;
	struct stats *stats;
	const struct perf_sampler_ops *perf_ops; /* the perf sources' syscalls; NULL: real */
};

/* Processes the registry tracks at once (procs_new()): every per-process array beside it
 * (cgroups.h) has this many slots, whatever number of processes is watched. */
#define ENGINE_MAX_PROCS 32768

/* The hot table's entries at start: twice the slow tier's pages (a page is tracked while it is
 * slow, or promoted within its cooldown), at least ENGINE_TABLE_FLOOR, at most hot_table.capacity
 * (configured): a table beyond that is DRAM held for nothing, 16 MiB at the shipped capacity
 * beside a 512 MiB expander. Memory onlined later is tracked within that size. */
#define ENGINE_TABLE_FLOOR 262144
size_t engine_table_capacity(const struct topology *t, unsigned configured, size_t page_size);

/* For --probe: opens and closes the IBS and PEBS events the preflight found usable, so that a
 * kernel refusing them shows as "unavailable: <reason with errno>" in res. */
int engine_probe_perf(const struct engine_env *env, const struct pghotd_config *cfg,
		      struct probe_result *res);
/* Sizes the hot table (engine_table_capacity(), fixed for the daemon's life) and sets the
 * per-cgroup families to render with env->stats (stats_set_extra(), until engine_free()). */
int engine_new(const struct engine_env *env, const struct pghotd_config *cfg, struct engine **out);
/* Starts the promoter and every source the probe found available and the config allows.
 * Returns the number of sources started, or -errno (nothing left running). */
int engine_start(struct engine *e, struct config_pub *pub, const struct probe_result *probe);
/* After a reload was published (old: the config it replaced, still valid on the main
 * thread): starts sources the new probe allows, stops those it no longer allows, restarts
 * perf sources whose settings changed, and resizes the shown cgroups (stats.cgroups_max). Returns
 * sources running, or -errno when a required source failed to start (the others keep running). */
int engine_apply(struct engine *e, struct config_pub *pub, const struct pghotd_config *old,
		 const struct probe_result *probe);
/* Called from the main loop every stats interval, cfg the config in force: gauges, forgetting
 * exited processes, the per-cgroup figures (cgroups_refresh()). */
void engine_tick(struct engine *e, const struct pghotd_config *cfg);
/* Comma-separated names of running sources ("" when none). */
const char *engine_source_names(const struct engine *e);
int engine_sources_running(const struct engine *e);
/* Stops and joins every thread and gives back their config slots; idempotent. */
void engine_stop(struct engine *e, struct config_pub *pub);
/* After engine_stop(). */
void engine_free(struct engine *e);

#endif
