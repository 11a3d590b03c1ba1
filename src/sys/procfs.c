/* procfs: reading other processes' /proc files under a root, see procfs.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "sys/pagemap.h"
#include "sys/procfs.h"

int procfs_path(char *buf, size_t size, const char *root, pid_t pid, const char *name)
{
	int n = snprintf(buf, size, "%s/%d/%s", root, (int)pid, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;

	return (a > b) - (a < b);
}

int procfs_list_pids(const char *root, pid_t **out, size_t *nout)
{
	DIR *d = opendir(root);
	pid_t *pids = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (!isdigit((unsigned char)de->d_name[0]) || *end || v <= 0 || v > INT_MAX)
			continue;
		if (n == cap) {
			size_t c = cap ? cap * 2 : 256;
			pid_t *bigger = realloc(pids, c * sizeof(*bigger));

			if (!bigger) {
				free(pids);
				closedir(d);
				return -ENOMEM;
			}
			pids = bigger;
			cap = c;
		}
		pids[n++] = (pid_t)v;
	}
	closedir(d);
	if (n)
		qsort(pids, n, sizeof(*pids), cmp_pid);
	*out = pids;
	*nout = n;
	return 0;
}

/* The decimal number at [p, end): -EINVAL when empty or not all digits, -ERANGE past 64 bits. */
static int parse_u64(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (p == end)
		return -EINVAL;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*out = v;
	return 0;
}

int procfs_parse_stat(const char *text, size_t len, struct procfs_stat *out)
{
	/* The command name (field 2) may hold spaces, parentheses, newlines: it ends at the
	 * last ')'. */
	const char *p = memrchr(text, ')', len), *end = text + len;
	struct procfs_stat st = {.cpu = -1};
	int field, r;

	if (!p)
		return -EINVAL;
	for (p++, field = 3; field <= 39 && p < end && *p == ' '; field++) {
		const char *q = ++p;
		uint64_t v = 0;

		while (q < end && *q != ' ' && *q != '\n')
			q++;
		if (q == p)
			return -EINVAL; /* an empty field: not what the kernel writes */
		r = field == 14 || field == 15 || field == 22 || field == 39 ? parse_u64(p, q, &v)
									     : 0;
		if (r < 0 && field != 39)
			return r;
		if (field == 14)
			st.utime = v;
		else if (field == 15)
			st.stime = v;
		else if (field == 22)
			st.starttime = v;
		else if (field == 39 && r == 0 && v <= PROCFS_CPU_MAX)
			st.cpu = (int)v;
		p = q;
	}
	if (field <= 22)
		return -EINVAL; /* the line ends before the start time */
	*out = st;
	return 0;
}

int procfs_read_stat(const char *root, pid_t pid, struct procfs_stat *out)
{
	char path[PATH_MAX], text[PROCFS_STAT_MAX];
	int r = procfs_path(path, sizeof(path), root, pid, "stat");

	if (r < 0)
		return r;
	r = file_read_small(path, text, sizeof(text));
	if (r < 0)
		return r == -ENOENT || r == -ENOTDIR || r == -ESRCH ? -ESRCH : r;
	return procfs_parse_stat(text, (size_t)r, out);
}

