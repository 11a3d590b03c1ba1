/* ibs_source: see ibs_source.h. */
#include "sources/pmu/ibs_source.h"
#include "sys/kernel_release.h"

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <sys/utsname.h>

#include "base/config.h"
#include "base/fileio.h"
#include "sources/perf/perf_sample.h"
#include "sources/perf/perf_sampler.h"
#include "sources/perf/period_ctl.h"

#define IBS_DIR "bus/event_source/devices/ibs_op"

/* "config:19", "config2:0" -> word/bit. Ranges ("config1:0-11") give their first bit. */
static int parse_format(const char *s, struct pmu_format_bit *out)
{
	int word = 0, n = 0;
	unsigned bit;

	if (strncmp(s, "config", 6) != 0)
		return -EINVAL;
	s += 6;
	if (*s == '1' || *s == '2')
		word = *s++ - '0';
	if (sscanf(s, ":%u%n", &bit, &n) != 1 || bit > 63 || (s[n] != '\0' && s[n] != '-'))
		return -EINVAL;
	out->present = true;
	out->word = word;
	out->bit = (int)bit;
	return 0;
}

static int read_format(const char *dir, const char *name, struct pmu_format_bit *out, char *reason,
		       size_t size)
{
	char path[1024], buf[64];
	int r;

	snprintf(path, sizeof(path), "%s/format/%s", dir, name);
	r = file_read_line(path, buf, sizeof(buf));
	if (r == -ENOENT)
		return 0; /* a feature the PMU lacks, not an error */
	if (r == 0)
		r = parse_format(buf, out);
	if (r < 0 && reason)
		snprintf(reason, size, "unusable ibs_op format (%s: %s)", path,
			 r == -EINVAL ? "unparsable content" : strerror(-r));
	return r;
}

static int read_type(const char *dir, int *type, char *reason, size_t size)
{
	char path[1024], buf[32], *end;
	long v;
	int r;

	snprintf(path, sizeof(path), "%s/type", dir);
	r = file_read_line(path, buf, sizeof(buf));
	if (r < 0) {
		if (reason)
			snprintf(reason, size, "no ibs_op PMU (%s: %s)", path, strerror(-r));
		return r == -ENOENT ? -ENODEV : r;
	}
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || *end || v < 0 || v > 0x7fffffff) {
		if (reason)
			snprintf(reason, size, "no ibs_op PMU (%s: unparsable content)", path);
		return -EINVAL;
	}
	*type = (int)v;
	return 0;
}

int ibs_source_pmu_read(const char *sysfs_root, struct ibs_pmu *out, char *reason, size_t size)
{
	struct ibs_pmu p;
	char dir[768], path[1024];
	int r;

	memset(&p, 0, sizeof(p));
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" IBS_DIR, sysfs_root) >= sizeof(dir))
		return -ENAMETOOLONG;
	r = read_type(dir, &p.type, reason, size);
	if (r == 0)
		r = read_format(dir, "cnt_ctl", &p.cnt_ctl, reason, size);
	if (r == 0)
		r = read_format(dir, "l3missonly", &p.l3missonly, reason, size);
	if (r == 0)
		r = read_format(dir, "swfilt", &p.swfilt, reason, size);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "%s/caps/zen4_ibs_extensions", dir);
	p.zen4 = access(path, F_OK) == 0;
	*out = p;
	return 0;
}

void ibs_source_read_cpu(struct ibs_pmu *pmu)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d, fam, model;

	if (!__get_cpuid(1, &a, &b, &c, &d))
		return;
	fam = (a >> 8) & 0xF;
	model = (a >> 4) & 0xF;
	if (fam == 0xF) {
		fam += (a >> 20) & 0xFF;
		model |= ((a >> 16) & 0xF) << 4;
	}
	pmu->cpu.family = fam;
	pmu->cpu.model = model;
	if (__get_cpuid(0x8000001B, &a, &b, &c, &d) && (a & 1))
		pmu->cpuid_caps = a;
#else
	(void)pmu;
#endif
}

int ibs_source_available(const char *sysfs_root, char *reason, size_t size)
{
	struct ibs_pmu p;
	int r = ibs_source_pmu_read(sysfs_root, &p, reason, size);

	return r == -ENOENT ? -ENODEV : r;
}

