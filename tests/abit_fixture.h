/* The Accessed-bit source's test fixture, shared by the tests of its modules
 * (test_abit_*.c): scan rounds over a generated procfs tree (maps, stat, statm, pagemap,
 * kpageflags) and a bitmap file image, with the topology of tests/fixtures/abit-sysfs: node 0
 * has the CPUs and PFNs 0-1023, node 1 is memory-only (slow) with PFNs 1024-2047.
 *
 * The bitmap image stands in for the kernel: a round's mark sets the tracked pages' bits, and
 * a test "accesses" a page by clearing its bit, as the kernel does on the next read-back.
 * fx_setup()/fx_teardown() are CMocka's group-less setup and teardown (state: struct fx). */
#ifndef PGHOTD_TESTS_ABIT_FIXTURE_H
#define PGHOTD_TESTS_ABIT_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sources/abit/abit_source.h"
#include "table/access.h"
#include "base/config.h"
#include "sources/abit/idle_bitmap.h"
#include "sys/pagemap.h"
#include "base/stats.h"

struct FTW;

#define NR_PFNS	   4096
#define SLOW_PFN   1024 /* first PFN of node 1 */
#define KPF(b)	   (UINT64_C(1) << (b))
#define LRU	   KPF(KPF_LRU)
#define THP_HEAD   (KPF(KPF_THP) | KPF(KPF_COMPOUND_HEAD) | LRU)
#define THP_TAIL   (KPF(KPF_THP) | KPF(KPF_COMPOUND_TAIL))
#define VA	   UINT64_C(0x400000) /* a 2 MiB-aligned address with a small pagemap offset */
#define PIECE	   (UINT64_C(2) << 20)
#define MAX_EVENTS 4096

struct fx {
	char root[64], procfs[96], sysfs[96];
	struct topology *topo;
	struct pghotd_config *cfg;
	struct stats stats;
	struct abit *a;
	struct access_event ev[MAX_EVENTS];
	size_t nev;
	pid_t remove_on_event; /* delete this pid's directory when an event of pid 100 arrives */
	struct idle_io_ops ops;
	uint64_t clock_ns;
	size_t max_io; /* 0: no limit */
	unsigned io_calls;
	uint64_t bits_marked; /* idle bits written as 1 to the kernel's bitmap, tracked pages' */
	uint64_t io_tick_ns;  /* the clock advances this much at each pread and pwrite */
	/* Writes set bits, as the kernel's bitmap does; with this, as the kernel too: a page
	 * page_idle does not track (kpageflags: not an LRU page nor a THP head) ignores writes to
	 * its bit and reads 0. */
	bool untracked_read_0;
	ino_t bitmap_ino;
	uint64_t seed;		/* region sampling's */
	uint64_t pieces_cap;	/* the source's cap (deps.pieces_cap); 0: the default */
	struct cold_list *cold; /* demotion tests: where cold fast pages go */
	struct procs *registry; /* demotion tests: handles for the offers */
};

void fx_path(const struct fx *f, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void write_file(const char *path, const void *data, size_t len);
void pwrite_u64(const char *path, uint64_t off, uint64_t v);
uint64_t pread_u64(const char *path, uint64_t off);
void fx_sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev, size_t n);
/* Without a block map the node comes from move_pages: here, the first page of each piece
 * is on node 1 and every other page on node 0. */
long fx_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status);
int fx_setup(void **state);
int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw);
int fx_teardown(void **state);
void fx_new_abit(struct fx *f);
/* A process with one VMA [start, end), last run on cpu. */
void fx_proc(struct fx *f, pid_t pid, const char *comm, int cpu, uint64_t start, uint64_t end);
/* Maps pfn at vaddr in pid, mapped by pid alone (PAGEMAP_EXCLUSIVE), with kpageflags flags. */
void fx_map(struct fx *f, pid_t pid, uint64_t vaddr, uint64_t pfn, uint64_t flags);
void fx_unmap(struct fx *f, pid_t pid, uint64_t vaddr);
bool fx_idle_bit(struct fx *f, uint64_t pfn);
/* What the kernel does when the page is accessed: its idle bit reads 0. */
void fx_access(struct fx *f, uint64_t pfn);
int fx_round(struct fx *f);
/* One scan interval: ABIT_HOT_SPEEDUP rounds, so a piece that cooled down is scanned once.
 * Returns the accesses found, or the first error. */
int fx_interval(struct fx *f);
/* One step between rounds of mode full: a quarter of a round (abit_step()). */
int fx_step(struct fx *f);
/* Node node's meminfo with used KiB of 65536 in use, in a sysfs of the test's own (the
 * committed fixture is read-only) that the topology now reads. */
void fx_node_used(struct fx *f, int node, unsigned used_kib);
uint64_t fx_stat(struct fx *f, enum stat_src_counter c);
/* A process of 16 pieces of 2 MiB (8192 pages) with slow pages everywhere, max_regions 64:
 * sampling regions of at most L = ceil(4 * 8192 / 64) = 512 pages. */
void fx_regions_proc(struct fx *f);

#endif
