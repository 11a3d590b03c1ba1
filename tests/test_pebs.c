/* Tests for the PEBS source: sysfs PMU discovery (plain, Sapphire Rapids with mem-loads-aux,
 * hybrid), the events libpfm4 encodes for an Ice Lake server (icx) and a Sapphire Rapids
 * (spr) forced with LIBPFM_FORCE_PMU (each in a child process: libpfm4 reads the variable
 * once per process), the aux group leader, precise_ip probing against a fake kernel, a start
 * without libpfm4 (a library name that does not exist), and data_src values as the kernel's
 * PEBS tables (arch/x86/events/intel/ds.c) build them. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <linux/perf_event.h>

#include <sys/eventfd.h>

#include "base/config.h"
#include "sources/pmu/mem_src.h"
#include "sources/perf/perf_sample.h"
#include "sources/pmu/pebs_source.h"
#include "sources/pmu/pfm_lib.h"

/* The kernel's shorthand for data_src values (perf_event.h PERF_MEM_S). */
#define P(a, b)	 PERF_MEM_S(a, b)
#define OP_LH	 (P(OP, LOAD) | P(LVL, HIT))
#define LEVEL(x) P(LVLNUM, x)
#define REM	 P(REMOTE, REMOTE)

static void fixture_root(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("PGHOTD_FIXTURES");

	assert_non_null(dir);
	snprintf(buf, size, "%s/%s", dir, name);
}

static struct pebs_pmu read_pmu(const char *name)
{
	char root[PATH_MAX], reason[PEBS_REASON_MAX] = "";
	struct pebs_pmu p;

	fixture_root(name, root, sizeof(root));
	assert_int_equal(pebs_source_pmu_read(root, &p, reason, sizeof(reason)), 0);
	return p;
}

/* --- sysfs --- */

static void reads_plain_cpu_pmu_without_aux(void **state)
{
	struct pebs_pmu p = read_pmu("sysfs-pebs-icx");

	(void)state;
	assert_string_equal(p.name, "cpu");
	assert_false(p.hybrid);
	assert_int_equal(p.type, 4);
	assert_false(p.has_aux);
	assert_string_equal(p.cpus, "");
}

static void reads_mem_loads_aux_encoding(void **state)
{
	struct pebs_pmu p = read_pmu("sysfs-pebs-spr");

	(void)state;
	assert_true(p.has_aux);
	assert_true(p.aux_config == 0x8203);
}

static void hybrid_part_uses_cpu_core_and_its_cpus(void **state)
{
	struct pebs_pmu p = read_pmu("sysfs-pebs-hybrid");

	(void)state;
	assert_string_equal(p.name, "cpu_core");
	assert_true(p.hybrid);
	assert_int_equal(p.type, 4);
	assert_true(p.has_aux);
	assert_string_equal(p.cpus, "0-15");
}

static void missing_mem_loads_is_enodev_with_reason(void **state)
{
	char root[PATH_MAX], reason[PEBS_REASON_MAX] = "";
	struct pebs_pmu p = {.type = 55};

	(void)state;
	fixture_root("sysfs-ibs-zen3", root, sizeof(root));
	assert_int_equal(pebs_source_pmu_read(root, &p, reason, sizeof(reason)), -ENODEV);
	assert_int_equal(p.type, 55);
	assert_non_null(strstr(reason, "no Intel cpu PMU with mem-loads event ("));
	assert_non_null(strstr(reason, "cpu/events/mem-loads: No such file or directory)"));
	assert_int_equal(pebs_source_available(root, reason, sizeof(reason)), -ENODEV);
}

static void malformed_aux_event_is_einval(void **state)
{
	char root[PATH_MAX], reason[PEBS_REASON_MAX] = "";
	struct pebs_pmu p;

	(void)state;
	fixture_root("sysfs-pebs-badaux", root, sizeof(root));
	assert_int_equal(pebs_source_pmu_read(root, &p, reason, sizeof(reason)), -EINVAL);
	assert_non_null(strstr(reason, "mem-loads-aux: unparsable content"));
}

/* --- libpfm4 encoding, in a child per forced PMU model --- */

struct child_result {
	int ret;
	struct pebs_plan plan;
	char reason[PEBS_REASON_MAX];
};

