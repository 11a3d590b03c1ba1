/* perf_sampler with fake syscalls: the RLIMIT_NOFILE plan and its error, one fd per CPU per
 * event with the group leader first, rings drained into batches at the sink, periods set on
 * the sampling fds only, and nothing left open after a failure. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/perf/perf_sampler.h"

#define PAGE  4096u
#define RINGP 2u
#define MAXFD 64

struct fake {
	struct rlimit lim;
	int setrlimit_err;
	int fail_open_at; /* open number that fails with -EACCES, -1 never */
	int opens, open_fds;
	int group_of[MAXFD];
	int cpu_of[MAXFD];
	void *maps[MAXFD];
	int period_ioctls[MAXFD];
	uint64_t last_period;
};

static int f_open(void *ctx, struct perf_event_attr *a, pid_t pid, int cpu, int group_fd)
{
	struct fake *f = ctx;
	int fd = 100 + f->opens;

	(void)pid;
	assert_int_equal(a->disabled, 1);
	assert_int_equal(a->size, sizeof(*a));
	if (f->opens++ == f->fail_open_at)
		return -EACCES;
	f->group_of[fd - 100] = group_fd;
	f->cpu_of[fd - 100] = cpu;
	f->open_fds++;
	return fd;
}

static int f_mmap(void *ctx, int fd, size_t len, void **out)
{
	struct fake *f = ctx;
	struct perf_event_mmap_page *m = aligned_alloc(PAGE, len);

	assert_int_equal(len, (1 + RINGP) * PAGE);
	memset(m, 0, len);
	m->data_offset = PAGE;
	m->data_size = RINGP * PAGE;
	f->maps[fd - 100] = m;
	*out = m;
	return 0;
}

static void f_munmap(void *ctx, void *addr, size_t len)
{
	struct fake *f = ctx;

	(void)len;
	for (int i = 0; i < MAXFD; i++)
		if (f->maps[i] == addr)
			f->maps[i] = NULL;
	free(addr);
}

static int f_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	struct fake *f = ctx;

	if (req == PERF_EVENT_IOC_PERIOD) {
		f->period_ioctls[fd - 100]++;
		f->last_period = *(uint64_t *)arg;
	}
	return 0;
}

static void f_close(void *ctx, int fd)
{
	(void)fd;
	((struct fake *)ctx)->open_fds--;
}

static int f_getrlimit(void *ctx, struct rlimit *out)
{
	*out = ((struct fake *)ctx)->lim;
	return 0;
}

static int f_setrlimit(void *ctx, const struct rlimit *in)
{
	struct fake *f = ctx;

	if (f->setrlimit_err)
		return f->setrlimit_err;
	f->lim = *in;
	return 0;
}

static struct perf_sampler_ops fake_ops(struct fake *f)
{
	return (struct perf_sampler_ops){f_open,  f_mmap,      f_munmap,    f_ioctl,
					 f_close, f_getrlimit, f_setrlimit, f};
}

struct got {
	size_t n, batches;
	struct access_event ev[16];
};

static void deliver(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	struct got *g = ctx;

	(void)cfg;
	g->batches++;
	for (size_t i = 0; i < n && g->n < 16; i++)
		g->ev[g->n++] = ev[i];
}

static bool convert(void *ctx, const struct perf_event_header *h, const struct perf_sample *s,
		    struct access_event *out)
{
	(void)ctx, (void)h;
	if (s->addr == 0)
		return false;
	*out = (struct access_event){.pid = (pid_t)s->pid, .vaddr = s->addr, .cpu = (int)s->cpu};
	return true;
}

static const int cpus[] = {0, 1, 2};

static struct perf_sampler_source two_events(void)
{
	struct perf_sampler_source src = {
	    .source = SRC_PEBS, .name = "pebs", .nr_events = 2, .leader = 0, .convert = convert};

	src.attr[0] = (struct perf_event_attr){.type = 4, .config = 0x8203}; /* counting leader */
	src.attr[1] = (struct perf_event_attr){.type = 4,
					       .config = 0x1cd,
					       .sample_period = 1000,
					       .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR |
							      PERF_SAMPLE_CPU};
	return src;
}

