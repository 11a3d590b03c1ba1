/* abit_idle: the Accessed-bit source (page_idle scanning of slow-tier pages). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "abit_idle.h"
#include "abit_sample.h"
#include "abit_vmas.h"
#include "cold_list.h"
#include "config_pub.h"
#include "fileio.h"
#include "log.h"
#include "pagemap.h"
#include "proc_filter.h"
#include "procs.h"
#include "stats.h"
#include "token_bucket.h"
#include "topology.h"
#include "worker.h"

#define PIECE_BYTES (ABIT_PIECE_PAGES * PAGEMAP_PAGE_SIZE)
/* A bitmap write may span this many untouched words: writing a 0 bit costs the kernel
 * nothing, while each extra call costs a syscall. */
#define MARK_MAX_GAP 16
/* A /proc/PID/stat line: 52 fields of at most 20 digits, and a 16-byte command name. */
#define STAT_TEXT_MAX 2048

/* Cached pagemap decode of one page of a piece: the PFN seen at the last scan, plus
 * whether its kpageflags were checked for that PFN (KNOWN), it is marked idle (TRACKED) and
 * it heads a THP (HUGE). A slow page not on an LRU list stays unKNOWN, so it is looked at
 * again next scan. */
#define ENT_PFN	    PAGEMAP_PFN_MASK
#define ENT_KNOWN   (UINT64_C(1) << 63)
#define ENT_TRACKED (UINT64_C(1) << 62)
#define ENT_HUGE    (UINT64_C(1) << 61)
/* A fast page offered to the cold list in this idle episode (cleared by an access, a new PFN
 * or a new offer epoch). */
#define ENT_OFFERED (UINT64_C(1) << 60)
/* A page of a watched fast node: tracked for its idle time, not for promotion. */
#define ENT_FAST (UINT64_C(1) << 59)
/* A slow page learned at this PFN by the piece's last scan and not looked at since: an access
 * the next look finds is the first evidence of its use (abit_first_threshold()). */
#define ENT_FRESH (UINT64_C(1) << 58)
/* Cold pages gathered before one cold_list_offer(). */
#define COLD_BATCH 256
/* Mode regions: a 2 MiB piece a sample found accessed is read again at this many of the
 * following sampling steps, not only from the next round: a page accessed all the time then
 * reaches a promotion threshold of 2 two steps after the sample (a quarter of a scan interval
 * at the shipped settings), not a round and a half later. */
#define QUICK_STEPS 2
/* The first look at a fresh page counts as first evidence only within this share of a scan
 * interval after the mark: an access seen so soon is rarely a once-in-a-while read (a cold
 * sweep reading each page once per 10 s meets a 250 ms window in 2.5% of its pages). */
#define FIRST_GAP_DIV 4

struct abit_piece {
	uint64_t start;
	uint32_t npages;
	uint32_t ntracked;
	uint32_t nfast;	     /* of them, pages of watched fast nodes (ENT_FAST) */
	uint16_t interval;   /* rounds between scans */
	uint16_t idle_scans; /* consecutive scans without an access */
	bool watch;	     /* mode regions: scanned for promotion */
	bool seen;	     /* mode regions: a scan found accesses since the last aggregation */
	bool fast_hint;	     /* mode regions: a sample found a watched fast node's page idle */
	bool cold_scanned;   /* mode regions: scanned since it joined the cold window */
	/* Sampling steps left that read it again (QUICK_STEPS): mode regions, after a sample's
	 * hit; a process scanned in full, after its pages were learned or it woke from idleness. */
	uint8_t quick;
	bool fresh;	     /* never scanned: looked at by the next step, not the next round */
	bool used;	     /* its last scan found accesses */
	uint32_t marked_ms;  /* since_now() of its last mark */
	uint64_t cold_until; /* mode regions: in the cold window until this round; 0 not */
	uint64_t next_round;
	uint64_t *ent; /* [npages]; NULL while the piece holds no slow page */
	/* Demotion: for each tracked page of a watched fast node, the time (the scanner's
	 * milliseconds, modulo 2^32) since which it was not seen accessed; NULL while the piece
	 * holds no such page. offer_epoch: the cold list's epoch its OFFERED bits belong to. */
	uint32_t *since;
	uint32_t offer_epoch;
};

struct abit_proc {
	pid_t pid;
	uint64_t starttime;
	size_t npieces;
	struct abit_piece *piece;
	bool gone;
	int cpu, node; /* where it last ran; read once per round, when it has accesses */
	bool cpu_read;
	struct abit_sampler *smp; /* mode regions */
	int64_t handle;		  /* procs handle for cold offers; 0 not looked up, < 0 none */
	size_t nquick;		  /* pieces with re-reads pending (quick) or fresh, at most */
	uint64_t added;		  /* the round it was first watched (abit_reread_young()) */
	uint64_t vm_size, vm_rss; /* statm (pages) when its maps were last read */
	unsigned maps_kept;	  /* re-reads since, that found both unchanged (proc_build()) */
	bool capped;		  /* pieces were left out at that read: read again at each */
};

struct abit {
	char *procfs_root, *sysfs_root;
	/* abit_follow_arrivals(): the slow nodes' use (bytes) less pghotd's own demotions, at
	 * its lowest since the last wake; known once read. */
	uint64_t slow_used;
	bool slow_used_known;
	uint64_t last_wake; /* the round of the last wake */
	size_t
	    nwatched; /* mode regions: 2 MiB pieces watched or in the cold window, all processes */
	pid_t cold_pid; /* mode regions: where the cold window's walk goes on */
	uint64_t cold_vaddr;
	struct access_sink sink;
	struct stats *stats;
	/* The I/O: ops counts the bytes moved (io_bytes) and passes each call to inner. */
	const struct idle_io_ops *ops, *inner;
	struct idle_io_ops counting;
	uint64_t io_bytes;
	pid_t self_pid;
	int bitmap_fd, kpf_fd;

	struct abit_proc *procs; /* sorted by pid */
	size_t nprocs;
	pid_t *listed; /* every pid of the procfs root at the last refresh, sorted */
	size_t nlisted;
	uint64_t round;
	uint64_t step, rng; /* mode regions: sampling steps, random state */
	uint64_t last_refresh, cfg_generation;
	bool refreshed;
	struct token_bucket budget;
	bool budget_init;
	pid_t cur_pid; /* where the last round's budget ran out */
	uint64_t cur_vaddr;
	bool pfn_seen; /* some present page showed a non-zero PFN */
	char reason[256];

	/* Demotion candidates (NULL: none wanted), and per round: the fast nodes to watch (a
	 * mask), the offer epoch, the scanner's milliseconds, the pages gathered. */
	struct cold_list *cold;
	struct procs *registry; /* deps.procs */
	uint64_t want;
	uint32_t epoch, woken_epoch; /* the offer epoch, and the last one abit_follow_epoch() saw */
	uint64_t now_ms;
	struct cold_page coldb[COLD_BATCH];
	size_t ncold;

	/* Per-round scratch. */
	const struct pghotd_config *cfg;
	uint64_t now_ns;
	uint64_t round_ns; /* time spent in the calls since the last round ended */
	uint64_t scanned, found;
	/* The threshold a fresh page's first access is worth (abit_first_threshold(), read once
	 * a round), and whether the scan under way is a step's quick look. */
	unsigned first_thr;
	bool quick_scan;
	int error;
	struct access_event ev[ABIT_EVENT_BATCH];
	size_t nev;
	uint64_t pm[ABIT_PIECE_PAGES];
	uint64_t pfns[ABIT_PIECE_PAGES];
	uint32_t idx[ABIT_PIECE_PAGES];
	int node[ABIT_PIECE_PAGES]; /* page nodes, when the topology has no block map */
	void *addr[ABIT_PIECE_PAGES];
	struct idle_words words;
	struct abit_vmas vmas; /* proc_vmas() scratch */
	/* 2 MiB pieces over every process, at most (deps.pieces_cap), and held now. */
	uint64_t pieces_cap, pieces_used;
	bool maps_keep; /* the configuration is the one the kept pieces were built for */

	struct worker w;
	struct config_pub *pub;
	int slot;
};

/* ---- small helpers --------------------------------------------------------------------- */

static uint64_t abit_now_ns(const struct abit *a)
{
	return a->ops->now_ns(a->ops->ctx);
}

static void abit_stat_add(struct abit *a, enum stat_src_counter c, uint64_t n)
{
	if (a->stats)
		stats_src_add(a->stats, SRC_ABIT, c, n);
}

static void abit_stat_add_skip(struct abit *a, enum stat_abit_skip why, uint64_t n)
{
	if (a->stats)
		stats_abit_skip(a->stats, why, n);
}

static void abit_set_active(struct abit *a, int active)
{
	if (a->stats)
		stats_source_active(a->stats, SRC_ABIT, active);
}

static bool errno_means_gone(int r)
{
	return r == -ENOENT || r == -ESRCH;
}