static struct child_result plan_as(const char *model, const char *fixture,
				   const struct pebs_opts *o)
{
	struct child_result res;
	int fds[2], status;
	pid_t pid;

	memset(&res, 0, sizeof(res));
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pebs_pmu pmu;
		char root[PATH_MAX];
		ssize_t w;

		close(fds[0]);
		setenv("LIBPFM_FORCE_PMU", model, 1);
		fixture_root(fixture, root, sizeof(root));
		res.ret = pebs_source_pmu_read(root, &pmu, res.reason, sizeof(res.reason));
		if (res.ret == 0)
			res.ret =
			    pebs_source_plan(&pmu, o, &res.plan, res.reason, sizeof(res.reason));
		w = write(fds[1], &res, sizeof(res));
		_exit(w == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &res, sizeof(res)), (int)sizeof(res));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return res;
}

static const struct pebs_opts loads_and_stores = {
    .period = 1000, .ldlat = 128, .stores = true, .event = NULL, .phys_addr = true};

static void assert_sampling_attr(const struct perf_event_attr *a)
{
	assert_int_equal(a->size, sizeof(*a));
	assert_true(a->sample_period == 1000);
	assert_false(a->freq);
	assert_true(a->sample_type ==
		    (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
		     PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_PHYS_ADDR));
	assert_int_equal(a->precise_ip, 3);
	assert_true(a->exclude_kernel && a->exclude_hv);
	assert_false(a->exclude_user);
	assert_true(a->use_clockid);
	assert_int_equal(a->clockid, CLOCK_MONOTONIC);
}

static void icx_loads_and_stores_without_aux_leader(void **state)
{
	struct child_result r = plan_as("icx", "sysfs-pebs-icx", &loads_and_stores);
	const struct pebs_event *ld = &r.plan.ev[0], *st = &r.plan.ev[1];

	(void)state;
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.plan.n, 2);
	assert_int_equal(ld->attr.type, PERF_TYPE_RAW);
	assert_true(ld->attr.config == 0x1cd); /* event 0xcd umask 0x01 */
	assert_true(ld->attr.config1 == 128);  /* ldlat */
	assert_sampling_attr(&ld->attr);
	assert_true(ld->sampling);
	assert_int_equal(ld->leader, -1);
	assert_int_equal(ld->kind, ACCESS_LOAD);
	assert_true(ld->attr.disabled);
	assert_non_null(strstr(ld->name, "icx::MEM_TRANS_RETIRED:LOAD_LATENCY"));
	assert_true(st->attr.config == 0x82d0); /* event 0xd0 umask 0x82 */
	assert_true(st->attr.config1 == 0);
	assert_sampling_attr(&st->attr);
	assert_int_equal(st->kind, ACCESS_STORE);
	assert_int_equal(st->leader, -1);
}

static void spr_load_latency_is_led_by_mem_loads_aux(void **state)
{
	struct child_result r = plan_as("spr", "sysfs-pebs-spr", &loads_and_stores);
	const struct pebs_event *aux = &r.plan.ev[0], *ld = &r.plan.ev[1], *st = &r.plan.ev[2];

	(void)state;
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.plan.n, 3);
	/* the leader comes first, counts and never samples */
	assert_false(aux->sampling);
	assert_int_equal(aux->leader, -1);
	assert_int_equal(aux->attr.type, PERF_TYPE_RAW);
	assert_true(aux->attr.config == 0x8203);
	assert_true(aux->attr.sample_period == 0);
	assert_true(aux->attr.sample_type == 0);
	assert_int_equal(aux->attr.precise_ip, 0);
	assert_true(aux->attr.disabled);
	assert_true(aux->attr.exclude_kernel);
	assert_string_equal(aux->name, "cpu/mem-loads-aux/");
	assert_int_equal(ld->leader, 0);
	assert_false(ld->attr.disabled); /* enabled through its leader */
	assert_true(ld->attr.config == 0x1cd);
	assert_true(ld->attr.config1 == 128);
	assert_sampling_attr(&ld->attr);
	assert_non_null(strstr(ld->name, "spr::MEM_TRANS_RETIRED:LOAD_LATENCY"));
	assert_true(st->attr.config == 0x82d0);
	assert_int_equal(st->leader, -1);
	assert_true(st->attr.disabled);
}

