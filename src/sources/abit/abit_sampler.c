/* abit_sampler: the page_idle I/O of region sampling (see the header). */
#include <errno.h>
#include <stdlib.h>

#include "sources/abit/abit_sampler.h"
#include "sys/pagemap.h"
#include "sys/topology.h"

#define THP_PFNS 512 /* a PMD-mapped THP: its head is this aligned */

/* The pagemap entry of addr; -ESRCH once the process's mm is gone (end of file). */
static int read_entry(const struct abit_sample_io *io, uint64_t addr, uint64_t *e)
{
	ssize_t n = idle_io_read_full(io->ops, io->pagemap_fd, e, 8, addr / PAGEMAP_PAGE_SIZE * 8);

	if (n == -ENOENT || n == -ESRCH || n == 0)
		return -ESRCH;
	if (n < 0)
		return (int)n;
	if (n != 8)
		*e = 0;
	return 0;
}

static void thp_met(const struct abit_sample_io *io)
{
	if (io->thp)
		(*io->thp)++;
}

/* The node of the page at addr (PFN pfn), -1 when unknown or without a topology. */
static int page_node(const struct abit_sample_io *io, uint64_t addr, uint64_t pfn)
{
	const struct topology *t = io->topo;
	void *page = (void *)(uintptr_t)addr;
	int node = -1;

	if (!t)
		return -1;
	if (t->nr_blocks)
		return topology_node_of_pfn(t, pfn);
	if (!io->ops->page_nodes || io->ops->page_nodes(io->ops->ctx, io->pid, 1, &page, &node))
		return -1;
	return node;
}

/* The PFN whose idle bit stands for pfn (itself, or its THP head, flagged), or 0 for a page
 * page_idle does not track; a THP page met counts in *io->thp. */
static uint64_t idle_pfn(const struct abit_sample_io *io, uint64_t pfn)
{
	uint64_t flags = 0;

	if (idle_io_read_full(io->ops, io->kpf_fd, &flags, 8, pfn * 8) != 8)
		return 0;
	switch (kpf_classify(flags)) {
	case KPF_CLASS_PAGE:
		return pfn;
	case KPF_CLASS_THP_HEAD:
		thp_met(io);
		return pfn;
	case KPF_CLASS_THP_TAIL:
		thp_met(io);
		return pfn | ABIT_SAMPLE_TAIL;
	default:
		return 0;
	}
}

/* The PFN of a marked sample, without its flags. */
static uint64_t sample_pfn(uint64_t marked)
{
	return marked & ~(ABIT_SAMPLE_TAIL | ABIT_SAMPLE_FAST | ABIT_SAMPLE_LAZY);
}

static uint64_t bit_pfn(uint64_t marked)
{
	return marked & ABIT_SAMPLE_TAIL ? sample_pfn(marked) / THP_PFNS * THP_PFNS
					 : sample_pfn(marked);
}

/* Sets the page's idle bit; a PFN past the bitmap's last word (-EIO: the kernel moves 0
 * bytes there) is left unmarked. */
static int mark_one(const struct abit_sample_io *io, uint64_t marked, uint64_t *out)
{
	uint64_t pfn = bit_pfn(marked), bit = UINT64_C(1) << (pfn % 64);
	int r = idle_bitmap_write_words(io->ops, io->bitmap_fd, pfn / 64, &bit, 1);

	*out = r == 0 ? marked : 0;
	return r == -EIO ? 0 : r;
}

