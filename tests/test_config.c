/* Tests of the configuration module: the shipped file and man page against the key table,
 * defaults, every kind of rejected input with its exact message and line, cross-key checks,
 * unreadable files, and config_print() round trips. */
#include <errno.h>
#include <libconfig.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/config.h"
#include "base/log.h"

static struct config_errors errs;

static int teardown(void **state)
{
	(void)state;
	config_errors_clear(&errs);
	return 0;
}

static char *source_path(const char *rel)
{
	const char *root = getenv("PGHOTD_SOURCE_ROOT");
	char *p = NULL;

	assert_non_null(root);
	assert_true(asprintf(&p, "%s/%s", root, rel) > 0);
	return p;
}

static char *fixture_path(const char *rel)
{
	const char *root = getenv("PGHOTD_FIXTURES");
	char *p = NULL;

	assert_non_null(root);
	assert_true(asprintf(&p, "%s/config/%s", root, rel) > 0);
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	assert_non_null(f);
	assert_true(getdelim(&buf, &len, '\0', f) > 0);
	fclose(f);
	return buf;
}

/* Loads text that must be rejected; checks it left *out alone and gave exactly n errors. */
static void expect_rejected(const char *text, int n)
{
	struct pghotd_config *cfg = (struct pghotd_config *)&errs; /* sentinel: must stay */

	assert_int_equal(config_load_string(text, "t.conf", &cfg, &errs), -EINVAL);
	assert_ptr_equal(cfg, (struct pghotd_config *)&errs);
	for (int i = 0; errs.n != n && i < errs.n; i++)
		print_message("  error: %s\n", errs.msg[i]);
	assert_int_equal(errs.n, n);
	assert_int_equal(errs.dropped, 0);
}

static void expect_one_error(const char *text, const char *msg)
{
	expect_rejected(text, 1);
	assert_string_equal(errs.msg[0], msg);
}

static struct pghotd_config *load_ok(const char *text)
{
	struct pghotd_config *cfg = NULL;
	int r = config_load_string(text, "t.conf", &cfg, &errs);

	for (int i = 0; i < errs.n; i++)
		print_message("  unexpected error: %s\n", errs.msg[i]);
	assert_int_equal(r, 0);
	assert_int_equal(errs.n, 0);
	assert_non_null(cfg);
	return cfg;
}

/* ---- the shipped file and docs ---- */

static void shipped_conf_parses_to_the_defaults(void **state)
{
	char *path = source_path("conf/pghotd.conf");
	struct pghotd_config *cfg = NULL, *def = NULL;

	(void)state;
	assert_int_equal(config_load(path, &cfg, &errs), 0);
	assert_int_equal(errs.n, 0);
	assert_int_equal(config_new_defaults(&def), 0);
	assert_true(config_equal(cfg, def));
	assert_string_equal(cfg->path, path);
	assert_null(def->path);
	config_free(cfg);
	config_free(def);
	free(path);
}

static void shipped_conf_spells_out_every_key(void **state)
{
	char *path = source_path("conf/pghotd.conf");
	char key[128];
	config_t lc;

	(void)state;
	config_init(&lc);
	assert_true(config_read_file(&lc, path));
	assert_true(config_key_count() > 30);
	for (size_t i = 0; i < config_key_count(); i++) {
		assert_int_equal(config_key_path(i, key, sizeof(key)), 0);
		if (!config_lookup(&lc, key))
			fail_msg("conf/pghotd.conf lacks %s", key);
	}
	assert_int_equal(config_key_path(config_key_count(), key, sizeof(key)), -ERANGE);
	config_destroy(&lc);
	free(path);
}

/* The stats file line stays alone on its line: `make run` rewrites it with sed. */
static void shipped_conf_keeps_stats_file_on_its_own_line(void **state)
{
	char *path = source_path("conf/pghotd.conf");
	char *text = slurp(path);

	(void)state;
	assert_non_null(strstr(text, "\n\tfile = \"/run/pghotd/stats.prom\";\n"));
	free(text);
	free(path);
}

/* The man page names each key by its full path, not followed by more of a name (so
 * promotion.target is not satisfied by promotion.target_nodes). */
static void man_page_documents_every_key(void **state)
{
	char *path = source_path("man/pghotd.conf.5");
	char *text = slurp(path);
	char key[128];

	(void)state;
	for (size_t i = 0; i < config_key_count(); i++) {
		const char *p = text;
		bool found = false;

		assert_int_equal(config_key_path(i, key, sizeof(key)), 0);
		while (!found && (p = strstr(p, key))) {
			char next = p[strlen(key)];

			found = !(next == '_' || (next >= 'a' && next <= 'z'));
			p++;
		}
		if (!found)
			fail_msg("man/pghotd.conf.5 lacks %s", key);
	}
	free(text);
	free(path);
}

/* ---- defaults ---- */

static void defaults_match_the_documented_values(void **state)
{
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_int_equal(config_new_defaults(&cfg), 0);
	assert_int_equal(cfg->log_level, LOG_LVL_INFO);
	assert_false(cfg->dry_run);
	assert_int_equal(cfg->tiers.fast_nodes.n, 0);
	assert_int_equal(cfg->sources.ibs.enabled, SOURCE_AUTO);
	assert_int_equal(cfg->sources.ibs.period % 16, 0);
	assert_string_equal(cfg->sources.pebs.event, "");
	assert_int_equal(cfg->hot_table.capacity, 1048576);
	assert_int_equal(cfg->promotion.threshold, 2);
	assert_int_equal(cfg->promotion.window_ms, 3000);
	assert_int_equal(cfg->promotion.batch, 512);
	assert_int_equal(cfg->promotion.interval_ms, 100);
	assert_int_equal(cfg->promotion.target, TARGET_ACCESSING_NODE);
	assert_int_equal(cfg->sources.abit.mode, ABIT_MODE_REGIONS);
	assert_int_equal(cfg->sources.abit.max_regions, 1000);
	assert_string_equal(cfg->stats.file, "/run/pghotd/stats.prom");
	assert_int_equal(cfg->stats.interval_ms, 10000);
	assert_int_equal(cfg->stats.cgroups_max, 16);
	config_free(cfg);
}

