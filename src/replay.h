/* replay: what-if analysis of a perf.data recording (`pghotd --replay FILE`).
 *
 * Feeds the file's samples through the live path's pieces (perf_sample parser, sample_filter,
 * hot_table with the config's threshold, window and cooldown), moves nothing, and prints one
 * line per page it would promote, in the order the pages became hot:
 *     promote pid=<pid> addr=0x<page address> samples=<n> target=<node>
 * then `replay: records=<n> samples=<n> lost=<n> candidates=<n>`.
 *
 * Rules, since the recording machine is not the one replaying:
 * - Placement comes from the recording alone: a data source that says cache or local DRAM
 *   drops the sample; the physical address is not used (the recording's memory map is
 *   unknown); without a data source every sampled page counts as being on a slow tier.
 *   Samples without a data source (page-fault recordings, say) count as loads.
 * - Time is the sample's TIME in ms, made monotonic (records of different CPUs interleave
 *   slightly out of order in a file); without TIME every sample falls in one window.
 * - Processes are recorded pids: each gets a synthetic procs handle (no live /proc lookup).
 * - target: promotion.target_nodes[0] when set, else tiers.fast_nodes[0], else node 0.
 * - samples=<n>: the page's kept samples over the whole recording. */
#ifndef PGHOTD_REPLAY_H
#define PGHOTD_REPLAY_H

#include <stdio.h>

struct pghotd_config;

/* Main thread. Returns 0, or -errno (unreadable or corrupt file: logged once, with the byte
 * offset for a corrupt one; nothing is printed to out then). */
int replay_run(const char *path, const struct pghotd_config *cfg, FILE *out);

/* The target rule above (exposed for tests). */
int replay_target_node(const struct pghotd_config *cfg);

#endif
