/* workload: a memory workload for the two-tier testbed (tests/vm/). It places N MiB on the
 * slow node, hammers a hot subset of it, and records where the pages are over time.
 *
 * Placement: mbind(MPOL_BIND, slow node), touch every page, then mbind(MPOL_DEFAULT) on the
 * range. The reset matters: kernel NUMA balancing never moves pages of a range that keeps a
 * bind policy, so without it the NUMA-balancing baseline would move nothing. Pages off the
 * slow node at the first look are moved there again (move_pages(2), WL_PLACE_TRIES times at
 * most); the summary says how many stayed off (unplaced=) and counts the moves it reports
 * (*_moved_to_fast=) from the pages that were on the slow node then.
 *
 * Access: the range is cut into units (4 KiB pages, or 2 MiB with --thp on, so a hot unit is a
 * whole huge page); a seeded shuffle picks fraction*units hot units; each access reads and
 * writes one cache line of a random page of a hot unit, uniform or Zipf over the hot units.
 * --phase-change T swaps in a disjoint hot set after T seconds. --cold-sweep S reads every
 * cold page once every S seconds, the pattern of a backup or GC pass that fools promotion on
 * first or second touch.
 *
 * Output: a TSV time series (seconds, hot pages on the fast node, cold pages on the fast node,
 * accesses, phase) from move_pages(2) in query mode every --interval seconds, and one summary
 * line on stdout that scenario scripts parse. Pages are counted in 4 KiB pages. Each sample
 * also counts the page moves it sees (a page on another node than at the last sample):
 * pages moved, moves, the most moves of one page, and hot pages that left the fast node.
 * --hot-fraction 0 accesses nothing after placement: a cold ballast whose moves are counted.
 *
 * Nothing lost: placement also stamps every page with a word of its own (its last 8 bytes,
 * which the accesses never write); once the accesses end, every page's word is read back
 * (after every move and demotion pghotd or the kernel made), the summary says how many
 * differ (corrupt_pages=), and any difference prints "workload: FAIL: ..." on stdout and
 * stderr and exits 3. The hot loop is unchanged: the check costs one read per page, at the end.
 *
 * Threads: --thread-cpus 0,1 runs the accesses in one thread per listed CPU, each pinned to
 * its CPU and hammering its own contiguous share of the hot set (thread i: hot units
 * [i*n/N, (i+1)*n/N)); the main thread only samples placement and sweeps. The summary then
 * adds each thread's node (of its CPU) and the fraction of its share on that node. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "channel.h" /* tests/vm/lib/slowtier: the slow tier's plugin hooks announced code */
#include "workload_logic.h"

#define PAGE	      4096UL
#define HUGE_PAGE     (2UL << 20)
#define MPOL_DEFAULT_ 0
#define MPOL_BIND_    2
#define MPOL_MF_MOVE_ (1 << 1)
#define MAX_NODE      63
#define MAX_THREADS   8
/* Placement's retries: enough for a page a mover took during placement, few enough that a
 * node with no room ends them at once. */
#define WL_PLACE_TRIES 3

enum pattern { PAT_UNIFORM, PAT_ZIPF };

struct wl_opts {
	unsigned long size_mib;
	double hot_fraction;
	enum pattern pattern;
	double zipf_s;
	double phase_change_s; /* 0 = never */
	bool thp;
	unsigned long unit_kib; /* --unit-kib: hot unit size; 0 = a page (2 MiB with thp) */
	bool query_hot;		/* --query-hot: samples during the run query the hot pages only */
	double tlb_flush_s;	/* --tlb-flush: flush the TLB this often (0 = never) */
	double cold_sweep_s;	/* 0 = never */
	double duration_s;
	double interval_s;
	double rate; /* accesses per second, 0 = as fast as possible */
	int slow_node;
	int fast_node;
	uint64_t seed;
	bool progress;
	const char *output;
	const char *pid_file;
	const char *done_file;	 /* --report-done: the accesses ended (before the summary) */
	const char *check_after; /* --check-after: wait for it before reading pages back */
	const char *misses;	 /* where to list the hot pages not on the fast node at exit */
	int nthreads;		 /* 0: the main thread accesses; else one thread per cpu below */
	double move_at_s;	 /* --move-at: when to move the buffer to move_to (0 = never) */
	int move_to;
	unsigned long vmas;	   /* --vmas: that many more VMAs, nothing resident */
	unsigned long reserve_gib; /* --reserve-gib: a PROT_READ|MAP_NORESERVE mapping */
	int thread_cpu[MAX_THREADS];
};

struct wl;

/* An access thread of --thread-cpus: its share of the hot set, its rng and count. */
struct wl_thread {
	struct wl *w;
	pthread_t id;
	int idx, cpu, node;
	uint64_t rng;
	_Atomic uint64_t accesses; /* written by the thread, read by the sampler (relaxed) */
};

/* The state of a run; the arrays are sized by the page and unit counts. */
struct wl {
	struct wl_opts o;
	char *base;
	size_t npages;
	/* The end check (wl_verify): pages whose stamp changed, the first of them, its words. */
	size_t corrupt, bad_page;
	uint64_t bad_want, bad_got;
	size_t page_per_unit;
	size_t nunits;
	size_t nhot;	/* hot units per phase */
	size_t *order;	/* shuffled unit indices: phase p's hot set is order[p*nhot ..] */
	bool *hot_page; /* the current phase's hot pages */
	/* --query-hot: while hot_only, samples query the hot pages (hq_addr, their page indices
	 * hq_idx, nhq of them) and the cold pages keep their last status. */
	bool hot_only;
	void *flush_area; /* --tlb-flush */
	void **hq_addr;
	size_t *hq_idx;
	int *hq_status;
	size_t nhq;
	double *zipf_cdf;
	void **addrs;
	int *status;
	void **settle_addr; /* wl_settle(): the pages asked again, and their answers */
	int *settle_status;
	bool *placed;	  /* on the slow node when placement ended */
	size_t unplaced;  /* pages off the slow node then */
	size_t re_placed; /* pages placement's retries moved onto the slow node */
	int8_t *last;	  /* node of each page at the last sample (-1 none yet), for wl_track */
	uint8_t *moves;	  /* moves seen per page */
	struct wl_moves seen;
	uint64_t rng;
	uint64_t accesses;
	int phase;
	double phase_start;
	double t95[2];	 /* seconds from the phase's start to 95% of its hot set on fast; <0 none */
	double moved_at; /* --move-at: when the move ended (seconds into the run), <0 not yet */
	double t95_move; /* seconds from then to 95% of the hot set on fast again; <0 none */
	FILE *out;
	struct wl_thread thr[MAX_THREADS];
};