static void empty_file_gives_the_defaults(void **state)
{
	struct pghotd_config *cfg = load_ok("# nothing here\n"), *def = NULL;

	(void)state;
	assert_int_equal(config_new_defaults(&def), 0);
	assert_true(config_equal(cfg, def));
	config_free(cfg);
	config_free(def);
}

static void absent_keys_keep_their_defaults(void **state)
{
	struct pghotd_config *cfg, *def = NULL;

	(void)state;
	cfg = load_ok("promotion = { batch = 64; };\nsources = { pebs = { ldlat = 64; }; };\n");
	assert_int_equal(cfg->promotion.batch, 64);
	assert_int_equal(cfg->sources.pebs.ldlat, 64);
	assert_int_equal(config_new_defaults(&def), 0);
	assert_false(config_equal(cfg, def));
	cfg->promotion.batch = def->promotion.batch;
	cfg->sources.pebs.ldlat = def->sources.pebs.ldlat;
	assert_true(config_equal(cfg, def));
	config_free(cfg);
	config_free(def);
}

static void accepts_every_kind_of_value(void **state)
{
	struct pghotd_config *cfg;

	(void)state;
	cfg = load_ok(
	    "log_level = \"debug\";\n"
	    "dry_run = true;\n"
	    "tiers = { fast_nodes = [0, 2]; slow_nodes = (1, 3); };\n"
	    "sources = { ibs = { enabled = \"off\"; period = 144; ring_pages = 1024; };\n"
	    "  pebs = { enabled = \"on\"; event = \"MEM_TRANS_RETIRED:LOAD_LATENCY\"; }; };\n"
	    "hot_table = { capacity = 2048L; };\n"
	    "promotion = { target = \"fixed\"; target_nodes = [2, 0]; rate_limit_mbps = 0; };\n"
	    "processes = { include_comm = [\"postgres\", \"pg_*\"]; exclude_cgroup = "
	    "(\"/system.slice/*\"); min_rss_mb = 100; };\n"
	    "stats = { file = \"/tmp/s.prom\"; cgroups_max = 0; };\n");
	assert_int_equal(cfg->log_level, LOG_LVL_DEBUG);
	assert_true(cfg->dry_run);
	assert_int_equal(cfg->tiers.fast_nodes.n, 2);
	assert_int_equal(cfg->tiers.fast_nodes.node[1], 2);
	assert_int_equal(cfg->tiers.slow_nodes.n, 2);
	assert_int_equal(cfg->tiers.slow_nodes.node[1], 3);
	assert_int_equal(cfg->sources.ibs.enabled, SOURCE_OFF);
	assert_int_equal(cfg->sources.ibs.period, 144);
	assert_int_equal(cfg->sources.ibs.ring_pages, 1024);
	assert_int_equal(cfg->sources.pebs.enabled, SOURCE_ON);
	assert_string_equal(cfg->sources.pebs.event, "MEM_TRANS_RETIRED:LOAD_LATENCY");
	assert_int_equal(cfg->hot_table.capacity, 2048);
	assert_int_equal(cfg->promotion.target, TARGET_FIXED);
	assert_int_equal(cfg->promotion.target_nodes.n, 2);
	assert_int_equal(cfg->promotion.target_nodes.node[0], 2);
	assert_int_equal(cfg->promotion.rate_limit_mbps, 0);
	assert_int_equal(cfg->processes.include_comm.n, 2);
	assert_string_equal(cfg->processes.include_comm.item[1], "pg_*");
	assert_int_equal(cfg->processes.exclude_cgroup.n, 1);
	assert_string_equal(cfg->processes.exclude_cgroup.item[0], "/system.slice/*");
	assert_int_equal(cfg->processes.min_rss_mb, 100);
	assert_string_equal(cfg->stats.file, "/tmp/s.prom");
	assert_int_equal(cfg->stats.cgroups_max, 0);
	config_free(cfg);
}

/* ---- rejected input, one kind at a time ---- */

static void syntax_error_names_file_and_line(void **state)
{
	(void)state;
	expect_one_error("log_level = \"info\";\n\npromotion = { batch = ; };\n",
			 "t.conf:3: syntax error");
}

static void duplicate_key_is_rejected(void **state)
{
	(void)state;
	expect_one_error("dry_run = true;\ndry_run = false;\n", "t.conf:2: duplicate setting name");
}

static void unknown_key_lists_the_allowed_keys(void **state)
{
	(void)state;
	expect_one_error("promotion = {\n\tbatch = 8;\n\ttreshold = 4;\n};\n",
			 "t.conf:3: promotion.treshold: unknown key; allowed keys in promotion: "
			 "threshold, window_ms, rate_limit_mbps, batch, target, target_nodes, "
			 "min_free_percent, cooldown_ms, interval_ms, max_retries, move_near_task");
}

static void unknown_top_level_key_lists_keys_and_sections(void **state)
{
	(void)state;
	expect_one_error(
	    "loglevel = \"info\";\n",
	    "t.conf:1: loglevel: unknown key; allowed top-level keys: log_level, "
	    "dry_run, tiers, sources, hot_table, promotion, demotion, processes, stats");
}

static void unknown_section_is_rejected(void **state)
{
	(void)state;
	expect_one_error(
	    "\npromoter = { batch = 8; };\n",
	    "t.conf:2: promoter: unknown section; allowed top-level keys: log_level, "
	    "dry_run, tiers, sources, hot_table, promotion, demotion, processes, stats");
}

