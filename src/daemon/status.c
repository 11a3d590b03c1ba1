/* status: see status.h.
 *
 * The families read are named in tables (name, where the value goes), so a family the view
 * shows is one line here; a sample of a family not in the tables is ignored, and one missing
 * from the file reads as 0 (the families of an older daemon), except where the view says it
 * is missing (per-cgroup figures, pghotd's CPU time). */
#include "daemon/status.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A family and where its values go: an offset in the snapshot, a source or a cgroup. */
struct family_field {
	const char *name;
	size_t off;
};

/* Families with one value (several samples of one are summed: failures over reasons). */
static const struct family_field plain_families[] = {
    {"pghotd_up", offsetof(struct status_snap, up)},
    {"pghotd_start_time_seconds", offsetof(struct status_snap, start_time)},
    {"pghotd_cpu_seconds_total", offsetof(struct status_snap, cpu_s)},
    {"pghotd_damon_kdamond_cpu_seconds", offsetof(struct status_snap, kdamond_cpu_s)},
    {"pghotd_hot_pages", offsetof(struct status_snap, hot_pages)},
    {"pghotd_promotion_threshold", offsetof(struct status_snap, threshold)},
    {"pghotd_promote_failures_total", offsetof(struct status_snap, promote_failed)},
    {"pghotd_demote_failures_total", offsetof(struct status_snap, demote_failed)},
    {"pghotd_promote_rate_limited_total", offsetof(struct status_snap, promote_limited)},
    {"pghotd_demote_rate_limited_total", offsetof(struct status_snap, demote_limited)},
    {"pghotd_node_pauses_total", offsetof(struct status_snap, pauses)},
};

/* Families by node="N" (demotions summed over their reasons). */
static const struct family_field node_families[] = {
    {"pghotd_promoted_pages_total", offsetof(struct status_snap, promoted_pages)},
    {"pghotd_promoted_bytes_total", offsetof(struct status_snap, promoted_bytes)},
    {"pghotd_demoted_pages_total", offsetof(struct status_snap, demoted_pages)},
    {"pghotd_demoted_bytes_total", offsetof(struct status_snap, demoted_bytes)},
};

/* Families by source="NAME". */
static const struct family_field source_families[] = {
    {"pghotd_source_active", offsetof(struct status_source, active)},
    {"pghotd_samples_total", offsetof(struct status_source, samples)},
    {"pghotd_samples_lost_total", offsetof(struct status_source, lost)},
    {"pghotd_pages_scanned_total", offsetof(struct status_source, scanned)},
    {"pghotd_source_scan_round_seconds", offsetof(struct status_source, scan_round_s)},
};

/* Families by cgroup="PATH" (the memory one also by node). */
static const struct family_field cgroup_families[] = {
    {"pghotd_cgroup_promoted_pages_total", offsetof(struct status_cgroup, promoted)},
    {"pghotd_cgroup_demoted_pages_total", offsetof(struct status_cgroup, demoted)},
    {"pghotd_cgroup_hot_pages", offsetof(struct status_cgroup, hot)},
    {"pghotd_cgroup_memory_bytes", 0},
};

#define CGROUP_OTHER "(other)"
/* Open addressing over the cgroup names: twice the slots of the most cgroups kept. */
#define CGROUP_SLOTS (2 * STATUS_MAX_CGROUPS)

struct builder {
	struct status_snap *snap;
	uint64_t slow_nodes;
	uint32_t *slot; /* index + 1 into snap->cgroup, 0 for free */
};

static double *at(void *base, size_t off)
{
	return (double *)((char *)base + off);
}

static int label_index(const struct prom_sample *s, const char *label, int limit)
{
	const char *v = prom_sample_label(s, label);
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	n = strtol(v, &end, 10);
	return *end || n < 0 || n >= limit ? -1 : (int)n;
}

