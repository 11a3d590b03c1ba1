/* Tests for topology: the fixture trees under tests/fixtures/sysfs-* give the expected tiers,
 * nearest fast nodes and block map; small trees built in a temporary directory cover the
 * malformed-file and refresh cases. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/topology.h"

#define PFNS_PER_BLOCK (0x8000000ull / 4096) /* fixtures use 128 MiB blocks */

static struct topology *load_fixture(const char *name)
{
	const char *dir = getenv("PGHOTD_FIXTURES");
	char root[PATH_MAX];
	struct topology *t = NULL;

	assert_non_null(dir);
	snprintf(root, sizeof(root), "%s/%s", dir, name);
	assert_int_equal(topology_load(root, &t), 0);
	assert_non_null(t);
	return t;
}

/* --- temporary trees --- */

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

static void put(const char *root, const char *rel, const char *content)
{
	char path[PATH_MAX], dir[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	mkdir_p(dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(content, f);
	fclose(f);
}

static void drop(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(unlink(path), 0);
}

static void drop_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(rmdir(path), 0);
}

/* A valid two-node tree: node 0 DRAM with CPUs 0-1 (tier 4), node 1 CPU-less (tier 22). */
static void build_base(const char *root)
{
	put(root, "devices/system/node/online", "0-1\n");
	put(root, "devices/system/node/node0/cpulist", "0-1\n");
	put(root, "devices/system/node/node0/distance", "10 40\n");
	put(root, "devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:          524288 kB\n");
	put(root, "devices/system/node/node0/memory0", "");
	put(root, "devices/system/node/node1/cpulist", "\n");
	put(root, "devices/system/node/node1/distance", "40 10\n");
	put(root, "devices/system/node/node1/meminfo",
	    "Node 1 MemTotal:        1048576 kB\nNode 1 MemFree:         1048576 kB\n");
	put(root, "devices/system/node/node1/memory1", "");
	put(root, "devices/system/memory/block_size_bytes", "8000000\n");
	put(root, "devices/virtual/memory_tiering/memory_tier4/nodelist", "0\n");
	put(root, "devices/virtual/memory_tiering/memory_tier22/nodelist", "1\n");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int tree_setup(void **state)
{
	char *root = strdup("/tmp/pghotd-topo-XXXXXX");

	if (!root || !mkdtemp(root))
		return -1;
	build_base(root);
	*state = root;
	return 0;
}

static int tree_teardown(void **state)
{
	nftw(*state, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(*state);
	return 0;
}

/* Loading a broken tree fails with want and leaves the out-parameter alone. */
static void assert_load_fails(const char *root, int want)
{
	struct topology *sentinel = (struct topology *)&sentinel;
	struct topology *t = sentinel;

	assert_int_equal(topology_load(root, &t), want);
	assert_ptr_equal(t, sentinel);
}

/* --- fixture trees --- */

static void one_node_has_no_slow_tier_and_that_is_not_an_error(void **state)
{
	struct topology *t = load_fixture("sysfs-one-node");

	(void)state;
	assert_int_equal(t->nr_nodes, 1);
	assert_int_equal(topology_nr_slow(t), 0);
	assert_int_equal(topology_nr_fast(t), 1);
	assert_int_equal(t->node[0].tier, 4);
	assert_int_equal(t->node[0].nr_cpus, 2);
	assert_int_equal(topology_cpu_node(t, 1), 0);
	assert_int_equal(t->cpu_fast_node[0], 0);
	assert_int_equal(t->cpu_fast_node[1], 0);
	assert_int_equal(topology_node_of_pfn(t, 4 * PFNS_PER_BLOCK - 1), 0);
	assert_int_equal(topology_node_of_pfn(t, 4 * PFNS_PER_BLOCK), -1);
	topology_free(t);
}

static void cxl_fixture_takes_tiers_from_memory_tiering(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");

	(void)state;
	assert_int_equal(t->tier_source, TIER_FROM_SYSFS);
	assert_int_equal(t->nr_nodes, 3);
	assert_int_equal(t->node[0].tier, 4);
	assert_int_equal(t->node[1].tier, 4);
	assert_int_equal(t->node[2].tier, 22);
	assert_false(topology_node_is_slow(t, 0));
	assert_false(topology_node_is_slow(t, 1));
	assert_true(topology_node_is_slow(t, 2));
	assert_false(topology_node_is_slow(t, 3));
	assert_int_equal(topology_nr_slow(t), 1);
	assert_int_equal(topology_nr_fast(t), 2);
	assert_int_equal(t->node[2].nr_cpus, 0);
	assert_int_equal(t->node[2].mem_total, 8388608ull * 1024);
	assert_int_equal(t->distance[0][1], 32);
	assert_int_equal(t->distance[1][2], 50);
	assert_int_equal(t->distance[2][0], 50);
	topology_free(t);
}

static void cxl_fixture_cpus_go_to_their_own_dram_node(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	const int want_node[] = {0, 0, 1, 1};

	(void)state;
	for (int c = 0; c < 4; c++) {
		assert_int_equal(topology_cpu_node(t, c), want_node[c]);
		assert_int_equal(t->cpu_fast_node[c], want_node[c]);
	}
	assert_int_equal(t->nr_cpus, 4);
	assert_int_equal(topology_cpu_node(t, 4), -1);
	assert_int_equal(topology_cpu_node(t, -1), -1);
	assert_int_equal(topology_cpu_node(t, 100000), -1);
	topology_free(t);
}

static void fast_nodes_are_ordered_by_distance_then_id(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	int out[4] = {-1, -1, -1, -1};

	(void)state;
	/* From the CXL node both DRAM nodes are 50 away: the tie goes to the lower id. */
	assert_int_equal(topology_fast_nodes_by_distance(t, 2, out, 4), 2);
	assert_int_equal(out[0], 0);
	assert_int_equal(out[1], 1);
	assert_int_equal(topology_fast_nodes_by_distance(t, 1, out, 4), 2);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], 0);
	/* A short array keeps the nearest. */
	out[0] = out[1] = -1;
	assert_int_equal(topology_fast_nodes_by_distance(t, 1, out, 1), 1);
	assert_int_equal(out[0], 1);
	assert_int_equal(out[1], -1);
	assert_int_equal(topology_fast_nodes_by_distance(t, 3, out, 4), -EINVAL);
	assert_int_equal(topology_fast_nodes_by_distance(t, -1, out, 4), -EINVAL);
	topology_free(t);
}

static void pfn_maps_to_node_across_block_boundaries(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");

	(void)state;
	assert_int_equal(t->block_size, 0x8000000);
	assert_int_equal(t->nr_blocks, 9);
	assert_int_equal(topology_node_of_pfn(t, 0), 0);
	assert_int_equal(topology_node_of_pfn(t, PFNS_PER_BLOCK - 1), 0);
	assert_int_equal(topology_node_of_pfn(t, 2 * PFNS_PER_BLOCK - 1), 0);
	assert_int_equal(topology_node_of_pfn(t, 2 * PFNS_PER_BLOCK), 1);
	assert_int_equal(topology_node_of_pfn(t, 4 * PFNS_PER_BLOCK - 1), 1);
	assert_int_equal(topology_node_of_pfn(t, 4 * PFNS_PER_BLOCK), 2);
	/* memory6 and memory7 are a hole; memory8 is node 2 again; nothing after it. */
	assert_int_equal(topology_node_of_pfn(t, 6 * PFNS_PER_BLOCK), -1);
	assert_int_equal(topology_node_of_pfn(t, 8 * PFNS_PER_BLOCK - 1), -1);
	assert_int_equal(topology_node_of_pfn(t, 8 * PFNS_PER_BLOCK), 2);
	assert_int_equal(topology_node_of_pfn(t, 9 * PFNS_PER_BLOCK), -1);
	assert_int_equal(topology_node_of_pfn(t, UINT64_MAX), -1);
	topology_free(t);
}

static void one_tier_fixture_takes_cpuless_node_as_slow(void **state)
{
	struct topology *t = load_fixture("sysfs-one-tier");

	(void)state;
	/* This fixture has no `online` file: the node list came from `possible`. */
	assert_int_equal(t->nr_nodes, 3);
	assert_int_equal(t->tier_source, TIER_FROM_CPULESS);
	for (int n = 0; n < 3; n++)
		assert_int_equal(t->node[n].tier, 4);
	assert_false(topology_node_is_slow(t, 0));
	assert_false(topology_node_is_slow(t, 1));
	assert_true(topology_node_is_slow(t, 2));
	assert_int_equal(topology_nr_slow(t), 1);
	assert_int_equal(t->cpu_fast_node[3], 1);
	topology_free(t);
}

static void full_fast_node_reports_no_free_memory(void **state)
{
	struct topology *t = load_fixture("sysfs-fast-full");

	(void)state;
	assert_int_equal(topology_free_percent(t, 0), 0);
	assert_int_equal(t->node[0].mem_free, 1024ull * 1024);
	assert_int_equal(topology_free_percent(t, 1), 75);
	assert_int_equal(topology_free_percent(t, 9), 0);
	/* Full is still fast: whether to pause is the promoter's call. */
	assert_true(topology_node_is_fast(t, 0));
	assert_true(topology_node_is_slow(t, 1));
	topology_free(t);
}

/* --- config override --- */

static void set_list(struct node_list *l, int n, const int *ids)
{
	l->n = n;
	for (int i = 0; i < n; i++)
		l->node[i] = ids[i];
}

static void config_fast_list_alone_makes_every_other_node_slow(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct pghotd_config cfg = {0};

	(void)state;
	set_list(&cfg.tiers.fast_nodes, 1, (int[]){2});
	assert_int_equal(topology_apply_config(t, &cfg), 0);
	assert_int_equal(t->tier_source, TIER_FROM_CONFIG);
	assert_true(topology_node_is_slow(t, 0));
	assert_true(topology_node_is_slow(t, 1));
	assert_false(topology_node_is_slow(t, 2));
	for (int c = 0; c < 4; c++)
		assert_int_equal(t->cpu_fast_node[c], 2);
	topology_free(t);
}

static void config_slow_list_alone_makes_every_other_node_fast(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct pghotd_config cfg = {0};

	(void)state;
	set_list(&cfg.tiers.slow_nodes, 1, (int[]){1});
	assert_int_equal(topology_apply_config(t, &cfg), 0);
	assert_false(topology_node_is_slow(t, 0));
	assert_true(topology_node_is_slow(t, 1));
	assert_false(topology_node_is_slow(t, 2));
	/* Node 1's CPUs: node 0 at 32 beats node 2 at 50. */
	assert_int_equal(t->cpu_fast_node[2], 0);
	assert_int_equal(t->cpu_fast_node[0], 0);
	topology_free(t);
}

static void config_both_lists_leave_unlisted_nodes_as_detected(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct pghotd_config cfg = {0};

	(void)state;
	set_list(&cfg.tiers.fast_nodes, 1, (int[]){2});
	set_list(&cfg.tiers.slow_nodes, 1, (int[]){0});
	assert_int_equal(topology_apply_config(t, &cfg), 0);
	assert_true(topology_node_is_slow(t, 0));
	assert_false(topology_node_is_slow(t, 1));
	assert_false(topology_node_is_slow(t, 2));
	assert_int_equal(t->cpu_fast_node[0], 1); /* node 0 -> node 1 at 32 */
	assert_int_equal(topology_nr_fast(t), 2);
	topology_free(t);
}

static void config_with_empty_lists_restores_detection(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct pghotd_config cfg = {0};
	struct pghotd_config empty = {0};

	(void)state;
	set_list(&cfg.tiers.fast_nodes, 1, (int[]){2});
	assert_int_equal(topology_apply_config(t, &cfg), 0);
	assert_int_equal(topology_apply_config(t, &empty), 0);
	assert_int_equal(t->tier_source, TIER_FROM_SYSFS);
	assert_true(topology_node_is_slow(t, 2));
	assert_false(topology_node_is_slow(t, 0));
	assert_int_equal(t->cpu_fast_node[2], 1);
	topology_free(t);
}

static void config_rejects_unknown_or_doubly_listed_node_and_changes_nothing(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct pghotd_config cfg = {0};

	(void)state;
	set_list(&cfg.tiers.fast_nodes, 2, (int[]){0, 7});
	assert_int_equal(topology_apply_config(t, &cfg), -EINVAL);
	set_list(&cfg.tiers.fast_nodes, 1, (int[]){2});
	set_list(&cfg.tiers.slow_nodes, 1, (int[]){5});
	assert_int_equal(topology_apply_config(t, &cfg), -EINVAL);
	set_list(&cfg.tiers.fast_nodes, 2, (int[]){0, 1});
	set_list(&cfg.tiers.slow_nodes, 2, (int[]){2, 1});
	assert_int_equal(topology_apply_config(t, &cfg), -EINVAL);
	set_list(&cfg.tiers.fast_nodes, 1, (int[]){-1});
	cfg.tiers.slow_nodes.n = 0;
	assert_int_equal(topology_apply_config(t, &cfg), -EINVAL);
	assert_int_equal(t->tier_source, TIER_FROM_SYSFS);
	assert_false(topology_node_is_slow(t, 0));
	assert_false(topology_node_is_slow(t, 1));
	assert_true(topology_node_is_slow(t, 2));
	topology_free(t);
}

/* --- load errors --- */

static void missing_root_is_enoent(void **state)
{
	(void)state;
	assert_load_fails("/nonexistent/pghotd-sysfs", -ENOENT);
}

static void node_list_naming_no_existing_node_is_enoent(void **state)
{
	put(*state, "devices/system/node/online", "5-6\n");
	assert_load_fails(*state, -ENOENT);
}

static void malformed_cpulist_is_einval(void **state)
{
	put(*state, "devices/system/node/node0/cpulist", "0-x\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/cpulist", "3-1\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/cpulist", "0,,1\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/cpulist", "99999999999999999999\n");
	assert_load_fails(*state, -EINVAL);
}

static void cpu_on_two_nodes_is_einval(void **state)
{
	put(*state, "devices/system/node/node1/cpulist", "1\n");
	assert_load_fails(*state, -EINVAL);
}

static void malformed_distance_is_einval(void **state)
{
	put(*state, "devices/system/node/node0/distance", "10 abc\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/distance", "10\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/distance", "10 40 50\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node0/distance", "10 400\n");
	assert_load_fails(*state, -EINVAL);
}

static void meminfo_without_memfree_is_einval(void **state)
{
	put(*state, "devices/system/node/node1/meminfo", "Node 1 MemTotal:  1048576 kB\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node1/meminfo",
	    "Node 0 MemTotal:  1048576 kB\nNode 0 MemFree:  1 kB\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/node/node1/meminfo", "garbage");
	assert_load_fails(*state, -EINVAL);
}

static void missing_meminfo_is_enoent(void **state)
{
	drop(*state, "devices/system/node/node1/meminfo");
	assert_load_fails(*state, -ENOENT);
}

static void malformed_block_size_is_einval(void **state)
{
	put(*state, "devices/system/memory/block_size_bytes", "zz\n");
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/memory/block_size_bytes", "800\n"); /* 2 KiB: not whole pages */
	assert_load_fails(*state, -EINVAL);
	put(*state, "devices/system/memory/block_size_bytes", "0\n");
	assert_load_fails(*state, -EINVAL);
}

static void malformed_tier_nodelist_is_einval(void **state)
{
	put(*state, "devices/virtual/memory_tiering/memory_tier22/nodelist", "1-\n");
	assert_load_fails(*state, -EINVAL);
	/* A node in two tiers is contradictory too. */
	put(*state, "devices/virtual/memory_tiering/memory_tier22/nodelist", "0-1\n");
	assert_load_fails(*state, -EINVAL);
}

static void missing_block_map_leaves_pfns_unmapped(void **state)
{
	struct topology *t = NULL;

	drop(*state, "devices/system/memory/block_size_bytes");
	assert_int_equal(topology_load(*state, &t), 0);
	assert_int_equal(topology_node_of_pfn(t, 0), -1);
	assert_int_equal(topology_nr_slow(t), 1);
	topology_free(t);
}

static void missing_tiering_dir_falls_back_to_cpuless(void **state)
{
	struct topology *t = NULL;

	drop(*state, "devices/virtual/memory_tiering/memory_tier4/nodelist");
	drop(*state, "devices/virtual/memory_tiering/memory_tier22/nodelist");
	drop_dir(*state, "devices/virtual/memory_tiering/memory_tier4");
	drop_dir(*state, "devices/virtual/memory_tiering/memory_tier22");
	assert_int_equal(topology_load(*state, &t), 0);
	assert_int_equal(t->tier_source, TIER_FROM_CPULESS);
	assert_int_equal(t->node[0].tier, -1);
	assert_true(topology_node_is_slow(t, 1));
	topology_free(t);
}

static void sparse_cpulist_leaves_gaps_absent(void **state)
{
	struct topology *t = NULL;

	put(*state, "devices/system/node/node0/cpulist", "0,2-3\n");
	assert_int_equal(topology_load(*state, &t), 0);
	assert_int_equal(topology_cpu_node(t, 0), 0);
	assert_int_equal(topology_cpu_node(t, 1), -1);
	assert_int_equal(topology_cpu_node(t, 3), 0);
	assert_int_equal(t->cpu_fast_node[1], -1);
	assert_int_equal(t->cpu_fast_node[3], 0);
	assert_int_equal(t->node[0].nr_cpus, 3);
	topology_free(t);
}

static void cpu_equidistant_from_two_fast_nodes_takes_the_lower_id(void **state)
{
	struct pghotd_config cfg = {0};
	struct topology *t = NULL;

	/* Three nodes, all with CPUs; node 2 made slow by the config, 50 from both others. */
	put(*state, "devices/system/node/online", "0-2\n");
	put(*state, "devices/system/node/node0/distance", "10 40 50\n");
	put(*state, "devices/system/node/node1/distance", "40 10 50\n");
	put(*state, "devices/system/node/node1/cpulist", "2\n");
	put(*state, "devices/system/node/node2/cpulist", "4\n");
	put(*state, "devices/system/node/node2/distance", "50 50 10\n");
	put(*state, "devices/system/node/node2/meminfo",
	    "Node 2 MemTotal:        1048576 kB\nNode 2 MemFree:         1048576 kB\n");
	put(*state, "devices/virtual/memory_tiering/memory_tier4/nodelist", "0-2\n");
	drop(*state, "devices/virtual/memory_tiering/memory_tier22/nodelist");
	drop_dir(*state, "devices/virtual/memory_tiering/memory_tier22");
	assert_int_equal(topology_load(*state, &t), 0);
	assert_int_equal(topology_nr_slow(t), 0);
	set_list(&cfg.tiers.slow_nodes, 1, (int[]){2});
	assert_int_equal(topology_apply_config(t, &cfg), 0);
	assert_int_equal(t->cpu_fast_node[4], 0);
	assert_int_equal(t->cpu_fast_node[2], 1);
	topology_free(t);
}

/* --- refresh --- */

static void refresh_free_picks_up_new_meminfo(void **state)
{
	struct topology *t = NULL;

	assert_int_equal(topology_load(*state, &t), 0);
	assert_int_equal(topology_free_percent(t, 0), 50);
	put(*state, "devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:          104857 kB\n");
	assert_int_equal(topology_refresh_free(t), 0);
	assert_int_equal(topology_free_percent(t, 0), 9);
	assert_int_equal(t->node[0].mem_free, 104857ull * 1024);
	topology_free(t);
}

static void refresh_failure_changes_no_node(void **state)
{
	struct topology *t = NULL;

	assert_int_equal(topology_load(*state, &t), 0);
	put(*state, "devices/system/node/node0/meminfo",
	    "Node 0 MemTotal:        1048576 kB\nNode 0 MemFree:          0 kB\n");
	put(*state, "devices/system/node/node1/meminfo", "Node 1 MemTotal: 5 kB\n");
	assert_int_equal(topology_refresh_free(t), -EINVAL);
	assert_int_equal(topology_free_percent(t, 0), 50);
	assert_int_equal(topology_free_percent(t, 1), 100);
	topology_free(t);
}

/* --- describe --- */

struct lines {
	int n;
	char text[8][1024];
};

static void collect(void *ctx, const char *s)
{
	struct lines *l = ctx;

	assert_true(l->n < 8);
	assert_null(strchr(s, '\n'));
	snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", s);
}

static void describe_names_tier_source_and_each_node(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	struct lines l = {0};

	(void)state;
	topology_describe(t, collect, &l);
	assert_int_equal(l.n, 4);
	assert_non_null(strstr(l.text[0], tier_source_describe(TIER_FROM_SYSFS)));
	assert_non_null(strstr(l.text[1], "node 0: fast, tier 4, cpus 0-1"));
	assert_non_null(strstr(l.text[2], "node 1: fast, tier 4, cpus 2-3"));
	assert_non_null(strstr(l.text[3], "node 2: slow, tier 22, cpus none, 8192 MiB, 100% free"));
	assert_non_null(strstr(l.text[3], "distances 50 50 10"));
	topology_free(t);
}

/* The kernel's marks (zoneinfo.h) from a procfs root's zoneinfo, shown beside a node's free
 * memory; a root without the file leaves them unknown (0) and the lines without them. */
static void describe_shows_the_kernel_marks_read_from_zoneinfo(void **state)
{
	struct topology *t = load_fixture("sysfs-3node-cxl");
	const char *fx = getenv("PGHOTD_FIXTURES");
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	char root[PATH_MAX];
	struct lines l = {0};

	(void)state;
	assert_non_null(fx);
	snprintf(root, sizeof(root), "%s/procfs-zoneinfo", fx);
	assert_int_equal(topology_read_marks(t, root), 0);
	assert_int_equal(t->node[0].mem_mark, (32 + 446 + 2477) * page);
	assert_int_equal(t->node[2].mem_mark, 0);
	topology_describe(t, collect, &l);
	if (page == 4096)
		assert_non_null(strstr(l.text[1], "free, kernel keeps 11 MiB, distances"));
	assert_null(strstr(l.text[3], "kernel keeps"));
	snprintf(root, sizeof(root), "%s/procfs-root", fx);
	assert_int_equal(topology_read_marks(t, root), -ENOENT);
	assert_int_equal(t->node[0].mem_mark, 0);
	topology_free(t);
}

static void tier_sources_have_distinct_descriptions(void **state)
{
	(void)state;
	assert_string_not_equal(tier_source_describe(TIER_FROM_SYSFS),
				tier_source_describe(TIER_FROM_CPULESS));
	assert_string_not_equal(tier_source_describe(TIER_FROM_CPULESS),
				tier_source_describe(TIER_FROM_CONFIG));
	assert_non_null(strstr(tier_source_describe(TIER_FROM_CPULESS), "CPU-less"));
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(one_node_has_no_slow_tier_and_that_is_not_an_error),
	    cmocka_unit_test(cxl_fixture_takes_tiers_from_memory_tiering),
	    cmocka_unit_test(cxl_fixture_cpus_go_to_their_own_dram_node),
	    cmocka_unit_test(fast_nodes_are_ordered_by_distance_then_id),
	    cmocka_unit_test(pfn_maps_to_node_across_block_boundaries),
	    cmocka_unit_test(one_tier_fixture_takes_cpuless_node_as_slow),
	    cmocka_unit_test(full_fast_node_reports_no_free_memory),
	    cmocka_unit_test(config_fast_list_alone_makes_every_other_node_slow),
	    cmocka_unit_test(config_slow_list_alone_makes_every_other_node_fast),
	    cmocka_unit_test(config_both_lists_leave_unlisted_nodes_as_detected),
	    cmocka_unit_test(config_with_empty_lists_restores_detection),
	    cmocka_unit_test(config_rejects_unknown_or_doubly_listed_node_and_changes_nothing),
	    cmocka_unit_test(missing_root_is_enoent),
	    TREE_TEST(node_list_naming_no_existing_node_is_enoent),
	    TREE_TEST(malformed_cpulist_is_einval),
	    TREE_TEST(cpu_on_two_nodes_is_einval),
	    TREE_TEST(malformed_distance_is_einval),
	    TREE_TEST(meminfo_without_memfree_is_einval),
	    TREE_TEST(missing_meminfo_is_enoent),
	    TREE_TEST(malformed_block_size_is_einval),
	    TREE_TEST(malformed_tier_nodelist_is_einval),
	    TREE_TEST(missing_block_map_leaves_pfns_unmapped),
	    TREE_TEST(missing_tiering_dir_falls_back_to_cpuless),
	    TREE_TEST(sparse_cpulist_leaves_gaps_absent),
	    TREE_TEST(cpu_equidistant_from_two_fast_nodes_takes_the_lower_id),
	    TREE_TEST(refresh_free_picks_up_new_meminfo),
	    TREE_TEST(refresh_failure_changes_no_node),
	    cmocka_unit_test(describe_names_tier_source_and_each_node),
	    cmocka_unit_test(describe_shows_the_kernel_marks_read_from_zoneinfo),
	    cmocka_unit_test(tier_sources_have_distinct_descriptions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
