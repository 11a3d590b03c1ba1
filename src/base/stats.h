/* stats: the daemon's counters, kept with relaxed atomics (each counter is independent; a
 * reader needs no ordering with other memory), rendered in the Prometheus text format and
 * written atomically (temp file in the same directory, fsync-free rename, mode 0644).
 *
 * Any thread may add; the main thread renders and writes. Counters for pieces that do not
 * exist yet are present at 0 so dashboards can be built now. */
#ifndef PGHOTD_STATS_H
#define PGHOTD_STATS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define STATS_MAX_NODES 64

enum stat_source { SRC_IBS, SRC_PEBS, SRC_ABIT, SRC_DAMON, SRC__COUNT };

enum stat_fail_reason {
	FAIL_BUSY,   /* -EBUSY */
	FAIL_NOMEM,  /* -ENOMEM, target node full */
	FAIL_SHARED, /* -EACCES, page mapped by several processes */
	FAIL_GONE,   /* -EFAULT / -ENOENT */
	FAIL_NOPROC, /* ESRCH for the whole call */
	FAIL_OTHER,
	FAIL__COUNT
};

/* Why a page was demoted: to keep demotion.free_target_percent free, or to make room for hot
 * pages that promotion could not place (an exchange). */
enum stat_demote_reason { DEMOTE_FREE_TARGET, DEMOTE_EXCHANGE, DEMOTE__COUNT };
/* Why the Accessed-bit source left 2 MiB regions of a process out of its state
 * (pghotd_abit_regions_skipped_total{reason}). */
enum stat_abit_skip {
	SKIP_PROCESS_CAP, /* more than the process's resident set pays for */
	SKIP_TOTAL_CAP,	  /* the source's cap over every process reached */
	SKIP__COUNT
};

/* Per-source counters. */
enum stat_src_counter {
	SS_SAMPLES,	    /* pghotd_samples_total */
	SS_SAMPLES_LOST,    /* pghotd_samples_lost_total */
	SS_SAMPLES_DROPPED, /* pghotd_samples_dropped_total: filtered before the hot table */
	SS_THROTTLES,	    /* pghotd_throttle_events_total */
	SS_MALFORMED,	    /* pghotd_records_malformed_total */
	SS_PAGES_SCANNED,   /* pghotd_pages_scanned_total */
	SS_SCAN_IO_BYTES,   /* pghotd_scan_io_bytes_total */
	SS__COUNT
};

/* Unlabelled counters and gauges. */
enum stat_counter {
	ST_UP, /* gauge */
	ST_CONFIG_RELOADS,
	ST_CONFIG_RELOAD_FAILURES,
	ST_HOT_PAGES, /* gauge */
	ST_HOT_TABLE_REPLACEMENTS,
	ST_HOT_TABLE_QUEUE_FULL,
	ST_PROMOTE_CANDIDATES,
	ST_PROMOTE_SKIPPED_FAST, /* already on a fast node */
	ST_PROMOTE_SKIPPED_COOLDOWN,
	ST_PROMOTE_DRY_RUN,	 /* decisions made in dry_run */
	ST_PROMOTE_RATE_LIMITED, /* pages deferred by the rate limit */
	ST_PROCESSES_FORGOTTEN,
	ST_NODE_PAUSES,
	ST_CONFIG_THRESHOLD,   /* gauge: promotion.threshold in force */
	ST_START_TIME_SECONDS, /* gauge */
	ST_DEMOTE_CANDIDATES,  /* cold pages the mover took to demote */
	ST_DEMOTE_SKIPPED,     /* no longer on the fast node they were found on */
	ST_DEMOTE_DRY_RUN,
	ST_DEMOTE_RATE_LIMITED,	 /* dropped for this interval by demotion.rate_limit_mbps */
	ST_BATCHES_PID_REUSED,	 /* move batches dropped: the pid now names another process */
	ST_DAMON_KDAMOND_CPU_US, /* gauge: CPU time of pghotd's kdamonds, printed in seconds */
	ST_DAMON_SAMPLE_US,	 /* gauge: the kdamond's sampling interval, printed in seconds */
	ST_CGROUP_READ_FAILURES, /* a watched process's cgroup or numa_maps could not be read */
	ST_CPU_US,		 /* pghotd's own CPU time, printed in seconds */
	ST__COUNT
};

