/* engine: wiring of the data path: sources -> feeder -> hot table -> promoter. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "feeder.h"
#include "hot_table.h"
#include "log.h"
#include "procs.h"
#include "promoter.h"

#define ENGINE_MAX_PROCS 32768

struct engine {
	struct engine_env env;
	struct procs *procs;
	struct hot_table *hot;
	struct promoter *promoter;
	struct feeder *feeder;
	bool promoter_running;
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

int engine_start(struct engine *e, struct config_pub *pub, const struct probe_result *probe)
{
	int r = promoter_start(e->promoter, pub);

	(void)probe;
	if (r < 0)
		return log_error_errno(r, "cannot start the promoter thread");
	e->promoter_running = true;
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

void engine_stop(struct engine *e)
{
	if (e->promoter_running)
		promoter_stop(e->promoter);
	e->promoter_running = false;
}

void engine_free(struct engine *e)
{
	if (!e)
		return;
	engine_stop(e);
	feeder_free(e->feeder);
	if (e->promoter)
		promoter_free(e->promoter);
	hot_table_free(e->hot);
	procs_free(e->procs);
	free(e);
}
