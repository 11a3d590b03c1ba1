/* promoter_ops: see promoter_ops.h for the contract. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <numaif.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "sys/pagemap.h"
#include "sys/procfs.h"
#include "mover/promoter_ops.h"
#include "sys/topology.h"

void promoter_sys_init(struct promoter_sys *s, const char *procfs_root)
{
	memset(s, 0, sizeof(*s));
	s->procfs_root = procfs_root ? procfs_root : "/proc";
	s->pagemap_fd = -1;
	s->pinned_cpu = -1;
}

/* The pagemap file of the process sized last is kept open until the end of the interval
 * (release()): opening it cost several times the scan of a 512-page batch, and an interval
 * sizes one process's pages in many batches. Never kept across intervals, so a reused pid
 * cannot meet a stale fd later on. */
static void pagemap_cache_drop(struct promoter_sys *s)
{
	if (s->pagemap_fd >= 0)
		close(s->pagemap_fd);
	s->pagemap_fd = -1;
	s->pagemap_pid = 0;
}

void promoter_sys_fini(struct promoter_sys *s)
{
	pagemap_cache_drop(s);
}

static long real_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages,
			    const int *nodes, int *status, int flags)
{
	long r;

	(void)ctx;
	r = move_pages(pid, count, pages, nodes, status, flags);
	return r < 0 ? -errno : r;
}

static int real_run_near(void *ctx, pid_t pid)
{
	struct promoter_sys *s = ctx;
	struct procfs_stat st;
	cpu_set_t one;
	int cpu;

	if (procfs_read_stat(s->procfs_root, pid, &st) < 0 || st.cpu < 0 || st.cpu >= CPU_SETSIZE)
		return -ESRCH;
	cpu = st.cpu;
	if (!s->anywhere_saved) {
		if (sched_getaffinity(0, sizeof(s->anywhere), &s->anywhere) < 0)
			return -errno;
		s->anywhere_saved = true;
	}
	if (!CPU_ISSET(cpu, &s->anywhere))
		return -EPERM; /* a CPU pghotd may not use (cpuset): stay where we are */
	if (cpu == s->pinned_cpu)
		return 0;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return -errno;
	s->pinned_cpu = cpu;
	return 0;
}

static void real_run_anywhere(void *ctx)
{
	struct promoter_sys *s = ctx;

	if (s->pinned_cpu < 0)
		return;
	if (sched_setaffinity(0, sizeof(s->anywhere), &s->anywhere) < 0)
		log_warning_errno(-errno, "cannot restore the promoter's CPU affinity");
	s->pinned_cpu = -1;
}

static uint64_t real_now_ms(void *ctx)
{
	(void)ctx;
	return clock_monotonic_ms();
}

/* Each node's kernel mark, re-read when promoter_marks_due() (kept in s between reads); a
 * failure says so once and leaves the marks unknown (0) until a read succeeds. */
bool promoter_marks_due(const struct topology *t, uint64_t last_ms, uint64_t now)
{
	if (!last_ms || now >= last_ms + PROMOTER_MARKS_FAR_MS)
		return true;
	if (now < last_ms + PROMOTER_MARKS_MS)
		return false;
	for (int n = 0; n < t->nr_nodes && n < CONFIG_MAX_NODES; n++)
		if (t->node[n].present && t->node[n].mem_mark &&
		    t->node[n].mem_free / PROMOTER_MARKS_NEAR < t->node[n].mem_mark)
			return true;
	return false;
}

static void refresh_marks(struct promoter_sys *s, struct topology *t, uint64_t now)
{
	int r;

	for (int n = 0; n < t->nr_nodes && n < CONFIG_MAX_NODES; n++)
		t->node[n].mem_mark = s->marks[n];
	if (!promoter_marks_due(t, s->marks_ms, now))
		return;
	s->marks_ms = now ? now : 1;
	r = topology_read_marks(t, s->procfs_root);
	if (r < 0 && !s->marks_failed)
		log_warning_errno(r,
				  "cannot read %s/zoneinfo: promotions and loans may take nodes "
				  "below the kernel's watermarks",
				  s->procfs_root);
	s->marks_failed = r < 0;
	for (int n = 0; n < CONFIG_MAX_NODES; n++)
		s->marks[n] = t->node[n].mem_mark;
}

static int real_refresh_free(void *ctx, struct topology *t)
{
	struct promoter_sys *s = ctx;
	int r = topology_refresh_free(t);

	if (r < 0)
		return r;
	refresh_marks(s, t, clock_monotonic_ms());
	return 0;
}

/* PAGEMAP_SCAN (Linux 6.7) is missing from bookworm's 6.1 uapi headers. */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_HUGE (1 << 6)
#endif

/* Addresses further apart than this get separate scans: the scan walks the gap. */
#define SCAN_GAP (UINT64_C(2) << 20)
#define SCAN_VEC 64
struct size_ctx {
	uint64_t base, huge;
};

