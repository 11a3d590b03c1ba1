/* procfs: where pghotd reads other processes' /proc files, under a root ("/proc" live, a
 * fixture tree in tests): the pid listing, /proc/PID/stat, the lines of maps and numa_maps,
 * the cgroup file, the paths of a process's files, and opening its pagemap.
 *
 * Every file is another process's, so hostile input: a stat file is read whole into
 * PROCFS_STAT_MAX bytes (a longer one is -EFBIG, never cut) and parsed within the bytes read
 * (NUL bytes and newlines in the command name included: its end is the last ')'), and so is a
 * cgroup file (PROCFS_CGROUP_FILE_MAX; any byte of a cgroup's name kept as it is); a maps or
 * numa_maps line is parsed within its length, MAPS_LINE_PREFIX bytes of it at most, so the
 * callers' line-bounded reads (file_read_lines()) bound time and memory whatever the file
 * claims. pagemap.h decodes the bits of what pagemap and kpageflags hold. Any thread. */
#ifndef PGHOTD_PROCFS_H
#define PGHOTD_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The most of a /proc/PID/stat file read: 52 fields of at most 20 digits and a command name
 * of 16 bytes fill about 1,100. */
#define PROCFS_STAT_MAX 4096
/* The highest CPU number a stat line may name (field 39). */
#define PROCFS_CPU_MAX (1 << 20)

/* <root>/<pid>/<name> into buf[size]. 0, or -ENAMETOOLONG when it does not fit. */
int procfs_path(char *buf, size_t size, const char *root, pid_t pid, const char *name);

/* The numeric entries of the root (every process), sorted, in a new array (*out, free() it;
 * *n may be 0). -errno (the root cannot be read), -ENOMEM; outs untouched then. */
int procfs_list_pids(const char *root, pid_t **out, size_t *n);

/* What pghotd reads of a /proc/PID/stat line. */
struct procfs_stat {
	uint64_t utime, stime; /* fields 14 and 15: CPU time in user and kernel mode (ticks) */
	uint64_t starttime;    /* field 22: start time after boot (ticks) */
	int cpu;	       /* field 39: the CPU it last ran on; -1 when the line has none */
};

/* Parses the stat text at text, of len bytes (no NUL needed; it ends at the first newline
 * after the command name, or after len bytes). Fields are counted after the last ')', one
 * space before each and none empty, as the kernel writes them; fields 14, 15 and 22 must be decimal
 * numbers
 * (-ERANGE past 64 bits); field 39 gives cpu when it is a number up to PROCFS_CPU_MAX, else
 * cpu is -1 (a line that ends before it: older kernels, tests). -EINVAL when malformed; *out
 * untouched on failure. */
int procfs_parse_stat(const char *text, size_t len, struct procfs_stat *out);
/* Reads and parses <root>/<pid>/stat. -ESRCH when the process is gone, -EFBIG past
 * PROCFS_STAT_MAX bytes, -errno (file_read_small()), or procfs_parse_stat()'s. */
int procfs_read_stat(const char *root, pid_t pid, struct procfs_stat *out);

/* Where pid last ran, for the access events of the page-table sources: *cpu from field 39 of
 * its stat file; -1 when the file cannot be read or names no CPU, and the -errno (-EINVAL: no
 * CPU) is returned then. topology_cpu_node() gives its node. */
int procfs_last_cpu(const char *root, pid_t pid, int *cpu);

/* What pghotd reads of /proc/PID/statm: the first two fields, in pages. */
struct procfs_statm {
	uint64_t size;	   /* 0 for a kernel thread, which has no address space */
	uint64_t resident; /* the resident set */
};

/* Parses a statm text (NUL-terminated) as the kernel writes it: "size resident ...", both
 * decimal, a space after size, and a space, a newline or the end after resident. -EINVAL when
 * malformed; *out untouched on failure. */
int procfs_parse_statm(const char *text, struct procfs_statm *out);
/* Reads and parses <root>/<pid>/statm. -ESRCH when the process is gone, -errno
 * (file_read_small()), or procfs_parse_statm()'s. */
