/* cgroup_top: which cgroups have series of their own in the per-cgroup families (cgroups.h),
 * and the series (other) that sums the rest. At most max series, allocated with the set
 * (cgroup_top_new(), cgroup_top_resize()); a round allocates nothing.
 *
 * A round: cgroup_top_begin(); cgroup_top_offer() once for each cgroup of a watched process,
 * with its bytes on slow nodes; cgroup_top_settle() updates the shown set; then the caller adds
 * the round's figures through cgroup_top_gauges() and cgroup_top_counters().
 *
 * The rule, stated in pghotd.conf(5) under PER-CGROUP FIGURES: a shown cgroup keeps its series
 * while a watched process is in it; a free place goes to the largest folded cgroup; a folded
 * cgroup takes the place of the smallest shown one only with more than twice its bytes on slow
 * nodes, so two cgroups of about the same size do not swap places every round. A series'
 * counters start at 0: what is counted for a cgroup in the round it is shown goes to (other),
 * so every page counts once, in one series, and (other) only grows. A cgroup whose path cannot
 * be read or is not a label value Prometheus takes (stats_label_valid()) stays folded.
 * Main thread only. */
#ifndef PGHOTD_CGROUP_TOP_H
#define PGHOTD_CGROUP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgroup_series {
	uint64_t key;		    /* the cgroup (a keyed hash of its path); 0: a free place */
	uint64_t promoted, demoted; /* counters, in pages, since the series was shown */
	uint64_t hot;		    /* gauge: hot pages waiting */
	uint64_t *bytes;	    /* gauge: bytes resident on each node, [nr_nodes] */
	uint64_t slow;		    /* this round: bytes on slow nodes, the rank */
	uint32_t rep;		    /* this round: a process in it, whose file gives the path */
	bool seen;		    /* offered this round */
	bool fresh;		    /* shown this round: its counts go to (other) */
	size_t len;
	char *label; /* the cgroup's path, a valid label value; "(other)" for (other) */
};

/* The path of cgroup key as process rep's file shows it, into buf[size]: its length, or -errno
 * (the cgroup stays folded this round). */
typedef int (*cgroup_top_path_fn)(void *ctx, uint32_t rep, uint64_t key, char *buf, size_t size);

struct cgroup_top;

/* max: places (0: none, every cgroup folded); nr_nodes: the bytes each series has. */
int cgroup_top_new(unsigned max, int nr_nodes, struct cgroup_top **out);
void cgroup_top_free(struct cgroup_top *t);
/* Replaces *t with a set of max places holding the series of *t that fit (the largest by the
 * last round first, counters kept) and its (other). 0, or -ENOMEM with *t unchanged. */
int cgroup_top_resize(struct cgroup_top **t, unsigned max);
unsigned cgroup_top_max(const struct cgroup_top *t);

void cgroup_top_begin(struct cgroup_top *t);
/* Cgroup key (not 0) has watched processes, rep one of them, and slow bytes on slow nodes. The
 * max largest folded ones are candidates for a place; one the caller knows cannot be shown
 * (showable false: a path that is not UTF-8) is counted as folded and never a candidate, so
 * such names cannot crowd out those that can be shown. */
void cgroup_top_offer(struct cgroup_top *t, uint64_t key, uint64_t slow, uint32_t rep,
		      bool showable);
void cgroup_top_settle(struct cgroup_top *t, cgroup_top_path_fn path, void *ctx);
/* The series the gauges of cgroup key go to: its own when shown, else (other). */
struct cgroup_series *cgroup_top_gauges(struct cgroup_top *t, uint64_t key);
/* The series what was counted for cgroup key goes to: as cgroup_top_gauges(), but (other) in
 * the round the cgroup was shown. */
struct cgroup_series *cgroup_top_counters(struct cgroup_top *t, uint64_t key);

/* After cgroup_top_settle(): cgroups shown, and cgroups offered this round but folded. */
void cgroup_top_sizes(const struct cgroup_top *t, unsigned *shown, unsigned *folded);
/* Place i (below cgroup_top_max()): its series, NULL when free. */
const struct cgroup_series *cgroup_top_at(const struct cgroup_top *t, unsigned i);
const struct cgroup_series *cgroup_top_other(const struct cgroup_top *t);

#endif
