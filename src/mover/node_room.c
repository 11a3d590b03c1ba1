/* node_room: see node_room.h. */
#include "table/cold_list.h"
#include "base/log.h"
#include "mover/node_room.h"

/* A fast node lends down to this fraction of its reserve (promotion.min_free_percent): 1% of
 * the node at the shipped 5%, and never below the kernel's mark (zoneinfo.h), under which its
 * own tiering stops promoting and, lower, its allocations fail (min_free_kbytes grows with the
 * square root of memory, and THP raises it, so a small node's mark is a large share of it). */
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
		payable |= t->node[s].slow && node_room_has_own(m, cfg, s);
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

void node_room_refresh_once(struct mover *m, const struct pghotd_config *cfg)
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
		if (node_room_has_own(m, cfg, n) || !cfg->demotion.enabled)
			m->debt[n] = 0;
		m->lend[n] = lendable(m, cfg, t, n);
		if (!m->paused[n] || topology_free_percent(t, n) <= cfg->promotion.min_free_percent)
			continue;
		m->paused[n] = false;
		log_info("node %d has %u%% free again, resuming promotion to it", n,
			 topology_free_percent(t, n));
	}
}

bool node_room_has_credit(const struct mover *m, int n)
{
	return m->credit[n] && m->now < m->credit_until[n];
}

bool node_room_has_own(const struct mover *m, const struct pghotd_config *cfg, int n)
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

bool node_room_usable(const struct mover *m, const struct pghotd_config *cfg, int n)
{
	return node_room_has_own(m, cfg, n) ||
	       (n >= 0 && n < TOPO_MAX_NODES &&
		(node_room_has_credit(m, n) || m->lend[n] >= m->base_page));
}

static uint64_t page_bytes(const struct mover *m, const struct work_item *it)
{
	return it->c.size == HOT_SIZE_HUGE ? m->huge_page : m->base_page;
}

void node_room_take(struct mover *m, const struct pghotd_config *cfg, int n,
		    const struct work_item *it)
{
	struct topology *t = mover_topo(m, cfg);
	uint64_t size = page_bytes(m, it);

	if (n < 0 || n >= t->nr_nodes || n >= TOPO_MAX_NODES)
		return;
	t->node[n].mem_free = t->node[n].mem_free > size ? t->node[n].mem_free - size : 0;
	m->memo_valid = false; /* the room may have run out: choose again */
}

bool node_room_book(struct mover *m, const struct pghotd_config *cfg, int n, struct work_item *it)
{
	const struct topology *t = mover_topo(m, cfg);
	uint64_t size = page_bytes(m, it);

	if (node_room_has_own(m, cfg, n))
		return true;
	if (n < 0 || n >= TOPO_MAX_NODES || n >= t->nr_nodes)
		return false;
	/* The room a trade made is in the free memory read after it, which the node's own room
	 * and its loan are judged from too: credit on top of them promises the same bytes twice,
	 * which can take the node under the kernel's min watermark (docs/measurements.md). Neither
	 * credit nor a loan takes the node below its lending floor, by that reading less what
	 * went up since. */
	if (t->node[n].mem_total && t->node[n].mem_free < lend_floor(t, cfg, n) + size)
		return false;
	if (node_room_has_credit(m, n) && m->credit[n] >= size) {
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

void node_room_unbook_loan(struct mover *m, int n, struct work_item *it)
{
	uint64_t size = page_bytes(m, it);

	if (!it->lent || n < 0 || n >= TOPO_MAX_NODES)
		return;
	it->lent = false;
	m->lend[n] += size;
	m->debt[n] -= m->debt[n] < size ? m->debt[n] : size;
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

bool node_room_wanted(const struct mover *m)
{
	for (int n = 0; n < TOPO_MAX_NODES; n++)
		if (m->room_wanted[n] || m->debt[n])
			return true;
	return false;
}

/* Served by the demotion that follows (an exchange). */
bool node_room_want(struct mover *m, const struct pghotd_config *cfg, const struct work_item *it,
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

void node_room_pause(struct mover *m, const struct move_dir *d, int node)
{
	if (node < 0 || node >= TOPO_MAX_NODES || m->paused[node])
		return;
	m->paused[node] = true;
	stats_add(m->stats, ST_NODE_PAUSES, 1);
	log_notice("node %d is full (move_pages -ENOMEM), pausing %s to it", node, d->kind->noun);
}
