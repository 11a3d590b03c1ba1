/* abit_piece: one process's 2 MiB pieces of the Accessed-bit source, below the table that
 * holds them: their per-page cache, their watch state and, in mode "regions", the sampler over
 * them. Source thread. */
#ifndef PGHOTD_ABIT_PIECE_H
#define PGHOTD_ABIT_PIECE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_internal.h"

/* Drops a piece's per-page cache (ent, since). */
void abit_piece_forget(struct abit_piece *g);
/* The piece is neither watched nor in the cold window (its pages stay known). */
void abit_piece_clear_watch(struct abit_piece *g);
/* The same, and its per-page state dropped. */
void abit_piece_unwatch(struct abit_piece *g);
/* Pieces with per-page state allowed at once (sources.abit.max_watched_mib). */
size_t abit_piece_watch_cap(const struct abit *a);
/* Mode regions: the sampler over p's pieces (taken over from old when it is the same process
 * and has the right size); none for a process scanned in full. 0 or -errno. */
int abit_piece_sampler(struct abit *a, struct abit_proc *p, struct abit_proc *old);

#endif
