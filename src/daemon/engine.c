/* engine: wiring of the data path: sources -> feeder -> hot table -> promoter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "sources/abit/abit_source.h"
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

#define ENGINE_MAX_PROCS 32768
/* Demotion candidates held: four promoter takes (PROMOTER_WORK_MAX each), so one re-offer of a
 * full node's cold pages serves an exchange for 64 MiB of hot pages without waiting for the
 * source's next round (a full list drops its warmer half, so it holds half that at least). */
#define ENGINE_COLD_PAGES (4 * PROMOTER_WORK_MAX)
#define PERF_DRAIN_MS	  100

struct engine {
	struct engine_env env;
	struct procs *procs;
	struct hot_table *hot;
	struct promoter *promoter;
	struct cold_list *cold; /* demotion candidates: abit and damon sources -> promoter */
	struct feeder *feeder;
	/* The perf sources' sample filter keeps this topology for the daemon's life (node of a
	 * physical address, node of a CPU: hardware facts). Tier changes of a later reload
	 * reach the promoter, which re-checks placement, not this early filter. */
	struct topology *topo;
	bool promoter_running;
	void *handle[SRC__COUNT]; /* the running source's object (sources[] knows its type) */
	int slot[SRC__COUNT];	  /* config_pub slots of the perf sources, -1 when none */
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

int engine_new(const struct engine_env *env, const struct pghotd_config *cfg, struct engine **out)
{
	size_t capacity = cfg->hot_table.capacity;
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
	if (r == 0) {
		hot_table_set_proc_check(e->hot, proc_still_valid, e->procs);
		r = promoter_new(&(struct promoter_deps){.hot = e->hot,
							 .procs = e->procs,
							 .topo = cfg->topo,
							 .stats = env->stats,
							 .ops = &promoter_real_ops,
							 .cold = e->cold,
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

/* What a perf source starts from, for --probe's trial as for the running source. */
struct perf_launch {
	const char *sysfs_root;
	const struct pghotd_config *cfg;
	const struct topology *topo; /* NULL for the trial */
	bool phys_addr;
	struct perf_sampler_params sampler;
};

/* One row per source, indexed by enum stat_source. */
struct engine_source {
	/* 1 started (handle[src] set), 0 unavailable and not required (logged), -errno when
	 * it was required or the engine could not give it what it needs. */
	int (*start)(struct engine *e, struct config_pub *pub, enum stat_source src,
		     const struct probe_result *p);
	/* Perf sources only: opens the events and starts the sampler thread; *out set on
	 * success, reason says why not on failure. */
	int (*launch)(const struct perf_launch *l, void **out, char *reason, size_t size);
	void (*stop)(void *handle); /* NULL is fine */
	/* A running perf source restarts when a key under this prefix (or the CPU budget)
	 * changes: it takes its event setup at start. NULL: the source reads its section
	 * every round. */
	const char *restart_prefix;
};

static const struct engine_source sources[SRC__COUNT];

static void discard(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	(void)ctx, (void)cfg, (void)ev, (void)n;
}

static bool drop_sample(void *ctx, const struct perf_event_header *h, const struct perf_sample *s,
			struct access_event *out)
{
	(void)ctx, (void)h, (void)s, (void)out;
	return false;
}

/* Opens, maps, enables and stops a page-fault sampling event on every CPU through
 * perf_sampler, as the IBS and PEBS sources do with theirs: proof that the calls they make
 * are allowed here even where no PMU is. */
static void probe_perf_sampling(const struct perf_sampler_params *sp, struct probe_result *res)
{
	struct perf_sampler_source src = {
	    .source = SRC_PEBS,
	    .name = "software page-fault event",
	    .nr_events = 1,
	    .attr = {{.type = PERF_TYPE_SOFTWARE,
		      .config = PERF_COUNT_SW_PAGE_FAULTS,
		      .sample_period = 1000,
		      .sample_type =
			  PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU,
		      .exclude_kernel = 1}},
	    .leader = -1,
	    .convert = drop_sample};
	struct perf_sampler_params p = *sp;
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	int r;

	p.ring_pages = 1;
	r = perf_sampler_launch(&src, &p, &s, err, sizeof(err));
	if (r < 0) {
		snprintf(res->perf_sampling, sizeof(res->perf_sampling), "refused: %s", err);
		return;
	}
	perf_sampler_stop(s);
	perf_sampler_free(s);
	snprintf(res->perf_sampling, sizeof(res->perf_sampling),
		 "ok: a software event opens, maps and enables on every CPU (perf_event_open "
		 "allowed)");
}

int engine_probe_perf(const struct engine_env *env, const struct pghotd_config *cfg,
		      struct probe_result *res)
{
	struct perf_launch l = {.sysfs_root = env->sysfs_root,
				.cfg = cfg,
				.phys_addr = res->phys_addr,
				.sampler = {.drain_interval_ms = PERF_DRAIN_MS,
					    .pid = -1,
					    .page_size = (size_t)sysconf(_SC_PAGESIZE),
					    .sink = {.deliver = discard},
					    .cfg = cfg,
					    .ops = env->perf_ops}};

	probe_perf_sampling(&l.sampler, res);
	for (int src = 0; src < SRC__COUNT; src++) {
		struct probe_source *ps = &res->source[src];
		void *h = NULL;
		int r;

		if (!sources[src].launch || ps->state != PROBE_AVAILABLE)
			continue;
		r = sources[src].launch(&l, &h, ps->reason, sizeof(ps->reason));
		sources[src].stop(h);
		if (r < 0) {
			ps->state = PROBE_UNAVAILABLE;
			ps->err = r == -EACCES || r == -EPERM ? -EACCES : -ENODEV;
			res->nr_available--;
		}
	}
	return 0;
}

static int launch_ibs(const struct perf_launch *l, void **out, char *reason, size_t size)
{
	struct ibs_source *s;
	int r = ibs_source_start(&(struct ibs_source_params){.sysfs_root = l->sysfs_root,
							     .cfg = l->cfg,
							     .topo = l->topo,
							     .phys_addr = l->phys_addr,
							     .sampler = l->sampler},
				 &s, reason, size);

	if (r == 0)
		*out = s;
	return r;
}

static int launch_pebs(const struct perf_launch *l, void **out, char *reason, size_t size)
{
	struct pebs_source *s;
	int r = pebs_source_start(&(struct pebs_source_params){.sysfs_root = l->sysfs_root,
							       .cfg = l->cfg,
							       .topo = l->topo,
							       .phys_addr = l->phys_addr,
							       .sampler = l->sampler},
				  &s, reason, size);

	if (r == 0)
		*out = s;
	return r;
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
	    .ops = e->env.perf_ops,
	};
}

/* A perf source (IBS, PEBS) on its own config slot. */
static int start_perf(struct engine *e, struct config_pub *pub, enum stat_source src,
		      const struct probe_result *p)
{
	const struct pghotd_config *cfg = config_pub_current(pub);
	char reason[SAMPLER_REASON_MAX] = "";
	int r;

	e->slot[src] = config_pub_register(pub);
	if (e->slot[src] < 0)
		return log_error_errno(e->slot[src], "no config slot for source %s",
				       stat_source_name(src));
	r = sources[src].launch(&(struct perf_launch){.sysfs_root = e->env.sysfs_root,
						      .cfg = cfg,
						      .topo = e->topo,
						      .phys_addr = p->phys_addr,
						      .sampler = sampler_params(e, pub, src)},
				&e->handle[src], reason, sizeof(reason));
	if (r == 0)
		return 1;
	config_pub_unregister(pub, e->slot[src]);
	e->slot[src] = -1;
	if (p->source[src].required)
		return log_error_errno(r, "source %s: unavailable: %s", stat_source_name(src),
				       reason);
	log_warning("source %s: unavailable: %s", stat_source_name(src), reason);
	return 0;
}

static int start_abit(struct engine *e, struct config_pub *pub, enum stat_source src,
		      const struct probe_result *p)
{
	struct abit_deps d = {.procfs_root = e->env.procfs_root,
			      .sysfs_root = e->env.sysfs_root,
			      .sink = feeder_sink(e->feeder),
			      .stats = e->env.stats,
			      .cold = e->cold,
			      .procs = e->procs};
	struct abit *a;
	int r = abit_new(&d, &a); /* logs its reason when unavailable */

	if (r == 0) {
		r = abit_start(a, pub);
		if (r < 0) {
			abit_free(a);
			log_error_errno(r, "cannot start the abit source thread");
		}
	}
	if (r == 0) {
		e->handle[src] = a;
		return 1;
	}
	return p->source[src].required ? r : 0;
}

static int start_damon(struct engine *e, struct config_pub *pub, enum stat_source src,
		       const struct probe_result *p)
{
	struct damon_source_deps d = {.sysfs_root = e->env.sysfs_root,
				      .procfs_root = e->env.procfs_root,
				      .sink = feeder_sink(e->feeder),
				      .stats = e->env.stats,
				      .cold = e->cold,
				      .procs = e->procs};
	char why[SAMPLER_REASON_MAX];
	struct damon_source *ds;
	int r = damon_source_new(&d, pub, &ds, why, sizeof(why)); /* logs why not */

	if (r == 0) {
		r = damon_source_start(ds);
		if (r < 0) {
			damon_source_free(ds);
			log_error_errno(r, "cannot start the damon source");
		}
	}
	if (r == 0) {
		e->handle[src] = ds;
		return 1;
	}
	return p->source[src].required ? r : 0;
}

static void stop_ibs(void *h)
{
	ibs_source_stop(h);
}

static void stop_pebs(void *h)
{
	pebs_source_stop(h);
}

static void stop_abit(void *h)
{
	if (!h)
		return;
	abit_stop(h);
	abit_free(h);
}

static void stop_damon(void *h)
{
	damon_source_free(h);
}

static const struct engine_source sources[SRC__COUNT] = {
    [SRC_IBS] = {.start = start_perf,
		 .launch = launch_ibs,
		 .stop = stop_ibs,
		 .restart_prefix = "sources.ibs."},
    [SRC_PEBS] = {.start = start_perf,
		  .launch = launch_pebs,
		  .stop = stop_pebs,
		  .restart_prefix = "sources.pebs."},
    [SRC_ABIT] = {.start = start_abit, .stop = stop_abit},
    [SRC_DAMON] = {.start = start_damon, .stop = stop_damon},
};

static void stop_source(struct engine *e, struct config_pub *pub, enum stat_source src)
{
	if (!e->running[src])
		return;
	sources[src].stop(e->handle[src]);
	e->handle[src] = NULL;
	if (e->slot[src] >= 0)
		config_pub_unregister(pub, e->slot[src]);
	e->slot[src] = -1;
	set_running(e, src, false);
}

static int start_source(struct engine *e, struct config_pub *pub, enum stat_source src,
			const struct probe_result *p)
{
	int r = sources[src].start(e, pub, src, p);

	if (r == 1)
		set_running(e, src, true);
	return r;
}

/* The Accessed-bit source passed over for the other (probe_choose) when the one chosen did not
 * start: DAMON for page_idle, page_idle for DAMON "on"; not DAMON beside a PMU source. */
static int start_fallback(struct engine *e, struct config_pub *pub, const struct probe_result *p)
{
	static const enum stat_source pair[][2] = {{SRC_ABIT, SRC_DAMON}, {SRC_DAMON, SRC_ABIT}};
	bool pmu = p->source[SRC_IBS].state == PROBE_AVAILABLE ||
		   p->source[SRC_PEBS].state == PROBE_AVAILABLE;

	for (size_t i = 0; i < sizeof(pair) / sizeof(pair[0]); i++) {
		enum stat_source chosen = pair[i][0], other = pair[i][1];

		if (p->source[other].state != PROBE_PASSED ||
		    p->source[chosen].state != PROBE_AVAILABLE || e->running[chosen] ||
		    e->running[other] || (other == SRC_DAMON && pmu))
			continue;
		log_notice("source %s did not start: falling back to %s", stat_source_name(chosen),
			   stat_source_name(other));
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
		const char *prefix = sources[src].restart_prefix;
		bool want = probe->source[src].state == PROBE_AVAILABLE;

		/* The perf sources take their event setup at start: restart them when it
		 * changed. The abit thread reads its section every round. */
		if (e->running[src] &&
		    (!want || (prefix && (budget || section_changed(old, cfg, prefix)))))
			stop_source(e, pub, src);
		if (want && !e->running[src])
			r = start_source(e, pub, src, probe);
	}
	if (r >= 0)
		r = start_fallback(e, pub, probe);
	return r < 0 ? r : engine_sources_running(e);
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
	int n = 0;

	for (int i = 0; i < SRC__COUNT; i++)
		n += e->running[i];
	return n;
}

void engine_stop(struct engine *e, struct config_pub *pub)
{
	/* Sources first: they feed the hot table the promoter drains. */
	for (int src = 0; src < SRC__COUNT; src++)
		stop_source(e, pub, src);
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
	hot_table_free(e->hot);
	procs_free(e->procs);
	topology_free(e->topo);
	free(e);
}
