/* abit_cold: the demotion side of the Accessed-bit source. Tracked pages of the fast nodes the
 * cold list wants watched keep the time since which they were not seen accessed, and go to
 * the cold list (in batches) once idle for config_demotion_exchange_ms(), once per idle
 * episode or offer epoch (a scan that finds such a page idle but younger has its piece scanned
 * again when the page is old enough: abit_cold_schedule()); in mode "regions" the cold window scans
 * in turn the pieces where samples found such pages idle. */
#include <stdlib.h>

#include "sources/abit/abit_cold.h"
#include "sources/abit/abit_piece.h"
#include "sources/abit/abit_table.h"
#include "table/procs.h"

void abit_cold_flush(struct abit *a)
{
	if (a->cold.nbatch)
		cold_list_offer(a->cold.list, a->cold.batch, a->cold.nbatch);
	a->cold.nbatch = 0;
}

/* A new offer epoch: every page of the piece may be offered again. */
void abit_cold_new_epoch(struct abit *a, struct abit_piece *g)
{
	if (g->offer_epoch == a->cold.epoch)
		return;
	g->offer_epoch = a->cold.epoch;
	for (uint32_t i = 0; g->since && i < g->npages; i++)
		g->ent[i] &= ~ENT_OFFERED;
}

/* The procs handle of p for its offers, looked up once: 0 without procs, < 0 when the
 * registry has no room for it (its pages are not offered then). */
static int64_t proc_handle(const struct abit *a, struct abit_proc *p)
{
	if (!a->cold.registry)
		return 0;
	if (p->handle == 0)
		p->handle = procs_handle(a->cold.registry, p->pid);
	return p->handle;
}

/* Tracked page i of a watched fast node, its PFN unchanged since the last scan: an access
 * restarts its idle time; idle for config_demotion_exchange_ms(), it is offered once (the
 * mover takes it for an exchange from then on, for the free target once idle
 * config_demotion_idle_ms()). A page tracked
 * before its node counted as fast (a reload moved the tiers) starts its idle time now. */
void abit_cold_note(struct abit *a, struct abit_proc *p, struct abit_piece *g, uint32_t i, int node,
		    bool idle)
{
	int64_t h;
	uint32_t now = abit_since_now(a), age = now - g->since[i];

	if (!idle || !g->since[i]) {
		g->since[i] = now;
		g->ent[i] &= ~ENT_OFFERED;
		return;
	}
	if (g->ent[i] & ENT_OFFERED)
		return;
	if (age < config_demotion_exchange_ms(a->cfg)) {
		uint32_t wait = config_demotion_exchange_ms(a->cfg) - age;

		a->scan.cold_wait_ms = wait < a->scan.cold_wait_ms ? wait : a->scan.cold_wait_ms;
		return;
	}
	/* Mapped by more than one process: move_pages(2) without MPOL_MF_MOVE_ALL refuses it
	 * (-EACCES), so an offer would only head the promoter's take with a failure. */
	if (!(a->scan.pm[i] & PAGEMAP_EXCLUSIVE))
		return;
	h = proc_handle(a, p);
	if (h < 0)
		return;
	g->ent[i] |= ENT_OFFERED;
	a->cold.batch[a->cold.nbatch++] = (struct cold_page){
	    .pid = p->pid,
	    .proc = (uint32_t)h,
	    .vaddr = g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE,
	    .idle_since_ms = a->now_ms - age,
	    .offered_ms = a->now_ms,
	    .node = node,
	    .size = g->ent[i] & ENT_HUGE ? HOT_SIZE_HUGE : HOT_SIZE_BASE,
	};
	if (a->cold.nbatch == COLD_BATCH)
		abit_cold_flush(a);
}

/* Makes room for page i's idle time; -ENOMEM. */
int abit_cold_track(struct abit *a, struct abit_piece *g, uint32_t i)
{
	if (!g->since) {
		g->since = calloc(g->npages, sizeof(*g->since));
		if (!g->since)
			return -ENOMEM;
		g->offer_epoch = a->cold.epoch;
	}
	g->since[i] = abit_since_now(a);
	return 0;
}

/* A round's length: half a scan interval. */
static unsigned cold_round_ms(const struct abit *a)
{
	return a->cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP;
}

/* The piece just scanned holds watched fast pages found idle that will be old enough to be
 * offered in a->scan.cold_wait_ms: it is scanned again the round after, not at its backed-off
 * pace, so a full node's cold pages are on the list when an exchange needs them (a page
 * that stays idle is offered within a round of the exchange age, and a piece read once per
 * idle episode for it). */
void abit_cold_schedule(struct abit *a, struct abit_piece *g)
{
	unsigned round_ms = cold_round_ms(a);
	uint64_t rounds;

	if (a->scan.cold_wait_ms == UINT32_MAX)
		return;
	rounds = round_ms ? a->scan.cold_wait_ms / round_ms + 1 : 1;
	if (g->next_round > a->round + rounds)
		g->next_round = a->round + rounds;
}

/* Most rounds between scans of a piece that holds pages of a fast node watched for
 * demotion: a quarter of the idle time that makes a page cold, so ages are known to that
 * precision and the piece's cold pages are offered again within the time the promoter
 * trusts an offer (config_demotion_trust_ms()). Such a piece has no slow page to back off
 * for, and would otherwise be seen once in ABIT_MAX_INTERVAL rounds, offering few pages. */
