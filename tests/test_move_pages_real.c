/* The promoter against the real kernel: move_pages(2) on a forked child's pages, the real
 * PAGEMAP_SCAN/kpageflags page-size lookup, real free-memory refresh from /sys.
 *
 * What this proves on a one-node machine: every page is on node 0 and the only target is
 * node 0, so nothing physically moves; the kernel still walks each page (the "already
 * there" status is the node, 0), and the test proves that the promoter builds a valid call
 * for another process, reads per-page statuses correctly, accounts pages and real bytes
 * (a THP counts 2 MiB, cross-checked against the child's smaps), settles the hot table, and
 * forgets a process the kernel reports gone (ESRCH). The QEMU guest with a memory-only node 1
 * proves actual placement. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "table/hot_table.h"
#include "base/log.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "sys/topology.h"

#define NPAGES 64
#define BASE   4096u
#define THP    (2u << 20)

struct child {
	pid_t pid;
	int release_fd; /* closing it lets the child exit */
	uint64_t base, thp;
	int have_thp;
};

static cpu_set_t initial_cpus; /* the test thread's CPU mask as main() began */

struct fx {
	struct child ch;
	struct topology *topo;
	struct hot_table *hot;
	struct procs *procs;
	struct stats stats;
	struct pghotd_config *cfg;
	struct promoter *p;
	uint32_t h;
};

/* Child: NPAGES base pages and, when the kernel grants one, a THP; reports both addresses. */
static void child_main(int report, int release)
{
	uint64_t msg[3] = {0};
	char *m = mmap(NULL, (NPAGES + 1) * BASE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *big;
	char c;

	/* The page after the NPAGES stays unmapped: a hole for the "gone" status. */
	if (m == MAP_FAILED || munmap(m + NPAGES * BASE, BASE) < 0)
		_exit(1);
	big = mmap(NULL, 2 * THP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED)
		_exit(1);
	madvise(m, NPAGES * BASE, MADV_NOHUGEPAGE);
	for (int i = 0; i < NPAGES; i++)
		m[i * BASE] = 1;
	big = (char *)(((uintptr_t)big + THP - 1) & ~(uintptr_t)(THP - 1));
	msg[2] = madvise(big, THP, MADV_HUGEPAGE) == 0;
	memset(big, 1, THP);
	msg[0] = (uintptr_t)m;
	msg[1] = (uintptr_t)big;
	if (write(report, msg, sizeof(msg)) != sizeof(msg))
		_exit(1);
	while (read(release, &c, 1) > 0)
		;
	_exit(0);
}

static void child_start(struct child *ch)
{
	int rep[2], rel[2];
	uint64_t msg[3];

	assert_int_equal(pipe(rep), 0);
	assert_int_equal(pipe(rel), 0);
	ch->pid = fork();
	assert_true(ch->pid >= 0);
	if (ch->pid == 0) {
		close(rep[0]);
		close(rel[1]);
		child_main(rep[1], rel[0]);
	}
	close(rep[1]);
	close(rel[0]);
	assert_int_equal(read(rep[0], msg, sizeof(msg)), sizeof(msg));
	close(rep[0]);
	ch->release_fd = rel[1];
	ch->base = msg[0];
	ch->thp = msg[1];
	ch->have_thp = (int)msg[2];
}

static void child_stop(struct child *ch)
{
	if (ch->pid <= 0)
		return;
	close(ch->release_fd);
	waitpid(ch->pid, NULL, 0);
	ch->pid = 0;
}

/* AnonHugePages of the child's VMA holding addr, from smaps: an independent THP check. */
static uint64_t smaps_anon_huge_kb(pid_t pid, uint64_t addr)
{
	char path[64], line[512];
	uint64_t lo, hi, kb = 0;
	int in = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' '))
			in = addr >= lo && addr < hi;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	return in ? kb : 0;
}

