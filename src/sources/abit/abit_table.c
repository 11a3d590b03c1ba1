/* abit_table: the Accessed-bit source's process table. The selected processes, sorted by pid,
 * each with its VMAs cut into 2 MiB pieces (what vmas.h lets it keep), re-read every
 * ABIT_REFRESH_ROUNDS rounds and after a reload, young ones every round, new pids at every
 * step; a piece's scan state is carried over a re-read while its range stands. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/abit/abit_table.h"
#include "sources/abit/abit_piece.h"
#include "base/log.h"
#include "table/proc_filter.h"
#include "sys/procfs.h"
#include "base/stats.h"

static void abit_stat_add_skip(struct abit *a, enum stat_abit_skip why, uint64_t n)
{
	if (a->stats)
		stats_abit_skip(a->stats, why, n);
}

int abit_table_read_stat(const struct abit *a, pid_t pid, uint64_t *start, int *cpu)
{
	struct procfs_stat st;
	int r = procfs_read_stat(a->procfs_root, pid, &st);

	if (r < 0)
		return r;
	if (st.cpu < 0)
		return -EINVAL;
	*start = st.starttime;
	*cpu = st.cpu;
	return 0;
}

static void pieces_free(struct abit_piece *reg, size_t n)
{
	for (size_t i = 0; i < n; i++)
		abit_piece_forget(&reg[i]);
	free(reg);
}

static void proc_free(struct abit_proc *p)
{
	pieces_free(p->piece, p->npieces);
	abit_sampler_free(p->smp);
}

void abit_table_free(struct abit_proc *p, size_t n)
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

/* The pieces of the VMAs in a->table.vmas, in address order. -ENOMEM. */
static int pieces_from_vmas(struct abit *a, struct abit_piece **out, size_t *nout)
{
	struct abit_piece *reg = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < a->table.vmas.n; i++) {
		if (pieces_cut(a->table.vmas.v[i].start, a->table.vmas.v[i].end, &reg, &n, &cap,
			       a->round) < 0) {
			pieces_free(reg, n);
			return -ENOMEM;
		}
	}
	*out = reg;
	*nout = n;
	return 0;
}

/* Reads pid's VMAs into a->table.vmas, keeping what its resident set (rss pages) and the source's
 * cap allow (vmas.h; a->table.pieces_used holds the pieces of every other process); counts
 * what is left out (*capped then). -errno (-ENOENT/-ESRCH: gone). */
static int proc_vmas(struct abit *a, pid_t pid, uint64_t rss, bool *capped)
{
	char path[PATH_MAX];
	uint64_t allow, left, need, cut;
	int r;

	r = procfs_path(path, sizeof(path), a->procfs_root, pid, "maps");
	if (r == 0)
		r = vmas_read_maps(&a->table.vmas, path);
	if (r < 0)
		return r;
	need = vmas_pieces(&a->table.vmas);
	left = a->table.pieces_cap > a->table.pieces_used
		   ? a->table.pieces_cap - a->table.pieces_used
		   : 0;
	allow = vmas_allowance(rss);
	if (need <= allow && need <= left)
		return 0;
	/* More than it pays for: leave out the VMAs without a resident page first. A failed
	 * read keeps them all, and the cut below still bounds the state. */
	r = procfs_path(path, sizeof(path), a->procfs_root, pid, "numa_maps");
	if (r == 0)
		r = vmas_drop_empty(&a->table.vmas, path);
	if (r == -ENOMEM || r == -ECANCELED)
		return r;
	cut = vmas_fit(&a->table.vmas, allow < left ? allow : left);
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
			abit_piece_forget(&old[i++]);
		if (i < nold && old[i].start == nw[j].start && old[i].npages == nw[j].npages) {
			nw[j] = old[i];
			old[i].ent = NULL;
			old[i++].since = NULL;
		}
	}
}

struct abit_proc *abit_table_find(struct abit_proc *p, size_t n, pid_t pid)
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

/* Builds the state of pid for the new list, reusing what old knew if it is the same
 * process (same start time). 0 with *out filled, 1 when old stands as it is (the same
 * process, its size and resident set unchanged since its maps were read: those are read
 * again only every ABIT_MAPS_KEEP_MAX re-reads then, so a process of huge maps that does
 * nothing costs a statm read, not a maps read, per re-read), or -errno (-ESRCH: gone, or a
 * kernel thread or zombie, with no address space: skip it; -ENODATA: nothing it maps can be
 * tracked yet). */