static void unknown_nested_section_is_rejected(void **state)
{
	(void)state;
	expect_one_error("sources = {\n\tspe = { enabled = \"on\"; };\n};\n",
			 "t.conf:2: sources.spe: unknown section; allowed keys in sources: "
			 "cpu_budget_percent, ibs, pebs, abit, damon");
}

static void damon_and_abit_both_on_are_rejected(void **state)
{
	(void)state;
	expect_one_error("sources = { abit = { enabled = \"on\"; };\n"
			 "\tdamon = { enabled = \"on\"; }; };\n",
			 "t.conf:2: sources.damon.enabled: \"on\" with sources.abit.enabled "
			 "\"on\"; allowed one of them on, since both clear the pages' Accessed "
			 "bits");
}

static void damon_aggregation_below_two_samples_is_rejected(void **state)
{
	(void)state;
	expect_one_error("sources = { damon = { sample_us = 5000;\n\taggr_us = 9999; }; };\n",
			 "t.conf:2: sources.damon.aggr_us: 9999 is below twice "
			 "sources.damon.sample_us (5000); allowed 10000..60000000");
}

static void damon_max_regions_below_min_is_rejected(void **state)
{
	(void)state;
	expect_one_error("sources = { damon = { min_regions = 100;\n\tmax_regions = 99; }; };\n",
			 "t.conf:2: sources.damon.max_regions: 99 is below "
			 "sources.damon.min_regions (100); allowed 100..1000000");
}

static void unknown_key_in_nested_section_is_rejected(void **state)
{
	(void)state;
	expect_one_error("sources = { ibs = {\n\tperiode = 160; }; };\n",
			 "t.conf:2: sources.ibs.periode: unknown key; allowed keys in sources.ibs: "
			 "enabled, period, l3_miss_only, ring_pages");
}

static void string_for_integer_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("promotion = { batch = \"512\"; };\n",
			 "t.conf:1: promotion.batch: wrong type (string); allowed an integer, "
			 "1..512 (pages)");
}

static void float_for_integer_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("promotion = { threshold = 2.0; };\n",
			 "t.conf:1: promotion.threshold: wrong type (float); allowed an integer, "
			 "1..255 (accesses)");
}

static void integer_for_boolean_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("dry_run = 1;\n",
			 "t.conf:1: dry_run: wrong type (integer); allowed true or false");
}

static void scalar_for_section_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("stats = 5;\n",
			 "t.conf:1: stats: wrong type (integer); allowed a group of keys: file, "
			 "interval_ms, cgroups_max");
}

static void group_for_scalar_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("hot_table = { capacity = { value = 5; }; };\n",
			 "t.conf:1: hot_table.capacity: wrong type (group); allowed an integer, "
			 "1024..268435456 (entries)");
}

static void integer_for_enum_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("promotion = { target = 1; };\n",
			 "t.conf:1: promotion.target: wrong type (integer); allowed one of "
			 "\"accessing-node\", \"fixed\"");
}

static void strings_for_node_list_are_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("tiers = { fast_nodes = [\"0\"]; };\n",
			 "t.conf:1: tiers.fast_nodes: wrong type (array); allowed an array of "
			 "integers 0..63 (node ids)");
}

static void mixed_pattern_list_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("processes = { include_comm = (\"a\", 1); };\n",
			 "t.conf:1: processes.include_comm: wrong type (list); allowed an array "
			 "of at most 32 strings (fnmatch(3) patterns)");
}

static void integer_for_string_is_a_wrong_type(void **state)
{
	(void)state;
	expect_one_error("stats = { file = 1; };\n",
			 "t.conf:1: stats.file: wrong type (integer); allowed a string, an "
			 "absolute path");
}

static void too_large_integer_is_out_of_range(void **state)
{
	(void)state;
	expect_one_error("\n\npromotion = {\n\tbatch = 600;\n};\n",
			 "t.conf:4: promotion.batch: 600 is out of range; allowed 1..512 (pages)");
}

static void negative_integer_is_out_of_range(void **state)
{
	(void)state;
	expect_one_error("promotion = { cooldown_ms = -1; };\n",
			 "t.conf:1: promotion.cooldown_ms: -1 is out of range; allowed "
			 "0..86400000 (ms)");
}

static void huge_64_bit_integer_is_out_of_range(void **state)
{
	(void)state;
	expect_one_error("hot_table = { capacity = 8589934592L; };\n",
			 "t.conf:1: hot_table.capacity: 8589934592 is out of range; allowed "
			 "1024..268435456 (entries)");
}

static void boundary_values_are_accepted(void **state)
{
	struct pghotd_config *cfg;

	(void)state;
	cfg = load_ok("promotion = { batch = 1; threshold = 255; min_free_percent = 0; };\n"
		      "sources = { ibs = { period = 0x7FFFFF0; }; cpu_budget_percent = 100; };\n");
	assert_int_equal(cfg->promotion.batch, 1);
	assert_int_equal(cfg->promotion.threshold, 255);
	assert_int_equal(cfg->sources.ibs.period, 0x7FFFFF0);
	assert_int_equal(cfg->sources.cpu_budget_percent, 100);
	config_free(cfg);
}

static void bad_enum_string_lists_the_values(void **state)
{
	(void)state;
	expect_one_error("sources = { abit = { enabled = \"yes\"; }; };\n",
			 "t.conf:1: sources.abit.enabled: \"yes\" is not a known value; allowed "
			 "\"auto\", \"on\", \"off\"");
}

