/* abit_scan: the page-by-page scan of the Accessed-bit source. Scanning a piece reads back
 * the bitmap words of the PFNs its last scan marked, reads its pagemap, reports the tracked
 * slow pages whose bit was cleared at an unchanged PFN (delivered to the sink in batches),
 * learns new or moved pages from kpageflags, marks the tracked set idle again and sets the
 * piece's pace; the rounds' walk over every due piece and the steps' quick looks. Pages of
 * watched fast nodes go to the cold side (abit_cold.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/abit/abit_scan.h"
#include "sources/abit/abit_cold.h"
#include "sources/abit/abit_piece.h"
#include "sources/abit/abit_table.h"
#include "sys/procfs.h"
#include "sys/topology.h"

/* A bitmap write may span this many untouched words: writing a 0 bit costs the kernel
 * nothing, while each extra call costs a syscall. */
#define MARK_MAX_GAP 16
/* The first look at a fresh page counts as first evidence only within this share of a scan
 * interval after the mark: an access seen so soon is rarely a once-in-a-while read (a cold
 * sweep reading each page once per 10 s meets a 250 ms window in 2.5% of its pages). */
#define FIRST_GAP_DIV 4

void abit_scan_flush(struct abit *a)
{
	access_deliver(&a->sink, a->cfg, a->scan.ev, a->scan.nev);
	a->found += a->scan.nev;
	a->scan.nev = 0;
}

static void abit_emit(struct abit *a, struct abit_proc *p, uint64_t vaddr, uint64_t ent,
		      unsigned threshold)
{
	uint64_t pfn = ent & ENT_PFN;
	const struct topology *t = a->cfg->topo;

	if (!p->cpu_read) {
		p->cpu_read = true;
		procfs_last_cpu(a->procfs_root, p->pid, &p->cpu);
		p->node = t ? topology_cpu_node(t, p->cpu) : -1;
	}
	a->scan.ev[a->scan.nev++] = (struct access_event){
	    .pid = p->pid,
	    .tid = p->pid,
	    .vaddr = vaddr,
	    .paddr = pfn << PAGEMAP_PAGE_SHIFT,
	    .cpu = p->cpu,
	    .node = p->node,
	    .time_ns = a->now_ns,
	    .source = SRC_ABIT,
	    .kind = ACCESS_UNKNOWN,
	    .size = ent & ENT_HUGE ? HOT_SIZE_HUGE : HOT_SIZE_BASE,
	    .threshold = threshold,
	};
	if (a->scan.nev == ABIT_EVENT_BATCH)
		abit_scan_flush(a);
}

/* Without a memory block map (no CONFIG_MEMORY_HOTPLUG) a PFN does not tell its node: ask
 * the kernel for the node of each present page of the piece instead. */
static void piece_nodes(struct abit *a, const struct abit_proc *p, const struct abit_piece *g)
{
	const struct topology *t = a->cfg->topo;

	if (!t || t->nr_blocks)
		return;
	for (uint32_t i = 0; i < g->npages; i++) {
		a->scan.addr[i] = (void *)(uintptr_t)(g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE);
		a->scan.node[i] = -1;
	}
	if (a->ops->page_nodes &&
	    a->ops->page_nodes(a->ops->ctx, p->pid, g->npages, a->scan.addr, a->scan.node) < 0)
		for (uint32_t i = 0; i < g->npages; i++)
			a->scan.node[i] = -1;
}

/* Node of page i of the piece scanned (PFN pfn), -1 when unknown. */
static int page_node(const struct abit *a, uint32_t i, uint64_t pfn)
{
	const struct topology *t = a->cfg->topo;

	if (!t || !pfn)
		return -1;
	return t->nr_blocks ? topology_node_of_pfn(t, pfn) : a->scan.node[i];
}

/* A page of a fast node the cold list wants watched (none unless some node is short). */
static bool node_watched_fast(const struct abit *a, int node)
{
	return a->cold.want && node >= 0 && node < 64 && (a->cold.want >> node & 1);
}