static int source_index(const struct prom_sample *s)
{
	const char *v = prom_sample_label(s, "source");

	for (int i = 0; v && i < SRC__COUNT; i++)
		if (strcmp(v, stat_source_name((enum stat_source)i)) == 0)
			return i;
	return -1;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* The cgroup named by s's label, added on first sight; NULL past STATUS_MAX_CGROUPS. */
static struct status_cgroup *cgroup_of(struct builder *b, const struct prom_sample *s)
{
	struct status_snap *snap = b->snap;
	const char *name = prom_sample_label(s, "cgroup");
	uint32_t i;

	if (!name)
		return NULL;
	for (i = name_hash(name) % CGROUP_SLOTS; b->slot[i]; i = (i + 1) % CGROUP_SLOTS)
		if (strcmp(snap->cgroup[b->slot[i] - 1].name, name) == 0)
			return &snap->cgroup[b->slot[i] - 1];
	if (snap->nr_cgroups == STATUS_MAX_CGROUPS) {
		snap->cgroups_unread++;
		return NULL;
	}
	snap->cgroup[snap->nr_cgroups] = (struct status_cgroup){.name = name};
	b->slot[i] = (uint32_t)++snap->nr_cgroups;
	return &snap->cgroup[snap->nr_cgroups - 1];
}

static void add_cgroup_memory(struct builder *b, struct status_cgroup *cg,
			      const struct prom_sample *s)
{
	int node = label_index(s, "node", 64);

	if (node >= 0 && (b->slow_nodes >> node & 1))
		cg->slow_bytes += s->value;
	else
		cg->fast_bytes += s->value;
}

#define FIELD_OF(table, name) field_of(table, sizeof(table) / sizeof(table[0]), name)

static const struct family_field *field_of(const struct family_field *t, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, name) == 0)
			return &t[i];
	return NULL;
}

static void take_cgroup_count(struct status_snap *snap, const struct prom_sample *s)
{
	const char *state = prom_sample_label(s, "state");

	if (state && strcmp(state, "shown") == 0)
		snap->cgroups_shown += s->value;
	else if (state && strcmp(state, "folded") == 0)
		snap->cgroups_folded += s->value;
}

static void take_cgroup(struct builder *b, const struct prom_sample *s)
{
	const struct family_field *ff = FIELD_OF(cgroup_families, s->name);
	struct status_cgroup *cg;

	if (strcmp(s->name, "pghotd_cgroups") == 0)
		take_cgroup_count(b->snap, s);
	else if (!ff)
		return;
	b->snap->has_cgroups = true;
	cg = ff ? cgroup_of(b, s) : NULL;
	if (cg && ff->off == 0) /* pghotd_cgroup_memory_bytes */
		add_cgroup_memory(b, cg, s);
	else if (cg)
		*at(cg, ff->off) += s->value;
}

static void take_demoted_reason(struct status_snap *snap, const struct prom_sample *s)
{
	const char *why = prom_sample_label(s, "reason");

	for (int w = 0; why && w < DEMOTE__COUNT; w++)
		if (strcmp(why, stat_demote_reason_name((enum stat_demote_reason)w)) == 0)
			snap->demoted_why[w] += s->value;
}

static void take_sample(struct builder *b, const struct prom_sample *s)
{
	struct status_snap *snap = b->snap;
	const struct family_field *ff;
	int i;

	if (!isfinite(s->value) || strncmp(s->name, "pghotd_", 7) != 0)
		return;
	if ((ff = FIELD_OF(plain_families, s->name))) {
		*at(snap, ff->off) += s->value;
		snap->has_up |= ff->off == offsetof(struct status_snap, up);
		snap->has_cpu |= ff->off == offsetof(struct status_snap, cpu_s);
	} else if ((ff = FIELD_OF(node_families, s->name))) {
		if ((i = label_index(s, "node", STATS_MAX_NODES)) >= 0)
			at(snap, ff->off)[i] += s->value;
		if (strcmp(s->name, "pghotd_demoted_pages_total") == 0)
			take_demoted_reason(snap, s);
	} else if ((ff = FIELD_OF(source_families, s->name))) {
		if ((i = source_index(s)) >= 0)
			*at(&snap->source[i], ff->off) += s->value;
	} else {
		take_cgroup(b, s);
	}
}

int status_snap_build(struct prom_text *text, double mtime, uint64_t slow_nodes,
		      struct status_snap *out)
{
	struct status_snap snap = {.text = *text, .mtime = mtime};
	struct builder b = {.snap = &snap, .slow_nodes = slow_nodes};