static void abit_mode_and_max_regions_are_validated(void **state)
{
	struct pghotd_config *cfg;

	(void)state;
	expect_one_error("sources = { abit = { mode = \"sampled\"; }; };\n",
			 "t.conf:1: sources.abit.mode: \"sampled\" is not a known value; allowed "
			 "\"full\", \"regions\"");
	expect_one_error("sources = { abit = { max_regions = 8; }; };\n",
			 "t.conf:1: sources.abit.max_regions: 8 is out of range; allowed 16..65536 "
			 "(regions)");
	cfg = load_ok("sources = { abit = { mode = \"full\"; max_regions = 16; }; };\n");
	assert_int_equal(cfg->sources.abit.mode, ABIT_MODE_FULL);
	assert_int_equal(cfg->sources.abit.max_regions, 16);
	config_free(cfg);
}

static void bad_log_level_lists_the_levels(void **state)
{
	(void)state;
	expect_one_error("log_level = \"verbose\";\n",
			 "t.conf:1: log_level: \"verbose\" is not a known value; allowed \"err\", "
			 "\"warning\", \"notice\", \"info\", \"debug\"");
}

static void ibs_period_must_be_a_multiple_of_16(void **state)
{
	(void)state;
	expect_one_error("sources = { ibs = { period = 100001; }; };\n",
			 "t.conf:1: sources.ibs.period: 100001 is not a multiple of 16; allowed "
			 "144..134217712 in steps of 16 (ops)");
}

static void ibs_period_below_0x90_is_out_of_range(void **state)
{
	(void)state;
	expect_one_error("sources = { ibs = { period = 128; }; };\n",
			 "t.conf:1: sources.ibs.period: 128 is out of range; allowed "
			 "144..134217712 in steps of 16 (ops)");
}

static void ring_pages_must_be_a_power_of_two(void **state)
{
	(void)state;
	expect_one_error("sources = { pebs = { ring_pages = 48; }; };\n",
			 "t.conf:1: sources.pebs.ring_pages: 48 is not a power of two; allowed a "
			 "power of two in 1..1024 (pages)");
}

static void node_id_above_63_is_out_of_range(void **state)
{
	(void)state;
	expect_one_error("tiers = {\n\tslow_nodes = [1, 64];\n};\n",
			 "t.conf:2: tiers.slow_nodes: node 64 is out of range; allowed 0..63");
}

static void node_listed_twice_is_rejected(void **state)
{
	(void)state;
	expect_one_error("promotion = { target_nodes = [0, 1, 0]; };\n",
			 "t.conf:1: promotion.target_nodes: node 0 is listed twice; allowed each "
			 "node once");
}

static void empty_pattern_is_rejected(void **state)
{
	(void)state;
	expect_one_error("processes = { exclude_comm = [\"a\", \"\"]; };\n",
			 "t.conf:1: processes.exclude_comm: \"\" is empty; allowed fnmatch(3) "
			 "patterns");
}

static void more_than_32_patterns_are_rejected(void **state)
{
	char text[1024] = "processes = { include_cgroup = [";

	(void)state;
	for (int i = 0; i < 33; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\"/g%d\"",
			 i ? ", " : "", i);
	strcat(text, "]; };\n");
	expect_one_error(text, "t.conf:1: processes.include_cgroup: 33 patterns; allowed at "
			       "most 32");
}

static void relative_stats_path_is_rejected(void **state)
{
	(void)state;
	expect_one_error("stats = {\n\tfile = \"stats.prom\";\n};\n",
			 "t.conf:2: stats.file: \"stats.prom\" is not an absolute path; allowed an "
			 "absolute path");
}

static void pebs_event_with_spaces_is_rejected(void **state)
{
	(void)state;
	expect_one_error(
	    "sources = { pebs = { event = \"mem loads\"; }; };\n",
	    "t.conf:1: sources.pebs.event: \"mem loads\" contains white space; allowed "
	    "a libpfm4 event name, or \"\" to choose per CPU model");
}

/* ---- checks across keys ---- */

static void fixed_target_needs_target_nodes(void **state)
{
	(void)state;
	expect_one_error("promotion = {\n\tbatch = 8;\n\ttarget = \"fixed\";\n};\n",
			 "t.conf:3: promotion.target: \"fixed\" needs promotion.target_nodes; "
			 "allowed \"fixed\" with a non-empty target_nodes, or \"accessing-node\"");
}

static void demotion_idle_time_below_the_promotion_cooldown_is_rejected(void **state)
{
	(void)state;
	expect_one_error(
	    "promotion = { cooldown_ms = 5000; };\ndemotion = {\n\tmin_idle_ms = 4000;\n};\n",
	    "t.conf:3: demotion.min_idle_ms: 4000 is below promotion.cooldown_ms (5000); "
	    "allowed 5000..86400000, so a promoted page is not demoted within its "
	    "cooldown");
}

