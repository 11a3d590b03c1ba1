/* feeder: access events reach the hot table for selected processes only, with the config's
 * threshold, and the selection follows a reload. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "table/feeder.h"
#include "table/hot_table.h"
#include "table/procs.h"
#include "base/stats.h"
#include "sys/topology.h"

struct env {
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct feeder *feeder;
};

static uint64_t fixed_now(void)
{
	return 1000;
}

static struct pghotd_config *load(const char *text, uint64_t generation)
{
	struct pghotd_config *cfg = NULL;

	assert_int_equal(config_load_string(text, "test.conf", &cfg, NULL), 0);
	cfg->generation = generation;
	return cfg;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));

	assert_int_equal(hot_table_new(1024, 64, &e->hot), 0);
	assert_int_equal(procs_new("/proc", 64, &e->procs), 0);
	stats_init(&e->stats, 1);
	struct feeder_deps d = {.hot = e->hot,
				.procs = e->procs,
				.stats = &e->stats,
				.procfs_root = "/proc",
				.now_ms = fixed_now};
	assert_int_equal(feeder_new(&d, &e->feeder), 0);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	feeder_free(e->feeder);
	procs_free(e->procs);
	hot_table_free(e->hot);
	free(e);
	return 0;
}

static struct access_event ev_at(pid_t pid, uint64_t addr)
{
	return (struct access_event){.pid = pid,
				     .tid = pid,
				     .vaddr = addr,
				     .cpu = 0,
				     .node = 0,
				     .source = SRC_ABIT,
				     .kind = ACCESS_LOAD};
}

static void test_selected_process_pages_become_hot_at_threshold(void **state)
{
	struct env *e = *state;
	struct pghotd_config *cfg = load("promotion: { threshold = 3; };", 1);
	struct access_event ev[3];
	struct hot_candidate c[4];
	int64_t h = procs_handle(e->procs, getpid());
	unsigned count = 0;

	for (int i = 0; i < 3; i++)
		ev[i] = ev_at(getpid(), 0x7f0000001234);
	feeder_deliver(e->feeder, cfg, ev, 2);
	assert_true(h > 0);
	assert_int_equal(hot_table_peek(e->hot, (uint32_t)h, 0x7f0000001000, &count), 0);
	assert_int_equal(count, 2);
	assert_int_equal(hot_table_pop(e->hot, c, 4), 0);
	feeder_deliver(e->feeder, cfg, ev, 1);
	assert_int_equal(hot_table_pop(e->hot, c, 4), 1);
	assert_int_equal(c[0].vaddr, 0x7f0000001000);
	assert_int_equal(c[0].proc, (uint32_t)h);
	config_free(cfg);
}

/* An event carrying a lower threshold (first evidence) makes its page hot by itself; the
 * events around it keep the configured one. */
static void test_event_with_a_lower_threshold_makes_its_page_hot_at_once(void **state)
{
	struct env *e = *state;
	struct pghotd_config *cfg = load("promotion: { threshold = 3; };", 1);
	struct access_event ev[3] = {ev_at(getpid(), 0x7f0000001000),
				     ev_at(getpid(), 0x7f0000002000),
				     ev_at(getpid(), 0x7f0000003000)};
	struct hot_candidate c[4];
	int64_t h = procs_handle(e->procs, getpid());
	unsigned count = 0;

	ev[1].threshold = 1;
	feeder_deliver(e->feeder, cfg, ev, 3);
	assert_int_equal(hot_table_pop(e->hot, c, 4), 1);
	assert_int_equal(c[0].vaddr, 0x7f0000002000);
	assert_int_equal(hot_table_peek(e->hot, (uint32_t)h, 0x7f0000003000, &count), 0);
	assert_int_equal(count, 1);
	config_free(cfg);
}