/* One PAGEMAP_SCAN over [addrs[0], addrs[n-1]] (ascending): marks huge-mapped addresses. */
static int scan_cluster(int fd, const struct size_ctx *z, const uint64_t *addrs, size_t n,
			uint64_t *sizes)
{
	struct page_region vec[SCAN_VEC];
	uint64_t end = (addrs[n - 1] & ~(z->base - 1)) + z->base;
	struct pm_scan_arg a = {
	    .size = sizeof(a),
	    .start = addrs[0] & ~(z->base - 1),
	    .end = end,
	    .vec = (uintptr_t)vec,
	    .vec_len = SCAN_VEC,
	    .category_mask = PAGE_IS_HUGE,
	    .return_mask = PAGE_IS_HUGE,
	};
	size_t i = 0;

	for (;;) {
		int got = ioctl(fd, PAGEMAP_SCAN, &a);

		if (got < 0)
			return -errno;
		for (int v = 0; v < got; v++) {
			while (i < n && addrs[i] < vec[v].start)
				i++;
			for (; i < n && addrs[i] < vec[v].end; i++)
				sizes[i] = z->huge;
		}
		if (got < SCAN_VEC || a.walk_end >= end || a.walk_end <= a.start)
			return 0;
		a.start = a.walk_end;
	}
}

static int sizes_by_scan(int fd, const struct size_ctx *z, const uint64_t *addrs, size_t n,
			 uint64_t *sizes)
{
	size_t i = 0;

	while (i < n) {
		size_t j = i + 1;
		int r;

		while (j < n && addrs[j] >= addrs[j - 1] && addrs[j] - addrs[j - 1] <= SCAN_GAP)
			j++;
		r = scan_cluster(fd, z, addrs + i, j - i, sizes + i);
		if (r < 0)
			return r;
		i = j;
	}
	return 0;
}

/* Pagemap entries read in one pread: 4 KiB, one 2 MiB region's worth. */
#define PM_WINDOW 512

int promoter_sizes_by_kpageflags(int fd, const char *kpageflags, uint64_t base,
				 const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	uint64_t pm[PM_WINDOW], huge = promoter_pmd_size(base), per_huge = huge / base;
	int kfd = -1;

	for (size_t i = 0, j; i < n; i = j) {
		uint64_t first = addrs[i] / base, flags, pfn;
		ssize_t got;

		/* A run of ascending addresses within one window: one pread for all of them. */
		for (j = i + 1;
		     j < n && addrs[j] >= addrs[j - 1] && addrs[j] / base - first < PM_WINDOW; j++)
			;
		got = pread(fd, pm, (size_t)(addrs[j - 1] / base - first + 1) * sizeof(*pm),
			    (off_t)(first * sizeof(*pm)));
		for (size_t k = i; got > 0 && k < j; k++) {
			uint64_t at = addrs[k] / base - first;

			if ((at + 1) * sizeof(*pm) > (uint64_t)got || !pagemap_present(pm[at]))
				continue;
			pfn = pagemap_pfn(pm[at]);
			/* Only a PFN at the address's offset in its PMD can be a PMD-mapped THP:
			 * the rest are base pages without asking kpageflags (1 in 512 asks). */
			if (!pfn || pfn % per_huge != addrs[k] / base % per_huge)
				continue;
			if (kfd < 0 && (kfd = open(kpageflags, O_RDONLY | O_CLOEXEC)) < 0)
				return -errno;
			if (pread(kfd, &flags, sizeof(flags), (off_t)(pfn * sizeof(flags))) ==
				sizeof(flags) &&
			    (kpf_test(flags, KPF_THP) || kpf_test(flags, KPF_HUGE)))
				sizes[k] = huge;
		}
	}
	if (kfd >= 0)
		close(kfd);
	return 0;
}

static int pagemap_open(struct promoter_sys *s, pid_t pid)
{
	int fd;

	if (s->pagemap_fd >= 0 && s->pagemap_pid == pid)
		return s->pagemap_fd;
	pagemap_cache_drop(s);
	fd = procfs_open_pagemap(s->procfs_root, pid);
	if (fd < 0)
		return fd;
	s->pagemap_pid = pid;
	s->pagemap_fd = fd;
	return fd;
}

static int real_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	struct promoter_sys *s = ctx;
	long ps = sysconf(_SC_PAGESIZE);
	char kpageflags[PATH_MAX];
	struct size_ctx z;
	int fd, r;

	z.base = ps > 0 ? (uint64_t)ps : 4096;
	z.huge = promoter_pmd_size(z.base);
	for (size_t i = 0; i < n; i++)
		sizes[i] = z.base;
	if (n == 0)
		return 0;
	fd = pagemap_open(s, pid);
	if (fd < 0)
		return fd;
	/* Kernels before 6.7 answer -ENOTTY (or -EINVAL): asked once, then pagemap and
	 * kpageflags. */
	r = s->no_pagemap_scan ? -ENOTTY : sizes_by_scan(fd, &z, addrs, n, sizes);
	if (r == -ENOTTY || r == -EINVAL) {
		s->no_pagemap_scan = true;
		snprintf(kpageflags, sizeof(kpageflags), "%s/kpageflags", s->procfs_root);
		r = promoter_sizes_by_kpageflags(fd, kpageflags, z.base, addrs, n, sizes);
	}
	if (r < 0)
		pagemap_cache_drop(s); /* the process may be gone: do not keep its fd */
	return r;
}

static void real_release(void *ctx)
{
	pagemap_cache_drop(ctx);
}

const struct promoter_ops promoter_real_ops = {
    .move_pages = real_move_pages,
    .now_ms = real_now_ms,
    .refresh_free = real_refresh_free,
    .page_sizes = real_page_sizes,
    .run_near = real_run_near,
    .run_anywhere = real_run_anywhere,
    .release = real_release,
    .ctx = NULL,
};
