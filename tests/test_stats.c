/* Tests of the stats module: the rendered text is parsed back line by line against the
 * Prometheus text exposition grammar, values are checked against what was added (also from
 * several threads), and the file writer is checked for atomic replacement and its mode. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/stats.h"

#define MAX_FAMILIES 64
#define MAX_SAMPLES  1024

struct parsed {
	int nfam;
	struct {
		char name[128];
		char type[16];
		int helps, types, samples;
	} fam[MAX_FAMILIES];
	int nsamples;
	struct {
		char key[256]; /* name plus labels, as written */
		char value[64];
	} sample[MAX_SAMPLES];
};

static char *render(struct stats *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(stats_render(s, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static int find_family(struct parsed *p, const char *name, size_t len)
{
	for (int i = 0; i < p->nfam; i++) {
		if (strlen(p->fam[i].name) == len && strncmp(p->fam[i].name, name, len) == 0)
			return i;
	}
	assert_true(p->nfam < MAX_FAMILIES);
	memcpy(p->fam[p->nfam].name, name, len);
	p->fam[p->nfam].name[len] = '\0';
	return p->nfam++;
}

/* "# HELP name text" or "# TYPE name type"; returns the family index. */
static int parse_comment(struct parsed *p, const char *line, const regex_t *name_re)
{
	bool help = strncmp(line, "# HELP ", 7) == 0;
	const char *name = line + 7;
	const char *sp = strchr(name, ' ');
	int fi;

	assert_true(help || strncmp(line, "# TYPE ", 7) == 0);
	assert_non_null(sp);
	assert_true(sp[1] != '\0');
	fi = find_family(p, name, (size_t)(sp - name));
	assert_int_equal(regexec(name_re, p->fam[fi].name, 0, NULL, 0), 0);
	if (help) {
		p->fam[fi].helps++;
	} else {
		assert_true(strcmp(sp + 1, "counter") == 0 || strcmp(sp + 1, "gauge") == 0);
		snprintf(p->fam[fi].type, sizeof(p->fam[fi].type), "%s", sp + 1);
		p->fam[fi].types++;
		/* HELP comes first and a family's lines are contiguous. */
		assert_int_equal(p->fam[fi].helps, 1);
		assert_int_equal(p->fam[fi].samples, 0);
	}
	return fi;
}

static void parse_sample(struct parsed *p, const char *line, int cur, const regex_t *sample_re)
{
	regmatch_t m[2];
	const char *sp;

	assert_int_equal(regexec(sample_re, line, 2, m, 0), 0);
	/* A sample belongs to the family whose TYPE line came last. */
	assert_true(cur >= 0);
	assert_int_equal((size_t)(m[1].rm_eo - m[1].rm_so), strlen(p->fam[cur].name));
	assert_memory_equal(line, p->fam[cur].name, strlen(p->fam[cur].name));
	p->fam[cur].samples++;

	sp = strrchr(line, ' ');
	assert_true(p->nsamples < MAX_SAMPLES);
	assert_true((size_t)(sp - line) < sizeof(p->sample[0].key));
	for (int i = 0; i < p->nsamples; i++)
		assert_false(strncmp(p->sample[i].key, line, (size_t)(sp - line)) == 0 &&
			     p->sample[i].key[sp - line] == '\0');
	memcpy(p->sample[p->nsamples].key, line, (size_t)(sp - line));
	p->sample[p->nsamples].key[sp - line] = '\0';
	snprintf(p->sample[p->nsamples].value, sizeof(p->sample[0].value), "%s", sp + 1);
	p->nsamples++;
}

/* Parses text, failing the test on any line outside the grammar we emit. */
static void parse(const char *text, struct parsed *p)
{
	regex_t name_re, sample_re;
	char *copy = strdup(text), *line, *save = NULL;
	int cur = -1;

	memset(p, 0, sizeof(*p));
	assert_non_null(copy);
	assert_int_equal(regcomp(&name_re, "^[a-zA-Z_:][a-zA-Z0-9_:]*$", REG_EXTENDED), 0);
	assert_int_equal(regcomp(&sample_re,
				 "^([a-zA-Z_:][a-zA-Z0-9_:]*)"
				 "(\\{[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\""
				 "(,[a-zA-Z_][a-zA-Z0-9_]*=\"[^\"\\\\]*\")*\\})?"
				 " [0-9]+(\\.[0-9]+)?$",
				 REG_EXTENDED),
			 0);
	assert_true(strlen(text) > 0 && text[strlen(text) - 1] == '\n');
	assert_null(strstr(text, "\n\n"));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			cur = parse_comment(p, line, &name_re);
		else
			parse_sample(p, line, cur, &sample_re);
	}
	regfree(&name_re);
	regfree(&sample_re);
	free(copy);
}

/* The value of the series key (e.g. "pghotd_samples_total{source=\"ibs\"}"), or NULL. */
static const char *value_of(struct parsed *p, const char *key)
{
	for (int i = 0; i < p->nsamples; i++) {
		if (strcmp(p->sample[i].key, key) == 0)
			return p->sample[i].value;
	}
	return NULL;
}

static uint64_t u64_of(struct parsed *p, const char *key)
{
	const char *v = value_of(p, key);
	char *end;
	unsigned long long x;

	if (!v)
		fail_msg("series %s missing", key);
	errno = 0;
	x = strtoull(v, &end, 10);
	assert_int_equal(errno, 0);
	assert_int_equal(*end, '\0');
	return x;
}

static int family_index(struct parsed *p, const char *name)
{
	for (int i = 0; i < p->nfam; i++) {
		if (strcmp(p->fam[i].name, name) == 0)
			return i;
	}
	fail_msg("family %s missing", name);
	return -1;
}

static const char *const required[] = {
    "pghotd_up",
    "pghotd_start_time_seconds",
    "pghotd_config_reloads_total",
    "pghotd_config_reload_failures_total",
    "pghotd_promotion_threshold",
    "pghotd_source_active",
    "pghotd_source_scan_round_seconds",
    "pghotd_samples_total",
    "pghotd_samples_lost_total",
    "pghotd_samples_dropped_total",
    "pghotd_throttle_events_total",
    "pghotd_records_malformed_total",
    "pghotd_pages_scanned_total",
    "pghotd_scan_io_bytes_total",
    "pghotd_hot_pages",
    "pghotd_hot_table_replacements_total",
    "pghotd_hot_table_queue_full_total",
    "pghotd_promote_candidates_total",
    "pghotd_promote_skipped_fast_total",
    "pghotd_promote_skipped_cooldown_total",
    "pghotd_promote_dry_run_total",
    "pghotd_promote_rate_limited_total",
    "pghotd_node_slow",
    "pghotd_promoted_pages_total",
    "pghotd_promoted_bytes_total",
    "pghotd_promote_failures_total",
    "pghotd_node_pauses_total",
    "pghotd_demote_candidates_total",
    "pghotd_demote_skipped_total",
    "pghotd_demote_dry_run_total",
    "pghotd_demote_rate_limited_total",
    "pghotd_demoted_pages_total",
    "pghotd_demoted_bytes_total",
    "pghotd_demote_failures_total",
    "pghotd_abit_regions_skipped_total",
    "pghotd_move_batches_pid_reused_total",
    "pghotd_damon_kdamond_cpu_seconds",
    "pghotd_damon_sample_interval_seconds",
    "pghotd_cgroup_read_failures_total",
    "pghotd_cpu_seconds_total",
    "pghotd_processes_forgotten_total",
};

static void every_family_has_help_and_type_exactly_once(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 2);
	text = render(&s);
	parse(text, &p);
	assert_int_equal(p.nfam, (int)(sizeof(required) / sizeof(required[0])));
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		int fi = family_index(&p, required[i]);

		assert_int_equal(p.fam[fi].helps, 1);
		assert_int_equal(p.fam[fi].types, 1);
		assert_true(p.fam[fi].samples >= 1);
	}
	free(text);
}

