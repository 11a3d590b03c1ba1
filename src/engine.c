/* engine: wiring of the data path: sources -> feeder -> hot table -> promoter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "abit_idle.h"
#include "engine.h"
#include "feeder.h"
#include "hot_table.h"
#include "log.h"
#include "perf_sampler.h"
#include "procs.h"
#include "promoter.h"
#include "sampler_ibs.h"
#include "sampler_pebs.h"
#include "topology.h"

#define ENGINE_MAX_PROCS 32768
#define PERF_DRAIN_MS	 100
#define CAP_PERFMON	 38
#define CAP_SYS_ADMIN	 21

struct engine {
	struct engine_env env;
	struct procs *procs;
	struct hot_table *hot;
	struct promoter *promoter;
	struct feeder *feeder;
	/* The perf sources' sample filter keeps this topology for the daemon's life (node of a
	 * physical address, node of a CPU: hardware facts). Tier changes of a later reload
	 * reach the promoter, which re-checks placement, not this early filter. */
	struct topology *topo;
	bool promoter_running;
	struct ibs_source *ibs;
	struct pebs_source *pebs;
	struct abit *abit;
	int slot[SRC__COUNT]; /* config_pub slots of the perf sources, -1 when none */
	int nr_sources;
	char source_names[64];
};

static bool proc_still_valid(void *ctx, uint32_t proc)
{
	return procs_valid(ctx, proc);
}

/* Ready queue: room for several promotion rounds of the largest batch, bounded by the table. */
static size_t queue_capacity(size_t capacity)
{
	size_t q = capacity / 16;

	return q < 4096 ? 4096 : q > 65536 ? 65536 : q;
}

int engine_new(const struct engine_env *env, const struct pghotd_config *cfg, struct engine **out)
{
	struct engine *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	e->env = *env;
	for (int i = 0; i < SRC__COUNT; i++)
		e->slot[i] = -1;
	r = topology_load(env->sysfs_root, &e->topo);
	if (r == 0)
		r = topology_apply_config(e->topo, cfg);
	if (r == 0)
		r = procs_new(env->procfs_root, ENGINE_MAX_PROCS, &e->procs);
	if (r == 0)
		r = hot_table_new(cfg->hot_table.capacity, queue_capacity(cfg->hot_table.capacity),
				  &e->hot);
	if (r == 0) {
		hot_table_set_proc_check(e->hot, proc_still_valid, e->procs);
		r = promoter_new(&(struct promoter_deps){.hot = e->hot,
							 .procs = e->procs,
							 .topo = cfg->topo,
							 .stats = env->stats,
							 .ops = &promoter_real_ops},
				 &e->promoter);
	}
	if (r == 0)
		r = feeder_new(&(struct feeder_deps){.hot = e->hot,
						     .procs = e->procs,
						     .stats = env->stats,
						     .promoter = e->promoter,
						     .procfs_root = env->procfs_root},
			       &e->feeder);
	if (r < 0) {
		engine_free(e);
		return log_error_errno(r, "cannot set up the hot table (capacity %u)",
				       cfg->hot_table.capacity);
	}
	*out = e;
	return 0;
}

/* PHYS_ADDR needs perf_event_paranoid <= 1 or CAP_PERFMON / CAP_SYS_ADMIN. */
static bool phys_addr_permitted(const struct engine_env *env)
{
	struct probe_facts f;

	if (probe_gather(
		&(struct probe_env){.sysfs_root = env->sysfs_root, .procfs_root = env->procfs_root},
		&f) < 0)
		return false;
	return (f.paranoid_file.err == 0 && f.paranoid <= 1) ||
	       (f.cap_eff & (1ull << CAP_PERFMON | 1ull << CAP_SYS_ADMIN));
}

static void note_started(struct engine *e, enum stat_source src)
{
	size_t l = strlen(e->source_names);

	snprintf(e->source_names + l, sizeof(e->source_names) - l, "%s%s", l ? "," : "",
		 stat_source_name(src));
	e->nr_sources++;
	log_info("source %s: started", stat_source_name(src));
}

static struct perf_sampler_params sampler_params(struct engine *e, struct config_pub *pub,
						 enum stat_source src)
{
	return (struct perf_sampler_params){
	    .drain_interval_ms = PERF_DRAIN_MS,
	    .pid = -1,
	    .page_size = (size_t)sysconf(_SC_PAGESIZE),
	    .stats = e->env.stats,
	    .sink = feeder_sink(e->feeder),
	    .pub = pub,
	    .pub_slot = e->slot[src],
	};
}

/* Starts one perf source; returns 1 started, 0 skipped or failed (logged), -errno when a
 * required source failed. */
