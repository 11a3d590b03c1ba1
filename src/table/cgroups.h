/* cgroups: the per-cgroup figures of the processes pghotd watches (pghotd.conf(5), PER-CGROUP
 * FIGURES): pages promoted and demoted, bytes resident on each node, hot pages waiting, for at
 * most stats.cgroups_max cgroups chosen by their bytes on slow nodes (cgroup_top.h) and
 * cgroup="(other)" for the rest.
 *
 * The processes are the registry's (procs.h: those a source reported or the mover took cold
 * pages of) that the `processes` selection takes. Beside each registry slot, in arrays allocated
 * in cgroups_new(): the pages the mover moved for it (cgroups_moved(), any thread, relaxed adds
 * the main thread takes with an exchange: independent counters, no other memory hangs on them),
 * and what the main thread last read of it: its cgroup (a SipHash of its path under a key
 * drawn at start, so names another user picks cannot be made to collide), whether the
 * selection takes it, its resident set, and its bytes on each node from its numa_maps.
 *
 * cgroups_refresh() (main thread, every stats interval) reads processes new to the registry
 * first, then the others in turn, at most reads_per_tick a round; numa_maps, whose cost in the
 * kernel follows the resident set (a page-table walk), is read for a process only when the
 * round's allowance of walk_bytes (banked up to 64 rounds' worth when unused) covers its
 * resident set. Then it takes the counts, counts the hot table's waiting pages by process, and
 * sums by cgroup. Memory does not grow with what processes do: everything is allocated in
 * cgroups_new() and cgroups_resize() (the shown set). */
#ifndef PGHOTD_CGROUPS_H
#define PGHOTD_CGROUPS_H

#include <stdint.h>
#include <stdio.h>

#include "base/config.h"
#include "base/siphash.h"

struct procs;
struct hot_table;
struct stats;

/* Processes read in one round, and resident bytes whose numa_maps one round may walk. */
#define CGROUPS_READS_PER_TICK 512
#define CGROUPS_WALK_BYTES     (UINT64_C(8) << 30)

struct cgroups_deps {
	const char *procfs_root;
	struct procs *procs;
	struct hot_table *hot; /* NULL: no hot pages counted */
	struct stats *stats;   /* ST_CGROUP_READ_FAILURES; NULL: not counted */
	int nr_nodes;	       /* nodes of the per-node series (at most STATS_MAX_NODES) */
	uint8_t seed[SIPHASH_KEY_SIZE];
	unsigned reads_per_tick; /* 0: CGROUPS_READS_PER_TICK */
	uint64_t walk_bytes;	 /* 0: CGROUPS_WALK_BYTES */
};

enum cgroups_dir { CGROUPS_PROMOTED, CGROUPS_DEMOTED, CGROUPS__DIRS };

struct cgroups;

/* Main thread. max_shown: stats.cgroups_max. The deps' pointers must outlive it. */
int cgroups_new(const struct cgroups_deps *d, unsigned max_shown, struct cgroups **out);
void cgroups_free(struct cgroups *c);
/* Main thread, at a reload: another stats.cgroups_max (cgroup_top_resize()). 0 or -ENOMEM, the
 * old set kept then. */
int cgroups_resize(struct cgroups *c, unsigned max_shown);
/* Any thread (the mover): pages of process proc (a procs handle) moved in direction dir. c may
 * be NULL. */
void cgroups_moved(struct cgroups *c, uint32_t proc, enum cgroups_dir dir, uint64_t pages);
/* Main thread: one round, as above; cfg gives the selection and the slow nodes. */
void cgroups_refresh(struct cgroups *c, const struct pghotd_config *cfg);
/* Main thread: the per-cgroup families in the text format, nothing when stats.cgroups_max is 0
 * (a stats_set_extra() callback; ctx is the struct cgroups). 0, or -EIO. */
int cgroups_render(void *ctx, FILE *f);

#endif
