/* stats: counters and their Prometheus text rendering; see stats.h for the contract.
 *
 * Every family is described once in a table (name, type, help, where its values live), so
 * the renderer is one loop and a new counter is one table line. All loads are relaxed: each
 * sample is independent, and a scrape that sees one counter a little ahead of another is
 * normal for Prometheus. */
#include "base/stats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/fileio.h"

enum family_kind {
	FK_PLAIN,    /* c[idx] */
	FK_PLAIN_US, /* c[idx] in microseconds, printed in seconds */
	FK_SOURCE,   /* src[source][idx] */
	FK_ACTIVE,   /* src_active[source] */
	FK_SCAN_US,  /* src_scan_round_us[source], printed in seconds */
	FK_NODE_PAGES,
	FK_NODE_BYTES,
	FK_NODE_SLOW,
	FK_FAIL, /* fail[reason] */
	FK_DEMOTE_PAGES,
	FK_DEMOTE_BYTES,
	FK_DEMOTE_FAIL, /* demote_fail[reason] */
	FK_ABIT_SKIP,	/* abit_skip[reason] */
};

struct family {
	const char *name;
	const char *type;
	const char *help;
	enum family_kind kind;
	int idx;
};

static const struct family families[] = {
    {"pghotd_up", "gauge", "1 while the daemon runs.", FK_PLAIN, ST_UP},
    {"pghotd_start_time_seconds", "gauge", "Start time of the daemon since the Unix epoch.",
     FK_PLAIN, ST_START_TIME_SECONDS},
    {"pghotd_config_reloads_total", "counter", "Configuration reloads that took effect.", FK_PLAIN,
     ST_CONFIG_RELOADS},
    {"pghotd_config_reload_failures_total", "counter",
     "Configuration reloads rejected; the previous configuration stayed in force.", FK_PLAIN,
     ST_CONFIG_RELOAD_FAILURES},
    {"pghotd_promotion_threshold", "gauge",
     "Accesses within the window that make a page hot (promotion.threshold in force).", FK_PLAIN,
     ST_CONFIG_THRESHOLD},
    {"pghotd_source_active", "gauge", "1 when the access source is running.", FK_ACTIVE, 0},
    {"pghotd_source_scan_round_seconds", "gauge",
     "Time the source spent on its last scan round (the Accessed-bit source in mode regions: "
     "with its sampling steps since the round before), sleeps excluded.",
     FK_SCAN_US, 0},
    {"pghotd_samples_total", "counter", "Access samples read from the source.", FK_SOURCE,
     SS_SAMPLES},
    {"pghotd_samples_lost_total", "counter", "Samples the kernel reported lost (ring buffer full).",
     FK_SOURCE, SS_SAMPLES_LOST},
    {"pghotd_samples_dropped_total", "counter",
     "Samples filtered out before the hot table (kernel or fast-node addresses).", FK_SOURCE,
     SS_SAMPLES_DROPPED},
    {"pghotd_throttle_events_total", "counter", "Times the kernel throttled the source's sampling.",
     FK_SOURCE, SS_THROTTLES},
    {"pghotd_records_malformed_total", "counter",
     "Sample records rejected as malformed or truncated.", FK_SOURCE, SS_MALFORMED},
    {"pghotd_pages_scanned_total", "counter", "Pages whose accessed bit the source checked.",
     FK_SOURCE, SS_PAGES_SCANNED},
    {"pghotd_scan_io_bytes_total", "counter",
     "Bytes the source read and wrote through page_idle, pagemap and kpageflags.", FK_SOURCE,
     SS_SCAN_IO_BYTES},
    {"pghotd_hot_pages", "gauge", "Pages tracked in the hot table.", FK_PLAIN, ST_HOT_PAGES},
    {"pghotd_hot_table_replacements_total", "counter",
     "Hot table entries evicted to make room for a new page.", FK_PLAIN, ST_HOT_TABLE_REPLACEMENTS},
    {"pghotd_hot_table_queue_full_total", "counter",
     "Hot pages not queued for promotion because the ready queue was full.", FK_PLAIN,
     ST_HOT_TABLE_QUEUE_FULL},
    {"pghotd_promote_candidates_total", "counter",
     "Hot pages the promoter took from the ready queue.", FK_PLAIN, ST_PROMOTE_CANDIDATES},
    {"pghotd_promote_skipped_fast_total", "counter",
     "Candidates skipped because they already were on a fast node.", FK_PLAIN,
     ST_PROMOTE_SKIPPED_FAST},
    {"pghotd_promote_skipped_cooldown_total", "counter",
     "Candidates skipped because they were moved within the cooldown.", FK_PLAIN,
     ST_PROMOTE_SKIPPED_COOLDOWN},
    {"pghotd_promote_dry_run_total", "counter",
     "Promotions decided but not performed because dry_run is set.", FK_PLAIN, ST_PROMOTE_DRY_RUN},
    {"pghotd_promote_rate_limited_total", "counter",
     "Pages whose promotion the rate limit deferred.", FK_PLAIN, ST_PROMOTE_RATE_LIMITED},
    {"pghotd_node_slow", "gauge",
     "1 for a node in the slow tier, which pghotd promotes from, 0 for the others (tiers.* "
     "applied).",
     FK_NODE_SLOW, 0},
    {"pghotd_promoted_pages_total", "counter", "Pages moved to a fast node, by target node.",
     FK_NODE_PAGES, 0},
    {"pghotd_promoted_bytes_total", "counter", "Bytes moved to a fast node, by target node.",
     FK_NODE_BYTES, 0},
    {"pghotd_promote_failures_total", "counter", "Pages move_pages(2) did not move, by reason.",
     FK_FAIL, 0},
    {"pghotd_node_pauses_total", "counter",
     "Times promotion to a node paused because the node was short of free memory.", FK_PLAIN,
     ST_NODE_PAUSES},
    {"pghotd_demote_candidates_total", "counter",
     "Cold pages of fast nodes the mover took to demote.", FK_PLAIN, ST_DEMOTE_CANDIDATES},
    {"pghotd_demote_skipped_total", "counter",
     "Cold pages skipped because they had left the fast node they were found on.", FK_PLAIN,
     ST_DEMOTE_SKIPPED},
    {"pghotd_demote_dry_run_total", "counter",
     "Demotions decided but not performed because dry_run is set.", FK_PLAIN, ST_DEMOTE_DRY_RUN},
    {"pghotd_demote_rate_limited_total", "counter",
     "Cold pages left in place for the interval by the demotion rate limit.", FK_PLAIN,
     ST_DEMOTE_RATE_LIMITED},
    {"pghotd_demoted_pages_total", "counter",
     "Pages moved from a fast node to a slow one, by the fast node and the reason.",
     FK_DEMOTE_PAGES, 0},
    {"pghotd_demoted_bytes_total", "counter",
     "Bytes moved from a fast node to a slow one, by the fast node and the reason.",
     FK_DEMOTE_BYTES, 0},
    {"pghotd_demote_failures_total", "counter",
     "Cold pages move_pages(2) did not demote, by reason.", FK_DEMOTE_FAIL, 0},
    {"pghotd_abit_regions_skipped_total", "counter",
     "2 MiB regions the Accessed-bit source left out of a process's state at a read of its "
     "maps, by reason: process_cap (more than its resident set pays for), total_cap (the "
     "source's cap over every process).",
     FK_ABIT_SKIP, 0},
    {"pghotd_move_batches_pid_reused_total", "counter",
     "Move batches dropped just before the move because their pid had been reused by another "
     "process (its start time changed).",
     FK_PLAIN, ST_BATCHES_PID_REUSED},
    {"pghotd_damon_kdamond_cpu_seconds", "gauge",
     "CPU time of the kdamond threads pghotd's DAMON source ran (count it with pghotd's own).",
     FK_PLAIN_US, ST_DAMON_KDAMOND_CPU_US},
    {"pghotd_damon_sample_interval_seconds", "gauge",
     "The sampling interval pghotd's kdamond runs at: sources.damon.sample_us, or a multiple "
     "of it while there is nothing to promote (0: no kdamond set up yet).",
     FK_PLAIN_US, ST_DAMON_SAMPLE_US},
    {"pghotd_cgroup_read_failures_total", "counter",
     "Reads of a registered process's cgroup or numa_maps that failed (a cgroup path past 4,096 "
     "bytes, a file past its bound or ambiguous, numa_maps not readable): its figures went to "
     "cgroup=\"(other)\".",
     FK_PLAIN, ST_CGROUP_READ_FAILURES},
    {"pghotd_cpu_seconds_total", "counter",
     "CPU time pghotd's threads used, user and system (its kdamond's is "
     "pghotd_damon_kdamond_cpu_seconds).",
     FK_PLAIN_US, ST_CPU_US},
    {"pghotd_processes_forgotten_total", "counter",
     "Processes dropped from tracking (exited or no longer matching).", FK_PLAIN,
     ST_PROCESSES_FORGOTTEN},
};