/* Reads back the bitmap words of the piece's tracked PFNs. */
static int piece_fetch(struct abit *a, const struct abit_piece *g)
{
	size_t n = 0;
	int r;

	idle_words_reset(&a->scan.words);
	if (!g->ent || !g->ntracked)
		return 0;
	for (uint32_t i = 0; i < g->npages; i++)
		if (g->ent[i] & ENT_TRACKED)
			a->scan.pfns[n++] = g->ent[i] & ENT_PFN;
	r = idle_words_build(&a->scan.words, a->scan.pfns, n);
	if (r < 0)
		return r;
	r = idle_words_fetch(a->ops, a->bitmap_fd, &a->scan.words);
	return r < 0 ? r : 0;
}

/* Reads the piece's pagemap entries into a->scan.pm. -ESRCH when the process is gone (the
 * kernel returns end of file once its mm is released). */
static int piece_read_pagemap(struct abit *a, int fd, const struct abit_piece *g)
{
	size_t len = (size_t)g->npages * 8;
	ssize_t n =
	    idle_io_read_full(a->ops, fd, a->scan.pm, len, g->start / PAGEMAP_PAGE_SIZE * 8);

	if (n < 0)
		return abit_errno_gone((int)n) ? -ESRCH : (int)n;
	if (n == 0)
		return -ESRCH;
	memset((char *)a->scan.pm + n, 0, len - (size_t)n);
	return 0;
}

/* Compares the fresh pagemap with the cache: reports tracked pages whose bit was cleared and
 * whose PFN did not change, drops pages that left the slow tier, and lists in a->scan.idx the
 * slow pages whose kpageflags must be (re)read. Returns how many, or -EPERM for hidden
 * PFNs, -ENOMEM. *accessed counts the accesses reported. With watch_fast (some fast node
 * watched for demotion) the same for the pages of watched fast nodes, whose idle times
 * abit_cold_note() keeps; piece_compare() instantiates both, so a scan with no node watched runs
 * the loop it ran before demotion existed. */
static inline __attribute__((always_inline)) int
piece_compare_as(struct abit *a, struct abit_proc *p, struct abit_piece *g, unsigned *accessed,
		 const bool watch_fast)
{
	unsigned hidden = 0, present = 0;
	int nneed = 0;
	/* First evidence counts only in a process scanned in full: there a page is learned when it
	 * arrives, while a sampled piece is learned because a sample found an access, which a
	 * sweep moving through the piece would then keep supplying. */
	unsigned gap = a->cfg->sources.abit.scan_interval_ms / FIRST_GAP_DIV;
	unsigned first = a->scan.first_thr && !p->smp && abit_since_now(a) - g->marked_ms <= gap
			     ? a->scan.first_thr
			     : 0;

	if (watch_fast)
		abit_cold_new_epoch(a, g);
	for (uint32_t i = 0; i < g->npages; i++) {
		uint64_t pfn = pagemap_pfn(a->scan.pm[i]);
		uint64_t old = g->ent ? g->ent[i] : 0;
		int node = page_node(a, i, pfn);
		bool slow = node >= 0 && topology_node_is_slow(a->cfg->topo, node);
		bool fast = watch_fast && !slow && node_watched_fast(a, node);
		bool same = (old & ENT_TRACKED) && (old & ENT_PFN) == pfn;

		present += pagemap_present(a->scan.pm[i]);
		hidden += pagemap_present(a->scan.pm[i]) && !pfn;
		a->scan.still[i] = same && idle_words_idle(&a->scan.words, pfn);
		if (same && slow && !a->scan.still[i]) {
			abit_emit(a, p, g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE, old,
				  old & ENT_FRESH ? first : 0);
			(*accessed)++;
		} else if (same && fast) {
			if (!g->since && abit_cold_track(a, g, i) < 0)
				return -ENOMEM;
			abit_cold_note(a, p, g, i, node, a->scan.still[i]);
		}
		if (same && (old & ENT_FRESH))
			g->ent[i] = old & ~ENT_FRESH; /* looked at once: no longer fresh */
		if (!slow && !fast) {
			if (g->ent)
				g->ent[i] = 0;
			continue;
		}
		if (!g->ent) {
			g->ent = calloc(g->npages, sizeof(*g->ent));
			if (!g->ent)
				return -ENOMEM;
		}
		if ((old & ENT_KNOWN) && (old & ENT_PFN) == pfn)
			continue;
		if (fast && abit_cold_track(a, g, i) < 0)
			return -ENOMEM;
		g->ent[i] = pfn | (fast ? ENT_FAST : 0);
		a->scan.idx[nneed++] = i;
	}
	if (present > hidden)
		a->scan.pfn_seen = true;
	if (hidden && !a->scan.pfn_seen)
		return -EPERM;
	return nneed;
}

