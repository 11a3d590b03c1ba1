/* pagemap: decoding of pagemap, kpageflags, maps and stat. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pagemap.h"

enum kpf_class kpf_classify(uint64_t flags)
{
	/* A THP tail carries neither the LRU nor the idle flag of its own: page_idle reads
	 * it as accessed forever, so it must be recognised before the LRU test. */
	if (kpf_test(flags, KPF_THP) && kpf_test(flags, KPF_COMPOUND_TAIL))
		return KPF_CLASS_THP_TAIL;
	if (!kpf_test(flags, KPF_LRU))
		return KPF_CLASS_UNTRACKABLE;
	if (kpf_test(flags, KPF_THP) && kpf_test(flags, KPF_COMPOUND_HEAD))
		return KPF_CLASS_THP_HEAD;
	return KPF_CLASS_PAGE;
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

int stat_parse_start_cpu(const char *line, uint64_t *starttime, int *cpu)
{
	const char *p = strrchr(line, ')');
	unsigned long long start = 0;
	long c = -1;

	if (!p)
		return -EINVAL;
	p++;
	/* Token k after the ')' is field k + 3: field 22 is token 19, field 39 token 36. */
	for (int k = 0; k <= 36; k++) {
		char *end;

		p += strspn(p, " ");
		if (*p == '\0' || *p == '\n')
			return -EINVAL;
		if (k == 19 || k == 36) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
				return -EINVAL;
			if (k == 19)
				start = v;
			else
				c = v > INT32_MAX ? -1 : (long)v;
		}
		p += strcspn(p, " \n");
	}
	if (c < 0 || c > 1 << 20)
		return -EINVAL;
	*starttime = start;
	*cpu = (int)c;
	return 0;
}