static void counters_end_in_total_and_gauges_do_not(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 1);
	text = render(&s);
	parse(text, &p);
	for (int i = 0; i < p.nfam; i++) {
		size_t len = strlen(p.fam[i].name);
		bool total = len > 6 && strcmp(p.fam[i].name + len - 6, "_total") == 0;

		assert_int_equal(total, strcmp(p.fam[i].type, "counter") == 0);
	}
	assert_string_equal(p.fam[family_index(&p, "pghotd_hot_pages")].type, "gauge");
	assert_string_equal(p.fam[family_index(&p, "pghotd_up")].type, "gauge");
	free(text);
}

static void fresh_stats_show_every_series_at_zero_and_up_at_one(void **state)
{
	struct stats s;
	struct parsed p;
	char key[128], *text;
	time_t before = time(NULL), start;
	(void)state;

	stats_init(&s, 3);
	text = render(&s);
	parse(text, &p);
	assert_int_equal(u64_of(&p, "pghotd_up"), 1);
	start = (time_t)u64_of(&p, "pghotd_start_time_seconds");
	assert_true(start >= before && start <= time(NULL));
	assert_int_equal(u64_of(&p, "pghotd_config_reloads_total"), 0);
	assert_int_equal(u64_of(&p, "pghotd_hot_pages"), 0);
	for (int src = 0; src < SRC__COUNT; src++) {
		snprintf(key, sizeof(key), "pghotd_samples_lost_total{source=\"%s\"}",
			 stat_source_name((enum stat_source)src));
		assert_int_equal(u64_of(&p, key), 0);
		snprintf(key, sizeof(key), "pghotd_source_active{source=\"%s\"}",
			 stat_source_name((enum stat_source)src));
		assert_int_equal(u64_of(&p, key), 0);
	}
	for (int n = 0; n < 3; n++) {
		snprintf(key, sizeof(key), "pghotd_promoted_bytes_total{node=\"%d\"}", n);
		assert_int_equal(u64_of(&p, key), 0);
	}
	assert_null(value_of(&p, "pghotd_promoted_bytes_total{node=\"3\"}"));
	for (int r = 0; r < FAIL__COUNT; r++) {
		snprintf(key, sizeof(key), "pghotd_promote_failures_total{reason=\"%s\"}",
			 stat_fail_reason_name((enum stat_fail_reason)r));
		assert_int_equal(u64_of(&p, key), 0);
	}
	free(text);
}