static int piece_compare(struct abit *a, struct abit_proc *p, struct abit_piece *g,
			 unsigned *accessed)
{
	return a->cold.want ? piece_compare_as(a, p, g, accessed, true)
			    : piece_compare_as(a, p, g, accessed, false);
}

/* Classifies the listed pages from kpageflags, one pread per run of consecutive PFNs. */
static int piece_learn(struct abit *a, struct abit_piece *g, int nneed)
{
	uint64_t flags[ABIT_PIECE_PAGES];

	for (int i = 0; i < nneed;) {
		uint64_t first = g->ent[a->scan.idx[i]] & ENT_PFN;
		int j = i + 1;
		ssize_t n;

		while (j < nneed && (g->ent[a->scan.idx[j]] & ENT_PFN) == first + (uint64_t)(j - i))
			j++;
		n = idle_io_read_full(a->ops, a->kpf_fd, flags, (size_t)(j - i) * 8, first * 8);
		if (n < 0)
			return (int)n;
		for (int k = i; k < j; k++) {
			uint64_t f = (size_t)(k - i) * 8 < (size_t)n ? flags[k - i] : 0;
			enum kpf_class c = kpf_classify(f);
			uint64_t *e = &g->ent[a->scan.idx[k]];

			/* A slow page just tracked is fresh until its next look. */
			uint64_t fresh = *e & ENT_FAST ? 0 : ENT_FRESH;

			if (c == KPF_CLASS_PAGE)
				*e |= ENT_KNOWN | ENT_TRACKED | fresh;
			else if (c == KPF_CLASS_THP_HEAD)
				*e |= ENT_KNOWN | ENT_TRACKED | ENT_HUGE | fresh;
			else if (c == KPF_CLASS_THP_TAIL)
				*e |= ENT_KNOWN;
		}
		i = j;
	}
	return 0;
}

/* Marks the piece's tracked pages idle again: those this scan learned or found accessed. A page
 * the fetch read idle still carries its mark (reading it found no young PTE and left the flag),
 * and an access after the read is found by the next one, so marking it again would only cost
 * the kernel another walk of its mappings. */
static int piece_mark(struct abit *a, struct abit_piece *g)
{
	size_t n = 0, nfast = 0, ntracked = 0;
	int r;

	/* Fast pages count as such only where their idle times are kept (since). */
	for (uint32_t i = 0; g->ent && i < g->npages; i++) {
		if (!(g->ent[i] & ENT_TRACKED))
			continue;
		ntracked++;
		nfast += g->since && (g->ent[i] & ENT_FAST);
		if (!a->scan.still[i])
			a->scan.pfns[n++] = g->ent[i] & ENT_PFN;
	}
	g->ntracked = (uint32_t)ntracked;
	g->nfast = (uint32_t)nfast;
	g->marked_ms = abit_since_now(a);
	if (!ntracked) {
		/* Nothing slow left: keep no cache for it. */
		bool any = false;

		for (uint32_t i = 0; g->ent && i < g->npages && !any; i++)
			any = g->ent[i] != 0;
		if (!any)
			abit_piece_forget(g);
		return 0;
	}
	r = idle_words_build(&a->scan.words, a->scan.pfns, n);
	if (r < 0)
		return r;
	r = idle_words_mark(a->ops, a->bitmap_fd, &a->scan.words, MARK_MAX_GAP);
	return r < 0 ? r : 0;
}