static void ldlat_from_config_reaches_config1(void **state)
{
	struct pebs_opts o = loads_and_stores;
	struct child_result r;

	(void)state;
	o.ldlat = 30;
	o.stores = false;
	r = plan_as("icx", "sysfs-pebs-icx", &o);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.plan.n, 1);
	assert_true(r.plan.ev[0].attr.config1 == 30);
}

static void explicit_event_overrides_the_choice(void **state)
{
	struct pebs_opts o = loads_and_stores;
	struct child_result r;

	(void)state;
	o.event = "MEM_INST_RETIRED:ALL_LOADS";
	r = plan_as("icx", "sysfs-pebs-icx", &o);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.plan.n, 1); /* no stores event beside an explicit one */
	assert_true(r.plan.ev[0].attr.config == 0x81d0);
	/* an explicit load-latency event still gets the aux leader where needed */
	o.event = "MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=64";
	r = plan_as("spr", "sysfs-pebs-spr", &o);
	assert_int_equal(r.plan.n, 2);
	assert_true(r.plan.ev[0].attr.config == 0x8203);
	assert_true(r.plan.ev[1].attr.config1 == 64);
	assert_int_equal(r.plan.ev[1].leader, 0);
}

static void unknown_event_is_enoent_naming_it(void **state)
{
	struct pebs_opts o = loads_and_stores;
	struct child_result r;

	(void)state;
	o.event = "NO_SUCH_EVENT";
	r = plan_as("icx", "sysfs-pebs-icx", &o);
	assert_int_equal(r.ret, -ENOENT);
	assert_non_null(strstr(r.reason, "libpfm4 cannot encode NO_SUCH_EVENT: "));
}

static void hybrid_core_pmu_type_replaces_raw_type(void **state)
{
	struct child_result r = plan_as("spr", "sysfs-pebs-hybrid", &loads_and_stores);

	(void)state;
	/* cpu_core's type is 4 in the fixture, as on real parts; the aux leader shares it */
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.plan.ev[0].attr.type, 4);
	assert_string_equal(r.plan.ev[0].name, "cpu_core/mem-loads-aux/");
	assert_int_equal(r.plan.ev[1].attr.type, 4);
}

/* --- precise_ip probing against a fake kernel --- */

struct fake_kernel {
	int max_precise;
	int fail_err; /* if set, every open fails with it */
	int leader_err;
	int next_fd, open_fds, opens;
	int last_group_fd;
	int leader_fd_seen;
};

static int fake_open(void *ctx, const struct perf_event_attr *attr, int group_fd)
{
	struct fake_kernel *k = ctx;

	k->opens++;
	if (!attr->sample_period) { /* the aux leader */
		if (k->leader_err)
			return k->leader_err;
		k->open_fds++;
		k->leader_fd_seen = k->next_fd;
		return k->next_fd++;
	}
	k->last_group_fd = group_fd;
	if (k->fail_err)
		return k->fail_err;
	if ((int)attr->precise_ip > k->max_precise)
		return -EOPNOTSUPP;
	k->open_fds++;
	return k->next_fd++;
}

static void fake_close(void *ctx, int fd)
{
	struct fake_kernel *k = ctx;

	(void)fd;
	k->open_fds--;
}

static struct pebs_plan manual_plan(bool with_aux)
{
	struct pebs_plan p;
	int i = 0;

	memset(&p, 0, sizeof(p));
	if (with_aux) {
		p.ev[i].attr.config = 0x8203;
		p.ev[i].leader = -1;
		p.ev[i].sampling = false;
		snprintf(p.ev[i].name, sizeof(p.ev[i].name), "cpu/mem-loads-aux/");
		i++;
	}
	p.ev[i].attr.sample_period = 1000;
	p.ev[i].attr.precise_ip = 3;
	p.ev[i].leader = with_aux ? 0 : -1;
	p.ev[i].sampling = true;
	snprintf(p.ev[i].name, sizeof(p.ev[i].name), "loads");
	i++;
	p.ev[i].attr.sample_period = 1000;
	p.ev[i].attr.precise_ip = 3;
	p.ev[i].leader = -1;
	p.ev[i].sampling = true;
	snprintf(p.ev[i].name, sizeof(p.ev[i].name), "stores");
	p.n = i + 1;
	return p;
}