static int proc_read_stat(const struct abit *a, pid_t pid, uint64_t *start, int *cpu)
{
	char path[PATH_MAX], text[STAT_TEXT_MAX];
	int r;

	snprintf(path, sizeof(path), "%s/%d/stat", a->procfs_root, (int)pid);
	r = file_read_small(path, text, sizeof(text));
	if (r < 0)
		return errno_means_gone(r) ? -ESRCH : r;
	return stat_parse_start_cpu(text, start, cpu);
}

/* ---- process list and pieces ---------------------------------------------------------- */

/* Drops a piece's per-page cache. */
static void piece_forget_pages(struct abit_piece *g)
{
	free(g->ent);
	free(g->since);
	g->ent = NULL;
	g->since = NULL;
}

static void pieces_free(struct abit_piece *reg, size_t n)
{
	for (size_t i = 0; i < n; i++)
		piece_forget_pages(&reg[i]);
	free(reg);
}

static void proc_free(struct abit_proc *p)
{
	pieces_free(p->piece, p->npieces);
	abit_sampler_free(p->smp);
}

static void procs_free_all(struct abit_proc *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		proc_free(&p[i]);
	free(p);
}

/* Appends the 2 MiB-aligned pieces of [start, end) to *reg. */
static int pieces_cut(uint64_t start, uint64_t end, struct abit_piece **reg, size_t *n, size_t *cap,
		      uint64_t round)
{
	while (start < end) {
		uint64_t stop = (start / PIECE_BYTES + 1) * PIECE_BYTES;

		if (stop > end)
			stop = end;
		if (*n == *cap) {
			size_t c = *cap ? *cap * 2 : 16;
			struct abit_piece *bigger = realloc(*reg, c * sizeof(*bigger));

			if (!bigger)
				return -ENOMEM;
			*reg = bigger;
			*cap = c;
		}
		(*reg)[(*n)++] = (struct abit_piece){
		    .start = start,
		    .npages = (uint32_t)((stop - start) / PAGEMAP_PAGE_SIZE),
		    .interval = 1,
		    .next_round = round,
		    .fresh = true,
		};
		start = stop;
	}
	return 0;
}

/* The pieces of the VMAs in a->vmas, in address order. -ENOMEM. */
static int pieces_from_vmas(struct abit *a, struct abit_piece **out, size_t *nout)
{
	struct abit_piece *reg = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < a->vmas.n; i++) {
		if (pieces_cut(a->vmas.v[i].start, a->vmas.v[i].end, &reg, &n, &cap, a->round) <
		    0) {
			pieces_free(reg, n);
			return -ENOMEM;
		}
	}
	*out = reg;
	*nout = n;
	return 0;
}

/* Reads pid's VMAs into a->vmas, keeping what its resident set (rss pages) and the source's
 * cap allow (abit_vmas.h; a->pieces_used holds the pieces of every other process); counts
 * what is left out (*capped then). -errno (-ENOENT/-ESRCH: gone). */
static int proc_vmas(struct abit *a, pid_t pid, uint64_t rss, bool *capped)
{
	char path[PATH_MAX];
	uint64_t allow, left, need, cut;
	int r;

	snprintf(path, sizeof(path), "%s/%d/maps", a->procfs_root, (int)pid);
	r = abit_vmas_read_maps(&a->vmas, path);
	if (r < 0)
		return r;
	need = abit_vmas_pieces(&a->vmas);
	left = a->pieces_cap > a->pieces_used ? a->pieces_cap - a->pieces_used : 0;
	allow = abit_vmas_allowance(rss);
	if (need <= allow && need <= left)
		return 0;
	/* More than it pays for: leave out the VMAs without a resident page first. A failed
	 * read keeps them all, and the cut below still bounds the state. */
	snprintf(path, sizeof(path), "%s/%d/numa_maps", a->procfs_root, (int)pid);
	r = abit_vmas_drop_empty(&a->vmas, path);
	if (r == -ENOMEM || r == -ECANCELED)
		return r;
	cut = abit_vmas_fit(&a->vmas, allow < left ? allow : left);
	*capped = cut != 0;
	if (cut) {
		abit_stat_add_skip(a, allow <= left ? SKIP_PROCESS_CAP : SKIP_TOTAL_CAP, cut);
		log_debug("abit: pid %d: %" PRIu64 " regions of 2 MiB left out (%" PRIu64
			  " resident pages allow %" PRIu64 ", the source has %" PRIu64 " left)",
			  (int)pid, cut, rss, allow, left);
	}
	return 0;
}

/* Carries scan state (cache, interval) from the old pieces to the new ones with the same
 * range; frees the cache of pieces that went away. Both lists are in address order. */
static void pieces_inherit(struct abit_piece *old, size_t nold, struct abit_piece *nw, size_t nnew)
{
	size_t i = 0;

	for (size_t j = 0; j < nnew; j++) {
		while (i < nold && old[i].start < nw[j].start)
			piece_forget_pages(&old[i++]);
		if (i < nold && old[i].start == nw[j].start && old[i].npages == nw[j].npages) {
			nw[j] = old[i];
			old[i].ent = NULL;
			old[i++].since = NULL;
		}
	}
}

static struct abit_proc *procs_find(struct abit_proc *p, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && p[lo].pid == pid ? &p[lo] : NULL;
}

static bool proc_selected(const struct abit *a, const struct pghotd_config *cfg, pid_t pid)
{
	struct proc_info info;

	if (pid == a->self_pid)
		return false;
	/* Kernel threads have no VMAs, so with no selection rules reading their info is
	 * wasted: the maps read finds nothing. */
	if (proc_filter_selects_all(cfg))
		return true;
	if (proc_info_read(a->procfs_root, pid, &info) < 0)
		return false;
	return !info.kernel_thread && proc_filter_match(cfg, &info);
}

/* Mode regions: the piece is neither watched nor in the cold window (its pages stay known). */
static void piece_clear_watch(struct abit_piece *g)
{
	g->watch = false;
	g->cold_until = 0;
	g->cold_scanned = false;
}

static void piece_unwatch(struct abit_piece *g)
{
	piece_forget_pages(g);
	g->ntracked = 0;
	g->nfast = 0;
	piece_clear_watch(g);
}

/* Mode regions: the piece is scanned page by page (for promotion, or in the cold window). */
static bool piece_scanned(const struct abit_piece *g)
{
	return g->watch || g->cold_until;
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
static int proc_sampler(struct abit *a, struct abit_proc *p, struct abit_proc *old)
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
			piece_clear_watch(&p->piece[i]);
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
			piece_unwatch(&p->piece[i]);
	if (old && old->smp && abit_sampler_max_regions(old->smp) == want) {
		p->smp = old->smp;
		old->smp = NULL;
	} else {
		r = abit_sampler_new(want, ABIT_SAMPLES_PER_AGGR, &a->rng, &p->smp);
	}
	if (r == 0)
		r = abit_sampler_update(p->smp, rg, n);
	free(rg);
	return r;
}

/* Builds the state of pid for the new list, reusing what old knew if it is the same
 * process (same start time). 0 with *out filled, 1 when old stands as it is (the same
 * process, its size and resident set unchanged since its maps were read: those are read
 * again only every ABIT_MAPS_KEEP_MAX re-reads then, so a process of huge maps that does
 * nothing costs a statm read, not a maps read, per re-read), or -errno (-ESRCH: gone, skip
 * it). */
static int proc_build(struct abit *a, pid_t pid, struct abit_proc *old, struct abit_proc *out)
{
	struct abit_proc p = {.pid = pid, .cpu = -1, .node = -1, .added = a->round};
	char path[PATH_MAX];
	int cpu, r = proc_read_stat(a, pid, &p.starttime, &cpu);

	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%d/statm", a->procfs_root, (int)pid);
	r = abit_vmas_read_statm(path, &p.vm_size, &p.vm_rss);
	if (r < 0)
		return errno_means_gone(r) ? -ESRCH : r;
	if (old && a->maps_keep && !old->capped && old->starttime == p.starttime &&
	    old->vm_size == p.vm_size && old->vm_rss == p.vm_rss &&
	    old->maps_kept < ABIT_MAPS_KEEP_MAX) {
		old->maps_kept++;
		return 1;
	}
	r = proc_vmas(a, pid, p.vm_rss, &p.capped);
	if (r < 0)
		return errno_means_gone(r) ? -ESRCH : r;
	r = pieces_from_vmas(a, &p.piece, &p.npieces);
	if (r < 0)
		return r;
	if (!p.npieces) {
		/* A kernel thread, or nothing mapped that could be tracked. */
		free(p.piece);
		return -ESRCH;
	}
	if (old && old->starttime != p.starttime)
		old = NULL;
	if (old) {
		pieces_inherit(old->piece, old->npieces, p.piece, p.npieces);
		p.added = old->added;
		p.nquick = old->nquick; /* the inherited pieces keep their re-reads */
	}
	r = proc_sampler(a, &p, old);
	if (r < 0) {
		pieces_free(p.piece, p.npieces);
		abit_sampler_free(p.smp);
		return r;
	}
	/* Scanned in full: the next step looks at its fresh pieces (proc_quick()). */
	for (size_t i = 0; !p.smp && i < p.npieces; i++)
		p.nquick += p.piece[i].fresh && !p.piece[i].quick;
	*out = p;
	return 0;
}

