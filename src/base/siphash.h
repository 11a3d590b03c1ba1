/* siphash: SipHash-2-4 (Aumasson and Bernstein), a keyed 64-bit hash for keys other processes
 * choose: without the 16-byte key nobody can make two inputs of their choosing collide, so a
 * table keyed by the hash of a name another user picked (a cgroup path) cannot be made to merge
 * two names. Pure; any thread. */
#ifndef PGHOTD_SIPHASH_H
#define PGHOTD_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SIPHASH_KEY_SIZE 16

uint64_t siphash24(const uint8_t key[SIPHASH_KEY_SIZE], const void *data, size_t len);

#endif