int abit_sample_mark(const struct abit_sample_io *io, const uint64_t *addr, size_t n, uint64_t *pfn)
{
	int marked = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t e, p, m;
		int node, r;
		bool fast;

		pfn[i] = 0;
		if (!addr[i])
			continue; /* skipped this step */
		r = read_entry(io, addr[i], &e);
		if (r < 0)
			return r;
		p = pagemap_pfn(e);
		if (pagemap_present(e) && !p && !*io->pfn_seen)
			return -EPERM;
		if (!p)
			continue;
		*io->pfn_seen = true;
		node = page_node(io, addr[i], p);
		fast = node >= 0 && node < 64 && (io->fast_mask >> node & 1) &&
		       !topology_node_is_slow(io->topo, node);
		if (!fast && !topology_node_is_slow(io->topo, node))
			continue;
		/* Lazily, the bit is set unverified: the kernel ignores it for a page it does
		 * not track, which then reads back "used", and only that is checked. */
		m = io->precise ? idle_pfn(io, p) : p | ABIT_SAMPLE_LAZY;
		if (!m)
			continue;
		m |= fast ? ABIT_SAMPLE_FAST : 0;
		r = mark_one(io, m, &pfn[i]);
		if (r < 0)
			return r;
		marked += pfn[i] != 0;
	}
	return marked;
}

/* A lazy sample that read back "used": its kpageflags tell an access (an LRU page or a THP
 * head) from a page page_idle does not track, whose bit always reads 0 (a THP tail's: the
 * mark went nowhere, and the sampler turns precise). */
static bool lazy_used(const struct abit_sample_io *io, uint64_t pfn)
{
	uint64_t m = idle_pfn(io, pfn);

	return m && !(m & ABIT_SAMPLE_TAIL);
}

int abit_sample_read(const struct abit_sample_io *io, const uint64_t *addr, const uint64_t *pfn,
		     size_t n, bool *accessed, uint64_t *idle_fast, size_t *nidle)
{
	int found = 0;

	if (nidle)
		*nidle = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t e, w, p = bit_pfn(pfn[i]);
		bool lazy = pfn[i] & ABIT_SAMPLE_LAZY, idle, used;
		int r;

		accessed[i] = false;
		if (!pfn[i])
			continue;
		if (!lazy) {
			r = read_entry(io, addr[i], &e);
			if (r < 0)
				return r;
			if (pagemap_pfn(e) != sample_pfn(pfn[i]))
				continue;
		}
		r = idle_bitmap_read_words(io->ops, io->bitmap_fd, p / 64, &w, 1);
		if (r == -ENXIO)
			continue; /* past the bitmap's end: reads as idle */
		if (r < 0)
			return r;
		idle = (w >> (p % 64)) & 1;
		/* Fast pages too: a THP tail among them is counted, which turns the sampler
		 * precise. */
		used = !idle && (!lazy || lazy_used(io, p));
		if (pfn[i] & ABIT_SAMPLE_FAST) {
			if (idle && idle_fast)
				idle_fast[(*nidle)++] = addr[i];
			continue;
		}
		accessed[i] = used;
		found += used;
	}
	return found;
}

/* ---- one process's sampler ------------------------------------------------------------- */

struct abit_sampler {
	struct abit_regions *rs;
	uint32_t max;
	size_t npend; /* samples marked by the last step */
	uint64_t *addr, *pfn;
	bool *acc;
	struct abit_range *hot;
	uint64_t *fast; /* the last step's samples on a watched fast node */
	size_t nfast;
	uint64_t *hit; /* the last step's samples read back accessed */
	size_t nhit;
	size_t ntaken; /* the last step's samples (regions it did not skip) */
	/* Steps left marking precisely (abit_sampler.h): set to precise_steps whenever a step
	 * meets a THP page. */
	uint32_t precise, precise_steps;
};