static struct perf_sampler_params params(struct fake *f, struct perf_sampler_ops *ops,
					 struct stats *st, struct got *g)
{
	*ops = fake_ops(f);
	stats_init(st, 1);
	return (struct perf_sampler_params){.ring_pages = RINGP,
					    .cpus = cpus,
					    .nr_cpus = 3,
					    .pid = -1,
					    .page_size = PAGE,
					    .stats = st,
					    .sink = {deliver, g},
					    .ops = ops};
}

static void plans_the_descriptor_limit(void **state)
{
	struct rlimit cur = {100, 4096}, want;
	(void)state;

	assert_false(perf_sampler_nofile_plan(&cur, 50, &want));
	assert_true(perf_sampler_nofile_plan(&cur, 1000, &want));
	assert_int_equal(want.rlim_cur, 1000);
	assert_int_equal(want.rlim_max, 4096);
	cur.rlim_max = 500;
	assert_true(perf_sampler_nofile_plan(&cur, 1000, &want));
	assert_int_equal(want.rlim_max, 1000);
	cur.rlim_cur = RLIM_INFINITY;
	assert_false(perf_sampler_nofile_plan(&cur, 1000, &want));
}

static void names_the_limit_and_the_numbers_when_it_cannot_be_raised(void **state)
{
	struct fake f = {.lim = {20, 20}, .setrlimit_err = -EPERM, .fail_open_at = -1};
	struct perf_sampler_source src = two_events();
	struct perf_sampler_ops ops;
	struct stats st;
	struct got g = {0};
	struct perf_sampler_params p = params(&f, &ops, &st, &g);
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	(void)state;

	assert_int_equal(perf_sampler_new(&src, &p, &s, err, sizeof(err)), -EPERM);
	assert_null(s);
	assert_non_null(strstr(err, "RLIMIT_NOFILE is 20 (hard 20)"));
	assert_non_null(strstr(err, "needs 70 file descriptors (3 CPUs x 2 events + 64)"));
	assert_int_equal(f.opens, 0);
}

static void opens_each_event_per_cpu_with_the_leader_first(void **state)
{
	struct fake f = {.lim = {20, 20}, .fail_open_at = -1};
	struct perf_sampler_source src = two_events();
	struct perf_sampler_ops ops;
	struct stats st;
	struct got g = {0};
	struct perf_sampler_params p = params(&f, &ops, &st, &g);
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	(void)state;

	assert_int_equal(perf_sampler_new(&src, &p, &s, err, sizeof(err)), 0);
	assert_int_equal(f.lim.rlim_cur, 70); /* raised */
	assert_int_equal(perf_sampler_nr_fds(s), 6);
	for (int cpu = 0; cpu < 3; cpu++) {
		assert_int_equal(f.group_of[2 * cpu], -1);		  /* leader */
		assert_int_equal(f.group_of[2 * cpu + 1], 100 + 2 * cpu); /* member */
		assert_int_equal(f.cpu_of[2 * cpu + 1], cpu);
	}
	assert_int_equal(perf_sampler_set_period(s, 5000), 0);
	for (int i = 0; i < 6; i++) /* only the sampling member gets a period */
		assert_int_equal(f.period_ioctls[i], i % 2);
	assert_int_equal(f.last_period, 5000);
	perf_sampler_free(s);
	assert_int_equal(f.open_fds, 0);
	for (int i = 0; i < 6; i++)
		assert_null(f.maps[i]);
}

static void put_sample(void *map, uint32_t pid, uint64_t addr, uint32_t cpu)
{
	struct perf_event_mmap_page *m = map;
	uint8_t *d = (uint8_t *)map + PAGE + m->data_head;
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, 32};
	uint32_t pt[2] = {pid, pid}, c[2] = {cpu, 0};

	memcpy(d, &h, 8);
	memcpy(d + 8, pt, 8);
	memcpy(d + 16, &addr, 8);
	memcpy(d + 24, c, 8);
	m->data_head += 32;
}