static void raised_cooldown_with_the_default_idle_time_loads_and_lengthens_it(void **state)
{
	struct pghotd_config *cfg = load_ok("promotion = { cooldown_ms = 90000; };\n"), *again;
	struct config_errors errs = {0};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	/* The effective value is stored, so the --check-config printout loads again to the same
	 * configuration (fuzz_config found a printout that was refused). */
	assert_int_equal(cfg->demotion.min_idle_ms, 90000);
	assert_int_equal(config_demotion_idle_ms(cfg), 90000);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	config_print(cfg, f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(config_load_string(text, "printed.conf", &again, &errs), 0);
	assert_true(config_equal(cfg, again));
	config_free(again);
	free(text);
	cfg->promotion.cooldown_ms = 1000;
	assert_int_equal(config_demotion_idle_ms(cfg), 90000);
	config_free(cfg);
}

static void demotion_keys_take_their_values(void **state)
{
	struct pghotd_config *cfg =
	    load_ok("promotion = { cooldown_ms = 1000; };\n"
		    "demotion = { enabled = false; free_target_percent = 15; min_idle_ms = 1000; "
		    "rate_limit_mbps = 0; };\n");

	(void)state;
	assert_false(cfg->demotion.enabled);
	assert_int_equal(cfg->demotion.free_target_percent, 15);
	assert_int_equal(cfg->demotion.min_idle_ms, 1000);
	assert_int_equal(cfg->demotion.rate_limit_mbps, 0);
	config_free(cfg);
}

static void node_in_both_tiers_is_rejected(void **state)
{
	(void)state;
	expect_one_error("tiers = {\n\tfast_nodes = [0, 1];\n\tslow_nodes = [1, 2];\n};\n",
			 "t.conf:3: tiers.slow_nodes: node 1 is also in tiers.fast_nodes; allowed "
			 "each node in one tier only");
}

static void slow_target_node_is_rejected(void **state)
{
	(void)state;
	expect_one_error("tiers = { slow_nodes = [2]; };\n"
			 "promotion = {\n\ttarget = \"fixed\";\n\ttarget_nodes = [0, 2];\n};\n",
			 "t.conf:4: promotion.target_nodes: node 2 is in tiers.slow_nodes; allowed "
			 "fast nodes only");
}

/* A rejected target_nodes stays empty; "fixed needs target_nodes" would be a false report. */
static void rejected_key_is_left_out_of_checks_across_keys(void **state)
{
	(void)state;
	expect_one_error(
	    "promotion = {\n\ttarget = \"fixed\";\n\ttarget_nodes = [99];\n};\n",
	    "t.conf:3: promotion.target_nodes: node 99 is out of range; allowed 0..63");
}

/* ---- several errors, and the error list ---- */

static void collects_every_error_in_file_order(void **state)
{
	(void)state;
	expect_rejected("dry_run = \"no\";\n"
			"promotion = {\n"
			"\tbatch = 0;\n"
			"\tthreshold = 3;\n"
			"\tbogus = 1;\n"
			"};\n"
			"stats = { interval_ms = 5; };\n",
			4);
	assert_string_equal(errs.msg[0], "t.conf:1: dry_run: wrong type (string); allowed true "
					 "or false");
	assert_string_equal(errs.msg[1], "t.conf:3: promotion.batch: 0 is out of range; allowed "
					 "1..512 (pages)");
	assert_non_null(strstr(errs.msg[2], "t.conf:5: promotion.bogus: unknown key;"));
	assert_string_equal(errs.msg[3], "t.conf:7: stats.interval_ms: 5 is out of range; "
					 "allowed 100..3600000 (ms)");
}

static void errors_beyond_the_list_are_counted_as_dropped(void **state)
{
	struct pghotd_config *cfg = NULL;
	char text[4096] = "";

	(void)state;
	for (int i = 0; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), "k%d = 1;\n", i);
	assert_int_equal(config_load_string(text, "t.conf", &cfg, &errs), -EINVAL);
	assert_null(cfg);
	assert_int_equal(errs.n, 32);
	assert_int_equal(errs.dropped, 8);
	assert_non_null(strstr(errs.msg[31], "t.conf:32: k31: unknown key"));
}

static void a_new_load_clears_earlier_errors(void **state)
{
	struct pghotd_config *cfg = NULL;

	(void)state;
	expect_rejected("a = 1;\nb = 2;\n", 2);
	cfg = load_ok("dry_run = true;\n");
	config_free(cfg);
}

static void rejects_without_an_error_list(void **state)
{
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_int_equal(config_load_string("a = 1;\n", "t.conf", &cfg, NULL), -EINVAL);
	assert_null(cfg);
}

/* ---- files ---- */

static void missing_file_gives_enoent_and_names_it(void **state)
{
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_int_equal(config_load("/nonexistent/pghotd.conf", &cfg, &errs), -ENOENT);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0],
			    "/nonexistent/pghotd.conf: cannot read: No such file or directory");
}

static void directory_is_not_a_config_file(void **state)
{
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_int_equal(config_load("/", &cfg, &errs), -EISDIR);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], "/: cannot read: Is a directory");
}

/* Child side of the EACCES test: 0 when the load failed the expected way. */
static int load_expecting_eacces(const char *path)
{
	struct config_errors e = {0};
	struct pghotd_config *cfg = NULL;
	int r = config_load(path, &cfg, &e);
	bool ok = r == -EACCES && !cfg && e.n == 1 &&
		  strstr(e.msg[0], ": cannot read: Permission denied") != NULL;

	config_errors_clear(&e);
	return ok ? 0 : 1;
}

/* Root reads any file whatever its mode, so as root the load runs in a child that has
 * dropped to nobody. */
