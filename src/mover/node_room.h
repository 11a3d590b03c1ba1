/* node_room: room on the nodes, which both directions judge: free memory read once per
 * interval, nodes paused when move_pages found them full, the credit an exchange made and what a
 * fast node lends before demotion pays it back. The state is struct mover's (mover_state.h);
 * this module reads free memory through the mover's ops and uses no other module of the family.
 * Promoter thread only. */
#ifndef PGHOTD_NODE_ROOM_H
#define PGHOTD_NODE_ROOM_H

#include <stdbool.h>

#include "base/config.h"
#include "mover/mover_state.h"

/* Reads free memory once per interval; resumes paused nodes that have room again, and sets
 * what each fast node lends. */
void node_room_refresh_once(struct mover *m, const struct pghotd_config *cfg);
/* Node n is present, not paused and has min_free_percent free (or an unknown size), and more
 * than its kernel mark (topo_node.mem_mark). */
bool node_room_has_own(const struct mover *m, const struct pghotd_config *cfg, int n);
/* Room an exchange made on node n for promotion, while it lasts. */
bool node_room_has_credit(const struct mover *m, int n);
/* Books a page bound for node n against exchange room when n has none of its own, else
 * against what n lends (the page's trade then owed to demotion); false when both are used up. */
bool node_room_book(struct mover *m, const struct pghotd_config *cfg, int n, struct work_item *it);
/* A page booked on node n's loan did not go up (no tokens, a failed move): the loan is n's
 * again and nothing is owed for it. */
void node_room_unbook_loan(struct mover *m, int n, struct work_item *it);
/* A page chosen for node n takes its room there at once: the node's free memory, read once per
 * interval, is lowered by the page, so one interval's pages (up to a rate limit's worth,
 * 25.6 MiB at the shipped settings) cannot take a node just above promotion.min_free_percent
 * far below it, to where the kernel's OOM killer acts. */
void node_room_take(struct mover *m, const struct pghotd_config *cfg, int n,
		    const struct work_item *it);
/* A page found every target full asks demotion for room on its preferred node; false when
 * there is no one to ask. */
bool node_room_want(struct mover *m, const struct pghotd_config *cfg, const struct work_item *it,
		    int where);
/* Whether a page asked demotion for room since the last demotion_run() served the asks, or
 * went up on a node's loan that demotion still owes. */
bool node_room_wanted(const struct mover *m);
/* move_pages said node is full: pauses moves to it until its free memory recovers. */
void node_room_pause(struct mover *m, const struct move_dir *d, int node);
/* Room of its own, room an exchange made, or room it lends (only fast nodes hold credit or
 * lend). */
bool node_room_usable(const struct mover *m, const struct pghotd_config *cfg, int n);

#endif
