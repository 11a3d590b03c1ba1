/* Tests for pmu_filter and mem_src: which samples become access events and which are
 * dropped (and counted), against the 3-node fixture where node 2 is a CPU-less slow (CXL)
 * node holding memory blocks 4, 5 and 8 (128 MiB blocks), and nodes 0-1 are fast. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include "sources/pmu/mem_src.h"
#include "sources/perf/perf_sample.h"
#include "sources/pmu/pmu_filter.h"
#include "base/stats.h"
#include "sys/topology.h"

#define BLOCK	       0x8000000ull
#define SLOW_PADDR     (4 * BLOCK + 0x1234) /* block 4: node 2 */
#define FAST_PADDR     (0 * BLOCK + 0x5000) /* block 0: node 0 */
#define UNMAPPED_PADDR (6 * BLOCK)	    /* block 6: no node */
#define LVL(x)	       ((uint64_t)(x) << MEM_SRC_LVL_SHIFT)
#define LVLNUM(x)      ((uint64_t)(x) << MEM_SRC_LVLNUM_SHIFT)
#define REMOTE	       (1ull << MEM_SRC_REMOTE_SHIFT)
#define LOAD_FROM(num) (PERF_MEM_OP_LOAD | LVLNUM(num))

struct ctx {
	struct topology *topo;
	struct stats stats;
	struct pmu_filter f;
};

static int setup(void **state)
{
	const char *dir = getenv("PGHOTD_FIXTURES");
	char root[PATH_MAX];
	struct ctx *c = calloc(1, sizeof(*c));

	assert_non_null(dir);
	assert_non_null(c);
	snprintf(root, sizeof(root), "%s/sysfs-3node-cxl", dir);
	assert_int_equal(topology_load(root, &c->topo), 0);
	stats_init(&c->stats, c->topo->nr_nodes);
	pmu_filter_init(&c->f, c->topo, &c->stats, SRC_PEBS);
	*state = c;
	return 0;
}

static int teardown(void **state)
{
	struct ctx *c = *state;

	topology_free(c->topo);
	free(c);
	return 0;
}

static struct sample_in user_load(uint64_t data_src)
{
	struct sample_in in = {.pid = 42,
			       .tid = 43,
			       .addr_valid = true,
			       .vaddr = 0x7ffd12345678,
			       .paddr = 0,
			       .cpu = 2,
			       .time_ns = 123456789,
			       .data_src = data_src,
			       .kind = ACCESS_LOAD};
	return in;
}

static enum sample_drop run(struct ctx *c, struct sample_in in)
{
	struct access_event ev;

	return pmu_filter_apply(&c->f, &in, &ev);
}

static void keeps_slow_page_and_fills_every_field(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_RAM)); /* says local DRAM */
	struct access_event ev;

	memset(&ev, 0xff, sizeof(ev));
	in.paddr = SLOW_PADDR; /* ...but the physical address is on the slow node: it wins */
	assert_int_equal(pmu_filter_apply(&c->f, &in, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.pid, 42);
	assert_int_equal(ev.tid, 43);
	assert_true(ev.vaddr == 0x7ffd12345678ull);
	assert_true(ev.paddr == SLOW_PADDR);
	assert_int_equal(ev.cpu, 2);
	assert_int_equal(ev.node, 1); /* CPUs 2-3 are on node 1 */
	assert_true(ev.time_ns == 123456789ull);
	assert_int_equal(ev.source, SRC_PEBS);
	assert_int_equal(ev.kind, ACCESS_LOAD);
	assert_true(c->f.kept == 1);
	assert_true(c->stats.src[SRC_PEBS][SS_SAMPLES_DROPPED] == 0);
}

static void drops_page_on_fast_node_even_if_source_says_cxl(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	struct access_event ev = {.pid = 999};

	in.paddr = FAST_PADDR;
	assert_int_equal(pmu_filter_apply(&c->f, &in, &ev), SAMPLE_DROP_FAST_NODE);
	assert_int_equal(ev.pid, 999); /* untouched */
	assert_true(c->f.dropped[SAMPLE_DROP_FAST_NODE] == 1);
	assert_true(c->stats.src[SRC_PEBS][SS_SAMPLES_DROPPED] == 1);
	assert_true(c->stats.src[SRC_IBS][SS_SAMPLES_DROPPED] == 0);
}

