/* status: what `pghotd --status` shows, from the running daemon's stats file, for a person.
 * Pure: it takes the file's text and time and the nodes as read (status_cmd.c reads them),
 * so tests drive it with fixture files.
 *
 * A snapshot (status_snap) is the stats file's samples sorted into what the view needs: per
 * node, per source, the moves, and per cgroup (the pghotd_cgroup_* families, where the daemon
 * writes them: an older one does not, and the view says so). Rates come from two snapshots
 * of one daemon run, over the time between the daemon's two writes (the files' mtimes); with
 * one snapshot only, they are averages since the daemon started (pghotd_start_time_seconds),
 * and the view says which. Label values are printed with every byte outside printable ASCII
 * as \xHH, so a cgroup name cannot send a terminal control sequences. Main thread. */
#ifndef PGHOTD_STATUS_H
#define PGHOTD_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/prom_text.h"
#include "base/stats.h"
#include "sys/topology.h"

/* The most samples read from a stats file; the rest are counted, not read. pghotd's own
 * families take about 25 per node; the per-cgroup ones are bounded by the daemon's
 * configuration, far below this. */
#define STATUS_MAX_SAMPLES 200000
/* The most cgroups a snapshot keeps (the rest are counted): more than any configuration. */
#define STATUS_MAX_CGROUPS 4096
/* Rows of the cgroup table, the largest by slow-tier memory; (other) is shown besides. */
#define STATUS_TOP_CGROUPS 10
/* The stats file is stale once older than this many intervals of the configuration read, and
 * than STATUS_STALE_MIN_S: a daemon writing every 100 ms on a busy machine is late by a few
 * tenths of a second now and then (a make test on two cores: 0.3 s), which is no stall. */
#define STATUS_STALE_INTERVALS 3
#define STATUS_STALE_MIN_S     2.0

struct status_source {
	double active, samples, lost, scanned, scan_round_s;
};

struct status_cgroup {
	const char *name; /* into the snapshot's text */
	double promoted, demoted, hot;
	double slow_bytes, fast_bytes; /* by the tier of each node */
};

struct status_snap {
	struct prom_text text;
	double mtime; /* when the daemon wrote the file, seconds since the epoch */
	bool has_up;
	double up, start_time, cpu_s, kdamond_cpu_s, hot_pages, threshold;
	bool has_cpu;
	double promoted_pages[STATS_MAX_NODES], promoted_bytes[STATS_MAX_NODES];
	double demoted_pages[STATS_MAX_NODES], demoted_bytes[STATS_MAX_NODES];
	double demoted_why[DEMOTE__COUNT];
	double promote_failed, demote_failed, promote_limited, demote_limited, pauses;
	struct status_source source[SRC__COUNT];
	bool has_cgroups; /* the daemon writes per-cgroup families */
	double cgroups_shown, cgroups_folded;
	struct status_cgroup *cgroup;
	size_t nr_cgroups, cgroups_unread;
};

/* Sorts the samples of text (taken over: freed with the snapshot, also on failure) written
 * at mtime into *out; slow_nodes has bit N set for each slow node N (the tier a cgroup's
 * bytes count in). 0, or -ENOMEM. */
int status_snap_build(struct prom_text *text, double mtime, uint64_t slow_nodes,
		      struct status_snap *out);
void status_snap_free(struct status_snap *s);

/* Whether the snapshot shows a running daemon at `now` (seconds since the epoch): 0, or
 * -EBADMSG (no pghotd_up: not a pghotd stats file), -ESRCH (pghotd_up is 0: it stopped), or
 * -ESTALE (older than STATUS_STALE_INTERVALS x interval_ms), with one line in msg saying
 * which and since when. */
int status_check(const struct status_snap *s, double now, unsigned interval_ms, const char *path,
		 char *msg, size_t len);

/* The view: a header (uptime, the file's age, what the rates are over), the nodes with free
 * memory, tier and the bytes moved in and out, the moves, the sources and the cgroups. prev
 * is the snapshot before cur from the same file (NULL for none); t the nodes as just read
 * (free memory refreshed, marks read). */
void status_render(FILE *f, const struct status_snap *cur, const struct status_snap *prev,
		   const struct topology *t, double now, unsigned interval_ms);

/* Writes s to f with each byte outside printable ASCII (and the backslash) as \xHH, keeping
 * the last `width` characters of that (a "..." in front of a cut), padded to width. */
void status_put_label(FILE *f, const char *s, int width);

#endif