static const char *const source_names[SRC__COUNT] = {
    [SRC_IBS] = "ibs",
    [SRC_PEBS] = "pebs",
    [SRC_ABIT] = "abit",
    [SRC_DAMON] = "damon",
};

static const char *const fail_names[FAIL__COUNT] = {
    [FAIL_BUSY] = "busy", [FAIL_NOMEM] = "nomem",   [FAIL_SHARED] = "shared",
    [FAIL_GONE] = "gone", [FAIL_NOPROC] = "noproc", [FAIL_OTHER] = "other",
};

static const char *const demote_names[DEMOTE__COUNT] = {
    [DEMOTE_FREE_TARGET] = "free_target",
    [DEMOTE_EXCHANGE] = "exchange",
};
static const char *const skip_names[SKIP__COUNT] = {
    [SKIP_PROCESS_CAP] = "process_cap",
    [SKIP_TOTAL_CAP] = "total_cap",
};

static uint64_t stats_load(_Atomic uint64_t *v)
{
	/* Relaxed: pairs with the relaxed adds and stores of the writers; see stats.h. */
	return atomic_load_explicit(v, memory_order_relaxed);
}

void stats_init(struct stats *s, int nr_nodes)
{
	struct timespec now;

	for (int i = 0; i < ST__COUNT; i++)
		atomic_init(&s->c[i], 0);
	for (int src = 0; src < SRC__COUNT; src++) {
		for (int i = 0; i < SS__COUNT; i++)
			atomic_init(&s->src[src][i], 0);
		atomic_init(&s->src_active[src], 0);
		atomic_init(&s->src_scan_round_us[src], 0);
	}
	for (int n = 0; n < STATS_MAX_NODES; n++) {
		atomic_init(&s->promoted_pages[n], 0);
		atomic_init(&s->promoted_bytes[n], 0);
		atomic_init(&s->node_slow[n], 0);
	}
	for (int r = 0; r < SKIP__COUNT; r++)
		atomic_init(&s->abit_skip[r], 0);
	for (int r = 0; r < FAIL__COUNT; r++) {
		atomic_init(&s->fail[r], 0);
		atomic_init(&s->demote_fail[r], 0);
	}
	for (int w = 0; w < DEMOTE__COUNT; w++) {
		for (int n = 0; n < STATS_MAX_NODES; n++) {
			atomic_init(&s->demoted_pages[w][n], 0);
			atomic_init(&s->demoted_bytes[w][n], 0);
		}
	}
	s->extra = NULL;
	s->extra_ctx = NULL;
	if (nr_nodes < 0)
		nr_nodes = 0;
	s->nr_nodes = nr_nodes > STATS_MAX_NODES ? STATS_MAX_NODES : nr_nodes;

	atomic_init(&s->c[ST_UP], 1);
	if (clock_gettime(CLOCK_REALTIME, &now) == 0)
		atomic_init(&s->c[ST_START_TIME_SECONDS], (uint64_t)now.tv_sec);
}

