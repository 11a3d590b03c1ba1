/* status_cmd: `pghotd --status [--watch [SECONDS]]`, the I/O around status.h's view: it reads
 * the stats file the configuration names (a regular file of at most STATUS_CMD_MAX_BYTES,
 * read with its mtime from one open), refreshes the nodes' free memory and the kernel's marks
 * (topology.h, zoneinfo.h, under the roots given), and prints the view once or, with watch,
 * every watch_s seconds on a cleared screen until SIGINT or SIGTERM (through a signalfd: the
 * last frame stays on the screen, exit 0). Needs nothing but read access to the stats file,
 * sysfs and procfs. Main thread, no other thread running. */
#ifndef PGHOTD_STATUS_CMD_H
#define PGHOTD_STATUS_CMD_H

#include <stdio.h>

#include "sys/topology.h"

/* A larger file is refused: pghotd's are a few KiB plus the bounded per-cgroup families. */
#define STATUS_CMD_MAX_BYTES (8u << 20)

struct status_cmd {
	const char *stats_path;
	unsigned interval_ms; /* stats.interval_ms of the configuration read */
	const char *procfs_root;
	struct topology *topo; /* with the configuration's tiers; refreshed here */
	double watch_s;	       /* 0: print once */
	FILE *out, *err;
};

/* Returns the exit status: 0 when the view was printed (with watch: on SIGINT or SIGTERM),
 * 1 when the daemon is not running, its file is stale or cannot be read (one line on err,
 * "pghotd: ..."; with watch, the line is the frame and watching goes on). */
int status_cmd_run(const struct status_cmd *c);

#endif
