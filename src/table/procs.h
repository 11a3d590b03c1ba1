/* procs: process identity. Maps (pid, start time) to a compact 32-bit handle, so a hot-table
 * entry never outlives its process: when a process exits, or its pid is reused by a new one
 * (different start time), the old handle goes stale and every lookup with it fails.
 *
 * Handle layout: slot in the low 16 bits, slot generation in the high 16 bits; 0 is never a
 * valid handle. Generations cycle through 1..PROCS_GEN_MAX (11 bits), so every handle fits in
 * PROCS_HANDLE_BITS bits: the hot table packs it with the page number into one 64-bit key.
 * Lookups are lock-free (any thread); inserts and forgets take a mutex (rare: once per new
 * process). The start time is read from <procfs_root>/PID/stat (field 22, procfs_read_stat()). */
#ifndef PGHOTD_PROCS_H
#define PGHOTD_PROCS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct procs;

#define PROCS_GEN_BITS	  11
#define PROCS_GEN_MAX	  ((1u << PROCS_GEN_BITS) - 1)
#define PROCS_HANDLE_BITS (16 + PROCS_GEN_BITS)

/* The slot of a handle: an index below procs_max(), for per-process arrays beside the registry
 * (the slot is reused by a later process, under a new handle). */
#define PROCS_SLOT(handle) ((handle) & 0xffffu)

/* Main thread. max: processes tracked at once (<= 65535). procfs_root: "/proc" live. */
int procs_new(const char *procfs_root, unsigned max, struct procs **out);
void procs_free(struct procs *p);
/* Any thread: handle for pid, registering it (reads its start time) if new. -ESRCH if the
 * process does not exist, -ENOSPC if the registry is full. Returns the handle (> 0). */
int64_t procs_handle(struct procs *p, pid_t pid);
/* Any thread: pid of a live handle; -ESTALE when the handle was forgotten or reused. */
int procs_pid(const struct procs *p, uint32_t handle, pid_t *pid);
/* Any thread: processes tracked at once, as given to procs_new(). */
unsigned procs_max(const struct procs *p);
/* Any thread: the handle and pid of the process in slot (0 <= slot < procs_max()); -ESTALE
 * when the slot holds none. A snapshot: the process may be forgotten the moment after. */
int procs_at(const struct procs *p, unsigned slot, uint32_t *handle, pid_t *pid);
/* Any thread: true while handle is current. */
bool procs_valid(const struct procs *p, uint32_t handle);
/* Any thread: forget the process behind handle (exited, ESRCH): the handle goes stale. */
void procs_forget(struct procs *p, uint32_t handle);
/* Main or promoter thread: forget every tracked process whose /proc entry is gone or whose
 * start time changed (pid reuse). Returns how many were forgotten. */
int procs_sweep(struct procs *p);
/* Any thread: whether handle still names the process it was made for, read now from its stat
 * file (the moment before pages are moved by pid). 0: the same process; -ESTALE: the pid
 * now belongs to another one (a different start time) or the handle was forgotten; -ESRCH:
 * the process is gone. The handle is forgotten on -ESTALE and -ESRCH. Another -errno (the
 * file cannot be read or parsed) keeps it: the caller decides. */
int procs_verify(struct procs *p, uint32_t handle);

#endif
