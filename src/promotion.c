/* promotion: the direction that moves hot pages up, and the room on nodes both directions
 * judge (see mover.h). Its pages are hot table entries, settled with hot_table_done() and kept
 * on the deferred list while they wait; its target is the fast node nearest the accessing CPU
 * (or the configured list) that has room of its own or room an exchange made. */
#include "cold_list.h"
#include "log.h"
#include "mover.h"
#include "procs.h"

struct topology *mover_topo(const struct mover *m, const struct pghotd_config *cfg)
{
	return cfg->topo ? cfg->topo : m->topo;
}

/* A fast node lends down to this fraction of its reserve (promotion.min_free_percent): 1% of
 * the node at the shipped 5%, and never below the kernel's mark (zoneinfo.h), under which its
 * own tiering stops promoting and, lower, its allocations fail (min_free_kbytes grows with the
 * square root of memory, and THP raises it: 12 MiB of a 461 MiB node on Debian's 6.12). */
#define LEND_FLOOR_DIV 5

/* The free memory node n keeps for the kernel and new allocations (promotion.min_free_percent). */
static uint64_t node_reserve(const struct topology *t, const struct pghotd_config *cfg, int n)
{
	return t->node[n].mem_total / 100 * cfg->promotion.min_free_percent;
}

/* The free memory a fast node keeps whatever it lends or trades: a fifth of its reserve, at least
 * the kernel's mark. */
static uint64_t lend_floor(const struct topology *t, const struct pghotd_config *cfg, int n)
{
	uint64_t floor = node_reserve(t, cfg, n) / LEND_FLOOR_DIV;

	return floor > t->node[n].mem_mark ? floor : t->node[n].mem_mark;
}

/* What fast node n lends this interval (an exchange that promotes first, as the kernel
 * promotes into the free memory above its watermarks and demotes after): the free bytes of its
 * reserve (promotion.min_free_percent) above the lending floor, as far as the cold list's
 * offered pages, less what is owed already, can pay back; what a node has above its reserve is
 * its own room, taken first. Demotion pays the loan back once the hot pages that wait are up
 * (demotion.c). Nothing without demotion or a slow node with room to pay to, or on a paused
 * node. */
static uint64_t lendable(const struct mover *m, const struct pghotd_config *cfg,
			 const struct topology *t, int n)
{
	uint64_t reserve, floor, room, cover;
	bool payable = false;

	for (int s = 0; s < t->nr_nodes && s < TOPO_MAX_NODES; s++)
		payable |= t->node[s].slow && mover_node_has_room(m, cfg, s);
	if (!payable || !m->cold || !cfg->demotion.enabled || !topology_node_is_fast(t, n) ||
	    !t->node[n].mem_total || m->paused[n])
		return 0;
	reserve = node_reserve(t, cfg, n);
	floor = lend_floor(t, cfg, n);
	if (t->node[n].mem_free <= floor || reserve <= floor)
		return 0;
	room = (t->node[n].mem_free < reserve ? t->node[n].mem_free : reserve) - floor;
	cover = (uint64_t)cold_list_len(m->cold) * m->base_page;
	cover = cover > m->debt[n] ? cover - m->debt[n] : 0;
	return room < cover ? room : cover;
}

void mover_refresh_free_once(struct mover *m, const struct pghotd_config *cfg)
{
	struct topology *t = mover_topo(m, cfg);
	int r;

	if (m->free_fresh)
		return;
	m->free_fresh = true;
	r = m->ops->refresh_free(m->ctx, t);
	if (r < 0)
		log_warning_errno(r, "cannot refresh free memory, using the last reading");
	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		/* Room of its own again (a process exited), or no one to pay: nothing is owed. */
		if (mover_node_has_room(m, cfg, n) || !cfg->demotion.enabled)
			m->debt[n] = 0;
		m->lend[n] = lendable(m, cfg, t, n);
		if (!m->paused[n] || topology_free_percent(t, n) <= cfg->promotion.min_free_percent)
			continue;
		m->paused[n] = false;
		log_info("node %d has %u%% free again, resuming promotion to it", n,
			 topology_free_percent(t, n));
	}
}

bool mover_exchange_room(const struct mover *m, int n)
{
	return m->credit[n] && m->now < m->credit_until[n];
}

bool mover_node_has_room(const struct mover *m, const struct pghotd_config *cfg, int n)
{
	const struct topology *t = mover_topo(m, cfg);

	if (n < 0 || n >= t->nr_nodes || n >= TOPO_MAX_NODES || !t->node[n].present)
		return false;
	if (m->paused[n])
		return false;
	/* A node whose size is unknown cannot be judged full. */
	if (t->node[n].mem_total == 0)
		return true;
	return topology_free_percent(t, n) >= cfg->promotion.min_free_percent &&
	       t->node[n].mem_free > t->node[n].mem_mark;
}

/* Room of its own, room an exchange made, or room it lends (only fast nodes hold credit or
 * lend). */
static bool node_usable(const struct mover *m, const struct pghotd_config *cfg, int n)
{
	return mover_node_has_room(m, cfg, n) ||
	       (n >= 0 && n < TOPO_MAX_NODES &&
		(mover_exchange_room(m, n) || m->lend[n] >= m->base_page));
}