static void label_names_are_stable(void **state)
{
	(void)state;

	assert_string_equal(stat_source_name(SRC_IBS), "ibs");
	assert_string_equal(stat_source_name(SRC_PEBS), "pebs");
	assert_string_equal(stat_source_name(SRC_ABIT), "abit");
	assert_string_equal(stat_fail_reason_name(FAIL_BUSY), "busy");
	assert_string_equal(stat_fail_reason_name(FAIL_NOMEM), "nomem");
	assert_string_equal(stat_fail_reason_name(FAIL_SHARED), "shared");
	assert_string_equal(stat_fail_reason_name(FAIL_GONE), "gone");
	assert_string_equal(stat_fail_reason_name(FAIL_NOPROC), "noproc");
	assert_string_equal(stat_fail_reason_name(FAIL_OTHER), "other");
	assert_string_equal(stat_source_name(SRC__COUNT), "unknown");
	assert_string_equal(stat_demote_reason_name(DEMOTE_FREE_TARGET), "free_target");
	assert_string_equal(stat_demote_reason_name(DEMOTE_EXCHANGE), "exchange");
	assert_string_equal(stat_demote_reason_name(DEMOTE__COUNT), "unknown");
}

static void demotions_render_by_node_and_reason_apart_from_promotions(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 2);
	stats_demoted(&s, 0, DEMOTE_EXCHANGE, 3, 3 * 4096);
	stats_demoted(&s, 0, DEMOTE_FREE_TARGET, 1, 2097152);
	stats_demoted(&s, 7, DEMOTE_EXCHANGE, 2, 8192); /* beyond nr_nodes: shown once used */
	stats_demoted(&s, 64, DEMOTE_EXCHANGE, 5, 5);	/* no such series: ignored */
	stats_demoted(&s, 1, DEMOTE__COUNT, 5, 5);	/* no such reason: ignored */
	stats_demote_fail(&s, FAIL_NOMEM, 4);
	stats_add(&s, ST_DEMOTE_RATE_LIMITED, 6);
	text = render(&s);
	parse(text, &p);
	assert_int_equal(u64_of(&p, "pghotd_demoted_pages_total{node=\"0\",reason=\"exchange\"}"),
			 3);
	assert_int_equal(
	    u64_of(&p, "pghotd_demoted_bytes_total{node=\"0\",reason=\"free_target\"}"), 2097152);
	assert_int_equal(
	    u64_of(&p, "pghotd_demoted_pages_total{node=\"1\",reason=\"free_target\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_demoted_pages_total{node=\"7\",reason=\"exchange\"}"),
			 2);
	assert_null(value_of(&p, "pghotd_demoted_pages_total{node=\"7\",reason=\"free_target\"}"));
	assert_int_equal(u64_of(&p, "pghotd_demote_failures_total{reason=\"nomem\"}"), 4);
	assert_int_equal(u64_of(&p, "pghotd_promote_failures_total{reason=\"nomem\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_demote_rate_limited_total"), 6);
	assert_int_equal(stats_promoted_pages_total(&s), 0);
	free(text);
}

