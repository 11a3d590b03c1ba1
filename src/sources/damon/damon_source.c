/* damon_source: the DAMON source's thread (see damon_source.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sys/vmas.h"
#include "base/clock.h"
#include "table/cold_list.h"
#include "sources/damon/damon_event.h"
#include "sources/damon/damon_feed.h"
#include "sources/damon/damon_heat.h"
#include "sources/damon/damon_pace.h"
#include "sources/damon/damon_regions.h"
#include "sources/damon/damon_source.h"
#include "sources/damon/damon_sysfs.h"
#include "sources/damon/damon_targets.h"
#include "sources/evidence.h"
#include "base/fileio.h"
#include "base/log.h"
#include "sys/pagemap.h"
#include "table/proc_filter.h"
#include "sys/procfs.h"
#include "table/procs.h"
#include "base/stats.h"
#include "sys/topology.h"

struct region_rec {
	struct damon_region r;
	uint64_t time_ns;
	struct damon_heat_span heat; /* its history (damon_heat_note()), noted before any feed */
};

struct damon_source {
	struct damon_source_deps d;
	struct damon_kdamond *kd;
	struct damon_event_format fmt;
	struct perf_sampler *smp;
	struct config_pub *pub;
	int slot;
	struct damon_targets ts;  /* in kdamond order */
	size_t pagemap_fd_max;	  /* pagemaps held open at most (damon_targets.h) */
	struct damon_attrs attrs; /* last written */
	struct damon_pace pace;
	unsigned factor, old_factor; /* the pace of the last commit, of the one before */
	bool refreshed;		     /* the last refresh committed (or had nothing to) */
	pid_t kpid;		     /* our kdamond's thread, 0 when not running */
	uint64_t kcpu_done_us;	     /* CPU of the kdamonds that ended */
	uint64_t kcpu_us;	     /* of the current one */
	struct region_rec *reg;
	size_t nreg;
	struct vmas vmas; /* a new target's maps (init_regions) */
	uint64_t next_refresh_ms;
	struct damon_cold_pass cold_pass;
	struct damon_cold_pass warm_pass; /* damon_warm_pass_due() */
	struct damon_aggr_size size;	  /* of the kdamond's regions, for oversized ones */
	struct damon_heats heats;	  /* the targets' regions' histories */
};

/* ---- processes -> targets ---------------------------------------------------------------- */

/* Selected, and large enough to be worth a target (DAMON_MIN_RSS_MIB: shells and short
 * commands would only make the target list churn, and each target costs regions). */
static bool selected(const struct damon_source *s, const struct pghotd_config *cfg, pid_t pid)
{
	struct proc_info info;

	if (pid == s->d.self_pid || proc_info_read(s->d.procfs_root, pid, &info) < 0)
		return false;
	return !info.kernel_thread && info.rss_bytes >= (uint64_t)DAMON_MIN_RSS_MIB << 20 &&
	       proc_filter_match(cfg, &info);
}

/* Where pid last ran, for the events' accessing CPU and node. */
static void target_cpu(const struct damon_source *s, const struct pghotd_config *cfg,
		       struct damon_target *t)
{
	procfs_last_cpu(s->d.procfs_root, t->p.pid, &t->p.cpu);
	t->p.node = cfg->topo ? topology_cpu_node(cfg->topo, t->p.cpu) : -1;
}

/* The selected processes (at most DAMON_MAX_TARGETS): those already targets first, in their
 * order, then the new ones. DAMON commits targets by position, each keeping the regions of
 * the one it replaces, so a stable order keeps every process's regions its own. */
static int list_targets(struct damon_source *s, const struct pghotd_config *cfg,
			struct damon_target **out, size_t *nout)
{
	pid_t *pids;
	size_t n, k = 0;
	struct damon_target *t;
	int r = procfs_list_pids(s->d.procfs_root, &pids, &n);