static void unmapped_physical_address_falls_back_to_data_source(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_RAM));

	in.paddr = UNMAPPED_PADDR;
	assert_int_equal(run(c, in), SAMPLE_DROP_NEAR_SOURCE);
	in.data_src = LOAD_FROM(PERF_MEM_LVLNUM_CXL);
	assert_int_equal(run(c, in), SAMPLE_KEPT);
}

static void without_physical_address_drops_cache_and_local_dram_only(void **state)
{
	struct ctx *c = *state;

	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_L1))), SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_L3))), SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_ANY_CACHE))),
			 SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_LFB))),
			 SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_RAM))),
			 SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_RAM) | REMOTE)), SAMPLE_KEPT);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_PMEM))), SAMPLE_KEPT);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL))), SAMPLE_KEPT);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_NA))), SAMPLE_KEPT);
	assert_int_equal(run(c, user_load(LOAD_FROM(PERF_MEM_LVLNUM_IO))), SAMPLE_DROP_NOT_MEMORY);
	assert_true(c->f.kept == 4);
	assert_true(c->f.dropped[SAMPLE_DROP_NEAR_SOURCE] == 5);
	assert_true(c->stats.src[SRC_PEBS][SS_SAMPLES_DROPPED] == 6);
}

/* Kernels before 4.14 (and perf.data from them) fill only mem_lvl. */
static void legacy_mem_lvl_bits_are_understood(void **state)
{
	struct ctx *c = *state;
	uint64_t hit = PERF_MEM_LVL_HIT;

	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_LOC_RAM | hit)), MEM_SRC_LOCAL_RAM);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_REM_RAM1 | hit)), MEM_SRC_REMOTE_RAM);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_REM_RAM2 | hit)), MEM_SRC_REMOTE_RAM);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_L2 | hit)), MEM_SRC_CACHE);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_REM_CCE1 | hit)), MEM_SRC_CACHE);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_UNC | hit)), MEM_SRC_IO);
	/* a miss at L3 says the data came from further away, not from where */
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_L3 | PERF_MEM_LVL_MISS)), MEM_SRC_UNKNOWN);
	assert_int_equal(mem_src_level(LVL(PERF_MEM_LVL_NA)), MEM_SRC_UNKNOWN);
	assert_int_equal(run(c, user_load(PERF_MEM_OP_LOAD | LVL(PERF_MEM_LVL_LOC_RAM | hit))),
			 SAMPLE_DROP_NEAR_SOURCE);
	assert_int_equal(
	    run(c, user_load(PERF_MEM_OP_LOAD | LVL(PERF_MEM_LVL_L3 | PERF_MEM_LVL_MISS))),
	    SAMPLE_KEPT);
}

static void drops_kernel_addresses_and_kernel_threads(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));

	in.vaddr = 0xffff888012345000ull;
	assert_int_equal(run(c, in), SAMPLE_DROP_KERNEL);
	in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	in.pid = 0;
	assert_int_equal(run(c, in), SAMPLE_DROP_KERNEL);
	in.pid = -1;
	assert_int_equal(run(c, in), SAMPLE_DROP_KERNEL);
	assert_true(c->f.dropped[SAMPLE_DROP_KERNEL] == 3);
}

static void drops_samples_without_address_or_memory_op(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));

	in.addr_valid = false;
	assert_int_equal(run(c, in), SAMPLE_DROP_NO_ADDR);
	in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	in.vaddr = 0;
	assert_int_equal(run(c, in), SAMPLE_DROP_NO_ADDR);
	in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	in.kind = ACCESS_UNKNOWN;
	assert_int_equal(run(c, in), SAMPLE_DROP_NOT_MEMOP);
	in.kind = ACCESS_STORE;
	assert_int_equal(run(c, in), SAMPLE_KEPT);
}