static void rendered_values_match_what_was_added(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 2);
	stats_add(&s, ST_CONFIG_RELOADS, 3);
	stats_add(&s, ST_CONFIG_RELOAD_FAILURES, 1);
	stats_set(&s, ST_HOT_PAGES, 4242);
	stats_set(&s, ST_CONFIG_THRESHOLD, 7);
	stats_add(&s, ST_HOT_TABLE_REPLACEMENTS, 11);
	stats_add(&s, ST_PROMOTE_RATE_LIMITED, 13);
	stats_src_add(&s, SRC_IBS, SS_SAMPLES, 1000);
	stats_src_add(&s, SRC_IBS, SS_SAMPLES, 234);
	stats_src_add(&s, SRC_PEBS, SS_SAMPLES_LOST, 5);
	stats_src_add(&s, SRC_ABIT, SS_PAGES_SCANNED, 1u << 20);
	stats_source_active(&s, SRC_ABIT, 1);
	stats_promoted(&s, 1, 10, 40960);
	stats_promoted(&s, 1, 1, 2097152);
	stats_fail(&s, FAIL_BUSY, 2);
	stats_fail(&s, FAIL_SHARED, 9);
	text = render(&s);
	parse(text, &p);

	assert_int_equal(u64_of(&p, "pghotd_config_reloads_total"), 3);
	assert_int_equal(u64_of(&p, "pghotd_config_reload_failures_total"), 1);
	assert_int_equal(u64_of(&p, "pghotd_hot_pages"), 4242);
	assert_int_equal(u64_of(&p, "pghotd_promotion_threshold"), 7);
	assert_int_equal(u64_of(&p, "pghotd_hot_table_replacements_total"), 11);
	assert_int_equal(u64_of(&p, "pghotd_promote_rate_limited_total"), 13);
	assert_int_equal(u64_of(&p, "pghotd_samples_total{source=\"ibs\"}"), 1234);
	assert_int_equal(u64_of(&p, "pghotd_samples_total{source=\"pebs\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_samples_lost_total{source=\"pebs\"}"), 5);
	assert_int_equal(u64_of(&p, "pghotd_pages_scanned_total{source=\"abit\"}"), 1u << 20);
	assert_int_equal(u64_of(&p, "pghotd_source_active{source=\"abit\"}"), 1);
	assert_int_equal(u64_of(&p, "pghotd_source_active{source=\"ibs\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_promoted_pages_total{node=\"1\"}"), 11);
	assert_int_equal(u64_of(&p, "pghotd_promoted_bytes_total{node=\"1\"}"), 40960 + 2097152);
	assert_int_equal(u64_of(&p, "pghotd_promoted_pages_total{node=\"0\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_promote_failures_total{reason=\"busy\"}"), 2);
	assert_int_equal(u64_of(&p, "pghotd_promote_failures_total{reason=\"shared\"}"), 9);
	assert_int_equal(stats_promoted_pages_total(&s), 11);
	assert_int_equal(stats_promoted_bytes_total(&s), 40960 + 2097152);
	free(text);
}

