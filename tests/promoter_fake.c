/* The promoter tests' fixture: see promoter_fake.h. */
#include <errno.h>
#include <numaif.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "promoter_fake.h"

struct fake_page *fake_find(struct fake *f, pid_t pid, uint64_t addr)
{
	for (int i = 0; i < f->nr_special; i++)
		if (f->special[i].pid == pid && f->special[i].addr == addr)
			return &f->special[i];
	return NULL;
}

static uint64_t fake_size(const struct fake *f, uint64_t addr)
{
	return addr >= f->huge_lo && addr < f->huge_hi ? THP : BASE;
}

static int fake_move_one(struct fake *f, pid_t pid, uint64_t addr, int target, int *status)
{
	struct fake_page *pg = fake_find(f, pid, addr);

	if (pg && pg->force == UNWRITTEN_ME)
		return 1;
	if (pg && pg->force) {
		*status = pg->force;
	} else if (pg && pg->busy > 0) {
		pg->busy--;
		*status = -EBUSY;
	} else if (f->nomem[target]) {
		*status = -ENOMEM;
	} else {
		int from = pg ? pg->node : SLOW;

		f->moved_out[from] += (int64_t)fake_size(f, addr);
		f->moved_out[target] -= (int64_t)fake_size(f, addr);
		if (pg)
			pg->node = target;
		f->pages_moved++;
		f->bytes_moved += fake_size(f, addr);
		f->moved_to[target]++;
		*status = target;
	}
	return 0;
}

long fake_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages, const int *nodes,
		     int *status, int flags)
{
	struct fake *f = ctx;
	long not_moved = 0;

	if (!nodes) {
		if (f->queries < MAX_CALLS)
			f->query_size[f->queries] = count;
		f->queries++;
		if (pid == f->esrch_query)
			return -ESRCH;
		if (pid == f->einval_query)
			return -EINVAL;
		for (unsigned long i = 0; i < count; i++) {
			struct fake_page *pg = fake_find(f, pid, (uintptr_t)pages[i]);

			status[i] = pg ? pg->node : SLOW;
		}
		return 0;
	}
	assert_int_equal(flags, MPOL_MF_MOVE);
	assert_true(f->calls < MAX_CALLS);
	f->call_size[f->calls] = count;
	f->call_node[f->calls] = count ? nodes[0] : -1;
	f->near_at_move[f->calls] = f->near_now == pid;
	f->call_pid[f->calls++] = pid;
	if (pid == f->esrch_move && f->calls > f->esrch_from_call)
		return -ESRCH;
	for (unsigned long i = 0; i < count; i++) {
		int r = fake_move_one(f, pid, (uintptr_t)pages[i], nodes[i], &status[i]);

		not_moved += r || status[i] != nodes[i];
	}
	return not_moved;
}

uint64_t fake_now(void *ctx)
{
	struct fake *f = ctx;

	/* Relaxed: a progress counter the test polls; now itself is not changed meanwhile. */
	atomic_fetch_add_explicit(&f->now_reads, 1, memory_order_relaxed);
	return f->now;
}

/* The promoter thread reads the clock once for run_once and once as it starts waiting: after
 * the second read, its first interval is over (a sleep guessed wrong on a loaded machine). */
void wait_first_interval(struct fx *x)
{
	for (int i = 0; i < 5000 && atomic_load(&x->fake.now_reads) < 2; i++)
		usleep(1000);
	assert_true(atomic_load(&x->fake.now_reads) >= 2);
}

int fake_refresh_free(void *ctx, struct topology *t)
{
	struct fake *f = ctx;

	for (int n = 0; n < 3; n++) {
		t->node[n].mem_free = t->node[n].mem_total * f->free_pct[n] / 100;
		t->node[n].mem_mark = f->mark_pages[n] * BASE;
		if (f->account)
			t->node[n].mem_free += (uint64_t)f->moved_out[n];
	}
	return 0;
}

int fake_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	struct fake *f = ctx;

	(void)pid;
	f->size_lookups += n;
	for (size_t i = 0; i < n; i++)
		sizes[i] = fake_size(ctx, addrs[i]);
	return 0;
}

void fake_special(struct fx *x, pid_t pid, uint64_t addr, int node, int busy, int force)
{
	struct fake *f = &x->fake;

	assert_true(f->nr_special < MAX_SPECIAL);
	f->special[f->nr_special++] = (struct fake_page){
	    .pid = pid, .addr = addr, .node = node, .busy = busy, .force = force};
}

int fake_run_near(void *ctx, pid_t pid)
{
	struct fake *f = ctx;

	if (f->nears < MAX_CALLS)
		f->near_pid[f->nears] = pid;
	f->nears++;
	f->near_now = pid;
	return 0;
}

void fake_run_anywhere(void *ctx)
{
	struct fake *f = ctx;

	f->anywheres++;
	f->near_now = 0;
}