static void without_topology_physical_address_is_ignored(void **state)
{
	struct pmu_filter f;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	struct access_event ev;

	(void)state;
	pmu_filter_init(&f, NULL, NULL, SRC_IBS);
	in.paddr = FAST_PADDR;
	assert_int_equal(pmu_filter_apply(&f, &in, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.node, -1);
	in.data_src = LOAD_FROM(PERF_MEM_LVLNUM_RAM);
	assert_int_equal(pmu_filter_apply(&f, &in, &ev), SAMPLE_DROP_NEAR_SOURCE);
	assert_true(f.dropped[SAMPLE_DROP_NEAR_SOURCE] == 1);
}

static void unknown_cpu_gives_unknown_node(void **state)
{
	struct ctx *c = *state;
	struct sample_in in = user_load(LOAD_FROM(PERF_MEM_LVLNUM_CXL));
	struct access_event ev;

	in.cpu = -1;
	assert_int_equal(pmu_filter_apply(&c->f, &in, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.cpu, -1);
	assert_int_equal(ev.node, -1);
}

static void perf_sample_conversion_takes_kind_from_data_source_or_event(void **state)
{
	struct perf_sample s;
	struct sample_in in;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.present = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_PHYS_ADDR |
		    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TIME;
	s.pid = 7, s.tid = 8, s.cpu = 3, s.addr = 0x4000, s.phys_addr = SLOW_PADDR, s.time = 99;
	s.data_src = PERF_MEM_OP_STORE | LVLNUM(PERF_MEM_LVLNUM_NA);
	sample_in_from_perf(&s, ACCESS_LOAD, true, &in);
	assert_int_equal(in.kind, ACCESS_STORE);
	assert_true(in.addr_valid && in.vaddr == 0x4000);
	assert_true(in.paddr == SLOW_PADDR);
	assert_int_equal(in.cpu, 3);
	assert_int_equal(in.pid, 7);
	assert_int_equal(in.tid, 8);
	assert_true(in.time_ns == 99);
	sample_in_from_perf(&s, ACCESS_LOAD, false, &in);
	assert_true(in.paddr == 0);
	/* no DATA_SRC in the layout: the event's own kind, level unknown */
	s.present &= ~(uint64_t)(PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_CPU);
	sample_in_from_perf(&s, ACCESS_LOAD, true, &in);
	assert_int_equal(in.kind, ACCESS_LOAD);
	assert_int_equal(in.cpu, -1);
	assert_int_equal(mem_src_level(in.data_src), MEM_SRC_UNKNOWN);
	assert_int_equal(mem_src_kind(in.data_src), ACCESS_UNKNOWN);
}

static void count_drop_ignores_kept_and_out_of_range(void **state)
{
	struct ctx *c = *state;

	pmu_filter_count_drop(&c->f, SAMPLE_KEPT);
	pmu_filter_count_drop(&c->f, SAMPLE_DROP__COUNT);
	assert_true(c->stats.src[SRC_PEBS][SS_SAMPLES_DROPPED] == 0);
	pmu_filter_count_drop(&c->f, SAMPLE_DROP_MALFORMED);
	assert_true(c->stats.src[SRC_PEBS][SS_SAMPLES_DROPPED] == 1);
	assert_string_equal(sample_drop_name(SAMPLE_DROP_FAST_NODE), "fast-node");
	assert_string_equal(mem_src_level_name(MEM_SRC_CXL), "cxl");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(keeps_slow_page_and_fills_every_field),
	    T(drops_page_on_fast_node_even_if_source_says_cxl),
	    T(unmapped_physical_address_falls_back_to_data_source),
	    T(without_physical_address_drops_cache_and_local_dram_only),
	    T(legacy_mem_lvl_bits_are_understood),
	    T(drops_kernel_addresses_and_kernel_threads),
	    T(drops_samples_without_address_or_memory_op),
	    cmocka_unit_test(without_topology_physical_address_is_ignored),
	    T(unknown_cpu_gives_unknown_node),
	    cmocka_unit_test(perf_sample_conversion_takes_kind_from_data_source_or_event),
	    T(count_drop_ignores_kept_and_out_of_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
