/* chase_logic: see chase_logic.h. */
#include "chase_logic.h"

#include <math.h>

uint64_t chase_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void chase_cycle(size_t *next, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		next[i] = i;
	/* Sattolo: each swap with a slot strictly before leaves i -> next[i] one cycle. */
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(chase_rand(&seed) % i);
		size_t t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
}

size_t chase_slot_offset(size_t i)
{
	return (i * 37 % 64) * 64;
}

double chase_first_extra(double ratio, double fast_ns)
{
	return ratio > 1 ? (ratio - 1) * fast_ns : 0;
}

double chase_gain(double extra0, double ratio0, double extra1, double ratio1, double fast1)
{
	if (fabs(extra1 - extra0) < 1)
		return 1;
	double g = (ratio1 - ratio0) * fast1 / (extra1 - extra0);
	return g < 0.5 ? 0.5 : g > 4 ? 4 : g;
}

double chase_next_extra(double extra_ns, double ratio, double fast_ns, double slow_ns, double gain)
{
	double next = extra_ns + (ratio * fast_ns - slow_ns) / gain;
	return next > 0 ? next : 0;
}

bool chase_ratio_ok(double requested, double measured)
{
	return requested > 0 && fabs(measured - requested) <= CHASE_RATIO_TOLERANCE * requested;
}
