/* The per-cgroup figures' fixture, shared by test_cgroups.c and bench/bench_cgroups.c: a
 * struct cgroups over a /proc tree of the fixture's own (a temporary directory as procfs_root:
 * no real process is read), the real registry, hot table and stats, and the topology of
 * tests/fixtures/sysfs-3node-cxl (node 2 is the slow one). Functions return 0 or -errno and
 * assert nothing, so a benchmark without CMocka links them; the test asserts their results. */
#ifndef PGHOTD_TESTS_CGROUPS_FIXTURE_H
#define PGHOTD_TESTS_CGROUPS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "base/stats.h"
#include "table/cgroups.h"
#include "table/hot_table.h"
#include "table/procs.h"

#define CGFX_NODES 3

struct cgfx {
	char root[64]; /* the /proc tree */
	struct procs *procs;
	struct cgroups *cg;
	struct hot_table *hot;
	struct stats stats;
	struct pghotd_config *cfg; /* the defaults, with the fixture's topology */
};

/* What cgfx_new() builds: max_shown is stats.cgroups_max, max_procs the registry's places;
 * reads_per_tick and walk_bytes as in struct cgroups_deps (0: the daemon's defaults). */
struct cgfx_opts {
	unsigned max_shown, max_procs, reads_per_tick;
	uint64_t walk_bytes;
};

/* fixtures: the tests/fixtures directory. */
int cgfx_new(const char *fixtures, const struct cgfx_opts *o, struct cgfx **out);
/* Frees f and removes its /proc tree: 0, or -EIO when the tree could not be removed. */
int cgfx_free(struct cgfx *f);
/* Process pid, registered, in the cgroup of path[0..len) with pages[n] pages resident on
 * each node n of CGFX_NODES. */
int cgfx_proc(struct cgfx *f, pid_t pid, const char *path, size_t len, const uint64_t *pages);
/* cgroups_render() into memory: *text (the caller frees it) and its *len, set on success. */
int cgfx_render(struct cgfx *f, char **text, size_t *len);

#endif
