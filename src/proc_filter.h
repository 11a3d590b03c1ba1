/* proc_filter: which processes pghotd may touch, from the `processes` config section.
 *
 * A process is selected when its command name matches include_comm (or the list is empty),
 * its cgroup path matches include_cgroup (or empty), it matches neither exclude list, and its
 * resident set is at least min_rss_mb. Patterns are fnmatch(3) globs; a cgroup pattern also
 * matches every cgroup below it ("/system.slice/db.service" matches ".../db.service/child").
 * proc_info_read() is the only I/O; proc_filter_match() is pure. Any thread. */
#ifndef PGHOTD_PROC_FILTER_H
#define PGHOTD_PROC_FILTER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct proc_info {
	char comm[64];
	char cgroup[512]; /* cgroup v2 path ("0::" line), "" when unknown */
	uint64_t rss_bytes;
	bool kernel_thread; /* no mm: never selected */
};

/* Reads <procfs_root>/<pid>/{comm,cgroup,statm}. -ESRCH when the process is gone. */
int proc_info_read(const char *procfs_root, pid_t pid, struct proc_info *out);
bool proc_filter_match(const struct pghotd_config *cfg, const struct proc_info *info);
/* True when the config selects every process (no lists, no RSS floor): callers may skip
 * reading process information. */
bool proc_filter_selects_all(const struct pghotd_config *cfg);

#endif
