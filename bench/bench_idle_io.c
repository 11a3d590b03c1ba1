/* bench_idle_io: what each kind of 8-byte call the Accessed-bit source makes costs on this
 * kernel, so the sampler's cost per page can be read as the sum of its calls.
 *
 * A buffer of base pages (mbind to --node, default 1) is touched, then for the same
 * --samples random pages of it each kind of call is timed in turn, once per page:
 * - pagemap: an 8-byte pread of the page's /proc/self/pagemap entry (on 6.1 the kernel walks
 *   the page tables from there to the end of the 2 MiB, filling a 4 KiB buffer);
 * - bitmap_write: an 8-byte pwrite of /sys/kernel/mm/page_idle/bitmap with the page's bit
 *   alone set (one page marked idle: a reverse-map walk);
 * - bitmap_read: an 8-byte pread of the same word (the kernel looks up all 64 pages of the
 *   word, and walks the reverse map of each one marked idle);
 * - kpageflags: an 8-byte pread of the page's /proc/kpageflags entry;
 * - getppid: the bare cost of entering the kernel, for scale;
 * - pagemap_drawn: the pagemap read again, for as many pages drawn as the daemon draws them
 *   (abit_regions over the buffer, half of the draws in the last pages of a 2 MiB piece, where
 *   the walk to the piece's end is short), in regions of up to --region-mib (16: the daemon's
 *   at 4 GiB with its 1000 regions; a region smaller than a piece often holds no piece end
 *   and is drawn from uniformly).
 * Lazy sampling (abit_sampler.h) costs pagemap + bitmap_write + bitmap_read per page, and
 * kpageflags more for a page found used; sample_drawn_us is that sum with the daemon's
 * draws (the bitmap calls cost the same wherever the page lies).
 *
 * Needs root and page_idle (the VM guest of make bench-vm): without them it says so and
 * exits 77, as a skipped test does.
 *
 * Usage: bench_idle_io [--size-mib N] [--samples N] [--node N] [--region-mib N]
 *        (256, 5000, 1, 16)
 * Last lines: sample_drawn_us: <pagemap_drawn + bitmap_write + bitmap_read>, then
 * sample_us: <pagemap + bitmap_write + bitmap_read, microseconds>. */
#include <errno.h>
#include <fcntl.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sources/abit/abit_regions.h"
#include "sources/abit/abit_sampler.h"

#define PAGE	  UINT64_C(4096)
#define PFN_MASK  ((UINT64_C(1) << 55) - 1)
#define KINDS	  6
#define SKIP_CODE 77

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Seconds for one 8-byte call per PFN on fd: at the PFN's bitmap word (word; a write sets
 * its bit alone) or at its own entry; -1 when a call fails (errno set). */
static double timed_calls(int fd, const uint64_t *pfn, size_t n, bool word, bool write)
{
	double t0 = now_s();

	for (size_t i = 0; i < n; i++) {
		uint64_t v = UINT64_C(1) << (pfn[i] % 64);
		off_t off = (off_t)(word ? pfn[i] / 64 * 8 : pfn[i] * 8);

		if ((write ? pwrite(fd, &v, 8, off) : pread(fd, &v, 8, off)) != 8)
			return -1;
	}
	return now_s() - t0;
}

