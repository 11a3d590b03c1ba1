/* probe: facts from sysfs/procfs, then verdicts (see probe.h for the contract). */
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_sysfs.h"
#include "base/fileio.h"
#include "daemon/probe.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PMU_DIR "bus/event_source/devices"
/* procfs status is a few KiB; values files are a line. */
#define PROBE_BUF 8192

/* NUMA_BALANCING_MEMORY_TIERING in kernel/sched: the kernel's own slow-tier promotion. */
#define NUMAB_TIERING 2

static int probe_path(struct probe_file *f, const char *root, const char *rel)
{
	int n = snprintf(f->path, sizeof(f->path), "%s/%s", root, rel);

	return n < 0 || (size_t)n >= sizeof(f->path) ? -ENAMETOOLONG : 0;
}

/* Records whether root/rel exists. */
static int probe_exists(struct probe_file *f, const char *root, const char *rel)
{
	struct stat st;
	int r = probe_path(f, root, rel);

	if (r < 0)
		return r;
	f->err = stat(f->path, &st) < 0 ? -errno : 0;
	return 0;
}

/* Reads root/rel into buf (NUL-terminated), recording the outcome in f->err. */
static int probe_read(struct probe_file *f, const char *root, const char *rel, char *buf,
		      size_t size)
{
	int r = probe_path(f, root, rel);

	if (r < 0)
		return r;
	r = file_read_small(f->path, buf, size);
	f->err = r < 0 ? r : 0;
	if (r < 0)
		buf[0] = '\0';
	return 0;
}

