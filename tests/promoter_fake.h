/* The promoter tests' fixture: the real hot table, procs, stats and the 3-node fixture topology
 * (nodes 0,1 DRAM with CPUs, node 2 CPU-less CXL; distance 0-1 32, to 2 50), with a fake
 * move_pages, clock, free-memory refresh and page-size lookup behind the promoter's ops table.
 * Shared by test_promoter.c, test_mover.c, test_promotion.c and test_demotion.c. */
#ifndef PGHOTD_TEST_PROMOTER_FAKE_H
#define PGHOTD_TEST_PROMOTER_FAKE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "table/cgroups.h"
#include "table/cold_list.h"
#include "base/config.h"
#include "table/hot_table.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "sys/topology.h"

#define KIB	     UINT64_C(1024)
#define MIB	     (KIB * KIB)
#define THP	     (2 * MIB)
#define BASE	     (4 * KIB)
#define SLOW	     2
#define MAX_SPECIAL  64
#define MAX_CALLS    4096
#define UNWRITTEN_ME 1 /* force: leave the status entry unwritten */

/* A page with behaviour of its own; every other page sits on SLOW, is 4 KiB (2 MiB inside
 * [huge_lo, huge_hi)) and moves fine. */
struct fake_page {
	pid_t pid;
	uint64_t addr;
	int node;
	int busy;  /* -EBUSY this many more moves */
	int force; /* status to report on move: -EACCES, -EFAULT, ..., or UNWRITTEN_ME */
};

struct fake {
	struct fake_page special[MAX_SPECIAL];
	int nr_special;
	uint64_t huge_lo, huge_hi;
	size_t size_lookups; /* pages whose size page_sizes() was asked */
	pid_t esrch_query, esrch_move;
	pid_t einval_query;	/* the kernel's answer for a task whose mm is gone */
	size_t esrch_from_call; /* esrch_move applies to move calls from this index on */
	bool nomem[3];
	unsigned free_pct[3];
	uint64_t mark_pages[3]; /* each node's kernel mark (topo_node.mem_mark), in base pages */
	/* Free memory follows the moves: bytes moved out of (in to) a node since the test began,
	 * added to (taken from) what free_pct gives. */
	bool account;
	int64_t moved_out[3];
	uint64_t now;
	atomic_uint now_reads; /* clock reads, from the promoter thread too */
	/* Move calls (nodes != NULL). */
	size_t calls;
	unsigned long call_size[MAX_CALLS];
	int call_node[MAX_CALLS]; /* the first page's target */
	pid_t call_pid[MAX_CALLS];
	size_t queries;
	size_t query_size[MAX_CALLS];
	uint64_t pages_moved, bytes_moved;
	uint64_t moved_to[3];
	/* run_near / run_anywhere: where the promoter thread was asked to run. */
	pid_t near_pid[MAX_CALLS];
	size_t nears, anywheres;
	bool near_at_move[MAX_CALLS]; /* a move call made while near its process */
	pid_t near_now;		      /* 0: anywhere */
};

struct fx {
	struct fake fake;
	struct promoter_ops ops;
	struct topology *topo;
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct pghotd_config *cfg;
	struct promoter *p;
	struct cold_list *cold;	 /* demotion tests: the promoter takes cold pages from it */
	struct cgroups *cgroups; /* pages moved by process, on this process's real /proc */
	uint32_t self;
	pid_t child;
	uint32_t child_h;
};

/* Sum over the cgroups' series of family (pghotd_cgroup_promoted_pages_total, ...) after a
 * cgroups_refresh(): every page moved counts once, in its cgroup's series or in (other). */
uint64_t cgroup_sum(struct fx *x, const char *family);
struct fake_page *fake_find(struct fake *f, pid_t pid, uint64_t addr);
long fake_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages, const int *nodes,
		     int *status, int flags);
uint64_t fake_now(void *ctx);
/* The promoter thread reads the clock once for run_once and once as it starts waiting: after
 * the second read, its first interval is over (a sleep guessed wrong on a loaded machine). */
void wait_first_interval(struct fx *x);
int fake_refresh_free(void *ctx, struct topology *t);
int fake_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes);
void fake_special(struct fx *x, pid_t pid, uint64_t addr, int node, int busy, int force);
int fake_run_near(void *ctx, pid_t pid);
void fake_run_anywhere(void *ctx);
int setup(void **state);
int teardown(void **state);
/* A live second process to own pages. */
void spawn_child(struct fx *x);
/* One access that makes the page hot (threshold 1). */
int hot(struct fx *x, uint32_t proc, uint64_t addr, int node);
/* Like hot(), for an access whose physical address showed the page on a slow node. */
int hot_seen_slow(struct fx *x, uint32_t proc, uint64_t addr, int node);
/* Like hot_seen_slow(), from a source that also saw the page's size (the abit scanner). */
int hot_sized(struct fx *x, uint64_t addr, enum hot_size size);
int run(struct fx *x);
uint64_t fails(struct fx *x, enum stat_fail_reason r);
uint64_t promoted_to(struct fx *x, int node);

#endif
