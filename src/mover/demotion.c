/* demotion: see demotion.h for the contract. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "table/cold_list.h"
#include "mover/demotion.h"
#include "mover/mover.h"
#include "mover/node_room.h"
#include "mover/promotion.h"
#include "table/procs.h"

/* A demotion item has no hot table entry: its slot is past any table (hot_table_done() ignores
 * it). */
#define NO_SLOT UINT32_MAX
/* Time between two looks at fast nodes' free memory for demotion, when nothing asks sooner. */
#define DEMOTE_CHECK_MS 1000
/* Shortest time the room an exchange made stays reserved for the hot pages it was made for. */
#define EXCHANGE_MIN_TTL_MS 1000

static const struct move_dir_kind demotion_kind;

int demotion_init(struct demotion *dm, bool with_cold)
{
	memset(dm, 0, sizeof(*dm));
	dm->dir.kind = &demotion_kind;
	if (!with_cold)
		return 0;
	dm->cold = calloc(PROMOTER_WORK_MAX, sizeof(*dm->cold));
	return dm->cold ? 0 : -ENOMEM;
}

void demotion_fini(struct demotion *dm)
{
	free(dm->cold);
	dm->cold = NULL;
}

static uint64_t pct_of(const struct topology *t, int n, unsigned pct)
{
	return t->node[n].mem_total / 100 * pct;
}

/* What fast node n's loan asks demotion to pay back now: nothing while hot pages still wait to
 * go up (the kernel's kswapd, too, demotes after the promotions it makes room for, not between
 * them), unless the debt is a scan interval old (a stream of hot pages that never lets up
 * would keep the node at its lending floor), and all of it once nothing waits. */
static uint64_t debt_due(const struct mover *m, const struct pghotd_config *cfg, int n)
{
	if (!m->debt[n])
		return 0;
	if (promotion_hot_waiting(m) &&
	    m->now < m->debt_since[n] + cfg->sources.abit.scan_interval_ms)
		return 0;
	return m->debt[n];
}

/* Bytes fast node n should shed this interval (0: none), and why: due, the loan's bytes due
 * (debt_due()). */
static uint64_t demote_need(const struct mover *m, const struct pghotd_config *cfg, int n,
			    uint64_t due, enum stat_demote_reason *why)
{
	const struct topology *t = mover_topo(m, cfg);
	uint64_t free = t->node[n].mem_free, need = 0, want;

	if (t->node[n].mem_total == 0)
		return 0;
	want = pct_of(t, n, cfg->demotion.free_target_percent);
	if (want > free) {
		need = want - free;
		*why = DEMOTE_FREE_TARGET;
	}
	/* An exchange: as many bytes down as hot pages wait for, and as those that went up on
	 * the node's loan took, once due. */
	if (m->room_wanted[n] + due > need) {
		need = m->room_wanted[n] + due;
		*why = DEMOTE_EXCHANGE;
	}
	return need;
}

/* Whether the source should measure idle ages on fast node n: from twice the free share at
 * which demotion starts, so pages have an age when it does. */
static bool demote_watch(const struct mover *m, const struct pghotd_config *cfg, int n)
{
	unsigned level = cfg->demotion.free_target_percent > cfg->promotion.min_free_percent
			     ? cfg->demotion.free_target_percent
			     : cfg->promotion.min_free_percent;

	const struct topology *t = mover_topo(m, cfg);

	if (m->room_wanted[n] || m->debt[n] || m->paused[n])
		return true;
	/* A node whose size is unknown cannot be judged short, as in node_room_has_own(). */
	return t->node[n].mem_total && topology_free_percent(t, n) < 2 * level;
}

/* The slow node with room nearest to fast node from (ties by id), -1 when none. */
static int nearest_slow(const struct mover *m, const struct pghotd_config *cfg, int from)
{
	const struct topology *t = mover_topo(m, cfg);
	int best = -1;

	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		if (!t->node[n].slow || !node_room_has_own(m, cfg, n))
			continue;
		if (best < 0 || t->distance[from][n] < t->distance[from][best])
			best = n;
	}
	return best;
}

/* Appends cold page c to the work array, grouped by its procs handle like a hot page; false
 * (counted) when its process is gone or its pid now names another process, and false when the
 * page was promoted within promotion.cooldown_ms: sent down now, it could not come back up until
 * the cooldown ends (an exchange takes pages younger than the cooldown). */