static void scan_round_gauge_renders_seconds_from_microseconds(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 1);
	atomic_store(&s.src_scan_round_us[SRC_ABIT], 1500042);
	text = render(&s);
	parse(text, &p);
	assert_string_equal(value_of(&p, "pghotd_source_scan_round_seconds{source=\"abit\"}"),
			    "1.500042");
	assert_string_equal(value_of(&p, "pghotd_source_scan_round_seconds{source=\"ibs\"}"),
			    "0.000000");
	free(text);
}

static void node_slow_renders_each_node_and_ignores_a_bad_one(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 3);
	stats_node_slow(&s, 2, 1);
	stats_node_slow(&s, -1, 1);
	stats_node_slow(&s, STATS_MAX_NODES, 1);
	text = render(&s);
	parse(text, &p);
	assert_string_equal(value_of(&p, "pghotd_node_slow{node=\"0\"}"), "0");
	assert_string_equal(value_of(&p, "pghotd_node_slow{node=\"2\"}"), "1");
	assert_null(strstr(text, "pghotd_node_slow{node=\"3\"}"));
	free(text);
}

static void cpu_time_renders_as_a_counter_of_seconds(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 1);
	stats_set(&s, ST_CPU_US, 2000250);
	text = render(&s);
	parse(text, &p);
	assert_string_equal(value_of(&p, "pghotd_cpu_seconds_total"), "2.000250");
	assert_non_null(strstr(text, "# TYPE pghotd_cpu_seconds_total counter\n"));
	free(text);
}

static void node_beyond_nr_nodes_appears_once_used_and_invalid_node_is_ignored(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 1);
	stats_promoted(&s, 5, 3, 12288);
	stats_promoted(&s, -1, 100, 100);
	stats_promoted(&s, STATS_MAX_NODES, 100, 100);
	text = render(&s);
	parse(text, &p);
	assert_int_equal(u64_of(&p, "pghotd_promoted_pages_total{node=\"0\"}"), 0);
	assert_int_equal(u64_of(&p, "pghotd_promoted_pages_total{node=\"5\"}"), 3);
	assert_int_equal(u64_of(&p, "pghotd_promoted_bytes_total{node=\"5\"}"), 12288);
	assert_null(value_of(&p, "pghotd_promoted_pages_total{node=\"1\"}"));
	assert_int_equal(stats_promoted_pages_total(&s), 3);
	free(text);
}

static void out_of_range_fail_reason_counts_as_other(void **state)
{
	struct stats s;
	struct parsed p;
	char *text;
	(void)state;

	stats_init(&s, 1);
	stats_fail(&s, (enum stat_fail_reason)99, 4);
	text = render(&s);
	parse(text, &p);
	assert_int_equal(u64_of(&p, "pghotd_promote_failures_total{reason=\"other\"}"), 4);
	free(text);
}

static void nr_nodes_is_clamped_to_the_array(void **state)
{
	struct stats s;
	struct parsed p;
	char key[64], *text;
	(void)state;

	stats_init(&s, STATS_MAX_NODES + 10);
	assert_int_equal(s.nr_nodes, STATS_MAX_NODES);
	text = render(&s);
	parse(text, &p);
	snprintf(key, sizeof(key), "pghotd_promoted_pages_total{node=\"%d\"}", STATS_MAX_NODES - 1);
	assert_non_null(value_of(&p, key));
	free(text);
	stats_init(&s, -3);
	assert_int_equal(s.nr_nodes, 0);
}

#define MT_THREADS 4
#define MT_ITERS   100000

static void *mt_adder(void *arg)
{
	struct stats *s = arg;

	for (int i = 0; i < MT_ITERS; i++) {
		stats_add(s, ST_PROMOTE_CANDIDATES, 1);
		stats_src_add(s, SRC_PEBS, SS_SAMPLES, 3);
		stats_promoted(s, i & 1, 1, 4096);
		stats_fail(s, FAIL_GONE, 1);
	}
	return NULL;
}