	if (r < 0)
		return r;
	t = calloc(n ? n : 1, sizeof(*t));
	for (size_t i = 0; t && i < n && k < DAMON_MAX_TARGETS; i++) {
		if (!selected(s, cfg, pids[i]))
			continue;
		t[k] = (struct damon_target){
		    .p = {.pid = pids[i]}, .fd = -1, .procfs_root = s->d.procfs_root};
		target_cpu(s, cfg, &t[k]);
		k++;
	}
	free(pids);
	if (!t)
		return -ENOMEM;
	/* Stable order: the pids that are targets already move to the front, in their order. */
	for (size_t i = 0, at = 0; i < s->ts.ntg; i++) {
		size_t j = damon_target_find(t, k, s->ts.tg[i].p.pid);

		if (j < k) {
			struct damon_target tmp = t[at];

			t[at] = t[j], t[j] = tmp;
			at++;
		}
	}
	*out = t;
	*nout = k;
	return 0;
}

static struct damon_attrs attrs_of(const struct pghotd_config *cfg, unsigned factor)
{
	struct pghotd_config v;

	damon_pace_view(cfg, factor, &v); /* the one place that paces the intervals */
	return (struct damon_attrs){.sample_us = v.sources.damon.sample_us,
				    .aggr_us = v.sources.damon.aggr_us,
				    .update_us = DAMON_UPDATE_US,
				    .min_regions = cfg->sources.damon.min_regions,
				    .max_regions = cfg->sources.damon.max_regions};
}

/* CPU microseconds of a thread from its /proc/PID/stat (utime + stime, fields 14 and 15). */
static int thread_cpu_us(const char *procfs_root, pid_t pid, uint64_t *out)
{
	struct procfs_stat st;
	long hz = sysconf(_SC_CLK_TCK);
	int r = procfs_read_stat(procfs_root, pid, &st);

	if (r < 0)
		return r;
	*out = (st.utime + st.stime) * 1000000ull / (unsigned long long)(hz > 0 ? hz : 100);
	return 0;
}

/* Follows our kdamond's thread (a new one after every start) and its CPU. */
static void kdamond_follow(struct damon_source *s)
{
	pid_t pid = 0;
	uint64_t us;
	int r = damon_sysfs_kdamond_pid(s->kd, &pid);

	if (r < 0 && r != -ESRCH)
		return; /* unread: keep following the one we know */
	if (r < 0)
		pid = 0;
	if (pid != s->kpid) {
		s->kcpu_done_us += s->kcpu_us;
		s->kcpu_us = 0;
		s->kpid = pid;
	}
	if (s->kpid && thread_cpu_us(s->d.procfs_root, s->kpid, &us) == 0)
		s->kcpu_us = us;
	if (s->d.stats)
		stats_set(s->d.stats, ST_DAMON_KDAMOND_CPU_US, s->kcpu_done_us + s->kcpu_us);
}

static int refresh_once(struct damon_source *s, const struct pghotd_config *cfg);

/* Lists the processes and commits a changed target set or changed intervals. A process
 * listed may exit before the commit, which the kernel then refuses: list again, a few times. */
static int refresh(struct damon_source *s, const struct pghotd_config *cfg)
{
	int r = 0;

	for (int i = 0; i < 3; i++) {
		r = refresh_once(s, cfg);
		if (r != -EINVAL && r != -ESRCH && r != -ENOENT)
			break;
	}
	if (r < 0)
		log_warning_errno(r, "damon: cannot set the targets of kdamond %u",
				  damon_sysfs_index(s->kd));
	s->refreshed = r == 0;
	return r;
}

