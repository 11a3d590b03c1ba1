/* zoneinfo: the free memory under which the kernel reclaims on each node, from /proc/zoneinfo
 * (a fixture file in tests). A zone serves a movable page (what promotion and demotion
 * allocate) only while its free pages stay above its high watermark (the file's "high", which
 * includes the watermark boost) and the lowmem reserve it keeps for such an allocation (the
 * largest entry of its protection line); the kernel's own tiering promotes into a node only
 * above that, and under a zone's
 * min watermark its kernel allocations fail, so a node with no reclaimable memory goes to
 * the OOM killer. The sum over a node's zones is that node's mark.
 *
 * The file is the kernel's, parsed within bounds: lines through file_read_lines() (a long one
 * is cut), numbers of at most 64 bits (larger ones are -ERANGE), node numbers past the
 * caller's array ignored. The per-CPU lines ("high:  N", with a colon) are not a zone's. Any
 * thread. */
#ifndef PGHOTD_ZONEINFO_H
#define PGHOTD_ZONEINFO_H

#include <stdint.h>

/* Adds each node's mark, in pages, to pages[node] for nodes below nr_nodes (the caller zeroes
 * them). 0, -EINVAL for a line of a zone it cannot parse, -ERANGE, or -errno
 * (file_read_lines(): the file cannot be opened or read). pages is partly filled on failure. */
int zoneinfo_read_marks(const char *path, uint64_t *pages, int nr_nodes);

#endif
