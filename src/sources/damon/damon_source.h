/* damon_source: the DAMON source. pghotd runs a kdamond of its own (damon_sysfs.h) with one
 * virtual-address target per watched process, reads the regions it reports at the end of
 * each aggregation interval through the damon:damon_aggregated tracepoint (damon_event.h) on
 * the perf sampler's rings (one tracepoint event per CPU, raw samples), and turns them into
 * hot-table accesses and cold-list offers (damon_feed.h), so the one mover serves it as it
 * serves the other sources.
 *
 * Why the tracepoint and not the sysfs tried_regions files: a region report there names no
 * target (two processes' regions cannot be told apart), and reading it is four files per
 * region; the tracepoint names the target index and costs a record per region in a ring.
 *
 * The targets follow the processes: every DAMON_REFRESH_MS the procfs root is listed, the
 * `processes` selection applied (proc_filter.h; pghotd itself, kernel threads and processes
 * of less than DAMON_MIN_RSS_MIB resident never), and
 * a changed set (or changed intervals after a reload) is committed to the running kdamond.
 * Regions reported before a commit returned keep the target list they were counted with
 * (samples carry CLOCK_MONOTONIC times). Records of another thread than our kdamond are
 * ignored. The kdamond's CPU time (utime + stime of /proc/PID/stat, every kdamond it ran)
 * goes to pghotd_damon_kdamond_cpu_seconds: a DAMON run costs pghotd's CPU plus that.
 *
 * Threads: new/start/stop/free on the main thread; everything else on the sampler thread. */
#ifndef PGHOTD_DAMON_SOURCE_H
#define PGHOTD_DAMON_SOURCE_H

#include <sys/types.h>

#include "table/access.h"
#include "base/config_pub.h"
#include "sources/perf/perf_sampler.h"
#include "sources/source.h"

#define DAMON_REFRESH_MS    1000
#define DAMON_MAX_TARGETS   1024
#define DAMON_RING_PAGES    64
#define DAMON_REGIONS_DRAIN 65536      /* regions kept per drain; more are counted lost */
#define DAMON_PAGES_DRAIN   (1u << 20) /* pagemap entries read per drain at most (4 GiB) */
#define DAMON_UPDATE_US	    1000000    /* DAMON's default: VMAs re-read once a second */
#define DAMON_MIN_RSS_MIB   8	       /* smaller processes are no targets */
#define DAMON_PROBE_PAGES   32	       /* pages of a region to cut looked up (damon_pace.h) */

struct cold_list;
struct procs;
struct stats;

struct damon_source_deps {
	const char *sysfs_root;	 /* "/sys" live */
	const char *procfs_root; /* "/proc" live */
	struct access_sink sink;
	struct stats *stats;
	struct cold_list *cold;		    /* NULL: no demotion candidates */
	struct procs *procs;		    /* handles of the cold pages' processes; NULL: none */
	pid_t self_pid;			    /* never a target; 0: getpid() */
	const struct perf_sampler_ops *ops; /* NULL: the real syscalls */
	const char *kernel_release;	    /* uname(2) release (damon_pace.h); NULL: uname */
};

struct damon_source;

/* Main thread: registers a config_pub slot, reads the tracepoint's format, opens its events
 * and claims a kdamond. On failure one log line with the reason (also in why), -errno,
 * nothing claimed, open or registered. */
int damon_source_new(const struct damon_source_deps *d, struct config_pub *pub,
		     struct damon_source **out, char *why, size_t size);
/* Main thread: sets the first targets and starts the thread. -errno, nothing started. */
int damon_source_start(struct damon_source *s);
/* Main thread: stops the thread, the kdamond, and gives the kdamond back. Idempotent. */
void damon_source_stop(struct damon_source *s);
void damon_source_free(struct damon_source *s);

/* The source interface: new and start on the engine's deps; stop frees. */
extern const struct source_ops damon_source_ops;

#endif
