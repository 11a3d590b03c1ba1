/* promoter: see promoter.h for the contract. The promoter gathers from the hot table (the
 * deferred pages first, then the ready queue), has demotion run first and then the mover move
 * what it gathered (mover.h: the batch path, promotion.c and demotion.c: the two directions),
 * and owns the thread, its interval and its kick. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <numaif.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config_pub.h"
#include "mover/demotion.h"
#include "table/hot_table.h"
#include "base/log.h"
#include "mover/mover.h"
#include "mover/node_room.h"
#include "mover/promotion.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "base/worker.h"

/* Rounds of pop-and-move per interval when the bucket allows: bounds one interval's work
 * while letting an unlimited promoter keep up with a busy queue. */
#define MAX_ROUNDS 4
/* Demotion and promotion passes of one interval's exchange, after the first promotion. */
#define EXCHANGE_PASSES 4

struct promoter {
	struct promoter_deps d;
	struct promoter_sys sys; /* the real ops' context, when the ops bring none */
	struct mover m;
	struct move_dir up;
	struct demotion down;
	bool bucket_ready;

	/* Thread. */
	struct worker w;
	atomic_bool kicked; /* a wake-up is pending; saves a write per source record */
	struct config_pub *pub;
	int slot;
};

static int mover_init(struct promoter *p, const struct promoter_deps *deps)
{
	struct mover *m = &p->m;
	long ps = sysconf(_SC_PAGESIZE);

	m->hot = deps->hot;
	m->procs = deps->procs;
	m->topo = deps->topo;
	m->stats = deps->stats;
	m->cold = deps->cold;
	m->cgroups = deps->cgroups;
	m->ops = deps->ops;
	m->ctx = deps->ops->ctx ? deps->ops->ctx : &p->sys;
	m->base_page = ps > 0 ? (uint64_t)ps : 4096;
	m->huge_page = promoter_pmd_size(m->base_page);
	m->work = calloc(PROMOTER_WORK_MAX, sizeof(*m->work));
	m->deferred = calloc(PROMOTER_WORK_MAX, sizeof(*m->deferred));
	return m->work && m->deferred ? 0 : -ENOMEM;
}

static void promoter_release(struct promoter *p)
{
	demotion_fini(&p->down);
	free(p->m.work);
	free(p->m.deferred);
	promoter_sys_fini(&p->sys);
	free(p);
}

int promoter_new(const struct promoter_deps *deps, struct promoter **out)
{
	struct promoter *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->d = *deps;
	if (p->d.kick_mark == 0)
		p->d.kick_mark = PROMOTER_MAX_BATCH;
	promoter_sys_init(&p->sys, deps->procfs_root);
	p->up.kind = &promotion_kind;
	r = mover_init(p, deps);
	if (r == 0)
		r = demotion_init(&p->down, deps->cold != NULL);
	if (r == 0)
		r = worker_init(&p->w, "promoter");
	if (r < 0) {
		promoter_release(p);
		return r;
	}
	atomic_init(&p->kicked, false);
	p->slot = -1;
	*out = p;
	return 0;
}

void promoter_free(struct promoter *p)
{
	uint64_t now;

	if (!p)
		return;
	promoter_stop(p);
	now = p->d.ops->now_ms(p->m.ctx);
	for (size_t i = 0; i < p->m.nr_deferred; i++)
		hot_table_done(p->d.hot, &p->m.deferred[i].c, HOT_RETRY, now);
	worker_fini(&p->w);
	promoter_release(p);
}

size_t promoter_deferred(const struct promoter *p)
{
	return p->m.nr_deferred;
}

bool promoter_node_paused(const struct promoter *p, int node)
{
	return node >= 0 && node < TOPO_MAX_NODES && p->m.paused[node];
}

/* ---- gathering --------------------------------------------------------------------- */

/* The last process handle gather() resolved to a pid (handles are never 0). */
struct pid_memo {
	uint32_t proc;
	pid_t pid;
};

/* Resolves c's process to memo (a new run of pages); false, after settling c, when the
 * process is gone. */
static bool memo_resolve(struct promoter *p, const struct hot_candidate *c, struct pid_memo *memo,
			 uint64_t now)
{
	if (procs_pid(p->d.procs, c->proc, &memo->pid) < 0) {
		memo->proc = 0;
		mover_fail(&p->m, &p->up, &(struct work_item){.c = *c}, FAIL_NOPROC, HOT_DROP, now);
		return false;
	}
	memo->proc = c->proc;
	return true;
}

/* Appends candidate c (popped in place, or a deferred page with its retries) to the work
 * array with its process's pid, or settles it if the process is gone. Pages of one process
 * come in runs: one lookup per run. */
static inline void work_add(struct promoter *p, const struct hot_candidate *c, uint16_t retries,
			    struct pid_memo *memo, uint64_t now)
{
	struct work_item *w = &p->m.work[p->m.nr_work];