	*text = (struct prom_text){0};
	snap.cgroup = calloc(STATUS_MAX_CGROUPS, sizeof(*snap.cgroup));
	b.slot = calloc(CGROUP_SLOTS, sizeof(*b.slot));
	if (!snap.cgroup || !b.slot) {
		free(b.slot);
		status_snap_free(&snap);
		return -ENOMEM;
	}
	for (size_t i = 0; i < snap.text.nr; i++)
		take_sample(&b, &snap.text.sample[i]);
	free(b.slot);
	*out = snap;
	return 0;
}

void status_snap_free(struct status_snap *s)
{
	prom_text_free(&s->text);
	free(s->cgroup);
	s->cgroup = NULL;
	s->nr_cgroups = 0;
}

/* "4.2 s", "5 min 3 s", "2 h 13 min", "3 d 4 h". */
static void fmt_span(char *buf, size_t len, double secs)
{
	uint64_t s = secs > 0 ? (uint64_t)secs : 0;

	if (secs < 60)
		snprintf(buf, len, "%.1f s", secs < 0 ? 0.0 : secs);
	else if (s < 3600)
		snprintf(buf, len, "%" PRIu64 " min %" PRIu64 " s", s / 60, s % 60);
	else if (s < 86400)
		snprintf(buf, len, "%" PRIu64 " h %" PRIu64 " min", s / 3600, s / 60 % 60);
	else
		snprintf(buf, len, "%" PRIu64 " d %" PRIu64 " h", s / 86400, s / 3600 % 24);
}

static void fmt_bytes(char *buf, size_t len, double v)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int u = 0;

	if (isnan(v)) {
		snprintf(buf, len, "-");
		return;
	}
	while (fabs(v) >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
}

/* A byte rate: "1.2 MiB/s", "-" when unknown. */
static void fmt_byte_rate(char *buf, size_t len, double v)
{
	size_t n;

	fmt_bytes(buf, len, v);
	n = strlen(buf);
	if (!isnan(v))
		snprintf(buf + n, len - n, "/s");
}

static void fmt_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, isnan(v) ? "-" : "%.1f", v);
}

int status_check(const struct status_snap *s, double now, unsigned interval_ms, const char *path,
		 char *msg, size_t len)
{
	double age = now - s->mtime, limit = STATUS_STALE_INTERVALS * interval_ms / 1000.0;

	limit = limit < STATUS_STALE_MIN_S ? STATUS_STALE_MIN_S : limit;
	char ago[32], lim[32];

	fmt_span(ago, sizeof(ago), age);
	fmt_span(lim, sizeof(lim), limit);
	if (!s->has_up) {
		snprintf(msg, len, "%s holds no pghotd_up sample: not a pghotd stats file", path);
		return -EBADMSG;
	}
	if (s->up == 0) {
		snprintf(msg, len,
			 "pghotd is not running: it stopped %s ago (%s says pghotd_up 0); see "
			 "systemctl status pghotd",
			 ago, path);
		return -ESRCH;
	}
	if (age > limit) {
		snprintf(
		    msg, len,
		    "%s was last written %s ago, more than %d x stats.interval_ms (%s, %.0f s at "
		    "least): pghotd is not running or is stuck; see systemctl status pghotd",
		    path, ago, STATUS_STALE_INTERVALS, lim, STATUS_STALE_MIN_S);
		return -ESTALE;
	}
	return 0;
}

/* What the rates are over: the base snapshot (NULL: zero at the start) and the seconds. */
struct window {
	const struct status_snap *base;
	double secs;
};

static struct window window_of(const struct status_snap *cur, const struct status_snap *prev)
{
	if (prev && prev->start_time == cur->start_time && cur->mtime > prev->mtime)
		return (struct window){prev, cur->mtime - prev->mtime};
	return (struct window){NULL, cur->mtime - cur->start_time};
}

/* The rate of the counter at off (in a snapshot, or in the cgroup pair), NaN when the
 * window is empty. A counter lower than its base (not one run) counts from 0. */
static double rate_of(const struct window *w, double now_v, double base_v)
{
	double d = now_v - base_v;

	if (w->secs <= 0)
		return NAN;
	return (d < 0 ? now_v : d) / w->secs;
}

static double rate(const struct window *w, const struct status_snap *cur, size_t off)
{
	return rate_of(w, *at((void *)cur, off), w->base ? *at((void *)w->base, off) : 0);
}

