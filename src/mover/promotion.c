/* promotion: see promotion.h. */
#include "base/log.h"
#include "mover/mover.h"
#include "mover/node_room.h"
#include "table/procs.h"
#include "mover/promotion.h"

static int choose_target(const struct mover *m, const struct pghotd_config *cfg, int from,
			 int where)
{
	int order[TOPO_MAX_NODES];
	int n;

	if (cfg->promotion.target == TARGET_FIXED) {
		for (int i = 0; i < cfg->promotion.target_nodes.n; i++)
			if (node_room_usable(m, cfg, cfg->promotion.target_nodes.node[i]))
				return cfg->promotion.target_nodes.node[i];
		return -1;
	}
	if (from < 0 || from >= mover_topo(m, cfg)->nr_nodes)
		from = where;
	n = topology_fast_nodes_by_distance(mover_topo(m, cfg), from, order, TOPO_MAX_NODES);
	for (int i = 0; i < n; i++)
		if (node_room_usable(m, cfg, order[i]))
			return order[i];
	return -1;
}

/* Remembers the last answer: node state only changes after a move, and the placement query
 * forgets it per chunk. The caller has read free memory this interval. */
static int promotion_target(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			    int from, int where)
{
	(void)d;
	if (m->memo_valid && m->memo_from == from && m->memo_where == where)
		return m->memo_target;
	m->memo_from = from;
	m->memo_where = where;
	m->memo_valid = true;
	m->memo_target = choose_target(m, cfg, from, where);
	return m->memo_target;
}

bool promotion_hot_waiting(const struct mover *m)
{
	return m->nr_deferred || (m->hot && hot_table_queued(m->hot));
}

/* ---- the direction's policy -------------------------------------------------------- */

static int promotion_placed(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			    const struct work_item *it, int node, uint64_t now)
{
	if (topology_node_is_slow(mover_topo(m, cfg), node))
		return node;
	stats_add(m->stats, ST_PROMOTE_SKIPPED_FAST, 1);
	d->tally.skipped++;
	hot_table_done(m->hot, &it->c, HOT_DROP, now);
	return -1;
}

static void promotion_settle(struct mover *m, const struct work_item *it, enum hot_outcome o,
			     uint64_t now)
{
	hot_table_done(m->hot, &it->c, o, now);
}

/* Cannot overflow: see the ownership note in mover.h. */
static void promotion_keep(struct mover *m, const struct work_item *it)
{
	m->deferred[m->nr_deferred++] = *it;
}

static void promotion_count_moved(struct mover *m, const struct move_dir *d, uint32_t proc,
				  int node, uint64_t pages, uint64_t bytes)
{
	(void)d;
	stats_promoted(m->stats, node, pages, bytes);
	cgroups_moved(m->cgroups, proc, CGROUPS_PROMOTED, pages);
}

/* Settles rest[0..n) and every deferred page of the process, then forgets it. Everything we
 * hold is settled first: hot_table_forget_proc() frees entries, and a later done() on a freed slot
 * could land on a reused one. */
static void promotion_forget(struct mover *m, uint32_t proc, pid_t pid, struct work_item *rest,
			     size_t n, bool reused, uint64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		hot_table_done(m->hot, &rest[i].c, HOT_DROP, now);
	for (size_t i = 0; i < m->nr_deferred; i++) {
		if (m->deferred[i].c.proc == proc)
			hot_table_done(m->hot, &m->deferred[i].c, HOT_DROP, now);
		else
			m->deferred[k++] = m->deferred[i];
	}
	m->nr_deferred = k;
	if (!reused)
		stats_fail(m->stats, FAIL_NOPROC, 1);
	hot_table_forget_proc(m->hot, proc);
	procs_forget(m->procs, proc);
	mover_release(m);
	stats_add(m->stats, ST_PROCESSES_FORGOTTEN, 1);
	if (!reused)
		log_info("pid=%d is gone, forgetting its pages", (int)pid);
}

const struct move_dir_kind promotion_kind = {
    .verb = "promote",
    .noun = "promotion",
    .rate_limited = ST_PROMOTE_RATE_LIMITED,
    .dry_run = ST_PROMOTE_DRY_RUN,
    .by_address = true,
    .target = promotion_target,
    .placed = promotion_placed,
    .settle = promotion_settle,
    .keep = promotion_keep,
    .count_moved = promotion_count_moved,
    .count_fail = stats_fail,
    .forget = promotion_forget,
};
