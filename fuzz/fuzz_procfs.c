/* libFuzzer target: another process's /proc files through pghotd's readers. The input is the
 * file. Its text goes through procfs_parse_stat() (a stat line), each of its lines through
 * maps_parse_line(), numa_maps_parse_line() and numa_maps_node_bytes(), the whole through
 * procfs_parse_cgroup() (a cgroup file) and, written to a regular file,
 * through file_read_lines() with a buffer of the first byte's size (1..256), abit_vmas's maps
 * and statm readers and, where its VMAs are in address order and apart (as the kernel writes
 * them), the DAMON source's first cut (damon_three_ranges(), damon_cut_ranges()). Whatever
 * the input, each parse either fails or gives what its contract says; abort() otherwise. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/vmas.h"
#include "sources/damon/damon_feed.h"
#include "sources/damon/damon_regions.h"
#include "base/fileio.h"
#include "sys/procfs.h"

#define PAGE	4096u
#define CUT_CAP 64

static char path[64];
static int fd = -1;

static void check(int ok)
{
	if (!ok)
		abort();
}

/* The input as the regular file at path, made once in the working directory. */
static int as_file(const uint8_t *data, size_t size)
{
	if (fd < 0) {
		snprintf(path, sizeof(path), "fuzz-procfs.XXXXXX");
		fd = mkstemp(path);
		if (fd < 0)
			return -errno;
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return -EIO;
	return 0;
}

static uint64_t node_bytes[4];

static int one_line(void *ctx, const char *s, size_t len)
{
	const size_t *bufsize = ctx;
	struct maps_vma v;
	uint64_t start, pages;

	check(len <= *bufsize && memchr(s, '\n', len) == NULL);
	if (maps_parse_line(s, len, &v) == 0)
		check(v.start < v.end && v.start % PAGE == 0 && v.end % PAGE == 0);
	numa_maps_parse_line(s, len, &start, &pages);
	numa_maps_node_bytes(s, len, 4096, node_bytes, 4);
	return 0;
}

/* The first cut of a process with these VMAs, as the DAMON source makes it. */
static void first_cut(const struct vmas *s, uint32_t want)
{
	struct damon_range three[3], out[CUT_CAP];
	size_t k, m;

	for (size_t i = 1; i < s->n; i++)
		if (s->v[i].start < s->v[i - 1].end)
			return; /* not as the kernel writes maps */
	k = damon_three_ranges(s->v, s->n, three);
	check(k <= 3 && (s->n == 0) == (k == 0));
	for (size_t i = 0; i < k; i++)
		check(three[i].start < three[i].end &&
		      (i == 0 || three[i - 1].end < three[i].start));
	m = damon_cut_ranges(three, k, want, out, CUT_CAP);
	check(m <= CUT_CAP);
	for (size_t i = 0; i < m; i++) {
		check(out[i].start < out[i].end && out[i].start % PAGE == 0 &&
		      out[i].end % PAGE == 0);
		check(i == 0 || out[i - 1].end <= out[i].start);
		check(out[i].start >= three[0].start && out[i].end <= three[k - 1].end);
	}
}

/* damon_regions.c's other functions read DAMON's reports through these (damon_feed.c, which
 * would bring the hot table and the mover with it); the cut never calls them. */
bool damon_region_hot(const struct pghotd_config *cfg, const struct damon_region *r)
{
	(void)cfg, (void)r;
	abort();
}

uint64_t damon_aggr_span_ns(const struct pghotd_config *cfg)
{
	(void)cfg;
	abort();
}

/* The statm parser on the input's head, NUL-terminated as file_read_small() leaves a file. */
static void parse_statm(const uint8_t *data, size_t size)
{
	struct procfs_statm sm = {.size = 7, .resident = 7};
	char text[256];
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (procfs_parse_statm(text, &sm) < 0)
		check(sm.size == 7 && sm.resident == 7); /* untouched on failure */
}

/* The cgroup parser on the whole input, into a buffer of the second byte's size: a path that
 * fits, NUL-terminated at the length returned, or out untouched. */
static void parse_cgroup(const uint8_t *data, size_t size)
{
	char out[257];
	size_t cap = size > 1 ? (size_t)data[1] + 1 : 1;
	int r;

	memset(out, 'u', sizeof(out));
	r = procfs_parse_cgroup((const char *)data, size, out, cap);
	if (r >= 0)
		check((size_t)r < cap && out[r] == '\0' && strlen(out) == (size_t)r);
	else
		check(out[0] == 'u');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vmas vmas;
	struct procfs_stat st = {.cpu = -2};
	size_t bufsize = size ? (size_t)data[0] + 1 : 1;
	char *buf = malloc(bufsize);

	if (!buf)
		return 0;
	if (procfs_parse_stat((const char *)data, size, &st) == 0)
		check(st.cpu >= -1 && st.cpu <= PROCFS_CPU_MAX);
	else
		check(st.cpu == -2); /* untouched on failure */
	parse_cgroup(data, size);
	if (as_file(data, size) == 0) {
		check(file_read_lines(path, buf, bufsize, one_line, &bufsize) == 0);
		vmas.all = size && (data[0] & 1);
		vmas.max = 4096;
		if (vmas_read_maps(&vmas, path) == 0)
			first_cut(&vmas, size > 1 ? data[1] : 0);
		parse_statm(data, size);
	}
	free(buf);
	return 0;
}