static bool cold_add(struct demotion *dm, struct mover *m, const struct pghotd_config *cfg,
		     const struct cold_page *c, uint64_t now)
{
	int64_t h = c->proc ? (int64_t)c->proc : procs_handle(m->procs, c->pid);
	pid_t pid;

	if (h <= 0 || procs_pid(m->procs, (uint32_t)h, &pid) < 0 || pid != c->pid) {
		stats_demote_fail(m->stats, FAIL_NOPROC, 1);
		return false;
	}
	if (m->hot &&
	    hot_table_cooling(m->hot, (uint32_t)h, c->vaddr, now, cfg->promotion.cooldown_ms)) {
		dm->dir.tally.skipped++;
		return false;
	}
	m->work[m->nr_work] = (struct work_item){
	    .c = {.vaddr = c->vaddr,
		  .proc = (uint32_t)h,
		  .node = -1,
		  .slot = NO_SLOT,
		  .size = c->size},
	    .pid = pid,
	    .seq = (uint32_t)m->nr_work,
	};
	m->one_proc &= m->work[m->nr_work].c.proc == m->work[0].c.proc;
	m->nr_work++;
	return true;
}

/* How many cold pages to take for need bytes: no more than the bucket can pay for now, the rest
 * would only go back to the list; none when it cannot pay for a base page, unless it is full (a
 * full bucket pays for a THP). */
static uint64_t take_max(const struct token_bucket *b, const struct mover *m, uint64_t need)
{
	uint64_t max = need / m->base_page + 1;
	uint64_t paid = b->tokens > 0 ? (uint64_t)b->tokens / m->base_page : 0;

	if (b->rate && paid == 0 && b->tokens < b->burst)
		return 0;
	if (b->rate && paid < max)
		max = paid ? paid : 1;
	return max > PROMOTER_WORK_MAX ? PROMOTER_WORK_MAX : max;
}

/* Takes cold pages of node n worth need bytes (coldest first) into the work array, as many as
 * the bucket can pay for now; what the take returned beyond need goes back to the list.
 * Returns false when the list held fewer than were asked for. */
static bool take_cold(struct demotion *dm, struct mover *m, const struct pghotd_config *cfg, int n,
		      uint64_t need, uint64_t now)
{
	uint64_t max = take_max(&dm->dir.bucket, m, need), bytes = 0, min_idle;
	size_t got, k = 0;

	m->one_proc = true;
	m->nr_work = 0;
	if (max == 0)
		return true;
	/* An exchange takes what the source offered; the free target waits for the idle time. */
	min_idle = dm->dir.why == DEMOTE_EXCHANGE ? config_demotion_exchange_ms(cfg)
						  : config_demotion_idle_ms(cfg);
	got =
	    cold_list_take(m->cold, n, now, config_demotion_trust_ms(cfg), min_idle, dm->cold, max);
	for (; k < got && bytes < need; k++) {
		const struct cold_page *c = &dm->cold[k];

		if (cold_add(dm, m, cfg, c, now))
			bytes += c->size == HOT_SIZE_HUGE ? m->huge_page : m->base_page;
	}
	cold_list_offer(m->cold, dm->cold + k, got - k);
	stats_add(m->stats, ST_DEMOTE_CANDIDATES, k);
	return got == max;
}

/* An exchange moved bytes off fast node n: the hot pages that wait for it may fill that much
 * although the node stays short (the trade leaves its use unchanged), until their source has
 * seen them again: they went back to counting, and are queued anew within a scan interval. */
static void grant_credit(struct mover *m, const struct pghotd_config *cfg, int n, uint64_t bytes,
			 uint64_t now)
{
	uint64_t ttl = 2 * (uint64_t)cfg->sources.abit.scan_interval_ms;

	if (!bytes)
		return;
	if (now >= m->credit_until[n])
		m->credit[n] = 0;
	m->credit[n] += bytes;
	m->credit_granted += bytes;
	m->credit_until[n] = now + (ttl > EXCHANGE_MIN_TTL_MS ? ttl : EXCHANGE_MIN_TTL_MS);
	m->exchange_until =
	    m->exchange_until > m->credit_until[n] ? m->exchange_until : m->credit_until[n];
}

/* Moves up to need bytes of node n's coldest pages down, paying due bytes of its loan first. */
static void demote_node(struct demotion *dm, struct mover *m, const struct pghotd_config *cfg,
			int n, uint64_t need, uint64_t due, uint64_t now)
{
	struct interval_tally *t = &dm->dir.tally;
	uint64_t before;
	bool enough;

	dm->dir.from = n;
	dm->dir.target = nearest_slow(m, cfg, n);
	if (dm->dir.target < 0)
		return;
	enough = take_cold(dm, m, cfg, n, need, now);
	/* The list ran short: let the source offer again what it offered before, at most once
	 * per stale age (an offer older than that is dropped anyway), or for an exchange, which
	 * hot pages wait for, once per half a scan interval (the source's rounds, each of which
	 * looks at the node's pages again at once for it). */
	if (!enough &&
	    now - dm->last_reoffer >= (dm->dir.why == DEMOTE_EXCHANGE
					   ? (uint64_t)cfg->sources.abit.scan_interval_ms / 2
					   : config_demotion_trust_ms(cfg))) {
		cold_list_reoffer(m->cold);
		dm->last_reoffer = now;
	}
	if (m->nr_work == 0)
		return;
	before = t->bytes + t->dry_bytes;
	mover_group_work(m);
	mover_process_work(m, &dm->dir, cfg, now);
	m->nr_work = 0;
	if (dm->dir.why == DEMOTE_EXCHANGE) {
		uint64_t down = t->bytes + t->dry_bytes - before;
		uint64_t repaid = down < due ? down : due;

		/* What went up on the loan is paid first, once due; the rest is room for the
		 * waiting. */
		m->debt[n] -= repaid;
		grant_credit(m, cfg, n, down - repaid, now);
	}
}