/* Pure: a whole-file decimal int such as "2\n" or "-1\n". */
static int probe_parse_int(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || v < INT_MIN || v > INT_MAX)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end != '\0')
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Pure: CapEff from a /proc/PID/status text. */
static int probe_parse_capeff(const char *status, uint64_t *out)
{
	const char *p = strstr(status, "\nCapEff:");
	char *end;
	uint64_t v;

	if (!p)
		return -EINVAL;
	p += strlen("\nCapEff:");
	while (*p == ' ' || *p == '\t')
		p++;
	if (!isxdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	v = strtoull(p, &end, 16);
	if (errno != 0 || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	*out = v;
	return 0;
}

static int probe_read_int(struct probe_file *f, const char *root, const char *rel, int *out)
{
	char buf[64];
	int r = probe_read(f, root, rel, buf, sizeof(buf));

	if (r < 0)
		return r;
	if (f->err == 0)
		f->err = probe_parse_int(buf, out);
	return 0;
}

static int probe_gather_pmus(const struct probe_env *env, struct probe_facts *f)
{
	struct probe_file core;
	int r;

	r = probe_exists(&f->ibs_pmu, env->sysfs_root, PMU_DIR "/ibs_op/type");
	if (r < 0)
		return r;
	r = probe_exists(&f->pebs_event, env->sysfs_root, PMU_DIR "/cpu/events/mem-loads");
	if (r < 0 || f->pebs_event.err == 0)
		return r;
	/* Hybrid parts name the big-core PMU cpu_core; report the plain path if neither is. */
	r = probe_exists(&core, env->sysfs_root, PMU_DIR "/cpu_core/events/mem-loads");
	if (r == 0 && core.err == 0)
		f->pebs_event = core;
	return r;
}

static int probe_gather_caps(const struct probe_env *env, struct probe_facts *f)
{
	char *buf = malloc(PROBE_BUF);
	int r;

	if (!buf)
		return -ENOMEM;
	r = probe_read(&f->status_file, env->procfs_root, "self/status", buf, PROBE_BUF);
	if (r == 0 && f->status_file.err == 0)
		f->status_file.err = probe_parse_capeff(buf, &f->cap_eff);
	if (f->status_file.err != 0)
		f->cap_eff = 0;
	free(buf);
	return r;
}

static int probe_gather_damon(const struct probe_env *env, struct probe_facts *f)
{
	int r = probe_exists(&f->damon_sysfs, env->sysfs_root, DAMON_ADMIN "/nr_kdamonds");

	if (r < 0)
		return r;
	r = damon_event_find(env->sysfs_root, f->damon_event.path, sizeof(f->damon_event.path));
	f->damon_event.err = r;
	if (f->damon_sysfs.err == 0)
		f->damon_busy = damon_sysfs_inspect(env->sysfs_root, env->procfs_root,
						    f->damon_busy_why, sizeof(f->damon_busy_why));
	return 0;
}

int probe_gather(const struct probe_env *env, struct probe_facts *out)
{
	struct probe_facts f = {.paranoid = INT_MAX, .numa_balancing = -1};
	int r;

	r = probe_gather_pmus(env, &f);
	if (r >= 0)
		r = probe_exists(&f.page_idle, env->sysfs_root, "kernel/mm/page_idle/bitmap");
	if (r >= 0)
		r = probe_read_int(&f.paranoid_file, env->procfs_root,
				   "sys/kernel/perf_event_paranoid", &f.paranoid);
	if (r >= 0)
		r = probe_read_int(&f.numa_balancing_file, env->procfs_root,
				   "sys/kernel/numa_balancing", &f.numa_balancing);
	if (r >= 0)
		r = probe_gather_caps(env, &f);
	if (r >= 0)
		r = probe_gather_damon(env, &f);
	if (r < 0)
		return r;
	if (f.numa_balancing_file.err != 0)
		f.numa_balancing = -1;
	*out = f;
	return 0;
}

static bool probe_has_cap(const struct probe_facts *f, int cap)
{
	return (f->cap_eff >> cap) & 1;
}

static void probe_set(struct probe_source *s, enum probe_state state, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void probe_set(struct probe_source *s, enum probe_state state, int err, const char *fmt, ...)
{
	va_list ap;

	s->state = state;
	s->err = err;
	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
}

/* "(path: error)" for a file that was not usable. */
static const char *probe_file_why(const struct probe_file *f, char *buf, size_t size)
{
	snprintf(buf, size, "(%s: %s)", f->path,
		 f->err == -EINVAL ? "unparsable content" : strerror(-f->err));
	return buf;
}

/* Per-CPU sampling (pid -1) is allowed to unprivileged tasks only at perf_event_paranoid
 * <= 0 (the kernel's perf_allow_cpu); CAP_PERFMON, or CAP_SYS_ADMIN before 5.8, lifts that. */
static void probe_perf_privilege(const struct probe_facts *f, struct probe_source *s)
{
	char why[PROBE_PATH_MAX + 64];

	if (probe_has_cap(f, PROBE_CAP_PERFMON) || probe_has_cap(f, PROBE_CAP_SYS_ADMIN))
		return;
	if (f->paranoid_file.err != 0)
		probe_set(s, PROBE_UNAVAILABLE, -EACCES,
			  "perf_event_paranoid unknown %s and no CAP_PERFMON or CAP_SYS_ADMIN",
			  probe_file_why(&f->paranoid_file, why, sizeof(why)));
	else if (f->paranoid > 0)
		probe_set(s, PROBE_UNAVAILABLE, -EACCES,
			  "perf_event_paranoid is %d (per-CPU sampling needs <= 0) and no "
			  "CAP_PERFMON or CAP_SYS_ADMIN (%s)",
			  f->paranoid, f->paranoid_file.path);
}

static void probe_decide_ibs(const struct probe_facts *f, struct probe_source *s)
{
	char why[PROBE_PATH_MAX + 64];

	if (f->ibs_pmu.err != 0) {
		probe_set(s, PROBE_UNAVAILABLE, -ENODEV, "no ibs_op PMU %s",
			  probe_file_why(&f->ibs_pmu, why, sizeof(why)));
		return;
	}
	probe_perf_privilege(f, s);
}

static void probe_decide_pebs(const struct probe_facts *f, struct probe_source *s)
{
	char why[PROBE_PATH_MAX + 64];

	if (f->pebs_event.err != 0) {
		probe_set(s, PROBE_UNAVAILABLE, -ENODEV, "no Intel cpu PMU with mem-loads event %s",
			  probe_file_why(&f->pebs_event, why, sizeof(why)));
		return;
	}
	probe_perf_privilege(f, s);
}

static void probe_decide_abit(const struct probe_facts *f, struct probe_source *s)
{
	char why[PROBE_PATH_MAX + 64];

	if (f->page_idle.err != 0)
		probe_set(s, PROBE_UNAVAILABLE, -ENODEV, "no page_idle %s",
			  probe_file_why(&f->page_idle, why, sizeof(why)));
	else if (!probe_has_cap(f, PROBE_CAP_SYS_ADMIN))
		probe_set(
		    s, PROBE_UNAVAILABLE, -EACCES,
		    "no CAP_SYS_ADMIN (pagemap hides PFNs without it and page_idle needs it)");
}

static void probe_decide_damon(const struct probe_facts *f, struct probe_source *s)
{
	char why[PROBE_PATH_MAX + 64];

	if (f->damon_sysfs.err != 0)
		probe_set(s, PROBE_UNAVAILABLE, -ENODEV, "no DAMON sysfs interface %s",
			  probe_file_why(&f->damon_sysfs, why, sizeof(why)));
	else if (f->damon_event.err != 0)
		probe_set(s, PROBE_UNAVAILABLE, -ENODEV,
			  "no damon:damon_aggregated tracepoint (is tracefs mounted?) %s",
			  probe_file_why(&f->damon_event, why, sizeof(why)));
	else if (!probe_has_cap(f, PROBE_CAP_SYS_ADMIN))
		probe_set(s, PROBE_UNAVAILABLE, -EACCES,
			  "no CAP_SYS_ADMIN (DAMON's sysfs, the tracepoint's raw samples and "
			  "pagemap PFNs need it)");
	else if (f->damon_busy < 0)
		probe_set(s, PROBE_UNAVAILABLE, f->damon_busy == -EBUSY ? -EBUSY : -ENODEV, "%s",
			  f->damon_busy_why);
}

static enum source_mode probe_mode(const struct pghotd_config *cfg, enum stat_source src)
{
	if (!cfg)
		return SOURCE_AUTO;
	switch (src) {
	case SRC_IBS:
		return cfg->sources.ibs.enabled;
	case SRC_PEBS:
		return cfg->sources.pebs.enabled;
	case SRC_ABIT:
		return cfg->sources.abit.enabled;
	case SRC_DAMON:
		return cfg->sources.damon.enabled;
	case SRC__COUNT:
		break;
	}
	return SOURCE_AUTO;
}

static void probe_decide_numab(const struct probe_facts *f, struct probe_result *r)
{
	char why[PROBE_PATH_MAX + 64];

	r->numa_balancing = f->numa_balancing_file.err == 0 ? f->numa_balancing : -1;
	r->numa_balancing_tiering = r->numa_balancing > 0 && (r->numa_balancing & NUMAB_TIERING);
	r->numa_balancing_note[0] = '\0';
	if (f->numa_balancing_file.err != 0)
		snprintf(r->numa_balancing_note, sizeof(r->numa_balancing_note), "%s",
			 probe_file_why(&f->numa_balancing_file, why, sizeof(why)));
}

static void probe_pass(struct probe_result *r, enum stat_source src, const char *why)
{
	probe_set(&r->source[src], PROBE_PASSED, 0, "%s", why);
	r->nr_available--;
}

/* `auto`'s order (probe.h): a PMU source makes an auto DAMON unneeded; of DAMON and page_idle
 * only one runs, page_idle unless DAMON is "on" and page_idle only "auto". */
static void probe_choose(const struct pghotd_config *cfg, struct probe_result *r)
{
	bool pmu = r->source[SRC_IBS].state == PROBE_AVAILABLE ||
		   r->source[SRC_PEBS].state == PROBE_AVAILABLE;
	enum source_mode damon = probe_mode(cfg, SRC_DAMON), abit = probe_mode(cfg, SRC_ABIT);

	if (r->source[SRC_DAMON].state != PROBE_AVAILABLE)
		return;
	if (damon == SOURCE_AUTO && pmu)
		probe_pass(r, SRC_DAMON,
			   "a PMU source runs: its samples name each page and cost no kernel "
			   "thread (auto order: PMU samples, page_idle, DAMON)");
	else if (r->source[SRC_ABIT].state == PROBE_AVAILABLE && abit == SOURCE_AUTO &&
		 damon == SOURCE_ON)
		probe_pass(r, SRC_ABIT,
			   "sources.damon is on: DAMON and page_idle both clear the Accessed bits, "
			   "so one of them runs");
	else if (r->source[SRC_ABIT].state == PROBE_AVAILABLE)
		probe_pass(
		    r, SRC_DAMON,
		    "page_idle runs: it sees each page, and both clear the Accessed bits, so "
		    "one of them runs");
}

/* The sources that run, and why: one line. */
static void probe_summarize(struct probe_result *r)
{
	const struct probe_source *s = r->source;
	char names[64] = "";
	const char *why;
	int n = 0;

	for (int i = 0; i < SRC__COUNT; i++)
		if (s[i].state == PROBE_AVAILABLE)
			n += snprintf(names + n, sizeof(names) - (size_t)n, "%s%s",
				      n ? " and " : "", stat_source_name((enum stat_source)i));
	if (!n) {
		r->choice[0] = '\0';
		return;
	}
	if (s[SRC_IBS].state == PROBE_AVAILABLE || s[SRC_PEBS].state == PROBE_AVAILABLE)
		why = "the CPU's samples name each page and cost no kernel thread";
	else if (s[SRC_ABIT].state == PROBE_AVAILABLE && s[SRC_DAMON].state == PROBE_PASSED)
		why = PROBE_WHY_ABIT_OVER_DAMON;
	else if (s[SRC_DAMON].state == PROBE_AVAILABLE && s[SRC_ABIT].state == PROBE_PASSED)
		why = "sources.damon is on";
	else if (s[SRC_DAMON].state == PROBE_AVAILABLE)
		why = PROBE_WHY_DAMON_ONLY;
	else
		why = "page_idle, page by page: the one Accessed-bit source here";
	snprintf(r->choice, sizeof(r->choice), "auto: %s: %s", names, why);
}

void probe_decide(const struct probe_facts *f, const struct pghotd_config *cfg,
		  const struct topology *t, struct probe_result *out)
{
	static void (*const decide[SRC__COUNT])(const struct probe_facts *,
						struct probe_source *) = {
	    [SRC_IBS] = probe_decide_ibs,
	    [SRC_PEBS] = probe_decide_pebs,
	    [SRC_ABIT] = probe_decide_abit,
	    [SRC_DAMON] = probe_decide_damon,
	};

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < SRC__COUNT; i++) {
		struct probe_source *s = &out->source[i];
		enum source_mode mode = probe_mode(cfg, (enum stat_source)i);

		s->required = mode == SOURCE_ON;
		if (mode == SOURCE_OFF) {
			s->state = PROBE_DISABLED;
			continue;
		}
		decide[i](f, s);
		out->nr_available += s->state == PROBE_AVAILABLE;
	}
	probe_choose(cfg, out);
	probe_summarize(out);
	probe_decide_numab(f, out);
	out->phys_addr = (f->paranoid_file.err == 0 && f->paranoid <= 1) ||
			 probe_has_cap(f, PROBE_CAP_PERFMON) ||
			 probe_has_cap(f, PROBE_CAP_SYS_ADMIN);
	out->nr_slow = t ? topology_nr_slow(t) : -1;
	out->nr_fast = t ? topology_nr_fast(t) : -1;
}

int probe_run(const struct probe_env *env, const struct topology *t,
	      const struct pghotd_config *cfg, struct probe_result *out)
{
	struct probe_facts *f = malloc(sizeof(*f));
	int r;

	if (!f)
		return -ENOMEM;
	r = probe_gather(env, f);
	if (r == 0)
		probe_decide(f, cfg, t, out);
	free(f);
	return r;
}

const char *probe_state_name(enum probe_state s)
{
	switch (s) {
	case PROBE_AVAILABLE:
		return "available";
	case PROBE_UNAVAILABLE:
		return "unavailable";
	case PROBE_DISABLED:
		return "disabled by config";
	case PROBE_PASSED:
		return "not chosen";
	}
	return "unknown";
}

static const char *probe_numab_mode_name(int mode)
{
	switch (mode) {
	case 0:
		return "off";
	case 1:
		return "NUMA balancing";
	case 2:
		return "memory tiering";
	case 3:
		return "NUMA balancing and memory tiering";
	}
	return "unrecognised";
}

static void probe_describe_source(const struct probe_result *r, int i, char *buf, size_t size)
{
	const struct probe_source *s = &r->source[i];
	const char *name = stat_source_name((enum stat_source)i);
	int n = snprintf(buf, size, "source %s: %s", name, probe_state_name(s->state));

	if (n < 0 || (size_t)n >= size ||
	    (s->state != PROBE_UNAVAILABLE && s->state != PROBE_PASSED))
		return;
	n += snprintf(buf + n, size - (size_t)n, ": %s", s->reason);
	if (s->required && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n,
			 "; sources.%s.enabled = on, so pghotd will not start", name);
}

static void probe_describe_numab(const struct probe_result *r,
				 void (*line)(void *ctx, const char *s), void *ctx)
{
	char buf[PROBE_REASON_MAX + 64];

	if (r->numa_balancing < 0)
		snprintf(buf, sizeof(buf), "numa balancing: unknown %s", r->numa_balancing_note);
	else
		snprintf(buf, sizeof(buf), "numa balancing: mode %d (%s)", r->numa_balancing,
			 probe_numab_mode_name(r->numa_balancing));
	line(ctx, buf);
	if (r->numa_balancing_tiering)
		line(ctx,
		     "warning: kernel.numa_balancing has memory tiering mode (2) set: the kernel "
		     "promotes the same slow-tier pages pghotd does; set it to 0");
	else if (r->numa_balancing > 0)
		/* Seen on Debian's 6.12, which turns mode 1 on at boot where two nodes have CPUs:
		 * it moved pages pghotd had placed on a fixed target back to their CPU's node,
		 * and from a memory-only node it moves every page used twice, a sweep's too. */
		line(ctx,
		     "warning: kernel.numa_balancing mode 1 is on: the kernel moves pages to the "
		     "node of the CPU that uses them, slow-tier pages and those pghotd placed "
		     "included; set it to 0");
}

void probe_describe(const struct probe_result *r, const struct topology *t,
		    void (*line)(void *ctx, const char *s), void *ctx)
{
	char buf[PROBE_REASON_MAX + 128];

	for (int i = 0; i < SRC__COUNT; i++) {
		probe_describe_source(r, i, buf, sizeof(buf));
		line(ctx, buf);
	}
	if (r->nr_available == 0)
		line(ctx, "no usable source: pghotd has no way to see memory accesses here");
	else
		line(ctx, r->choice);
	if (r->perf_sampling[0]) {
		snprintf(buf, sizeof(buf), "perf sampling: %s", r->perf_sampling);
		line(ctx, buf);
	}
	probe_describe_numab(r, line, ctx);
	if (t)
		topology_describe(t, line, ctx);
	else
		line(ctx, "tiers: unknown (topology not loaded)");
	if (r->nr_slow == 0)
		line(ctx,
		     "no slow tier: pghotd stays idle until one appears (reload to re-detect)");
}

int probe_check_required(const struct probe_result *r, enum stat_source *which)
{
	for (int i = 0; i < SRC__COUNT; i++) {
		const struct probe_source *s = &r->source[i];

		if (s->required && s->state == PROBE_UNAVAILABLE) {
			*which = (enum stat_source)i;
			return s->err;
		}
	}
	return 0;
}
