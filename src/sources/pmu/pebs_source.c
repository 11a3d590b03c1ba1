/* pebs_source: see pebs_source.h. */
#include "sources/pmu/pebs_source.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/fileio.h"
#include "sources/perf/perf_sample.h"
#include "sources/perf/period_ctl.h"
#include "sources/pmu/pfm_lib.h"

#define PMU_DIR "bus/event_source/devices"

/* "event=0x03,umask=0x82" -> 0x8203. Other terms are not expected for this event. */
static int parse_event_term(const char *s, uint64_t *config)
{
	unsigned long ev = 0, umask = 0;
	char *copy = strdup(s), *save = NULL;
	int r = 0, seen = 0;

	if (!copy)
		return -ENOMEM;
	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *end;

		if (!strncmp(t, "event=", 6)) {
			ev = strtoul(t + 6, &end, 0);
			seen |= 1;
		} else if (!strncmp(t, "umask=", 6)) {
			umask = strtoul(t + 6, &end, 0);
		} else {
			r = -EINVAL;
			break;
		}
		if (*end || ev > 0xff || umask > 0xff)
			r = -EINVAL;
	}
	free(copy);
	if (r == 0 && !(seen & 1))
		r = -EINVAL;
	if (r == 0)
		*config = ev | umask << 8;
	return r;
}

static int read_type(const char *dir, int *type, char *reason, size_t size)
{
	char path[1024], buf[32], *end;
	long v;
	int r;

	snprintf(path, sizeof(path), "%s/type", dir);
	r = file_read_line(path, buf, sizeof(buf));
	if (r == 0) {
		errno = 0;
		v = strtol(buf, &end, 10);
		if (errno || end == buf || *end || v < 0 || v > 0x7fffffff)
			r = -EINVAL;
		else
			*type = (int)v;
	}
	if (r < 0 && reason)
		snprintf(reason, size, "unusable Intel core PMU (%s: %s)", path,
			 r == -EINVAL ? "unparsable content" : strerror(-r));
	return r == -ENOENT ? -ENODEV : r;
}