static bool stopping(struct abit *a);

static void pieces_recount(struct abit *a)
{
	a->pieces_used = 0;
	for (size_t i = 0; i < a->nprocs; i++)
		a->pieces_used += a->procs[i].npieces;
}

/* Re-reads the selected processes and their VMAs, keeping what is known of unchanged
 * pieces. On failure the old list stays. */
static int abit_refresh(struct abit *a, const struct pghotd_config *cfg)
{
	struct abit_proc *np, *old;
	pid_t *pids = NULL;
	size_t n = 0, k = 0;
	int r = proc_list_pids(a->procfs_root, &pids, &n);

	if (r < 0)
		return r;
	np = calloc(n ? n : 1, sizeof(*np));
	if (!np) {
		free(pids);
		return -ENOMEM;
	}
	a->pieces_used = 0; /* the cap counts the new list as it is built */
	for (size_t i = 0; i < n; i++) {
		if (stopping(a))
			break;
		if (!proc_selected(a, cfg, pids[i]))
			continue;
		old = procs_find(a->procs, a->nprocs, pids[i]);
		r = proc_build(a, pids[i], old, &np[k]);
		if (r == -ENOMEM) {
			procs_free_all(np, k);
			free(pids);
			pieces_recount(a);
			return r;
		}
		if (r == 1) { /* kept: it moves to the new list */
			np[k] = *old;
			old->piece = NULL;
			old->npieces = 0;
			old->smp = NULL;
		}
		if (r >= 0)
			a->pieces_used += np[k++].npieces;
		/* Other failures: the process exited, or is not ours to read; skip it. */
	}
	free(a->listed);
	a->listed = pids;
	a->nlisted = n;
	procs_free_all(a->procs, a->nprocs);
	a->procs = np;
	a->nprocs = k;
	return 0;
}

/* Watches the selected processes among pids[0..n) (sorted) that the last listing did not
 * hold, from this round on rather than ABIT_REFRESH_ROUNDS later, and keeps that listing. The
 * processes already watched are left as they are: with hundreds of them and processes coming
 * and going all the time, a new pid costs its own reads, not a re-read of every watched
 * process's maps. One readdir a round (a few getdents64 calls for hundreds of pids). Takes pids;
 * -ENOMEM with nothing changed. */
static int abit_add_new(struct abit *a, const struct pghotd_config *cfg, pid_t *pids, size_t n)
{
	struct abit_proc *add = NULL, *merged;
	size_t nadd = 0, cap = 0, i, j, k;
	int r;

	for (i = 0, j = 0; i < n; i++) {
		while (j < a->nlisted && a->listed[j] < pids[i])
			j++;
		if ((j < a->nlisted && a->listed[j] == pids[i]) || !proc_selected(a, cfg, pids[i]))
			continue;
		if (nadd == cap) {
			struct abit_proc *bigger;

			cap = cap ? cap * 2 : 8;
			bigger = realloc(add, cap * sizeof(*bigger));
			if (!bigger)
				goto nomem;
			add = bigger;
		}
		memset(&add[nadd], 0, sizeof(add[nadd]));
		r = proc_build(a, pids[i], NULL, &add[nadd]);
		if (r == -ENOMEM)
			goto nomem;
		if (r == 0) /* other failures: exited, or not ours to read */
			a->pieces_used += add[nadd++].npieces;
		if (stopping(a))
			break;
	}
	if (nadd) {
		/* Both sorted by pid: merge, so procs_find() keeps working. A pid watched already
		 * (gone from one listing and back) keeps its entry if it is the same process, and
		 * takes the new one if the pid was reused. */
		merged = calloc(a->nprocs + nadd, sizeof(*merged));
		if (!merged)
			goto nomem;
		for (i = 0, j = 0, k = 0; i < a->nprocs || j < nadd;) {
			if (j == nadd || (i < a->nprocs && a->procs[i].pid < add[j].pid))
				merged[k++] = a->procs[i++];
			else if (i < a->nprocs && a->procs[i].pid == add[j].pid &&
				 a->procs[i].starttime == add[j].starttime)
				proc_free(&add[j++]);
			else if (i < a->nprocs && a->procs[i].pid == add[j].pid)
				proc_free(&a->procs[i++]);
			else
				merged[k++] = add[j++];
		}
		free(a->procs);
		a->procs = merged;
		a->nprocs = k;
	}
	free(add);
	free(a->listed);
	a->listed = pids;
	a->nlisted = n;
	pieces_recount(a);
	return 0;
nomem:
	procs_free_all(add, nadd);
	free(pids);
	pieces_recount(a);
	return -ENOMEM;
}

static void abit_drop_gone(struct abit *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->nprocs; i++) {
		if (a->procs[i].gone) {
			proc_free(&a->procs[i]);
			continue;
		}
		a->procs[k++] = a->procs[i];
	}
	a->nprocs = k;
	pieces_recount(a);
}

/* ---- events ----------------------------------------------------------------------------- */

static void abit_flush(struct abit *a)
{
	access_deliver(&a->sink, a->cfg, a->ev, a->nev);
	a->found += a->nev;
	a->nev = 0;
}