struct stats {
	_Atomic uint64_t c[ST__COUNT];
	_Atomic uint64_t src[SRC__COUNT][SS__COUNT];
	_Atomic uint64_t src_active[SRC__COUNT];	/* gauge 0/1 */
	_Atomic uint64_t src_scan_round_us[SRC__COUNT]; /* gauge: last scan round time */
	_Atomic uint64_t abit_skip[SKIP__COUNT];
	_Atomic uint64_t promoted_pages[STATS_MAX_NODES];
	_Atomic uint64_t promoted_bytes[STATS_MAX_NODES];
	_Atomic uint64_t node_slow[STATS_MAX_NODES]; /* gauge 0/1: the tier pghotd promotes from */
	_Atomic uint64_t fail[FAIL__COUNT];
	/* By the fast node a page left. */
	_Atomic uint64_t demoted_pages[DEMOTE__COUNT][STATS_MAX_NODES];
	_Atomic uint64_t demoted_bytes[DEMOTE__COUNT][STATS_MAX_NODES];
	_Atomic uint64_t demote_fail[FAIL__COUNT];
	int nr_nodes; /* nodes to print in per-node families; set at start */
	/* Families a higher layer renders after these (the per-cgroup ones); set on the main
	 * thread before the first render (stats_set_extra()), called on the main thread. */
	int (*extra)(void *ctx, FILE *f);
	void *extra_ctx;
};

/* Zeroes every counter, sets pghotd_up to 1 and the start time to now (the caller may
 * overwrite both with stats_set()); nr_nodes is clamped to 0..STATS_MAX_NODES. */
void stats_init(struct stats *s, int nr_nodes);

static inline void stats_add(struct stats *s, enum stat_counter c, uint64_t n)
{
	atomic_fetch_add_explicit(&s->c[c], n, memory_order_relaxed); /* independent counter */
}
static inline void stats_set(struct stats *s, enum stat_counter c, uint64_t v)
{
	atomic_store_explicit(&s->c[c], v, memory_order_relaxed); /* independent gauge */
}
static inline uint64_t stats_get(struct stats *s, enum stat_counter c)
{
	return atomic_load_explicit(&s->c[c], memory_order_relaxed);
}
static inline void stats_src_add(struct stats *s, enum stat_source src, enum stat_src_counter c,
				 uint64_t n)
{
	atomic_fetch_add_explicit(&s->src[src][c], n, memory_order_relaxed);
}
/* Any thread. A node outside 0..STATS_MAX_NODES-1 is ignored; a node >= nr_nodes is
 * counted and rendered once non-zero. An out-of-range reason counts as FAIL_OTHER. */
void stats_promoted(struct stats *s, int node, uint64_t pages, uint64_t bytes);
void stats_fail(struct stats *s, enum stat_fail_reason r, uint64_t n);
/* Any thread: pages demoted from fast node `node`, as stats_promoted() for its range. */
void stats_demoted(struct stats *s, int node, enum stat_demote_reason why, uint64_t pages,
		   uint64_t bytes);
void stats_demote_fail(struct stats *s, enum stat_fail_reason r, uint64_t n);
void stats_abit_skip(struct stats *s, enum stat_abit_skip why, uint64_t n);
void stats_source_active(struct stats *s, enum stat_source src, int active);
/* Main thread: whether node is slow (pghotd_node_slow{node}), at the start and each reload;
 * a node outside 0..STATS_MAX_NODES-1 is ignored. */
void stats_node_slow(struct stats *s, int node, int slow);

const char *stat_source_name(enum stat_source s);
const char *stat_fail_reason_name(enum stat_fail_reason r);
const char *stat_demote_reason_name(enum stat_demote_reason r);

/* Renders the text exposition format (0.0.4) into f: # HELP and # TYPE once per family,
 * every family present even at 0, labels source="ibs|pebs|abit|damon", node="N",
 * reason="busy|nomem|shared|gone|noproc|other" (demotions: node="N",reason="free_target|exchange"),
 * then the extra families (stats_set_extra()). -EIO when the stream fails. */
int stats_render(struct stats *s, FILE *f);
/* Main thread: render() renders more families after these (NULL: none); it returns 0 or
 * -errno, as stats_render() does. */
void stats_set_extra(struct stats *s, int (*render)(void *ctx, FILE *f), void *ctx);
/* Whether the n bytes at v can be a label value: UTF-8 (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), which Prometheus requires; a scrape with one invalid value
 * fails whole. Pure. */
bool stats_label_valid(const char *v, size_t n);
/* Writes the n bytes at v as a label value of the text exposition format (0.0.4): backslash,
 * double quote and newline escaped as \\, \" and \n, every other byte as it is (the caller
 * gives a stats_label_valid() one). */
void stats_label_value(FILE *f, const char *v, size_t n);
/* Writes to path atomically through file_write_atomic() (an exclusive temporary of random
 * name in path's directory, then rename); mode 0644. Creates nothing but the file (the
 * directory must exist). -errno on failure. */
int stats_write_file(struct stats *s, const char *path);
/* Sum of promoted_pages over nodes (for STATUS=). */
uint64_t stats_promoted_pages_total(struct stats *s);
uint64_t stats_promoted_bytes_total(struct stats *s);
/* Sum of demoted_bytes over nodes and reasons (the Accessed-bit source tells pghotd's own
 * demotions from other arrivals on the slow tier by it). */
uint64_t stats_demoted_bytes_total(struct stats *s);

#endif