uint16_t abit_cold_max_interval(const struct abit *a)
{
	unsigned round_ms = cold_round_ms(a);
	unsigned n = round_ms ? config_demotion_idle_ms(a->cfg) / 4 / round_ms : 1;

	return n < 1 ? 1 : n > ABIT_MAX_INTERVAL ? ABIT_MAX_INTERVAL : (uint16_t)n;
}

/* Mode regions: rounds a piece stays in the cold window, enough for each of its idle fast
 * pages to be seen idle for the demotion idle time and offered (a scan at most
 * abit_cold_max_interval() rounds after that), with a scan's slack. */
static uint64_t cold_window_rounds(const struct abit *a)
{
	unsigned round_ms = cold_round_ms(a);
	uint64_t idle = round_ms ? (config_demotion_idle_ms(a->cfg) + round_ms - 1) / round_ms : 1;

	return idle + 2 * (uint64_t)abit_cold_max_interval(a) + 1;
}

/* Takes the piece out of the cold window (its per-page state goes unless promotion
 * watches it). */
static void cold_window_leave(struct abit *a, struct abit_piece *g)
{
	g->cold_until = 0;
	g->cold_scanned = false;
	if (!g->watch) {
		abit_piece_unwatch(g);
		a->watch.nwatched--;
	}
}

/* Mode regions: the cold window, which finds demotion's cold pages. The sampling regions
 * look at slow pages, and a piece is watched for promotion where they see accesses, so
 * fast pages would be seen only there. While demotion wants pages (a->cold.want), the 2 MiB
 * pieces whose samples found a page of a watched fast node idle from one sampling step to
 * the next (fast_hint) are taken into the
 * window in address order, round robin over the processes, up to half of max_watched_mib
 * (the other half is promotion's), and scanned page by page as the full scan does: each page
 * tracked with its idle time, offered once idle for demotion.min_idle_ms. A piece leaves
 * when demotion wants no more, when its first scan finds no page of a watched fast node (a
 * stale hint), or, once it has been in for cold_window_rounds() and other hinted pieces
 * wait, to make room for them; the walk comes back to it when it has gone round. */
void abit_cold_window(struct abit *a)
{
	size_t cap = abit_piece_watch_cap(a), nwin = 0, waiting = 0, pi, ri, total = 0;
	uint64_t hold = cold_window_rounds(a);

	for (size_t i = 0; i < a->table.nprocs; i++) {
		total += a->table.procs[i].npieces;
		for (size_t k = 0; k < a->table.procs[i].npieces; k++) {
			struct abit_piece *g = &a->table.procs[i].piece[k];

			if (g->cold_until && (!a->cold.want || (g->cold_scanned && !g->nfast))) {
				g->fast_hint = g->fast_hint && g->nfast;
				cold_window_leave(a, g);
			}
			nwin += g->cold_until != 0;
			waiting += g->fast_hint && !abit_piece_scanned(g);
		}
	}
	if (!a->cold.want || !a->table.nprocs || !waiting)
		return;
	for (size_t i = 0; i < a->table.nprocs && (nwin >= cap / 2 || a->watch.nwatched >= cap);
	     i++)
		for (size_t k = 0; k < a->table.procs[i].npieces; k++) {
			struct abit_piece *g = &a->table.procs[i].piece[k];

			if (g->cold_until && a->round >= g->cold_until) {
				cold_window_leave(a, g);
				nwin--;
			}
		}
	abit_table_locate(a, a->watch.cold_pid, a->watch.cold_vaddr, &pi, &ri);
	for (size_t k = 0; k < total && nwin < cap / 2 && a->watch.nwatched < cap; k++) {
		struct abit_piece *g;

		while (ri >= a->table.procs[pi].npieces) {
			pi = (pi + 1) % a->table.nprocs;
			ri = 0;
		}
		g = &a->table.procs[pi].piece[ri++];
		a->watch.cold_pid = a->table.procs[pi].pid;
		a->watch.cold_vaddr = g->start + 1; /* the walk goes on after it */
		if (!g->fast_hint || abit_piece_scanned(g))
			continue;
		g->cold_until = a->round + hold;
		g->cold_scanned = false;
		abit_piece_due_now(a, g);
		nwin++;
		a->watch.nwatched++;
	}
}

/* A new offer epoch (the mover ran short of cold pages): the pieces holding pages of
 * watched fast nodes are due at this round, not after their backed-off interval (a quarter of
 * the idle time), so the pages they offered before are offered again while the mover still
 * needs them. */
void abit_cold_follow_epoch(struct abit *a)
{
	if (a->cold.epoch == a->cold.woken_epoch)
		return;
	a->cold.woken_epoch = a->cold.epoch;
	if (!a->cold.want)
		return;
	for (size_t i = 0; i < a->table.nprocs; i++)
		for (size_t k = 0; k < a->table.procs[i].npieces; k++) {
			struct abit_piece *g = &a->table.procs[i].piece[k];

			if (g->nfast && g->next_round > a->round)
				g->next_round = a->round;
		}
}
