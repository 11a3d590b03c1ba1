/* abit_watch: mode "regions" of the Accessed-bit source. Each large process gets an
 * abit_sampler (abit_sampler.h) over its pieces; a sampling step samples one page per sampling
 * region, watches at once the piece of a sample read back accessed (and reads it again at the
 * next QUICK_STEPS steps), and at the end of an aggregation interval watches the pieces that
 * overlap a sampling region with accesses, up to sources.abit.max_watched_mib: rounds scan only
 * watched pieces (and the cold window's, abit_cold.c). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "sources/abit/abit_watch.h"
#include "sources/abit/abit_cold.h"
#include "sources/abit/abit_piece.h"
#include "sources/abit/abit_scan.h"
#include "sources/abit/abit_table.h"
#include "sys/procfs.h"

/* Mode regions, at the end of an aggregation interval: the 2 MiB pieces that overlap a
 * sampling region with a sampled access, or whose own scan found one since the last
 * aggregation, are watched (a newly watched one is due at once); the others are not and drop
 * their per-page cache unless the cold window holds them. Per-page state is kept only for
 * these pieces, and no more of them than sources.abit.max_watched_mib allows over all
 * processes: a piece stays watched while it shows accesses, and one that newly shows them
 * waits for room, which pieces going quiet make at the next aggregation. */
static void proc_watch(struct abit *a, struct abit_proc *p)
{
	size_t nh, h = 0, cap = abit_piece_watch_cap(a);
	const struct abit_range *hot = abit_sampler_hot(p->smp, 1, &nh);

	for (size_t i = 0; i < p->npieces; i++) {
		struct abit_piece *g = &p->piece[i];
		uint64_t end = g->start + (uint64_t)g->npages * PAGEMAP_PAGE_SIZE;
		bool w, was = abit_piece_scanned(g);

		while (h < nh && hot[h].end <= g->start)
			h++;
		w = g->seen || (h < nh && hot[h].start < end);
		if (w && !was && a->watch.nwatched >= cap)
			w = false; /* no room: looked at again at the next aggregation */
		if (w && !g->watch)
			abit_piece_due_now(a, g);
		g->watch = w;
		g->seen = false;
		if (was && !abit_piece_scanned(g)) {
			abit_piece_unwatch(g);
			a->watch.nwatched--;
		}
		a->watch.nwatched += !was && w;
	}
}

/* Mode regions, demotion wanted: the pieces where the last step's samples found idle pages of a
 * watched fast node may hold cold pages; the cold window takes them from there. */
static void proc_note_fast(struct abit_proc *p)
{
	size_t n;
	const uint64_t *fast = abit_sampler_fast(p->smp, &n);

	for (size_t i = 0; i < n; i++) {
		struct abit_piece *g = abit_proc_piece(p, fast[i]);

		if (g)
			g->fast_hint = true;
	}
}

/* Scans g of p in a sampling step, when the budget pays for it; it stays due at the next round
 * (steps come after the round's number moved on, which abit_scan_piece() counts from). */
static int step_scan(struct abit *a, struct abit_proc *p, struct abit_piece *g, int fd)
{
	int r;

	if (!token_bucket_take(&a->budget, g->npages))
		return 1;
	r = abit_scan_piece(a, p, g, fd);
	g->next_round = a->round;
	return r;
}

/* Mode regions, after each sampling step: the 2 MiB piece of a sample read back accessed is
 * watched at once (when there is room), without waiting for the aggregation, and scanned in
 * this step (its pages learned and marked, when the budget pays for it); the pieces such a hit
 * watched in the last QUICK_STEPS steps are read again, so their accesses are reported from the
 * next step on, and a page accessed all the time is counted twice two steps after the sample
 * that found it. The aggregation keeps them watched while they show accesses (seen). -ESRCH
 * when the process is gone, -EPERM as proc_scan(). */