bool ibs_source_kernel_decodes(unsigned major, unsigned minor)
{
	return major > 6 || (major == 6 && minor >= 1);
}

bool ibs_source_ext_count(const struct ibs_pmu *pmu)
{
	return pmu->cpuid_caps & IBS_CAPS_OPCNTEXT;
}

static void set_format_bit(struct perf_event_attr *attr, const struct pmu_format_bit *f)
{
	__u64 *w = f->word == 0 ? &attr->config : f->word == 1 ? &attr->config1 : &attr->config2;

	*w |= 1ull << f->bit;
}

void ibs_source_build_attr(const struct ibs_pmu *pmu, const struct ibs_opts *o,
			   struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = (uint32_t)pmu->type;
	/* counting dispatched ops rather than cycles spreads samples over instructions */
	if (pmu->cnt_ctl.present)
		set_format_bit(attr, &pmu->cnt_ctl);
	if (o->l3_miss_only && pmu->l3missonly.present)
		set_format_bit(attr, &pmu->l3missonly);
	attr->sample_period = ibs_period_clamp(o->period, ibs_source_ext_count(pmu));
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
			    PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
	if (o->phys_addr)
		attr->sample_type |= PERF_SAMPLE_PHYS_ADDR;
	if (!ibs_source_kernel_decodes(o->kernel_major, o->kernel_minor))
		attr->sample_type |= PERF_SAMPLE_RAW;
	/* IBS counts every privilege level; only the 6.14+ software filter honours exclude_* */
	if (pmu->swfilt.present) {
		set_format_bit(attr, &pmu->swfilt);
		attr->exclude_kernel = 1;
		attr->exclude_hv = 1;
	}
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->disabled = 1;
}

void ibs_source_convert_init(struct ibs_convert *c, const struct ibs_pmu *pmu,
			     const struct ibs_opts *o, const struct topology *topo,
			     struct stats *stats)
{
	memset(c, 0, sizeof(*c));
	pmu_filter_init(&c->filter, topo, stats, SRC_IBS);
	c->cpu = pmu->cpu;
	c->use_raw = !ibs_source_kernel_decodes(o->kernel_major, o->kernel_minor);
	c->phys_addr = o->phys_addr;
}

/* Kernels before 6.1: everything from the registers in the RAW payload. */
static int from_raw(const struct ibs_convert *c, const struct perf_sample *s, struct sample_in *in)
{
	struct ibs_op_regs regs;
	struct ibs_op_sample op;

	if (!s->raw || ibs_raw_parse(s->raw, s->raw_size, &regs) < 0)
		return -EBADMSG;
	ibs_op_decode(&regs, &c->cpu, &op);
	memset(in, 0, sizeof(*in));
	in->pid = (pid_t)s->pid;
	in->tid = (pid_t)s->tid;
	in->cpu = (s->present & PERF_SAMPLE_CPU) ? (int)s->cpu : -1;
	in->time_ns = s->time;
	in->kind = op.kind;
	in->addr_valid = op.lin_valid;
	in->vaddr = op.vaddr;
	in->paddr = c->phys_addr ? op.paddr : 0;
	in->data_src = op.data_src;
	return 0;
}

enum sample_drop ibs_source_convert(struct ibs_convert *c, const struct perf_sample *s,
				    struct access_event *ev)
{
	struct sample_in in;

	if (c->use_raw) {
		if (from_raw(c, s, &in) < 0) {
			pmu_filter_count_drop(&c->filter, SAMPLE_DROP_MALFORMED);
			return SAMPLE_DROP_MALFORMED;
		}
	} else {
		/* IBS tags ops of every kind: the kind must come from the sample itself */
		sample_in_from_perf(s, ACCESS_UNKNOWN, c->phys_addr, &in);
	}
	return pmu_filter_apply(&c->filter, &in, ev);
}

/* --- the running source --- */

struct ibs_source {
	struct perf_source ps; /* first: perf_source_launch */
	struct ibs_convert conv;
};
static_assert(offsetof(struct ibs_source, ps) == 0, "perf_source_launch finds ps at ctx");