static int start_perf_source(struct engine *e, struct config_pub *pub, enum stat_source src,
			     const struct probe_source *ps)
{
	const struct pghotd_config *cfg = config_pub_current(pub);
	char reason[SAMPLER_REASON_MAX] = "";
	bool phys = phys_addr_permitted(&e->env);
	int r;

	e->slot[src] = config_pub_register(pub);
	if (e->slot[src] < 0)
		return log_error_errno(e->slot[src], "no config slot for source %s",
				       stat_source_name(src));
	if (src == SRC_IBS)
		r = sampler_ibs_start(
		    &(struct ibs_source_params){.sysfs_root = e->env.sysfs_root,
						.cfg = cfg,
						.topo = e->topo,
						.phys_addr = phys,
						.sampler = sampler_params(e, pub, src)},
		    &e->ibs, reason, sizeof(reason));
	else
		r = sampler_pebs_start(
		    &(struct pebs_source_params){.sysfs_root = e->env.sysfs_root,
						 .cfg = cfg,
						 .topo = e->topo,
						 .phys_addr = phys,
						 .sampler = sampler_params(e, pub, src)},
		    &e->pebs, reason, sizeof(reason));
	if (r == 0) {
		note_started(e, src);
		return 1;
	}
	config_pub_unregister(pub, e->slot[src]);
	e->slot[src] = -1;
	if (ps->required)
		return log_error_errno(r, "source %s: unavailable: %s", stat_source_name(src),
				       reason);
	log_warning("source %s: unavailable: %s", stat_source_name(src), reason);
	return 0;
}

static int start_abit(struct engine *e, struct config_pub *pub, const struct probe_source *ps)
{
	struct abit_deps d = {.procfs_root = e->env.procfs_root,
			      .sysfs_root = e->env.sysfs_root,
			      .sink = feeder_sink(e->feeder),
			      .stats = e->env.stats};
	int r = abit_new(&d, &e->abit); /* logs its reason when unavailable */

	if (r == 0) {
		r = abit_start(e->abit, pub);
		if (r < 0) {
			abit_free(e->abit);
			e->abit = NULL;
			log_error_errno(r, "cannot start the abit source thread");
		}
	}
	if (r == 0) {
		note_started(e, SRC_ABIT);
		return 1;
	}
	return ps->required ? r : 0;
}

int engine_start(struct engine *e, struct config_pub *pub, const struct probe_result *probe)
{
	int r = promoter_start(e->promoter, pub);

	if (r < 0)
		return log_error_errno(r, "cannot start the promoter thread");
	e->promoter_running = true;
	for (int src = 0; src < SRC__COUNT && r >= 0; src++) {
		const struct probe_source *ps = &probe->source[src];

		if (ps->state != PROBE_AVAILABLE)
			continue;
		r = src == SRC_ABIT ? start_abit(e, pub, ps) : start_perf_source(e, pub, src, ps);
	}
	if (r < 0) {
		engine_stop(e, pub);
		return r;
	}
	if (e->nr_sources == 0)
		log_notice("no access source is running: pghotd stays idle");
	return e->nr_sources;
}

void engine_tick(struct engine *e)
{
	int gone = procs_sweep(e->procs);

	if (gone > 0)
		stats_add(e->env.stats, ST_PROCESSES_FORGOTTEN, (uint64_t)gone);
	stats_set(e->env.stats, ST_HOT_PAGES, hot_table_used(e->hot));
	stats_set(e->env.stats, ST_HOT_TABLE_REPLACEMENTS, hot_table_replacements(e->hot));
}

const char *engine_source_names(const struct engine *e)
{
	return e->source_names;
}

int engine_sources_running(const struct engine *e)
{
	return e->nr_sources;
}

void engine_stop(struct engine *e, struct config_pub *pub)
{
	/* Sources first: they feed the hot table the promoter drains. */
	sampler_ibs_stop(e->ibs);
	sampler_pebs_stop(e->pebs);
	e->ibs = NULL;
	e->pebs = NULL;
	for (int i = 0; i < SRC__COUNT; i++) {
		if (e->slot[i] >= 0)
			config_pub_unregister(pub, e->slot[i]);
		e->slot[i] = -1;
	}
	if (e->abit) {
		abit_stop(e->abit);
		abit_free(e->abit);
		e->abit = NULL;
	}
	if (e->promoter_running)
		promoter_stop(e->promoter);
	e->promoter_running = false;
	e->nr_sources = 0;
	e->source_names[0] = '\0';
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	feeder_free(e->feeder);
	if (e->promoter)
		promoter_free(e->promoter);
	hot_table_free(e->hot);
	procs_free(e->procs);
	topology_free(e->topo);
	free(e);
}