int procfs_read_statm(const char *root, pid_t pid, struct procfs_statm *out);

/* Opens <root>/<pid>/pagemap read-only, close-on-exec: the fd, or -errno (-ENOENT or -ESRCH:
 * the process is gone; -EACCES or -EPERM: not ours to read). */
int procfs_open_pagemap(const char *root, pid_t pid);

struct maps_vma {
	uint64_t start, end; /* [start, end), page aligned */
	bool readable;
	bool special; /* [vsyscall], [vvar], [vdso]: no LRU pages to track */
};

/* Bytes of a maps line looked at: the fields before the name, and enough of the name. */
#define MAPS_LINE_PREFIX 192

/* Parses the /proc/PID/maps line at line, of at most len bytes (it ends at the first newline
 * within them, or after len bytes; no NUL needed): reads at most MAPS_LINE_PREFIX bytes,
 * whatever follows. -EINVAL when malformed. */
int maps_parse_line(const char *line, size_t len, struct maps_vma *out);

/* Parses the /proc/PID/numa_maps line at line, of len bytes (no NUL needed): the VMA's start
 * address and its pages resident on any node (the sum of its "N<node>=<pages>" fields; 0 for
 * a VMA with nothing resident, which has none). -EINVAL when it does not start with a hex
 * address. */
int numa_maps_parse_line(const char *line, size_t len, uint64_t *start, uint64_t *pages);
/* Adds what the numa_maps line at line (len bytes, no NUL needed) shows resident on each node
 * to bytes[0..nr_nodes): its "N<node>=<pages>" fields times the VMA's page size (its
 * "kernelpagesize_kB=" field: a hugetlb VMA counts huge pages; base_page when absent). Fields
 * of nodes at or past nr_nodes are left out; sums saturate. -EINVAL as numa_maps_parse_line(),
 * bytes untouched then. */
int numa_maps_node_bytes(const char *line, size_t len, uint64_t base_page, uint64_t *bytes,
			 int nr_nodes);
/* Reads <root>/<pid>/numa_maps a line at a time through buf[size] (file_read_lines(): a longer
 * line is cut, so memory and time follow the lines read) and sums numa_maps_node_bytes() of
 * every line into bytes[0..nr_nodes), zeroed first. -ESRCH when the process is gone, -errno
 * (file_read_lines()); bytes holds what was read before a failure. */
int procfs_read_numa_bytes(const char *root, pid_t pid, char *buf, size_t size, uint64_t base_page,
			   uint64_t *bytes, int nr_nodes);

/* The longest cgroup v2 path kept, its NUL included, and the most of /proc/PID/cgroup read
 * (every v1 hierarchy's line and the v2 one). */
#define PROCFS_CGROUP_MAX      4096
#define PROCFS_CGROUP_FILE_MAX 16384

/* The cgroup v2 path of the /proc/PID/cgroup text at text, of len bytes (no NUL needed), into
 * out[size], NUL-terminated: what follows "0::" on the line that starts with it, to the end of
 * the text less its final newline. The kernel writes the v2 line last and prints a cgroup's
 * name as it is (any byte but NUL and '/'), so a newline in a name stays in the path. Returns
 * the path's length (0 and "" when there is no v2 line: cgroup v1 only), -ENAMETOOLONG when it
 * does not fit, -EBADMSG for a NUL byte in it or a second line starting "0::" (a name holding
 * "\n0::" could show another cgroup's path: the cgroup is not known then). out untouched on
 * failure. */
int procfs_parse_cgroup(const char *text, size_t len, char *out, size_t size);
/* Reads <root>/<pid>/cgroup whole (-EFBIG past PROCFS_CGROUP_FILE_MAX bytes: never cut) and
 * parses it into out[size]. The path's length, -ESRCH when the process is gone, -errno
 * (file_read_small()), or procfs_parse_cgroup()'s. */
int procfs_read_cgroup(const char *root, pid_t pid, char *out, size_t size);

#endif
