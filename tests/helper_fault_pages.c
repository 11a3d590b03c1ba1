/* helper_fault_pages: a workload with a known fault pattern, for the replay and sampler tests.
 * Maps HOT + COLD anonymous pages; faults each COLD page once, and each HOT page ROUNDS times
 * (MADV_DONTNEED between rounds drops them, so the next touch faults again). Writes
 * "pid=<pid> hot=0x<addr> cold=0x<addr> pages=<n> rounds=<n>" to argv[1] (or stdout) before
 * touching anything, and, when argv[2] is given, waits until that file exists first (so a
 * parent can open its counters on the pid before the faults start). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES  16
#define ROUNDS 8

static void touch(volatile char *p, long page, int n)
{
	for (int i = 0; i < n; i++)
		p[(long)i * page] = (char)i;
}

static void wait_for(const char *path)
{
	struct timespec ts = {0, 1000000};

	for (int i = 0; i < 10000 && access(path, F_OK) != 0; i++)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	char *hot, *cold, tmp[4096];
	FILE *f = stdout;

	if (argc > 1) { /* written whole, then renamed: a reader never sees half a line */
		snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
		f = fopen(tmp, "w");
	}

	hot = mmap(NULL, 2 * PAGES * (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hot == MAP_FAILED || !f)
		return 1;
	/* no huge page may back either range: every page must fault on its own */
	madvise(hot, 2 * PAGES * (size_t)page, MADV_NOHUGEPAGE);
	cold = hot + PAGES * page;
	fprintf(f, "pid=%d hot=%p cold=%p pages=%d rounds=%d\n", (int)getpid(), (void *)hot,
		(void *)cold, PAGES, ROUNDS);
	if (f != stdout && (fclose(f) != 0 || rename(tmp, argv[1]) != 0))
		return 1;
	if (argc > 2)
		wait_for(argv[2]);
	touch(cold, page, PAGES);
	for (int r = 0; r < ROUNDS; r++) {
		touch(hot, page, PAGES);
		madvise(hot, PAGES * (size_t)page, MADV_DONTNEED);
	}
	return 0;
}
