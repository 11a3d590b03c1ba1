/* damon_event: the damon_aggregated tracepoint's format and records (see damon_event.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/damon/damon_event.h"
#include "base/fileio.h"

#define FORMAT_MAX 8192

/* Pure: "offset:N;" style value after key in s, bounded by the line's end. */
static int field_num(const char *s, const char *eol, const char *key, unsigned long *out)
{
	const char *p = strstr(s, key);
	char *end;

	if (!p || p >= eol)
		return -EINVAL;
	errno = 0;
	*out = strtoul(p + strlen(key), &end, 10);
	return errno || end == p + strlen(key) || *end != ';' || *out > 65535 ? -EINVAL : 0;
}

/* Pure: one "\tfield:TYPE NAME;\toffset:N;\tsize:N;..." line, if it names name. */
static int field_line(const char *line, const char *eol, const char *name, struct damon_field *out)
{
	const char *semi = memchr(line, ';', (size_t)(eol - line));
	size_t len = strlen(name);
	unsigned long off, size;

	if (!semi || (size_t)(semi - line) < len + 1 || memcmp(semi - len, name, len) ||
	    (semi[-(long)len - 1] != ' ' && semi[-(long)len - 1] != '\t'))
		return 0;
	if (field_num(semi, eol, "offset:", &off) < 0 || field_num(semi, eol, "size:", &size) < 0 ||
	    (size != 2 && size != 4 && size != 8))
		return -EINVAL;
	*out = (struct damon_field){(uint16_t)off, (uint16_t)size};
	return 1;
}

int damon_event_format_parse(const char *text, struct damon_event_format *out)
{
	struct damon_event_format f = {0};
	struct {
		const char *name;
		struct damon_field *at;
	} want[] = {{"common_pid", &f.pid},
		    {"target_id", &f.target_id},
		    {"nr_regions", &f.nr_regions},
		    {"start", &f.start},
		    {"end", &f.end},
		    {"nr_accesses", &f.nr_accesses},
		    {"age", &f.age}};
	const char *id = strstr(text, "\nID: ");
	unsigned long v;
	char *end;

	if (!strncmp(text, "ID: ", 4))
		id = text - 1;
	if (!id)
		return -EINVAL;
	errno = 0;
	v = strtoul(id + 5, &end, 10);
	if (errno || end == id + 5 || *end != '\n' || v == 0 || v > UINT32_MAX)
		return -EINVAL;
	f.id = (uint32_t)v;
	for (const char *line = text; *line;) {
		const char *eol = strchr(line, '\n');

		if (!eol)
			eol = line + strlen(line);
		for (size_t i = 0; strstr(line, "field:") && i < sizeof(want) / sizeof(want[0]);
		     i++)
			if (field_line(line, eol, want[i].name, want[i].at) < 0)
				return -EINVAL;
		line = *eol ? eol + 1 : eol;
	}
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint32_t need = (uint32_t)want[i].at->offset + want[i].at->size;

		if (!want[i].at->size)
			return -EINVAL;
		if (need > f.min_size)
			f.min_size = need;
	}
	*out = f;
	return 0;
}

static uint64_t load(const uint8_t *raw, struct damon_field f)
{
	uint64_t v64;
	uint32_t v32;
	uint16_t v16;

	if (f.size == 8)
		return memcpy(&v64, raw + f.offset, 8), v64;
	if (f.size == 4)
		return memcpy(&v32, raw + f.offset, 4), v32;
	return memcpy(&v16, raw + f.offset, 2), v16;
}

int damon_event_decode(const struct damon_event_format *f, const uint8_t *raw, size_t len,
		       struct damon_region *out)
{
	if (!raw || len < f->min_size)
		return -EBADMSG;
	*out = (struct damon_region){
	    .kdamond = (pid_t)load(raw, f->pid),
	    .target = (uint32_t)load(raw, f->target_id),
	    .nr_regions = (uint32_t)load(raw, f->nr_regions),
	    .start = load(raw, f->start),
	    .end = load(raw, f->end),
	    .nr_accesses = (uint32_t)load(raw, f->nr_accesses),
	    .age = (uint32_t)load(raw, f->age),
	};
	return 0;
}

int damon_event_find(const char *sysfs_root, char *path, size_t size)
{
	static const char *const tracing[] = {"kernel/tracing", "kernel/debug/tracing"};
	int first = 0;

	for (size_t i = 0; i < sizeof(tracing) / sizeof(tracing[0]); i++) {
		int n = snprintf(path, size, "%s/%s/" DAMON_EVENT_REL, sysfs_root, tracing[i]);

		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		/* Opened, not access(2)ed: access checks the real uid without the capabilities
		 * (a service's dynamic user reads tracefs through CAP_DAC_OVERRIDE). */
		int fd = file_open_regular(path, 0);

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (!first)
			first = fd;
	}
	snprintf(path, size, "%s/%s/" DAMON_EVENT_REL, sysfs_root, tracing[0]);
	return first;
}

int damon_event_load(const char *sysfs_root, struct damon_event_format *out)
{
	char path[PATH_MAX], *buf;
	int r = damon_event_find(sysfs_root, path, sizeof(path));

	if (r < 0)
		return r;
	buf = malloc(FORMAT_MAX);
	if (!buf)
		return -ENOMEM;
	r = file_read_small(path, buf, FORMAT_MAX);
	if (r >= 0)
		r = damon_event_format_parse(buf, out);
	free(buf);
	return r;
}