static int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	struct promoter_deps d;
	int64_t h;

	assert_non_null(x);
	assert_int_equal(topology_load("/sys", &x->topo), 0);
	assert_int_equal(hot_table_new(1024, 1024, &x->hot), 0);
	assert_int_equal(procs_new("/proc", 16, &x->procs), 0);
	stats_init(&x->stats, x->topo->nr_nodes);
	assert_int_equal(config_new_defaults(&x->cfg), 0);
	x->cfg->promotion.rate_limit_mbps = 0;
	x->cfg->promotion.min_free_percent = 0;
	child_start(&x->ch);
	h = procs_handle(x->procs, x->ch.pid);
	assert_true(h > 0);
	x->h = (uint32_t)h;
	d = (struct promoter_deps){.hot = x->hot,
				   .procs = x->procs,
				   .topo = x->topo,
				   .stats = &x->stats,
				   .ops = &promoter_real_ops};
	assert_int_equal(promoter_new(&d, &x->p), 0);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fx *x = *state;

	child_stop(&x->ch);
	promoter_free(x->p);
	config_free(x->cfg);
	procs_free(x->procs);
	hot_table_free(x->hot);
	topology_free(x->topo);
	free(x);
	return 0;
}

static size_t make_hot(struct fx *x, uint64_t start, uint64_t step, size_t n,
		       struct hot_candidate *out)
{
	struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 60000};

	for (size_t i = 0; i < n; i++) {
		struct hot_access a = {
		    .proc = x->h, .vaddr = start + i * step, .now_ms = 1, .node = 0};

		assert_int_equal(hot_table_record(x->hot, &a, &hp), 1);
	}
	return hot_table_pop(x->hot, out, n);
}

static void child_pages_get_a_real_status_and_are_accounted(void **state)
{
	struct fx *x = *state;
	struct hot_candidate c[NPAGES];
	int status[NPAGES];

	assert_int_equal(make_hot(x, x->ch.base, BASE, NPAGES, c), NPAGES);
	assert_int_equal(
	    promoter_move_batch(x->p, x->cfg, x->ch.pid, c, NPAGES, 0, status, true, 2), NPAGES);
	for (int i = 0; i < NPAGES; i++)
		assert_int_equal(status[i], 0);
	assert_int_equal(atomic_load(&x->stats.promoted_pages[0]), NPAGES);
	assert_int_equal(atomic_load(&x->stats.promoted_bytes[0]), NPAGES * BASE);
	/* Settled as promoted: the pages are in their cooldown, not queued again. */
	assert_int_equal(hot_table_queued(x->hot), 0);
	{
		struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 60000};
		struct hot_access a = {.proc = x->h, .vaddr = x->ch.base, .now_ms = 3, .node = 0};

		assert_int_equal(hot_table_record(x->hot, &a, &hp), 0);
	}
}

static void unmapped_address_reports_gone(void **state)
{
	struct fx *x = *state;
	struct hot_candidate c[2];
	int status[2];

	/* The last good page and the unmapped hole after it. */
	assert_int_equal(make_hot(x, x->ch.base + (NPAGES - 1) * BASE, BASE, 2, c), 2);
	assert_int_equal(promoter_move_batch(x->p, x->cfg, x->ch.pid, c, 2, 0, status, true, 2), 1);
	assert_int_equal(status[0], 0);
	assert_true(status[1] == -EFAULT || status[1] == -ENOENT);
	assert_int_equal(atomic_load(&x->stats.fail[FAIL_GONE]), 1);
}

static void thp_is_sized_two_mib_by_the_real_lookup(void **state)
{
	struct fx *x = *state;
	struct hot_candidate c[1];
	int status[1];

	if (!x->ch.have_thp || smaps_anon_huge_kb(x->ch.pid, x->ch.thp) < THP / 1024) {
		print_message("skipped: the kernel gave the child no THP (transparent_hugepage "
			      "disabled or no free huge page)\n");
		skip();
	}
	assert_int_equal(make_hot(x, x->ch.thp + 5 * BASE, BASE, 1, c), 1);
	assert_int_equal(promoter_move_batch(x->p, x->cfg, x->ch.pid, c, 1, 0, status, true, 2), 1);
	assert_int_equal(status[0], 0);
	assert_int_equal(atomic_load(&x->stats.promoted_bytes[0]), THP);
}

