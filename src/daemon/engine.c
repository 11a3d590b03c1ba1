/* engine: wiring of the data path: sources -> feeder -> hot table -> promoter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/random.h>
#include <unistd.h>

#include "sources/abit/abit_source.h"
#include "base/clock.h"
#include "table/cgroups.h"
#include "table/cold_list.h"
#include "sources/damon/damon_source.h"
#include "daemon/engine.h"
#include "table/feeder.h"
#include "table/hot_table.h"
#include "base/log.h"
#include "sources/perf/perf_sampler.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "sources/pmu/ibs_source.h"
#include "sources/pmu/pebs_source.h"
#include "sys/topology.h"

/* Demotion candidates held: four promoter takes (PROMOTER_WORK_MAX each), so one re-offer of a
 * full node's cold pages serves an exchange for 64 MiB of hot pages without waiting for the
 * source's next round (a full list drops its warmer half, so it holds half that at least). */
#define ENGINE_COLD_PAGES (4 * PROMOTER_WORK_MAX)

struct engine {
	struct engine_env env;
	struct procs *procs;
	struct hot_table *hot;
	struct promoter *promoter;
	struct cold_list *cold; /* demotion candidates: abit and damon sources -> promoter */
	struct feeder *feeder;
	struct cgroups *cgroups; /* per-cgroup figures: the promoter counts, engine_tick() sums */
	/* The perf sources' sample filter keeps this topology for the daemon's life (node of a
	 * physical address, node of a CPU: hardware facts). Tier changes of a later reload
	 * reach the promoter, which re-checks placement, not this early filter. */
	struct topology *topo;
	bool promoter_running;
	void *handle[SRC__COUNT]; /* the running source's object (sources[] knows its type) */
	bool running[SRC__COUNT];
	char source_names[64];
};

static bool proc_still_valid(void *ctx, uint32_t proc)
{
	return procs_valid(ctx, proc);
}

/* The feeder's wake (any source thread): a page queued wakes the promoter once the queue is
 * deep enough, a full queue at once. */
static void wake_promoter(void *ctx, bool full)
{
	if (full)
		promoter_kick(ctx);
	else
		promoter_kick_if_full(ctx);
}

/* Ready queue: room for several promotion rounds of the largest batch, bounded by the table. */
static size_t queue_capacity(size_t capacity)
{
	size_t q = capacity / 16;

	return q < 4096 ? 4096 : q > 65536 ? 65536 : q;
}

size_t engine_table_capacity(const struct topology *t, unsigned configured, size_t page_size)
{
	uint64_t slow = 0, want;

	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++)
		if (t->node[n].present && t->node[n].slow && page_size)
			slow += t->node[n].mem_total / page_size;
	want = 2 * slow < ENGINE_TABLE_FLOOR ? ENGINE_TABLE_FLOOR : 2 * slow;
	return want < configured ? (size_t)want : configured;
}

/* The per-cgroup figures over the registry and the hot table, with a path hash key nobody
 * outside can know (a clock's bits where the kernel gives none: collisions then cost only a
 * shared series). */
static int engine_cgroups(struct engine *e, const struct pghotd_config *cfg)
{
	struct cgroups_deps d = {.procfs_root = e->env.procfs_root,
				 .procs = e->procs,
				 .hot = e->hot,
				 .stats = e->env.stats,
				 .nr_nodes = e->topo->nr_nodes};
	int r;

	if (getrandom(d.seed, sizeof(d.seed), GRND_NONBLOCK) != (ssize_t)sizeof(d.seed)) {
		uint64_t now = clock_monotonic_us();

		log_warning("no random bytes from the kernel, keying cgroup paths by the clock");
		memcpy(d.seed, &now, sizeof(now));
	}
	r = cgroups_new(&d, cfg->stats.cgroups_max, &e->cgroups);
	if (r == 0)
		stats_set_extra(e->env.stats, cgroups_render, e->cgroups);
	return r;
}