	if (c->proc != memo->proc && !memo_resolve(p, c, memo, now))
		return;
	if (&w->c != c) /* popped in place and nothing dropped before it: already there */
		w->c = *c;
	w->pid = memo->pid;
	w->seq = (uint32_t)p->m.nr_work;
	w->group = 0;
	w->retries = retries;
	w->lent = false;
	p->m.one_proc &= c->proc == p->m.work[0].c.proc;
	p->m.nr_work++;
}

/* Fills the work array: deferred pages first (first round only), then the queue, dropping
 * pages of processes that are gone. Returns how many were popped. */
static size_t gather(struct promoter *p, bool first_round, uint64_t now)
{
	struct pid_memo memo = {0};
	size_t room, got, deferred = first_round ? p->m.nr_deferred : 0;

	p->m.nr_work = 0;
	p->m.one_proc = true;
	/* The deferred list is refilled only by mover_process_work(), after this copy. */
	if (first_round) {
		p->m.nr_deferred = 0;
		for (size_t i = 0; i < deferred; i++)
			work_add(p, &p->m.deferred[i].c, p->m.deferred[i].retries, &memo, now);
	}
	room = PROMOTER_WORK_MAX - p->m.nr_work - p->m.nr_deferred;
	/* Straight into the work array; work_add() then compacts over pages it drops. */
	got = hot_table_pop_strided(p->d.hot, &p->m.work[p->m.nr_work].c, sizeof(*p->m.work), room);
	for (size_t i = 0, from = p->m.nr_work; i < got; i++)
		work_add(p, &p->m.work[from + i].c, 0, &memo, now);
	stats_add(p->d.stats, ST_PROMOTE_CANDIDATES, got);
	return got;
}

/* ---- one interval ------------------------------------------------------------------ */

static void begin_interval(struct promoter *p, const struct pghotd_config *cfg, uint64_t now)
{
	mover_dir_begin(&p->up, p->bucket_ready, cfg->promotion.rate_limit_mbps,
			cfg->promotion.interval_ms, now);
	mover_dir_begin(&p->down.dir, p->bucket_ready, cfg->demotion.rate_limit_mbps,
			cfg->promotion.interval_ms, now);
	p->bucket_ready = true;
	p->m.now = now;
	p->m.free_fresh = false;
	p->m.near_pid = 0;
}

static void log_interval(const struct promoter *p)
{
	const struct interval_tally *d = &p->down.dir.tally;
	const struct interval_tally *t = &p->up.tally;

	/* PGHOTD_EVENT=demote: an operator filters the journal for what left the fast tier. */
	if (d->dry)
		log_event(LOG_LVL_INFO, "demote",
			  "dry run: would demote %" PRIu64 " pages (%" PRIu64
			  " KiB), skipped %" PRIu64 ", failed %" PRIu64,
			  d->dry, d->dry_bytes >> 10, d->skipped, d->failed);
	else if (d->moved || d->failed)
		log_event(LOG_LVL_INFO, "demote",
			  "demoted %" PRIu64 " pages (%" PRIu64 " KiB), left %" PRIu64
			  ", skipped %" PRIu64 ", failed %" PRIu64,
			  d->moved, d->bytes >> 10, d->deferred, d->skipped, d->failed);

	if (t->dry)
		log_info("dry run: would promote %" PRIu64 " pages (%" PRIu64
			 " KiB), deferred %" PRIu64 ", skipped %" PRIu64 ", failed %" PRIu64,
			 t->dry, t->dry_bytes >> 10, t->deferred, t->skipped, t->failed);
	else if (t->moved || t->deferred || t->failed)
		log_info("promoted %" PRIu64 " pages (%" PRIu64 " KiB), deferred %" PRIu64
			 ", skipped %" PRIu64 ", failed %" PRIu64,
			 t->moved, t->bytes >> 10, t->deferred, t->skipped, t->failed);
}

/* Promotes what was deferred and what is queued, in up to MAX_ROUNDS takes. */
static long promote_rounds(struct promoter *p, const struct pghotd_config *cfg, uint64_t now_ms)
{
	long moved = 0;

	for (int round = 0; round < MAX_ROUNDS && !p->up.limited; round++) {
		size_t popped = gather(p, round == 0, now_ms);

		if (p->m.nr_work == 0 && popped > 0)
			continue; /* every page was of a gone process: take more */
		if (p->m.nr_work == 0) {
			if (round == 0 && p->m.near_pinned && p->d.ops->run_anywhere) {
				p->d.ops->run_anywhere(p->m.ctx); /* idle: let it run anywhere */
				p->m.near_pinned = false;
			}
			break;
		}
		mover_group_work(&p->m);
		moved += mover_process_work(&p->m, &p->up, cfg, now_ms);
		p->m.nr_work = 0;
		if (popped == 0)
			break;
	}
	return moved;
}