static void unreadable_file_gives_eacces(void **state)
{
	char path[] = "/tmp/pghotd-config-XXXXXX";
	int fd, status = -1;
	pid_t pid;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(chmod(path, 0), 0);
	if (geteuid() != 0) {
		assert_int_equal(load_expecting_eacces(path), 0);
		unlink(path);
		return;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		_exit(load_expecting_eacces(path));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	unlink(path);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void file_errors_name_the_file(void **state)
{
	char *path = fixture_path("bad-several.conf");
	struct pghotd_config *cfg = NULL;
	char *want = NULL;

	(void)state;
	assert_int_equal(config_load(path, &cfg, &errs), -EINVAL);
	assert_null(cfg);
	assert_int_equal(errs.n, 3);
	assert_true(asprintf(&want,
			     "%s:9: promotion.batch: 1024 is out of range; allowed "
			     "1..512 (pages)",
			     path) > 0);
	assert_string_equal(errs.msg[0], want);
	free(want);
	assert_true(asprintf(&want, "%s:14: processes.min_rss: unknown key;", path) > 0);
	assert_memory_equal(errs.msg[1], want, strlen(want));
	free(want);
	assert_true(asprintf(&want, "%s:6: promotion.target: \"fixed\" needs", path) > 0);
	assert_memory_equal(errs.msg[2], want, strlen(want));
	free(want);
	free(path);
}

static void syntax_error_in_a_file_names_it(void **state)
{
	char *path = fixture_path("bad-syntax.conf");
	struct pghotd_config *cfg = NULL;
	char *want = NULL;

	(void)state;
	assert_int_equal(config_load(path, &cfg, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_true(asprintf(&want, "%s:5: syntax error", path) > 0);
	assert_string_equal(errs.msg[0], want);
	free(want);
	free(path);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* An error in an @include'd file names that file and its own line, not the includer's. */
static void errors_in_an_included_file_name_that_file(void **state)
{
	char dir[] = "/tmp/pghotd-config-XXXXXX", *top = NULL, *inc = NULL, *text = NULL;
	char *want = NULL;
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&top, "%s/top.conf", dir) > 0);
	assert_true(asprintf(&inc, "%s/inc.conf", dir) > 0);
	assert_true(asprintf(&text, "dry_run = true;\n@include \"%s\"\n", inc) > 0);
	write_file(top, text);
	write_file(inc, "\n\nstats = { interval_ms = 1; };\n");
	assert_int_equal(config_load(top, &cfg, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_true(asprintf(&want,
			     "%s:3: stats.interval_ms: 1 is out of range; allowed "
			     "100..3600000 (ms)",
			     inc) > 0);
	assert_string_equal(errs.msg[0], want);
	unlink(inc);
	unlink(top);
	rmdir(dir);
	free(want);
	free(text);
	free(inc);
	free(top);
}

/* libconfig 1.5 keeps an integer without L in 32 bits: 4294967296 read as 0 (unlimited), as
 * 4294967298 as 2. Each must be refused at its own value. */
static void integers_beyond_32_bits_are_range_checked_as_written(void **state)
{
	(void)state;
	expect_one_error("promotion = {\n  rate_limit_mbps = 4294967296;\n};\n",
			 "t.conf:2: promotion.rate_limit_mbps: 4294967296 is out of range; allowed "
			 "0..1048576 (MiB/s)");
	config_errors_clear(&errs);
	expect_one_error("promotion = { batch = 4294967298; };\n",
			 "t.conf:1: promotion.batch: 4294967298 is out of range; allowed 1..512 "
			 "(pages)");
	config_errors_clear(&errs);
	expect_one_error("hot_table = { capacity = 0x100000400; };\n",
			 "t.conf:1: hot_table.capacity: 0x100000400 is out of range; allowed "
			 "1024..268435456 (entries)");
	config_errors_clear(&errs);
	expect_one_error("promotion = { cooldown_ms = -4294967295; };\n",
			 "t.conf:1: promotion.cooldown_ms: -4294967295 is out of range; allowed "
			 "0..86400000 (ms)");
	config_errors_clear(&errs);
	/* 32- and 64-bit values in one array (libconfig refuses mixed element types) */
	expect_one_error("tiers = { slow_nodes = [1, 4294967297]; };\n",
			 "t.conf:1: tiers.slow_nodes: node 4294967297 is out of range; allowed "
			 "0..63");
}

static void an_integer_beyond_64_bits_is_named_as_written_not_as_minus_one(void **state)
{
	(void)state;
	expect_one_error("# big\nhot_table = {\n  capacity = 99999999999999999999;\n};\n",
			 "t.conf:3: 99999999999999999999 does not fit in 64 bits; allowed integers "
			 "in -9223372036854775808..9223372036854775807");
}

/* Strings, comments and names are not numbers; an L written stays one L; floats stay. */
static void only_integer_tokens_are_widened(void **state)
{
	struct pghotd_config *cfg;

	(void)state;
	cfg = load_ok("# 99999999999999999999\n/* 99999999999999999999\n */\n"
		      "processes = { include_comm = [\"a99999999999999999999\", \"\\\"1\"]; "
		      "min_rss_mb = 16L; };\n"
		      "promotion = { batch = 0x10; threshold = +3; }; // 99999999999999999999\n");
	assert_int_equal(cfg->processes.min_rss_mb, 16);
	assert_int_equal(cfg->promotion.batch, 16);
	assert_int_equal(cfg->promotion.threshold, 3);
	assert_string_equal(cfg->processes.include_comm.item[1], "\"1");
	config_free(cfg);
	expect_one_error(
	    "promotion = { batch = 1.5e3; };\n",
	    "t.conf:1: promotion.batch: wrong type (float); allowed an integer, 1..512 "
	    "(pages)");
}

/* libconfig stops at a NUL as if the file ended: the batch below was silently dropped. */
static void a_nul_byte_is_an_error_naming_its_line(void **state)
{
	static const char text[] = "dry_run = true;\n\n# x\0y\npromotion = { batch = 9999; };\n";
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_int_equal(config_load_bytes(text, sizeof(text) - 1, "t.conf", &cfg, &errs), -EINVAL);
	assert_null(cfg);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], "t.conf:3: a NUL byte; allowed text only (libconfig would "
					 "ignore the rest of the file)");
}

static void a_fifo_is_not_a_config_file_and_fails_at_once(void **state)
{
	char dir[] = "/tmp/pghotd-config-XXXXXX", fifo[64], want[128];
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo.conf", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(5); /* fopen() of a FIFO blocks until a writer comes */
	assert_int_equal(config_load(fifo, &cfg, &errs), -EBADFD);
	alarm(0);
	assert_null(cfg);
	snprintf(want, sizeof(want), "%s: cannot read: not a regular file", fifo);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], want);
	unlink(fifo);
	rmdir(dir);
}

/* A relative @include is found beside the file that names it, wherever pghotd runs, also
 * from an included file; one that fails names itself and the path tried; one that is a FIFO
 * fails at once. */
static void includes_resolve_beside_their_includer_and_name_what_failed(void **state)
{
	char dir[] = "/tmp/pghotd-config-XXXXXX", top[64], sub[64], inc[64], deep[64];
	char cwd[4096], want[256];
	struct pghotd_config *cfg = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(top, sizeof(top), "%s/top.conf", dir);
	snprintf(sub, sizeof(sub), "%s/d", dir);
	snprintf(inc, sizeof(inc), "%s/d/inc.conf", dir);
	snprintf(deep, sizeof(deep), "%s/d/deep.conf", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(top, "promotion = {\n  @include \"d/inc.conf\"\n  batch = 8;\n};\n");
	write_file(inc, "threshold = 7;\n@include \"deep.conf\"\n");
	write_file(deep, "\nwindow_ms = 5;\n");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(config_load(top, &cfg, &errs), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s:2: promotion.window_ms: 5 is out of range; allowed "
		 "10..3600000 (ms)",
		 deep);
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], want);
	write_file(deep, "\nwindow_ms = 50;\n");
	assert_int_equal(config_load(top, &cfg, &errs), 0);
	assert_int_equal(cfg->promotion.threshold, 7);
	assert_int_equal(cfg->promotion.window_ms, 50);
	assert_int_equal(cfg->promotion.batch, 8);
	config_free(cfg);
	cfg = NULL;

	unlink(deep);
	assert_int_equal(config_load(top, &cfg, &errs), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: @include \"deep.conf\": cannot read %s: %s", inc, deep,
		 strerror(ENOENT));
	assert_int_equal(errs.n, 1);
	assert_string_equal(errs.msg[0], want);
	assert_int_equal(mkfifo(deep, 0600), 0);
	alarm(5);
	assert_int_equal(config_load(top, &cfg, &errs), -EINVAL);
	alarm(0);
	snprintf(want, sizeof(want),
		 "%s:2: @include \"deep.conf\": cannot read %s: not a regular "
		 "file",
		 inc, deep);
	assert_string_equal(errs.msg[0], want);
	assert_null(cfg);
	assert_int_equal(chdir(cwd), 0);
	unlink(deep);
	unlink(inc);
	unlink(top);
	rmdir(sub);
	rmdir(dir);
}