int engine_new(const struct engine_env *env, const struct pghotd_config *cfg, struct engine **out)
{
	size_t capacity = cfg->hot_table.capacity;
	struct engine *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return -ENOMEM;
	e->env = *env;
	r = topology_load(env->sysfs_root, &e->topo);
	if (r == 0)
		r = topology_apply_config(e->topo, cfg);
	if (r == 0)
		r = procs_new(env->procfs_root, ENGINE_MAX_PROCS, &e->procs);
	if (r == 0) {
		capacity = engine_table_capacity(e->topo, cfg->hot_table.capacity,
						 (size_t)sysconf(_SC_PAGESIZE));
		r = hot_table_new(capacity, queue_capacity(capacity), &e->hot);
	}
	if (r == 0)
		log_info("hot table: %zu entries (%zu KiB)", hot_table_capacity(e->hot),
			 hot_table_capacity(e->hot) * hot_table_entry_size() >> 10);
	if (r == 0)
		r = cold_list_new(ENGINE_COLD_PAGES, &e->cold);
	if (r == 0)
		r = engine_cgroups(e, cfg);
	if (r == 0) {
		hot_table_set_proc_check(e->hot, proc_still_valid, e->procs);
		r = promoter_new(&(struct promoter_deps){.hot = e->hot,
							 .procs = e->procs,
							 .topo = cfg->topo,
							 .stats = env->stats,
							 .ops = &promoter_real_ops,
							 .cold = e->cold,
							 .cgroups = e->cgroups,
							 .procfs_root = env->procfs_root},
				 &e->promoter);
	}
	if (r == 0)
		r = feeder_new(&(struct feeder_deps){.hot = e->hot,
						     .procs = e->procs,
						     .stats = env->stats,
						     .wake = wake_promoter,
						     .wake_ctx = e->promoter,
						     .procfs_root = env->procfs_root},
			       &e->feeder);
	if (r < 0) {
		engine_free(e);
		return log_error_errno(r, "cannot set up the hot table (capacity %zu)", capacity);
	}
	*out = e;
	return 0;
}

static void set_running(struct engine *e, enum stat_source src, bool on)
{
	size_t l = 0;

	e->running[src] = on;
	e->source_names[0] = '\0';
	for (int i = 0; i < SRC__COUNT; i++) {
		if (e->running[i])
			l += (size_t)snprintf(e->source_names + l, sizeof(e->source_names) - l,
					      "%s%s", l ? "," : "", stat_source_name(i));
	}
	log_info("source %s: %s", stat_source_name(src), on ? "started" : "stopped");
}

/* Every source, indexed by enum stat_source: the order they start in. */
static const struct source_ops *const sources[SRC__COUNT] = {
    [SRC_IBS] = &ibs_source_ops,
    [SRC_PEBS] = &pebs_source_ops,
    [SRC_ABIT] = &abit_source_ops,
    [SRC_DAMON] = &damon_source_ops,
};

static void discard(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	(void)ctx, (void)cfg, (void)ev, (void)n;
}

int engine_probe_perf(const struct engine_env *env, const struct pghotd_config *cfg,
		      struct probe_result *res)
{
	struct source_deps d = {.sysfs_root = env->sysfs_root,
				.procfs_root = env->procfs_root,
				.sink = {.deliver = discard},
				.perf_ops = env->perf_ops,
				.phys_addr = res->phys_addr,
				.cfg = cfg};

	perf_sampler_trial(&d, res->perf_sampling, sizeof(res->perf_sampling));
	for (int src = 0; src < SRC__COUNT; src++) {
		struct probe_source *ps = &res->source[src];
		int r;

		if (!sources[src]->trial || ps->state != PROBE_AVAILABLE)
			continue;
		r = sources[src]->trial(&d, ps->reason, sizeof(ps->reason));
		if (r < 0) {
			ps->state = PROBE_UNAVAILABLE;
			ps->err = r == -EACCES || r == -EPERM ? -EACCES : -ENODEV;
			res->nr_available--;
		}
	}
	return 0;
}

static void stop_source(struct engine *e, enum stat_source src)
{
	if (!e->running[src])
		return;
	sources[src]->stop(e->handle[src]);
	e->handle[src] = NULL;
	set_running(e, src, false);
}

static int start_source(struct engine *e, struct config_pub *pub, enum stat_source src,
			const struct probe_result *p)
{
	struct source_deps d = {.sysfs_root = e->env.sysfs_root,
				.procfs_root = e->env.procfs_root,
				.stats = e->env.stats,
				.sink = feeder_sink(e->feeder),
				.cold = e->cold,
				.procs = e->procs,
				.topo = e->topo,
				.perf_ops = e->env.perf_ops,
				.phys_addr = p->phys_addr,
				.required = p->source[src].required,
				.pub = pub};
	int r = sources[src]->start(&d, &e->handle[src]);

	if (r == 1)
		set_running(e, src, true);
	return r;
}

static bool pmu_available(const struct probe_result *p)
{
	for (int i = 0; i < SRC__COUNT; i++)
		if (sources[i]->pmu && p->source[i].state == PROBE_AVAILABLE)
			return true;
	return false;
}

/* Whether other, passed over by the probe for chosen (probe_choose: both clear the Accessed
 * bits), starts in its stead: chosen did not start, neither runs, and other does not yield to
 * a PMU source beside one (never DAMON beside IBS or PEBS). */
static bool stands_in(const struct engine *e, const struct probe_result *p, int chosen, int other,
		      bool pmu)
{
	return chosen != other && sources[chosen]->clears_accessed &&
	       sources[other]->clears_accessed && p->source[chosen].state == PROBE_AVAILABLE &&
	       p->source[other].state == PROBE_PASSED && !e->running[chosen] &&
	       !e->running[other] && !(sources[other]->yields_to_pmu && pmu);
}

