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
 * - getppid: the bare cost of entering the kernel, for scale.
 * Lazy sampling (abit_sample.h) costs pagemap + bitmap_write + bitmap_read per page, and
 * kpageflags more for a page found used.
 *
 * Needs root and page_idle (the VM guest of make bench-vm): without them it says so and
 * exits 77, as a skipped test does.
 *
 * Usage: bench_idle_io [--size-mib N] [--samples N] [--node N]   (256, 5000, 1)
 * Last line: sample_us: <pagemap + bitmap_write + bitmap_read, microseconds>. */
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

#define PAGE	  UINT64_C(4096)
#define PFN_MASK  ((UINT64_C(1) << 55) - 1)
#define KINDS	  5
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

int main(int argc, char **argv)
{
	static const char *const names[KINDS] = {"pagemap", "bitmap_write", "bitmap_read",
						 "kpageflags", "getppid"};
	size_t mib = 256, n = 5000, pages;
	int node = 1, pm, bm, kf;
	unsigned long mask;
	uint64_t *pfn, *va, seed = 88172645463325252u;
	double took[KINDS] = {0}, t0;
	char *buf;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--size-mib") == 0)
			mib = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--samples") == 0)
			n = strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--node") == 0)
			node = atoi(argv[i + 1]);
		else
			break;
	}
	if (argc % 2 == 0 || mib == 0 || n == 0 || node < 0 || node > 63) {
		fprintf(stderr, "usage: bench_idle_io [--size-mib N] [--samples N] [--node N]\n");
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
	if (!pfn || !va)
		return die("calloc");
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17; /* xorshift64 */
		va[i] = (uint64_t)(uintptr_t)(buf + seed % pages * PAGE);
	}
	t0 = now_s();
	for (size_t i = 0; i < n; i++) {
		uint64_t e = 0;

		if (pread(pm, &e, 8, (off_t)(va[i] / PAGE * 8)) != 8)
			return die("pagemap");
		pfn[i] = e & PFN_MASK;
		if (!pfn[i]) {
			fprintf(stderr, "bench_idle_io: pagemap hides PFNs (not root?)\n");
			return SKIP_CODE;
		}
	}
	took[0] = now_s() - t0;
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
	printf("pages: %zu (%zu MiB on node %d), samples: %zu, microseconds per call:\n", pages,
	       mib, node, n);
	for (int k = 0; k < KINDS; k++)
		printf("%s: %.2f\n", names[k], took[k] / (double)n * 1e6);
	printf("sample_us: %.2f\n", (took[0] + took[1] + took[2]) / (double)n * 1e6);
	return 0;
}
