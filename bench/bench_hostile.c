/* bench_hostile: what hostile processes cost the Accessed-bit source on this machine's real
 * /proc (a fake page_idle bitmap under a temporary sysfs root, so it runs without page_idle).
 *
 * - Many VMAs: children with VMAS / 100, VMAS / 10 and VMAS VMAs (mmap of that many pages,
 *   mprotect of every other one, nothing touched). For each, the time of a source's first
 *   round over it alone (its stat, statm, maps and numa_maps reads, its regions, the scan;
 *   and the fixed cost of listing /proc and reading every process's comm), best of RUNS.
 *   The cost of a VMA is the slope between two of them: linear parsing makes the slope of
 *   the upper range (VMAS / 10 to VMAS) that of the lower one; the parse this replaced
 *   measured the rest of the maps text on every line, so its slope grew with the VMAs.
 * - A sparse mapping: a child with a 4 TiB PROT_READ|MAP_NORESERVE mapping and nothing
 *   resident; the source's RSS growth over four rounds over it (it grew by 150 MB before
 *   the source's state followed the resident set).
 *
 * Last line: hostile_vma_slope_ratio: <seconds per VMA from VMAS / 10 to VMAS / the same from
 * VMAS / 100 to VMAS / 10> (1 when a VMA costs the same however many the process has).
 *
 * Usage: bench_hostile */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sources/abit/abit_source.h"
#include "base/config.h"
#include "base/stats.h"

#define VMAS 65000
#define RUNS 5
#define PAGE 4096u

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long status_kib(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	if (f)
		fclose(f);
	return v;
}

static void sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		 size_t n)
{
	(void)ctx;
	(void)cfg;
	(void)ev;
	(void)n;
}

/* A child named name: vmas VMAs, or (vmas 0) a 4 TiB sparse mapping; returns once it is set
 * up. */
static pid_t child(const char *name, size_t vmas)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (vmas) {
			char *m = mmap(NULL, vmas * PAGE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			for (size_t i = 1; m != MAP_FAILED && i < vmas; i += 2)
				if (mprotect(m + i * PAGE, PAGE, PROT_READ) < 0)
					break;
		} else if (mmap(NULL, UINT64_C(4) << 40, PROT_READ,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0) == MAP_FAILED) {
			_exit(1);
		}
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], &c, 1) != 1)
		pid = -1;
	close(p[0]);
	return pid;
}

/* A source over the processes called comm (nothing else), on the fake sysfs at dir. */
static int source(const char *dir, const char *comm, struct stats *st, struct pghotd_config **cfg,
		  struct abit **a)
{
	char text[256];
	struct config_errors errs = {0};
	struct abit_deps d = {.procfs_root = "/proc",
			      .sysfs_root = dir,
			      .sink = {.deliver = sink},
			      .stats = st,
			      .self_pid = -1};

	snprintf(text, sizeof(text), "processes: { include_comm = [\"%s\"]; };", comm);
	if (config_load_string(text, "bench", cfg, &errs) < 0)
		return -1;
	stats_init(st, 1);
	return abit_new(&d, a);
}

/* Best first-round time, over RUNS fresh sources, of the processes called comm. */
static double first_round(const char *dir, const char *comm)
{
	double best = 1e9;

	for (int r = 0; r < RUNS; r++) {
		struct pghotd_config *cfg;
		struct stats st;
		struct abit *a;
		double t0;

		if (source(dir, comm, &st, &cfg, &a) < 0)
			return -1;
		t0 = now_s();
		abit_round(a, cfg);
		t0 = now_s() - t0;
		best = t0 < best ? t0 : best;
		abit_free(a);
		config_free(cfg);
	}
	return best;
}

static int fake_sysfs(char *dir)
{
	char path[256];
	int fd;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/kernel", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kernel/mm", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", dir);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 1 << 20) < 0)
		return -1;
	close(fd);
	return 0;
}

int main(void)
{
	static const size_t sizes[3] = {VMAS / 100, VMAS / 10, VMAS};
	static const char *const names[3] = {"bh_vmas_s", "bh_vmas_m", "bh_vmas_l"};
	char dir[] = "/tmp/bench_hostile.XXXXXX", cmd[64];
	pid_t pids[4];
	double t[3], lo, hi;
	struct pghotd_config *cfg;
	struct stats st;
	struct abit *a;
	long rss0;

	for (int i = 0; i < 3; i++)
		pids[i] = child(names[i], sizes[i]);
	pids[3] = child("bh_sparse", 0);
	if (pids[0] < 0 || pids[1] < 0 || pids[2] < 0 || pids[3] < 0 || fake_sysfs(dir) < 0) {
		fprintf(stderr, "bench_hostile: cannot set up its processes or %s\n", dir);
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		t[i] = first_round(dir, names[i]);
		printf("first round over a process of %zu VMAs: %.4f s\n", sizes[i], t[i]);
	}
	lo = (t[1] - t[0]) / (double)(sizes[1] - sizes[0]);
	hi = (t[2] - t[1]) / (double)(sizes[2] - sizes[1]);
	printf("per VMA: %.2f us from %zu to %zu VMAs, %.2f us from %zu to %zu\n", lo * 1e6,
	       sizes[0], sizes[1], hi * 1e6, sizes[1], sizes[2]);
	if (source(dir, "bh_sparse", &st, &cfg, &a) < 0)
		return 1;
	rss0 = status_kib("VmRSS:");
	for (int i = 0; i < 4; i++)
		abit_round(a, cfg);
	printf("4 TiB sparse mapping: the source's RSS %ld -> %ld KiB over 4 rounds\n", rss0,
	       status_kib("VmRSS:"));
	abit_free(a);
	config_free(cfg);
	for (int i = 0; i < 4; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_hostile: %s left behind\n", dir);
	printf("hostile_vma_slope_ratio: %.2f\n", hi / lo);
	return 0;
}