/* Offset of element i of the array of doubles at off. */
static size_t elem(size_t off, int i)
{
	return off + (size_t)i * sizeof(double);
}

static void render_header(FILE *f, const struct status_snap *cur, const struct window *w,
			  double now, unsigned interval_ms)
{
	char up[32], ago[32], every[32], over[32];

	fmt_span(up, sizeof(up), cur->mtime - cur->start_time);
	fmt_span(ago, sizeof(ago), now - cur->mtime);
	fmt_span(every, sizeof(every), interval_ms / 1000.0);
	fmt_span(over, sizeof(over), w->secs);
	fprintf(f, "pghotd up %s, promotion threshold %.0f; stats written %s ago (every %s)\n", up,
		cur->threshold, ago, every);
	if (w->base)
		fprintf(f, "rates: over the last %s, between two writes of the daemon\n", over);
	else
		fprintf(f, "rates: averages since the start (%s); --watch shows each interval's\n",
			over);
	if (cur->text.malformed || cur->text.dropped)
		fprintf(f, "note: %zu malformed lines skipped, %zu samples past the cap\n",
			cur->text.malformed, cur->text.dropped);
}

static void render_node(FILE *f, const struct status_snap *cur, const struct window *w,
			const struct topology *t, int n)
{
	const struct topo_node *nd = &t->node[n];
	char total[24], free_b[24], keep[24], in[24], out[24];
	bool fast = topology_node_is_fast(t, n);

	fmt_bytes(total, sizeof(total), (double)nd->mem_total);
	fmt_bytes(free_b, sizeof(free_b), (double)nd->mem_free);
	fmt_bytes(keep, sizeof(keep), nd->mem_mark ? (double)nd->mem_mark : NAN);
	fmt_byte_rate(in, sizeof(in),
		      fast ? rate(w, cur, elem(offsetof(struct status_snap, promoted_bytes), n))
			   : NAN);
	fmt_byte_rate(out, sizeof(out),
		      fast ? rate(w, cur, elem(offsetof(struct status_snap, demoted_bytes), n))
			   : NAN);
	fprintf(f, "%-5d %-4s %5d %5d %10s %10s %4u%% %10s %14s %14s\n", n,
		nd->slow ? "slow" : "fast", nd->tier, nd->nr_cpus, total, free_b,
		topology_free_percent(t, n), keep, in, out);
}

static void render_nodes(FILE *f, const struct status_snap *cur, const struct window *w,
			 const struct topology *t)
{
	fprintf(f, "\n%-5s %-4s %5s %5s %10s %10s %5s %10s %14s %14s\n", "NODE", "ROLE", "TIER",
		"CPUS", "SIZE", "FREE", "", "KEEPS FREE", "PROMOTED IN", "DEMOTED OUT");
	for (int n = 0; t && n < t->nr_nodes; n++)
		if (t->node[n].present)
			render_node(f, cur, w, t, n);
	if (!t)
		fprintf(f, "(the nodes cannot be read: see the error above)\n");
}

static double sum_rate(const struct window *w, const struct status_snap *cur, size_t off)
{
	double sum = 0;

	for (int n = 0; n < STATS_MAX_NODES; n++)
		sum += rate(w, cur, elem(off, n));
	return sum;
}

static double sum_total(const double *v)
{
	double sum = 0;

	for (int n = 0; n < STATS_MAX_NODES; n++)
		sum += v[n];
	return sum;
}

static void render_move(FILE *f, const char *what, double pages_s, double bytes_s, double total)
{
	char p[24], b[24];

	fmt_num(p, sizeof(p), pages_s);
	fmt_byte_rate(b, sizeof(b), bytes_s);
	fprintf(f, "%-10s %12s %14s %14.0f\n", what, p, b, total);
}