static volatile sig_atomic_t stop_requested;
/* Set by the main thread when the run ends; the access threads poll it (relaxed: a late
 * stop only means a few more accesses; pthread_join orders everything after). */
static atomic_bool threads_stop;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double wl_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t wl_unit(const struct wl *w, int phase, size_t i)
{
	return wl_hot_unit(w->order, w->nunits, w->nhot, phase, i);
}

static void wl_mark_phase(struct wl *w, int phase)
{
	memset(w->hot_page, 0, w->npages * sizeof(*w->hot_page));
	for (size_t i = 0; i < w->nhot; i++) {
		size_t first = wl_unit(w, phase, i) * w->page_per_unit;
		for (size_t p = 0; p < w->page_per_unit; p++)
			w->hot_page[first + p] = true;
	}
	w->phase = phase;
}

static long wl_mbind(void *addr, size_t len, int mode, int node)
{
	unsigned long mask = node >= 0 ? 1UL << node : 0;
	return syscall(SYS_mbind, addr, len, mode, node >= 0 ? &mask : NULL,
		       node >= 0 ? MAX_NODE + 2 : 0, 0);
}

/* move_pages(2) in query mode: the node of each of addrs[0..n) into status (negative errno for
 * a page not present); 0 or negative errno. ctx unused (struct wl_place_ops). */
static int wl_sys_query(void *ctx, size_t n, void **addrs, int *status)
{
	(void)ctx;
	return syscall(SYS_move_pages, 0, n, addrs, NULL, status, 0) < 0 ? -errno : 0;
}

/* move_pages(2): addrs[0..n) to node, each page's result in status; 0 or negative errno. */
static int wl_move_to(size_t n, void **addrs, int node, int *status)
{
	int *nodes = malloc((n ? n : 1) * sizeof(*nodes));
	int err = 0;

	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		nodes[i] = node;
	if (syscall(SYS_move_pages, 0, n, addrs, nodes, status, MPOL_MF_MOVE_) < 0)
		err = -errno;
	free(nodes);
	return err;
}

/* struct wl_place_ops's move: the results go to the settle scratch, unused until the end. */
static int wl_sys_move(void *ctx, size_t n, void **addrs, int node)
{
	struct wl *w = ctx;

	return wl_move_to(n, addrs, node, w->settle_status);
}

/* --query-hot: the hot pages' nodes into w->status, the others' left as they were. */
static int wl_query_hot(struct wl *w)
{
	if (!w->hq_addr) {
		size_t n = w->nhot * w->page_per_unit;

		w->hq_addr = calloc(n ? n : 1, sizeof(*w->hq_addr));
		w->hq_idx = calloc(n ? n : 1, sizeof(*w->hq_idx));
		w->hq_status = calloc(n ? n : 1, sizeof(*w->hq_status));
		if (!w->hq_addr || !w->hq_idx || !w->hq_status)
			return -ENOMEM;
		for (size_t i = 0; i < w->npages && w->nhq < n; i++)
			if (w->hot_page[i]) {
				w->hq_idx[w->nhq] = i;
				w->hq_addr[w->nhq++] = w->addrs[i];
			}
	}
	int err = wl_sys_query(NULL, w->nhq, w->hq_addr, w->hq_status);
	if (err < 0)
		return err;
	for (size_t i = 0; i < w->nhq; i++)
		w->status[w->hq_idx[i]] = w->hq_status[i];
	return 0;
}

/* Node of every page into w->status (negative errno for a page not present). */
static int wl_query(struct wl *w)
{
	if (w->hot_only)
		return wl_query_hot(w);
	return wl_sys_query(NULL, w->npages, w->addrs, w->status);
}

static void wl_count_on(const struct wl *w, int node, size_t *hot, size_t *cold)
{
	wl_count(w->status, w->hot_page, w->npages, node, hot, cold);
}