int procfs_open_pagemap(const char *root, pid_t pid)
{
	char path[PATH_MAX];
	int fd, r = procfs_path(path, sizeof(path), root, pid, "pagemap");

	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static bool maps_name_special(const char *name)
{
	return strncmp(name, "[vsyscall]", 10) == 0 || strncmp(name, "[vvar]", 6) == 0 ||
	       strncmp(name, "[vdso]", 6) == 0;
}

int maps_parse_line(const char *line, size_t len, struct maps_vma *out)
{
	/* Every field but the name fits well within this (two 16-digit addresses, perms, a
	 * 16-digit offset, dev, a 20-digit inode, padding to column 73): the special names are
	 * matched on what follows, so a longer name is cut, never measured. */
	char buf[MAPS_LINE_PREFIX + 1];
	const char *nl = memchr(line, '\n', len < MAPS_LINE_PREFIX ? len : MAPS_LINE_PREFIX);
	size_t n = nl ? (size_t)(nl - line) : len < MAPS_LINE_PREFIX ? len : MAPS_LINE_PREFIX;
	unsigned long long start, end;
	char perms[5];
	int name_at = 0;

	/* sscanf() measures its whole input first: on the rest of a 65,000-line maps text that
	 * is a strlen of megabytes per line. It reads this bounded copy of one line instead. */
	memcpy(buf, line, n);
	buf[n] = '\0';
	/* "start-end perms offset dev inode   name" */
	if (sscanf(buf, "%llx-%llx %4s %*s %*s %*s %n", &start, &end, perms, &name_at) < 3)
		return -EINVAL;
	if (end <= start || strlen(perms) != 4 || (start | end) % PAGEMAP_PAGE_SIZE)
		return -EINVAL;
	out->start = start;
	out->end = end;
	out->readable = perms[0] == 'r';
	out->special = name_at > 0 && maps_name_special(buf + name_at);
	return 0;
}

/* The unsigned number at [p, end) in base (10 or 16), saturating; *q after its digits. */
static uint64_t scan_number(const char *p, const char *end, int base, const char **q)
{
	uint64_t v = 0;

	for (; p < end; p++) {
		int d = *p >= '0' && *p <= '9'		       ? *p - '0'
			: base == 16 && *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
							       : -1;

		if (d < 0)
			break;
		v = v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base
			? UINT64_MAX
			: v * (uint64_t)base + (uint64_t)d;
	}
	*q = p;
	return v;
}

int numa_maps_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *pages)
{
	const char *end = line + len, *p;
	uint64_t s = scan_number(line, end, 16, &p), sum = 0;

	if (p == line || (p < end && *p != ' '))
		return -EINVAL;
	/* " N<node>=<pages>" fields, anywhere after the address (a file= name before them holds
	 * no blank: numa_maps escapes them). */
	while ((p = memchr(p, ' ', (size_t)(end - p)))) {
		const char *q;

		p++;
		if (p >= end || *p != 'N')
			continue;
		scan_number(p + 1, end, 10, &q);
		if (q == p + 1 || q >= end || *q != '=')
			continue;
		sum += scan_number(q + 1, end, 10, &p);
	}
	*start = s;
	*pages = sum;
	return 0;
}

int procfs_last_cpu(const char *root, pid_t pid, int *cpu)
{
	struct procfs_stat st;
	int r = procfs_read_stat(root, pid, &st);

	if (r == 0 && st.cpu < 0)
		r = -EINVAL;
	*cpu = r == 0 ? st.cpu : -1;
	return r;
}

int procfs_parse_statm(const char *text, struct procfs_statm *out)
{
	unsigned long long size, resident;
	char *end;

	size = strtoull(text, &end, 10);
	if (end == text || *end != ' ')
		return -EINVAL;
	resident = strtoull(end, &end, 10);
	if (*end != ' ' && *end != '\n' && *end != '\0')
		return -EINVAL;
	out->size = size;
	out->resident = resident;
	return 0;
}

int procfs_read_statm(const char *root, pid_t pid, struct procfs_statm *out)
{
	char path[PATH_MAX], buf[256];
	int r = procfs_path(path, sizeof(path), root, pid, "statm");

	if (r == 0)
		r = file_read_small(path, buf, sizeof(buf));
	if (r < 0)
		return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
	return procfs_parse_statm(buf, out);
}

/* The value of the "kernelpagesize_kB=" field of a numa_maps line, in bytes; base_page when
 * the line has none or it is 0. */
static uint64_t numa_maps_page_size(const char *line, const char *end, uint64_t base_page)
{
	static const char key[] = " kernelpagesize_kB=";
	const char *p = memmem(line, (size_t)(end - line), key, sizeof(key) - 1), *q;
	uint64_t kb;

	if (!p)
		return base_page;
	kb = scan_number(p + sizeof(key) - 1, end, 10, &q);
	return kb && kb <= UINT64_MAX >> 10 ? kb << 10 : base_page;
}