static void run_once_with_node_0_as_slow_and_target_moves_every_page(void **state)
{
	struct fx *x = *state;
	struct hot_params hp = {.threshold = 1, .window_ms = 1000, .cooldown_ms = 60000};

	/* Node 0 is both the slow node and the fixed target: the only way to drive the whole
	 * interval (placement query, target choice, free memory, move) on one node. */
	x->cfg->tiers.slow_nodes.n = 1;
	x->cfg->tiers.slow_nodes.node[0] = 0;
	x->cfg->promotion.target = TARGET_FIXED;
	x->cfg->promotion.target_nodes.n = 1;
	x->cfg->promotion.target_nodes.node[0] = 0;
	assert_int_equal(topology_apply_config(x->topo, x->cfg), 0);
	for (int i = 0; i < NPAGES; i++) {
		struct hot_access a = {
		    .proc = x->h, .vaddr = x->ch.base + i * BASE, .now_ms = 1, .node = 0};

		assert_int_equal(hot_table_record(x->hot, &a, &hp), 1);
	}
	assert_int_equal(promoter_run_once(x->p, x->cfg, 2), NPAGES);
	assert_int_equal(stats_get(&x->stats, ST_PROMOTE_CANDIDATES), NPAGES);
	assert_int_equal(atomic_load(&x->stats.promoted_pages[0]), NPAGES);
	assert_int_equal(atomic_load(&x->stats.promoted_bytes[0]), NPAGES * BASE);
}

static void exited_child_is_forgotten_on_esrch(void **state)
{
	struct fx *x = *state;
	struct hot_candidate c[4];
	int status[4];
	pid_t pid = x->ch.pid;

	assert_int_equal(make_hot(x, x->ch.base, BASE, 4, c), 4);
	child_stop(&x->ch);
	assert_int_equal(promoter_move_batch(x->p, x->cfg, pid, c, 4, 0, status, true, 2), -ESRCH);
	assert_false(procs_valid(x->procs, x->h));
	assert_int_equal(stats_get(&x->stats, ST_PROCESSES_FORGOTTEN), 1);
	assert_int_equal(hot_table_used(x->hot), 0);
}

static void promoter_thread_runs_on_the_child_cpu_then_anywhere_again(void **state)
{
	struct fx *x = *state;
	cpu_set_t before, near, after;
	char path[64], line[1024];
	unsigned long long start;
	struct promoter_sys sys;
	int cpu = -1;
	FILE *f;

	/* Earlier tests' promoter runs (each with a context of its own) may have left this
	 * thread near their child: back to the CPUs it started with. */
	assert_int_equal(sched_setaffinity(0, sizeof(initial_cpus), &initial_cpus), 0);
	promoter_sys_init(&sys, "/proc");
	assert_int_equal(sched_getaffinity(0, sizeof(before), &before), 0);
	assert_int_equal(promoter_real_ops.run_near(&sys, x->ch.pid), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(near), &near), 0);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)x->ch.pid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	/* Field 39 (processor), counted after the command name's closing parenthesis. */
	const char *p = strrchr(line, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2,
				"%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
				"%*d %*d %*d %*d %llu %*u %*d %*u %*u %*u %*u %*u %*u %*u "
				"%*u %*u %*u %*u %*u %*u %*u %d",
				&start, &cpu),
			 2);
	assert_int_equal(CPU_COUNT(&near), 1);
	assert_true(CPU_ISSET(cpu, &near));
	promoter_real_ops.run_anywhere(&sys);
	assert_int_equal(sched_getaffinity(0, sizeof(after), &after), 0);
	assert_true(CPU_EQUAL(&before, &after));
	assert_int_equal(promoter_real_ops.run_near(&sys, 0x7fffffff), -ESRCH);
	promoter_sys_fini(&sys);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(child_pages_get_a_real_status_and_are_accounted),
	    T(unmapped_address_reports_gone),
	    T(thp_is_sized_two_mib_by_the_real_lookup),
	    T(run_once_with_node_0_as_slow_and_target_moves_every_page),
	    T(exited_child_is_forgotten_on_esrch),
	    T(promoter_thread_runs_on_the_child_cpu_then_anywhere_again),
	};

	log_setup(LOG_TARGET_STDERR, LOG_LVL_WARNING);
	if (sched_getaffinity(0, sizeof(initial_cpus), &initial_cpus) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