/* A scan that had nothing marked before it (the piece's pages were just learned) proves
 * nothing about idleness, so it does not count towards the back-off. Only slow pages count:
 * the pace serves promotion, and a fast page's idle time needs no close watch. */
static void piece_adapt(struct abit_piece *g, unsigned accessed, uint32_t had_tracked,
			uint64_t round, uint16_t max_interval)
{
	uint32_t tracked = g->ntracked - g->nfast;

	/* Pages newly tracked (the piece was just populated, or its pages moved to a slow
	 * node) are as telling as an access: watch it closely again. */
	if (accessed || tracked > had_tracked) {
		g->interval = 1;
		g->idle_scans = 0;
	} else if (g->interval < ABIT_HOT_SPEEDUP) {
		/* Cooled after ABIT_BACKOFF_SCANS quiet scans: once per scan interval again. A
		 * single quiet scan (a pause between placing data and using it) keeps the pace. */
		if (++g->idle_scans >= ABIT_BACKOFF_SCANS) {
			g->interval = ABIT_HOT_SPEEDUP;
			g->idle_scans = 0;
		}
	} else if (had_tracked || !tracked) {
		if (++g->idle_scans >= ABIT_BACKOFF_SCANS && g->interval < ABIT_MAX_INTERVAL) {
			g->interval *= 2;
			g->idle_scans = 0;
		}
	}
	if (g->interval > max_interval)
		g->interval = max_interval;
	g->next_round = round + g->interval;
}

/* A process scanned in full: a piece whose scan just learned pages (a new process, pages
 * newly on a slow node), or found accesses where its last scan found none, is looked at again by
 * the next QUICK_STEPS steps instead of a round later, so a page used all the time is counted
 * twice within a quarter of a scan interval. A piece accessed at every scan gets no extra
 * look: its accesses are counted at each round anyway. A piece found used again hurries the
 * step before its quick looks. */
static void piece_quicken(struct abit *a, struct abit_proc *p, struct abit_piece *g,
			  unsigned accessed, uint32_t had_tracked)
{
	bool woke = accessed && !g->used;

	if (g->ntracked - g->nfast <= had_tracked && !woke)
		return;
	p->nquick += !g->quick;
	g->quick = QUICK_STEPS;
	a->hurry = a->hurry || woke;
}

/* A young process (its first ABIT_REFRESH_ROUNDS rounds) is placing its data: a piece of it
 * that holds no page to track yet stays fresh, looked at by every step, so the pages placed
 * there are learned at the step after, not at the next round, and a use that starts as the
 * placement ends is seen at once. An empty piece's look is one pagemap read. */
static void piece_keep_fresh(const struct abit *a, struct abit_proc *p, struct abit_piece *g)
{
	if (g->ntracked || a->round >= p->added + ABIT_REFRESH_ROUNDS)
		return;
	p->nquick += !g->quick;
	g->fresh = true;
}

