/* evidence: the first-evidence threshold (see evidence.h). */
#include <stdint.h>

#include "base/config.h"
#include "sources/evidence.h"
#include "sys/topology.h"

bool evidence_fast_room(const struct pghotd_config *cfg)
{
	const struct topology *t = cfg->topo;
	unsigned level, best = 0;

	level = cfg->promotion.min_free_percent;
	if (cfg->demotion.enabled && cfg->demotion.free_target_percent > level)
		level = cfg->demotion.free_target_percent;
	level = level ? level : 1;
	for (int n = 0; t && n < t->nr_nodes; n++) {
		uint64_t total, free_b;
		unsigned pct;

		if (!t->node[n].present || !topology_node_is_fast(t, n) ||
		    topology_read_meminfo(t, n, &total, &free_b) < 0 || !total)
			continue;
		pct = (unsigned)(free_b * 100 / total);
		best = pct > best ? pct : best;
	}
	return best >= 2 * level;
}

/* A wrong guess costs a move the room can take; an operator's higher threshold keeps its
 * meaning (255 still asks for 254 more). */
unsigned evidence_first_threshold(const struct pghotd_config *cfg)
{
	unsigned thr = cfg->promotion.threshold;

	return thr > 1 && evidence_fast_room(cfg) ? thr - 1 : 0;
}