void stats_promoted(struct stats *s, int node, uint64_t pages, uint64_t bytes)
{
	/* A node id the arrays cannot hold has no series; the totals would lie if we folded it
	 * into another node. Topology caps node ids at the same bound. */
	if (node < 0 || node >= STATS_MAX_NODES)
		return;
	atomic_fetch_add_explicit(&s->promoted_pages[node], pages, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->promoted_bytes[node], bytes, memory_order_relaxed);
}

void stats_fail(struct stats *s, enum stat_fail_reason r, uint64_t n)
{
	if ((unsigned)r >= FAIL__COUNT)
		r = FAIL_OTHER;
	atomic_fetch_add_explicit(&s->fail[r], n, memory_order_relaxed);
}

void stats_demoted(struct stats *s, int node, enum stat_demote_reason why, uint64_t pages,
		   uint64_t bytes)
{
	/* As stats_promoted(): a node without a series is not folded into another. */
	if (node < 0 || node >= STATS_MAX_NODES || (unsigned)why >= DEMOTE__COUNT)
		return;
	atomic_fetch_add_explicit(&s->demoted_pages[why][node], pages, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->demoted_bytes[why][node], bytes, memory_order_relaxed);
}

void stats_demote_fail(struct stats *s, enum stat_fail_reason r, uint64_t n)
{
	if ((unsigned)r >= FAIL__COUNT)
		r = FAIL_OTHER;
	atomic_fetch_add_explicit(&s->demote_fail[r], n, memory_order_relaxed);
}