static int read_aux(const char *dir, struct pebs_pmu *p, char *reason, size_t size)
{
	char path[1024], buf[128];
	int r;

	snprintf(path, sizeof(path), "%s/events/mem-loads-aux", dir);
	r = file_read_line(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return 0;
	if (r == 0)
		r = parse_event_term(buf, &p->aux_config);
	if (r < 0) {
		if (reason)
			snprintf(reason, size, "unusable mem-loads-aux event (%s: %s)", path,
				 r == -EINVAL ? "unparsable content" : strerror(-r));
		return r;
	}
	p->has_aux = true;
	return 0;
}

int pebs_source_pmu_read(const char *sysfs_root, struct pebs_pmu *out, char *reason, size_t size)
{
	struct pebs_pmu p;
	char dir[768], path[1024];
	int r;

	memset(&p, 0, sizeof(p));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" PMU_DIR "/cpu_core", sysfs_root) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	p.hybrid = access(dir, F_OK) == 0;
	if (!p.hybrid)
		snprintf(dir, sizeof(dir), "%s/" PMU_DIR "/cpu", sysfs_root);
	snprintf(p.name, sizeof(p.name), "%s", p.hybrid ? "cpu_core" : "cpu");
	snprintf(path, sizeof(path), "%s/events/mem-loads", dir);
	if (access(path, F_OK) != 0) {
		r = -errno;
		if (reason)
			snprintf(reason, size, "no Intel %s PMU with mem-loads event (%s: %s)",
				 p.name, path, strerror(-r));
		return -ENODEV;
	}
	r = read_type(dir, &p.type, reason, size);
	if (r == 0)
		r = read_aux(dir, &p, reason, size);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/cpus", dir);
	if (p.hybrid && file_read_line(path, p.cpus, sizeof(p.cpus)) < 0)
		p.cpus[0] = '\0';
	*out = p;
	return 0;
}

/* libpfm4 for the model's encoding of name. *pfm_err gets its error code. */
static int encode(const struct pfm_ops *pfm, const char *name, struct perf_event_attr *attr,
		  char *fstr_out, size_t size, int *pfm_err)
{
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	int r = pfm->initialize();

	if (r == PFM_SUCCESS) {
		memset(attr, 0, sizeof(*attr));
		attr->size = sizeof(*attr);
		memset(&arg, 0, sizeof(arg));
		arg.attr = attr;
		arg.size = sizeof(arg);
		arg.fstr = &fstr;
		r = pfm->get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	}
	*pfm_err = r;
	if (r != PFM_SUCCESS)
		return -ENOENT;
	snprintf(fstr_out, size, "%s", fstr ? fstr : name);
	free(fstr);
	return 0;
}

/* What every sampling event asks for, on top of libpfm4's type/config/config1. */
static void sampling_fields(const struct pebs_pmu *pmu, const struct pebs_opts *o,
			    struct perf_event_attr *a)
{
	/* libpfm4 names the raw type; on hybrid parts only cpu_core's type reaches the P-cores */
	if (a->type == PERF_TYPE_RAW)
		a->type = (uint32_t)pmu->type;
	a->sample_period = o->period ? o->period : 1;
	a->freq = 0;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
	if (o->phys_addr)
		a->sample_type |= PERF_SAMPLE_PHYS_ADDR;
	a->precise_ip = 3;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->disabled = 1;
}

static int add_event(struct pebs_plan *p, const struct pebs_pmu *pmu, const struct pebs_opts *o,
		     const struct pfm_ops *pfm, const char *name, enum access_kind kind,
		     int *pfm_err)
{
	struct pebs_event *e = &p->ev[p->n];

	if (encode(pfm, name, &e->attr, e->name, sizeof(e->name), pfm_err) < 0)
		return -ENOENT;
	sampling_fields(pmu, o, &e->attr);
	e->leader = -1;
	e->sampling = true;
	e->kind = kind;
	p->n++;
	return 0;
}

/* Load latency is event 0xcd umask 0x01 on every model that has it. */
static bool is_load_latency(const struct perf_event_attr *a)
{
	return (a->config & 0xffff) == 0x01cd;
}

/* Where the kernel requires it (PMU_FL_MEM_LOADS_AUX), a load-latency event asking for
 * DATA_SRC fails with ENODATA unless the group is led by mem-loads-aux. The leader only
 * counts: PEBS on a non-sampling event is -EINVAL. */
static void add_aux_leader(struct pebs_plan *p, const struct pebs_pmu *pmu, int loads)
{
	struct pebs_event *e = &p->ev[p->n], *member = &p->ev[loads];

	memset(e, 0, sizeof(*e));
	e->attr.size = sizeof(e->attr);
	e->attr.type = member->attr.type;
	e->attr.config = pmu->aux_config;
	e->attr.exclude_kernel = member->attr.exclude_kernel;
	e->attr.exclude_hv = member->attr.exclude_hv;
	e->attr.exclude_guest = member->attr.exclude_guest;
	e->attr.disabled = 1;
	e->leader = -1;
	e->sampling = false;
	e->kind = ACCESS_UNKNOWN;
	snprintf(e->name, sizeof(e->name), "%s/mem-loads-aux/", pmu->name);
	member->leader = p->n;
	member->attr.disabled = 0; /* the leader enables the group */
	p->n++;
}

/* Moves the (non-sampling) aux leader to the front, as opening order requires. */
static void leader_first(struct pebs_plan *p)
{
	struct pebs_event aux;
	int a = 0;

	while (a < p->n && p->ev[a].sampling)
		a++;
	if (a == 0 || a == p->n)
		return;
	aux = p->ev[a];
	memmove(&p->ev[1], &p->ev[0], sizeof(p->ev[0]) * (size_t)a);
	p->ev[0] = aux;
	for (int i = 1; i < p->n; i++) {
		int l = p->ev[i].leader;

		if (l >= 0)
			p->ev[i].leader = l == a ? 0 : l < a ? l + 1 : l;
	}
}

int pebs_source_plan(const struct pebs_pmu *pmu, const struct pebs_opts *o, struct pebs_plan *out,
		     char *reason, size_t size)
{
	const struct pfm_lib *lib = o->pfm ? o->pfm : pfm_lib_get();
	const struct pfm_ops *pfm = &lib->ops;
	struct pebs_plan p;
	char name[PEBS_NAME_MAX];
	bool explicit = o->event && o->event[0];
	int err = 0;

	if (lib->err < 0) {
		if (reason)
			snprintf(reason, size, "%s", lib->why);
		return lib->err;
	}
	memset(&p, 0, sizeof(p));
	if (explicit)
		snprintf(name, sizeof(name), "%s", o->event);
	else
		snprintf(name, sizeof(name), PEBS_LOADS_EVENT ":ldlat=%u", o->ldlat);
	/* an explicit event's samples say their kind in DATA_SRC; count them as loads if not */
	if (add_event(&p, pmu, o, pfm, name, ACCESS_LOAD, &err) < 0) {
		if (reason)
			snprintf(reason, size, "libpfm4 cannot encode %s: %s", name,
				 pfm->strerror(err));
		return -ENOENT;
	}
	if (pmu->has_aux && is_load_latency(&p.ev[0].attr))
		add_aux_leader(&p, pmu, 0);
	if (!explicit && o->stores &&
	    add_event(&p, pmu, o, pfm, PEBS_STORES_EVENT, ACCESS_STORE, &err) < 0 && reason)
		snprintf(reason, size, "libpfm4 cannot encode %s: %s; sampling loads only",
			 PEBS_STORES_EVENT, pfm->strerror(err));
	leader_first(&p);
	*out = p;
	return 0;
}

static int real_open(void *ctx, const struct perf_event_attr *attr, int group_fd)
{
	int cpu = ctx ? *(const int *)ctx : 0;
	long fd = syscall(SYS_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static void real_close(void *ctx, int fd)
{
	(void)ctx;
	close(fd);
}

const struct pebs_open_ops pebs_open_real = {.open = real_open, .close = real_close};

/* Opens event i (and its leader) once; 0 or -errno. *what says which open failed. */
static int try_open(const struct pebs_plan *p, int i, const struct pebs_open_ops *ops,
		    const struct pebs_event **what)
{
	const struct pebs_event *e = &p->ev[i];
	int lfd = -1, fd;

	if (e->leader >= 0) {
		*what = &p->ev[e->leader];
		lfd = ops->open(ops->ctx, &p->ev[e->leader].attr, -1);
		if (lfd < 0)
			return lfd;
	}
	*what = e;
	fd = ops->open(ops->ctx, &e->attr, lfd);
	if (fd >= 0)
		ops->close(ops->ctx, fd);
	if (lfd >= 0)
		ops->close(ops->ctx, lfd);
	return fd < 0 ? fd : 0;
}

static int pick_one(struct pebs_plan *p, int i, const struct pebs_open_ops *ops, char *reason,
		    size_t size)
{
	const struct pebs_event *what = &p->ev[i];
	int r = -EOPNOTSUPP;

	for (int q = 3; q >= 1; q--) {
		p->ev[i].attr.precise_ip = (uint64_t)q & 3;
		r = try_open(p, i, ops, &what);
		if (r == 0)
			return 0;
		if (r != -EOPNOTSUPP && r != -EINVAL)
			break;
	}
	if (reason)
		snprintf(reason, size, "perf_event_open %s precise_ip=%u: %s", what->name,
			 (unsigned)what->attr.precise_ip, strerror(-r));
	return r;
}

int pebs_source_pick_precise(struct pebs_plan *p, const struct pebs_open_ops *ops, char *reason,
			     size_t size)
{
	for (int i = 0; i < p->n; i++) {
		int r;

		if (!p->ev[i].sampling)
			continue;
		r = pick_one(p, i, ops, reason, size);
		if (r < 0)
			return r;
	}
	return 0;
}

int pebs_source_available(const char *sysfs_root, char *reason, size_t size)
{
	struct pebs_pmu pmu;
	struct pebs_plan plan;
	struct pebs_opts o = {.period = 1000, .ldlat = 128};
	int r = pebs_source_pmu_read(sysfs_root, &pmu, reason, size);

	if (r < 0)
		return r == -EINVAL ? r : -ENODEV;
	r = pebs_source_plan(&pmu, &o, &plan, reason, size);
	return r < 0 ? -ENODEV : 0;
}

void pebs_source_convert_init(struct pebs_convert *c, const struct pebs_opts *o,
			      const struct topology *topo, struct stats *stats)
{
	memset(c, 0, sizeof(*c));
	pmu_filter_init(&c->filter, topo, stats, SRC_PEBS);
	c->phys_addr = o->phys_addr;
}

enum sample_drop pebs_source_convert(struct pebs_convert *c, enum access_kind kind,
				     const struct perf_sample *s, struct access_event *ev)
{
	struct sample_in in;

	sample_in_from_perf(s, kind, c->phys_addr, &in);
	return pmu_filter_apply(&c->filter, &in, ev);
}

int pebs_source_parse_cpulist(const char *s, int *out, int max)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;

		if (end == s || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return -EINVAL;
		}
		for (long c = a; c <= b && c < 1 << 22; c++, n++)
			if (n < max)
				out[n] = (int)c;
		if (*end == ',')
			end++;
		else if (*end && *end != '\n')
			return -EINVAL;
		else if (*end == '\n')
			break;
		s = end;
	}
	return n;
}

/* --- the running source --- */

struct pebs_source {
	struct perf_source ps; /* first: perf_source_launch */
	struct pebs_convert conv;
	enum access_kind fallback;
	int *cpus;
};
static_assert(offsetof(struct pebs_source, ps) == 0, "perf_source_launch finds ps at ctx");

static bool pebs_convert_cb(void *ctx, const struct perf_event_header *h,
			    const struct perf_sample *s, struct access_event *out)
{
	struct pebs_source *src = ctx;

	(void)h;
	return pebs_source_convert(&src->conv, src->fallback, s, out) == SAMPLE_KEPT;
}

/* The samples' kind when DATA_SRC has no op: the one sampling event's, or unknown when
 * loads and stores share the source (the kernel sets the op for both in practice). */
static enum access_kind plan_fallback(const struct pebs_plan *plan)
{
	enum access_kind k = ACCESS_UNKNOWN;
	int n = 0;

	for (int i = 0; i < plan->n; i++)
		if (plan->ev[i].sampling) {
			k = plan->ev[i].kind;
			n++;
		}
	return n == 1 ? k : ACCESS_UNKNOWN;
}

static int source_from_plan(const struct pebs_plan *plan, struct pebs_source *src,
			    struct perf_sampler_source *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (plan->n > PERF_SAMPLER_MAX_EVENTS)
		return -E2BIG;
	ss->source = SRC_PEBS;
	ss->name = "pebs";
	ss->nr_events = plan->n;
	ss->leader = -1;
	for (int i = 0; i < plan->n; i++) {
		ss->attr[i] = plan->ev[i].attr;
		if (!plan->ev[i].sampling)
			ss->leader = i;
	}
	ss->convert = pebs_convert_cb;
	ss->ctx = src;
	return 0;
}

/* Hybrid parts: cpu_core's events exist only on its CPUs. */
static int pebs_cpus(const struct pebs_pmu *pmu, struct pebs_source *src,
		     struct perf_sampler_params *sp)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	int n, max = conf > 0 ? (int)conf : 1;

	if (sp->cpus || !pmu->cpus[0])
		return 0;
	src->cpus = calloc((size_t)max, sizeof(int));
	if (!src->cpus)
		return -ENOMEM;
	n = pebs_source_parse_cpulist(pmu->cpus, src->cpus, max);
	if (n <= 0)
		return -EINVAL;
	sp->cpus = src->cpus;
	sp->nr_cpus = n < max ? n : max;
	return 0;
}

