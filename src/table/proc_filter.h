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

#include "base/config.h"
#include "sys/procfs.h"

/* Longest cgroup path known (a deeper one leaves the process unknown, never selected), and
 * the most of /proc/PID/cgroup read: procfs_read_cgroup()'s bounds. */
#define PROC_CGROUP_MAX	     PROCFS_CGROUP_MAX
#define PROC_CGROUP_FILE_MAX PROCFS_CGROUP_FILE_MAX

struct proc_info {
	char comm[64];
	char cgroup[PROC_CGROUP_MAX]; /* cgroup v2 path (procfs_read_cgroup()), "" on v1 only */
	uint64_t rss_bytes;
	bool kernel_thread; /* no mm: never selected */
};

/* Reads <procfs_root>/<pid>/{statm,comm,cgroup}; a kernel thread (statm size 0) ends at
 * statm, its comm and cgroup "" (kernel_thread set: never selected). -ESRCH when the process
 * is gone; -EFBIG or -ENAMETOOLONG when its cgroup file or path is longer than the bounds
 * above, -EBADMSG when the file is ambiguous (procfs_parse_cgroup()), -errno when any of the
 * three cannot be read: the caller skips the process as unknown. */
int proc_info_read(const char *procfs_root, pid_t pid, struct proc_info *out);
bool proc_filter_match(const struct pghotd_config *cfg, const struct proc_info *info);
/* True when the config selects every process (no lists, no RSS floor): callers may skip
 * reading process information. */
bool proc_filter_selects_all(const struct pghotd_config *cfg);

#endif