static int range_cmp(const void *a, const void *b)
{
	const struct damon_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The regions of the targets new to the running kdamond (damon_regions.h): max_regions pieces
 * (a start's min_regions left hot units in 41 MiB regions of 4 GiB until a finer cut); and of the
 * targets marked to be cut again: their remembered spans in DAMON_ZOOM_PIECES each, the rest whole;
 * DAMON_INIT_REGIONS_MAX in all, the first targets first. A target whose maps cannot be read (it
 * exited: the commit will say so), or hold more than DAMON_CUT_VMAS_MAX VMAs, keeps DAMON's
 * regions. The ranges go to *buf (freed by the caller); NULL when there is none to give. */
static struct damon_ranges *init_regions(struct damon_source *s, const struct pghotd_config *cfg,
					 const struct damon_target *t, size_t n,
					 struct damon_range **buf)
{
	struct damon_ranges *init;
	struct damon_range three[3];
	size_t left = DAMON_INIT_REGIONS_MAX, used = 0;
	char path[PATH_MAX];

	*buf = NULL;
	if (!s->kpid || n == 0)
		return NULL; /* a start cuts every target itself */
	init = calloc(n, sizeof(*init));
	*buf = calloc(DAMON_INIT_REGIONS_MAX, sizeof(**buf));
	if (!init || !*buf) {
		free(init);
		free(*buf);
		*buf = NULL;
		return NULL;
	}
	for (size_t i = 0; i < n && left > 0; i++) {
		size_t j = damon_target_find(s->ts.tg, s->ts.ntg, t[i].p.pid), k;
		uint32_t want = cfg->sources.damon.max_regions;

		if (j < s->ts.ntg && !s->ts.tg[j].nzoom)
			continue;
		snprintf(path, sizeof(path), "%s/%d/maps", s->d.procfs_root, (int)t[i].p.pid);
		s->vmas.all = true;
		s->vmas.max = DAMON_CUT_VMAS_MAX;
		if (vmas_read_maps(&s->vmas, path) < 0)
			continue;
		k = damon_three_ranges(s->vmas.v, s->vmas.n, three);
		if (want > left)
			want = (uint32_t)left;
		if (j < s->ts.ntg) { /* cut again: the spans only */
			struct damon_target *o = &s->ts.tg[j];

			uint32_t pieces = damon_zoom_pieces(o->nzoom, left);

			qsort(o->zoom, o->nzoom, sizeof(o->zoom[0]), range_cmp);
			k = pieces ? damon_cut_spans(three, k, o->zoom, o->nzoom, pieces,
						     *buf + used, left)
				   : 0;
		} else {
			k = damon_cut_ranges(three, k, want, *buf + used, left);
		}
		init[i] = (struct damon_ranges){.r = *buf + used, .n = k};
		log_debug("damon: target %d cut into %zu regions", (int)t[i].p.pid, k);
		used += k, left -= k;
	}
	return init;
}

static int refresh_once(struct damon_source *s, const struct pghotd_config *cfg)
{
	uint64_t now_ms = clock_monotonic_ms();
	struct damon_attrs a;
	unsigned factor;
	struct damon_ranges *init;
	struct damon_range *ranges;
	struct damon_target *t;
	bool recut, added;
	size_t n;
	pid_t *pids;
	int r = list_targets(s, cfg, &t, &n);

	if (r < 0)
		return r;
	damon_targets_carry(&s->ts, t, n, now_ms, &recut, &added); /* the cuts' pace goes on */
	if (added)
		damon_pace_busy(&s->pace, now_ms); /* a new process: its hot data to find */
	factor = damon_pace_factor(&s->pace, cfg, now_ms);
	a = attrs_of(cfg, factor);
	if (damon_targets_same_pids(t, n, s->ts.tg, s->ts.ntg) &&
	    !memcmp(&a, &s->attrs, sizeof(a)) && (s->kpid || n == 0) && !recut) {
		for (size_t i = 0; i < n; i++) /* keep the open pagemaps, take the new CPUs */
			s->ts.tg[i].p.cpu = t[i].p.cpu, s->ts.tg[i].p.node = t[i].p.node;
		damon_targets_free(t, n);
		return 0;
	}
	pids = malloc((n ? n : 1) * sizeof(*pids));
	if (!pids) {
		damon_targets_free(t, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		pids[i] = t[i].p.pid;
	damon_heats_keep(&s->heats, pids, n);
	init = init_regions(s, cfg, t, n, &ranges);
	r = damon_sysfs_set_targets(s->kd, &a, pids, init, n);
	free(pids);
	free(init);
	free(ranges);
	if (r < 0) {
		damon_targets_free(t, n);
		return r;
	}
	damon_targets_switch(&s->ts, t, n, clock_monotonic_ns());
	s->attrs = a;
	s->old_factor = s->factor, s->factor = factor;
	if (s->d.stats)
		stats_set(s->d.stats, ST_DAMON_SAMPLE_US, a.sample_us);
	kdamond_follow(s);
	return 0;
}

/* ---- regions ------------------------------------------------------------------------------ */

static bool keep_region(void *ctx, const struct perf_event_header *h, const struct perf_sample *smp,
			struct access_event *out)
{
	struct damon_source *s = ctx;
	struct region_rec *rec;

	(void)h, (void)out;
	if (s->nreg == DAMON_REGIONS_DRAIN) {
		if (s->d.stats)
			stats_src_add(s->d.stats, SRC_DAMON, SS_SAMPLES_LOST, 1);
		return false;
	}
	rec = &s->reg[s->nreg];
	if (damon_event_decode(&s->fmt, smp->raw, smp->raw_size, &rec->r) < 0) {
		if (s->d.stats)
			stats_src_add(s->d.stats, SRC_DAMON, SS_MALFORMED, 1);
		return false;
	}
	rec->time_ns = smp->time;
	s->nreg++;
	return false;
}

/* The feed's context: the target whose region is fed, among the source's. */
struct feed_ctx {
	struct damon_source *s;
	struct damon_target *t;
};

/* Reads the pagemap of the target being fed, held open within s->pagemap_fd_max. */
static int target_pagemap(void *ctx, uint64_t vaddr, uint64_t *ent, size_t n)
{
	struct feed_ctx *c = ctx;
	struct damon_target *t = c->t;
	ssize_t got;

	damon_targets_fd_use(&c->s->ts, t, c->s->pagemap_fd_max);
	if (t->fd < 0) {
		t->fd = procfs_open_pagemap(t->procfs_root, t->p.pid);
		if (t->fd < 0)
			return t->fd;
	}
	got =
	    pread(t->fd, ent, n * sizeof(*ent), (off_t)(vaddr / PAGEMAP_PAGE_SIZE * sizeof(*ent)));
	if (got < 0)
		return -errno;
	return (int)((size_t)got / sizeof(*ent));
}

/* Notes every drained region in its process's history (damon_heat.h), in the order DAMON
 * reported them, into its record (not warm when it cannot be noted). The aggregation's
 * exposure is the view's (the pace the regions were counted at). */
static void regions_note(struct damon_source *s, const struct pghotd_config *cfg)
{
	for (size_t i = 0; i < s->nreg; i++) {
		struct region_rec *rec = &s->reg[i];
		struct damon_target *t = damon_targets_of(&s->ts, &rec->r, rec->time_ns, s->kpid);
		struct damon_heat *h = t ? damon_heats_of(&s->heats, t->p.pid) : NULL;

		rec->heat = (struct damon_heat_span){0};
		if (h)
			damon_heat_note(h, &rec->r, rec->time_ns, damon_aggr_span_ns(cfg),
					cfg->sources.damon.aggr_us, damon_region_hot(cfg, &rec->r),
					&rec->heat);
	}
}

/* Sets the feed's warm fields from the record at i. A warm region with warm neighbours on
 * both sides is inside data used broadly: its pages go up at the first warm pass. One at the
 * edge of such data (or of a drain) is where DAMON's regions straddle used and unused
 * memory, at random from one aggregation to the next: its pages must be warm at two passes.
 * One beside intense data (damon_heat_by_intense()) is not promoted for its warmth. */
static void region_warm(const struct damon_source *s, size_t i, struct damon_feed *f)
{
	const struct region_rec *rec = &s->reg[i];
	const struct region_rec *prev = i > 0 ? rec - 1 : NULL;
	const struct region_rec *next = i + 1 < s->nreg ? rec + 1 : NULL;

	f->warm = rec->heat.warm;
	f->warm_lo = rec->heat.warm_lo, f->warm_hi = rec->heat.warm_hi;
	f->warm_inside =
	    f->warm && damon_heat_inside(&rec->r, prev ? &prev->r : NULL, prev && prev->heat.warm,
					 next ? &next->r : NULL, next && next->heat.warm);
	f->by_intense = damon_heat_by_intense(&rec->heat, &rec->r, prev ? &prev->r : NULL,
					      prev && prev->heat.intense, next ? &next->r : NULL,
					      next && next->heat.intense);
}

/* What a drain's regions showed, for the debug log. */
struct drain_tally {
	uint64_t kib[3];	       /* regions in no sample, in some, hot */
	uint64_t warm_kib, inside_kib; /* warm, and of that between warm neighbours */
	bool warm_pass;
};

static void tally_add(struct drain_tally *d, const struct pghotd_config *cfg,
		      const struct damon_feed *f, const struct damon_region *r)
{
	uint64_t kib = (r->end - r->start) >> 10;

	d->kib[r->nr_accesses == 0 ? 0 : damon_region_hot(cfg, r) ? 2 : 1] += kib;
	d->warm_kib += f->warm ? kib : 0;
	d->inside_kib += f->warm_inside ? kib : 0;
	d->warm_pass |= f->warm_pass;
}

/* Feeds the drained regions under cfg at the last commit's pace; true when there was work:
 * hot regions had DAMON_PACE_BUSY_PAGES pages on slow nodes, or a region with some on one is
 * to be cut finer for the first time lately (data that turned hot inside a region mostly cold:
 * its pieces are best sampled at the configured pace). */
static bool feed_regions(struct damon_source *s, const struct pghotd_config *base, uint64_t now)
{
	/* A view of this drain's config: built first, and gone with the drain (its pointers are
	 * base's, which a reload frees once the thread passes its next quiescent point). */
	struct pghotd_config view;
	const struct pghotd_config *cfg = &view;
	uint64_t slow = 0, cuts = 0; /* slow hot pages fed, regions to cut with slow pages */
	struct feed_ctx fc = {.s = s};
	struct damon_feed f;

	damon_pace_view(base, s->factor ? s->factor : 1, &view);
	f = (struct damon_feed){.cfg = cfg,
				.pagemap = target_pagemap,
				.ctx = &fc,
				.sink = s->d.sink,
				.cold = cfg->demotion.enabled ? s->d.cold : NULL,
				.want = s->d.cold ? cold_list_wanted(s->d.cold) : 0,
				.now_ns = now,
				.stats = s->d.stats,
				.slow_hot = &slow,
				.first_thr = s->nreg ? evidence_first_threshold(cfg) : 0,
				.room = s->nreg && evidence_fast_room(cfg)};
	uint64_t budget = DAMON_PAGES_DRAIN, now_ms = now / 1000000;
	struct drain_tally tally = {0};
	uint32_t epoch = s->d.cold ? cold_list_epoch(s->d.cold) : 0;

	damon_cold_pass_due(&s->cold_pass, cfg, now_ms, epoch, f.want,
			    s->d.cold ? cold_list_len(s->d.cold) : 0);
	if (s->nreg)
		damon_warm_pass_due(&s->warm_pass, now_ms);
	regions_note(s, cfg);
	if (s->d.stats)
		stats_src_add(s->d.stats, SRC_DAMON, SS_SAMPLES, s->nreg);
	for (size_t i = 0; i < s->nreg; i++) {
		struct damon_target *t =
		    damon_targets_of(&s->ts, &s->reg[i].r, s->reg[i].time_ns, s->kpid);
		long r;

		if (!t)
			continue;
		fc.t = t;
		if (!t->p.proc && s->d.procs && damon_region_cold(cfg, &s->reg[i].r)) {
			int64_t h = procs_handle(s->d.procs, t->p.pid);
			t->p.proc = h > 0 ? (uint32_t)h : 0;
		}
		region_warm(s, i, &f);
		/* A span cut before and still remembered is no work for the pace: what its cuts
		 * left warm (the edges of hot data, the rest of it up already) would keep the
		 * pace busy. The size is counted for every region. */
		if ((damon_aggr_size_add(&s->size, cfg, &s->reg[i].r, s->reg[i].time_ns) ||
		     damon_region_zoom(&s->size, cfg, &s->reg[i].r, f.warm)) &&
		    damon_targets_mark_cut(&s->ts, t, &s->reg[i].r, now_ms))
			cuts += damon_feed_probe_slow(&f, &s->reg[i].r, DAMON_PROBE_PAGES);
		/* Ages counted at another pace than the view's are not read for cold pages. */
		f.cold_pass = damon_cold_pass_covers(&s->cold_pass, cfg, s->reg[i].time_ns) &&
			      (s->reg[i].time_ns >= s->ts.switch_ns || s->old_factor == s->factor);
		f.warm_pass = damon_cold_pass_covers(&s->warm_pass, cfg, s->reg[i].time_ns);
		tally_add(&tally, cfg, &f, &s->reg[i].r);
		r = damon_feed_region(&f, &t->p, &s->reg[i].r, budget);
		if (r > 0)
			budget -= (uint64_t)r;
		if (budget == 0)
			break;
	}
	log_debug(
	    "damon: %zu regions: %llu MiB idle, %llu used in some samples, %llu hot; "
	    "%llu warm (%llu inside warm data)%s; pace x%u; %llu slow hot pages, %llu cuts",
	    s->nreg, (unsigned long long)tally.kib[0] >> 10, (unsigned long long)tally.kib[1] >> 10,
	    (unsigned long long)tally.kib[2] >> 10, (unsigned long long)tally.warm_kib >> 10,
	    (unsigned long long)tally.inside_kib >> 10, tally.warm_pass ? ", a warm pass" : "",
	    s->factor ? s->factor : 1, (unsigned long long)slow, (unsigned long long)cuts);
	s->nreg = 0;
	return slow >= DAMON_PACE_BUSY_PAGES || cuts > 0;
}

static void on_drain(void *ctx, struct perf_sampler *smp, const struct perf_ring_counts *total)
{
	struct damon_source *s = ctx;
	const struct pghotd_config *cfg = perf_sampler_config(smp);
	uint64_t now = clock_monotonic_ns();

	(void)total;
	if (!cfg)
		return;
	if (feed_regions(s, cfg, now))
		damon_pace_busy(&s->pace, now / 1000000);
	/* A target to cut again is cut at once (a span at most every DAMON_RECUT_MS, a process
	 * every DAMON_RECUT_GAP_MS), a new pace taken at once (after a failed commit, at the next
	 * refresh). */
	if (now / 1000000 >= s->next_refresh_ms || damon_targets_recut_pending(&s->ts) ||
	    (s->refreshed && damon_pace_factor(&s->pace, cfg, now / 1000000) != s->factor)) {
		s->next_refresh_ms = now / 1000000 + DAMON_REFRESH_MS;
		refresh(s, cfg);
		kdamond_follow(s);
		/* Left marked only when the commit failed: not again before the pace allows. */
		damon_targets_recut_done(&s->ts, now / 1000000);
	}
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int open_events(struct damon_source *s, char *why, size_t size)
{
	struct perf_sampler_source src = {
	    .source = SRC_DAMON,
	    .name = "damon",
	    .nr_events = 1,
	    .attr = {{.type = PERF_TYPE_TRACEPOINT,
		      .config = s->fmt.id,
		      .sample_period = 1,
		      .sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME,
		      .use_clockid = 1,
		      .clockid = CLOCK_MONOTONIC}},
	    .leader = -1,
	    .convert = keep_region,
	    .on_drain = on_drain,
	    .ctx = s,
	    .keeps_samples = true};
	struct perf_sampler_params p = {.ring_pages = DAMON_RING_PAGES,
					.drain_interval_ms = 100,
					.pid = -1,
					.page_size = (size_t)sysconf(_SC_PAGESIZE),
					.stats = s->d.stats,
					.sink = s->d.sink,
					.pub = s->pub,
					.pub_slot = s->slot,
					.ops = s->d.ops};

	return perf_sampler_new(&src, &p, &s->smp, why, size);
}

/* A quarter of RLIMIT_NOFILE, within [8, DAMON_PAGEMAP_FDS_MAX] (damon_targets.h). */
static size_t pagemap_fd_max(void)
{
	uint64_t n = file_nofile_limit(DAMON_PAGEMAP_FDS_MAX * 4) / 4;

	return n < 8 ? 8 : n > DAMON_PAGEMAP_FDS_MAX ? DAMON_PAGEMAP_FDS_MAX : (size_t)n;
}

static const char *kernel_release(const struct damon_source_deps *d, struct utsname *u)
{
	if (d->kernel_release)
		return d->kernel_release;
	return uname(u) == 0 ? u->release : NULL;
}

int damon_source_new(const struct damon_source_deps *d, struct config_pub *pub,
		     struct damon_source **out, char *why, size_t size)
{
	struct utsname u;
	struct damon_source *s = calloc(1, sizeof(*s));
	int r = s ? 0 : -ENOMEM;

	if (r == 0) {
		s->d = *d;
		s->pub = pub;
		s->pace.fixed = !damon_pace_kernel_rescales(kernel_release(d, &u));
		s->pagemap_fd_max = pagemap_fd_max();
		s->slot = config_pub_register(pub);
		if (!s->d.self_pid)
			s->d.self_pid = getpid();
		s->reg = malloc(DAMON_REGIONS_DRAIN * sizeof(*s->reg));
		r = s->slot < 0 ? s->slot : s->reg ? 0 : -ENOMEM;
		if (r < 0)
			snprintf(why, size, "%s", strerror(-r));
	}
	if (r == 0) {
		r = damon_event_load(d->sysfs_root, &s->fmt);
		if (r < 0)
			snprintf(why, size,
				 "cannot read the damon:damon_aggregated tracepoint's format under "
				 "%s/kernel/tracing: %s",
				 d->sysfs_root, file_strerror(r));
	}
	if (r == 0)
		r = open_events(s, why, size);
	if (r == 0)
		r = damon_sysfs_claim(d->sysfs_root, d->procfs_root, &s->kd, why, size);
	if (r < 0) {
		log_warning("source damon: unavailable: %s", why);
		damon_source_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int damon_source_start(struct damon_source *s)
{
	/* The first targets before the thread runs: it takes over from here. */
	int r = refresh(s, config_pub_current(s->pub));

	if (r == 0)
		r = perf_sampler_start(s->smp);
	if (r < 0)
		return r;
	s->next_refresh_ms = clock_monotonic_ms() + DAMON_REFRESH_MS;
	if (s->d.stats)
		stats_source_active(s->d.stats, SRC_DAMON, 1);
	return 0;
}

void damon_source_stop(struct damon_source *s)
{
	if (!s)
		return;
	if (s->d.stats)
		stats_source_active(s->d.stats, SRC_DAMON, 0);
	if (s->smp)
		perf_sampler_stop(s->smp);
	if (s->kd) {
		kdamond_follow(s);
		damon_sysfs_release(s->kd);
		s->kd = NULL;
	}
}

void damon_source_free(struct damon_source *s)
{
	if (!s)
		return;
	damon_source_stop(s);
	if (s->smp)
		perf_sampler_free(s->smp);
	if (s->slot >= 0)
		config_pub_unregister(s->pub, s->slot);
	damon_targets_clear(&s->ts);
	damon_heats_free(&s->heats);
	vmas_free(&s->vmas);
	free(s->reg);
	free(s);
}

/* --- the source interface (sources/source.h) --- */

static int damon_ops_start(const struct source_deps *d, void **out)
{
	struct damon_source_deps dd = {.sysfs_root = d->sysfs_root,
				       .procfs_root = d->procfs_root,
				       .sink = d->sink,
				       .stats = d->stats,
				       .cold = d->cold,
				       .procs = d->procs};
	char why[SOURCE_REASON_MAX];
	struct damon_source *s;
	int r = damon_source_new(&dd, d->pub, &s, why, sizeof(why)); /* logs why not */

	if (r == 0) {
		r = damon_source_start(s);
		if (r < 0) {
			damon_source_free(s);
			log_error_errno(r, "cannot start the damon source");
		}
	}
	return source_start_result(d, r, s, out);
}

static void damon_ops_stop(void *handle)
{
	damon_source_free(handle);
}

const struct source_ops damon_source_ops = {
    .id = SRC_DAMON,
    .start = damon_ops_start,
    .stop = damon_ops_stop,
    .clears_accessed = true,
    .yields_to_pmu = true,
};