int setup(void **state)
{
	struct fx *x = calloc(1, sizeof(*x));
	const char *fixtures = getenv("PGHOTD_FIXTURES");
	char path[4096];
	struct promoter_deps d;
	int64_t h;

	assert_non_null(x);
	assert_non_null(fixtures);
	snprintf(path, sizeof(path), "%s/sysfs-3node-cxl", fixtures);
	assert_int_equal(topology_load(path, &x->topo), 0);
	assert_true(topology_node_is_slow(x->topo, SLOW));
	assert_int_equal(hot_table_new(1 << 16, 2 * PROMOTER_WORK_MAX, &x->hot), 0);
	assert_int_equal(procs_new("/proc", 64, &x->procs), 0);
	h = procs_handle(x->procs, getpid());
	assert_true(h > 0);
	x->self = (uint32_t)h;
	stats_init(&x->stats, 3);
	assert_int_equal(config_new_defaults(&x->cfg), 0);
	x->cfg->promotion.rate_limit_mbps = 0;
	x->cfg->promotion.batch = 512;
	x->cfg->promotion.min_free_percent = 10;
	x->cfg->promotion.cooldown_ms = 1000;
	x->cfg->promotion.interval_ms = 100;
	x->cfg->promotion.max_retries = 2;
	x->cfg->promotion.target = TARGET_ACCESSING_NODE;
	for (int n = 0; n < 3; n++)
		x->fake.free_pct[n] = 50;
	x->fake.now = 1000;
	x->ops = (struct promoter_ops){.move_pages = fake_move_pages,
				       .now_ms = fake_now,
				       .refresh_free = fake_refresh_free,
				       .page_sizes = fake_page_sizes,
				       .run_near = fake_run_near,
				       .run_anywhere = fake_run_anywhere,
				       .ctx = &x->fake};
	assert_int_equal(cgroups_new(&(struct cgroups_deps){.procfs_root = "/proc",
							    .procs = x->procs,
							    .hot = x->hot,
							    .stats = &x->stats,
							    .nr_nodes = 3},
				     4, &x->cgroups),
			 0);
	d = (struct promoter_deps){.hot = x->hot,
				   .procs = x->procs,
				   .topo = x->topo,
				   .stats = &x->stats,
				   .ops = &x->ops,
				   .cgroups = x->cgroups};
	assert_int_equal(promoter_new(&d, &x->p), 0);
	*state = x;
	return 0;
}

int teardown(void **state)
{
	struct fx *x = *state;

	promoter_free(x->p);
	cold_list_free(x->cold);
	if (x->child > 0) {
		kill(x->child, SIGKILL);
		waitpid(x->child, NULL, 0);
	}
	config_free(x->cfg);
	cgroups_free(x->cgroups);
	procs_free(x->procs);
	hot_table_free(x->hot);
	topology_free(x->topo);
	free(x);
	return 0;
}

/* A live second process to own pages. */
void spawn_child(struct fx *x)
{
	int64_t h;

	x->child = fork();
	assert_true(x->child >= 0);
	if (x->child == 0) {
		pause();
		_exit(0);
	}
	h = procs_handle(x->procs, x->child);
	assert_true(h > 0);
	x->child_h = (uint32_t)h;
}

/* One access that makes the page hot (threshold 1). */
int hot(struct fx *x, uint32_t proc, uint64_t addr, int node)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {.proc = proc, .vaddr = addr, .now_ms = x->fake.now, .node = node};

	return hot_table_record(x->hot, &a, &hp);
}

/* Like hot(), for an access whose physical address showed the page on a slow node. */
int hot_seen_slow(struct fx *x, uint32_t proc, uint64_t addr, int node)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {
	    .proc = proc, .vaddr = addr, .now_ms = x->fake.now, .node = node, .on_slow = true};

	return hot_table_record(x->hot, &a, &hp);
}

/* Like hot_seen_slow(), from a source that also saw the page's size (the abit scanner). */
int hot_sized(struct fx *x, uint64_t addr, enum hot_size size)
{
	struct hot_params hp = {
	    .threshold = 1, .window_ms = 1000, .cooldown_ms = x->cfg->promotion.cooldown_ms};
	struct hot_access a = {.proc = x->self,
			       .vaddr = addr,
			       .now_ms = x->fake.now,
			       .node = 0,
			       .on_slow = true,
			       .size = size};

	return hot_table_record(x->hot, &a, &hp);
}

int run(struct fx *x)
{
	return promoter_run_once(x->p, x->cfg, x->fake.now);
}

uint64_t fails(struct fx *x, enum stat_fail_reason r)
{
	return atomic_load(&x->stats.fail[r]);
}

uint64_t promoted_to(struct fx *x, int node)
{
	return atomic_load(&x->stats.promoted_pages[node]);
}

uint64_t cgroup_sum(struct fx *x, const char *family)
{
	char *text = NULL, *p;
	size_t len = 0, l = strlen(family);
	FILE *f = open_memstream(&text, &len);
	uint64_t sum = 0;

	assert_non_null(f);
	cgroups_refresh(x->cgroups, x->cfg);
	assert_int_equal(cgroups_render(x->cgroups, f), 0);
	assert_int_equal(fclose(f), 0);
	for (p = text; (p = strstr(p, family)); p += l)
		if (p[l] == '{')
			sum += strtoull(strstr(p, "} ") + 2, NULL, 10);
	free(text);
	return sum;
}