static int pebs_prepare(const struct pebs_source_params *p, struct pebs_source *src,
			struct perf_sampler_source *ss, struct perf_sampler_params *sp,
			char *reason, size_t size)
{
	struct pebs_opts o = {.period = p->cfg->sources.pebs.period,
			      .ldlat = p->cfg->sources.pebs.ldlat,
			      .stores = p->cfg->sources.pebs.stores,
			      .event = p->cfg->sources.pebs.event,
			      .phys_addr = p->phys_addr,
			      .pfm = p->pfm};
	struct pebs_pmu pmu;
	struct pebs_plan plan;
	struct pebs_open_ops real = pebs_open_real;
	int r, probe_cpu;

	r = pebs_source_pmu_read(p->sysfs_root, &pmu, reason, size);
	if (r == 0)
		r = pebs_source_plan(&pmu, &o, &plan, reason, size);
	if (r < 0)
		return r == -EINVAL ? r : -ENODEV;
	r = pebs_cpus(&pmu, src, sp);
	if (r < 0) {
		snprintf(reason, size, "unusable CPU list of %s: \"%s\"", pmu.name, pmu.cpus);
		return r;
	}
	/* probe where the events will run: the first CPU of a hybrid part's core PMU */
	probe_cpu = sp->cpus ? sp->cpus[0] : 0;
	real.ctx = &probe_cpu;
	r = pebs_source_pick_precise(&plan, p->probe ? p->probe : &real, reason, size);
	if (r < 0)
		return r;
	pebs_source_convert_init(&src->conv, &o, p->topo, NULL);
	src->fallback = plan_fallback(&plan);
	period_ctl_init(&src->ps.ctl, o.period, 0, p->cfg->sources.cpu_budget_percent,
			PERIOD_RULES_ANY);
	r = source_from_plan(&plan, src, ss);
	if (r < 0)
		snprintf(reason, size, "too many events (%d)", plan.n);
	return r;
}