void stats_abit_skip(struct stats *s, enum stat_abit_skip why, uint64_t n)
{
	if ((unsigned)why < SKIP__COUNT)
		atomic_fetch_add_explicit(&s->abit_skip[why], n, memory_order_relaxed);
}

void stats_node_slow(struct stats *s, int node, int slow)
{
	if (node >= 0 && node < STATS_MAX_NODES)
		atomic_store_explicit(&s->node_slow[node], slow ? 1 : 0, memory_order_relaxed);
}

void stats_source_active(struct stats *s, enum stat_source src, int active)
{
	if ((unsigned)src >= SRC__COUNT)
		return;
	atomic_store_explicit(&s->src_active[src], active ? 1 : 0, memory_order_relaxed);
}

const char *stat_source_name(enum stat_source s)
{
	return (unsigned)s < SRC__COUNT ? source_names[s] : "unknown";
}

const char *stat_fail_reason_name(enum stat_fail_reason r)
{
	return (unsigned)r < FAIL__COUNT ? fail_names[r] : "unknown";
}

const char *stat_demote_reason_name(enum stat_demote_reason r)
{
	return (unsigned)r < DEMOTE__COUNT ? demote_names[r] : "unknown";
}

uint64_t stats_promoted_pages_total(struct stats *s)
{
	uint64_t sum = 0;

	for (int n = 0; n < STATS_MAX_NODES; n++)
		sum += stats_load(&s->promoted_pages[n]);
	return sum;
}

uint64_t stats_promoted_bytes_total(struct stats *s)
{
	uint64_t sum = 0;

	for (int n = 0; n < STATS_MAX_NODES; n++)
		sum += stats_load(&s->promoted_bytes[n]);
	return sum;
}

uint64_t stats_demoted_bytes_total(struct stats *s)
{
	uint64_t sum = 0;

	for (int why = 0; why < DEMOTE__COUNT; why++)
		for (int n = 0; n < STATS_MAX_NODES; n++)
			sum += stats_load(&s->demoted_bytes[why][n]);
	return sum;
}

static void render_per_source(struct stats *s, const struct family *f, FILE *out)
{
	for (int src = 0; src < SRC__COUNT; src++) {
		uint64_t v;

		if (f->kind == FK_SOURCE)
			v = stats_load(&s->src[src][f->idx]);
		else if (f->kind == FK_ACTIVE)
			v = stats_load(&s->src_active[src]);
		else
			v = stats_load(&s->src_scan_round_us[src]);
		if (f->kind == FK_SCAN_US)
			fprintf(out, "%s{source=\"%s\"} %" PRIu64 ".%06" PRIu64 "\n", f->name,
				source_names[src], v / 1000000, v % 1000000);
		else
			fprintf(out, "%s{source=\"%s\"} %" PRIu64 "\n", f->name, source_names[src],
				v);
	}
}

/* Nodes 0..nr_nodes-1 always, so dashboards see every node at 0; a higher node id only
 * when something was moved there, so no count is hidden. */
static void render_per_node(struct stats *s, const struct family *f, FILE *out)
{
	_Atomic uint64_t *arr = f->kind == FK_NODE_PAGES   ? s->promoted_pages
				: f->kind == FK_NODE_BYTES ? s->promoted_bytes
							   : s->node_slow;

	for (int n = 0; n < STATS_MAX_NODES; n++) {
		uint64_t v = stats_load(&arr[n]);

		if (n < s->nr_nodes || v != 0)
			fprintf(out, "%s{node=\"%d\"} %" PRIu64 "\n", f->name, n, v);
	}
}

