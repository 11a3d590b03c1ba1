/* promoter_ops: the system calls the promoter makes, as a table tests and benchmarks replace
 * with fakes, and the real ones.
 *
 * The real ops keep their state in a context (struct promoter_sys, given as the table's ctx):
 * the procfs root every path is taken under, the pagemap file of the process being sized, and
 * the CPU affinity run_near changed. One context per promoter thread: run_near and
 * run_anywhere act on the calling thread, and the pagemap file is only kept within one
 * interval (release()). */
#ifndef PGHOTD_PROMOTER_OPS_H
#define PGHOTD_PROMOTER_OPS_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"

struct topology;

/* The promoter family's sizes, here in its lowest header so every module of it sees them. */
/* Hard cap on pages per move_pages call (the kernel migrates in chunks of this size). */
#define PROMOTER_MAX_BATCH 512
/* Pages the promoter holds at once: the deferred list plus what one round pops. */
#define PROMOTER_WORK_MAX 4096

struct promoter_ops {
	/* move_pages(2): nodes NULL queries placement. Returns 0, the number of pages not
	 * moved (> 0), or -errno for the whole call. */
	long (*move_pages)(void *ctx, pid_t pid, unsigned long count, void **pages,
			   const int *nodes, int *status, int flags);
	/* Monotonic milliseconds (used by the thread loop; run_once takes now as a parameter). */
	uint64_t (*now_ms)(void *ctx);
	/* Updates t's per-node free memory (real: topology_refresh_free). */
	int (*refresh_free)(void *ctx, struct topology *t);
	/* Size in bytes of the page (folio) mapped at each address of pid: what moving it
	 * would move. Fills sizes[n]; on failure the caller charges base pages. */
	int (*page_sizes)(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes);
	/* promotion.move_near_task: move the calling thread to the CPU pid last ran on
	 * (0 or -errno, nothing changed then; a no-op when it is already there), and back to
	 * where it may run anywhere (the promoter does that once it finds no work). NULL:
	 * never. */
	int (*run_near)(void *ctx, pid_t pid);
	void (*run_anywhere)(void *ctx);
	/* Drops what the ops keep about the processes they served (an open pagemap file): at
	 * the end of an interval and when a process is forgotten. NULL: nothing kept. */
	void (*release)(void *ctx);
	void *ctx;
};

/* The real ops' context. Promoter thread only (the thread whose affinity it changes). */
struct promoter_sys {
	const char *procfs_root; /* "/proc" live; must outlive the context */
	pid_t pagemap_pid;	 /* the process whose pagemap_fd is open, 0 none */
	int pagemap_fd;
	bool no_pagemap_scan; /* PAGEMAP_SCAN answered -ENOTTY: the kernel predates 6.7 */
	cpu_set_t anywhere;   /* the thread's own CPU mask before its first run_near */
	bool anywhere_saved;
	int pinned_cpu; /* the CPU run_near holds the thread on, -1 none */
	/* Each node's kernel mark in bytes (zoneinfo.h), read from <root>/zoneinfo by
	 * refresh_free when promoter_marks_due(), and when it was read (0: never). */
	uint64_t marks[CONFIG_MAX_NODES];
	uint64_t marks_ms;
	bool marks_failed; /* the last read failed, and said so */
};
/* The file holds lines per CPU for every populated zone: 37 us to read on 2 CPUs, a few ms
 * on hundreds. The marks bind only near them, and move within seconds (a watermark boost
 * decays as kswapd runs): re-read every PROMOTER_MARKS_MS while some node has less than
 * PROMOTER_MARKS_NEAR times its last mark free, else every PROMOTER_MARKS_FAR_MS. */
#define PROMOTER_MARKS_MS     1000
#define PROMOTER_MARKS_FAR_MS 30000
#define PROMOTER_MARKS_NEAR   4

/* Whether the marks read at last_ms (0: never) are due again at now (ms), t holding this
 * interval's free memory and the last marks. Pure. */
bool promoter_marks_due(const struct topology *t, uint64_t last_ms, uint64_t now);

/* Any thread, before the context's first use. procfs_root NULL: "/proc". */
void promoter_sys_init(struct promoter_sys *s, const char *procfs_root);
/* Closes what the context holds. */
void promoter_sys_fini(struct promoter_sys *s);

/* The real syscalls; ctx is a struct promoter_sys (a promoter given this table with ctx NULL
 * uses a context of its own). page_sizes uses the PAGEMAP_SCAN ioctl on <root>/PID/pagemap
 * (Linux 6.7+; PAGE_IS_HUGE marks PMD-mapped THP and hugetlb, charged at the PMD size),
 * falling back to <root>/PID/pagemap + <root>/kpageflags (KPF_THP,
 * promoter_sizes_by_kpageflags(); the first -ENOTTY ends the ioctl's tries) on older kernels;
 * when neither can be read (no CAP_SYS_ADMIN for PFNs), pages count as base pages. PTE-mapped
 * multi-size THP folios count as base pages too (an under-charge of the rate limit). run_near
 * reads the task's CPU from <root>/PID/stat. refresh_free reads each node's meminfo, and its
 * kernel mark from <root>/zoneinfo (marks are 0, as when unknown, while it cannot be read). */
extern const struct promoter_ops promoter_real_ops;

/* The page-size lookup of kernels before 6.7, on pagemap_fd (a process's
 * /proc/PID/pagemap) and the kpageflags file: sizes[i] of addrs[0..n) (base-page aligned)
 * becomes the PMD size for a page of a THP or hugetlb page whose PFN sits at the address's
 * offset in its PMD (as a PMD-mapped one does), and is left as it is otherwise. Ascending
 * addresses within 2 MiB of pagemap are read in one pread; kpageflags is opened and read only
 * for PFNs so aligned. -errno when kpageflags cannot be opened. */
int promoter_sizes_by_kpageflags(int pagemap_fd, const char *kpageflags, uint64_t base,
				 const uint64_t *addrs, size_t n, uint64_t *sizes);

/* A PMD maps one page table page of 8-byte entries: 2 MiB with 4 KiB pages. */
static inline uint64_t promoter_pmd_size(uint64_t base_page)
{
	return base_page * (base_page / 8);
}

#endif
