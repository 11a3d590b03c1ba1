/* damon_pace: how fast pghotd's kdamond samples (see damon_pace.h). */
#include "sources/damon/damon_pace.h"
#include "base/config.h"
#include "sys/kernel_release.h"

bool damon_pace_kernel_rescales(const char *release)
{
	unsigned ma, mi;

	return kernel_release_version(release, &ma, &mi) == 0 && (ma > 6 || (ma == 6 && mi >= 3));
}

void damon_pace_busy(struct damon_pace *p, uint64_t now_ms)
{
	p->busy_until_ms = now_ms + DAMON_PACE_IDLE_MS;
}

unsigned damon_pace_factor(const struct damon_pace *p, const struct pghotd_config *cfg,
			   uint64_t now_ms)
{
	unsigned aggr = cfg->sources.damon.aggr_us, f = DAMON_PACE_IDLE;

	if (p->fixed || now_ms < p->busy_until_ms)
		return 1;
	if (aggr && (uint64_t)aggr * f > CONFIG_DAMON_AGGR_US_MAX)
		f = CONFIG_DAMON_AGGR_US_MAX / aggr;
	return f ? f : 1;
}

void damon_pace_view(const struct pghotd_config *cfg, unsigned factor, struct pghotd_config *out)
{
	unsigned sample = cfg->sources.damon.sample_us, aggr = cfg->sources.damon.aggr_us;
	/* Half the samples while idle where DAMON_PACE_IDLE_SAMPLES are left (sample <= aggr / 2
	 * by the config's check, so the product stays within the aggregation's bound). */
	unsigned thin =
	    factor > 1 && sample && aggr / sample >= 2 * DAMON_PACE_IDLE_SAMPLES ? 2 : 1;

	*out = *cfg;
	out->sources.damon.sample_us = sample * factor * thin;
	out->sources.damon.aggr_us = aggr * factor;
}