/* ---- config_print ---- */

static struct pghotd_config *print_and_reload(const struct pghotd_config *cfg)
{
	struct pghotd_config *back = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	config_print(cfg, f);
	assert_int_equal(fclose(f), 0);
	back = load_ok(text);
	free(text);
	return back;
}

static void print_of_defaults_reads_back_equal(void **state)
{
	struct pghotd_config *def = NULL, *back;

	(void)state;
	assert_int_equal(config_new_defaults(&def), 0);
	back = print_and_reload(def);
	assert_true(config_equal(def, back));
	config_free(def);
	config_free(back);
}

/* Every key off its default, and strings that need escaping. */
static void print_of_a_changed_config_reads_back_equal(void **state)
{
	struct pghotd_config *cfg, *back, *def = NULL;

	(void)state;
	cfg = load_ok(
	    "log_level = \"err\"; dry_run = true;\n"
	    "tiers = { fast_nodes = [3, 1]; slow_nodes = [5]; };\n"
	    "sources = { cpu_budget_percent = 9;\n"
	    " ibs = { enabled = \"on\"; period = 65536; l3_miss_only = false; "
	    "ring_pages = 8; };\n"
	    " pebs = { enabled = \"off\"; period = 333; ldlat = 30; stores = true; "
	    "event = \"a\\\"b\\\\c\"; ring_pages = 2; };\n"
	    " abit = { enabled = \"on\"; scan_interval_ms = 50; max_pages_per_sec = 9; "
	    "max_cpu_percent = 20; "
	    "mode = \"full\"; max_regions = 64; max_watched_mib = 64; full_scan_mib = 3; };\n"
	    " damon = { enabled = \"off\"; sample_us = 1000; aggr_us = 50000; min_regions = 20; "
	    "max_regions = 500; }; "
	    "};\n"
	    "hot_table = { capacity = 4096; };\n"
	    "promotion = { threshold = 7; window_ms = 20; rate_limit_mbps = 0; batch = 3; "
	    "target = \"fixed\"; target_nodes = [1]; min_free_percent = 0; "
	    "cooldown_ms = 0; interval_ms = 7; max_retries = 0; move_near_task = false; };\n"
	    "demotion = { enabled = false; free_target_percent = 12; min_idle_ms = 5000; "
	    "rate_limit_mbps = 9; };\n"
	    "processes = { include_comm = [\"x*\"]; exclude_comm = [\"tab\\there\"]; "
	    "include_cgroup = [\"/a\", \"/b\"]; exclude_cgroup = [\"/c\"]; "
	    "min_rss_mb = 1; };\n"
	    "stats = { file = \"/x/y z.prom\"; interval_ms = 100; cgroups_max = 1024; };\n");
	assert_string_equal(cfg->sources.pebs.event, "a\"b\\c");
	back = print_and_reload(cfg);
	assert_true(config_equal(cfg, back));
	assert_string_equal(back->processes.exclude_comm.item[0], "tab\there");
	assert_int_equal(config_new_defaults(&def), 0);
	/* The input above moved every key off its default, so the round trip covers them all. */
	for (size_t i = 0; i < config_key_count(); i++) {
		char key[128];

		assert_int_equal(config_key_path(i, key, sizeof(key)), 0);
		if (config_key_equal(i, cfg, def))
			fail_msg("the round-trip input leaves %s at its default", key);
		if (!config_key_equal(i, cfg, back))
			fail_msg("%s changed in the round trip", key);
	}
	config_free(def);
	config_free(cfg);
	config_free(back);
}