static void precise_ip_steps_down_to_what_the_kernel_accepts(void **state)
{
	struct fake_kernel k = {.max_precise = 2, .next_fd = 10};
	struct pebs_open_ops ops = {fake_open, fake_close, &k};
	struct pebs_plan p = manual_plan(true);
	char reason[PEBS_REASON_MAX] = "";

	(void)state;
	assert_int_equal(pebs_source_pick_precise(&p, &ops, reason, sizeof(reason)), 0);
	assert_int_equal(p.ev[1].attr.precise_ip, 2);
	assert_int_equal(p.ev[2].attr.precise_ip, 2);
	assert_int_equal(p.ev[0].attr.precise_ip, 0); /* the leader is never precise */
	assert_int_equal(k.open_fds, 0);	      /* every probe fd closed */
	assert_string_equal(reason, "");
	k.max_precise = 1;
	p = manual_plan(false);
	assert_int_equal(pebs_source_pick_precise(&p, &ops, reason, sizeof(reason)), 0);
	assert_int_equal(p.ev[0].attr.precise_ip, 1);
	assert_int_equal(k.last_group_fd, -1);
}

static void member_is_opened_in_the_leaders_group(void **state)
{
	struct fake_kernel k = {.max_precise = 3, .next_fd = 20};
	struct pebs_open_ops ops = {fake_open, fake_close, &k};
	struct pebs_plan p = manual_plan(true);

	(void)state;
	p.n = 2; /* aux + loads only */
	assert_int_equal(pebs_source_pick_precise(&p, &ops, NULL, 0), 0);
	assert_int_equal(k.last_group_fd, k.leader_fd_seen);
	assert_int_equal(k.opens, 2);
	assert_int_equal(p.ev[1].attr.precise_ip, 3);
}

static void refused_open_reports_event_precise_level_and_errno(void **state)
{
	struct fake_kernel k = {.max_precise = 3, .fail_err = -EACCES, .next_fd = 10};
	struct pebs_open_ops ops = {fake_open, fake_close, &k};
	struct pebs_plan p = manual_plan(false);
	char reason[PEBS_REASON_MAX] = "";

	(void)state;
	assert_int_equal(pebs_source_pick_precise(&p, &ops, reason, sizeof(reason)), -EACCES);
	assert_string_equal(reason, "perf_event_open loads precise_ip=3: Permission denied");
	assert_int_equal(k.opens, 1); /* not a precise problem: no retry */
	k = (struct fake_kernel){.max_precise = 0, .next_fd = 10};
	p = manual_plan(false);
	assert_int_equal(pebs_source_pick_precise(&p, &ops, reason, sizeof(reason)), -EOPNOTSUPP);
	assert_non_null(strstr(reason, "loads precise_ip=1: "));
	assert_int_equal(k.opens, 3);
}

static void refused_leader_is_named(void **state)
{
	struct fake_kernel k = {.max_precise = 3, .leader_err = -ENOENT, .next_fd = 10};
	struct pebs_open_ops ops = {fake_open, fake_close, &k};
	struct pebs_plan p = manual_plan(true);
	char reason[PEBS_REASON_MAX] = "";

	(void)state;
	assert_int_equal(pebs_source_pick_precise(&p, &ops, reason, sizeof(reason)), -ENOENT);
	assert_non_null(strstr(reason, "perf_event_open cpu/mem-loads-aux/"));
	assert_non_null(strstr(reason, "No such file or directory"));
	assert_int_equal(k.open_fds, 0);
}

/* --- data_src as the kernel's PEBS load-latency tables build it --- */