int abit_scan_piece(struct abit *a, struct abit_proc *p, struct abit_piece *g, int fd)
{
	uint32_t had_tracked = g->ntracked - g->nfast; /* slow pages, as piece_adapt() counts */
	unsigned accessed = 0;
	int r = piece_fetch(a, g);

	a->scan.cold_wait_ms = UINT32_MAX; /* abit_cold_note() lowers it */
	if (r < 0)
		return r;
	/* The pagemap is read after the bitmap, so a page that moved before its bit was read
	 * shows a new PFN here and is not reported. */
	r = piece_read_pagemap(a, fd, g);
	if (r < 0)
		return r;
	a->scanned += g->npages;
	piece_nodes(a, p, g);
	r = piece_compare(a, p, g, &accessed);
	if (r > 0)
		r = piece_learn(a, g, r);
	if (r < 0)
		return r;
	r = piece_mark(a, g);
	if (r < 0)
		return r;
	g->fresh = false;
	if (!p->smp) {
		piece_quicken(a, p, g, accessed, had_tracked);
		piece_keep_fresh(a, p, g);
	}
	g->used = accessed != 0;
	if (a->scan.quick && !accessed && g->ntracked - g->nfast <= had_tracked) {
		/* A quick look that found nothing new proves no idleness: the pace stands. */
	} else if (a->scan.quick) {
		g->interval = 1;
		g->idle_scans = 0;
		g->next_round = a->round; /* still scanned at the coming round */
	} else {
		piece_adapt(g, accessed, had_tracked, a->round,
			    g->nfast ? abit_cold_max_interval(a) : ABIT_MAX_INTERVAL);
	}
	abit_cold_schedule(a, g);
	g->seen = g->seen || accessed;
	g->cold_scanned = g->cold_until != 0;
	p->round_used = p->round_used || accessed;
	p->wake_scans += accessed != 0;
	return 0;
}

/* p's pagemap in *fd, opened at its first use in a pass; false, with p marked gone when it
 * exited or is not ours to read, when it cannot be opened. */
static bool proc_pagemap(const struct abit *a, struct abit_proc *p, int *fd)
{
	if (*fd < 0)
		*fd = procfs_open_pagemap(a->procfs_root, p->pid);
	if (*fd >= 0)
		return true;
	/* Exited, or not ours to read: neither is worth a log line. */
	p->gone = abit_errno_gone(*fd) || *fd == -EACCES || *fd == -EPERM;
	return false;
}

/* Scans the due pieces of p from piece index from, while the budget lasts. Returns 1 when
 * the budget ran out (cursor saved), 0 when done with p, -EPERM when the source became
 * unavailable. Other errors are remembered in a->error and end p's scan for this round. */