static int proc_build(struct abit *a, pid_t pid, struct abit_proc *old, struct abit_proc *out)
{
	struct abit_proc p = {.pid = pid, .cpu = -1, .node = -1, .added = a->round};
	struct procfs_statm statm;
	int cpu, r = abit_table_read_stat(a, pid, &p.starttime, &cpu);

	if (r < 0)
		return r;
	r = procfs_read_statm(a->procfs_root, pid, &statm);
	if (r < 0)
		return abit_errno_gone(r) ? -ESRCH : r;
	p.vm_size = statm.size;
	p.vm_rss = statm.resident;
	if (p.vm_size == 0)
		return -ESRCH; /* never an address space: not worth a retry */
	if (old && a->table.maps_keep && !old->capped && old->starttime == p.starttime &&
	    old->vm_size == p.vm_size && old->vm_rss == p.vm_rss &&
	    old->maps_kept < ABIT_MAPS_KEEP_MAX) {
		old->maps_kept++;
		return 1;
	}
	r = proc_vmas(a, pid, p.vm_rss, &p.capped);
	if (r < 0)
		return abit_errno_gone(r) ? -ESRCH : r;
	r = pieces_from_vmas(a, &p.piece, &p.npieces);
	if (r < 0)
		return r;
	if (!p.npieces) {
		/* Nothing mapped that could be tracked (yet). */
		free(p.piece);
		return -ENODATA;
	}
	if (old && old->starttime != p.starttime)
		old = NULL;
	if (old) {
		pieces_inherit(old->piece, old->npieces, p.piece, p.npieces);
		p.added = old->added;
		p.nquick = old->nquick; /* the inherited pieces keep their re-reads */
		p.round_used = old->round_used;
		p.wake_scans = old->wake_scans;
		p.quiet = old->quiet;
		p.woke_round = old->woke_round;
		p.sentinel = old->sentinel;
	}
	r = abit_piece_sampler(a, &p, old);
	if (r < 0) {
		pieces_free(p.piece, p.npieces);
		abit_sampler_free(p.smp);
		return r;
	}
	/* Scanned in full: the next step looks at its fresh pieces (abit_scan_quick()). */
	for (size_t i = 0; !p.smp && i < p.npieces; i++)
		p.nquick += p.piece[i].fresh && !p.piece[i].quick;
	*out = p;
	return 0;
}

static void pieces_recount(struct abit *a)
{
	a->table.pieces_used = 0;
	for (size_t i = 0; i < a->table.nprocs; i++)
		a->table.pieces_used += a->table.procs[i].npieces;
}

static int pid_cmp(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return (a > b) - (a < b);
}

/* Whether pid is among v[0..n) (sorted). */
static bool pid_in(const pid_t *v, size_t n, pid_t pid)
{
	return n && bsearch(&pid, v, n, sizeof(*v), pid_cmp);
}

/* The retry list's index of pid, or where it would go. */
static size_t retry_find(const struct abit_table_state *t, pid_t pid)
{
	size_t i = 0;

	while (i < t->nretry && t->retry[i].pid < pid)
		i++;
	return i;
}

/* pid, new to the listing, was passed over: looked at again at each step of its first
 * ABIT_REFRESH_ROUNDS rounds, while the list has room. */
static void retry_note(struct abit *a, pid_t pid)
{
	struct abit_table_state *t = &a->table;
	size_t i = retry_find(t, pid);

	if ((i < t->nretry && t->retry[i].pid == pid) || t->nretry == ABIT_RETRY_MAX)
		return;
	memmove(&t->retry[i + 1], &t->retry[i], (t->nretry - i) * sizeof(t->retry[0]));
	t->retry[i] = (struct abit_retry){.pid = pid, .until = a->round + ABIT_REFRESH_ROUNDS};
	t->nretry++;
}

static bool retry_has(const struct abit_table_state *t, pid_t pid)
{
	size_t i = retry_find(t, pid);

	return i < t->nretry && t->retry[i].pid == pid;
}

/* Keeps the retries still due: young, in the listing pids[0..n), and not watched. */
static void retry_prune(struct abit *a, const pid_t *pids, size_t n)
{
	struct abit_table_state *t = &a->table;
	size_t k = 0;

	for (size_t i = 0; i < t->nretry; i++) {
		const struct abit_retry *r = &t->retry[i];

		if (r->until >= a->round && pid_in(pids, n, r->pid) &&
		    !abit_table_find(t->procs, t->nprocs, r->pid))
			t->retry[k++] = *r;
	}
	t->nretry = k;
}

/* Re-reads the selected processes and their VMAs, keeping what is known of unchanged
 * pieces. On failure the old list stays. */