static void drains_every_ring_into_the_sink_and_counts_drops(void **state)
{
	struct fake f = {.lim = {1000, 1000}, .fail_open_at = -1};
	struct perf_sampler_source src = two_events();
	struct perf_sampler_ops ops;
	struct stats st;
	struct got g = {0};
	struct perf_sampler_params p = params(&f, &ops, &st, &g);
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	(void)state;

	assert_int_equal(perf_sampler_new(&src, &p, &s, err, sizeof(err)), 0);
	put_sample(f.maps[1], 10, 0x7f0000001000, 0);
	put_sample(f.maps[3], 11, 0x7f0000002000, 1);
	put_sample(f.maps[5], 12, 0, 2); /* dropped by the source */
	assert_int_equal(perf_sampler_drain(s), 3);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.batches, 1);
	assert_int_equal(g.ev[0].vaddr, 0x7f0000001000);
	assert_int_equal(g.ev[1].cpu, 1);
	assert_int_equal(atomic_load(&st.src[SRC_PEBS][SS_SAMPLES]), 3);
	assert_int_equal(atomic_load(&st.src[SRC_PEBS][SS_SAMPLES_DROPPED]), 1);
	perf_sampler_free(s);
}

static void closes_everything_when_an_open_fails(void **state)
{
	struct fake f = {.lim = {1000, 1000}, .fail_open_at = 3};
	struct perf_sampler_source src = two_events();
	struct perf_sampler_ops ops;
	struct stats st;
	struct got g = {0};
	struct perf_sampler_params p = params(&f, &ops, &st, &g);
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	(void)state;

	assert_int_equal(perf_sampler_new(&src, &p, &s, err, sizeof(err)), -EACCES);
	assert_null(s);
	assert_non_null(strstr(err, "pebs: perf_event_open(type 4, config 0x1cd, pid -1, cpu 1)"));
	assert_int_equal(f.open_fds, 0);
	for (int i = 0; i < MAXFD; i++)
		assert_null(f.maps[i]);
}

/* What the IBS and PEBS sources share: the gauge is 1 only while the sampler runs, and a
 * refused launch leaves nothing open and the gauge alone. */
static void perf_source_marks_active_only_while_launched(void **state)
{
	struct fake f = {.lim = {1000, 1000}, .fail_open_at = -1};
	struct perf_sampler_source src = two_events();
	struct perf_sampler_ops ops;
	struct stats st;
	struct got g = {0};
	struct perf_sampler_params p = params(&f, &ops, &st, &g);
	struct {
		struct perf_source ps;
		int other;
	} owner = {0};
	char err[PERF_SAMPLER_ERR_LEN];
	(void)state;

	p.drain_interval_ms = 10;
	src.ctx = &owner;
	assert_int_equal(perf_source_launch(&owner.ps, &src, &p, err, sizeof(err)), 0);
	assert_non_null(owner.ps.sampler);
	assert_non_null(src.on_drain); /* the adaptive period's hook */
	assert_int_equal(atomic_load(&st.src_active[SRC_PEBS]), 1);
	perf_source_stop(&owner.ps);
	assert_null(owner.ps.sampler);
	assert_int_equal(atomic_load(&st.src_active[SRC_PEBS]), 0);
	assert_int_equal(f.open_fds, 0);
	perf_source_stop(&owner.ps); /* idempotent */

	f = (struct fake){.lim = {1000, 1000}, .fail_open_at = 3};
	assert_int_equal(perf_source_launch(&owner.ps, &src, &p, err, sizeof(err)), -EACCES);
	assert_null(owner.ps.sampler);
	assert_int_equal(atomic_load(&st.src_active[SRC_PEBS]), 0);
	assert_int_equal(f.open_fds, 0);
	perf_source_stop(&owner.ps); /* never launched */
	assert_int_equal(atomic_load(&st.src_active[SRC_PEBS]), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(plans_the_descriptor_limit),
	    cmocka_unit_test(names_the_limit_and_the_numbers_when_it_cannot_be_raised),
	    cmocka_unit_test(opens_each_event_per_cpu_with_the_leader_first),
	    cmocka_unit_test(drains_every_ring_into_the_sink_and_counts_drops),
	    cmocka_unit_test(closes_everything_when_an_open_fails),
	    cmocka_unit_test(perf_source_marks_active_only_while_launched),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
