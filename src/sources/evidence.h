/* evidence: what a source's first sign of a page's use is worth while the fast tier has room.
 *
 * The Accessed-bit source's first evidence (a page learned and then found accessed within a
 * quarter of a scan interval) and the DAMON source's full region (accessed in every sample of
 * an aggregation) are delivered with the threshold evidence_first_threshold() returns, so one
 * such observation makes the page hot at the shipped threshold of 2, as the kernel's NUMA
 * balancing promotes on the first fault while a node has room. Pure but for the nodes'
 * meminfo reads through the topology. */
#ifndef PGHOTD_EVIDENCE_H
#define PGHOTD_EVIDENCE_H

#include <stdbool.h>

struct pghotd_config;

/* While the fast node with the most free memory has twice the reserve free (the larger of
 * promotion.min_free_percent and, with demotion on, demotion.free_target_percent; at least
 * 1%), promotion.threshold - 1; else 0 (no first evidence: the threshold stays
 * promotion.threshold). 0 as well when no fast node could be read or the threshold is 1. */
unsigned evidence_first_threshold(const struct pghotd_config *cfg);
/* Whether the fast node with the most free memory has twice that reserve free (false when no
 * fast node could be read). */
bool evidence_fast_room(const struct pghotd_config *cfg);

#endif
