/* period_ctl: see period_ctl.h. */
#include "sources/perf/period_ctl.h"

uint64_t period_ctl_apply_rules(struct period_rules rules, uint64_t period)
{
	if (rules.clamp)
		return rules.clamp(period);
	return period ? period : 1;
}

static uint64_t clamp(const struct period_ctl *c, uint64_t p)
{
	if (p < c->min)
		p = c->min;
	if (p > c->max)
		p = c->max;
	return period_ctl_apply_rules(c->rules, p);
}

void period_ctl_init(struct period_ctl *c, uint64_t configured, uint64_t max,
		     unsigned budget_percent, struct period_rules rules)
{
	uint64_t hard_max = rules.max ? rules.max : UINT64_MAX / 4;

	c->rules = rules;
	c->min = period_ctl_apply_rules(rules, configured);
	if (!max)
		max = rules.max ? hard_max : c->min * 1000;
	c->max = max > hard_max ? hard_max : max;
	if (c->max < c->min)
		c->max = c->min;
	c->budget_percent = budget_percent ? budget_percent : 1;
	c->period = c->min;
	c->hold = 0;
}

/* Scales the period by num/den, bounded to [lo_factor, hi_factor] of its value. */
static uint64_t scale(uint64_t period, double ratio, double lo, double hi)
{
	double p;

	if (ratio < lo)
		ratio = lo;
	if (ratio > hi)
		ratio = hi;
	p = (double)period * ratio;
	return p >= (double)(UINT64_MAX / 4) ? UINT64_MAX / 4 : (uint64_t)p;
}

static uint64_t next_period(struct period_ctl *c, const struct period_ctl_input *in)
{
	double used = (double)in->cpu_ns * 100.0 / (double)in->interval_ns;
	double budget = c->budget_percent;

	if (in->lost || in->throttles) {
		c->hold = PERIOD_CTL_HOLD_INTERVALS;
		return scale(c->period, used > budget ? used / (0.8 * budget) : 2.0, 2.0, 4.0);
	}
	if (c->hold)
		c->hold--;
	if (used > budget)
		return scale(c->period, used / (0.8 * budget), 1.0, 4.0);
	if (used < budget / 2 && !c->hold) {
		/* no samples at all means nothing to measure the cost by: step down */
		if (!in->samples || used <= 0.0)
			return c->period / 2;
		return scale(c->period, used / (0.8 * budget), 0.5, 1.0);
	}
	return c->period;
}

uint64_t period_ctl_update(struct period_ctl *c, const struct period_ctl_input *in, bool *changed)
{
	uint64_t old = c->period;

	if (in->interval_ns)
		c->period = clamp(c, next_period(c, in));
	if (changed)
		*changed = c->period != old;
	return c->period;
}

static void clock_mark(struct period_ctl_clock *k, uint64_t now_ns, uint64_t cpu_ns,
		       uint64_t samples, uint64_t lost, uint64_t throttles)
{
	k->started = true;
	k->wall_ns = now_ns;
	k->cpu_ns = cpu_ns;
	k->samples = samples;
	k->lost = lost;
	k->throttles = throttles;
}

bool period_ctl_tick(struct period_ctl *c, struct period_ctl_clock *k, uint64_t now_ns,
		     uint64_t cpu_ns, uint64_t samples, uint64_t lost, uint64_t throttles,
		     uint64_t *period)
{
	struct period_ctl_input in;
	bool changed = false;

	if (!k->started || now_ns < k->wall_ns || cpu_ns < k->cpu_ns) {
		clock_mark(k, now_ns, cpu_ns, samples, lost, throttles);
		return false;
	}
	if (now_ns - k->wall_ns < PERIOD_CTL_INTERVAL_NS)
		return false;
	in.interval_ns = now_ns - k->wall_ns;
	in.cpu_ns = cpu_ns - k->cpu_ns;
	in.samples = samples - k->samples;
	in.lost = lost - k->lost;
	in.throttles = throttles - k->throttles;
	clock_mark(k, now_ns, cpu_ns, samples, lost, throttles);
	*period = period_ctl_update(c, &in, &changed);
	return changed;
}