static void pebs_data_sources_map_to_levels(void **state)
{
	(void)state;
	/* 0x00 SNB+: unknown L3 miss */
	assert_int_equal(mem_src_level(P(OP, LOAD) | P(LVL, MISS) | LEVEL(L3) | P(SNOOP, NA)),
			 MEM_SRC_UNKNOWN);
	/* 0x01 L1, 0x02 LFB, 0x04 L3 hit */
	assert_int_equal(mem_src_level(OP_LH | P(LVL, L1) | LEVEL(L1) | P(SNOOP, NONE)),
			 MEM_SRC_CACHE);
	assert_int_equal(mem_src_level(OP_LH | P(LVL, LFB) | LEVEL(LFB) | P(SNOOP, NONE)),
			 MEM_SRC_CACHE);
	assert_int_equal(mem_src_level(OP_LH | P(LVL, L3) | LEVEL(L3) | P(SNOOP, HIT)),
			 MEM_SRC_CACHE);
	/* 0x0c SNB: L3 miss, local DRAM; 0x0d remote DRAM */
	assert_int_equal(mem_src_level(OP_LH | P(LVL, LOC_RAM) | LEVEL(RAM) | P(SNOOP, MISS)),
			 MEM_SRC_LOCAL_RAM);
	assert_int_equal(
	    mem_src_level(OP_LH | P(LVL, REM_RAM1) | LEVEL(RAM) | REM | P(SNOOP, MISS)),
	    MEM_SRC_REMOTE_RAM);
	/* SKL+ with PMEM (Ice Lake server): 0x08 local PMEM, 0x09 remote PMEM */
	assert_int_equal(mem_src_level(OP_LH | LEVEL(PMEM) | P(SNOOP, HIT)), MEM_SRC_PMEM);
	assert_int_equal(mem_src_level(OP_LH | LEVEL(PMEM) | REM | P(SNOOP, HIT)), MEM_SRC_PMEM);
	/* SKL+: 0x0b remote DRAM, 0x0c/0x0d remote cache forward/hitm */
	assert_int_equal(mem_src_level(OP_LH | LEVEL(RAM) | REM | P(SNOOP, NONE)),
			 MEM_SRC_REMOTE_RAM);
	assert_int_equal(mem_src_level(OP_LH | LEVEL(ANY_CACHE) | REM | P(SNOOP, HITM)),
			 MEM_SRC_CACHE);
	/* CXL (mem_lvl_num 0x9) */
	assert_int_equal(mem_src_level(OP_LH | LEVEL(CXL)), MEM_SRC_CXL);
	/* 0x0e I/O, 0x0f uncached */
	assert_int_equal(mem_src_level(OP_LH | P(LVL, IO) | LEVEL(NA) | P(SNOOP, NONE)),
			 MEM_SRC_IO);
	assert_int_equal(mem_src_level(OP_LH | P(LVL, UNC) | LEVEL(NA) | P(SNOOP, NONE)),
			 MEM_SRC_IO);
	/* precise stores: L1 hit is a cache, L1 miss says nothing */
	assert_int_equal(mem_src_level(P(OP, STORE) | P(LVL, L1) | P(LVL, HIT)), MEM_SRC_CACHE);
	assert_int_equal(mem_src_level(P(OP, STORE) | P(LVL, L1) | P(LVL, MISS)), MEM_SRC_UNKNOWN);
	assert_int_equal(mem_src_kind(P(OP, STORE) | P(LVL, L1) | P(LVL, HIT)), ACCESS_STORE);
	assert_int_equal(mem_src_kind(OP_LH | LEVEL(RAM)), ACCESS_LOAD);
}

static void converts_remote_dram_load_and_drops_local_dram(void **state)
{
	struct pebs_convert c;
	struct perf_sample s;
	struct access_event ev;

	(void)state;
	pebs_source_convert_init(&c, &loads_and_stores, NULL, NULL);
	memset(&s, 0, sizeof(s));
	s.present = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_CPU;
	s.pid = s.tid = 321;
	s.addr = 0x7f00deadb000;
	s.data_src = OP_LH | LEVEL(RAM) | REM | P(SNOOP, NONE);
	assert_int_equal(pebs_source_convert(&c, ACCESS_LOAD, &s, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.source, SRC_PEBS);
	assert_int_equal(ev.pid, 321);
	assert_true(ev.vaddr == 0x7f00deadb000);
	s.data_src = OP_LH | P(LVL, LOC_RAM) | LEVEL(RAM) | P(SNOOP, MISS);
	assert_int_equal(pebs_source_convert(&c, ACCESS_LOAD, &s, &ev), SAMPLE_DROP_NEAR_SOURCE);
	/* a store event whose DATA_SRC carries no op keeps the event's kind */
	s.data_src = P(OP, NA) | P(LVL, NA) | P(SNOOP, NA) | P(LOCK, NA) | P(TLB, NA);
	assert_int_equal(pebs_source_convert(&c, ACCESS_STORE, &s, &ev), SAMPLE_KEPT);
	assert_int_equal(ev.kind, ACCESS_STORE);
}

static void parses_cpu_lists(void **state)
{
	int cpus[8];

	(void)state;
	assert_int_equal(pebs_source_parse_cpulist("0-3,8,10-11\n", cpus, 8), 7);
	assert_int_equal(cpus[3], 3);
	assert_int_equal(cpus[4], 8);
	assert_int_equal(cpus[6], 11);
	assert_int_equal(pebs_source_parse_cpulist("0-15", cpus, 8), 16); /* counts past max */
	assert_int_equal(pebs_source_parse_cpulist("3-1", cpus, 8), -EINVAL);
	assert_int_equal(pebs_source_parse_cpulist("a", cpus, 8), -EINVAL);
	assert_int_equal(pebs_source_parse_cpulist("1;2", cpus, 8), -EINVAL);
}

/* --- the running source on perf_sampler, faked syscalls, spr forced in a child --- */

struct opened {
	int n;
	struct {
		uint64_t config, config1, period;
		int precise, group_fd, fd, cpu;
	} ev[8];
	int ret;
	int active_after_start, active_after_stop, maps_left;
	uint64_t period;
	char reason[PEBS_REASON_MAX];
};

static struct opened *rec;
static int maps;

static int sys_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	(void)ctx, (void)pid;
	if (rec->n < 8) {
		rec->ev[rec->n].config = attr->config;
		rec->ev[rec->n].config1 = attr->config1;
		rec->ev[rec->n].period = attr->sample_period;
		rec->ev[rec->n].precise = (int)attr->precise_ip;
		rec->ev[rec->n].group_fd = group_fd;
		rec->ev[rec->n].fd = fd;
		rec->ev[rec->n].cpu = cpu;
		rec->n++;
	}
	return fd;
}