static uint64_t page_bytes(const struct mover *m, const struct work_item *it)
{
	return it->c.size == HOT_SIZE_HUGE ? m->huge_page : m->base_page;
}

void mover_take_room(struct mover *m, const struct pghotd_config *cfg, int n,
		     const struct work_item *it)
{
	struct topology *t = mover_topo(m, cfg);
	uint64_t size = page_bytes(m, it);

	if (n < 0 || n >= t->nr_nodes || n >= TOPO_MAX_NODES)
		return;
	t->node[n].mem_free = t->node[n].mem_free > size ? t->node[n].mem_free - size : 0;
	m->memo_valid = false; /* the room may have run out: choose again */
}

bool mover_book_room(struct mover *m, const struct pghotd_config *cfg, int n, struct work_item *it)
{
	const struct topology *t = mover_topo(m, cfg);
	uint64_t size = page_bytes(m, it);

	if (mover_node_has_room(m, cfg, n))
		return true;
	if (n < 0 || n >= TOPO_MAX_NODES || n >= t->nr_nodes)
		return false;
	/* The room a trade made is in the free memory read after it, which the node's own room
	 * and its loan are judged from too: credit on top of them promised the same bytes twice
	 * (seen once: 5,848 pages up on 1,535 down took node 0 of scenario-fulldram-debian under
	 * the kernel's min watermark, and the OOM killer took the ballast, 2026-12-06). Neither
	 * credit nor a loan takes the node below its lending floor, by that reading less what
	 * went up since. */
	if (t->node[n].mem_total && t->node[n].mem_free < lend_floor(t, cfg, n) + size)
		return false;
	if (mover_exchange_room(m, n) && m->credit[n] >= size) {
		m->credit[n] -= size;
		return true;
	}
	if (m->lend[n] < size)
		return false;
	m->lend[n] -= size;
	if (!m->debt[n])
		m->debt_since[n] = m->now;
	m->debt[n] += size;
	it->lent = true;
	return true;
}

void mover_unbook_loan(struct mover *m, int n, struct work_item *it)
{
	uint64_t size = page_bytes(m, it);

	if (!it->lent || n < 0 || n >= TOPO_MAX_NODES)
		return;
	it->lent = false;
	m->lend[n] += size;
	m->debt[n] -= m->debt[n] < size ? m->debt[n] : size;
}

static int choose_target(const struct mover *m, const struct pghotd_config *cfg, int from,
			 int where)
{
	int order[TOPO_MAX_NODES];
	int n;

	if (cfg->promotion.target == TARGET_FIXED) {
		for (int i = 0; i < cfg->promotion.target_nodes.n; i++)
			if (node_usable(m, cfg, cfg->promotion.target_nodes.node[i]))
				return cfg->promotion.target_nodes.node[i];
		return -1;
	}
	if (from < 0 || from >= mover_topo(m, cfg)->nr_nodes)
		from = where;
	n = topology_fast_nodes_by_distance(mover_topo(m, cfg), from, order, TOPO_MAX_NODES);
	for (int i = 0; i < n; i++)
		if (node_usable(m, cfg, order[i]))
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

/* The node a page accessed from `from` (sitting on `where`) would go to were none full. */
static int preferred_target(const struct mover *m, const struct pghotd_config *cfg, int from,
			    int where)
{
	int n;

	if (cfg->promotion.target == TARGET_FIXED)
		return cfg->promotion.target_nodes.n ? cfg->promotion.target_nodes.node[0] : -1;
	if (from < 0 || from >= mover_topo(m, cfg)->nr_nodes)
		from = where;
	return topology_fast_nodes_by_distance(mover_topo(m, cfg), from, &n, 1) == 1 ? n : -1;
}

bool mover_room_wanted(const struct mover *m)
{
	for (int n = 0; n < TOPO_MAX_NODES; n++)
		if (m->room_wanted[n] || m->debt[n])
			return true;
	return false;
}

bool mover_hot_waiting(const struct mover *m)
{
	return m->nr_deferred || (m->hot && hot_table_queued(m->hot));
}

/* Served by the demotion that follows (an exchange). */
bool mover_want_room(struct mover *m, const struct pghotd_config *cfg, const struct work_item *it,
		     int where)
{
	int n;

	if (!m->cold || !cfg->demotion.enabled)
		return false;
	n = preferred_target(m, cfg, it->c.node, where);
	if (n < 0 || n >= TOPO_MAX_NODES)
		return false;
	m->room_wanted[n] += page_bytes(m, it);
	return true;
}

void mover_pause_node(struct mover *m, const struct move_dir *d, int node)
{
	if (node < 0 || node >= TOPO_MAX_NODES || m->paused[node])
		return;
	m->paused[node] = true;
	stats_add(m->stats, ST_NODE_PAUSES, 1);
	log_notice("node %d is full (move_pages -ENOMEM), pausing %s to it", node, d->kind->noun);
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

static void promotion_count_moved(struct mover *m, const struct move_dir *d, int node,
				  uint64_t pages, uint64_t bytes)
{
	(void)d;
	stats_promoted(m->stats, node, pages, bytes);
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