static void counts_from_several_threads_are_all_kept(void **state)
{
	struct stats s;
	struct parsed p;
	pthread_t th[MT_THREADS];
	char *text;
	(void)state;

	stats_init(&s, 2);
	for (int t = 0; t < MT_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, mt_adder, &s), 0);
	/* Render while the adders run: the output must stay well-formed. */
	text = render(&s);
	parse(text, &p);
	free(text);
	for (int t = 0; t < MT_THREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);

	text = render(&s);
	parse(text, &p);
	assert_int_equal(u64_of(&p, "pghotd_promote_candidates_total"),
			 (uint64_t)MT_THREADS * MT_ITERS);
	assert_int_equal(u64_of(&p, "pghotd_samples_total{source=\"pebs\"}"),
			 (uint64_t)MT_THREADS * MT_ITERS * 3);
	assert_int_equal(u64_of(&p, "pghotd_promoted_pages_total{node=\"0\"}"),
			 (uint64_t)MT_THREADS * MT_ITERS / 2);
	assert_int_equal(u64_of(&p, "pghotd_promoted_bytes_total{node=\"1\"}"),
			 (uint64_t)MT_THREADS * MT_ITERS / 2 * 4096);
	assert_int_equal(u64_of(&p, "pghotd_promote_failures_total{reason=\"gone\"}"),
			 (uint64_t)MT_THREADS * MT_ITERS);
	free(text);
}

static void render_reports_a_failing_stream(void **state)
{
	struct stats s;
	FILE *f = fopen("/dev/full", "w");
	(void)state;

	if (!f)
		skip();
	stats_init(&s, 1);
	assert_int_equal(stats_render(&s, f), -EIO);
	fclose(f);
}

/* Backslash, double quote and newline are escaped as the text format requires; every other
 * byte, a tab and multi-byte UTF-8 among them, is written as it is. */
static void label_values_escape_backslash_quote_and_newline(void **state)
{
	static const char v[] = "/a\\b\"c\nd\te\xc3\xa9";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	assert_non_null(f);
	stats_label_value(f, v, sizeof(v) - 1);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "/a\\\\b\\\"c\\nd\te\xc3\xa9");
	free(buf);
}

/* Only UTF-8 can be a label value: a lone 0xff, a cut sequence, an overlong form, a surrogate
 * and a code point past U+10FFFF cannot; ASCII, two-, three- and four-byte forms can. */
static void label_values_must_be_utf8(void **state)
{
	static const char *const good[] = {"",
					   "/system.slice/a\\x2db.service",
					   "\xc3\xa9",
					   "\xe2\x82\xac",
					   "\xf0\x9f\x98\x80",
					   "\x01\n"};
	static const char *const bad[] = {"\xff",
					  "/a\xc3",
					  "\xc0\xaf",
					  "\xe0\x80\xaf",
					  "\xed\xa0\x80",
					  "\xf4\x90\x80\x80",
					  "\xf8\x88\x80\x80\x80"};
	(void)state;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(stats_label_valid(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_false(stats_label_valid(bad[i], strlen(bad[i])));
}

static int extra_family(void *ctx, FILE *f)
{
	fprintf(f, "# HELP x_extra An extra family.\n# TYPE x_extra gauge\nx_extra %d\n",
		*(int *)ctx);
	return 0;
}

/* The families of a higher layer come after the table's, and render with them. */
static void extra_families_render_after_the_others(void **state)
{
	struct stats s;
	int v = 7;
	char *text;
	(void)state;

	stats_init(&s, 1);
	stats_set_extra(&s, extra_family, &v);
	text = render(&s);
	assert_non_null(strstr(text, "\npghotd_processes_forgotten_total 0\n# HELP x_extra"));
	assert_non_null(strstr(text, "\nx_extra 7\n"));
	free(text);
}

/* --- stats_write_file --- */

static char tmpdir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_stats.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char path[PATH_MAX];
	(void)state;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	return rmdir(tmpdir);
}

/* Names of the directory's entries in readdir order, joined by ' '. */
static void dir_entries(char *buf, size_t size)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t used = 0;

	assert_non_null(d);
	buf[0] = '\0';
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		used +=
		    (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", e->d_name);
		assert_true(used < size);
	}
	closedir(d);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 16) - 1, f);
	assert_true(n > 0 && n < (1 << 16) - 1);
	fclose(f);
	return buf;
}

