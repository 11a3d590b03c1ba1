/* promotion: the direction that moves hot pages up (see mover.h). Its pages are hot table
 * entries, settled with hot_table_done() and kept on the deferred list while they wait; its
 * target is the fast node nearest the accessing CPU (or the configured list) that has room of its
 * own or room an exchange made (node_room.h). Promoter thread only. */
#ifndef PGHOTD_PROMOTION_H
#define PGHOTD_PROMOTION_H

#include <stdbool.h>

#include "mover/mover_state.h"

extern const struct move_dir_kind promotion_kind;

/* Whether hot pages wait to go up: queued in the hot table, or deferred. */
bool promotion_hot_waiting(const struct mover *m);

#endif
