/* demotion: the direction that moves cold pages down, and the policy that decides when.
 *
 * At the start of an interval, before promotion, each fast node that needs room has its
 * coldest pages (from the cold list the Accessed-bit and DAMON sources fill) moved to the nearest
 * slow node with room, through the mover's batch path: placement query (the page must still be on
 * that fast node), page sizes, the demotion bucket, dry_run, move, per-page status. A node
 * needs room while its free memory is under demotion.free_target_percent, or when hot pages
 * found it full last interval (an exchange: as many bytes as those pages, which promotion may
 * then place there although the node stays short, node_room_book()). Cold pages the bucket
 * cannot pay for, busy ones, and those of a full slow node stay where they are; the source
 * offers them again later. It also tells the source which fast nodes to watch
 * (cold_list_want()): those under twice the free share at which demotion starts.
 *
 * Promoter thread only. */
#ifndef PGHOTD_DEMOTION_H
#define PGHOTD_DEMOTION_H

#include <stdbool.h>
#include <stdint.h>

#include "mover/mover_state.h"

struct cold_page;

struct demotion {
	struct move_dir dir;
	uint64_t last_reoffer, last_check, check_gen;
	bool needy;		/* the last look found a fast node that needs room */
	struct cold_page *cold; /* [PROMOTER_WORK_MAX], taken from the cold list */
};

/* with_cold: a cold list will be given (the mover's); without one demotion does nothing.
 * -ENOMEM. */
int demotion_init(struct demotion *dm, bool with_cold);
void demotion_fini(struct demotion *dm);
/* One interval's demotion at now, in m's work array (left empty). */
void demotion_run(struct demotion *dm, struct mover *m, const struct pghotd_config *cfg,
		  uint64_t now);

#endif
