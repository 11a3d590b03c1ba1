/* topology: NUMA nodes, their CPUs, distances, free memory, memory tiers, and the physical
 * memory block map, read from a sysfs tree whose root is a parameter (tests use fixture trees
 * under tests/fixtures/).
 *
 * Tiers: from /sys/devices/virtual/memory_tiering (a node in the lowest-numbered, i.e.
 * fastest, tier that has nodes is fast; nodes in higher tiers are slow). When every node sits
 * in one tier (or tiering is absent), CPU-less nodes are treated as slow and `tier_source`
 * says so. The config's tiers.fast_nodes / tiers.slow_nodes override detection.
 * Loading is done by one thread; the loaded object is then read-only, except free memory,
 * which topology_refresh_free() updates (promoter thread). */
#ifndef PGHOTD_TOPOLOGY_H
#define PGHOTD_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

#include "base/config.h"

#define TOPO_MAX_NODES CONFIG_MAX_NODES

enum tier_source {
	TIER_FROM_SYSFS,   /* memory_tiering had more than one populated tier */
	TIER_FROM_CPULESS, /* one tier (or none): CPU-less nodes taken as slow */
	TIER_FROM_CONFIG,  /* tiers.fast_nodes / slow_nodes */
};

struct topo_node {
	bool present;	    /* node directory exists and is online */
	bool slow;	    /* slow tier */
	bool detected_slow; /* slow as detected, before the config override */
	int tier;	    /* memory_tierN number, -1 if unknown */
	int nr_cpus;
	uint64_t mem_total; /* bytes */
	uint64_t mem_free;  /* bytes, as of the last refresh */
	/* bytes: the free memory under which the node's kernel reclaims and no longer promotes
	 * (zoneinfo.h); 0 when unknown. Set with the free memory by the promoter's refresh. */
	uint64_t mem_mark;
};

struct topology {
	int nr_nodes; /* highest present node id + 1 */
	struct topo_node node[TOPO_MAX_NODES];
	uint8_t distance[TOPO_MAX_NODES][TOPO_MAX_NODES]; /* SLIT, 10 = local */
	int nr_cpus;					  /* highest cpu id + 1 */
	int *cpu_node;					  /* [nr_cpus], -1 for absent CPUs */
	int *cpu_fast_node; /* [nr_cpus], nearest fast node, -1 if none */
	enum tier_source tier_source;
	enum tier_source detected_source; /* before the config override */
	uint64_t block_size;		  /* memory block size, bytes */
	uint64_t nr_blocks;		  /* blocks mapped in block_node */
	int16_t *block_node;		  /* [nr_blocks], -1 if no node */
	char *sysfs_root;
};

/* Reads sysfs_root ("/sys" on a live system). -errno on failure (-ENOENT when
 * devices/system/node is missing, -EINVAL for a malformed file), logged once here with the
 * file's path. A missing memory block map (devices/system/memory) is not an error: every
 * physical address then maps to node -1. */
int topology_load(const char *sysfs_root, struct topology **out);
void topology_free(struct topology *t);
/* Applies tiers.fast_nodes / slow_nodes, always starting from the detected tiers, so applying
 * a config with empty lists restores detection. Listed nodes take the listed tier; when only
 * one list is given, every other node takes the other tier; when both are given, unlisted nodes
 * keep their detected tier. -EINVAL (one log line, topology untouched) when a listed node does
 * not exist or is in both lists. Recomputes cpu_fast_node. Before the topology is shared. */
int topology_apply_config(struct topology *t, const struct pghotd_config *cfg);
/* Reads node n's nodeN/meminfo MemTotal and MemFree, in bytes, leaving t as it is (for a
 * thread other than the one that refreshes t). -errno. */
int topology_read_meminfo(const struct topology *t, int n, uint64_t *total, uint64_t *free_b);
/* Sets each node's mem_mark, in bytes, from <procfs_root>/zoneinfo (zoneinfo.h). On -errno
 * (not logged) every mark is 0, as unknown. */
int topology_read_marks(struct topology *t, const char *procfs_root);
/* Re-reads nodeN/meminfo MemFree and MemTotal. All or nothing: on -errno no node changes.
 * Does not log (called periodically; the caller decides how loud a failure is). */
int topology_refresh_free(struct topology *t);

int topology_nr_slow(const struct topology *t);
/* Fast nodes are the promotion targets: present, not slow, and holding memory. */
int topology_nr_fast(const struct topology *t);
bool topology_node_is_fast(const struct topology *t, int node);
bool topology_node_is_slow(const struct topology *t, int node);
/* Node holding physical frame pfn (4 KiB frames), -1 if unknown. Any thread. */
int topology_node_of_pfn(const struct topology *t, uint64_t pfn);
/* Node of cpu, or -1. */
int topology_cpu_node(const struct topology *t, int cpu);
/* Fills out[] with fast nodes ordered by distance from node `from` (ties by id); returns count
 * (at most max), -EINVAL when `from` is not a present node. */
int topology_fast_nodes_by_distance(const struct topology *t, int from, int *out, int max);
/* Percentage (0-100) of node's memory that is free. */
unsigned topology_free_percent(const struct topology *t, int node);
/* Human summary (for --probe and the startup log): one line naming the tier source, then one
 * line per present node. Lines carry no newline. */
void topology_describe(const struct topology *t, void (*line)(void *ctx, const char *s), void *ctx);
/* One line saying how the tiers were found. */
const char *tier_source_describe(enum tier_source s);

#endif
