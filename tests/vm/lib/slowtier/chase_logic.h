/* chase_logic: the pure parts of the guest's pointer chase (chase.c): the chain it follows, the
 * calibration step that sets the slow tier's extra cost, and the verdict on the ratio it got;
 * apart so test_chase_logic drives them without a guest. */
#ifndef PGHOTD_CHASE_LOGIC_H
#define PGHOTD_CHASE_LOGIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How far the measured ratio may be from the requested one before a run says so: 25%. */
#define CHASE_RATIO_TOLERANCE 0.25

/* splitmix64 step. */
uint64_t chase_rand(uint64_t *state);

/* next[0..n) becomes a single cycle through all n slots (Sattolo's algorithm, seeded): from
 * any slot, following next visits every slot once before it comes back, so a chase over it
 * has no shorter loop a cache could hold. n >= 2. */
void chase_cycle(size_t *next, size_t n, uint64_t seed);

/* The byte offset of slot i's pointer in its page: a different cache line per slot (of the 64
 * in a 4 KiB page), so the chase does not hammer one cache set. */
size_t chase_slot_offset(size_t i);

/* The extra cost per slow access to try first: (ratio - 1) x the cost of a load on the fast
 * node with the charge off (fast_ns), in nanoseconds; 0 when ratio <= 1. */
double chase_first_extra(double ratio, double fast_ns);

/* How much the slow node's time per load grew per nanosecond of extra cost, from the ratios two
 * rounds measured (extra0, ratio0) and (extra1, ratio1) and the fast node's time per load in
 * the second (fast1): (ratio1 - ratio0) x fast1 / (extra1 - extra0). 1 on an ideal charge, more
 * when the host preempts the spinning vCPU or its clock reads cost; clamped to 0.5..4, and 1
 * when the two extras are within 1 ns (no slope to read). The caller gives the uncharged round
 * as the first: two late rounds' extras lie a few nanoseconds apart, within a round's noise
 * under TCG (one such slope read 0.17 and sent the charge to 0), and a ratio is timed on
 * both nodes in turn, so a host busier in one round than in the other leaves it be. */
double chase_gain(double extra0, double ratio0, double extra1, double ratio1, double fast1);

/* The next extra cost after a round at extra_ns measured fast_ns and slow_ns per load: the
 * slow node's shortfall (ratio x fast_ns - slow_ns) divided by the gain (chase_gain) is added;
 * never below 0. */
double chase_next_extra(double extra_ns, double ratio, double fast_ns, double slow_ns, double gain);

/* Whether measured is within CHASE_RATIO_TOLERANCE of requested (relative to requested). */
bool chase_ratio_ok(double requested, double measured);

#endif
