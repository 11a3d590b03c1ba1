/* bench_abit: the Accessed-bit source's full scan (sources.abit.mode = "full") on a real
 * kernel (needs page_idle, CAP_SYS_ADMIN and a slow node: run it in the VM testbed's guest;
 * elsewhere it prints why it skips, exit 0).
 *
 * Benchmark (default): maps --size-mib MiB on the first slow node, learns it with one round,
 * then alternates, --reps times: touch every page (so every region stays due), one timed
 * abit_round over this process while its I/O is recorded, touch again, and a timed replay of
 * exactly the recorded syscalls (pagemap preads, bitmap reads and writes with the same
 * offsets, sizes and data). The replay is the bare cost of the work; the ratio is what the
 * source's logic (process and VMA refresh, decoding, word sets, events) adds on top.
 * Last line: abit_vs_raw: <median abit time / median raw time>.
 *
 * Hot-set check (--hotset [--thp]): the same buffer, a known hot set (every 8th page, or every
 * other 2 MiB THP), touched before each of --rounds rounds. Passes when the pages reported
 * are exactly the hot set (with --thp: one event per hot THP, at its head). Exit 1 on
 * failure, printing the first differences.
 *
 * Demotion's share (--watch-fast): the buffer's second half is placed on the first fast node
 * instead, and that node is watched for demotion (a cold list wanting it), so every round also
 * tracks the idle ages of those fast pages: the ratio then includes the work demotion adds
 * (the fast pages' I/O is recorded and replayed like the slow pages').
 *
 * Usage: bench_abit [--size-mib N] [--reps N] [--watch-fast] [--hotset [--thp] [--rounds N]] */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sources/abit/abit_source.h"
#include "sources/abit/abit_sampler.h"
#include "table/cold_list.h"
#include "base/config.h"
#include "sources/abit/idle_bitmap.h"
#include "base/log.h"
#include "base/stats.h"
#include "sys/topology.h"

#define PAGE  4096u
#define HUGE  (2u << 20)
#define MAXIO 200000

struct io_rec {
	int fd;
	bool write;
	bool nodes; /* a page_nodes (move_pages) query of len pages at off */
	uint32_t len;
	uint64_t off;
	uint64_t data_at; /* offset in the data log, writes only */
};

struct bench {
	size_t size, npages;
	char *buf;
	bool thp;
	int fast;		/* --watch-fast: the second half's node, else -1 */
	struct cold_list *cold; /* --watch-fast: wants node fast */
	struct topology *topo;
	struct pghotd_config *cfg;
	struct stats stats;
	struct abit *a;
	/* events */
	uint64_t nev, nev_outside;
	uint8_t *seen; /* per page of buf: reported */
	/* I/O recording */
	bool recording;
	struct io_rec *rec;
	size_t nrec;
	char *data;
	size_t ndata, data_cap;
};

static ssize_t rec_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct bench *b = ctx;

	if (b->recording && b->nrec < MAXIO)
		b->rec[b->nrec++] = (struct io_rec){.fd = fd, .len = (uint32_t)len, .off = off};
	return idle_io_real_ops.pread(NULL, fd, buf, len, off);
}

static ssize_t rec_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct bench *b = ctx;

	if (b->recording && b->nrec < MAXIO && b->ndata + len <= b->data_cap) {
		b->rec[b->nrec++] = (struct io_rec){
		    .fd = fd, .write = true, .len = (uint32_t)len, .off = off, .data_at = b->ndata};
		memcpy(b->data + b->ndata, buf, len);
		b->ndata += len;
	}
	return idle_io_real_ops.pwrite(NULL, fd, buf, len, off);
}

static long rec_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
{
	struct bench *b = ctx;

	if (b->recording && b->nrec < MAXIO)
		b->rec[b->nrec++] = (struct io_rec){
		    .fd = -1, .nodes = true, .len = (uint32_t)n, .off = (uintptr_t)pages[0]};
	return idle_io_real_ops.page_nodes(NULL, pid, n, pages, status);
}

static uint64_t rec_now(void *ctx)
{
	(void)ctx;
	return idle_io_real_ops.now_ns(NULL);
}