static void abit_emit(struct abit *a, struct abit_proc *p, uint64_t vaddr, uint64_t ent,
		      unsigned threshold)
{
	uint64_t pfn = ent & ENT_PFN;
	const struct topology *t = a->cfg->topo;

	if (!p->cpu_read) {
		uint64_t start;

		p->cpu_read = true;
		if (proc_read_stat(a, p->pid, &start, &p->cpu) < 0)
			p->cpu = -1;
		p->node = p->cpu >= 0 && t ? topology_cpu_node(t, p->cpu) : -1;
	}
	a->ev[a->nev++] = (struct access_event){
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
	if (a->nev == ABIT_EVENT_BATCH)
		abit_flush(a);
}

/* ---- scanning one piece ---------------------------------------------------------------- */

/* Without a memory block map (no CONFIG_MEMORY_HOTPLUG) a PFN does not tell its node: ask
 * the kernel for the node of each present page of the piece instead. */
static void piece_nodes(struct abit *a, const struct abit_proc *p, const struct abit_piece *g)
{
	const struct topology *t = a->cfg->topo;

	if (!t || t->nr_blocks)
		return;
	for (uint32_t i = 0; i < g->npages; i++) {
		a->addr[i] = (void *)(uintptr_t)(g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE);
		a->node[i] = -1;
	}
	if (a->ops->page_nodes &&
	    a->ops->page_nodes(a->ops->ctx, p->pid, g->npages, a->addr, a->node) < 0)
		for (uint32_t i = 0; i < g->npages; i++)
			a->node[i] = -1;
}

/* Node of page i of the piece scanned (PFN pfn), -1 when unknown. */
static int page_node(const struct abit *a, uint32_t i, uint64_t pfn)
{
	const struct topology *t = a->cfg->topo;

	if (!t || !pfn)
		return -1;
	return t->nr_blocks ? topology_node_of_pfn(t, pfn) : a->node[i];
}

/* A page of a fast node the cold list wants watched (none unless some node is short). */
static bool node_watched_fast(const struct abit *a, int node)
{
	return a->want && node >= 0 && node < 64 && (a->want >> node & 1);
}

/* ---- demotion candidates ---------------------------------------------------------------- */

static void cold_flush(struct abit *a)
{
	if (a->ncold)
		cold_list_offer(a->cold, a->coldb, a->ncold);
	a->ncold = 0;
}

/* A new offer epoch: every page of the piece may be offered again. */
static void piece_new_epoch(struct abit *a, struct abit_piece *g)
{
	if (g->offer_epoch == a->epoch)
		return;
	g->offer_epoch = a->epoch;
	for (uint32_t i = 0; g->since && i < g->npages; i++)
		g->ent[i] &= ~ENT_OFFERED;
}

/* The scanner's milliseconds as a since[] value: odd, so 0 means "not known yet". */
static uint32_t since_now(const struct abit *a)
{
	return (uint32_t)a->now_ms | 1;
}

/* The procs handle of p for its offers, looked up once: 0 without procs, < 0 when the
 * registry has no room for it (its pages are not offered then). */
static int64_t proc_handle(const struct abit *a, struct abit_proc *p)
{
	if (!a->registry)
		return 0;
	if (p->handle == 0)
		p->handle = procs_handle(a->registry, p->pid);
	return p->handle;
}

/* Tracked page i of a watched fast node, its PFN unchanged since the last scan: an access
 * restarts its idle time; idle for config_demotion_exchange_ms(), it is offered once (the
 * mover takes it for an exchange from then on, for the free target once idle
 * config_demotion_idle_ms()). A page tracked
 * before its node counted as fast (a reload moved the tiers) starts its idle time now. */
static void cold_note(struct abit *a, struct abit_proc *p, struct abit_piece *g, uint32_t i,
		      int node, bool idle)
{
	int64_t h;
	uint32_t now = since_now(a), age = now - g->since[i];

	if (!idle || !g->since[i]) {
		g->since[i] = now;
		g->ent[i] &= ~ENT_OFFERED;
		return;
	}
	if ((g->ent[i] & ENT_OFFERED) || age < config_demotion_exchange_ms(a->cfg))
		return;
	/* Mapped by more than one process: move_pages(2) without MPOL_MF_MOVE_ALL refuses it
	 * (-EACCES), so an offer would only head the promoter's take with a failure. */
	if (!(a->pm[i] & PAGEMAP_EXCLUSIVE))
		return;
	h = proc_handle(a, p);
	if (h < 0)
		return;
	g->ent[i] |= ENT_OFFERED;
	a->coldb[a->ncold++] = (struct cold_page){
	    .pid = p->pid,
	    .proc = (uint32_t)h,
	    .vaddr = g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE,
	    .idle_since_ms = a->now_ms - age,
	    .offered_ms = a->now_ms,
	    .node = node,
	    .size = g->ent[i] & ENT_HUGE ? HOT_SIZE_HUGE : HOT_SIZE_BASE,
	};
	if (a->ncold == COLD_BATCH)
		cold_flush(a);
}

/* Makes room for page i's idle time; -ENOMEM. */
static int piece_track_fast(struct abit *a, struct abit_piece *g, uint32_t i)
{
	if (!g->since) {
		g->since = calloc(g->npages, sizeof(*g->since));
		if (!g->since)
			return -ENOMEM;
		g->offer_epoch = a->epoch;
	}
	g->since[i] = since_now(a);
	return 0;
}

/* Reads back the bitmap words of the piece's tracked PFNs. */
static int piece_fetch(struct abit *a, const struct abit_piece *g)
{
	size_t n = 0;
	int r;

	idle_words_reset(&a->words);
	if (!g->ent || !g->ntracked)
		return 0;
	for (uint32_t i = 0; i < g->npages; i++)
		if (g->ent[i] & ENT_TRACKED)
			a->pfns[n++] = g->ent[i] & ENT_PFN;
	r = idle_words_build(&a->words, a->pfns, n);
	if (r < 0)
		return r;
	r = idle_words_fetch(a->ops, a->bitmap_fd, &a->words);
	return r < 0 ? r : 0;
}

/* Reads the piece's pagemap entries into a->pm. -ESRCH when the process is gone (the
 * kernel returns end of file once its mm is released). */
static int piece_read_pagemap(struct abit *a, int fd, const struct abit_piece *g)
{
	size_t len = (size_t)g->npages * 8;
	ssize_t n = idle_io_read_full(a->ops, fd, a->pm, len, g->start / PAGEMAP_PAGE_SIZE * 8);

	if (n < 0)
		return errno_means_gone((int)n) ? -ESRCH : (int)n;
	if (n == 0)
		return -ESRCH;
	memset((char *)a->pm + n, 0, len - (size_t)n);
	return 0;
}

/* Compares the fresh pagemap with the cache: reports tracked pages whose bit was cleared and
 * whose PFN did not change, drops pages that left the slow tier, and lists in a->idx the
 * slow pages whose kpageflags must be (re)read. Returns how many, or -EPERM for hidden
 * PFNs, -ENOMEM. *accessed counts the accesses reported. With watch_fast (some fast node
 * watched for demotion) the same for the pages of watched fast nodes, whose idle times
 * cold_note() keeps; piece_compare() instantiates both, so a scan with no node watched runs
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
	unsigned first =
	    a->first_thr && !p->smp && since_now(a) - g->marked_ms <= gap ? a->first_thr : 0;

	if (watch_fast)
		piece_new_epoch(a, g);
	for (uint32_t i = 0; i < g->npages; i++) {
		uint64_t pfn = pagemap_pfn(a->pm[i]);
		uint64_t old = g->ent ? g->ent[i] : 0;
		int node = page_node(a, i, pfn);
		bool slow = node >= 0 && topology_node_is_slow(a->cfg->topo, node);
		bool fast = watch_fast && !slow && node_watched_fast(a, node);
		bool same = (old & ENT_TRACKED) && (old & ENT_PFN) == pfn;

		present += pagemap_present(a->pm[i]);
		hidden += pagemap_present(a->pm[i]) && !pfn;
		if (same && slow && !idle_words_idle(&a->words, pfn)) {
			abit_emit(a, p, g->start + (uint64_t)i * PAGEMAP_PAGE_SIZE, old,
				  old & ENT_FRESH ? first : 0);
			(*accessed)++;
		} else if (same && fast) {
			if (!g->since && piece_track_fast(a, g, i) < 0)
				return -ENOMEM;
			cold_note(a, p, g, i, node, idle_words_idle(&a->words, pfn));
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
		if (fast && piece_track_fast(a, g, i) < 0)
			return -ENOMEM;
		g->ent[i] = pfn | (fast ? ENT_FAST : 0);
		a->idx[nneed++] = i;
	}
	if (present > hidden)
		a->pfn_seen = true;
	if (hidden && !a->pfn_seen)
		return -EPERM;
	return nneed;
}

static int piece_compare(struct abit *a, struct abit_proc *p, struct abit_piece *g,
			 unsigned *accessed)
{
	return a->want ? piece_compare_as(a, p, g, accessed, true)
		       : piece_compare_as(a, p, g, accessed, false);
}

/* Classifies the listed pages from kpageflags, one pread per run of consecutive PFNs. */
static int piece_learn(struct abit *a, struct abit_piece *g, int nneed)
{
	uint64_t flags[ABIT_PIECE_PAGES];

	for (int i = 0; i < nneed;) {
		uint64_t first = g->ent[a->idx[i]] & ENT_PFN;
		int j = i + 1;
		ssize_t n;

		while (j < nneed && (g->ent[a->idx[j]] & ENT_PFN) == first + (uint64_t)(j - i))
			j++;
		n = idle_io_read_full(a->ops, a->kpf_fd, flags, (size_t)(j - i) * 8, first * 8);
		if (n < 0)
			return (int)n;
		for (int k = i; k < j; k++) {
			uint64_t f = (size_t)(k - i) * 8 < (size_t)n ? flags[k - i] : 0;
			enum kpf_class c = kpf_classify(f);
			uint64_t *e = &g->ent[a->idx[k]];

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

/* Marks the piece's tracked pages idle again. */
static int piece_mark(struct abit *a, struct abit_piece *g)
{
	size_t n = 0, nfast = 0;
	int r;

	/* Fast pages are tracked only where their idle times are kept (since). */
	if (g->ent && g->since)
		for (uint32_t i = 0; i < g->npages; i++) {
			if (!(g->ent[i] & ENT_TRACKED))
				continue;
			a->pfns[n++] = g->ent[i] & ENT_PFN;
			nfast += !!(g->ent[i] & ENT_FAST);
		}
	else if (g->ent)
		for (uint32_t i = 0; i < g->npages; i++)
			if (g->ent[i] & ENT_TRACKED)
				a->pfns[n++] = g->ent[i] & ENT_PFN;
	g->ntracked = (uint32_t)n;
	g->nfast = (uint32_t)nfast;
	g->marked_ms = since_now(a);
	if (!n) {
		/* Nothing slow left: keep no cache for it. */
		bool any = false;

		for (uint32_t i = 0; g->ent && i < g->npages && !any; i++)
			any = g->ent[i] != 0;
		if (!any)
			piece_forget_pages(g);
		return 0;
	}
	r = idle_words_build(&a->words, a->pfns, n);
	if (r < 0)
		return r;
	r = idle_words_mark(a->ops, a->bitmap_fd, &a->words, MARK_MAX_GAP);
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

/* Most rounds between scans of a piece that holds pages of a fast node watched for
 * demotion: a quarter of the idle time that makes a page cold, so ages are known to that
 * precision and the piece's cold pages are offered again within the time the promoter
 * trusts an offer (config_demotion_trust_ms()). Such a piece has no slow page to back off
 * for, and would otherwise be seen once in ABIT_MAX_INTERVAL rounds, offering few pages. */
static uint16_t fast_max_interval(const struct abit *a)
{
	unsigned round_ms = a->cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP;
	unsigned n = round_ms ? config_demotion_idle_ms(a->cfg) / 4 / round_ms : 1;

	return n < 1 ? 1 : n > ABIT_MAX_INTERVAL ? ABIT_MAX_INTERVAL : (uint16_t)n;
}

/* A process scanned in full: a piece whose scan just learned pages (a new process, pages
 * newly on a slow node), or found accesses where its last scan found none, is looked at again by
 * the next QUICK_STEPS steps instead of a round later, so a page used all the time is counted
 * twice within a quarter of a scan interval. A piece accessed at every scan gets no extra
 * look: its accesses are counted at each round anyway. */
static void piece_quicken(struct abit_proc *p, struct abit_piece *g, unsigned accessed,
			  uint32_t had_tracked)
{
	bool woke = accessed && !g->used;

	if (g->ntracked - g->nfast <= had_tracked && !woke)
		return;
	p->nquick += !g->quick;
	g->quick = QUICK_STEPS;
}

static int piece_scan(struct abit *a, struct abit_proc *p, struct abit_piece *g, int fd)
{
	uint32_t had_tracked = g->ntracked - g->nfast; /* slow pages, as piece_adapt() counts */
	unsigned accessed = 0;
	int r = piece_fetch(a, g);

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
	if (!p->smp)
		piece_quicken(p, g, accessed, had_tracked);
	g->used = accessed != 0;
	if (a->quick_scan && !accessed && g->ntracked - g->nfast <= had_tracked) {
		/* A quick look that found nothing new proves no idleness: the pace stands. */
	} else if (a->quick_scan) {
		g->interval = 1;
		g->idle_scans = 0;
		g->next_round = a->round; /* still scanned at the coming round */
	} else {
		piece_adapt(g, accessed, had_tracked, a->round,
			    g->nfast ? fast_max_interval(a) : ABIT_MAX_INTERVAL);
	}
	g->seen = g->seen || accessed;
	g->cold_scanned = g->cold_until != 0;
	return 0;
}

/* ---- one round -------------------------------------------------------------------------- */

static bool stopping(struct abit *a)
{
	return worker_stopping(&a->w);
}

static int open_pagemap(const struct abit *a, pid_t pid)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%d/pagemap", a->procfs_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* p's pagemap in *fd, opened at its first use in a pass; false, with p marked gone when it
 * exited or is not ours to read, when it cannot be opened. */
static bool proc_pagemap(const struct abit *a, struct abit_proc *p, int *fd)
{
	if (*fd < 0)
		*fd = open_pagemap(a, p->pid);
	if (*fd >= 0)
		return true;
	/* Exited, or not ours to read: neither is worth a log line. */
	p->gone = errno_means_gone(*fd) || *fd == -EACCES || *fd == -EPERM;
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
		if (g->next_round > a->round || (p->smp && !piece_scanned(g)))
			continue;
		if (!token_bucket_take(&a->budget, g->npages)) {
			a->cur_pid = p->pid;
			a->cur_vaddr = g->start;
			r = 1;
			break;
		}
		if (!proc_pagemap(a, p, &fd))
			break;
		r = piece_scan(a, p, g, fd);
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
	abit_flush(a);
	cold_flush(a);
	return r;
}

/* Mode regions: 2 MiB pieces with per-page state allowed at once (max_watched_mib). */
static size_t watch_cap(const struct abit *a)
{
	return (size_t)a->cfg->sources.abit.max_watched_mib * (1u << 20) / PIECE_BYTES;
}

/* A piece is due at once, scanned every round until its scans back it off. */
static void piece_due_now(struct abit *a, struct abit_piece *g)
{
	g->next_round = a->round;
	g->interval = 1;
	g->idle_scans = 0;
}

/* Mode regions, at the end of an aggregation interval: the 2 MiB pieces that overlap a
 * sampling region with a sampled access, or whose own scan found one since the last
 * aggregation, are watched (a newly watched one is due at once); the others are not and drop
 * their per-page cache unless the cold window holds them. Per-page state is kept only for
 * these pieces, and no more of them than sources.abit.max_watched_mib allows over all
 * processes: a piece stays watched while it shows accesses, and one that newly shows them
 * waits for room, which pieces going quiet make at the next aggregation. */
static void proc_watch(struct abit *a, struct abit_proc *p)
{
	size_t nh, h = 0, cap = watch_cap(a);
	const struct abit_range *hot = abit_sampler_hot(p->smp, 1, &nh);

	for (size_t i = 0; i < p->npieces; i++) {
		struct abit_piece *g = &p->piece[i];
		uint64_t end = g->start + (uint64_t)g->npages * PAGEMAP_PAGE_SIZE;
		bool w, was = piece_scanned(g);

		while (h < nh && hot[h].end <= g->start)
			h++;
		w = g->seen || (h < nh && hot[h].start < end);
		if (w && !was && a->nwatched >= cap)
			w = false; /* no room: looked at again at the next aggregation */
		if (w && !g->watch)
			piece_due_now(a, g);
		g->watch = w;
		g->seen = false;
		if (was && !piece_scanned(g)) {
			piece_unwatch(g);
			a->nwatched--;
		}
		a->nwatched += !was && w;
	}
}

/* The piece of p holding vaddr, or NULL. */
static struct abit_piece *proc_piece(struct abit_proc *p, uint64_t vaddr)
{
	size_t lo = 0, hi = p->npieces;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->piece[mid].start + (uint64_t)p->piece[mid].npages * PAGEMAP_PAGE_SIZE <=
		    vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->npieces && p->piece[lo].start <= vaddr ? &p->piece[lo] : NULL;
}

/* Mode regions, demotion wanted: the pieces where the last step's samples found idle pages of a
 * watched fast node may hold cold pages; the cold window takes them from there. */
static void proc_note_fast(struct abit_proc *p)
{
	size_t n;
	const uint64_t *fast = abit_sampler_fast(p->smp, &n);

	for (size_t i = 0; i < n; i++) {
		struct abit_piece *g = proc_piece(p, fast[i]);

		if (g)
			g->fast_hint = true;
	}
}

/* Scans g of p in a sampling step, when the budget pays for it; it stays due at the next round
 * (steps come after the round's number moved on, which piece_scan() counts from). */
static int step_scan(struct abit *a, struct abit_proc *p, struct abit_piece *g, int fd)
{
	int r;

	if (!token_bucket_take(&a->budget, g->npages))
		return 1;
	r = piece_scan(a, p, g, fd);
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
	size_t n, cap = watch_cap(a), left = 0;
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
		struct abit_piece *g = proc_piece(p, hit[i]);

		if (!g || g->watch || (!piece_scanned(g) && a->nwatched >= cap))
			continue;
		a->nwatched += !piece_scanned(g);
		g->watch = true;
		g->seen = true;
		piece_due_now(a, g);
		r = step_scan(a, p, g, fd);
		if (r == 0) {
			g->quick = QUICK_STEPS;
			p->nquick++;
		}
		r = r > 0 ? 0 : r;
	}
	abit_flush(a);
	cold_flush(a);
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
				    .pfn_seen = &a->pfn_seen,
				    .fast_mask = a->want};
	size_t n = abit_sampler_count(p->smp);
	int r;

	if (!token_bucket_take(&a->budget, n))
		return 0;
	io.pagemap_fd = open_pagemap(a, p->pid);
	if (io.pagemap_fd < 0) {
		p->gone = errno_means_gone(io.pagemap_fd) || io.pagemap_fd == -EACCES ||
			  io.pagemap_fd == -EPERM;
		return 0;
	}
	/* A young process (abit_reread_young()) is still placing its data: pieces that look
	 * idle then are not cold yet, and are sampled every step until it settles. */
	if (a->round < p->added + ABIT_REFRESH_ROUNDS)
		abit_sampler_wake(p->smp);
	r = abit_sampler_step(p->smp, &io);
	/* Charged for every piece; idle ones took turns. */
	token_bucket_refund(&a->budget, n - abit_sampler_taken(p->smp));
	a->scanned += abit_sampler_taken(p->smp);
	if (r >= 0 && a->want)
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

static int abit_sample_all(struct abit *a)
{
	/* Once a round, the watched pieces counted afresh: processes gone and refreshed maps
	 * drop pieces without proc_watch() seeing them. */
	if (a->step % ABIT_SAMPLES_PER_ROUND == 0) {
		a->nwatched = 0;
		for (size_t i = 0; i < a->nprocs; i++)
			for (size_t k = 0; k < a->procs[i].npieces; k++)
				a->nwatched += piece_scanned(&a->procs[i].piece[k]);
	}
	for (size_t i = 0; i < a->nprocs && !stopping(a); i++) {
		struct abit_proc *p = &a->procs[i];

		if (p->smp && !p->gone && proc_sample(a, p) == -EPERM)
			return -EPERM;
	}
	return 0;
}

/* Position of a cursor: first piece of the process at or after (pid, vaddr). */
static void cursor_locate(const struct abit *a, pid_t pid, uint64_t vaddr, size_t *pi, size_t *ri)
{
	*pi = 0;
	*ri = 0;
	while (*pi < a->nprocs && a->procs[*pi].pid < pid)
		(*pi)++;
	if (*pi == a->nprocs) {
		*pi = 0;
		return;
	}
	if (a->procs[*pi].pid != pid)
		return;
	while (*ri < a->procs[*pi].npieces && a->procs[*pi].piece[*ri].start < vaddr)
		(*ri)++;
}

/* Visits every piece once, starting at the cursor, so a budget too small for one round
 * still reaches every piece over several. */
static int abit_scan_all(struct abit *a)
{
	size_t p0, r0;
	int r = 0;

	cursor_locate(a, a->cur_pid, a->cur_vaddr, &p0, &r0);
	for (size_t k = 0; k <= a->nprocs && r == 0 && !stopping(a); k++) {
		size_t pi = (p0 + k) % (a->nprocs ? a->nprocs : 1);
		struct abit_proc *p;

		if (!a->nprocs)
			break;
		p = &a->procs[pi];
		p->cpu_read = false;
		if (k == 0)
			r = proc_scan(a, p, r0, p->npieces);
		else if (k == a->nprocs)
			r = r0 ? proc_scan(a, p, 0, r0) : 0; /* the part before the cursor */
		else
			r = proc_scan(a, p, 0, p->npieces);
	}
	return r < 0 ? r : 0;
}

/* Mode regions: rounds a piece stays in the cold window, enough for each of its idle fast
 * pages to be seen idle for the demotion idle time and offered (a scan at most
 * fast_max_interval() rounds after that), with a scan's slack. */
static uint64_t cold_window_rounds(const struct abit *a)
{
	unsigned round_ms = a->cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP;
	uint64_t idle = round_ms ? (config_demotion_idle_ms(a->cfg) + round_ms - 1) / round_ms : 1;

	return idle + 2 * (uint64_t)fast_max_interval(a) + 1;
}

/* Takes the piece out of the cold window (its per-page state goes unless promotion
 * watches it). */
static void cold_window_leave(struct abit *a, struct abit_piece *g)
{
	g->cold_until = 0;
	g->cold_scanned = false;
	if (!g->watch) {
		piece_unwatch(g);
		a->nwatched--;
	}
}

/* Mode regions: the cold window, which finds demotion's cold pages. The sampling regions
 * look at slow pages, and a piece is watched for promotion where they see accesses, so
 * fast pages would be seen only there. While demotion wants pages (a->want), the 2 MiB
 * pieces whose samples found a page of a watched fast node idle from one sampling step to
 * the next (fast_hint) are taken into the
 * window in address order, round robin over the processes, up to half of max_watched_mib
 * (the other half is promotion's), and scanned page by page as the full scan does: each page
 * tracked with its idle time, offered once idle for demotion.min_idle_ms. A piece leaves
 * when demotion wants no more, when its first scan finds no page of a watched fast node (a
 * stale hint), or, once it has been in for cold_window_rounds() and other hinted pieces
 * wait, to make room for them; the walk comes back to it when it has gone round. */
static void abit_cold_window(struct abit *a)
{
	size_t cap = watch_cap(a), nwin = 0, waiting = 0, pi, ri, total = 0;
	uint64_t hold = cold_window_rounds(a);

	for (size_t i = 0; i < a->nprocs; i++) {
		total += a->procs[i].npieces;
		for (size_t k = 0; k < a->procs[i].npieces; k++) {
			struct abit_piece *g = &a->procs[i].piece[k];

			if (g->cold_until && (!a->want || (g->cold_scanned && !g->nfast))) {
				g->fast_hint = g->fast_hint && g->nfast;
				cold_window_leave(a, g);
			}
			nwin += g->cold_until != 0;
			waiting += g->fast_hint && !piece_scanned(g);
		}
	}
	if (!a->want || !a->nprocs || !waiting)
		return;
	for (size_t i = 0; i < a->nprocs && (nwin >= cap / 2 || a->nwatched >= cap); i++)
		for (size_t k = 0; k < a->procs[i].npieces; k++) {
			struct abit_piece *g = &a->procs[i].piece[k];

			if (g->cold_until && a->round >= g->cold_until) {
				cold_window_leave(a, g);
				nwin--;
			}
		}
	cursor_locate(a, a->cold_pid, a->cold_vaddr, &pi, &ri);
	for (size_t k = 0; k < total && nwin < cap / 2 && a->nwatched < cap; k++) {
		struct abit_piece *g;

		while (ri >= a->procs[pi].npieces) {
			pi = (pi + 1) % a->nprocs;
			ri = 0;
		}
		g = &a->procs[pi].piece[ri++];
		a->cold_pid = a->procs[pi].pid;
		a->cold_vaddr = g->start + 1; /* the walk goes on after it */
		if (!g->fast_hint || piece_scanned(g))
			continue;
		g->cold_until = a->round + hold;
		g->cold_scanned = false;
		piece_due_now(a, g);
		nwin++;
		a->nwatched++;
	}
}

static void abit_configure_budget(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t rate = cfg->sources.abit.max_pages_per_sec;
	uint64_t burst = rate * cfg->sources.abit.scan_interval_ms / 1000;
	uint64_t now_ms = a->now_ns / 1000000;

	/* A burst below one piece would stall it; the bucket's debt rule keeps the long-run
	 * rate anyway. */
	if (burst < ABIT_PIECE_PAGES)
		burst = ABIT_PIECE_PAGES;
	if (!a->budget_init) {
		token_bucket_init(&a->budget, rate, burst, now_ms);
		a->budget_init = true;
	} else {
		token_bucket_configure(&a->budget, rate, burst);
		token_bucket_refill(&a->budget, now_ms);
	}
}

/* Slow-tier use that grows by this many pages (16 MiB) wakes the backed-off pieces. */
#define ABIT_ARRIVAL_PAGES 4096

/* Pages that arrive on the slow tier (an operator's migratepages, the kernel's demotion, an
 * allocation that fell back to a slow node) land in pieces whose scans backed off while
 * they held no slow page, and would be seen up to ABIT_MAX_INTERVAL rounds later. The slow
 * nodes' use, read each round from their meminfo (less the bytes pghotd itself demoted), says
 * when that happens: grown by ABIT_ARRIVAL_PAGES since its lowest reading, every piece of
 * every watched process that backed off beyond one scan per interval is due at once, at most
 * once per interval (a stream of new processes filling the slow tier would otherwise keep the
 * scanner on every piece at its budget), and the page budget paces the scan as ever. */
static void abit_follow_arrivals(struct abit *a)
{
	const struct topology *t = a->cfg->topo;
	uint64_t used = 0, total, free_b, own = a->stats ? stats_demoted_bytes_total(a->stats) : 0;

	if (!t)
		return;
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present || !topology_node_is_slow(t, n))
			continue;
		if (topology_read_meminfo(t, n, &total, &free_b) < 0)
			return; /* no reading this round: the back-off stands */
		used += total > free_b ? total - free_b : 0;
	}
	used = used > own ? used - own : 0;
	if (!a->slow_used_known || used < a->slow_used) {
		a->slow_used = used;
		a->slow_used_known = true;
		return;
	}
	if (used - a->slow_used < (uint64_t)ABIT_ARRIVAL_PAGES * PAGEMAP_PAGE_SIZE ||
	    a->round < a->last_wake + ABIT_HOT_SPEEDUP)
		return;
	a->last_wake = a->round;
	log_debug("abit: %" PRIu64 " KiB more on the slow tier: every region scanned again",
		  (used - a->slow_used) >> 10);
	a->slow_used = used;
	for (size_t i = 0; i < a->nprocs; i++) {
		if (a->procs[i].smp)
			abit_sampler_wake(a->procs[i].smp);
		for (size_t k = 0; k < a->procs[i].npieces; k++) {
			struct abit_piece *g = &a->procs[i].piece[k];

			if (g->interval <= ABIT_HOT_SPEEDUP || g->next_round <= a->round)
				continue;
			g->next_round = a->round;
			/* Scanned in full: looked at by the next step, not the next round. */
			if (!a->procs[i].smp && !g->quick) {
				g->quick = 1;
				a->procs[i].nquick++;
			}
		}
	}
}

/* A new offer epoch (the mover ran short of cold pages): the pieces holding pages of
 * watched fast nodes are due at this round, not after their backed-off interval (a quarter of
 * the idle time), so the pages they offered before are offered again while the mover still
 * needs them. */
static void abit_follow_epoch(struct abit *a)
{
	if (a->epoch == a->woken_epoch)
		return;
	a->woken_epoch = a->epoch;
	if (!a->want)
		return;
	for (size_t i = 0; i < a->nprocs; i++)
		for (size_t k = 0; k < a->procs[i].npieces; k++) {
			struct abit_piece *g = &a->procs[i].piece[k];

			if (g->nfast && g->next_round > a->round)
				g->next_round = a->round;
		}
}

/* A process's first ABIT_REFRESH_ROUNDS rounds: its address space is being set up (found as
 * the forked parent before its exec, then its mappings and their first touches), so its maps
 * are read again every round, keeping what is known of unchanged pieces; after that only
 * with everyone's, every ABIT_REFRESH_ROUNDS rounds. -ENOMEM; a process whose maps cannot be
 * read any more is marked gone. */
static int abit_reread_young(struct abit *a)
{
	for (size_t i = 0; i < a->nprocs; i++) {
		struct abit_proc *p = &a->procs[i], fresh;
		int r;

		if (p->gone || a->round >= p->added + ABIT_REFRESH_ROUNDS || p->added == a->round)
			continue;
		a->pieces_used -= p->npieces; /* the cap counts every other process */
		r = proc_build(a, p->pid, p, &fresh);
		if (r == 1) {
			a->pieces_used += p->npieces;
			continue;
		}
		if (r < 0) {
			a->pieces_used += p->npieces;
			if (r == -ENOMEM)
				return r;
			p->gone = true;
			continue;
		}
		proc_free(p);
		*p = fresh;
		a->pieces_used += p->npieces;
	}
	return 0;
}

static int abit_maybe_refresh(struct abit *a, const struct pghotd_config *cfg)
{
	pid_t *pids;
	size_t n;
	int r;

	if (a->refreshed && a->cfg_generation == cfg->generation &&
	    a->round - a->last_refresh < ABIT_REFRESH_ROUNDS) {
		a->maps_keep = true;
		r = abit_reread_young(a);
		if (r < 0)
			return r;
		r = proc_list_pids(a->procfs_root, &pids, &n);
		return r < 0 ? 0 : abit_add_new(a, cfg, pids, n);
	}
	a->maps_keep = a->refreshed && a->cfg_generation == cfg->generation;
	r = abit_refresh(a, cfg);
	if (r < 0)
		return r;
	a->refreshed = true;
	a->last_refresh = a->round;
	a->cfg_generation = cfg->generation;
	return 0;
}

/* Fast-node room, read once a round: the threshold a fresh page's first access is worth. While
 * the fast node with the most free memory has twice the reserve free (the larger of
 * promotion.min_free_percent and, with demotion on, demotion.free_target_percent), the first
 * evidence counts as two accesses: at the shipped threshold of 2 one
 * access makes the page hot, as the kernel's NUMA balancing promotes on the first fault while
 * a node has room (a wrong guess costs a move the room can take), while an operator's higher
 * threshold keeps its meaning (255 still asks for 254 more). With less room, no first
 * evidence: the threshold rises back to promotion.threshold. 0 when no fast node could be
 * read or the threshold is 1 already. */
static unsigned abit_first_threshold(const struct abit *a)
{
	const struct pghotd_config *cfg = a->cfg;
	const struct topology *t = cfg->topo;
	unsigned thr = cfg->promotion.threshold, level, best = 0;

	level = cfg->promotion.min_free_percent;
	if (cfg->demotion.enabled && cfg->demotion.free_target_percent > level)
		level = cfg->demotion.free_target_percent;
	level = level ? level : 1;
	for (int n = 0; t && n < t->nr_nodes && thr > 1; n++) {
		uint64_t total, free_b;
		unsigned pct;

		if (!t->node[n].present || !topology_node_is_fast(t, n) ||
		    topology_read_meminfo(t, n, &total, &free_b) < 0 || !total)
			continue;
		pct = (unsigned)(free_b * 100 / total);
		best = pct > best ? pct : best;
	}
	return best >= 2 * level ? thr - 1 : 0;
}

/* A process scanned in full, at a step: its fresh pieces (first look) and those with quick
 * looks left, while the page budget pays; what it cannot pay waits for the next step or the
 * round. -EPERM when the source became unavailable; other errors are remembered in
 * a->error. */
static int proc_quick(struct abit *a, struct abit_proc *p)
{
	size_t left = 0, i;
	int fd = -1, r = 0;

	if (p->smp || p->gone || !p->nquick)
		return 0;
	a->quick_scan = true;
	for (i = 0; i < p->npieces && !p->gone; i++) {
		struct abit_piece *g = &p->piece[i];

		if (!g->quick && !g->fresh)
			continue;
		if (!token_bucket_take(&a->budget, g->npages))
			break;
		if (!proc_pagemap(a, p, &fd))
			break;
		g->quick -= g->quick != 0; /* before the scan, which may ask for more */
		r = piece_scan(a, p, g, fd);
		if (r == -ESRCH) {
			p->gone = true;
			r = 0;
		} else if (r < 0) {
			break;
		}
		left += g->quick || g->fresh;
	}
	a->quick_scan = false;
	/* Recounted only after a whole walk; an early stop keeps the count, never below the truth.
	 */
	if (i == p->npieces)
		p->nquick = left;
	if (fd >= 0)
		close(fd);
	abit_flush(a);
	cold_flush(a);
	if (r < 0 && r != -EPERM) {
		a->error = a->error ? a->error : r;
		r = 0;
	}
	return r;
}

/* Between rounds, at each step: the pids the last listing did not hold are watched at once and
 * their pieces looked at (a readdir per step), pages newly on the slow tier wake their pieces,
 * and the quick looks of processes scanned in full are made. */
static int abit_between(struct abit *a, const struct pghotd_config *cfg)
{
	pid_t *pids;
	size_t n;
	int r;

	if (a->refreshed && a->cfg_generation == cfg->generation &&
	    proc_list_pids(a->procfs_root, &pids, &n) == 0) {
		r = abit_add_new(a, cfg, pids, n);
		if (r < 0)
			return r;
	}
	abit_follow_arrivals(a);
	for (size_t i = 0; i < a->nprocs && !stopping(a); i++)
		if (proc_quick(a, &a->procs[i]) == -EPERM)
			return -EPERM;
	return 0;
}

/* The start of a round or a step: its config, clock and demotion signals. */
static void abit_begin(struct abit *a, const struct pghotd_config *cfg, uint64_t t0)
{
	a->cfg = cfg;
	a->now_ns = t0;
	a->now_ms = t0 / 1000000;
	/* No cold list, or demotion off: every fast page stays untracked, as before demotion. */
	a->want = a->cold && cfg->demotion.enabled ? cold_list_wanted(a->cold) : 0;
	a->epoch = a->cold ? cold_list_epoch(a->cold) : 0;
	a->scanned = a->found = 0;
	a->error = 0;
}

/* The end of a round or a step: gone processes dropped, the counters; returns the verdict. */
static int abit_end(struct abit *a, uint64_t t0, bool round, int r)
{
	abit_drop_gone(a);
	abit_stat_add(a, SS_PAGES_SCANNED, a->scanned);
	abit_stat_add(a, SS_SCAN_IO_BYTES, a->io_bytes);
	a->io_bytes = 0;
	abit_stat_add(a, SS_SAMPLES, a->found);
	/* The gauge holds a whole round: its steps since the last one too (each step alone is
	 * short, and the last would hide a long re-read). */
	a->round_ns += abit_now_ns(a) - t0;
	if (a->stats && round) {
		/* relaxed: an independent gauge, like every stats counter. */
		atomic_store_explicit(&a->stats->src_scan_round_us[SRC_ABIT], a->round_ns / 1000,
				      memory_order_relaxed);
	}
	if (round)
		a->round_ns = 0;
	if (r == -EPERM) {
		snprintf(a->reason, sizeof(a->reason),
			 "%s/PID/pagemap hides page frame numbers (no CAP_SYS_ADMIN)",
			 a->procfs_root);
		return r;
	}
	if (r < 0)
		return r;
	return a->error ? a->error : (int)a->found;
}

int abit_round(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t t0 = abit_now_ns(a);
	bool regions = cfg->sources.abit.mode == ABIT_MODE_REGIONS;
	/* In mode regions only every ABIT_SAMPLES_PER_ROUND-th step is a round. */
	bool round = !regions || a->step % ABIT_SAMPLES_PER_ROUND == 0;
	int r = 0;

	if (a->reason[0])
		return -EPERM;
	abit_begin(a, cfg, t0);
	/* A reload is taken up at once: it may switch the mode. */
	if (round || cfg->generation != a->cfg_generation)
		r = abit_maybe_refresh(a, cfg);
	if (r < 0)
		return r;
	abit_configure_budget(a, cfg);
	if (round)
		a->first_thr = abit_first_threshold(a);
	if (regions) {
		r = abit_sample_all(a);
		a->step++;
	}
	if (!round && r == 0)
		r = abit_between(a, cfg);
	if (round && r == 0) {
		abit_follow_arrivals(a);
		abit_follow_epoch(a);
		if (regions)
			abit_cold_window(a);
		r = abit_scan_all(a);
		a->round++;
	}
	return abit_end(a, t0, round, r);
}

int abit_step(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t t0 = abit_now_ns(a);
	int r = 0;

	if (a->reason[0])
		return -EPERM;
	if (cfg->sources.abit.mode == ABIT_MODE_REGIONS)
		return abit_round(a, cfg);
	abit_begin(a, cfg, t0);
	if (cfg->generation != a->cfg_generation)
		r = abit_maybe_refresh(a, cfg);
	if (r < 0)
		return r;
	abit_configure_budget(a, cfg);
	r = abit_between(a, cfg);
	return abit_end(a, t0, false, r);
}

/* ---- life cycle ------------------------------------------------------------------------- */

/* The I/O ops of the source: the caller's, with the bytes they move counted for
 * pghotd_scan_io_bytes_total. */
static ssize_t counting_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct abit *a = ctx;
	ssize_t n = a->inner->pread(a->inner->ctx, fd, buf, len, off);

	a->io_bytes += n > 0 ? (uint64_t)n : 0;
	return n;
}

static ssize_t counting_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct abit *a = ctx;
	ssize_t n = a->inner->pwrite(a->inner->ctx, fd, buf, len, off);

	a->io_bytes += n > 0 ? (uint64_t)n : 0;
	return n;
}