static int sys_mmap(void *ctx, int fd, size_t len, void **out)
{
	struct perf_event_mmap_page *m = aligned_alloc(4096, len);

	(void)ctx, (void)fd;
	if (!m)
		return -ENOMEM;
	memset(m, 0, len);
	m->data_offset = 4096;
	m->data_size = len - 4096;
	maps++;
	*out = m;
	return 0;
}

static void sys_munmap(void *ctx, void *addr, size_t len)
{
	(void)ctx, (void)len;
	maps--;
	free(addr);
}

static int sys_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	(void)ctx, (void)fd, (void)req, (void)arg;
	return 0;
}

static void sys_close(void *ctx, int fd)
{
	(void)ctx;
	close(fd);
}

static int sys_getrlimit(void *ctx, struct rlimit *out)
{
	(void)ctx;
	out->rlim_cur = out->rlim_max = 65536;
	return 0;
}

static int sys_setrlimit(void *ctx, const struct rlimit *in)
{
	(void)ctx, (void)in;
	return 0;
}

static void discard(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	(void)ctx, (void)cfg, (void)ev, (void)n;
}

static void run_start_in_child(const char *fixture, struct opened *res)
{
	const struct perf_sampler_ops ops = {sys_open,	sys_mmap,      sys_munmap,    sys_ioctl,
					     sys_close, sys_getrlimit, sys_setrlimit, NULL};
	struct fake_kernel k = {.max_precise = 2, .next_fd = 500};
	struct pebs_open_ops probe = {fake_open, fake_close, &k};
	struct pghotd_config *cfg = NULL;
	struct pebs_source *src = NULL;
	struct pebs_source_params p;
	struct stats st;
	char root[PATH_MAX];
	static const int cpus[] = {1};

	rec = res;
	setenv("LIBPFM_FORCE_PMU", "spr", 1);
	if (config_new_defaults(&cfg) < 0)
		_exit(2);
	cfg->sources.pebs.stores = true;
	cfg->sources.pebs.ldlat = 64;
	stats_init(&st, 1);
	fixture_root(fixture, root, sizeof(root));
	memset(&p, 0, sizeof(p));
	p.sysfs_root = root;
	p.cfg = cfg;
	p.probe = &probe;
	p.sampler = (struct perf_sampler_params){.ring_pages = 1,
						 .drain_interval_ms = 1000,
						 .cpus = cpus,
						 .nr_cpus = 1,
						 .pid = -1,
						 .page_size = 4096,
						 .stats = &st,
						 .sink = {discard, NULL},
						 .cfg = cfg,
						 .ops = &ops};
	res->ret = pebs_source_start(&p, &src, res->reason, sizeof(res->reason));
	res->active_after_start = (int)st.src_active[SRC_PEBS];
	if (src) {
		res->period = pebs_source_period(src);
		pebs_source_stop(src);
	}
	res->active_after_stop = (int)st.src_active[SRC_PEBS];
	res->maps_left = maps;
	config_free(cfg);
}