static void test_excluded_process_is_dropped_and_counted(void **state)
{
	struct env *e = *state;
	char comm[64] = "";
	FILE *f = fopen("/proc/self/comm", "r");
	char text[256];

	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	snprintf(text, sizeof(text), "processes: { exclude_comm = [\"%s\"]; };", comm);
	struct pghotd_config *cfg = load(text, 1);
	struct access_event ev = ev_at(getpid(), 0x7f0000002000);
	unsigned count;

	feeder_deliver(e->feeder, cfg, &ev, 1);
	assert_int_equal(hot_table_peek(e->hot, (uint32_t)procs_handle(e->procs, getpid()),
					0x7f0000002000, &count),
			 -ENOENT);
	assert_int_equal(atomic_load(&e->stats.src[SRC_ABIT][SS_SAMPLES_DROPPED]), 1);

	/* A reload that no longer excludes it (new generation) lets its accesses in. */
	struct pghotd_config *next = load("", 2);
	feeder_deliver(e->feeder, next, &ev, 1);
	assert_int_equal(hot_table_peek(e->hot, (uint32_t)procs_handle(e->procs, getpid()),
					0x7f0000002000, &count),
			 0);
	assert_int_equal(count, 1);
	config_free(cfg);
	config_free(next);
}

static void test_event_of_a_dead_process_is_dropped(void **state)
{
	struct env *e = *state;
	struct pghotd_config *cfg = load("", 1);
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	struct access_event ev = ev_at(child, 0x7f0000003000);
	feeder_deliver(e->feeder, cfg, &ev, 1);
	assert_int_equal(atomic_load(&e->stats.src[SRC_ABIT][SS_SAMPLES_DROPPED]), 1);
	assert_int_equal(hot_table_used(e->hot), 0);
	config_free(cfg);
}

/* Block 4 of the 3-node fixture (128 MiB blocks) is on node 2, the CXL (slow) node; block 0
 * is on node 0, DRAM. */
#define PADDR_SLOW (UINT64_C(4) << 27)
#define PADDR_FAST UINT64_C(0x1000)

/* Delivers one event (threshold 1: it queues its page) and returns the candidate's flag. */
static bool seen_slow(struct env *e, const struct pghotd_config *cfg, uint64_t addr, uint64_t paddr)
{
	struct access_event ev = ev_at(getpid(), addr);
	struct hot_candidate c;

	ev.paddr = paddr;
	feeder_deliver(e->feeder, cfg, &ev, 1);
	assert_int_equal(hot_table_pop(e->hot, &c, 1), 1);
	assert_int_equal(c.vaddr, addr);
	return c.on_slow;
}

static void test_access_is_marked_slow_only_for_a_slow_node_physical_address(void **state)
{
	struct env *e = *state;
	struct pghotd_config *cfg = load("promotion: { threshold = 1; };", 1);
	const char *fixtures = getenv("PGHOTD_FIXTURES");
	char path[4096];

	assert_non_null(fixtures);
	snprintf(path, sizeof(path), "%s/sysfs-3node-cxl", fixtures);
	assert_int_equal(topology_load(path, &cfg->topo), 0);
	assert_true(topology_node_is_slow(cfg->topo, 2));

	assert_true(seen_slow(e, cfg, 0x7f0000010000, PADDR_SLOW));
	assert_false(seen_slow(e, cfg, 0x7f0000020000, PADDR_FAST));
	assert_false(seen_slow(e, cfg, 0x7f0000030000, 0));		    /* unknown */
	assert_false(seen_slow(e, cfg, 0x7f0000040000, UINT64_C(1) << 45)); /* no such block */
	topology_free(cfg->topo);
	cfg->topo = NULL;
	/* Without a topology nothing is known. */
	assert_false(seen_slow(e, cfg, 0x7f0000050000, PADDR_SLOW));
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_selected_process_pages_become_hot_at_threshold,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_event_with_a_lower_threshold_makes_its_page_hot_at_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_excluded_process_is_dropped_and_counted, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_event_of_a_dead_process_is_dropped, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_access_is_marked_slow_only_for_a_slow_node_physical_address, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