static uint64_t counting_now_ns(void *ctx)
{
	const struct abit *a = ctx;

	return a->inner->now_ns(a->inner->ctx);
}

static long counting_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
{
	const struct abit *a = ctx;

	return a->inner->page_nodes(a->inner->ctx, pid, n, pages, status);
}

static int open_required(const char *path, int flags, const char *what, char *reason, size_t len)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	snprintf(reason, len, "no %s (%s: %s)", what, path, strerror(errno));
	return -errno;
}

int abit_new(const struct abit_deps *deps, struct abit **out)
{
	struct abit *a = calloc(1, sizeof(*a));
	char path[PATH_MAX], why[PATH_MAX + 64];
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	a->bitmap_fd = a->kpf_fd = a->w.efd = -1;
	a->slot = -1;
	a->procfs_root = strdup(deps->procfs_root);
	a->sysfs_root = strdup(deps->sysfs_root);
	if (!a->procfs_root || !a->sysfs_root)
		goto fail;
	a->sink = deps->sink;
	a->stats = deps->stats;
	a->cold = deps->cold;
	a->registry = deps->procs;
	a->inner = deps->ops ? deps->ops : &idle_io_real_ops;
	a->counting =
	    (struct idle_io_ops){.pread = counting_pread,
				 .pwrite = counting_pwrite,
				 .now_ns = counting_now_ns,
				 .page_nodes = a->inner->page_nodes ? counting_page_nodes : NULL,
				 .ctx = a};
	a->ops = &a->counting;
	a->self_pid = deps->self_pid == 0 ? getpid() : deps->self_pid;
	a->pieces_cap = deps->pieces_cap ? deps->pieces_cap
					 : abit_vmas_total_cap((uint64_t)sysconf(_SC_PHYS_PAGES));
	a->rng = deps->seed ? deps->seed : a->ops->now_ns(a->ops->ctx) ^ (uint64_t)getpid();
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", a->sysfs_root);
	r = a->bitmap_fd = open_required(path, O_RDWR, "page_idle", why, sizeof(why));
	if (r < 0)
		goto unavailable;
	snprintf(path, sizeof(path), "%s/kpageflags", a->procfs_root);
	r = a->kpf_fd = open_required(path, O_RDONLY, "kpageflags", why, sizeof(why));
	if (r < 0)
		goto unavailable;
	a->vmas.cancel = &a->w.stop;
	r = worker_init(&a->w, "abit source");
	if (r < 0) {
		log_error_errno(r, "abit source: cannot create its wake-up eventfd");
		goto fail;
	}
	*out = a;
	return 0;
unavailable:
	log_warning("abit source unavailable: %s", why);
fail:
	abit_set_active(a, 0);
	abit_free(a);
	return r;
}

