/* replay: what-if analysis of a perf.data recording (`pghotd --replay FILE`).
 *
 * Feeds the file's samples through the live path's pieces (perf_sample parser, pmu_filter,
 * hot_table with the config's threshold, window and cooldown), moves nothing, and prints one
 * line per page it would promote, in the order the pages became hot:
 *     promote pid=<pid> addr=0x<page address> samples=<n> target=<node>
 * then `replay: records=<n> samples=<n> lost=<n> candidates=<n>`.
 *
 * Samples go through the live sources' own conversions (ibs_source_convert,
 * pebs_source_convert): an event on the ibs_op PMU (its type named so in the file's
 * PMU_MAPPINGS, or its name starting "ibs_op/") whose samples carry RAW has its IBS registers
 * decoded, with the recording CPU's family and model from HEADER_CPUID for the errata (the
 * Zen 4 data-source encoding follows the caps word inside RAW, as live); without RAW it uses
 * ADDR and DATA_SRC as the kernel filled them (6.1+). Any other event (PEBS, software) uses
 * ADDR and DATA_SRC. As live, only user loads and stores with a valid linear address stay.
 *
 * Rules, since the recording machine is not the one replaying:
 * - Placement comes from the recording alone, never from this machine's topology. A data
 *   source that says cache or local DRAM drops the sample, as does I/O memory. PHYS_ADDR is
 *   carried along but never decides: perf.data does not record which physical ranges belong
 *   to which node, nor which nodes are the fast tier. Without a data source (or with one
 *   that cannot tell) every sampled page counts as being on a slow tier. Samples of non-IBS
 *   events without a data source op (page-fault recordings, say) count as loads.
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