static int proc_scan(struct abit *a, struct abit_proc *p, size_t from, size_t to)
{
	int fd = -1, r = 0;

	for (size_t i = from; i < to && !p->gone; i++) {
		struct abit_piece *g = &p->piece[i];

		/* Mode regions samples a process with a sampler, and scans only what it watches. */
		if (g->next_round > a->round || (p->smp && !abit_piece_scanned(g)))
			continue;
		if (!token_bucket_take(&a->budget, g->npages)) {
			a->cur_pid = p->pid;
			a->cur_vaddr = g->start;
			r = 1;
			break;
		}
		if (!proc_pagemap(a, p, &fd))
			break;
		r = abit_scan_piece(a, p, g, fd);
		if (r == -ESRCH) {
			p->gone = true;
			r = 0;
		} else if (r == -EPERM) {
			break;
		} else if (r < 0) {
			a->error = a->error ? a->error : r;
			r = 0;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	abit_scan_flush(a);
	abit_cold_flush(a);
	return r;
}

/* Visits every piece once, starting at the cursor, so a budget too small for one round
 * still reaches every piece over several. */
int abit_scan_all(struct abit *a)
{
	size_t p0, r0;
	int r = 0;

	abit_table_locate(a, a->cur_pid, a->cur_vaddr, &p0, &r0);
	for (size_t k = 0; k <= a->table.nprocs && r == 0 && !abit_stopping(a); k++) {
		size_t pi = (p0 + k) % (a->table.nprocs ? a->table.nprocs : 1);
		struct abit_proc *p;

		if (!a->table.nprocs)
			break;
		p = &a->table.procs[pi];
		p->cpu_read = false;
		if (k == 0)
			r = proc_scan(a, p, r0, p->npieces);
		else if (k == a->table.nprocs)
			r = r0 ? proc_scan(a, p, 0, r0) : 0; /* the part before the cursor */
		else
			r = proc_scan(a, p, 0, p->npieces);
	}
	return r < 0 ? r : 0;
}

/* A young process (its first ABIT_REFRESH_ROUNDS rounds) that placed its data and went quiet
 * uses it next: ABIT_WAKE_SCANS of its pieces that hold slow pages get a quick look at this
 * step, in turn, so that use wakes it (abit_scan_wake()) within a step of its start, not at the
 * next round; a look that finds nothing keeps the piece's pace. At most a->scan.sentinels
 * looks a step over all processes. */
static void proc_sentinels(struct abit *a, struct abit_proc *p)
{
	unsigned picked = 0;
	size_t k = 0;

	if (p->smp || p->gone || !p->quiet || !p->npieces ||
	    a->round >= p->added + ABIT_REFRESH_ROUNDS)
		return;
	for (; k < p->npieces && picked < ABIT_WAKE_SCANS && a->scan.sentinels; k++) {
		struct abit_piece *g = &p->piece[(p->sentinel + k) % p->npieces];

		if (g->quick || g->fresh || g->ntracked == g->nfast)
			continue;
		g->quick = 1;
		p->nquick++;
		picked++;
		a->scan.sentinels--;
	}
	p->sentinel = (p->sentinel + k) % p->npieces;
}

/* A process scanned in full, at a step: its fresh pieces (first look) and those with quick
 * looks left, while the page budget pays; what it cannot pay waits for the next step or the
 * round. -EPERM when the source became unavailable; other errors are remembered in
 * a->error. */
int abit_scan_quick(struct abit *a, struct abit_proc *p)
{
	size_t left = 0, i;
	int fd = -1, r = 0;

	proc_sentinels(a, p);
	if (p->smp || p->gone || !p->nquick)
		return 0;
	a->scan.quick = true;
	for (i = 0; i < p->npieces && !p->gone; i++) {
		struct abit_piece *g = &p->piece[i];

		if (!g->quick && !g->fresh)
			continue;
		if (!token_bucket_take(&a->budget, g->npages))
			break;
		if (!proc_pagemap(a, p, &fd))
			break;
		g->quick -= g->quick != 0; /* before the scan, which may ask for more */
		r = abit_scan_piece(a, p, g, fd);
		if (r == -ESRCH) {
			p->gone = true;
			r = 0;
		} else if (r < 0) {
			break;
		}
		left += g->quick || g->fresh;
	}
	a->scan.quick = false;
	/* Recounted only after a whole walk; an early stop keeps the count, never below the truth.
	 */
	if (i == p->npieces)
		p->nquick = left;
	if (fd >= 0)
		close(fd);
	abit_scan_flush(a);
	abit_cold_flush(a);
	if (r < 0 && r != -EPERM) {
		a->error = a->error ? a->error : r;
		r = 0;
	}
	return r;
}

void abit_scan_new_round(struct abit *a)
{
	for (size_t i = 0; i < a->table.nprocs; i++) {
		struct abit_proc *p = &a->table.procs[i];

		if (!p->round_used) {
			p->quiet = true;
			p->wake_scans = 0;
		}
		p->round_used = false;
	}
}

/* A process that places its data and then uses it, or pauses and resumes, has pieces that
 * backed off while it was quiet, up to ABIT_MAX_INTERVAL rounds, and pieces the last round
 * found quiet just before the use began: when it wakes, every piece whose last scan found no
 * access is looked at by the next step, not when its interval runs out or the next round
 * comes, at most once per scan interval. Their pages still need the threshold's accesses (a
 * sweep that wakes a process is read once). A process used a little all along (fewer than
 * ABIT_WAKE_SCANS scans with accesses since it went quiet) keeps its pace. */
void abit_scan_wake(struct abit *a)
{
	for (size_t i = 0; i < a->table.nprocs; i++) {
		struct abit_proc *p = &a->table.procs[i];

		if (p->smp || !p->quiet || p->wake_scans < ABIT_WAKE_SCANS)
			continue;
		p->quiet = false;
		if (p->woke_round && a->round < p->woke_round + ABIT_HOT_SPEEDUP)
			continue;
		p->woke_round = a->round;
		abit_proc_wake_pieces(a, p, 0);
		a->hurry = true;
	}
}
