/* abit_cold: the cold (demotion) side of the Accessed-bit source: the idle time of watched
 * fast pages, offers to the cold list, the cold window of mode "regions". Built on the table;
 * used by the scan, the watch and the source. Source thread. */
#ifndef PGHOTD_ABIT_COLD_H
#define PGHOTD_ABIT_COLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_internal.h"

/* Offers the gathered cold pages to the cold list. */
void abit_cold_flush(struct abit *a);
/* A new offer epoch: every page of g may be offered again. */
void abit_cold_new_epoch(struct abit *a, struct abit_piece *g);
/* Tracked page i of g on watched fast node node, idle or not since the last scan: its idle
 * time kept, offered once when old enough. */
void abit_cold_note(struct abit *a, struct abit_proc *p, struct abit_piece *g, uint32_t i, int node,
		    bool idle);
/* Makes room for page i's idle time and starts it now; -ENOMEM. */
int abit_cold_track(struct abit *a, struct abit_piece *g, uint32_t i);
/* The piece just scanned is due again by the round its first idle fast page not offered yet
 * is old enough to be offered. */
void abit_cold_schedule(struct abit *a, struct abit_piece *g);
/* Most rounds between scans of a piece holding pages of a watched fast node. */
uint16_t abit_cold_max_interval(const struct abit *a);
/* Mode regions: moves hinted pieces into and out of the cold window. */
void abit_cold_window(struct abit *a);
/* A new offer epoch makes the pieces holding watched fast pages due at once. */
void abit_cold_follow_epoch(struct abit *a);

#endif
