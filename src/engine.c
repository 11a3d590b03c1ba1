/* engine: wiring of the data path: sources -> feeder -> hot table -> promoter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "abit_idle.h"
#include "cold_list.h"
#include "damon_source.h"
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
	struct cold_list *cold; /* demotion candidates: abit source -> promoter */
	struct feeder *feeder;
	/* The perf sources' sample filter keeps this topology for the daemon's life (node of a
	 * physical address, node of a CPU: hardware facts). Tier changes of a later reload
	 * reach the promoter, which re-checks placement, not this early filter. */
	struct topology *topo;
	bool promoter_running;
	struct ibs_source *ibs;
	struct pebs_source *pebs;
	struct abit *abit;
	struct damon_source *damon;
	int slot[SRC__COUNT]; /* config_pub slots of the perf sources, -1 when none */
	bool running[SRC__COUNT];
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
	if (r == 0)
		r = cold_list_new(PROMOTER_WORK_MAX, &e->cold);
	if (r == 0) {
		hot_table_set_proc_check(e->hot, proc_still_valid, e->procs);
		r = promoter_new(&(struct promoter_deps){.hot = e->hot,
							 .procs = e->procs,
							 .topo = cfg->topo,
							 .stats = env->stats,
							 .ops = &promoter_real_ops,
							 .cold = e->cold},
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
	struct perf_sampler_params sp = {.drain_interval_ms = PERF_DRAIN_MS,
					 .pid = -1,
					 .page_size = (size_t)sysconf(_SC_PAGESIZE),
					 .sink = {.deliver = discard},
					 .cfg = cfg};
	bool phys = phys_addr_permitted(env);

	probe_perf_sampling(&sp, res);
	for (int src = SRC_IBS; src <= SRC_PEBS; src++) {
		struct probe_source *ps = &res->source[src];
		int r;

		if (ps->state != PROBE_AVAILABLE)
			continue;
		if (src == SRC_IBS) {
			struct ibs_source *ibs = NULL;
			r = sampler_ibs_start(
			    &(struct ibs_source_params){.sysfs_root = env->sysfs_root,
							.cfg = cfg,
							.phys_addr = phys,
							.sampler = sp},
			    &ibs, ps->reason, sizeof(ps->reason));
			sampler_ibs_stop(ibs);
		} else {
			struct pebs_source *pebs = NULL;
			r = sampler_pebs_start(
			    &(struct pebs_source_params){.sysfs_root = env->sysfs_root,
							 .cfg = cfg,
							 .phys_addr = phys,
							 .sampler = sp},
			    &pebs, ps->reason, sizeof(ps->reason));
			sampler_pebs_stop(pebs);
		}
		if (r < 0) {
			ps->state = PROBE_UNAVAILABLE;
			ps->err = r == -EACCES || r == -EPERM ? -EACCES : -ENODEV;
			res->nr_available--;
		}
	}
	return 0;
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
		set_running(e, src, true);
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
			      .stats = e->env.stats,
			      .cold = e->cold,
			      .procs = e->procs};
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
		set_running(e, SRC_ABIT, true);
		return 1;
	}
	return ps->required ? r : 0;
}

/* The DAMON source; returns 1 started, 0 unavailable (logged), -errno when required. */
static int start_damon(struct engine *e, struct config_pub *pub, const struct probe_source *ps)
{
	struct damon_source_deps d = {.sysfs_root = e->env.sysfs_root,
				      .procfs_root = e->env.procfs_root,
				      .sink = feeder_sink(e->feeder),
				      .stats = e->env.stats,
				      .cold = e->cold,
				      .procs = e->procs};
	char why[SAMPLER_REASON_MAX];
	int r = damon_source_new(&d, pub, &e->damon, why, sizeof(why)); /* logs why not */

	if (r == 0) {
		r = damon_source_start(e->damon);
		if (r < 0) {
			damon_source_free(e->damon);
			e->damon = NULL;
			log_error_errno(r, "cannot start the damon source");
		}
	}
	if (r == 0) {
		set_running(e, SRC_DAMON, true);
		return 1;
	}
	return ps->required ? r : 0;
}

static void stop_source(struct engine *e, struct config_pub *pub, enum stat_source src)
{
	if (!e->running[src])
		return;
	if (src == SRC_IBS)
		sampler_ibs_stop(e->ibs);
	else if (src == SRC_PEBS)
		sampler_pebs_stop(e->pebs);
	else if (src == SRC_DAMON)
		damon_source_free(e->damon);
	else {
		abit_stop(e->abit);
		abit_free(e->abit);
	}
	if (src == SRC_IBS)
		e->ibs = NULL;
	else if (src == SRC_PEBS)
		e->pebs = NULL;
	else if (src == SRC_DAMON)
		e->damon = NULL;
	else
		e->abit = NULL;
	if (e->slot[src] >= 0)
		config_pub_unregister(pub, e->slot[src]);
	e->slot[src] = -1;
	set_running(e, src, false);
}

static int start_source(struct engine *e, struct config_pub *pub, enum stat_source src,
			const struct probe_source *ps)
{
	if (src == SRC_DAMON)
		return start_damon(e, pub, ps);
	return src == SRC_ABIT ? start_abit(e, pub, ps) : start_perf_source(e, pub, src, ps);
}

/* page_idle when DAMON was chosen over it (probe_choose) but did not start: the fallback. */
static int start_fallback(struct engine *e, struct config_pub *pub, const struct probe_result *p)
{
	if (p->source[SRC_ABIT].state != PROBE_PASSED ||
	    p->source[SRC_DAMON].state != PROBE_AVAILABLE || e->running[SRC_DAMON] ||
	    e->running[SRC_ABIT])
		return 0;
	log_notice("source damon did not start: falling back to abit");
	return start_abit(e, pub, &p->source[SRC_ABIT]);
}

int engine_start(struct engine *e, struct config_pub *pub, const struct probe_result *probe)
{
	int r = promoter_start(e->promoter, pub);

	if (r < 0)
		return log_error_errno(r, "cannot start the promoter thread");
	e->promoter_running = true;
	for (int src = 0; src < SRC__COUNT && r >= 0; src++) {
		if (probe->source[src].state == PROBE_AVAILABLE)
			r = start_source(e, pub, src, &probe->source[src]);
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
	static const char *const prefix[SRC__COUNT] = {"sources.ibs.", "sources.pebs.", NULL};
	const struct pghotd_config *cfg = config_pub_current(pub);
	bool budget = old->sources.cpu_budget_percent != cfg->sources.cpu_budget_percent;
	int r = 0;

	for (int src = 0; src < SRC__COUNT && r >= 0; src++) {
		bool want = probe->source[src].state == PROBE_AVAILABLE;

		/* The perf sources take their event setup at start: restart them when it
		 * changed. The abit thread reads its section every round. */
		if (e->running[src] &&
		    (!want || (prefix[src] && (budget || section_changed(old, cfg, prefix[src])))))
			stop_source(e, pub, src);
		if (want && !e->running[src])
			r = start_source(e, pub, src, &probe->source[src]);
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