static bool ibs_convert_cb(void *ctx, const struct perf_event_header *h,
			   const struct perf_sample *s, struct access_event *out)
{
	struct ibs_source *src = ctx;

	(void)h;
	return ibs_source_convert(&src->conv, s, out) == SAMPLE_KEPT;
}

static int ibs_opts_from(const struct ibs_source_params *p, struct ibs_opts *o)
{
	struct utsname u;
	const char *rel = p->kernel_release;

	memset(o, 0, sizeof(*o));
	if (!rel) {
		if (uname(&u) < 0)
			return -errno;
		rel = u.release;
	}
	/* an unparsable release: assume an old kernel, RAW decoding works everywhere */
	if (kernel_release_version(rel, &o->kernel_major, &o->kernel_minor) < 0)
		o->kernel_major = o->kernel_minor = 0;
	o->period = p->cfg->sources.ibs.period;
	o->l3_miss_only = p->cfg->sources.ibs.l3_miss_only;
	o->phys_addr = p->phys_addr;
	return 0;
}

int ibs_source_start(const struct ibs_source_params *p, struct ibs_source **out, char *reason,
		     size_t size)
{
	struct perf_sampler_source ss;
	struct perf_sampler_params sp = p->sampler;
	struct ibs_source *src;
	struct ibs_pmu pmu;
	struct ibs_opts o;
	int r;

	r = ibs_source_pmu_read(p->sysfs_root, &pmu, reason, size);
	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	ibs_source_read_cpu(&pmu);
	r = ibs_opts_from(p, &o);
	if (r < 0) {
		snprintf(reason, size, "uname: %s", strerror(-r));
		return r;
	}
	src = calloc(1, sizeof(*src));
	if (!src) {
		snprintf(reason, size, "out of memory");
		return -ENOMEM;
	}
	/* the sampler counts drops in SS_SAMPLES_DROPPED itself: the filter gets no stats */
	ibs_source_convert_init(&src->conv, &pmu, &o, p->topo, NULL);
	period_ctl_init(&src->ps.ctl, o.period, 0, p->cfg->sources.cpu_budget_percent,
			ibs_period_rules(ibs_source_ext_count(&pmu)));
	memset(&ss, 0, sizeof(ss));
	ss.source = SRC_IBS;
	ss.name = "ibs";
	ss.nr_events = 1;
	ibs_source_build_attr(&pmu, &o, &ss.attr[0]);
	ss.leader = -1;
	ss.convert = ibs_convert_cb;
	ss.ctx = src;
	if (!sp.ring_pages)
		sp.ring_pages = p->cfg->sources.ibs.ring_pages;
	r = perf_source_launch(&src->ps, &ss, &sp, reason, size);
	if (r < 0) {
		ibs_source_stop(src);
		return r;
	}
	*out = src;
	return 0;
}

void ibs_source_stop(struct ibs_source *s)
{
	if (!s)
		return;
	perf_source_stop(&s->ps);
	free(s);
}

uint64_t ibs_source_period(const struct ibs_source *s)
{
	return s->ps.ctl.period;
}

/* --- the source interface (sources/source.h) --- */

static int ibs_start_on(const struct source_deps *d, const struct pghotd_config *cfg,
			const struct perf_sampler_params *sp, struct perf_source **out,
			char *reason, size_t size)
{
	struct ibs_source *s;
	int r = ibs_source_start(&(struct ibs_source_params){.sysfs_root = d->sysfs_root,
							     .cfg = cfg,
							     .topo = d->topo,
							     .phys_addr = d->phys_addr,
							     .sampler = *sp},
				 &s, reason, size);

	if (r == 0)
		*out = &s->ps;
	return r;
}

static int ibs_ops_start(const struct source_deps *d, void **out)
{
	return perf_source_ops_start(d, SRC_IBS, ibs_start_on, out);
}

static void ibs_ops_stop(void *handle)
{
	ibs_source_stop(handle);
}

static int ibs_ops_trial(const struct source_deps *d, char *reason, size_t size)
{
	return perf_source_ops_trial(d, ibs_start_on, ibs_ops_stop, reason, size);
}

const struct source_ops ibs_source_ops = {
    .id = SRC_IBS,
    .start = ibs_ops_start,
    .stop = ibs_ops_stop,
    .trial = ibs_ops_trial,
    .restart_prefix = "sources.ibs.",
    .pmu = true,
};