static void render_moves(FILE *f, const struct status_snap *cur, const struct window *w)
{
	char a[24], b[24], c[24], d[24];

	fprintf(f, "\n%-10s %12s %14s %14s\n", "MOVES", "PAGES/S", "BYTES/S", "PAGES IN ALL");
	render_move(f, "promoted", sum_rate(w, cur, offsetof(struct status_snap, promoted_pages)),
		    sum_rate(w, cur, offsetof(struct status_snap, promoted_bytes)),
		    sum_total(cur->promoted_pages));
	render_move(f, "demoted", sum_rate(w, cur, offsetof(struct status_snap, demoted_pages)),
		    sum_rate(w, cur, offsetof(struct status_snap, demoted_bytes)),
		    sum_total(cur->demoted_pages));
	fmt_num(a, sizeof(a),
		rate(w, cur, elem(offsetof(struct status_snap, demoted_why), DEMOTE_FREE_TARGET)));
	fmt_num(b, sizeof(b),
		rate(w, cur, elem(offsetof(struct status_snap, demoted_why), DEMOTE_EXCHANGE)));
	fprintf(f, "demoted for: %s %s/s, %s %s/s\n", stat_demote_reason_name(DEMOTE_FREE_TARGET),
		a, stat_demote_reason_name(DEMOTE_EXCHANGE), b);
	fmt_num(a, sizeof(a), rate(w, cur, offsetof(struct status_snap, promote_failed)));
	fmt_num(b, sizeof(b), rate(w, cur, offsetof(struct status_snap, demote_failed)));
	fmt_num(c, sizeof(c), rate(w, cur, offsetof(struct status_snap, promote_limited)));
	fmt_num(d, sizeof(d), rate(w, cur, offsetof(struct status_snap, demote_limited)));
	fprintf(f,
		"not moved: failed %s/s up, %s/s down; held by the rate limits %s/s up, %s/s "
		"down\n",
		a, b, c, d);
	fmt_num(a, sizeof(a), rate(w, cur, offsetof(struct status_snap, pauses)));
	fprintf(f, "hot pages waiting: %.0f; node pauses %s/s\n", cur->hot_pages, a);
}

static void render_cpu(FILE *f, const struct status_snap *cur, const struct window *w)
{
	char a[24], b[24];

	fmt_num(a, sizeof(a), 100 * rate(w, cur, offsetof(struct status_snap, cpu_s)));
	fmt_num(b, sizeof(b), 100 * rate(w, cur, offsetof(struct status_snap, kdamond_cpu_s)));
	if (cur->has_cpu)
		fprintf(f, "CPU: pghotd %s%% of one CPU, its kdamond %s%%\n", a, b);
	else
		fprintf(f,
			"CPU: not in this stats file (pghotd_cpu_seconds_total: a newer pghotd); "
			"its kdamond %s%%\n",
			b);
}

static void render_source(FILE *f, const struct status_snap *cur, const struct window *w, int i)
{
	const struct status_source *s = &cur->source[i];
	size_t off = offsetof(struct status_snap, source) + (size_t)i * sizeof(*s);
	char smp[24], lost[24], scan[24];

	if (!s->active && !s->samples && !s->scanned) {
		fprintf(f, "%-7s off\n", stat_source_name((enum stat_source)i));
		return;
	}
	fmt_num(smp, sizeof(smp), rate(w, cur, off + offsetof(struct status_source, samples)));
	fmt_num(lost, sizeof(lost), rate(w, cur, off + offsetof(struct status_source, lost)));
	fmt_num(scan, sizeof(scan), rate(w, cur, off + offsetof(struct status_source, scanned)));
	fprintf(f, "%-7s %-8s %12s %10s %16s %10.3f s\n", stat_source_name((enum stat_source)i),
		s->active ? "running" : "stopped", smp, lost, scan, s->scan_round_s);
}

static void render_sources(FILE *f, const struct status_snap *cur, const struct window *w)
{
	fprintf(f, "\n%-7s %-8s %12s %10s %16s %12s\n", "SOURCE", "STATE", "SAMPLES/S", "LOST/S",
		"PAGES SCANNED/S", "LAST ROUND");
	for (int i = 0; i < SRC__COUNT; i++)
		render_source(f, cur, w, i);
}

void status_put_label(FILE *f, const char *s, int width)
{
	char buf[512];
	size_t n = 0, len = strlen(s);
	/* Only the tail can show: escape from the last bytes that fit (4 columns each at most). */
	const char *p = len > sizeof(buf) / 4 - 1 ? s + len - (sizeof(buf) / 4 - 1) : s;

	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[n++] = (char)c;
		else
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\\x%02x", c);
	}
	buf[n] = '\0';
	if (n > (size_t)width && width > 3)
		fprintf(f, "...%s", buf + n - (size_t)(width - 3));
	else
		fprintf(f, "%-*s", width, buf);
}

