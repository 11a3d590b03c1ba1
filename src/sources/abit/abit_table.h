/* abit_table: the Accessed-bit source's processes and their pieces: listing, re-reading,
 * finding. Built on abit_piece; used by the cold side, the scan, the watch and the source.
 * Source thread. */
#ifndef PGHOTD_ABIT_TABLE_H
#define PGHOTD_ABIT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_internal.h"

/* Field 22 (start time) and field 39 (last CPU) of pid's stat file; -ESRCH when gone. */
int abit_table_read_stat(const struct abit *a, pid_t pid, uint64_t *start, int *cpu);
/* Frees n processes and their array. */
void abit_table_free(struct abit_proc *p, size_t n);
/* The process of pid in p[0..n) (sorted by pid), or NULL. */
struct abit_proc *abit_table_find(struct abit_proc *p, size_t n, pid_t pid);
/* At a round (or a reload): re-reads every selected process every ABIT_REFRESH_ROUNDS rounds
 * or after a reload, else the young ones and the pids new since the last listing. -errno
 * with the old table kept. */
int abit_table_refresh(struct abit *a, const struct pghotd_config *cfg);
/* Watches the selected pids of pids[0..n) (sorted) the last listing did not hold; takes
 * pids. -ENOMEM with nothing changed. */
int abit_table_add_new(struct abit *a, const struct pghotd_config *cfg, pid_t *pids, size_t n);
/* Drops the processes marked gone, recounts the pieces held. */
void abit_table_drop_gone(struct abit *a);
/* The piece of p holding vaddr, or NULL. */
struct abit_piece *abit_proc_piece(struct abit_proc *p, uint64_t vaddr);
/* A cursor's position: the first piece of the process at or after (pid, vaddr). */
void abit_table_locate(const struct abit *a, pid_t pid, uint64_t vaddr, size_t *pi, size_t *ri);
/* The piece of pid holding vaddr, or NULL (introspection). */
const struct abit_piece *abit_table_piece_at(const struct abit *a, pid_t pid, uint64_t vaddr);
/* The piece is due at once, scanned every round until its scans back it off. */
void abit_piece_due_now(struct abit *a, struct abit_piece *g);
/* Every piece of p scanned less often than every `above` rounds (0: every piece whose last
 * scan found no access) is due at the coming round, and, in a process scanned in full, looked
 * at by the next step; with `above` (arrivals), not a piece whose tracked pages are all of
 * watched fast nodes. */
void abit_proc_wake_pieces(struct abit *a, struct abit_proc *p, uint16_t above);

#endif
