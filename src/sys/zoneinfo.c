/* zoneinfo: see zoneinfo.h. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/fileio.h"
#include "sys/zoneinfo.h"

/* Longer lines than this are cut (a protection line lists one number per zone type). */
#define ZONEINFO_LINE_MAX 512

struct zi_parse {
	uint64_t *pages;
	int nr_nodes;
	int node; /* the zone being read belongs to it; -1 before the first zone, or past the array
		   */
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_spaces(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i;
}

/* The decimal number at s[*i], at most 64 bits; *i moves past it. -EINVAL for no digit. */
static int parse_u64(const char *s, size_t len, size_t *i, uint64_t *out)
{
	uint64_t v = 0;
	size_t j = *i;

	if (j >= len || !is_digit(s[j]))
		return -EINVAL;
	for (; j < len && is_digit(s[j]); j++) {
		unsigned d = (unsigned)(s[j] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*i = j;
	*out = v;
	return 0;
}

static bool starts_with(const char *s, size_t len, size_t i, const char *word)
{
	size_t n = strlen(word);

	return len - i >= n && memcmp(s + i, word, n) == 0;
}

static void add_sat(uint64_t *sum, uint64_t v)
{
	*sum = *sum > UINT64_MAX - v ? UINT64_MAX : *sum + v;
}

/* "Node N, zone NAME": the node the next lines count for. */
static int zone_header(struct zi_parse *p, const char *s, size_t len)
{
	size_t i = strlen("Node ");
	uint64_t node;
	int r = parse_u64(s, len, &i, &node);

	if (r < 0)
		return r;
	p->node = node < (uint64_t)p->nr_nodes ? (int)node : -1;
	return 0;
}

/* "protection: (a, b, ...)": the largest entry. */
static int protection(const char *s, size_t len, size_t i, uint64_t *out)
{
	uint64_t v;
	int r;

	i = skip_spaces(s, len, i + strlen("protection:"));
	if (i >= len || s[i] != '(')
		return -EINVAL;
	*out = 0;
	for (i++;;) {
		i = skip_spaces(s, len, i);
		r = parse_u64(s, len, &i, &v);
		if (r < 0)
			return r;
		*out = v > *out ? v : *out;
		if (i < len && s[i] == ',') {
			i++;
			continue;
		}
		return i < len && s[i] == ')' ? 0 : -EINVAL;
	}
}

static int zi_line(void *ctx, const char *s, size_t len)
{
	struct zi_parse *p = ctx;
	size_t i = skip_spaces(s, len, 0);
	uint64_t v;
	int r;

	if (i == 0 && starts_with(s, len, 0, "Node "))
		return zone_header(p, s, len);
	if (p->node < 0)
		return 0;
	if (starts_with(s, len, i, "protection:")) {
		r = protection(s, len, i, &v);
	} else if (starts_with(s, len, i, "high ")) {
		i = skip_spaces(s, len, i + strlen("high"));
		r = parse_u64(s, len, &i, &v);
		if (r == 0 && skip_spaces(s, len, i) != len)
			r = -EINVAL;
	} else {
		return 0;
	}
	if (r < 0)
		return r;
	add_sat(&p->pages[p->node], v);
	return 0;
}

int zoneinfo_read_marks(const char *path, uint64_t *pages, int nr_nodes)
{
	char buf[ZONEINFO_LINE_MAX];
	struct zi_parse p = {.pages = pages, .nr_nodes = nr_nodes, .node = -1};

	return file_read_lines(path, buf, sizeof(buf), zi_line, &p);
}