static void write_file_replaces_the_file_with_mode_0644_and_leaves_no_temp(void **state)
{
	struct stats s;
	struct stat st;
	char path[PATH_MAX], names[256], *expected, *got;
	mode_t old_umask;
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/pghotd.prom", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("stale\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);

	stats_init(&s, 2);
	stats_add(&s, ST_CONFIG_RELOADS, 17);
	old_umask = umask(077);
	assert_int_equal(stats_write_file(&s, path), 0);
	umask(old_umask);

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	expected = render(&s);
	got = slurp(path);
	assert_string_equal(got, expected);
	dir_entries(names, sizeof(names));
	assert_string_equal(names, "pghotd.prom");
	free(expected);
	free(got);
}

static void write_file_replaces_by_rename_so_readers_keep_the_old_inode(void **state)
{
	struct stats s;
	struct stat before, after;
	char path[PATH_MAX];
	int fd;
	(void)state;

	snprintf(path, sizeof(path), "%s/pghotd.prom", tmpdir);
	stats_init(&s, 1);
	assert_int_equal(stats_write_file(&s, path), 0);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &before), 0);
	assert_int_equal(stats_write_file(&s, path), 0);
	assert_int_equal(stat(path, &after), 0);
	/* A reader that opened the old file never sees a half-written one. */
	assert_true(before.st_ino != after.st_ino);
	assert_int_equal(fstat(fd, &before), 0);
	assert_int_equal(before.st_size, after.st_size);
	close(fd);
}

static void write_file_fails_with_enoent_when_the_directory_is_missing(void **state)
{
	struct stats s;
	char path[PATH_MAX], names[256];
	(void)state;

	snprintf(path, sizeof(path), "%s/missing/pghotd.prom", tmpdir);
	stats_init(&s, 1);
	assert_int_equal(stats_write_file(&s, path), -ENOENT);
	dir_entries(names, sizeof(names));
	assert_string_equal(names, "");
}

/* What another user may plant at the temporary name of old, path.tmp: a symlink, a hard link
 * to a file of theirs or ours, a FIFO. None of it is opened, followed or changed. */
static void plant_at_old_temp_name(const char *what, const char *tmp, const char *victim)
{
	FILE *f = fopen(victim, "w");

	assert_non_null(f);
	fputs("keep\n", f);
	fclose(f);
	assert_int_equal(chmod(victim, 0600), 0);
	if (strcmp(what, "symlink") == 0)
		assert_int_equal(symlink(victim, tmp), 0);
	else if (strcmp(what, "hardlink") == 0)
		assert_int_equal(link(victim, tmp), 0);
	else
		assert_int_equal(mkfifo(tmp, 0666), 0);
}

static void write_file_ignores_what_is_planted_at_a_fixed_temp_name(void **state)
{
	static const char *const what[] = {"symlink", "hardlink", "fifo"};
	char path[PATH_MAX], tmp[PATH_MAX], victim[PATH_MAX];
	struct stats s;
	struct stat st;
	(void)state;

	snprintf(path, sizeof(path), "%s/pghotd.prom", tmpdir);
	snprintf(tmp, sizeof(tmp), "%s/pghotd.prom.tmp", tmpdir);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	stats_init(&s, 1);
	for (size_t i = 0; i < sizeof(what) / sizeof(what[0]); i++) {
		plant_at_old_temp_name(what[i], tmp, victim);
		/* A writer that opened the FIFO would block here: the alarm fails the test. */
		alarm(5);
		assert_int_equal(stats_write_file(&s, path), 0);
		alarm(0);
		assert_int_equal(stat(victim, &st), 0);
		assert_int_equal(st.st_size, 5);
		assert_int_equal(st.st_mode & 07777, 0600);
		assert_int_equal(lstat(tmp, &st), 0);
		assert_int_equal(stat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_size > 5);
		unlink(tmp);
		unlink(victim);
		unlink(path);
	}
}