static void start_opens_aux_led_group_with_probed_precision(void **state)
{
	struct opened res;
	int fds[2], status;
	pid_t pid;

	(void)state;
	memset(&res, 0, sizeof(res));
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		run_start_in_child("sysfs-pebs-spr", &res);
		_exit(write(fds[1], &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &res, sizeof(res)), (int)sizeof(res));
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	assert_int_equal(res.ret, 0);
	assert_int_equal(res.n, 3);
	/* aux leader first, alone; then loads and stores in its group, on CPU 1 */
	assert_true(res.ev[0].config == 0x8203);
	assert_int_equal(res.ev[0].group_fd, -1);
	assert_true(res.ev[0].period == 0);
	assert_true(res.ev[1].config == 0x1cd);
	assert_true(res.ev[1].config1 == 64);
	assert_int_equal(res.ev[1].group_fd, res.ev[0].fd);
	assert_int_equal(res.ev[1].precise, 2); /* what the fake kernel accepts */
	assert_true(res.ev[1].period == 1000);
	assert_true(res.ev[2].config == 0x82d0);
	assert_int_equal(res.ev[2].group_fd, res.ev[0].fd);
	assert_int_equal(res.ev[2].cpu, 1);
	assert_true(res.period == 1000);
	assert_int_equal(res.active_after_start, 1);
	assert_int_equal(res.active_after_stop, 0);
	assert_int_equal(res.maps_left, 0);
}

/* --- without libpfm4 --- */

static void without_libpfm4_source_is_unavailable_with_the_loaders_reason(void **state)
{
	struct pfm_lib missing;
	struct pghotd_config *cfg = NULL;
	struct pebs_source *src = NULL;
	struct pebs_source_params p;
	struct stats st;
	char root[PATH_MAX], reason[PEBS_REASON_MAX] = "";

	(void)state;
	assert_int_equal(pfm_lib_open("libpfm-pghotd-test-missing.so.4", &missing), -ENOENT);
	assert_int_equal(config_new_defaults(&cfg), 0);
	stats_init(&st, 1);
	fixture_root("sysfs-pebs-spr", root, sizeof(root));
	memset(&p, 0, sizeof(p));
	p.sysfs_root = root;
	p.cfg = cfg;
	p.pfm = &missing;
	p.sampler = (struct perf_sampler_params){.stats = &st, .cfg = cfg};
	assert_int_equal(pebs_source_start(&p, &src, reason, sizeof(reason)), -ENODEV);
	assert_null(src);
	assert_string_equal(reason, missing.why);
	assert_non_null(strstr(reason, "cannot load libpfm4: libpfm-pghotd-test-missing.so.4: "));
	assert_int_equal((int)st.src_active[SRC_PEBS], 0);
	config_free(cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_plain_cpu_pmu_without_aux),
	    cmocka_unit_test(reads_mem_loads_aux_encoding),
	    cmocka_unit_test(hybrid_part_uses_cpu_core_and_its_cpus),
	    cmocka_unit_test(missing_mem_loads_is_enodev_with_reason),
	    cmocka_unit_test(malformed_aux_event_is_einval),
	    cmocka_unit_test(icx_loads_and_stores_without_aux_leader),
	    cmocka_unit_test(spr_load_latency_is_led_by_mem_loads_aux),
	    cmocka_unit_test(ldlat_from_config_reaches_config1),
	    cmocka_unit_test(explicit_event_overrides_the_choice),
	    cmocka_unit_test(unknown_event_is_enoent_naming_it),
	    cmocka_unit_test(hybrid_core_pmu_type_replaces_raw_type),
	    cmocka_unit_test(precise_ip_steps_down_to_what_the_kernel_accepts),
	    cmocka_unit_test(member_is_opened_in_the_leaders_group),
	    cmocka_unit_test(refused_open_reports_event_precise_level_and_errno),
	    cmocka_unit_test(refused_leader_is_named),
	    cmocka_unit_test(pebs_data_sources_map_to_levels),
	    cmocka_unit_test(converts_remote_dram_load_and_drops_local_dram),
	    cmocka_unit_test(parses_cpu_lists),
	    cmocka_unit_test(start_opens_aux_led_group_with_probed_precision),
	    cmocka_unit_test(without_libpfm4_source_is_unavailable_with_the_loaders_reason),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
