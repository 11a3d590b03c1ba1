/* proc_filter: process selection by command name, cgroup and resident set size. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "table/proc_filter.h"
#include "sys/procfs.h"

/* Reads <procfs_root>/<pid>/<name>; -ESRCH when the process is gone. */
static int read_proc(const char *procfs_root, pid_t pid, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	int r = procfs_path(path, sizeof(path), procfs_root, pid, name);

	if (r < 0)
		return r;
	r = file_read_small(path, buf, len);
	return r == -ENOENT || r == -ESRCH ? -ESRCH : r;
}

int proc_info_read(const char *procfs_root, pid_t pid, struct proc_info *out)
{
	struct proc_info info = {0};
	char buf[1024];
	struct procfs_statm statm;
	/* statm first: a kernel thread (no mm) is never selected, so its comm and cgroup are not
	 * read (most of a host's pids: 61 of 64 in the guest, where the three reads of each cost
	 * pghotd's DAMON source 5.7 ms of CPU a listing, every second). */
	int r = procfs_read_statm(procfs_root, pid, &statm);

	if (r < 0)
		return r;
	info.kernel_thread = statm.size == 0;
	info.rss_bytes = statm.resident * (uint64_t)sysconf(_SC_PAGESIZE);
	if (info.kernel_thread) {
		*out = info;
		return 0;
	}
	r = read_proc(procfs_root, pid, "comm", buf, sizeof(buf));
	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	buf[sizeof(info.comm) - 1] = '\0'; /* comm is at most 16 bytes; never overflow */
	memcpy(info.comm, buf, strlen(buf) + 1);
	/* Read whole or not at all: a process whose cgroup is not known is not selected (an
	 * exclude_cgroup rule must not be escaped by a long path). */
	r = procfs_read_cgroup(procfs_root, pid, info.cgroup, sizeof(info.cgroup));
	if (r < 0)
		return r;
	*out = info;
	return 0;
}

static bool cgroup_match(const char *pattern, const char *path)
{
	char prefix[PROC_CGROUP_MAX];
	size_t l = strlen(path);

	if (fnmatch(pattern, path, 0) == 0)
		return true;
	/* A pattern naming a cgroup covers its descendants: try every ancestor of path. */
	while (l > 1) {
		while (l > 0 && path[l - 1] != '/')
			l--;
		if (l <= 1 || l >= sizeof(prefix))
			break;
		memcpy(prefix, path, l - 1);
		prefix[l - 1] = '\0';
		if (fnmatch(pattern, prefix, 0) == 0)
			return true;
		l--;
	}
	return false;
}

static bool any_match(const struct pattern_list *l, const char *s, bool cgroup)
{
	for (int i = 0; i < l->n; i++) {
		if (cgroup ? cgroup_match(l->item[i], s) : fnmatch(l->item[i], s, 0) == 0)
			return true;
	}
	return false;
}

bool proc_filter_match(const struct pghotd_config *cfg, const struct proc_info *info)
{
	if (info->kernel_thread)
		return false;
	if (cfg->processes.include_comm.n &&
	    !any_match(&cfg->processes.include_comm, info->comm, false))
		return false;
	if (cfg->processes.include_cgroup.n &&
	    !any_match(&cfg->processes.include_cgroup, info->cgroup, true))
		return false;
	if (any_match(&cfg->processes.exclude_comm, info->comm, false) ||
	    any_match(&cfg->processes.exclude_cgroup, info->cgroup, true))
		return false;
	return info->rss_bytes >= (uint64_t)cfg->processes.min_rss_mb << 20;
}

bool proc_filter_selects_all(const struct pghotd_config *cfg)
{
	return !cfg->processes.include_comm.n && !cfg->processes.include_cgroup.n &&
	       !cfg->processes.exclude_comm.n && !cfg->processes.exclude_cgroup.n &&
	       cfg->processes.min_rss_mb == 0;
}