static const struct status_cgroup *cgroup_named(const struct status_snap *s, const char *name)
{
	for (size_t i = 0; s && i < s->nr_cgroups; i++)
		if (strcmp(s->cgroup[i].name, name) == 0)
			return &s->cgroup[i];
	return NULL;
}

static void render_cgroup(FILE *f, const struct status_cgroup *cg, const struct window *w)
{
	const struct status_cgroup *base = w->base ? cgroup_named(w->base, cg->name) : NULL;
	char slow[24], fast[24], pr[24], dr[24];

	fmt_bytes(slow, sizeof(slow), cg->slow_bytes);
	fmt_bytes(fast, sizeof(fast), cg->fast_bytes);
	fmt_num(pr, sizeof(pr), rate_of(w, cg->promoted, base ? base->promoted : 0));
	fmt_num(dr, sizeof(dr), rate_of(w, cg->demoted, base ? base->demoted : 0));
	status_put_label(f, cg->name, 32);
	fprintf(f, " %10s %10s %11s %10s %10.0f %10.0f %8.0f\n", slow, fast, pr, dr, cg->promoted,
		cg->demoted, cg->hot);
}

static int by_slow_bytes(const void *a, const void *b)
{
	const struct status_cgroup *x = *(const struct status_cgroup *const *)a;
	const struct status_cgroup *y = *(const struct status_cgroup *const *)b;

	if (x->slow_bytes != y->slow_bytes)
		return x->slow_bytes < y->slow_bytes ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The largest by slow-tier memory, (other) left out; *other set when present. */
static size_t top_cgroups(const struct status_snap *cur, const struct status_cgroup **top,
			  const struct status_cgroup **other)
{
	const struct status_cgroup **all = malloc(cur->nr_cgroups * sizeof(*all) + 1);
	size_t n = 0, k;

	*other = NULL;
	for (size_t i = 0; all && i < cur->nr_cgroups; i++) {
		if (strcmp(cur->cgroup[i].name, CGROUP_OTHER) == 0)
			*other = &cur->cgroup[i];
		else
			all[n++] = &cur->cgroup[i];
	}
	if (all)
		qsort(all, n, sizeof(*all), by_slow_bytes);
	k = n < STATUS_TOP_CGROUPS ? n : STATUS_TOP_CGROUPS;
	for (size_t i = 0; all && i < k; i++)
		top[i] = all[i];
	free(all);
	return all ? k : 0;
}

static void render_cgroups(FILE *f, const struct status_snap *cur, const struct window *w)
{
	const struct status_cgroup *top[STATUS_TOP_CGROUPS], *other;
	size_t n;

	if (!cur->has_cgroups) {
		fprintf(f, "\ncgroups: not in this stats file (written by a pghotd without the "
			   "pghotd_cgroup_* families)\n");
		return;
	}
	n = top_cgroups(cur, top, &other);
	fprintf(f,
		"\nCGROUPS: %.0f shown by pghotd, %.0f folded into %s; the %zu with the most "
		"on the slow tier\n",
		cur->cgroups_shown, cur->cgroups_folded, CGROUP_OTHER, n);
	fprintf(f, "%-32s %10s %10s %11s %10s %10s %10s %8s\n", "CGROUP", "SLOW", "FAST",
		"PROMOTED/S", "DEMOTED/S", "PROMOTED", "DEMOTED", "HOT");
	for (size_t i = 0; i < n; i++)
		render_cgroup(f, top[i], w);
	if (other)
		render_cgroup(f, other, w);
}

void status_render(FILE *f, const struct status_snap *cur, const struct status_snap *prev,
		   const struct topology *t, double now, unsigned interval_ms)
{
	struct window w = window_of(cur, prev);

	render_header(f, cur, &w, now, interval_ms);
	render_nodes(f, cur, &w, t);
	render_moves(f, cur, &w);
	render_cpu(f, cur, &w);
	render_sources(f, cur, &w);
	render_cgroups(f, cur, &w);
}