int promoter_run_once(struct promoter *p, const struct pghotd_config *cfg, uint64_t now_ms)
{
	long moved = 0;

	begin_interval(p, cfg, now_ms);
	demotion_run(&p->down, &p->m, cfg, now_ms);
	moved += promote_rounds(p, cfg, now_ms);
	/* Hot pages found no room, or went up on the node's loan: the demotion they need runs
	 * now, and those that wait go up in this interval, not the next (an exchange would
	 * otherwise cost an interval per batch). A demotion takes at most PROMOTER_WORK_MAX cold
	 * pages, so the trade goes on while each pass makes room and both rate limits pay.
	 * Only when it made room for them: a page that waits still waits an interval per retry. */
	for (int pass = 0; pass < EXCHANGE_PASSES && node_room_wanted(&p->m); pass++) {
		uint64_t granted = p->m.credit_granted;

		demotion_run(&p->down, &p->m, cfg, now_ms);
		if (p->m.credit_granted == granted || p->up.limited)
			break;
		moved += promote_rounds(p, cfg, now_ms);
	}
	mover_release(&p->m);
	log_interval(p);
	return moved > INT_MAX ? INT_MAX : (int)moved;
}

int promoter_move_batch(struct promoter *p, const struct pghotd_config *cfg, pid_t pid,
			const struct hot_candidate *c, size_t n, int target, int *status,
			bool settle_it, uint64_t now_ms)
{
	struct work_item items[PROMOTER_MAX_BATCH];
	long r;

	if (n > PROMOTER_MAX_BATCH || target < 0 || target >= TOPO_MAX_NODES)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		items[i] = (struct work_item){.c = c[i], .pid = pid};
		p->m.sel[i] = &items[i];
		p->m.nodes[i] = target;
	}
	mover_fetch_sizes(&p->m, pid, n);
	mover_release(&p->m); /* one call is its own interval */
	if (!settle_it) {
		/* No hot table behind the candidates: count nothing, report statuses only. */
		for (size_t i = 0; i < n; i++) {
			p->m.addrs[i] = (void *)(uintptr_t)c[i].vaddr;
			status[i] = MOVER_STATUS_UNWRITTEN;
		}
		r = p->d.ops->move_pages(p->m.ctx, pid, n, p->m.addrs, p->m.nodes, status,
					 MPOL_MF_MOVE);
		if (r < 0)
			return (int)r;
		r = 0;
		for (size_t i = 0; i < n; i++)
			r += status[i] == target;
		return (int)r;
	}
	memset(&p->up.tally, 0, sizeof(p->up.tally));
	r = mover_move_selected(&p->m, &p->up, cfg, pid, n, false, false, now_ms);
	memcpy(status, p->m.status, n * sizeof(*status));
	if (r == -ESRCH && n > 0)
		mover_forget_process(&p->m, &p->up, c[0].proc, pid, NULL, 0, false, now_ms);
	return (int)r;
}

/* ---- thread ------------------------------------------------------------------------ */

void promoter_kick(struct promoter *p)
{
	/* acq_rel: pairs with the release store that clears the flag in worker_sleep(); only
	 * the kicker that flips it writes, so a busy queue costs one syscall per wake-up. */
	if (!atomic_exchange_explicit(&p->kicked, true, memory_order_acq_rel))
		worker_wake(&p->w);
}

void promoter_kick_if_full(struct promoter *p)
{
	if (hot_table_queued(p->d.hot) >= p->d.kick_mark)
		promoter_kick(p);
}

/* Sleeps until the next interval, or until kicked unless this interval was rate limited
 * (waking early then would only find an empty bucket). */
static void wait_interval(struct promoter *p, unsigned interval_ms)
{
	uint64_t start = p->d.ops->now_ms(p->m.ctx);
	uint64_t deadline = start + interval_ms, now = start;

	while (!worker_stopping(&p->w) && now < deadline) {
		if (worker_sleep(&p->w, (int)(deadline - now), &p->kicked) && !p->up.limited)
			return;
		now = p->d.ops->now_ms(p->m.ctx);
	}
}

static void *promoter_thread(void *arg)
{
	struct promoter *p = arg;

	while (!worker_stopping(&p->w)) {
		const struct pghotd_config *cfg = config_pub_get(p->pub, p->slot);
		int r = promoter_run_once(p, cfg, p->d.ops->now_ms(p->m.ctx));

		if (r < 0)
			log_warning_errno(r, "promotion interval failed");
		wait_interval(p, cfg->promotion.interval_ms ? cfg->promotion.interval_ms : 1);
	}
	return NULL;
}

int promoter_start(struct promoter *p, struct config_pub *pub)
{
	int slot, r;

	if (p->w.running)
		return -EALREADY;
	slot = config_pub_register(pub);
	if (slot < 0)
		return log_error_errno(slot, "cannot register the promoter with the config");
	p->pub = pub;
	p->slot = slot;
	r = worker_start(&p->w, promoter_thread, p);
	if (r < 0) {
		config_pub_unregister(pub, slot);
		p->slot = -1;
	}
	return r;
}

void promoter_stop(struct promoter *p)
{
	if (!p->w.running)
		return;
	worker_stop(&p->w);
	config_pub_unregister(p->pub, p->slot);
	p->slot = -1;
}
