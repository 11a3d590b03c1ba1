/* damon_event: the damon:damon_aggregated tracepoint, DAMON's report of every region of every
 * target at the end of each aggregation interval (target index, region [start, end),
 * nr_accesses: sampling intervals of the aggregation that found the region accessed; age:
 * aggregation intervals it kept that access level).
 *
 * The field offsets come from the event's format file in tracefs (kernel/tracing, or the
 * older kernel/debug/tracing under the sysfs root), not from a copy of the kernel's struct:
 * damon_event_format_parse() and damon_event_decode() are pure, the rest reads the files.
 * Any thread. */
#ifndef PGHOTD_DAMON_EVENT_H
#define PGHOTD_DAMON_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define DAMON_EVENT_REL "events/damon/damon_aggregated/format"

struct damon_field {
	uint16_t offset, size; /* size 0: not in the format */
};

struct damon_event_format {
	uint32_t id; /* perf_event_attr.config for PERF_TYPE_TRACEPOINT */
	struct damon_field pid, target_id, nr_regions, start, end, nr_accesses, age;
	uint32_t min_size; /* raw bytes a record must hold */
};

struct damon_region {
	pid_t kdamond; /* the thread that reported it (common_pid) */
	uint32_t target;
	uint32_t nr_regions; /* of that target */
	uint64_t start, end;
	uint32_t nr_accesses, age;
};

/* Pure: the text of a format file. -EINVAL when the ID or one of the fields pghotd reads is
 * missing or has an impossible size (integers of 2, 4 or 8 bytes); *out untouched then. */
int damon_event_format_parse(const char *text, struct damon_event_format *out);
/* Pure: a PERF_SAMPLE_RAW payload. -EBADMSG when it is shorter than the format needs. */
int damon_event_decode(const struct damon_event_format *f, const uint8_t *raw, size_t len,
		       struct damon_region *out);
/* Writes the path of the format file under sysfs_root that exists (tracefs, then debugfs's
 * tracing) into path. 0, or -errno of the first place looked at (-ENOENT: no tracefs, or no
 * DAMON tracepoints). */
int damon_event_find(const char *sysfs_root, char *path, size_t size);
/* damon_event_find() and damon_event_format_parse() of what it found. */
int damon_event_load(const char *sysfs_root, struct damon_event_format *out);

#endif
