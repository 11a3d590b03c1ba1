/* abit_scan: the Accessed-bit source's page-by-page scan of a piece, the rounds' visit of
 * every due piece, the quick looks and the process wake. Built on the cold side and the table;
 * used by the watch and the source. Source thread. */
#ifndef PGHOTD_ABIT_SCAN_H
#define PGHOTD_ABIT_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_internal.h"

/* Delivers the gathered access events to the sink. */
void abit_scan_flush(struct abit *a);
/* Scans piece g of p through p's pagemap fd: reports its accessed slow pages, learns new
 * ones, marks them idle again, sets its pace. -ESRCH (gone), -EPERM (PFNs hidden), -errno. */
int abit_scan_piece(struct abit *a, struct abit_proc *p, struct abit_piece *g, int fd);
/* Visits every due piece once from the budget's cursor. 0 or -EPERM. */
int abit_scan_all(struct abit *a);
/* A process scanned in full, at a step: its fresh pieces and quick looks, and the sentinel
 * looks of a young quiet process. 0 or -EPERM. */
int abit_scan_quick(struct abit *a, struct abit_proc *p);
/* At a round's start: a process whose round that ended found no access is quiet. */
void abit_scan_new_round(struct abit *a);
/* After a round or a step: a process scanned in full that was quiet a whole round and since
 * showed accesses in ABIT_WAKE_SCANS scans wakes: every piece whose last scan found no access
 * is looked at by the next step. */
void abit_scan_wake(struct abit *a);

#endif