static int proc_watch_hits(struct abit *a, struct abit_proc *p, int fd)
{
	size_t n, cap = abit_piece_watch_cap(a), left = 0;
	const uint64_t *hit = abit_sampler_hits(p->smp, &n);
	int r = 0;

	/* Most steps have none: the pieces are walked only when some may have re-reads left. */
	for (size_t i = 0; p->nquick && i < p->npieces && r == 0; i++) {
		struct abit_piece *g = &p->piece[i];

		if (!g->quick)
			continue;
		if (!g->watch) { /* the aggregation let it go */
			g->quick = 0;
			continue;
		}
		r = step_scan(a, p, g, fd);
		if (r > 0)
			r = 0; /* the budget is short: tried again next step */
		else
			g->quick--;
		left += g->quick != 0;
	}
	/* A refresh may have dropped pieces, so the count is recounted, never below the truth;
	 * on an error the walk stopped early and the count stays. */
	if (r == 0)
		p->nquick = left;
	for (size_t i = 0; i < n && r == 0; i++) {
		struct abit_piece *g = abit_proc_piece(p, hit[i]);

		if (!g || g->watch || (!abit_piece_scanned(g) && a->watch.nwatched >= cap))
			continue;
		a->watch.nwatched += !abit_piece_scanned(g);
		g->watch = true;
		g->seen = true;
		abit_piece_due_now(a, g);
		r = step_scan(a, p, g, fd);
		if (r == 0) {
			g->quick = QUICK_STEPS;
			p->nquick++;
		}
		r = r > 0 ? 0 : r;
	}
	abit_scan_flush(a);
	abit_cold_flush(a);
	if (r < 0 && r != -ESRCH && r != -EPERM) {
		a->error = a->error ? a->error : r;
		r = 0;
	}
	return r;
}

/* One sampling step of p, when the budget pays for its samples. -EPERM when the source
 * became unavailable; other errors are remembered in a->error. */
static int proc_sample(struct abit *a, struct abit_proc *p)
{
	struct abit_sample_io io = {.ops = a->ops,
				    .bitmap_fd = a->bitmap_fd,
				    .kpf_fd = a->kpf_fd,
				    .pid = p->pid,
				    .topo = a->cfg->topo,
				    .pfn_seen = &a->scan.pfn_seen,
				    .fast_mask = a->cold.want};
	size_t n = abit_sampler_count(p->smp);
	int r;

	if (!token_bucket_take(&a->budget, n))
		return 0;
	io.pagemap_fd = procfs_open_pagemap(a->procfs_root, p->pid);
	if (io.pagemap_fd < 0) {
		p->gone = abit_errno_gone(io.pagemap_fd) || io.pagemap_fd == -EACCES ||
			  io.pagemap_fd == -EPERM;
		return 0;
	}
	/* A young process (table_reread_young()) is still placing its data: pieces that look
	 * idle then are not cold yet, and are sampled every step until it settles. */
	if (a->round < p->added + ABIT_REFRESH_ROUNDS)
		abit_sampler_wake(p->smp);
	r = abit_sampler_step(p->smp, &io);
	/* Charged for every piece; idle ones took turns. */
	token_bucket_refund(&a->budget, n - abit_sampler_taken(p->smp));
	a->scanned += abit_sampler_taken(p->smp);
	if (r >= 0 && a->cold.want)
		proc_note_fast(p);
	if (r == 1)
		proc_watch(a, p);
	if (r >= 0)
		r = proc_watch_hits(a, p, io.pagemap_fd);
	close(io.pagemap_fd);
	if (r == -ESRCH)
		p->gone = true;
	else if (r < 0 && r != -EPERM)
		a->error = a->error ? a->error : r;
	return r == -EPERM ? r : 0;
}

int abit_watch_sample_all(struct abit *a)
{
	/* Once a round, the watched pieces counted afresh: processes gone and refreshed maps
	 * drop pieces without proc_watch() seeing them. */
	if (a->watch.step % ABIT_SAMPLES_PER_ROUND == 0) {
		a->watch.nwatched = 0;
		for (size_t i = 0; i < a->table.nprocs; i++)
			for (size_t k = 0; k < a->table.procs[i].npieces; k++)
				a->watch.nwatched +=
				    abit_piece_scanned(&a->table.procs[i].piece[k]);
	}
	for (size_t i = 0; i < a->table.nprocs && !abit_stopping(a); i++) {
		struct abit_proc *p = &a->table.procs[i];

		if (p->smp && !p->gone && proc_sample(a, p) == -EPERM)
			return -EPERM;
	}
	return 0;
}