int abit_sampler_new(uint32_t max_regions, uint32_t samples_per_aggr, uint64_t *rng_state,
		     struct abit_sampler **out)
{
	struct abit_regions_params p = {.min_regions = max_regions / 4,
					.max_regions = max_regions,
					.samples_per_aggr = samples_per_aggr,
					.page_size = PAGEMAP_PAGE_SIZE,
					.piece_pages = ABIT_PIECE_PAGES,
					.tail_pages = ABIT_SAMPLE_PIECE_END_PAGES};
	struct abit_sampler *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->max = max_regions;
	s->precise_steps = 4 * samples_per_aggr;
	r = abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64, .ctx = rng_state},
			     &s->rs);
	if (r == 0) {
		s->addr = calloc(max_regions, sizeof(*s->addr));
		s->pfn = calloc(max_regions, sizeof(*s->pfn));
		s->acc = calloc(max_regions, sizeof(*s->acc));
		s->hot = calloc(max_regions, sizeof(*s->hot));
		s->fast = calloc(max_regions, sizeof(*s->fast));
		s->hit = calloc(max_regions, sizeof(*s->hit));
		r = s->addr && s->pfn && s->acc && s->hot && s->fast && s->hit ? 0 : -ENOMEM;
	}
	if (r < 0) {
		abit_sampler_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void abit_sampler_free(struct abit_sampler *s)
{
	if (!s)
		return;
	abit_regions_free(s->rs);
	free(s->addr);
	free(s->pfn);
	free(s->acc);
	free(s->hot);
	free(s->fast);
	free(s->hit);
	free(s);
}

uint32_t abit_sampler_max_regions(const struct abit_sampler *s)
{
	return s->max;
}

int abit_sampler_update(struct abit_sampler *s, const struct abit_range *r, size_t n)
{
	return abit_regions_update(s->rs, r, n);
}

size_t abit_sampler_count(const struct abit_sampler *s)
{
	return abit_regions_count(s->rs);
}

int abit_sampler_step(struct abit_sampler *s, const struct abit_sample_io *io)
{
	struct abit_sample_io sio = *io;
	int aggregated = 0, r, n;
	size_t thp = 0;

	sio.thp = &thp;
	s->nhit = 0;
	s->nfast = 0;
	if (s->npend) {
		r = abit_sample_read(&sio, s->addr, s->pfn, s->npend, s->acc, s->fast, &s->nfast);
		if (r < 0)
			return r;
		for (size_t i = 0; i < s->npend; i++)
			if (s->acc[i])
				s->hit[s->nhit++] = s->addr[i];
		aggregated = abit_regions_check(s->rs, s->acc, s->npend);
		s->npend = 0;
		if (aggregated == -ESTALE) /* regions updated since the marks */
			aggregated = 0;
		if (aggregated < 0)
			return aggregated;
	}
	n = abit_regions_prepare(s->rs, s->addr, s->max);
	if (n < 0)
		return n;
	s->ntaken = 0;
	for (int i = 0; i < n; i++)
		s->ntaken += s->addr[i] != 0;
	/* A THP met by the read-back turns this step's marks precise already. */
	if (thp)
		s->precise = s->precise_steps;
	sio.precise = s->precise > 0;
	r = abit_sample_mark(&sio, s->addr, (size_t)n, s->pfn);
	if (r < 0)
		return r;
	s->npend = (size_t)n;
	if (thp)
		s->precise = s->precise_steps;
	else if (s->precise)
		s->precise--;
	return aggregated;
}

void abit_sampler_wake(struct abit_sampler *s)
{
	abit_regions_wake(s->rs);
}

bool abit_sampler_precise(const struct abit_sampler *s)
{
	return s->precise > 0;
}

size_t abit_sampler_taken(const struct abit_sampler *s)
{
	return s->ntaken;
}

const uint64_t *abit_sampler_hits(const struct abit_sampler *s, size_t *n)
{
	*n = s->nhit;
	return s->hit;
}

const uint64_t *abit_sampler_fast(const struct abit_sampler *s, size_t *n)
{
	*n = s->nfast;
	return s->fast;
}

const struct abit_range *abit_sampler_hot(struct abit_sampler *s, uint32_t min_accesses, size_t *n)
{
	size_t k = abit_regions_hot(s->rs, min_accesses, s->hot, s->max);

	*n = k < s->max ? k : s->max;
	return s->hot;
}