/* Every reason for nodes 0..nr_nodes-1, and higher nodes once non-zero, as render_per_node(). */
static void render_demoted(struct stats *s, const struct family *f, FILE *out)
{
	for (int w = 0; w < DEMOTE__COUNT; w++) {
		_Atomic uint64_t *arr =
		    f->kind == FK_DEMOTE_PAGES ? s->demoted_pages[w] : s->demoted_bytes[w];

		for (int n = 0; n < STATS_MAX_NODES; n++) {
			uint64_t v = stats_load(&arr[n]);

			if (n < s->nr_nodes || v != 0)
				fprintf(out, "%s{node=\"%d\",reason=\"%s\"} %" PRIu64 "\n", f->name,
					n, demote_names[w], v);
		}
	}
}

static void render_fail(const struct family *f, _Atomic uint64_t *arr, FILE *out)
{
	for (int r = 0; r < FAIL__COUNT; r++)
		fprintf(out, "%s{reason=\"%s\"} %" PRIu64 "\n", f->name, fail_names[r],
			stats_load(&arr[r]));
}

static void render_family(struct stats *s, const struct family *f, FILE *out)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
	switch (f->kind) {
	case FK_PLAIN:
		fprintf(out, "%s %" PRIu64 "\n", f->name, stats_load(&s->c[f->idx]));
		break;
	case FK_PLAIN_US:
		fprintf(out, "%s %" PRIu64 ".%06" PRIu64 "\n", f->name,
			stats_load(&s->c[f->idx]) / 1000000, stats_load(&s->c[f->idx]) % 1000000);
		break;
	case FK_SOURCE:
	case FK_ACTIVE:
	case FK_SCAN_US:
		render_per_source(s, f, out);
		break;
	case FK_NODE_PAGES:
	case FK_NODE_BYTES:
	case FK_NODE_SLOW:
		render_per_node(s, f, out);
		break;
	case FK_FAIL:
		render_fail(f, s->fail, out);
		break;
	case FK_DEMOTE_PAGES:
	case FK_DEMOTE_BYTES:
		render_demoted(s, f, out);
		break;
	case FK_DEMOTE_FAIL:
		render_fail(f, s->demote_fail, out);
		break;
	case FK_ABIT_SKIP:
		for (int r = 0; r < SKIP__COUNT; r++)
			fprintf(out, "%s{reason=\"%s\"} %" PRIu64 "\n", f->name, skip_names[r],
				stats_load(&s->abit_skip[r]));
		break;
	}
}

void stats_set_extra(struct stats *s, int (*render)(void *ctx, FILE *f), void *ctx)
{
	s->extra = render;
	s->extra_ctx = ctx;
}

/* Length of the UTF-8 sequence at u[0..n), 0 when it is not one. */
static size_t utf8_seq(const unsigned char *u, size_t n)
{
	size_t len = u[0] < 0x80		    ? 1
		     : u[0] >= 0xc2 && u[0] <= 0xdf ? 2
		     : u[0] >= 0xe0 && u[0] <= 0xef ? 3
		     : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4
						    : 0;

	if (len == 0 || len > n)
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((u[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong three- and four-byte forms, surrogates, and past U+10FFFF. */
	if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] > 0x9f) ||
	    (u[0] == 0xf0 && u[1] < 0x90) || (u[0] == 0xf4 && u[1] > 0x8f))
		return 0;
	return len;
}

bool stats_label_valid(const char *v, size_t n)
{
	const unsigned char *u = (const unsigned char *)v;

	for (size_t i = 0, l; i < n; i += l) {
		l = utf8_seq(u + i, n - i);
		if (l == 0)
			return false;
	}
	return true;
}

void stats_label_value(FILE *f, const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\\' || v[i] == '"')
			fputc('\\', f);
		if (v[i] == '\n')
			fputs("\\n", f);
		else
			fputc(v[i], f);
	}
}

int stats_render(struct stats *s, FILE *f)
{
	int r = 0;

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		render_family(s, &families[i], f);
	if (s->extra)
		r = s->extra(s->extra_ctx, f);
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return r;
}

int stats_write_file(struct stats *s, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return -errno;
	r = stats_render(s, f);
	if (fclose(f) != 0 && r == 0)
		r = -EIO;
	if (r == 0)
		r = file_write_atomic(path, text, len);
	free(text);
	return r;
}