static int wl_alloc(struct wl *w)
{
	size_t len = w->o.size_mib << 20;
	size_t map_len = len + HUGE_PAGE;
	char *p = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	/* 2 MiB alignment so every unit can be one huge page. */
	w->base = (char *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
	w->npages = len / PAGE;
	w->page_per_unit = w->o.unit_kib ? w->o.unit_kib * 1024 / PAGE
			   : w->o.thp	 ? HUGE_PAGE / PAGE
					 : 1;
	w->nunits = w->npages / w->page_per_unit;
	w->nhot = (size_t)(w->o.hot_fraction * (double)w->nunits + 0.5);
	if (w->nhot == 0 && w->o.hot_fraction > 0)
		w->nhot = 1;
	w->order = calloc(w->nunits, sizeof(*w->order));
	w->hot_page = calloc(w->npages, sizeof(*w->hot_page));
	w->zipf_cdf = calloc(w->nhot, sizeof(*w->zipf_cdf));
	w->addrs = calloc(w->npages, sizeof(*w->addrs));
	w->status = calloc(w->npages, sizeof(*w->status));
	w->settle_addr = calloc(w->npages, sizeof(*w->settle_addr));
	w->settle_status = calloc(w->npages, sizeof(*w->settle_status));
	w->last = malloc(w->npages * sizeof(*w->last));
	w->moves = calloc(w->npages, sizeof(*w->moves));
	w->placed = calloc(w->npages, sizeof(*w->placed));
	if (!w->order || !w->hot_page || (w->nhot && !w->zipf_cdf) || !w->addrs || !w->status ||
	    !w->settle_addr || !w->settle_status || !w->last || !w->moves || !w->placed)
		return -ENOMEM;
	memset(w->last, -1, w->npages * sizeof(*w->last));
	for (size_t i = 0; i < w->npages; i++)
		w->addrs[i] = w->base + i * PAGE;
	return 0;
}

static int wl_place(struct wl *w)
{
	size_t len = w->npages * PAGE;
	if (madvise(w->base, len, w->o.thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
		fprintf(stderr, "workload: madvise(%s): %s, continuing\n",
			w->o.thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", strerror(errno));
	if (wl_mbind(w->base, len, MPOL_BIND_, w->o.slow_node) < 0) {
		int err = errno;
		fprintf(stderr, "workload: mbind(node %d): %s\n", w->o.slow_node, strerror(err));
		return -err;
	}
	/* One store per page, its stamp, which also places it: a second store to a freshly placed
	 * page would be its first use as the Accessed-bit source sees it, and with DRAM free that
	 * promotes it (pghotd.conf(5), promotion.threshold); even two stores a few instructions
	 * apart let a scan that lands between them see that. */
	for (size_t i = 0; i < w->npages; i++)
		wl_stamp_page((unsigned char *)w->base, PAGE, i, w->o.seed);
	/* Back to the default policy, or NUMA balancing would never move these pages. */
	if (wl_mbind(w->base, len, MPOL_DEFAULT_, -1) < 0) {
		int err = errno;
		fprintf(stderr, "workload: mbind(MPOL_DEFAULT): %s\n", strerror(err));
		return -err;
	}
	return 0;
}

/* After placement's first look (w->status): pages off the slow node go back there
 * (wl_place_retry), and what is on it then is where the summary's moves count from. A page
 * still off is reported, not fatal: the gates count moves from placed pages only. */
static int wl_place_check(struct wl *w)
{
	const struct wl_place_ops ops = {.query = wl_sys_query, .move = wl_sys_move, .ctx = w};
	size_t off = 0;

	for (size_t i = 0; i < w->npages; i++)
		off += w->status[i] != w->o.slow_node;
	long left = wl_place_retry(&ops, w->addrs, w->status, w->npages, w->o.slow_node,
				   WL_PLACE_TRIES, w->settle_addr, &w->re_placed);
	if (left < 0) {
		fprintf(stderr, "workload: move_pages(query): %s\n", strerror((int)-left));
		return (int)left;
	}
	w->unplaced = (size_t)left;
	for (size_t i = 0; i < w->npages; i++)
		w->placed[i] = w->status[i] == w->o.slow_node;
	if (off)
		fprintf(stderr,
			"workload: %zu pages were not on node %d at the first look; %zu moved there"
			" again, %zu still elsewhere after %d tries\n",
			off, w->o.slow_node, w->re_placed, w->unplaced, WL_PLACE_TRIES);
	return 0;
}

/* count accesses, each to a random page of a hot unit of rank first + [0, n) (uniform), or of
 * any rank (Zipf, the main thread only). The loop keeps what it needs in locals: its one memory
 * access besides the buffer's is the unit order's, so under the slow tier (tests/vm/README.md)
 * the buffer's node sets most of an access's cost, as a cache-missing workload's memory does. */
static void wl_touch(const struct wl *w, uint64_t *rng_io, size_t first, size_t n, int count)
{
	uint64_t rng = *rng_io;
	char *const base = w->base;
	const size_t *const order = w->order;
	const size_t nunits = w->nunits, nhot = w->nhot, per_unit = w->page_per_unit;
	const int phase = w->phase;
	const bool zipf = w->o.pattern == PAT_ZIPF;

	for (int i = 0; i < count; i++) {
		size_t rank = zipf ? wl_zipf_rank(w->zipf_cdf, nhot, wl_rand_unit(&rng))
				   : first + (size_t)(wl_rand(&rng) % n);
		uint64_t r = wl_rand(&rng);
		size_t page = wl_hot_unit(order, nunits, nhot, phase, rank) * per_unit +
			      (size_t)(r % per_unit);
		volatile uint64_t *line =
		    (volatile uint64_t *)(base + page * PAGE + ((r >> 32) % 64) * 64);
		*line += 1;
	}
	*rng_io = rng;
}

static void wl_touch_hot(struct wl *w, int count)
{
	wl_touch(w, &w->rng, 0, w->nhot, count);
	w->accesses += (uint64_t)count;
}

/* Thread i's share of the hot units: ranks [*first, *first + *n). */
static void wl_thread_share(const struct wl *w, int i, size_t *first, size_t *n)
{
	size_t k = (size_t)w->o.nthreads;

	*first = w->nhot * (size_t)i / k;
	*n = w->nhot * (size_t)(i + 1) / k - *first;
}

static void *wl_thread_main(void *arg)
{
	struct wl_thread *t = arg;
	size_t first, n;
	unsigned cpu, node;

	wl_thread_share(t->w, t->idx, &first, &n);
	if (syscall(SYS_getcpu, &cpu, &node, NULL) == 0)
		t->node = (int)node;
	while (n && !atomic_load_explicit(&threads_stop, memory_order_relaxed)) {
		wl_touch(t->w, &t->rng, first, n, 1024);
		atomic_fetch_add_explicit(&t->accesses, 1024, memory_order_relaxed);
	}
	return NULL;
}

/* Starts one access thread per --thread-cpus entry, each created pinned to its CPU. */
static int wl_threads_start(struct wl *w)
{
	for (int i = 0; i < w->o.nthreads; i++) {
		struct wl_thread *t = &w->thr[i];
		pthread_attr_t attr;
		cpu_set_t set;
		int err;

		*t = (struct wl_thread){.w = w, .idx = i, .cpu = w->o.thread_cpu[i], .node = -1};
		t->rng = w->o.seed * 7919 + (uint64_t)i + 1;
		CPU_ZERO(&set);
		CPU_SET(t->cpu, &set);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		err = pthread_create(&t->id, &attr, wl_thread_main, t);
		pthread_attr_destroy(&attr);
		if (err) {
			fprintf(stderr, "workload: thread on CPU %d: %s\n", t->cpu, strerror(err));
			return -err;
		}
	}
	return 0;
}

static void wl_threads_stop(struct wl *w)
{
	atomic_store_explicit(&threads_stop, true, memory_order_relaxed);
	for (int i = 0; i < w->o.nthreads; i++)
		pthread_join(w->thr[i].id, NULL);
}

/* The access count: the main thread's, or the sum of the threads'. */
static uint64_t wl_accesses(const struct wl *w)
{
	uint64_t n = w->accesses;

	for (int i = 0; i < w->o.nthreads; i++)
		n += atomic_load_explicit(&w->thr[i].accesses, memory_order_relaxed);
	return n;
}

static void wl_cold_sweep(struct wl *w)
{
	for (size_t i = 0; i < w->npages; i++)
		if (!w->hot_page[i])
			(void)*(volatile char *)(w->base + i * PAGE);
}

/* KiB of the buffer backed by huge pages, from pagemap and kpageflags (KPF_THP): smaps
 * misses the huge pages whose PMD NUMA balancing has made PROT_NONE. -errno when the PFNs are
 * hidden (not root) or the files are missing. */
static long wl_thp_kib_pagemap(const struct wl *w)
{
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	long kib = -ENOENT;
	if (pm < 0 || kf < 0)
		goto out;
	kib = 0;
	for (size_t i = 0; i < w->npages; i++) {
		uint64_t e, flags;
		off_t at = (off_t)(((uintptr_t)w->base / PAGE + i) * sizeof(e));
		if (pread(pm, &e, sizeof(e), at) != sizeof(e)) {
			kib = -EIO;
			break;
		}
		uint64_t pfn = e & ((1ULL << 55) - 1);
		if (!(e >> 63) || !pfn)
			continue; /* not present, or PFNs hidden */
		if (pread(kf, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) !=
		    sizeof(flags)) {
			kib = -EIO;
			break;
		}
		if (flags & (1ULL << 22)) /* KPF_THP */
			kib += PAGE / 1024;
	}
out:
	if (pm >= 0)
		close(pm);
	if (kf >= 0)
		close(kf);
	return kib;
}

static unsigned long wl_thp_kib(const struct wl *w)
{
	long kib = wl_thp_kib_pagemap(w);
	FILE *f;
	char line[256];
	unsigned long smaps_kib = 0;
	if (kib >= 0)
		return (unsigned long)kib;
	f = fopen("/proc/self/smaps_rollup", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lu kB", &smaps_kib) == 1)
			break;
	fclose(f);
	return smaps_kib;
}

/* The summary's pages that read as absent but were present before (-ENOENT: a migration
 * entry, a page the kernel is moving right then: a promoter's move or compaction) asked
 * again, every 10 ms for at most a second, so a move in flight at the last sample does not
 * count as a page that left the fast node. */
static void wl_settle(struct wl *w)
{
	for (int tries = 0; tries < 100; tries++) {
		size_t n = 0;

		for (size_t i = 0; i < w->npages; i++)
			if (w->status[i] < 0 && w->last[i] >= 0)
				w->settle_addr[n++] = w->addrs[i];
		if (n == 0)
			return;
		usleep(10000);
		if (syscall(SYS_move_pages, 0, n, w->settle_addr, NULL, w->settle_status, 0) < 0)
			return;
		n = 0;
		for (size_t i = 0; i < w->npages; i++)
			if (w->status[i] < 0 && w->last[i] >= 0)
				w->status[i] = w->settle_status[n++];
		wl_track(w->status, w->hot_page, w->npages, w->o.fast_node, w->last, w->moves,
			 &w->seen);
	}
}

/* One row of the time series; also notes when the phase's hot set first reaches 95%. */
static void wl_sample(struct wl *w, double t, bool show)
{
	size_t hot, cold;
	size_t nhot_pages = w->nhot * w->page_per_unit;
	int err = wl_query(w);
	if (err < 0) {
		fprintf(stderr, "workload: move_pages(query): %s\n", strerror(-err));
		return;
	}
	wl_track(w->status, w->hot_page, w->npages, w->o.fast_node, w->last, w->moves, &w->seen);
	wl_count_on(w, w->o.fast_node, &hot, &cold);
	if (w->t95[w->phase] < 0 && nhot_pages && (double)hot >= 0.95 * (double)nhot_pages)
		w->t95[w->phase] = t - w->phase_start;
	if (w->moved_at >= 0 && w->t95_move < 0 && nhot_pages &&
	    (double)hot >= 0.95 * (double)nhot_pages)
		w->t95_move = t - w->moved_at;
	if (w->out)
		fprintf(w->out, "%.2f\t%zu\t%zu\t%llu\t%d\n", t, hot, cold,
			(unsigned long long)wl_accesses(w), w->phase);
	if (show)
		fprintf(stderr,
			"workload: %6.1f s  hot on node %d: %zu/%zu (%.1f%%)  cold on node %d: %zu "
			" accesses: %llu\n",
			t, w->o.fast_node, hot, nhot_pages,
			nhot_pages ? 100.0 * (double)hot / (double)nhot_pages : 0.0, w->o.fast_node,
			cold, (unsigned long long)wl_accesses(w));
}

/* --move-at: every page of the buffer to node move_to, as an operator's migratepages would
 * move a stopped process (no access runs meanwhile). */
static void wl_move_all(struct wl *w)
{
	int err = wl_move_to(w->npages, w->addrs, w->o.move_to, w->status);

	if (err < 0)
		fprintf(stderr, "workload: move_pages(to node %d): %s\n", w->o.move_to,
			strerror(-err));
}

/* --tlb-flush: x86 clears a page's Accessed bit without flushing its TLB entry (page_idle,
 * ptep_clear_flush_young), so an access that hits a cached translation sets no bit. A
 * hardware TLB holds a few thousand pages and a hot set larger than that keeps evicting them;
 * the emulator's TLB holds far more, so some hot pages would look idle for good. Taking write
 * access away from a populated range of 64 pages (over the kernel's 33-page ceiling for
 * flushing page by page) flushes the whole mm's TLB, as the hardware's eviction would. */
#define TLB_FLUSH_PAGES 64
static void wl_flush_tlb(struct wl *w)
{
	if (!w->flush_area) {
		w->flush_area = mmap(NULL, TLB_FLUSH_PAGES * PAGE, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (w->flush_area == MAP_FAILED) {
			w->flush_area = NULL;
			return;
		}
	}
	mprotect(w->flush_area, TLB_FLUSH_PAGES * PAGE, PROT_READ);
	mprotect(w->flush_area, TLB_FLUSH_PAGES * PAGE, PROT_READ | PROT_WRITE);
}

static void wl_pace(const struct wl *w, double t)
{
	double ahead = (double)w->accesses / w->o.rate - t;
	if (ahead > 0.001) {
		struct timespec ts = {(time_t)ahead, (long)((ahead - (double)(time_t)ahead) * 1e9)};
		nanosleep(&ts, NULL);
	}
}

static void wl_loop(struct wl *w)
{
	double start, t = 0;
	double next_sample = 0, next_sweep = w->o.cold_sweep_s, next_progress = 1.0;
	double next_flush = w->o.tlb_flush_s;
	/* Accesses between clock reads: about 100 ms worth when paced (samples stay on time
	 * to a tenth of a second, and hundreds of paced processes wake ten times a second each,
	 * not a hundred), 1024 when not. */
	int batch = w->o.rate > 0 && w->o.rate < 10240 ? 1 + (int)(w->o.rate / 10) : 1024;
	/* The first sample asks for every page (1M pages at 4 GiB: half a second in the
	 * emulator, with no access made): the clock starts after it, with the accesses. */
	wl_sample(w, 0, w->o.progress);
	w->hot_only = w->o.query_hot;
	start = wl_now();
	next_sample = w->o.interval_s;
	while (!stop_requested && t < w->o.duration_s) {
		if (w->o.nthreads || w->nhot == 0) {
			struct timespec ms = {0, 1000000};

			/* The threads access, or nothing does (a ballast); this one samples. */
			nanosleep(&ms, NULL);
		} else {
			wl_touch_hot(w, batch);
		}
		t = wl_now() - start;
		if (w->o.move_at_s > 0 && w->moved_at < 0 && t >= w->o.move_at_s) {
			wl_move_all(w);
			t = w->moved_at = wl_now() - start;
		}
		if (w->o.phase_change_s > 0 && w->phase == 0 && t >= w->o.phase_change_s) {
			wl_mark_phase(w, 1);
			w->phase_start = t;
		}
		if (w->o.tlb_flush_s > 0 && t >= next_flush) {
			wl_flush_tlb(w);
			next_flush += w->o.tlb_flush_s;
		}
		if (wl_sweep_due(t, next_sweep, w->o.cold_sweep_s, w->o.duration_s)) {
			wl_cold_sweep(w);
			next_sweep += w->o.cold_sweep_s;
		}
		if (t >= next_sample) {
			bool show = w->o.progress && t >= next_progress;
			wl_sample(w, t, show);
			while (next_progress <= t)
				next_progress += 1.0;
			next_sample += w->o.interval_s;
		}
		if (w->o.rate > 0)
			wl_pace(w, t);
	}
	w->hot_only = false; /* the summary counts every page */
	wl_sample(w, wl_now() - start, w->o.progress);
	wl_settle(w);
}

/* Lists the current phase's hot pages that are not on the fast node: index, address, node
 * (or negative errno) a line each, to see which pages a promoter missed. */
static int wl_write_misses(const struct wl *w, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		int err = errno;
		fprintf(stderr, "workload: cannot write %s: %s\n", path, strerror(err));
		return -err;
	}
	fprintf(f, "# page\taddress\tnode\n");
	for (size_t i = 0; i < w->npages; i++)
		if (w->hot_page[i] && w->status[i] != w->o.fast_node)
			fprintf(f, "%zu\t%p\t%d\n", i, w->addrs[i], w->status[i]);
	return fclose(f) == 0 ? 0 : -errno;
}

/* Each thread's node and the fraction of its share of the hot set on that node. */
static void wl_summary_threads(const struct wl *w)
{
	printf(" thread_nodes=");
	for (int i = 0; i < w->o.nthreads; i++)
		printf("%s%d", i ? "," : "", w->thr[i].node);
	printf(" thread_own_fraction=");
	for (int i = 0; i < w->o.nthreads; i++) {
		size_t first, n, own = 0, pages = 0;

		wl_thread_share(w, i, &first, &n);
		for (size_t r = first; r < first + n; r++) {
			size_t p0 = wl_unit(w, w->phase, r) * w->page_per_unit;

			for (size_t p = p0; p < p0 + w->page_per_unit; p++, pages++)
				own += w->status[p] == w->thr[i].node;
		}
		printf("%s%.4f", i ? "," : "", pages ? (double)own / (double)pages : 0.0);
	}
}

/* Pages on node that belong to no phase's hot set (with --phase-change, neither the first
 * set nor the one that replaces it): a mover that put them there was fooled. -1 on ENOMEM. */
static long wl_never_hot_on(const struct wl *w, int node)
{
	int phases = w->o.phase_change_s > 0 ? 2 : 1;
	bool *ever = calloc(w->npages, sizeof(*ever));
	long n = 0;

	if (!ever)
		return -1;
	for (int ph = 0; ph < phases; ph++)
		for (size_t i = 0; i < w->nhot; i++) {
			size_t first = wl_unit(w, ph, i) * w->page_per_unit;

			for (size_t p = 0; p < w->page_per_unit; p++)
				ever[first + p] = true;
		}
	for (size_t p = 0; p < w->npages; p++)
		n += !ever[p] && w->status[p] == node;
	free(ever);
	return n;
}

static void wl_summary(struct wl *w, size_t start_on_slow)
{
	size_t hot, cold, hot_up, cold_up;
	size_t nhot_pages = w->nhot * w->page_per_unit;
	size_t ncold = w->npages - nhot_pages;
	wl_count_on(w, w->o.fast_node, &hot, &cold);
	wl_count_moved(w->status, w->placed, w->hot_page, w->npages, w->o.fast_node, &hot_up,
		       &cold_up);
	printf("workload: pages=%zu hot_pages=%zu start_on_slow=%zu unplaced=%zu re_placed=%zu"
	       " hot_on_fast=%zu cold_on_fast=%zu hot_moved_to_fast=%zu cold_moved_to_fast=%zu"
	       " hot_fast_fraction=%.4f cold_moved_fraction=%.4f accesses=%llu thp_kib=%lu"
	       " pages_moved=%zu moves=%zu moves_max=%u hot_demoted=%zu corrupt_pages=%zu",
	       w->npages, nhot_pages, start_on_slow, w->unplaced, w->re_placed, hot, cold, hot_up,
	       cold_up, nhot_pages ? (double)hot / (double)nhot_pages : 0.0,
	       ncold ? (double)cold_up / (double)ncold : 0.0, (unsigned long long)wl_accesses(w),
	       wl_thp_kib(w), w->seen.moved, w->seen.total, w->seen.max, w->seen.hot_demoted,
	       w->corrupt);
	for (int p = 0; p <= (w->o.phase_change_s > 0 ? 1 : 0); p++) {
		if (w->t95[p] >= 0)
			printf(" t95_hot%s=%.2f", p ? "_phase2" : "", w->t95[p]);
		else
			printf(" t95_hot%s=none", p ? "_phase2" : "");
	}
	if (w->o.phase_change_s > 0)
		printf(" never_hot_on_fast=%ld", wl_never_hot_on(w, w->o.fast_node));
	if (w->o.move_at_s > 0 && w->t95_move >= 0)
		printf(" t95_after_move=%.2f", w->t95_move);
	else if (w->o.move_at_s > 0)
		printf(" t95_after_move=none");
	if (w->o.move_at_s > 0 && w->moved_at >= 0)
		printf(" moved_at=%.2f", w->moved_at);
	if (w->o.nthreads)
		wl_summary_threads(w);
	printf("\n");
	fflush(stdout);
}

/* --vmas and --reserve-gib: mappings beside the buffer that cost the kernel nothing resident
 * but make the process's maps long or its address space huge, as a hostile process would. */
static int wl_hostile_maps(const struct wl *w)
{
	size_t n = w->o.vmas;
	char *p;

	if (w->o.reserve_gib &&
	    mmap(NULL, w->o.reserve_gib << 30, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
		fprintf(stderr, "workload: cannot reserve %lu GiB: %s\n", w->o.reserve_gib,
			strerror(errno));
		return -errno;
	}
	if (!n)
		return 0;
	p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	for (size_t i = 1; i < n; i += 2)
		if (mprotect(p + i * PAGE, PAGE, PROT_READ) < 0) {
			fprintf(stderr, "workload: mprotect of VMA %zu of %zu: %s\n", i, n,
				strerror(errno));
			return -errno;
		}
	return 0;
}

static void wl_report_corrupt(const struct wl *w, FILE *f)
{
	fprintf(f,
		"workload: FAIL: %zu of %zu pages changed content after the moves (page %zu at %p: "
		"expected %#llx, read %#llx)\n",
		w->corrupt, w->npages, w->bad_page, (void *)(w->base + w->bad_page * PAGE),
		(unsigned long long)w->bad_want, (unsigned long long)w->bad_got);
	fflush(f);
}

static void wl_usage(FILE *f)
{
	fprintf(
	    f,
	    "Usage: workload [OPTION]...\n"
	    "Places a buffer on the slow node, accesses a hot set of it and records page "
	    "placement.\n\n"
	    "  -s, --size-mib N        buffer size in MiB (64)\n"
	    "  -f, --hot-fraction F    fraction of the buffer that is hot, 0 <= F <= 1 (0.1); with "
	    "0\n"
	    "                          nothing is accessed after placement (a cold ballast)\n"
	    "  -p, --pattern P         uniform or zipf (uniform)\n"
	    "      --zipf-s S          Zipf exponent (1.0)\n"
	    "      --phase-change T    move the hot set after T seconds (never)\n"
	    "      --thp on|off        huge pages; with on, hot units are 2 MiB (off)\n"
	    "      --unit-kib N        hot units of N KiB (a multiple of 4; with --thp on, of\n"
	    "                          2048), contiguous pages hot together (a page; 2 MiB with "
	    "THP)\n"
	    "      --cold-sweep S      read every cold page once every S seconds (never)\n"
	    "  -d, --duration T        seconds of access (10)\n"
	    "  -i, --interval T        seconds between placement samples (0.5)\n"
	    "      --query-hot         samples during the run ask move_pages(2) for the hot pages\n"
	    "                          only (the cold pages' figures then come from the first and\n"
	    "                          last samples): for buffers of gigabytes, whose full query\n"
	    "                          would take the access loop's time\n"
	    "      --tlb-flush T       flush the TLB every T seconds, as a hardware TLB's "
	    "evictions\n"
	    "                          would (the emulator's TLB keeps hot translations, whose\n"
	    "                          Accessed bits x86 then never sets again) (never)\n"
	    "      --rate N            accesses per second, 0 = as fast as possible (0)\n"
	    "      --slow-node N       node the buffer starts on (1)\n"
	    "      --fast-node N       node counted as fast (0)\n"
	    "      --seed N            hot set and access seed (1)\n"
	    "  -o, --output FILE       TSV time series (none; - for stdout)\n"
	    "      --report-pid FILE   write the pid here once the buffer is placed\n"
	    "      --report-done FILE  write the pid here once the accesses end (before the\n"
	    "                          summary and exit, which take long for a big buffer)\n"
	    "      --check-after FILE  once the accesses end, wait (60 s at most) until FILE\n"
	    "                          exists before reading every page back: a script stops\n"
	    "                          the movers first, so the reads are not taken for use\n"
	    "      --progress          a progress line on stderr every second\n"
	    "      --misses FILE       at exit, list the hot pages not on the fast node\n"
	    "      --thread-cpus LIST  access from one thread per CPU of LIST (0,1), each on its\n"
	    "                          own contiguous share of the hot set (uniform only)\n"
	    "      --move-at T         after T seconds move the whole buffer to --move-to's node,\n"
	    "                          accesses paused (as migratepages moves a stopped process);\n"
	    "                          the summary adds t95_after_move (from the move's end) and\n"
	    "                          moved_at (the move's end, seconds into the run)\n"
	    "      --move-to N         the node of --move-at (1)\n"
	    "      --vmas N            also map N pages apart from the buffer, every other one\n"
	    "                          read-only: N more VMAs, none resident (a hostile process)\n"
	    "      --reserve-gib G     also map G GiB PROT_READ|MAP_NORESERVE, never touched\n"
	    "Summary line on stdout: workload: pages= hot_pages= start_on_slow= unplaced=\n"
	    "re_placed= (placement: pages off the slow node after its retries, pages the retries\n"
	    "moved there) hot_on_fast= cold_on_fast= hot_moved_to_fast= cold_moved_to_fast=\n"
	    "(of the pages on the slow node after placement) hot_fast_fraction=\n"
	    "cold_moved_fraction= (cold_moved_to_fast of all cold pages) accesses= thp_kib=\n"
	    "pages_moved= moves= moves_max= hot_demoted= (page moves seen between samples)\n"
	    "t95_hot=\n"
	    "[thread_nodes=N,.. thread_own_fraction=F,..]\n");
}

static int wl_parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min && v <= max))
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_ZIPF_S = 256,
	OPT_PHASE,
	OPT_THP,
	OPT_UNIT,
	OPT_QUERY_HOT,
	OPT_TLB_FLUSH,
	OPT_SWEEP,
	OPT_RATE,
	OPT_SLOW,
	OPT_FAST,
	OPT_SEED,
	OPT_PID,
	OPT_DONE,
	OPT_CHECK_AFTER,
	OPT_PROGRESS,
	OPT_MISSES,
	OPT_THREADS,
	OPT_MOVE_AT,
	OPT_MOVE_TO,
	OPT_VMAS,
	OPT_RESERVE
};

/* --thread-cpus: a comma list of up to MAX_THREADS CPU numbers. */
static int wl_parse_cpus(struct wl_opts *o, const char *arg)
{
	const char *p = arg;

	o->nthreads = 0;
	while (*p) {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || v < 0 || v >= CPU_SETSIZE || o->nthreads == MAX_THREADS ||
		    (*end && *end != ','))
			return -EINVAL;
		o->thread_cpu[o->nthreads++] = (int)v;
		p = *end ? end + 1 : end;
	}
	return o->nthreads ? 0 : -EINVAL;
}

static int wl_parse_one(struct wl_opts *o, int c, const char *arg)
{
	double v;
	switch (c) {
	case 's':
		if (wl_parse_double(arg, 1, 1 << 20, &v) < 0)
			return -EINVAL;
		o->size_mib = (unsigned long)v;
		return 0;
	case 'f':
		return wl_parse_double(arg, 0, 1, &o->hot_fraction);
	case 'p':
		if (!strcmp(arg, "uniform"))
			o->pattern = PAT_UNIFORM;
		else if (!strcmp(arg, "zipf"))
			o->pattern = PAT_ZIPF;
		else
			return -EINVAL;
		return 0;
	case OPT_ZIPF_S:
		return wl_parse_double(arg, 0, 10, &o->zipf_s);
	case OPT_PHASE:
		return wl_parse_double(arg, 0, 1e6, &o->phase_change_s);
	case OPT_THP:
		if (strcmp(arg, "on") && strcmp(arg, "off"))
			return -EINVAL;
		o->thp = !strcmp(arg, "on");
		return 0;
	case OPT_UNIT:
		if (wl_parse_double(arg, 4, 1 << 20, &v) < 0 || (unsigned long)v % 4 ||
		    v != (double)(unsigned long)v)
			return -EINVAL;
		o->unit_kib = (unsigned long)v;
		return 0;
	case OPT_QUERY_HOT:
		o->query_hot = true;
		return 0;
	case OPT_TLB_FLUSH:
		return wl_parse_double(arg, 0.001, 1e6, &o->tlb_flush_s);
	case OPT_SWEEP:
		return wl_parse_double(arg, 0, 1e6, &o->cold_sweep_s);
	case 'd':
		return wl_parse_double(arg, 0, 1e6, &o->duration_s);
	case 'i':
		return wl_parse_double(arg, 0.01, 1e6, &o->interval_s);
	case OPT_RATE:
		return wl_parse_double(arg, 0, 1e12, &o->rate);
	case OPT_SLOW:
	case OPT_FAST:
		if (wl_parse_double(arg, 0, MAX_NODE, &v) < 0)
			return -EINVAL;
		*(c == OPT_SLOW ? &o->slow_node : &o->fast_node) = (int)v;
		return 0;
	case OPT_SEED:
		if (wl_parse_double(arg, 0, 1e15, &v) < 0)
			return -EINVAL;
		o->seed = (uint64_t)v;
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case OPT_PID:
		o->pid_file = arg;
		return 0;
	case OPT_DONE:
		o->done_file = arg;
		return 0;
	case OPT_CHECK_AFTER:
		o->check_after = arg;
		return 0;
	case OPT_PROGRESS:
		o->progress = true;
		return 0;
	case OPT_MISSES:
		o->misses = arg;
		return 0;
	case OPT_THREADS:
		return wl_parse_cpus(o, arg);
	case OPT_MOVE_AT:
		return wl_parse_double(arg, 0, 1e6, &o->move_at_s);
	case OPT_MOVE_TO:
		if (wl_parse_double(arg, 0, MAX_NODE, &v) < 0)
			return -EINVAL;
		o->move_to = (int)v;
		return 0;
	case OPT_VMAS:
	case OPT_RESERVE:
		if (wl_parse_double(arg, 0, c == OPT_VMAS ? 1 << 20 : 1 << 16, &v) < 0)
			return -EINVAL;
		*(c == OPT_VMAS ? &o->vmas : &o->reserve_gib) = (unsigned long)v;
		return 0;
	}
	return -EINVAL;
}

static int wl_parse(int argc, char **argv, struct wl_opts *o)
{
	static const struct option longopts[] = {
	    {"size-mib", required_argument, NULL, 's'},
	    {"hot-fraction", required_argument, NULL, 'f'},
	    {"pattern", required_argument, NULL, 'p'},
	    {"zipf-s", required_argument, NULL, OPT_ZIPF_S},
	    {"phase-change", required_argument, NULL, OPT_PHASE},
	    {"thp", required_argument, NULL, OPT_THP},
	    {"unit-kib", required_argument, NULL, OPT_UNIT},
	    {"query-hot", no_argument, NULL, OPT_QUERY_HOT},
	    {"tlb-flush", required_argument, NULL, OPT_TLB_FLUSH},
	    {"cold-sweep", required_argument, NULL, OPT_SWEEP},
	    {"duration", required_argument, NULL, 'd'},
	    {"interval", required_argument, NULL, 'i'},
	    {"rate", required_argument, NULL, OPT_RATE},
	    {"slow-node", required_argument, NULL, OPT_SLOW},
	    {"fast-node", required_argument, NULL, OPT_FAST},
	    {"seed", required_argument, NULL, OPT_SEED},
	    {"output", required_argument, NULL, 'o'},
	    {"report-pid", required_argument, NULL, OPT_PID},
	    {"report-done", required_argument, NULL, OPT_DONE},
	    {"check-after", required_argument, NULL, OPT_CHECK_AFTER},
	    {"progress", no_argument, NULL, OPT_PROGRESS},
	    {"misses", required_argument, NULL, OPT_MISSES},
	    {"thread-cpus", required_argument, NULL, OPT_THREADS},
	    {"move-at", required_argument, NULL, OPT_MOVE_AT},
	    {"move-to", required_argument, NULL, OPT_MOVE_TO},
	    {"vmas", required_argument, NULL, OPT_VMAS},
	    {"reserve-gib", required_argument, NULL, OPT_RESERVE},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "s:f:p:d:i:o:h", longopts, NULL)) != -1) {
		if (c == 'h') {
			wl_usage(stdout);
			exit(0);
		}
		if (c == '?' || wl_parse_one(o, c, optarg) < 0) {
			if (c != '?')
				fprintf(stderr, "workload: bad value for option: %s\n",
					argv[optind - 1]);
			wl_usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "workload: unexpected argument: %s\n", argv[optind]);
		return -EINVAL;
	}
	if (o->move_at_s > 0 && o->nthreads) {
		fprintf(stderr,
			"workload: --move-at moves from the main thread: no --thread-cpus\n");
		return -EINVAL;
	}
	if (o->nthreads && (o->pattern != PAT_UNIFORM || o->phase_change_s > 0)) {
		fprintf(stderr,
			"workload: --thread-cpus takes the uniform pattern, no phase change\n");
		return -EINVAL;
	}
	if (o->thp && o->size_mib % 2) {
		fprintf(stderr, "workload: --thp on needs an even --size-mib\n");
		return -EINVAL;
	}
	if (o->query_hot && (o->phase_change_s > 0 || o->move_at_s > 0)) {
		fprintf(stderr, "workload: --query-hot takes no --phase-change or --move-at\n");
		return -EINVAL;
	}
	if ((o->thp && o->unit_kib % 2048) ||
	    o->size_mib * 1024 % (o->unit_kib ? o->unit_kib : 4)) {
		fprintf(stderr, "workload: --unit-kib must divide --size-mib (and be a multiple of "
				"2048 with --thp on)\n");
		return -EINVAL;
	}
	return 0;
}