static int table_reread_all(struct abit *a, const struct pghotd_config *cfg)
{
	struct abit_proc *np, *old;
	pid_t *pids = NULL;
	size_t n = 0, k = 0;
	int r = procfs_list_pids(a->procfs_root, &pids, &n);

	if (r < 0)
		return r;
	np = calloc(n ? n : 1, sizeof(*np));
	if (!np) {
		free(pids);
		return -ENOMEM;
	}
	a->table.pieces_used = 0; /* the cap counts the new list as it is built */
	for (size_t i = 0; i < n; i++) {
		if (abit_stopping(a))
			break;
		if (!proc_selected(a, cfg, pids[i])) {
			if (!pid_in(a->table.listed, a->table.nlisted, pids[i]))
				retry_note(a, pids[i]);
			continue;
		}
		old = abit_table_find(a->table.procs, a->table.nprocs, pids[i]);
		r = proc_build(a, pids[i], old, &np[k]);
		if (r == -ENODATA && !old && !pid_in(a->table.listed, a->table.nlisted, pids[i]))
			retry_note(a, pids[i]); /* nothing mapped yet */
		if (r == -ENOMEM) {
			abit_table_free(np, k);
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
			a->table.pieces_used += np[k++].npieces;
		/* Other failures: the process exited, or is not ours to read; skip it. */
	}
	free(a->table.listed);
	a->table.listed = pids;
	a->table.nlisted = n;
	abit_table_free(a->table.procs, a->table.nprocs);
	a->table.procs = np;
	a->table.nprocs = k;
	retry_prune(a, pids, n);
	return 0;
}

/* Watches the selected processes among pids[0..n) (sorted) that the last listing did not
 * hold, from this round on rather than ABIT_REFRESH_ROUNDS later, and keeps that listing. The
 * processes already watched are left as they are: with hundreds of them and processes coming
 * and going all the time, a new pid costs its own reads, not a re-read of every watched
 * process's maps. One readdir a round (a few getdents64 calls for hundreds of pids). A new pid
 * passed over (not selected: a shell forked to exec a watched program; or nothing mapped yet)
 * is looked at again at each call of its first ABIT_REFRESH_ROUNDS rounds (the retry list).
 * Takes pids; -ENOMEM with nothing changed. */
int abit_table_add_new(struct abit *a, const struct pghotd_config *cfg, pid_t *pids, size_t n)
{
	struct abit_proc *add = NULL, *merged;
	size_t nadd = 0, cap = 0, i, j, k;
	int r;

	retry_prune(a, pids, n);
	for (i = 0, j = 0; i < n; i++) {
		bool known;

		while (j < a->table.nlisted && a->table.listed[j] < pids[i])
			j++;
		known = j < a->table.nlisted && a->table.listed[j] == pids[i];
		if (known && !retry_has(&a->table, pids[i]))
			continue;
		if (!proc_selected(a, cfg, pids[i])) {
			retry_note(a, pids[i]); /* kept as it was when known */
			continue;
		}
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
		if (r == -ENODATA)
			retry_note(a, pids[i]); /* nothing mapped yet */
		/* Other failures: exited, or not ours to read. */
		if (r == 0)
			a->table.pieces_used += add[nadd++].npieces;
		if (abit_stopping(a))
			break;
	}
	if (nadd) {
		/* Both sorted by pid: merge, so abit_table_find() keeps working. A pid watched
		 * already (gone from one listing and back) keeps its entry if it is the same
		 * process, and takes the new one if the pid was reused. */
		merged = calloc(a->table.nprocs + nadd, sizeof(*merged));
		if (!merged)
			goto nomem;
		for (i = 0, j = 0, k = 0; i < a->table.nprocs || j < nadd;) {
			if (j == nadd ||
			    (i < a->table.nprocs && a->table.procs[i].pid < add[j].pid))
				merged[k++] = a->table.procs[i++];
			else if (i < a->table.nprocs && a->table.procs[i].pid == add[j].pid &&
				 a->table.procs[i].starttime == add[j].starttime)
				proc_free(&add[j++]);
			else if (i < a->table.nprocs && a->table.procs[i].pid == add[j].pid)
				proc_free(&a->table.procs[i++]);
			else
				merged[k++] = add[j++];
		}
		free(a->table.procs);
		a->table.procs = merged;
		a->table.nprocs = k;
	}
	free(add);
	free(a->table.listed);
	a->table.listed = pids;
	a->table.nlisted = n;
	pieces_recount(a);
	return 0;
nomem:
	abit_table_free(add, nadd);
	free(pids);
	pieces_recount(a);
	return -ENOMEM;
}

void abit_table_drop_gone(struct abit *a)
{
	size_t k = 0;

	for (size_t i = 0; i < a->table.nprocs; i++) {
		if (a->table.procs[i].gone) {
			proc_free(&a->table.procs[i]);
			continue;
		}
		a->table.procs[k++] = a->table.procs[i];
	}
	a->table.nprocs = k;
	pieces_recount(a);
}

/* A process's first ABIT_REFRESH_ROUNDS rounds: its address space is being set up (found as
 * the forked parent before its exec, then its mappings and their first touches), so its maps
 * are read again every round, keeping what is known of unchanged pieces; after that only
 * with everyone's, every ABIT_REFRESH_ROUNDS rounds. -ENOMEM; a process whose maps cannot be
 * read any more is marked gone. */
static int table_reread_young(struct abit *a)
{
	for (size_t i = 0; i < a->table.nprocs; i++) {
		struct abit_proc *p = &a->table.procs[i], fresh;
		int r;

		if (p->gone || a->round >= p->added + ABIT_REFRESH_ROUNDS || p->added == a->round)
			continue;
		a->table.pieces_used -= p->npieces; /* the cap counts every other process */
		r = proc_build(a, p->pid, p, &fresh);
		if (r == 1) {
			a->table.pieces_used += p->npieces;
			continue;
		}
		if (r < 0) {
			a->table.pieces_used += p->npieces;
			if (r == -ENOMEM)
				return r;
			p->gone = true;
			continue;
		}
		proc_free(p);
		*p = fresh;
		a->table.pieces_used += p->npieces;
	}
	return 0;
}

int abit_table_refresh(struct abit *a, const struct pghotd_config *cfg)
{
	pid_t *pids;
	size_t n;
	int r;

	if (a->table.refreshed && a->table.cfg_generation == cfg->generation &&
	    a->round - a->table.last_refresh < ABIT_REFRESH_ROUNDS) {
		a->table.maps_keep = true;
		r = table_reread_young(a);
		if (r < 0)
			return r;
		r = procfs_list_pids(a->procfs_root, &pids, &n);
		return r < 0 ? 0 : abit_table_add_new(a, cfg, pids, n);
	}
	a->table.maps_keep = a->table.refreshed && a->table.cfg_generation == cfg->generation;
	r = table_reread_all(a, cfg);
	if (r < 0)
		return r;
	a->table.refreshed = true;
	a->table.last_refresh = a->round;
	a->table.cfg_generation = cfg->generation;
	return 0;
}

/* A piece is due at once, scanned every round until its scans back it off. */
void abit_piece_due_now(struct abit *a, struct abit_piece *g)
{
	g->next_round = a->round;
	g->interval = 1;
	g->idle_scans = 0;
}

void abit_proc_wake_pieces(struct abit *a, struct abit_proc *p, uint16_t above)
{
	for (size_t k = 0; k < p->npieces; k++) {
		struct abit_piece *g = &p->piece[k];

		if (above ? g->interval <= above || g->next_round <= a->round : g->used)
			continue;
		/* Arrivals leave a piece of watched fast pages only at the cold side's pace: a page
		 * of it that arrives on the slow tier was demoted as cold (a big idle buffer in
		 * DRAM would otherwise be read in full each time the slow tier grows). */
		if (above && g->nfast && g->nfast == g->ntracked)
			continue;
		if (g->next_round > a->round)
			g->next_round = a->round;
		/* Scanned in full: looked at by the next step, not the next round. */
		if (!p->smp && !g->quick) {
			g->quick = 1;
			p->nquick++;
		}
	}
}

/* The piece of p holding vaddr, or NULL. */
struct abit_piece *abit_proc_piece(struct abit_proc *p, uint64_t vaddr)
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

/* Position of a cursor: first piece of the process at or after (pid, vaddr). */
void abit_table_locate(const struct abit *a, pid_t pid, uint64_t vaddr, size_t *pi, size_t *ri)
{
	*pi = 0;
	*ri = 0;
	while (*pi < a->table.nprocs && a->table.procs[*pi].pid < pid)
		(*pi)++;
	if (*pi == a->table.nprocs) {
		*pi = 0;
		return;
	}
	if (a->table.procs[*pi].pid != pid)
		return;
	while (*ri < a->table.procs[*pi].npieces && a->table.procs[*pi].piece[*ri].start < vaddr)
		(*ri)++;
}

const struct abit_piece *abit_table_piece_at(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_proc *p = abit_table_find(a->table.procs, a->table.nprocs, pid);

	for (size_t j = 0; p && j < p->npieces; j++)
		if (vaddr >= p->piece[j].start &&
		    vaddr < p->piece[j].start + (uint64_t)p->piece[j].npages * PAGEMAP_PAGE_SIZE)
			return &p->piece[j];
	return NULL;
}