/* A directory someone else planted as a symbolic link (stats.file under a shared directory)
 * is not written through; one of root's (/var/run -> /run) is. */
static void write_file_refuses_a_directory_symlinked_by_another_user(void **state)
{
	char target[256], link_dir[256], path[PATH_MAX], names[256];
	struct stats s;
	(void)state;

	if (geteuid() != 0) {
		printf("skipped: lchown to another user needs root\n");
		skip();
	}
	snprintf(target, sizeof(target), "%s/elsewhere", tmpdir);
	snprintf(link_dir, sizeof(link_dir), "%s/shared", tmpdir);
	snprintf(path, sizeof(path), "%s/pghotd.prom", link_dir);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlink(target, link_dir), 0);
	stats_init(&s, 1);
	assert_int_equal(stats_write_file(&s, path), 0); /* ours */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(lchown(link_dir, 65534, 65534), 0);
	assert_int_equal(stats_write_file(&s, path), -ELOOP);
	snprintf(path, sizeof(path), "%s/pghotd.prom", target);
	assert_int_equal(access(path, F_OK), -1); /* nothing went into the target */
	dir_entries(names, sizeof(names));
	assert_true(strcmp(names, "elsewhere shared") == 0 ||
		    strcmp(names, "shared elsewhere") == 0);
	assert_int_equal(unlink(link_dir), 0);
	assert_int_equal(rmdir(target), 0);
}

static void write_file_onto_a_directory_fails_and_removes_the_temp(void **state)
{
	struct stats s;
	char path[PATH_MAX], names[256];
	(void)state;

	snprintf(path, sizeof(path), "%s/adir", tmpdir);
	assert_int_equal(mkdir(path, 0755), 0);
	stats_init(&s, 1);
	assert_int_equal(stats_write_file(&s, path), -EISDIR);
	dir_entries(names, sizeof(names));
	assert_string_equal(names, "adir");
	rmdir(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_family_has_help_and_type_exactly_once),
	    cmocka_unit_test(counters_end_in_total_and_gauges_do_not),
	    cmocka_unit_test(fresh_stats_show_every_series_at_zero_and_up_at_one),
	    cmocka_unit_test(label_names_are_stable),
	    cmocka_unit_test(rendered_values_match_what_was_added),
	    cmocka_unit_test(demotions_render_by_node_and_reason_apart_from_promotions),
	    cmocka_unit_test(scan_round_gauge_renders_seconds_from_microseconds),
	    cmocka_unit_test(cpu_time_renders_as_a_counter_of_seconds),
	    cmocka_unit_test(node_slow_renders_each_node_and_ignores_a_bad_one),
	    cmocka_unit_test(node_beyond_nr_nodes_appears_once_used_and_invalid_node_is_ignored),
	    cmocka_unit_test(out_of_range_fail_reason_counts_as_other),
	    cmocka_unit_test(nr_nodes_is_clamped_to_the_array),
	    cmocka_unit_test(counts_from_several_threads_are_all_kept),
	    cmocka_unit_test(render_reports_a_failing_stream),
	    cmocka_unit_test(label_values_escape_backslash_quote_and_newline),
	    cmocka_unit_test(label_values_must_be_utf8),
	    cmocka_unit_test(extra_families_render_after_the_others),
	    cmocka_unit_test_setup_teardown(
		write_file_replaces_the_file_with_mode_0644_and_leaves_no_temp, dir_setup,
		dir_teardown),
	    cmocka_unit_test_setup_teardown(
		write_file_replaces_by_rename_so_readers_keep_the_old_inode, dir_setup,
		dir_teardown),
	    cmocka_unit_test_setup_teardown(
		write_file_fails_with_enoent_when_the_directory_is_missing, dir_setup,
		dir_teardown),
	    cmocka_unit_test_setup_teardown(write_file_ignores_what_is_planted_at_a_fixed_temp_name,
					    dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(
		write_file_refuses_a_directory_symlinked_by_another_user, dir_setup, dir_teardown),
	    cmocka_unit_test_setup_teardown(write_file_onto_a_directory_fails_and_removes_the_temp,
					    dir_setup, dir_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