/* The Accessed-bit source passed over when the one chosen did not start: DAMON for page_idle,
 * page_idle for DAMON "on". */
static int start_fallback(struct engine *e, struct config_pub *pub, const struct probe_result *p)
{
	bool pmu = pmu_available(p);

	for (int chosen = 0; chosen < SRC__COUNT; chosen++)
		for (int other = 0; other < SRC__COUNT; other++) {
			if (!stands_in(e, p, chosen, other, pmu))
				continue;
			log_notice("source %s did not start: falling back to %s",
				   stat_source_name(chosen), stat_source_name(other));
			return start_source(e, pub, other, p);
		}
	return 0;
}

int engine_start(struct engine *e, struct config_pub *pub, const struct probe_result *probe)
{
	int r = promoter_start(e->promoter, pub);

	if (r < 0)
		return log_error_errno(r, "cannot start the promoter thread");
	e->promoter_running = true;
	for (int src = 0; src < SRC__COUNT && r >= 0; src++) {
		if (probe->source[src].state == PROBE_AVAILABLE)
			r = start_source(e, pub, src, probe);
	}
	if (r >= 0)
		r = start_fallback(e, pub, probe);
	if (r < 0) {
		engine_stop(e, pub);
		return r;
	}
	if (engine_sources_running(e) == 0)
		log_notice("no access source is running: pghotd stays idle");
	return engine_sources_running(e);
}

/* True when a key under prefix ("sources.ibs.") differs between a and b. */
static bool section_changed(const struct pghotd_config *a, const struct pghotd_config *b,
			    const char *prefix)
{
	char path[128];

	for (size_t i = 0; i < config_key_count(); i++) {
		if (config_key_path(i, path, sizeof(path)) == 0 &&
		    !strncmp(path, prefix, strlen(prefix)) && !config_key_equal(i, a, b))
			return true;
	}
	return false;
}

int engine_apply(struct engine *e, struct config_pub *pub, const struct pghotd_config *old,
		 const struct probe_result *probe)
{
	const struct pghotd_config *cfg = config_pub_current(pub);
	bool budget = old->sources.cpu_budget_percent != cfg->sources.cpu_budget_percent;
	int r = 0;

	for (int src = 0; src < SRC__COUNT && r >= 0; src++) {
		const char *prefix = sources[src]->restart_prefix;
		bool want = probe->source[src].state == PROBE_AVAILABLE;

		/* A source with a restart prefix takes its settings at start: restart it when
		 * they changed. The others read their section every round. */
		if (e->running[src] &&
		    (!want || (prefix && (budget || section_changed(old, cfg, prefix)))))
			stop_source(e, src);
		if (want && !e->running[src])
			r = start_source(e, pub, src, probe);
	}
	if (r >= 0)
		r = start_fallback(e, pub, probe);
	if (cgroups_resize(e->cgroups, cfg->stats.cgroups_max) < 0)
		log_error(
		    "cannot size the per-cgroup families for stats.cgroups_max %u, keeping %u",
		    cfg->stats.cgroups_max, old->stats.cgroups_max);
	return r < 0 ? r : engine_sources_running(e);
}

void engine_tick(struct engine *e, const struct pghotd_config *cfg)
{
	int gone = procs_sweep(e->procs);

	if (gone > 0)
		stats_add(e->env.stats, ST_PROCESSES_FORGOTTEN, (uint64_t)gone);
	cgroups_refresh(e->cgroups, cfg);
	stats_set(e->env.stats, ST_HOT_PAGES, hot_table_used(e->hot));
	stats_set(e->env.stats, ST_HOT_TABLE_REPLACEMENTS, hot_table_replacements(e->hot));
}

const char *engine_source_names(const struct engine *e)
{
	return e->source_names;
}

int engine_sources_running(const struct engine *e)
{
	int n = 0;

	for (int i = 0; i < SRC__COUNT; i++)
		n += e->running[i];
	return n;
}

void engine_stop(struct engine *e, struct config_pub *pub)
{
	(void)pub; /* each thread gives back its own slot on pub */
	/* Sources first: they feed the hot table the promoter drains. */
	for (int src = 0; src < SRC__COUNT; src++)
		stop_source(e, src);
	if (e->promoter_running)
		promoter_stop(e->promoter);
	e->promoter_running = false;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	feeder_free(e->feeder);
	if (e->promoter)
		promoter_free(e->promoter);
	cold_list_free(e->cold);
	if (e->cgroups)
		stats_set_extra(e->env.stats, NULL, NULL);
	cgroups_free(e->cgroups);
	hot_table_free(e->hot);
	procs_free(e->procs);
	topology_free(e->topo);
	free(e);
}