static void sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		 size_t n)
{
	struct bench *b = ctx;
	uint64_t lo = (uintptr_t)b->buf, hi = lo + b->size;

	(void)cfg;
	for (size_t i = 0; i < n; i++) {
		b->nev++;
		if (ev[i].vaddr >= lo && ev[i].vaddr < hi)
			b->seen[(ev[i].vaddr - lo) / PAGE] = 1;
		else
			b->nev_outside++;
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void touch(struct bench *b, size_t step)
{
	for (size_t i = 0; i < b->npages; i += step)
		((volatile char *)b->buf)[i * PAGE] += 1;
}

static int skip(const char *why)
{
	printf("bench_abit: skipped: %s\n", why);
	return 0;
}

/* Maps and faults in the buffer on node (its second half on b->fast when that is >= 0); THP
 * or base pages as asked. */
static int place(struct bench *b, int node)
{
	unsigned long mask = 1ul << node, fmask = b->fast >= 0 ? 1ul << b->fast : 0;
	size_t half = b->size / 2 / HUGE * HUGE;
	char *raw =
	    mmap(NULL, b->size + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (raw == MAP_FAILED)
		return -errno;
	b->buf = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
	if (madvise(b->buf, b->size, b->thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE) < 0)
		return -errno;
	if (mbind(b->buf, b->size, MPOL_BIND, &mask, sizeof(mask) * 8, 0) < 0)
		return -errno;
	if (fmask &&
	    mbind(b->buf + half, b->size - half, MPOL_BIND, &fmask, sizeof(fmask) * 8, 0) < 0)
		return -errno;
	memset(b->buf, 1, b->size);
	/* The last pages faulted in wait in a per-CPU batch before they join an LRU list, and
	 * page_idle cannot mark a page off the LRU: until something drains the batch they go
	 * untracked (13 of 16384 in one guest run, 2 of them hot, so the check failed). A
	 * move_pages(2) call drains every CPU's batch (lru_cache_disable()); this one asks to
	 * move the first page to the node it is on, which moves nothing. */
	{
		void *first = b->buf;
		int to = node, st;

		if (move_pages(0, 1, &first, &to, &st, MPOL_MF_MOVE) < 0)
			return -errno;
	}
	return 0;
}

static size_t count_on_node(struct bench *b, int node)
{
	size_t on = 0;
	void **pages = malloc(b->npages * sizeof(*pages));
	int *status = malloc(b->npages * sizeof(*status));

	for (size_t i = 0; pages && status && i < b->npages; i++)
		pages[i] = b->buf + i * PAGE;
	if (pages && status && move_pages(0, b->npages, pages, NULL, status, 0) == 0)
		for (size_t i = 0; i < b->npages; i++)
			on += status[i] == node;
	free(pages);
	free(status);
	return on;
}

static const struct idle_io_ops rec_ops_template = {
    .pread = rec_pread, .pwrite = rec_pwrite, .now_ns = rec_now, .page_nodes = rec_page_nodes};

static int setup(struct bench *b, struct idle_io_ops *ops)
{
	struct config_errors errs = {0};
	struct abit_deps d = {
	    .procfs_root = "/proc",
	    .sysfs_root = "/sys",
	    .sink = {.deliver = sink, .ctx = b},
	    .stats = &b->stats,
	    .ops = ops,
	    .self_pid = -1, /* the buffer is in this process */
	};
	int r;

	*ops = rec_ops_template;
	ops->ctx = b;
	r = config_load_string("processes: { include_comm = [\"bench_abit\"]; };\n"
			       "sources: { abit: { scan_interval_ms = 10; mode = \"full\";"
			       " max_pages_per_sec = 67108864; }; };\n"
			       "promotion: { cooldown_ms = 1000; };\n"
			       "demotion: { min_idle_ms = 1000; };",
			       "bench", &b->cfg, &errs);

	if (r < 0)
		return r;
	if (b->fast >= 0) {
		r = cold_list_new(4096, &b->cold);
		if (r < 0)
			return r;
		cold_list_want(b->cold, UINT64_C(1) << b->fast);
		d.cold = b->cold;
	}
	b->cfg->topo = b->topo;
	stats_init(&b->stats, b->topo->nr_nodes);
	return abit_new(&d, &b->a);
}

/* Replays the recorded syscalls; pagemap reads go to this process's pagemap. */
static double replay(struct bench *b, int bitmap_fd, int kpf_fd)
{
	double t0 = now_s();
	int pm = open("/proc/self/pagemap", O_RDONLY);
	char scratch[IDLE_BITMAP_IO_MAX * 2];
	void *pages[ABIT_PIECE_PAGES];
	int status[ABIT_PIECE_PAGES];

	for (size_t i = 0; i < b->nrec; i++) {
		const struct io_rec *r = &b->rec[i];

		if (r->nodes) {
			for (uint32_t k = 0; k < r->len && k < ABIT_PIECE_PAGES; k++)
				pages[k] = (char *)(uintptr_t)r->off + (size_t)k * PAGE;
			if (move_pages(0, r->len, pages, NULL, status, 0) < 0)
				perror("move_pages");
			continue;
		}
		int fd = r->fd == bitmap_fd || r->fd == kpf_fd ? r->fd : pm;
		size_t len = r->len > sizeof(scratch) ? sizeof(scratch) : r->len;
		ssize_t n = r->write ? pwrite(fd, b->data + r->data_at, r->len, (off_t)r->off)
				     : pread(fd, scratch, len, (off_t)r->off);

		(void)n;
	}
	close(pm);
	return now_s() - t0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, c = *(const double *)y;

	return (a > c) - (a < c);
}

/* The fds abit keeps open: found by their targets in /proc/self/fd. */
static int find_fd(const char *target)
{
	for (int fd = 3; fd < 1024; fd++) {
		char path[64], link[256];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, target) == 0)
			return fd;
	}
	return -1;
}

static int bench_cost(struct bench *b, int reps)
{
	double ratio[64], ta[64], tr[64], gib = (double)b->size / (1u << 30);
	int bitmap_fd = find_fd("/sys/kernel/mm/page_idle/bitmap");
	int kpf_fd = find_fd("/proc/kpageflags");
	size_t nrec = 0;

	b->rec = calloc(MAXIO, sizeof(*b->rec));
	b->data_cap = 64u << 20;
	b->data = malloc(b->data_cap);
	if (!b->rec || !b->data)
		return 1;
	for (int i = 0; i < reps; i++) {
		double t0;
		int r;

		touch(b, 1);
		b->nrec = b->ndata = 0;
		b->recording = true;
		t0 = now_s();
		r = abit_round(b->a, b->cfg);
		ta[i] = now_s() - t0;
		b->recording = false;
		if (r < 0) {
			fprintf(stderr, "bench_abit: round failed: %s\n", strerror(-r));
			return 1;
		}
		nrec = b->nrec;
		touch(b, 1);
		tr[i] = replay(b, bitmap_fd, kpf_fd);
		ratio[i] = ta[i] / tr[i];
		printf("rep %d: abit %.2f ms, raw %.2f ms, %zu syscalls, %d accesses\n", i,
		       ta[i] * 1e3, tr[i] * 1e3, nrec, r);
	}
	qsort(ta, (size_t)reps, sizeof(double), cmp_double);
	qsort(tr, (size_t)reps, sizeof(double), cmp_double);
	qsort(ratio, (size_t)reps, sizeof(double), cmp_double);
	printf("pages: %zu (%s), syscalls per round: %zu\n", b->npages, b->thp ? "THP" : "4 KiB",
	       nrec);
	printf("abit_round_ms_per_gib: %.1f\n", ta[reps / 2] * 1e3 / gib);
	printf("raw_ms_per_gib: %.1f\n", tr[reps / 2] * 1e3 / gib);
	printf("per-rep ratio: min %.3f median %.3f max %.3f\n", ratio[0], ratio[reps / 2],
	       ratio[reps - 1]);
	/* Ratio of the medians: one rep disturbed by the host (TCG) moves it least. */
	printf("abit_vs_raw: %.3f\n", ta[reps / 2] / tr[reps / 2]);
	return 0;
}

/* page_idle cannot track a page whose bitmap word the kernel will not read: the last word
 * below max_pfn when the last node's end is not 64-page aligned. */
static bool page_trackable(struct bench *b, size_t i)
{
	int pm = open("/proc/self/pagemap", O_RDONLY);
	int bm = open("/sys/kernel/mm/page_idle/bitmap", O_RDONLY);
	uint64_t e = 0, w;
	bool ok = false;

	if (pm >= 0 && bm >= 0 &&
	    pread(pm, &e, 8, (off_t)(((uintptr_t)b->buf / PAGE + i) * 8)) == 8)
		ok = pread(bm, &w, 8, (off_t)((e & ((UINT64_C(1) << 55) - 1)) / 64 * 8)) == 8;
	if (pm >= 0)
		close(pm);
	if (bm >= 0)
		close(bm);
	return ok;
}

static int hotset_check(struct bench *b, int rounds)
{
	size_t step = b->thp ? 2 * HUGE / PAGE : 8; /* every other THP, or every 8th page */
	size_t unit = b->thp ? HUGE / PAGE : 1;	    /* pages per tracked unit */
	size_t missing = 0, extra = 0, hot = 0, untrackable = 0;

	for (int i = 0; i < rounds; i++) {
		int r;

		touch(b, step);
		r = abit_round(b->a, b->cfg);
		if (r < 0) {
			fprintf(stderr, "bench_abit: round failed: %s\n", strerror(-r));
			return 1;
		}
		printf("round %d: %d accesses\n", i + 1, r);
	}
	for (size_t i = 0; i < b->npages; i++) {
		bool want = i % step == 0;
		bool head = i % unit == 0;

		hot += want;
		if (want && !b->seen[i] && !page_trackable(b, i))
			untrackable++;
		else if (want && !b->seen[i] && missing++ < 5)
			printf("missing: page %zu\n", i);
		if ((!want || !head) && b->seen[i] && extra++ < 5)
			printf("extra: page %zu%s\n", i, head ? "" : " (not a THP head)");
	}
	printf("hotset: %zu hot units, %zu missing, %zu extra, %zu untrackable (page_idle's "
	       "partial last word), %zu tracked, %llu events (%llu outside the buffer)\n",
	       hot, missing, extra, untrackable, abit_nr_tracked(b->a), (unsigned long long)b->nev,
	       (unsigned long long)b->nev_outside);
	if (b->thp && abit_nr_tracked(b->a) > b->npages / unit + 64)
		printf("hotset: FAIL: THP tails tracked\n");
	else if (missing || extra)
		printf("hotset: FAIL\n");
	else {
		printf("hotset: PASS\n");
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct bench b = {.size = 256u << 20, .fast = -1};
	struct idle_io_ops ops;
	bool hotset = false, watch_fast = false;
	int reps = 7, rounds = 4, slow = -1, r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size-mib") && i + 1 < argc)
			b.size = (size_t)strtoul(argv[++i], NULL, 10) << 20;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hotset"))
			hotset = true;
		else if (!strcmp(argv[i], "--thp"))
			b.thp = true;
		else if (!strcmp(argv[i], "--watch-fast"))
			watch_fast = true;
		else {
			fprintf(
			    stderr,
			    "usage: %s [--size-mib N] [--reps N] [--watch-fast] [--hotset [--thp] "
			    "[--rounds N]]\n",
			    argv[0]);
			return 2;
		}
	}
	if (reps < 1 || reps > 64 || b.size == 0)
		return 2;
	b.npages = b.size / PAGE;
	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	if (access("/sys/kernel/mm/page_idle/bitmap", R_OK | W_OK) < 0)
		return skip("no /sys/kernel/mm/page_idle/bitmap (or not writable)");
	if (topology_load("/sys", &b.topo) < 0)
		return skip("cannot read the topology");
	for (int n = 0; n < b.topo->nr_nodes && slow < 0; n++)
		if (topology_node_is_slow(b.topo, n))
			slow = n;
	if (slow < 0)
		return skip("no slow memory node");
	for (int n = 0; watch_fast && n < b.topo->nr_nodes && b.fast < 0; n++)
		if (topology_node_is_fast(b.topo, n))
			b.fast = n;
	if (watch_fast && b.fast < 0)
		return skip("no fast memory node");
	b.seen = calloc(b.npages, 1);
	r = b.seen ? place(&b, slow) : -ENOMEM;
	if (r < 0) {
		fprintf(stderr, "bench_abit: cannot place %zu MiB on node %d: %s\n", b.size >> 20,
			slow, strerror(-r));
		return 1;
	}
	printf("buffer: %zu MiB, %zu of %zu pages on slow node %d\n", b.size >> 20,
	       count_on_node(&b, slow), b.npages, slow);
	if (b.fast >= 0)
		printf("watched for demotion: %zu pages on fast node %d\n",
		       count_on_node(&b, b.fast), b.fast);
	if (setup(&b, &ops) < 0)
		return skip("the abit source is unavailable (see the log line above)");
	r = abit_round(b.a, b.cfg); /* learn the buffer: marks it, reports nothing */
	if (r == -EPERM)
		return skip(abit_unavailable_reason(b.a));
	printf("learned: %zu pages tracked\n", abit_nr_tracked(b.a));
	memset(b.seen, 0, b.npages);
	b.nev = b.nev_outside = 0;
	r = hotset ? hotset_check(&b, rounds) : bench_cost(&b, reps);
	abit_free(b.a);
	cold_list_free(b.cold);
	b.cfg->topo = NULL;
	config_free(b.cfg);
	topology_free(b.topo);
	return r;
}