int numa_maps_node_bytes(const char *line, size_t len, uint64_t base_page, uint64_t *bytes,
			 int nr_nodes)
{
	const char *end = line + len, *p;
	uint64_t page;

	scan_number(line, end, 16, &p);
	if (p == line || (p < end && *p != ' '))
		return -EINVAL;
	page = numa_maps_page_size(line, end, base_page);
	while ((p = memchr(p, ' ', (size_t)(end - p)))) {
		const char *q;
		uint64_t node, pages;

		p++;
		if (p >= end || *p != 'N')
			continue;
		node = scan_number(p + 1, end, 10, &q);
		if (q == p + 1 || q >= end || *q != '=')
			continue;
		pages = scan_number(q + 1, end, 10, &p);
		if (node >= (uint64_t)nr_nodes)
			continue;
		pages = pages > UINT64_MAX / page ? UINT64_MAX : pages * page;
		bytes[node] = bytes[node] > UINT64_MAX - pages ? UINT64_MAX : bytes[node] + pages;
	}
	return 0;
}

struct numa_sum {
	uint64_t base_page, *bytes;
	int nr_nodes;
};

static int numa_sum_line(void *ctx, const char *s, size_t len)
{
	struct numa_sum *sum = ctx;

	numa_maps_node_bytes(s, len, sum->base_page, sum->bytes, sum->nr_nodes);
	return 0; /* a malformed line shows nothing resident; the others still count */
}

int procfs_read_numa_bytes(const char *root, pid_t pid, char *buf, size_t size, uint64_t base_page,
			   uint64_t *bytes, int nr_nodes)
{
	struct numa_sum sum = {.base_page = base_page, .bytes = bytes, .nr_nodes = nr_nodes};
	char path[PATH_MAX];
	int r = procfs_path(path, sizeof(path), root, pid, "numa_maps");

	for (int n = 0; n < nr_nodes; n++)
		bytes[n] = 0;
	if (r == 0)
		r = file_read_lines(path, buf, size, numa_sum_line, &sum);
	return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

/* Where the line starting "0::" begins in text[0..len), or NULL; -EBADMSG in *r for two. */
static const char *cgroup_v2_line(const char *text, size_t len, int *r)
{
	const char *found = NULL, *end = text + len;

	*r = 0;
	for (const char *p = text; p && p < end;) {
		if (end - p >= 3 && memcmp(p, "0::", 3) == 0) {
			if (found) {
				*r = -EBADMSG;
				return NULL;
			}
			found = p;
		}
		p = memchr(p, '\n', (size_t)(end - p));
		p = p ? p + 1 : NULL;
	}
	return found;
}

int procfs_parse_cgroup(const char *text, size_t len, char *out, size_t size)
{
	int r;
	const char *line = cgroup_v2_line(text, len, &r);
	size_t l;

	if (r < 0)
		return r;
	if (!line) {
		if (size == 0)
			return -ENAMETOOLONG;
		out[0] = '\0';
		return 0;
	}
	l = len - (size_t)(line + 3 - text);
	if (l && line[3 + l - 1] == '\n')
		l--;
	if (memchr(line + 3, '\0', l))
		return -EBADMSG;
	if (l >= size || l > INT_MAX)
		return -ENAMETOOLONG;
	memcpy(out, line + 3, l);
	out[l] = '\0';
	return (int)l;
}

int procfs_read_cgroup(const char *root, pid_t pid, char *out, size_t size)
{
	char path[PATH_MAX], text[PROCFS_CGROUP_FILE_MAX];
	int r = procfs_path(path, sizeof(path), root, pid, "cgroup");

	if (r == 0)
		r = file_read_small(path, text, sizeof(text));
	if (r < 0)
		return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
	return procfs_parse_cgroup(text, (size_t)r, out, size);
}
