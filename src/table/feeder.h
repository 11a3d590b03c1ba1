/* feeder: the daemon's access sink. Turns access events from any source into hot-table
 * records: resolves the process identity (procs), applies the `processes` selection (cached
 * per process and config generation), records the access with the config's threshold and
 * window, and wakes the ready queue's consumer (the promoter) through the wake callback the
 * engine passes in: the feeder knows no promoter.
 *
 * feeder_deliver() runs on source threads, any number at once; it takes no lock. */
#ifndef PGHOTD_FEEDER_H
#define PGHOTD_FEEDER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "table/access.h"

struct hot_table;
struct procs;
struct stats;

struct feeder_deps {
	struct hot_table *hot;
	struct procs *procs;
	struct stats *stats;
	/* Called on source threads: full false after a page joined the ready queue (the consumer
	 * judges whether the queue is deep enough to wake for), true when the queue refused one.
	 * NULL: nobody to wake (replay, tests). */
	void (*wake)(void *ctx, bool full);
	void *wake_ctx;
	const char *procfs_root;
	uint64_t (*now_ms)(void); /* NULL: CLOCK_MONOTONIC */
};

struct feeder;

int feeder_new(const struct feeder_deps *deps, struct feeder **out);
void feeder_free(struct feeder *f);
/* The sink sources deliver to. */
struct access_sink feeder_sink(struct feeder *f);
/* The access_sink callback itself (ctx is the feeder). */
void feeder_deliver(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n);

#endif