int pebs_source_start(const struct pebs_source_params *p, struct pebs_source **out, char *reason,
		      size_t size)
{
	struct perf_sampler_source ss;
	struct perf_sampler_params sp = p->sampler;
	struct pebs_source *src = calloc(1, sizeof(*src));
	int r;

	if (!src) {
		snprintf(reason, size, "out of memory");
		return -ENOMEM;
	}
	if (!sp.ring_pages)
		sp.ring_pages = p->cfg->sources.pebs.ring_pages;
	r = pebs_prepare(p, src, &ss, &sp, reason, size);
	if (r == 0)
		r = perf_source_launch(&src->ps, &ss, &sp, reason, size);
	if (r < 0) {
		pebs_source_stop(src);
		return r;
	}
	*out = src;
	return 0;
}

void pebs_source_stop(struct pebs_source *s)
{
	if (!s)
		return;
	perf_source_stop(&s->ps);
	free(s->cpus);
	free(s);
}

uint64_t pebs_source_period(const struct pebs_source *s)
{
	return s->ps.ctl.period;
}

/* --- the source interface (sources/source.h) --- */

static int pebs_start_on(const struct source_deps *d, const struct pghotd_config *cfg,
			 const struct perf_sampler_params *sp, struct perf_source **out,
			 char *reason, size_t size)
{
	struct pebs_source *s;
	int r = pebs_source_start(&(struct pebs_source_params){.sysfs_root = d->sysfs_root,
							       .cfg = cfg,
							       .topo = d->topo,
							       .phys_addr = d->phys_addr,
							       .sampler = *sp},
				  &s, reason, size);

	if (r == 0)
		*out = &s->ps;
	return r;
}

static int pebs_ops_start(const struct source_deps *d, void **out)
{
	return perf_source_ops_start(d, SRC_PEBS, pebs_start_on, out);
}

static void pebs_ops_stop(void *handle)
{
	pebs_source_stop(handle);
}

static int pebs_ops_trial(const struct source_deps *d, char *reason, size_t size)
{
	return perf_source_ops_trial(d, pebs_start_on, pebs_ops_stop, reason, size);
}

const struct source_ops pebs_source_ops = {
    .id = SRC_PEBS,
    .start = pebs_ops_start,
    .stop = pebs_ops_stop,
    .trial = pebs_ops_trial,
    .restart_prefix = "sources.pebs.",
    .pmu = true,
};