static void print_writes_every_key_once(void **state)
{
	struct pghotd_config *def = NULL;
	char *text = NULL, key[128];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	config_t lc;

	(void)state;
	assert_int_equal(config_new_defaults(&def), 0);
	config_print(def, f);
	assert_int_equal(fclose(f), 0);
	config_init(&lc);
	assert_true(config_read_string(&lc, text));
	for (size_t i = 0; i < config_key_count(); i++) {
		assert_int_equal(config_key_path(i, key, sizeof(key)), 0);
		if (!config_lookup(&lc, key))
			fail_msg("config_print lacks %s", key);
	}
	assert_non_null(strstr(text, "\tbatch = 512; # 1..512 (pages)\n"));
	config_destroy(&lc);
	config_free(def);
	free(text);
}

static void config_equal_sees_a_changed_pattern(void **state)
{
	struct pghotd_config *a = load_ok("processes = { include_comm = [\"a\"]; };\n");
	struct pghotd_config *b = load_ok("processes = { include_comm = [\"b\"]; };\n");

	(void)state;
	assert_false(config_equal(a, b));
	config_free(a);
	config_free(b);
}

static void mode_names_match_the_file_values(void **state)
{
	(void)state;
	assert_string_equal(source_mode_name(SOURCE_AUTO), "auto");
	assert_string_equal(source_mode_name(SOURCE_OFF), "off");
	assert_string_equal(target_mode_name(TARGET_ACCESSING_NODE), "accessing-node");
	assert_string_equal(target_mode_name(TARGET_FIXED), "fixed");
}

#define T(f) cmocka_unit_test_teardown(f, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(shipped_conf_parses_to_the_defaults),
	    T(shipped_conf_spells_out_every_key),
	    T(shipped_conf_keeps_stats_file_on_its_own_line),
	    T(man_page_documents_every_key),
	    T(defaults_match_the_documented_values),
	    T(abit_mode_and_max_regions_are_validated),
	    T(empty_file_gives_the_defaults),
	    T(absent_keys_keep_their_defaults),
	    T(accepts_every_kind_of_value),
	    T(syntax_error_names_file_and_line),
	    T(duplicate_key_is_rejected),
	    T(unknown_key_lists_the_allowed_keys),
	    T(unknown_top_level_key_lists_keys_and_sections),
	    T(unknown_section_is_rejected),
	    T(unknown_nested_section_is_rejected),
	    T(unknown_key_in_nested_section_is_rejected),
	    T(damon_and_abit_both_on_are_rejected),
	    T(damon_aggregation_below_two_samples_is_rejected),
	    T(damon_max_regions_below_min_is_rejected),
	    T(string_for_integer_is_a_wrong_type),
	    T(float_for_integer_is_a_wrong_type),
	    T(integer_for_boolean_is_a_wrong_type),
	    T(scalar_for_section_is_a_wrong_type),
	    T(group_for_scalar_is_a_wrong_type),
	    T(integer_for_enum_is_a_wrong_type),
	    T(strings_for_node_list_are_a_wrong_type),
	    T(mixed_pattern_list_is_a_wrong_type),
	    T(integer_for_string_is_a_wrong_type),
	    T(too_large_integer_is_out_of_range),
	    T(negative_integer_is_out_of_range),
	    T(huge_64_bit_integer_is_out_of_range),
	    T(boundary_values_are_accepted),
	    T(bad_enum_string_lists_the_values),
	    T(bad_log_level_lists_the_levels),
	    T(ibs_period_must_be_a_multiple_of_16),
	    T(ibs_period_below_0x90_is_out_of_range),
	    T(ring_pages_must_be_a_power_of_two),
	    T(node_id_above_63_is_out_of_range),
	    T(node_listed_twice_is_rejected),
	    T(empty_pattern_is_rejected),
	    T(more_than_32_patterns_are_rejected),
	    T(relative_stats_path_is_rejected),
	    T(pebs_event_with_spaces_is_rejected),
	    T(fixed_target_needs_target_nodes),
	    T(demotion_idle_time_below_the_promotion_cooldown_is_rejected),
	    T(raised_cooldown_with_the_default_idle_time_loads_and_lengthens_it),
	    T(demotion_keys_take_their_values),
	    T(node_in_both_tiers_is_rejected),
	    T(slow_target_node_is_rejected),
	    T(rejected_key_is_left_out_of_checks_across_keys),
	    T(collects_every_error_in_file_order),
	    T(errors_beyond_the_list_are_counted_as_dropped),
	    T(a_new_load_clears_earlier_errors),
	    T(rejects_without_an_error_list),
	    T(missing_file_gives_enoent_and_names_it),
	    T(directory_is_not_a_config_file),
	    T(unreadable_file_gives_eacces),
	    T(file_errors_name_the_file),
	    T(syntax_error_in_a_file_names_it),
	    T(errors_in_an_included_file_name_that_file),
	    T(integers_beyond_32_bits_are_range_checked_as_written),
	    T(an_integer_beyond_64_bits_is_named_as_written_not_as_minus_one),
	    T(only_integer_tokens_are_widened),
	    T(a_nul_byte_is_an_error_naming_its_line),
	    T(a_fifo_is_not_a_config_file_and_fails_at_once),
	    T(includes_resolve_beside_their_includer_and_name_what_failed),
	    T(print_of_defaults_reads_back_equal),
	    T(print_of_a_changed_config_reads_back_equal),
	    T(print_writes_every_key_once),
	    T(config_equal_sees_a_changed_pattern),
	    T(mode_names_match_the_file_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
