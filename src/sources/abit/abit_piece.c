/* abit_piece: see abit_piece.h. */
#include <errno.h>
#include <stdlib.h>

#include "sources/abit/abit_piece.h"

/* Drops a piece's per-page cache. */
void abit_piece_forget(struct abit_piece *g)
{
	free(g->ent);
	free(g->since);
	g->ent = NULL;
	g->since = NULL;
}

/* Mode regions: the piece is neither watched nor in the cold window (its pages stay known). */
void abit_piece_clear_watch(struct abit_piece *g)
{
	g->watch = false;
	g->cold_until = 0;
	g->cold_scanned = false;
}

void abit_piece_unwatch(struct abit_piece *g)
{
	abit_piece_forget(g);
	g->ntracked = 0;
	g->nfast = 0;
	abit_piece_clear_watch(g);
}

/* Mode regions: 2 MiB pieces with per-page state allowed at once (max_watched_mib). */
size_t abit_piece_watch_cap(const struct abit *a)
{
	return (size_t)a->cfg->sources.abit.max_watched_mib * (1u << 20) / PIECE_BYTES;
}

/* Sampling regions for a process of pages pages: one per ABIT_REGION_MIN_PAGES, at least 16,
 * at most max, a power of two below max so that growth changes it only when it doubles. */
static uint32_t sampler_size(uint32_t max, uint64_t pages)
{
	uint64_t want = pages / ABIT_REGION_MIN_PAGES, p2 = 16;

	while (p2 * 2 <= want && p2 * 2 < max)
		p2 *= 2;
	return want >= max ? max : (uint32_t)p2;
}

/* Mode regions: the sampler of p over its VMAs (the 2 MiB pieces, joined where they touch),
 * taken over from old (the same process) when it has the right size. A process of at most
 * sources.abit.full_scan_mib gets none: it is scanned in full, as in mode full (what a sampled
 * past left in its pieces' watch state is dropped, their per-page state kept). */
int abit_piece_sampler(struct abit *a, struct abit_proc *p, struct abit_proc *old)
{
	struct abit_range *rg;
	size_t n = 0;
	uint64_t pages = 0;
	uint32_t want;
	int r = 0;

	if (a->cfg->sources.abit.mode != ABIT_MODE_REGIONS)
		return 0;
	for (size_t i = 0; i < p->npieces; i++)
		pages += p->piece[i].npages;
	if (pages * PAGEMAP_PAGE_SIZE <= (uint64_t)a->cfg->sources.abit.full_scan_mib << 20) {
		for (size_t i = 0; old && old->smp && i < p->npieces; i++) {
			abit_piece_clear_watch(&p->piece[i]);
			p->piece[i].seen = false;
		}
		return 0;
	}
	rg = malloc(p->npieces * sizeof(*rg));
	if (!rg)
		return -ENOMEM;
	for (size_t i = 0; i < p->npieces; i++) {
		uint64_t start = p->piece[i].start;
		uint64_t end = start + (uint64_t)p->piece[i].npages * PAGEMAP_PAGE_SIZE;

		if (n && rg[n - 1].end == start)
			rg[n - 1].end = end;
		else
			rg[n++] = (struct abit_range){.start = start, .end = end};
	}
	want = sampler_size(a->cfg->sources.abit.max_regions, pages);
	if (!old || !old->smp)
		/* Entering the mode: nothing is watched before the first aggregation. */
		for (size_t i = 0; i < p->npieces; i++)
			abit_piece_unwatch(&p->piece[i]);
	if (old && old->smp && abit_sampler_max_regions(old->smp) == want) {
		p->smp = old->smp;
		old->smp = NULL;
	} else {
		r = abit_sampler_new(want, ABIT_SAMPLES_PER_AGGR, &a->watch.rng, &p->smp);
	}
	if (r == 0)
		r = abit_sampler_update(p->smp, rg, n);
	free(rg);
	return r;
}