/* Free memory is read once per DEMOTE_CHECK_MS unless promotion asked for room or the last
 * look found a node short: an idle promoter on a machine with free DRAM does not read node
 * meminfo every interval. */
static bool time_to_look(struct demotion *dm, const struct mover *m,
			 const struct pghotd_config *cfg, uint64_t now)
{
	bool asked = node_room_wanted(m);

	if (!asked && !dm->needy && dm->last_check && dm->check_gen == cfg->generation &&
	    now - dm->last_check < DEMOTE_CHECK_MS)
		return false;
	dm->last_check = now;
	dm->check_gen = cfg->generation; /* a reload is taken up at once */
	dm->needy = false;
	return true;
}

void demotion_run(struct demotion *dm, struct mover *m, const struct pghotd_config *cfg,
		  uint64_t now)
{
	const struct topology *t = mover_topo(m, cfg);
	uint64_t watch = 0;

	if (!m->cold)
		return;
	if (!cfg->demotion.enabled) {
		/* Off (a reload may have turned it off): the source stops watching fast pages. */
		cold_list_want(m->cold, 0);
		dm->needy = false;
		return;
	}
	if (!time_to_look(dm, m, cfg, now))
		return;
	node_room_refresh_once(m, cfg);
	for (int n = 0; n < t->nr_nodes && n < TOPO_MAX_NODES; n++) {
		enum stat_demote_reason why = DEMOTE_FREE_TARGET;
		uint64_t need, due;

		if (!topology_node_is_fast(t, n))
			continue;
		if (demote_watch(m, cfg, n))
			watch |= UINT64_C(1) << n;
		due = debt_due(m, cfg, n);
		need = demote_need(m, cfg, n, due, &why);
		dm->dir.why = why;
		dm->needy |= need != 0;
		if (need)
			demote_node(dm, m, cfg, n, need, due, now);
	}
	cold_list_want(m->cold, watch);
	memset(m->room_wanted, 0, sizeof(m->room_wanted));
	if (dm->dir.tally.moved)
		m->free_fresh = false; /* promotion judges the room just made */
}

/* ---- the direction's policy -------------------------------------------------------- */

static int demotion_target(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			   int from, int where)
{
	(void)m;
	(void)cfg;
	(void)from;
	(void)where;
	return d->target;
}

static int demotion_placed(struct mover *m, struct move_dir *d, const struct pghotd_config *cfg,
			   const struct work_item *it, int node, uint64_t now)
{
	(void)cfg;
	(void)it;
	(void)now;
	if (node == d->from)
		return node;
	stats_add(m->stats, ST_DEMOTE_SKIPPED, 1);
	d->tally.skipped++;
	return -1;
}

/* A cold page holds no hot table entry: nothing to hand back. */
static void demotion_settle(struct mover *m, const struct work_item *it, enum hot_outcome o,
			    uint64_t now)
{
	(void)m;
	(void)it;
	(void)o;
	(void)now;
}

static void demotion_count_moved(struct mover *m, const struct move_dir *d, uint32_t proc, int node,
				 uint64_t pages, uint64_t bytes)
{
	(void)node;
	stats_demoted(m->stats, d->from, d->why, pages, bytes);
	cgroups_moved(m->cgroups, proc, CGROUPS_DEMOTED, pages);
}

/* The process is the sources' to forget. */
static void demotion_forget(struct mover *m, uint32_t proc, pid_t pid, struct work_item *rest,
			    size_t n, bool reused, uint64_t now)
{
	(void)proc;
	(void)pid;
	(void)rest;
	(void)n;
	(void)now;
	if (!reused)
		stats_demote_fail(m->stats, FAIL_NOPROC, 1);
	mover_release(m);
}

static const struct move_dir_kind demotion_kind = {
    .verb = "demote",
    .noun = "demotion",
    .rate_limited = ST_DEMOTE_RATE_LIMITED,
    .dry_run = ST_DEMOTE_DRY_RUN,
    .by_address = false, /* cold pages come coldest first, and need no size lookup */
    .target = demotion_target,
    .placed = demotion_placed,
    .settle = demotion_settle,
    .keep = NULL,
    .count_moved = demotion_count_moved,
    .count_fail = stats_demote_fail,
    .forget = demotion_forget,
};