void abit_free(struct abit *a)
{
	if (!a)
		return;
	abit_stop(a);
	procs_free_all(a->procs, a->nprocs);
	abit_vmas_free(&a->vmas);
	free(a->listed);
	idle_words_free(&a->words);
	if (a->bitmap_fd >= 0)
		close(a->bitmap_fd);
	if (a->kpf_fd >= 0)
		close(a->kpf_fd);
	worker_fini(&a->w);
	free(a->procfs_root);
	free(a->sysfs_root);
	free(a);
}

const char *abit_unavailable_reason(const struct abit *a)
{
	return a->reason[0] ? a->reason : NULL;
}

/* ---- thread ----------------------------------------------------------------------------- */

/* Sleeps up to ms (forever when negative), returning early when woken by abit_stop(). */
static void abit_sleep(struct abit *a, int ms)
{
	worker_sleep(&a->w, ms, NULL);
}

/* Sleep between steps: ABIT_SAMPLES_PER_ROUND a round in either mode. */
static int abit_step_ms(const struct pghotd_config *cfg)
{
	unsigned ms =
	    cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND;

	return ms ? (int)ms : 1;
}

unsigned abit_cpu_sleep_ms(uint64_t cpu_ns, unsigned pct, unsigned step_ms)
{
	uint64_t ms;

	if (pct == 0 || pct >= 100)
		return step_ms;
	/* cpu / (cpu + sleep) <= pct / 100: the wall time of the call is at least its CPU. */
	ms = cpu_ns * (100 - pct) / pct / 1000000;
	return ms > step_ms ? (unsigned)(ms < INT_MAX ? ms : INT_MAX) : step_ms;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *abit_thread(void *arg)
{
	struct abit *a = arg;
	bool failing = false;
	unsigned k = 0;

	while (!stopping(a)) {
		const struct pghotd_config *cfg = config_pub_get(a->pub, a->slot);
		uint64_t cpu0 = thread_cpu_ns();
		int r;

		if (cfg->sources.abit.enabled == SOURCE_OFF) {
			abit_set_active(a, 0);
			abit_sleep(a, (int)cfg->sources.abit.scan_interval_ms);
			continue;
		}
		/* Mode full: a round every ABIT_SAMPLES_PER_ROUND steps; mode regions counts its
		 * own. */
		r = k++ % ABIT_SAMPLES_PER_ROUND == 0 ? abit_round(a, cfg) : abit_step(a, cfg);
		if (r == -EPERM) {
			log_warning("abit source unavailable: %s", a->reason);
			abit_set_active(a, 0);
			while (!stopping(a))
				abit_sleep(a, -1);
			break;
		}
		if (r < 0 && !failing)
			log_warning_errno(r, "abit scan round failed, will retry");
		failing = r < 0;
		abit_set_active(a, !failing);
		abit_sleep(a, (int)abit_cpu_sleep_ms(thread_cpu_ns() - cpu0,
						     cfg->sources.abit.max_cpu_percent,
						     (unsigned)abit_step_ms(cfg)));
	}
	return NULL;
}

int abit_start(struct abit *a, struct config_pub *pub)
{
	int slot, r;

	if (a->w.running)
		return -EALREADY;
	slot = config_pub_register(pub);
	if (slot < 0)
		return log_error_errno(slot, "cannot register the abit source with the config");
	a->pub = pub;
	a->slot = slot;
	r = worker_start(&a->w, abit_thread, a);
	if (r < 0) {
		config_pub_unregister(pub, slot);
		a->slot = -1;
		return r;
	}
	abit_set_active(a, 1);
	return 0;
}

void abit_stop(struct abit *a)
{
	if (!a->w.running)
		return;
	worker_stop(&a->w);
	config_pub_unregister(a->pub, a->slot);
	a->slot = -1;
	abit_set_active(a, 0);
}

/* ---- introspection ---------------------------------------------------------------------- */

size_t abit_nr_procs(const struct abit *a)
{
	return a->nprocs;
}

size_t abit_nr_tracked(const struct abit *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nprocs; i++)
		for (size_t j = 0; j < a->procs[i].npieces; j++)
			n += a->procs[i].piece[j].ntracked;
	return n;
}

static const struct abit_piece *piece_at(const struct abit *a, pid_t pid, uint64_t vaddr);

int abit_piece_interval(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_piece *g = piece_at(a, pid, vaddr);

	return g ? g->interval : -ENOENT;
}

static const struct abit_piece *piece_at(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_proc *p = procs_find(a->procs, a->nprocs, pid);

	for (size_t j = 0; p && j < p->npieces; j++)
		if (vaddr >= p->piece[j].start &&
		    vaddr < p->piece[j].start + (uint64_t)p->piece[j].npages * PAGEMAP_PAGE_SIZE)
			return &p->piece[j];
	return NULL;
}

int abit_piece_watched(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_piece *g = piece_at(a, pid, vaddr);

	return g ? g->watch : -ENOENT;
}

size_t abit_nr_sample_regions(const struct abit *a, pid_t pid)
{
	const struct abit_proc *p = procs_find(a->procs, a->nprocs, pid);

	return p && p->smp ? abit_sampler_count(p->smp) : 0;
}
