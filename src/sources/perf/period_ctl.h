/* period_ctl: the adaptive sampling period. Once per control interval the sampler thread
 * feeds in what it measured (samples handled, its own CPU time, LOST and THROTTLE records);
 * the controller answers with the period to use, which the sampler applies to every per-CPU
 * event with PERF_EVENT_IOC_PERIOD when it changed.
 *
 * Policy: the sampler may use budget_percent of one CPU. Above it, the period grows in
 * proportion to the overshoot (aiming at 80% of the budget, at most x4 per step). Below half
 * of it, the period shrinks the same way (at most /2 per step), never below the configured
 * period: that is the finest sampling the operator asked for. A LOST or THROTTLE record means
 * the kernel could not keep up: the period doubles and stays put for `hold` intervals.
 * Between half and the whole budget nothing changes, so the period does not oscillate.
 * Pure logic; one sampler thread owns a controller. */
#ifndef PGHOTD_PERIOD_CTL_H
#define PGHOTD_PERIOD_CTL_H

#include <stdbool.h>
#include <stdint.h>

#define PERIOD_CTL_HOLD_INTERVALS 5

/* The periods the hardware takes, given by the source (the IBS source: ibs_period_rules()):
 * clamp turns a requested period into one it accepts, max is the largest. PERIOD_RULES_ANY, any
 * period >= 1 (PEBS), knows no maximum. */
struct period_rules {
	uint64_t (*clamp)(uint64_t period); /* NULL: any period >= 1 */
	uint64_t max;			    /* 0: none */
};
#define PERIOD_RULES_ANY ((struct period_rules){.clamp = NULL, .max = 0})

struct period_ctl {
	uint64_t period;   /* in force */
	uint64_t min, max; /* min: the configured period */
	unsigned budget_percent;
	struct period_rules rules;
	unsigned hold; /* intervals left before the period may shrink again */
};

struct period_ctl_input {
	uint64_t interval_ns; /* wall time the measurements cover */
	uint64_t samples;     /* sample records handled in it */
	uint64_t cpu_ns;      /* sampler thread CPU time in it */
	uint64_t lost;	      /* LOST / LOST_SAMPLES records */
	uint64_t throttles;   /* THROTTLE records */
};

/* configured: the period from the config (becomes the floor); max 0 picks the largest the
 * rules allow (with no maximum: 1000 x configured). */
void period_ctl_init(struct period_ctl *c, uint64_t configured, uint64_t max,
		     unsigned budget_percent, struct period_rules rules);
/* Returns the period to use from now on; *changed (may be NULL) tells whether it differs from
 * the one before. An input with interval_ns 0 changes nothing. */
uint64_t period_ctl_update(struct period_ctl *c, const struct period_ctl_input *in, bool *changed);
/* Feeding the controller from the sampler's drain hook: the running totals of the ring
 * reader and the clocks come in after every drain; once PERIOD_CTL_INTERVAL_NS has passed
 * since the last decision, the differences go to period_ctl_update. */
#define PERIOD_CTL_INTERVAL_NS 1000000000ull

struct period_ctl_clock {
	bool started;
	uint64_t wall_ns, cpu_ns; /* at the last decision */
	uint64_t samples, lost, throttles;
};

/* now_ns: CLOCK_MONOTONIC; cpu_ns: the sampler thread's CLOCK_THREAD_CPUTIME_ID; the rest
 * running totals. Returns true when the period changed, and *period is then the new one. */
bool period_ctl_tick(struct period_ctl *c, struct period_ctl_clock *k, uint64_t now_ns,
		     uint64_t cpu_ns, uint64_t samples, uint64_t lost, uint64_t throttles,
		     uint64_t *period);

/* The period rules alone: what a requested period becomes. */
uint64_t period_ctl_apply_rules(struct period_rules rules, uint64_t period);

#endif