/* Writes the pid to path (--report-pid, --report-done). */
/* Waits until path exists, polling every 10 ms, at most WL_CHECK_WAIT_S seconds (then says
 * so and goes on: the check still runs, with the movers maybe still at work). */
#define WL_CHECK_WAIT_S 60
static void wl_wait_file(const char *path)
{
	struct timespec ms = {0, 10000000};
	for (int i = 0; i < WL_CHECK_WAIT_S * 100; i++) {
		if (access(path, F_OK) == 0)
			return;
		nanosleep(&ms, NULL);
	}
	fprintf(stderr, "workload: %s did not appear within %d s; checking the pages now\n", path,
		WL_CHECK_WAIT_S);
}

static int wl_write_pid(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0) {
		fprintf(stderr, "workload: cannot write %s: %s\n", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static int wl_open_output(struct wl *w)
{
	if (!w->o.output)
		return 0;
	w->out = strcmp(w->o.output, "-") ? fopen(w->o.output, "w") : stdout;
	if (!w->out) {
		fprintf(stderr, "workload: cannot open %s: %s\n", w->o.output, strerror(errno));
		return -errno;
	}
	setvbuf(w->out, NULL, _IOLBF, 0);
	fprintf(w->out, "# seconds\thot_node%d\tcold_node%d\taccesses\tphase\n", w->o.fast_node,
		w->o.fast_node);
	return 0;
}

int main(int argc, char **argv)
{
	static struct wl w = {
	    .o = {.size_mib = 64,
		  .hot_fraction = 0.1,
		  .zipf_s = 1.0,
		  .duration_s = 10,
		  .interval_s = 0.5,
		  .slow_node = 1,
		  .fast_node = 0,
		  .move_to = 1,
		  .seed = 1},
	    .t95 = {-1, -1},
	    .moved_at = -1,
	    .t95_move = -1,
	};
#if defined(__x86_64__)
	/* Under the testbed's slow tier (tests/vm/README.md) this code's accesses are the ones
	 * charged; elsewhere two harmless loads. */
	slowtier_hook_self();
#endif
	size_t on_slow = 0, ignored;
	if (wl_parse(argc, argv, &w.o) < 0)
		return 2;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	int err = wl_alloc(&w);
	if (err < 0) {
		fprintf(stderr, "workload: cannot allocate %lu MiB: %s\n", w.o.size_mib,
			strerror(-err));
		return 1;
	}
	w.rng = w.o.seed;
	wl_shuffle(w.order, w.nunits, &w.rng);
	if (w.nhot)
		wl_zipf_build(w.zipf_cdf, w.nhot, w.o.zipf_s);
	wl_mark_phase(&w, 0);
	if (wl_place(&w) < 0 || wl_query(&w) < 0 || wl_place_check(&w) < 0 ||
	    wl_hostile_maps(&w) < 0)
		return 1;
	wl_count_on(&w, w.o.slow_node, &on_slow, &ignored);
	on_slow += ignored;
	fprintf(stderr, "workload: %zu pages (%zu hot in %zu-page units, %s), %zu on node %d\n",
		w.npages, w.nhot * w.page_per_unit, w.page_per_unit,
		w.o.pattern == PAT_ZIPF ? "zipf" : "uniform", on_slow, w.o.slow_node);
	if (wl_open_output(&w) < 0)
		return 1;
	if (w.o.pid_file && wl_write_pid(w.o.pid_file) < 0)
		return 1;
	if (wl_threads_start(&w) < 0)
		return 1;
	wl_loop(&w);
	wl_threads_stop(&w);
	if (w.o.done_file && wl_write_pid(w.o.done_file) < 0)
		return 1;
	if (w.o.check_after)
		wl_wait_file(w.o.check_after);
	w.corrupt = wl_verify((unsigned char *)w.base, w.npages, PAGE, w.o.seed, &w.bad_page,
			      &w.bad_want, &w.bad_got);
	wl_summary(&w, on_slow);
	if (w.corrupt) {
		/* On both streams: scenarios keep stdout, the console keeps stderr, and
		 * tests/vm/lib/run fails any run whose results hold this line. */
		wl_report_corrupt(&w, stdout);
		wl_report_corrupt(&w, stderr);
		return 3;
	}
	if (w.o.misses && wl_write_misses(&w, w.o.misses) < 0)
		return 1;
	if (w.out && w.out != stdout)
		fclose(w.out);
	return 0;
}