static int die(const char *what)
{
	fprintf(stderr, "bench_idle_io: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Fills va[0..n) with pages of [buf, buf + len) drawn as the daemon draws its samples: regions
 * with its parameters over the buffer, all of them sampled at each step. */
static int daemon_draws(char *buf, size_t len, size_t region_mib, uint64_t *va, size_t n)
{
	uint32_t min = (uint32_t)((len + (region_mib << 20) - 1) / (region_mib << 20));
	struct abit_regions_params p = {.min_regions = min,
					.max_regions = 4 * min,
					.samples_per_aggr = 8,
					.page_size = PAGE,
					.piece_pages = ABIT_PIECE_PAGES,
					.tail_pages = ABIT_SAMPLE_PIECE_END_PAGES};
	struct abit_range r = {(uint64_t)(uintptr_t)buf, (uint64_t)(uintptr_t)buf + len};
	uint64_t state = 7, *addr = calloc(4 * (size_t)min, sizeof(*addr));
	bool *acc = calloc(4 * (size_t)min, sizeof(*acc));
	struct abit_regions *rs;
	size_t k = 0;
	int m = 0;

	if (!addr || !acc ||
	    abit_regions_new(&p, (struct abit_rng){.next = abit_rng_splitmix64, .ctx = &state},
			     &rs) < 0)
		return -1;
	if (abit_regions_update(rs, &r, 1) < 0)
		n = k + 1; /* fails below */
	while (k < n) {
		abit_regions_wake(rs);
		m = abit_regions_prepare(rs, addr, 4 * (size_t)min);
		if (m <= 0 || abit_regions_check(rs, acc, (size_t)m) < 0)
			break;
		for (int i = 0; i < m && k < n; i++)
			if (addr[i])
				va[k++] = addr[i];
	}
	abit_regions_free(rs);
	free(addr);
	free(acc);
	return k == n ? 0 : -1;
}

/* Seconds for one 8-byte pagemap read per page of va[0..n); pfn[i] gets its PFN (NULL: not
 * kept). -1 on a failed read, -2 when pagemap hides PFNs. */
static double timed_pagemap(int pm, const uint64_t *va, uint64_t *pfn, size_t n)
{
	double t0 = now_s();

	for (size_t i = 0; i < n; i++) {
		uint64_t e = 0;

		if (pread(pm, &e, 8, (off_t)(va[i] / PAGE * 8)) != 8)
			return -1;
		if (!(e & PFN_MASK))
			return -2;
		if (pfn)
			pfn[i] = e & PFN_MASK;
	}
	return now_s() - t0;
}

int main(int argc, char **argv)
{
	static const char *const names[KINDS] = {"pagemap",    "bitmap_write", "bitmap_read",
						 "kpageflags", "getppid",      "pagemap_drawn"};
	size_t mib = 256, n = 5000, region_mib = 16, pages;
	int node = 1, pm, bm, kf;
	unsigned long mask;
	uint64_t *pfn, *va, *drawn, seed = 88172645463325252u;
	double took[KINDS] = {0}, t0;
	char *buf;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--size-mib") == 0)
			mib = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--samples") == 0)
			n = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--node") == 0)
			node = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--region-mib") == 0)
			region_mib = strtoul(argv[i + 1], NULL, 0);
		else
			break;
	}
	if (argc % 2 == 0 || mib == 0 || n == 0 || node < 0 || node > 63 || region_mib == 0) {
		fprintf(stderr, "usage: bench_idle_io [--size-mib N] [--samples N] [--node N] "
				"[--region-mib N]\n");
		return 2;
	}
	bm = open("/sys/kernel/mm/page_idle/bitmap", O_RDWR | O_CLOEXEC);
	kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (bm < 0 || kf < 0 || pm < 0) {
		printf("bench_idle_io: skipped: page_idle, kpageflags or pagemap not open to us "
		       "(%s)\n",
		       strerror(errno));
		return SKIP_CODE;
	}
	pages = mib * (UINT64_C(1) << 20) / PAGE;
	buf = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return die("mmap");
	mask = 1UL << node;
	if (mbind(buf, pages * PAGE, MPOL_BIND, &mask, 64, 0) < 0)
		return die("mbind");
	madvise(buf, pages * PAGE, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < pages; i++)
		buf[i * PAGE] = 1;
	pfn = calloc(n, sizeof(*pfn));
	va = calloc(n, sizeof(*va));
	drawn = calloc(n, sizeof(*drawn));
	if (!pfn || !va || !drawn)
		return die("calloc");
	if (daemon_draws(buf, pages * PAGE, region_mib, drawn, n) < 0) {
		fprintf(stderr, "bench_idle_io: cannot draw samples as the daemon does\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
		va[i] = (uint64_t)(uintptr_t)(buf + seed % pages * PAGE);
	}
	took[0] = timed_pagemap(pm, va, pfn, n);
	took[5] = took[0] < 0 ? took[0] : timed_pagemap(pm, drawn, NULL, n);
	if (took[0] == -2 || took[5] == -2) {
		fprintf(stderr, "bench_idle_io: pagemap hides PFNs (not root?)\n");
		return SKIP_CODE;
	}
	if (took[0] < 0 || took[5] < 0)
		return die("pagemap");
	took[1] = timed_calls(bm, pfn, n, true, true);
	took[2] = timed_calls(bm, pfn, n, true, false);
	took[3] = timed_calls(kf, pfn, n, false, false);
	if (took[1] < 0 || took[2] < 0 || took[3] < 0)
		return die(took[1] < 0	 ? "bitmap write"
			   : took[2] < 0 ? "bitmap read"
					 : "kpageflags");
	t0 = now_s();
	for (size_t i = 0; i < n; i++)
		(void)getppid();
	took[4] = now_s() - t0;
	printf("pages: %zu (%zu MiB on node %d), samples: %zu, drawn in regions of up to %zu "
	       "MiB, microseconds per call:\n",
	       pages, mib, node, n, region_mib);
	for (int k = 0; k < KINDS; k++)
		printf("%s: %.2f\n", names[k], took[k] / (double)n * 1e6);
	printf("sample_drawn_us: %.2f\n", (took[5] + took[1] + took[2]) / (double)n * 1e6);
	printf("sample_us: %.2f\n", (took[0] + took[1] + took[2]) / (double)n * 1e6);
	return 0;
}
