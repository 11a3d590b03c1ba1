/* config: one table of keys drives defaults, parsing, validation, printing and comparison.
 *
 * Each row of keys[] names a key (section path and name), its type, where it lives in
 * struct pghotd_config, its default, range and unit. Parsing walks the libconfig tree and
 * looks every setting up in the table, so an unknown key or section, a wrong type or an
 * out-of-range value is found wherever it sits. Every problem is collected, not only the
 * first, so an operator fixes a file in one pass. Checks that involve two keys run after the
 * walk, using the line where each key was set. */
#include "base/config.h"

#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/config_text.h"
#include "base/fileio.h"
#include "base/log.h"

#define ARRAY_SIZE(a)	 (sizeof(a) / sizeof((a)[0]))
#define CONFIG_MAX_BYTES (1024 * 1024) /* far above any sane file; bounds the read */
#define PATH_MAX_KEY	 128	       /* longest key path, with room to spare */
#define STRING_MAX_LEN	 4095

/* ENUM keys are stored through an int pointer. */
_Static_assert(sizeof(enum source_mode) == sizeof(int), "enum source_mode is int-sized");
_Static_assert(sizeof(enum target_mode) == sizeof(int), "enum target_mode is int-sized");
_Static_assert(sizeof(enum abit_mode) == sizeof(int), "enum abit_mode is int-sized");

enum key_type { KEY_UINT, KEY_BOOL, KEY_STRING, KEY_ENUM, KEY_NODES, KEY_PATTERNS };

struct enum_def {
	int lo, hi; /* every value in lo..hi has a name */
	const char *(*name)(int v);
	int (*parse)(const char *s, int *v);
};

struct key_def {
	const char *section; /* "" for top level, "sources.ibs" for nested groups */
	const char *name;
	enum key_type type;
	size_t offset;
	long long def;	     /* UINT, BOOL, ENUM */
	const char *def_str; /* STRING */
	long long min, max;  /* UINT: value; NODES: node id; PATTERNS: item count */
	unsigned step;	     /* UINT: value must be a multiple of step (0: any) */
	bool pow2;	     /* UINT: value must be a power of two */
	const char *unit;
	const struct enum_def *enm;
	/* STRING and PATTERNS items: NULL if s is acceptable, else what is wrong with it. */
	const char *(*check)(const char *s);
	const char *allowed; /* STRING and PATTERNS: what check() accepts */
};

/* ---- enum names ---- */

static const char *const source_mode_names[] = {"auto", "on", "off"};
static const char *const target_mode_names[] = {"accessing-node", "fixed"};
static const char *const abit_mode_names[] = {"full", "regions"};

const char *source_mode_name(enum source_mode m)
{
	return (unsigned)m < ARRAY_SIZE(source_mode_names) ? source_mode_names[m] : "?";
}

const char *target_mode_name(enum target_mode m)
{
	return (unsigned)m < ARRAY_SIZE(target_mode_names) ? target_mode_names[m] : "?";
}

const char *abit_mode_name(enum abit_mode m)
{
	return (unsigned)m < ARRAY_SIZE(abit_mode_names) ? abit_mode_names[m] : "?";
}

static int names_find(const char *const *names, size_t n, const char *s, int *v)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(names[i], s) == 0) {
			*v = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *source_name_int(int v)
{
	return source_mode_name((enum source_mode)v);
}

static int source_parse_int(const char *s, int *v)
{
	return names_find(source_mode_names, ARRAY_SIZE(source_mode_names), s, v);
}

static const char *target_name_int(int v)
{
	return target_mode_name((enum target_mode)v);
}

static int target_parse_int(const char *s, int *v)
{
	return names_find(target_mode_names, ARRAY_SIZE(target_mode_names), s, v);
}

static const char *abit_mode_name_int(int v)
{
	return abit_mode_name((enum abit_mode)v);
}

static int abit_mode_parse_int(const char *s, int *v)
{
	return names_find(abit_mode_names, ARRAY_SIZE(abit_mode_names), s, v);
}

/* log.c owns the level names; going through it keeps one list. */
static const char *level_name_int(int v)
{
	return log_level_to_string((enum log_level)v);
}

static int level_parse_int(const char *s, int *v)
{
	enum log_level l;
	int r = log_level_from_string(s, &l);

	if (r < 0)
		return r;
	*v = (int)l;
	return 0;
}

static const struct enum_def enum_source = {SOURCE_AUTO, SOURCE_OFF, source_name_int,
					    source_parse_int};
static const struct enum_def enum_target = {TARGET_ACCESSING_NODE, TARGET_FIXED, target_name_int,
					    target_parse_int};
static const struct enum_def enum_abit_mode = {ABIT_MODE_FULL, ABIT_MODE_REGIONS,
					       abit_mode_name_int, abit_mode_parse_int};
static const struct enum_def enum_level = {LOG_LVL_ERR, LOG_LVL_DEBUG, level_name_int,
					   level_parse_int};

/* ---- string checks ---- */

static const char *check_abs_path(const char *s)
{
	if (s[0] != '/')
		return "is not an absolute path";
	if (strlen(s) > STRING_MAX_LEN)
		return "is too long";
	return NULL;
}

static const char *check_event(const char *s)
{
	if (strlen(s) > 255)
		return "is too long";
	if (strpbrk(s, " \t\n"))
		return "contains white space";
	return NULL;
}

static const char *check_pattern(const char *s)
{
	if (s[0] == '\0')
		return "is empty";
	if (strlen(s) > 255)
		return "is too long";
	return NULL;
}

/* ---- the table ---- */

/* Compile-time check that a field has the type its row claims (no match: compile error). */
#define FIELD(fld, T)                                                                              \
	(offsetof(struct pghotd_config, fld) +                                                     \
	 0 * sizeof(char[_Generic(((struct pghotd_config *)0)->fld, T : 1)]))

#define UINT_KEY(sec, nm, fld, d, lo, hi, st, u)                                                   \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_UINT, .offset = FIELD(fld, unsigned),      \
		.def = d, .min = lo, .max = hi, .step = st, .unit = u                              \
	}
#define POW2_KEY(sec, nm, fld, d, lo, hi, u)                                                       \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_UINT, .offset = FIELD(fld, unsigned),      \
		.def = d, .min = lo, .max = hi, .pow2 = true, .unit = u                            \
	}
#define BOOL_KEY(sec, nm, fld, d)                                                                  \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_BOOL, .offset = FIELD(fld, bool), .def = d \
	}
#define ENUM_KEY(sec, nm, fld, d, e)                                                               \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_ENUM,                                      \
		.offset = offsetof(struct pghotd_config, fld), .def = d, .enm = e                  \
	}
#define STRING_KEY(sec, nm, fld, d, chk, what)                                                     \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_STRING, .offset = FIELD(fld, char *),      \
		.def_str = d, .check = chk, .allowed = what                                        \
	}
#define NODES_KEY(sec, nm, fld)                                                                    \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_NODES,                                     \
		.offset = FIELD(fld, struct node_list), .min = 0, .max = CONFIG_MAX_NODES - 1,     \
		.unit = "node ids"                                                                 \
	}
#define PATTERNS_KEY(sec, nm, fld)                                                                 \
	{                                                                                          \
		.section = sec, .name = nm, .type = KEY_PATTERNS,                                  \
		.offset = FIELD(fld, struct pattern_list), .max = CONFIG_MAX_PATTERNS,             \
		.check = check_pattern, .allowed = "fnmatch(3) patterns"                           \
	}

/* Order matters only for config_print(): keys of one section stay together, and a section's
 * own keys come before its subsections. */
static const struct key_def keys[] = {
    ENUM_KEY("", "log_level", log_level, LOG_LVL_INFO, &enum_level),
    BOOL_KEY("", "dry_run", dry_run, false),

    NODES_KEY("tiers", "fast_nodes", tiers.fast_nodes),
    NODES_KEY("tiers", "slow_nodes", tiers.slow_nodes),

    UINT_KEY("sources", "cpu_budget_percent", sources.cpu_budget_percent, 5, 1, 100, 0, "%"),
    ENUM_KEY("sources.ibs", "enabled", sources.ibs.enabled, SOURCE_AUTO, &enum_source),
    UINT_KEY("sources.ibs", "period", sources.ibs.period, 100000, 0x90, 0x7FFFFF0, 16, "ops"),
    BOOL_KEY("sources.ibs", "l3_miss_only", sources.ibs.l3_miss_only, true),
    POW2_KEY("sources.ibs", "ring_pages", sources.ibs.ring_pages, 64, 1, 1024, "pages"),
    ENUM_KEY("sources.pebs", "enabled", sources.pebs.enabled, SOURCE_AUTO, &enum_source),
    UINT_KEY("sources.pebs", "period", sources.pebs.period, 1000, 10, 100000000, 0, "events"),
    UINT_KEY("sources.pebs", "ldlat", sources.pebs.ldlat, 128, 3, 65535, 0, "cycles"),
    BOOL_KEY("sources.pebs", "stores", sources.pebs.stores, false),
    STRING_KEY("sources.pebs", "event", sources.pebs.event, "", check_event,
	       "a libpfm4 event name, or \"\" to choose per CPU model"),
    POW2_KEY("sources.pebs", "ring_pages", sources.pebs.ring_pages, 64, 1, 1024, "pages"),
    ENUM_KEY("sources.abit", "enabled", sources.abit.enabled, SOURCE_AUTO, &enum_source),
    UINT_KEY("sources.abit", "scan_interval_ms", sources.abit.scan_interval_ms, 1000, 10, 3600000,
	     0, "ms"),
    UINT_KEY("sources.abit", "max_pages_per_sec", sources.abit.max_pages_per_sec, 262144, 1,
	     67108864, 0, "pages/s"),
    UINT_KEY("sources.abit", "max_cpu_percent", sources.abit.max_cpu_percent, 50, 1, 100, 0, "%"),
    ENUM_KEY("sources.abit", "mode", sources.abit.mode, ABIT_MODE_REGIONS, &enum_abit_mode),
    UINT_KEY("sources.abit", "max_regions", sources.abit.max_regions, 1000, 16, 65536, 0,
	     "regions"),
    UINT_KEY("sources.abit", "full_scan_mib", sources.abit.full_scan_mib, 1024, 0, 1048576, 0,
	     "MiB"),
    UINT_KEY("sources.abit", "max_watched_mib", sources.abit.max_watched_mib, 1024, 2, 1048576, 0,
	     "MiB"),

    ENUM_KEY("sources.damon", "enabled", sources.damon.enabled, SOURCE_AUTO, &enum_source),
    UINT_KEY("sources.damon", "sample_us", sources.damon.sample_us, 5000, 100, 10000000, 0, "us"),
    UINT_KEY("sources.damon", "aggr_us", sources.damon.aggr_us, 100000, 1000,
	     CONFIG_DAMON_AGGR_US_MAX, 0, "us"),
    UINT_KEY("sources.damon", "min_regions", sources.damon.min_regions, 100, 3, 1000000, 0,
	     "regions"),
    UINT_KEY("sources.damon", "max_regions", sources.damon.max_regions, 1000, 3, 1000000, 0,
	     "regions"),

    UINT_KEY("hot_table", "capacity", hot_table.capacity, 1048576, 1024, 268435456, 0, "entries"),

    UINT_KEY("promotion", "threshold", promotion.threshold, 2, 1, 255, 0, "accesses"),
    UINT_KEY("promotion", "window_ms", promotion.window_ms, 3000, 10, 3600000, 0, "ms"),
    UINT_KEY("promotion", "rate_limit_mbps", promotion.rate_limit_mbps, 256, 0, 1048576, 0,
	     "MiB/s"),
    UINT_KEY("promotion", "batch", promotion.batch, 512, 1, 512, 0, "pages"),
    ENUM_KEY("promotion", "target", promotion.target, TARGET_ACCESSING_NODE, &enum_target),
    NODES_KEY("promotion", "target_nodes", promotion.target_nodes),
    UINT_KEY("promotion", "min_free_percent", promotion.min_free_percent, 5, 0, 90, 0, "%"),
    UINT_KEY("promotion", "cooldown_ms", promotion.cooldown_ms, 60000, 0, 86400000, 0, "ms"),
    UINT_KEY("promotion", "interval_ms", promotion.interval_ms, 100, 1, 60000, 0, "ms"),
    UINT_KEY("promotion", "max_retries", promotion.max_retries, 3, 0, 100, 0, "retries"),
    BOOL_KEY("promotion", "move_near_task", promotion.move_near_task, true),

    BOOL_KEY("demotion", "enabled", demotion.enabled, true),
    UINT_KEY("demotion", "free_target_percent", demotion.free_target_percent, 0, 0, 90, 0, "%"),
    UINT_KEY("demotion", "min_idle_ms", demotion.min_idle_ms, 60000, 1000, 86400000, 0, "ms"),
    UINT_KEY("demotion", "rate_limit_mbps", demotion.rate_limit_mbps, 256, 0, 1048576, 0, "MiB/s"),

    PATTERNS_KEY("processes", "include_comm", processes.include_comm),
    PATTERNS_KEY("processes", "exclude_comm", processes.exclude_comm),
    PATTERNS_KEY("processes", "include_cgroup", processes.include_cgroup),
    PATTERNS_KEY("processes", "exclude_cgroup", processes.exclude_cgroup),
    UINT_KEY("processes", "min_rss_mb", processes.min_rss_mb, 0, 0, 1048576, 0, "MiB"),

    STRING_KEY("stats", "file", stats.file, "/run/pghotd/stats.prom", check_abs_path,
	       "an absolute path"),
    UINT_KEY("stats", "interval_ms", stats.interval_ms, 10000, 100, 3600000, 0, "ms"),
    UINT_KEY("stats", "cgroups_max", stats.cgroups_max, 16, 0, CONFIG_CGROUPS_MAX, 0, "cgroups"),
};

#define KEY_COUNT ARRAY_SIZE(keys)

static void *field(void *cfg, const struct key_def *k)
{
	return (char *)cfg + k->offset;
}

static const void *cfield(const void *cfg, const struct key_def *k)
{
	return (const char *)cfg + k->offset;
}

static void key_path(const struct key_def *k, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", k->section, k->section[0] ? "." : "", k->name);
}

size_t config_key_count(void)
{
	return KEY_COUNT;
}

int config_key_path(size_t i, char *buf, size_t size)
{
	if (i >= KEY_COUNT)
		return -ERANGE;
	key_path(&keys[i], buf, size);
	return 0;
}

/* ---- errors ---- */

/* A position in the input: the top file, or an @include'd one. line 0: unknown. */
struct where {
	const char *file;
	int line;
};

struct parse_ctx {
	const char *name; /* file name for messages */
	/* What libconfig parses: its lines map back to the file and line they came from. */
	const struct config_text *text;
	struct config_errors *errs;
	struct pghotd_config *cfg;
	int nerr;
	struct where set_at[KEY_COUNT]; /* where each key was set; line 0: left at its default */
	bool bad[KEY_COUNT];		/* rejected: checks across keys leave it out */
};

void config_errors_clear(struct config_errors *errs)
{
	if (!errs)
		return;
	for (int i = 0; i < errs->n; i++)
		free(errs->msg[i]);
	memset(errs, 0, sizeof(*errs));
}

static void errors_push(struct config_errors *errs, char *msg)
{
	if (msg && errs->n < (int)ARRAY_SIZE(errs->msg)) {
		errs->msg[errs->n++] = msg;
		return;
	}
	free(msg);
	errs->dropped++;
}

/* Records "FILE:LINE: MESSAGE" (or "FILE: MESSAGE" when the line is unknown). A position
 * without a file is a line of ctx->text, mapped back to where it was written. */
__attribute__((format(printf, 3, 4))) static void ctx_error(struct parse_ctx *ctx, struct where at,
							    const char *fmt, ...)
{
	const char *file = at.file;
	char *body = NULL, *msg = NULL;
	va_list ap;
	int r;

	if (!file && ctx->text)
		config_text_where(ctx->text, at.line, &file, &at.line);
	file = file ? file : ctx->name;
	ctx->nerr++;
	if (!ctx->errs)
		return;
	va_start(ap, fmt);
	r = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (r < 0)
		body = NULL;
	if (body && at.line > 0)
		r = asprintf(&msg, "%s:%d: %s", file, at.line, body);
	else if (body)
		r = asprintf(&msg, "%s: %s", file, body);
	if (!body || r < 0)
		msg = NULL;
	free(body);
	errors_push(ctx->errs, msg);
}

static const struct where nowhere = {NULL, 0};

/* A line of ctx->text: config_text replaced every @include, so libconfig names no file. */
static struct where at_setting(const config_setting_t *s)
{
	return (struct where){config_setting_source_file(s), (int)config_setting_source_line(s)};
}

static const char *type_name(const config_setting_t *s)
{
	static const char *const names[] = {
	    [CONFIG_TYPE_NONE] = "none",    [CONFIG_TYPE_GROUP] = "group",
	    [CONFIG_TYPE_INT] = "integer",  [CONFIG_TYPE_INT64] = "integer",
	    [CONFIG_TYPE_FLOAT] = "float",  [CONFIG_TYPE_STRING] = "string",
	    [CONFIG_TYPE_BOOL] = "boolean", [CONFIG_TYPE_ARRAY] = "array",
	    [CONFIG_TYPE_LIST] = "list",
	};
	int t = config_setting_type(s);

	return t >= 0 && t < (int)ARRAY_SIZE(names) && names[t] ? names[t] : "unknown";
}

/* What a key accepts, as told after "allowed " in messages. */
static void describe_range(const struct key_def *k, char *buf, size_t size)
{
	if (k->pow2)
		snprintf(buf, size, "a power of two in %lld..%lld (%s)", k->min, k->max, k->unit);
	else if (k->step > 1)
		snprintf(buf, size, "%lld..%lld in steps of %u (%s)", k->min, k->max, k->step,
			 k->unit);
	else
		snprintf(buf, size, "%lld..%lld (%s)", k->min, k->max, k->unit);
}

static void describe_enum(const struct enum_def *e, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int v = e->lo; v <= e->hi && used < size; v++)
		used += (size_t)snprintf(buf + used, size - used, "%s\"%s\"", v > e->lo ? ", " : "",
					 e->name(v));
}

static void describe_type(const struct key_def *k, char *buf, size_t size)
{
	char r[160];

	switch (k->type) {
	case KEY_UINT:
		describe_range(k, r, sizeof(r));
		snprintf(buf, size, "an integer, %s", r);
		break;
	case KEY_BOOL:
		snprintf(buf, size, "true or false");
		break;
	case KEY_STRING:
		snprintf(buf, size, "a string, %s", k->allowed);
		break;
	case KEY_ENUM:
		describe_enum(k->enm, r, sizeof(r));
		snprintf(buf, size, "one of %s", r);
		break;
	case KEY_NODES:
		snprintf(buf, size, "an array of integers %lld..%lld (%s)", k->min, k->max,
			 k->unit);
		break;
	case KEY_PATTERNS:
		snprintf(buf, size, "an array of at most %lld strings (%s)", k->max, k->allowed);
		break;
	}
}

static void error_wrong_type(struct parse_ctx *ctx, const struct key_def *k,
			     const config_setting_t *s, const char *path)
{
	char allowed[256];

	describe_type(k, allowed, sizeof(allowed));
	ctx_error(ctx, at_setting(s), "%s: wrong type (%s); allowed %s", path, type_name(s),
		  allowed);
}

/* ---- per-type operations ---- */

struct type_ops {
	void (*set_default)(struct pghotd_config *cfg, const struct key_def *k);
	/* Returns false when the setting was rejected (the error is recorded). */
	bool (*parse)(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
		      const char *path);
	void (*print)(FILE *f, const struct key_def *k, const struct pghotd_config *cfg);
	bool (*equal)(const struct key_def *k, const struct pghotd_config *a,
		      const struct pghotd_config *b);
	void (*release)(struct pghotd_config *cfg, const struct key_def *k);
};

static bool is_int(const config_setting_t *s)
{
	int t = config_setting_type(s);

	return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
}

static void nothing_release(struct pghotd_config *cfg, const struct key_def *k)
{
	(void)cfg;
	(void)k;
}

/* UINT */

static void uint_default(struct pghotd_config *cfg, const struct key_def *k)
{
	*(unsigned *)field(cfg, k) = (unsigned)k->def;
}

/* v as the file wrote it: in hexadecimal when it was (config_text kept all 64 bits). */
static const char *as_written(const config_setting_t *s, long long v, char *buf, size_t size)
{
	if (config_setting_get_format(s) == CONFIG_FORMAT_HEX && v >= 0)
		snprintf(buf, size, "0x%llx", v);
	else
		snprintf(buf, size, "%lld", v);
	return buf;
}

static bool uint_parse(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
		       const char *path)
{
	char allowed[160], written[32];
	long long v;

	if (!is_int(s)) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	v = config_setting_get_int64(s);
	describe_range(k, allowed, sizeof(allowed));
	if (v < k->min || v > k->max) {
		ctx_error(ctx, at_setting(s), "%s: %s is out of range; allowed %s", path,
			  as_written(s, v, written, sizeof(written)), allowed);
		return false;
	}
	if (k->step > 1 && v % k->step != 0) {
		ctx_error(ctx, at_setting(s), "%s: %lld is not a multiple of %u; allowed %s", path,
			  v, k->step, allowed);
		return false;
	}
	if (k->pow2 && (v & (v - 1)) != 0) {
		ctx_error(ctx, at_setting(s), "%s: %lld is not a power of two; allowed %s", path, v,
			  allowed);
		return false;
	}
	*(unsigned *)field(ctx->cfg, k) = (unsigned)v;
	return true;
}

static void uint_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	fprintf(f, "%u;", *(const unsigned *)cfield(cfg, k));
}

static bool uint_equal(const struct key_def *k, const struct pghotd_config *a,
		       const struct pghotd_config *b)
{
	return *(const unsigned *)cfield(a, k) == *(const unsigned *)cfield(b, k);
}

/* BOOL */

static void bool_default(struct pghotd_config *cfg, const struct key_def *k)
{
	*(bool *)field(cfg, k) = k->def != 0;
}

static bool bool_parse(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
		       const char *path)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	*(bool *)field(ctx->cfg, k) = config_setting_get_bool(s) != 0;
	return true;
}

static void bool_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	fprintf(f, "%s;", *(const bool *)cfield(cfg, k) ? "true" : "false");
}

static bool bool_equal(const struct key_def *k, const struct pghotd_config *a,
		       const struct pghotd_config *b)
{
	return *(const bool *)cfield(a, k) == *(const bool *)cfield(b, k);
}

/* Strings in libconfig syntax: the escapes its scanner understands. */
static void print_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* STRING: always non-NULL in a config, so readers need no NULL checks. */

static void string_default(struct pghotd_config *cfg, const struct key_def *k)
{
	/* NULL only when strdup fails; config_new_defaults() checks for that. */
	*(char **)field(cfg, k) = strdup(k->def_str);
}

static bool string_store(struct parse_ctx *ctx, char **dst, const char *v)
{
	char *copy = strdup(v);

	if (!copy) {
		ctx_error(ctx, nowhere, "out of memory");
		return false;
	}
	free(*dst);
	*dst = copy;
	return true;
}

static bool string_parse(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
			 const char *path)
{
	const char *v, *bad;

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	v = config_setting_get_string(s);
	bad = k->check(v);
	if (bad) {
		ctx_error(ctx, at_setting(s), "%s: \"%s\" %s; allowed %s", path, v, bad,
			  k->allowed);
		return false;
	}
	return string_store(ctx, (char **)field(ctx->cfg, k), v);
}

static void string_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	print_quoted(f, *(char *const *)cfield(cfg, k));
	fputc(';', f);
}

static bool string_equal(const struct key_def *k, const struct pghotd_config *a,
			 const struct pghotd_config *b)
{
	const char *x = *(char *const *)cfield(a, k), *y = *(char *const *)cfield(b, k);

	return strcmp(x ? x : "", y ? y : "") == 0;
}

static void string_release(struct pghotd_config *cfg, const struct key_def *k)
{
	free(*(char **)field(cfg, k));
	*(char **)field(cfg, k) = NULL;
}

/* ENUM */

static void enum_default(struct pghotd_config *cfg, const struct key_def *k)
{
	*(int *)field(cfg, k) = (int)k->def;
}

static bool enum_parse(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
		       const char *path)
{
	char allowed[160];
	const char *v;
	int val;

	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	v = config_setting_get_string(s);
	if (k->enm->parse(v, &val) < 0 || val < k->enm->lo || val > k->enm->hi) {
		describe_enum(k->enm, allowed, sizeof(allowed));
		ctx_error(ctx, at_setting(s), "%s: \"%s\" is not a known value; allowed %s", path,
			  v, allowed);
		return false;
	}
	*(int *)field(ctx->cfg, k) = val;
	return true;
}

static void enum_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	print_quoted(f, k->enm->name(*(const int *)cfield(cfg, k)));
	fputc(';', f);
}

static bool enum_equal(const struct key_def *k, const struct pghotd_config *a,
		       const struct pghotd_config *b)
{
	return *(const int *)cfield(a, k) == *(const int *)cfield(b, k);
}

/* Lists: libconfig writes [a, b] as an array and (a, b) as a list; accept both. */

static bool is_sequence(const config_setting_t *s)
{
	int t = config_setting_type(s);

	return t == CONFIG_TYPE_ARRAY || t == CONFIG_TYPE_LIST;
}

/* Array elements may carry no line of their own; the array's is close enough. */
static struct where at_elem(const config_setting_t *e, const config_setting_t *parent)
{
	struct where w = at_setting(e);

	return w.line > 0 ? w : at_setting(parent);
}

static bool sequence_all(const config_setting_t *s, bool (*pred)(const config_setting_t *))
{
	for (int i = 0; i < config_setting_length(s); i++)
		if (!pred(config_setting_get_elem(s, (unsigned)i)))
			return false;
	return true;
}

/* NODES */

static void nodes_default(struct pghotd_config *cfg, const struct key_def *k)
{
	memset(field(cfg, k), 0, sizeof(struct node_list));
}

static bool nodes_has(const struct node_list *l, int node)
{
	for (int i = 0; i < l->n; i++)
		if (l->node[i] == node)
			return true;
	return false;
}

static bool nodes_parse(struct parse_ctx *ctx, const struct key_def *k, const config_setting_t *s,
			const char *path)
{
	struct node_list l = {0};
	bool ok = true;

	if (!is_sequence(s) || !sequence_all(s, is_int)) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		long long v = config_setting_get_int64(e);

		if (v < k->min || v > k->max) {
			ctx_error(ctx, at_elem(e, s),
				  "%s: node %lld is out of range; allowed %lld..%lld", path, v,
				  k->min, k->max);
			ok = false;
		} else if (nodes_has(&l, (int)v)) {
			ctx_error(ctx, at_elem(e, s),
				  "%s: node %lld is listed twice; allowed each node once", path, v);
			ok = false;
		} else {
			l.node[l.n++] = (int)v; /* distinct ids in 0..63: never more than 64 */
		}
	}
	if (ok)
		*(struct node_list *)field(ctx->cfg, k) = l;
	return ok;
}

static void nodes_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	const struct node_list *l = cfield(cfg, k);

	fputc('[', f);
	for (int i = 0; i < l->n; i++)
		fprintf(f, "%s%d", i ? ", " : "", l->node[i]);
	fputs("];", f);
}

static bool nodes_equal(const struct key_def *k, const struct pghotd_config *a,
			const struct pghotd_config *b)
{
	const struct node_list *x = cfield(a, k), *y = cfield(b, k);

	return x->n == y->n && memcmp(x->node, y->node, (size_t)x->n * sizeof(x->node[0])) == 0;
}

/* PATTERNS */

static void patterns_default(struct pghotd_config *cfg, const struct key_def *k)
{
	memset(field(cfg, k), 0, sizeof(struct pattern_list));
}

static void patterns_release(struct pghotd_config *cfg, const struct key_def *k)
{
	struct pattern_list *l = field(cfg, k);

	for (int i = 0; i < l->n; i++)
		free(l->item[i]);
	memset(l, 0, sizeof(*l));
}

static bool is_string(const config_setting_t *s)
{
	return config_setting_type(s) == CONFIG_TYPE_STRING;
}

static bool patterns_check(struct parse_ctx *ctx, const struct key_def *k,
			   const config_setting_t *s, const char *path)
{
	bool ok = true;

	if (config_setting_length(s) > k->max) {
		ctx_error(ctx, at_setting(s), "%s: %d patterns; allowed at most %lld", path,
			  config_setting_length(s), k->max);
		return false;
	}
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		const char *v = config_setting_get_string(e);
		const char *bad = k->check(v);

		if (bad) {
			ctx_error(ctx, at_elem(e, s), "%s: \"%s\" %s; allowed %s", path, v, bad,
				  k->allowed);
			ok = false;
		}
	}
	return ok;
}

static bool patterns_parse(struct parse_ctx *ctx, const struct key_def *k,
			   const config_setting_t *s, const char *path)
{
	struct pattern_list *l = field(ctx->cfg, k);

	if (!is_sequence(s) || !sequence_all(s, is_string)) {
		error_wrong_type(ctx, k, s, path);
		return false;
	}
	if (!patterns_check(ctx, k, s, path))
		return false;
	patterns_release(ctx->cfg, k);
	for (int i = 0; i < config_setting_length(s); i++) {
		l->item[i] = strdup(config_setting_get_string_elem(s, i));
		if (!l->item[i]) {
			ctx_error(ctx, nowhere, "out of memory");
			return false;
		}
		l->n = i + 1;
	}
	return true;
}

static void patterns_print(FILE *f, const struct key_def *k, const struct pghotd_config *cfg)
{
	const struct pattern_list *l = cfield(cfg, k);

	fputc('[', f);
	for (int i = 0; i < l->n; i++) {
		fputs(i ? ", " : "", f);
		print_quoted(f, l->item[i]);
	}
	fputs("];", f);
}

static bool patterns_equal(const struct key_def *k, const struct pghotd_config *a,
			   const struct pghotd_config *b)
{
	const struct pattern_list *x = cfield(a, k), *y = cfield(b, k);

	if (x->n != y->n)
		return false;
	for (int i = 0; i < x->n; i++)
		if (strcmp(x->item[i], y->item[i]) != 0)
			return false;
	return true;
}

static const struct type_ops ops[] = {
    [KEY_UINT] = {uint_default, uint_parse, uint_print, uint_equal, nothing_release},
    [KEY_BOOL] = {bool_default, bool_parse, bool_print, bool_equal, nothing_release},
    [KEY_STRING] = {string_default, string_parse, string_print, string_equal, string_release},
    [KEY_ENUM] = {enum_default, enum_parse, enum_print, enum_equal, nothing_release},
    [KEY_NODES] = {nodes_default, nodes_parse, nodes_print, nodes_equal, nothing_release},
    [KEY_PATTERNS] = {patterns_default, patterns_parse, patterns_print, patterns_equal,
		      patterns_release},
};

/* ---- object lifetime ---- */

void config_free(struct pghotd_config *cfg)
{
	if (!cfg)
		return;
	for (size_t i = 0; i < KEY_COUNT; i++)
		ops[keys[i].type].release(cfg, &keys[i]);
	free(cfg->path);
	free(cfg);
}

static bool defaults_complete(const struct pghotd_config *cfg)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (keys[i].type == KEY_STRING && !*(char *const *)cfield(cfg, &keys[i]))
			return false;
	return true;
}

int config_new_defaults(struct pghotd_config **out)
{
	struct pghotd_config *cfg = calloc(1, sizeof(*cfg));

	if (!cfg)
		return -ENOMEM;
	for (size_t i = 0; i < KEY_COUNT; i++)
		ops[keys[i].type].set_default(cfg, &keys[i]);
	if (!defaults_complete(cfg)) {
		config_free(cfg);
		return -ENOMEM;
	}
	*out = cfg;
	return 0;
}

bool config_key_equal(size_t i, const struct pghotd_config *a, const struct pghotd_config *b)
{
	return i < KEY_COUNT && ops[keys[i].type].equal(&keys[i], a, b);
}

bool config_equal(const struct pghotd_config *a, const struct pghotd_config *b)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (!ops[keys[i].type].equal(&keys[i], a, b))
			return false;
	return true;
}

/* ---- the walk ---- */

static int key_find(const char *section, const char *name)
{
	for (size_t i = 0; i < KEY_COUNT; i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* True if path is a section: some key lives in it or below it. */
static bool section_known(const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < KEY_COUNT; i++) {
		const char *s = keys[i].section;

		if (strncmp(s, path, len) == 0 && (s[len] == '\0' || s[len] == '.'))
			return true;
	}
	return false;
}

/* The name directly under parent that key k's row contributes (its own name, or the next
 * component of its section), or 0 length when k lives elsewhere. */
static size_t child_name(const struct key_def *k, const char *parent, const char **name)
{
	size_t plen = strlen(parent);
	const char *rest;

	if (strcmp(k->section, parent) == 0) {
		*name = k->name;
		return strlen(k->name);
	}
	if (plen && (strncmp(k->section, parent, plen) != 0 || k->section[plen] != '.'))
		return 0;
	rest = k->section + plen + (plen ? 1 : 0);
	*name = rest;
	return strcspn(rest, ".");
}

/* "a, b, c": every name allowed directly under parent, in table order, without repeats. */
static void children_list(const char *parent, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < KEY_COUNT && used < size; i++) {
		const char *name;
		size_t len = child_name(&keys[i], parent, &name);
		bool seen = false;

		for (size_t j = 0; j < i && len && !seen; j++) {
			const char *other;
			size_t olen = child_name(&keys[j], parent, &other);

			seen = olen == len && strncmp(other, name, len) == 0;
		}
		if (len && !seen)
			used += (size_t)snprintf(buf + used, size - used, "%s%.*s",
						 used ? ", " : "", (int)len, name);
	}
}

static void error_unknown(struct parse_ctx *ctx, const config_setting_t *s, const char *parent,
			  const char *path)
{
	char allowed[512];

	children_list(parent, allowed, sizeof(allowed));
	ctx_error(ctx, at_setting(s), "%s: unknown %s; allowed %s%s: %s", path,
		  config_setting_is_group(s) ? "section" : "key",
		  parent[0] ? "keys in " : "top-level keys", parent, allowed);
}

static void parse_group(struct parse_ctx *ctx, const config_setting_t *group, const char *path)
{
	for (int i = 0; i < config_setting_length(group); i++) {
		const config_setting_t *s = config_setting_get_elem(group, (unsigned)i);
		const char *name = config_setting_name(s);
		char full[PATH_MAX_KEY];
		int k;

		snprintf(full, sizeof(full), "%s%s%s", path, path[0] ? "." : "", name);
		k = key_find(path, name);
		if (k >= 0) {
			if (ops[keys[k].type].parse(ctx, &keys[k], s, full))
				ctx->set_at[k] = at_setting(s);
			else
				ctx->bad[k] = true;
		} else if (section_known(full) && config_setting_is_group(s)) {
			parse_group(ctx, s, full);
		} else if (section_known(full)) {
			char allowed[512];

			children_list(full, allowed, sizeof(allowed));
			ctx_error(ctx, at_setting(s),
				  "%s: wrong type (%s); allowed a group of keys: %s", full,
				  type_name(s), allowed);
		} else {
			error_unknown(ctx, s, path, full);
		}
	}
}

/* ---- checks across keys ---- */

static struct where at_key(const struct parse_ctx *ctx, const char *section, const char *name)
{
	int k = key_find(section, name);

	return k >= 0 ? ctx->set_at[k] : nowhere;
}

/* A rejected key keeps its default, which could make a check across keys fail for a reason
 * the operator never wrote; such checks are skipped until the key itself is fixed. */
static bool key_bad(const struct parse_ctx *ctx, const char *section, const char *name)
{
	int k = key_find(section, name);

	return k >= 0 && ctx->bad[k];
}

static void check_tiers(struct parse_ctx *ctx)
{
	const struct pghotd_config *c = ctx->cfg;

	if (key_bad(ctx, "tiers", "fast_nodes") || key_bad(ctx, "tiers", "slow_nodes"))
		return;
	for (int i = 0; i < c->tiers.slow_nodes.n; i++) {
		int node = c->tiers.slow_nodes.node[i];

		if (nodes_has(&c->tiers.fast_nodes, node))
			ctx_error(ctx, at_key(ctx, "tiers", "slow_nodes"),
				  "tiers.slow_nodes: node %d is also in tiers.fast_nodes; allowed "
				  "each node in one tier only",
				  node);
	}
}

static void check_target(struct parse_ctx *ctx)
{
	const struct pghotd_config *c = ctx->cfg;
	const struct node_list *t = &c->promotion.target_nodes;

	if (key_bad(ctx, "promotion", "target_nodes") || key_bad(ctx, "tiers", "slow_nodes"))
		return;
	if (c->promotion.target == TARGET_FIXED && t->n == 0)
		ctx_error(ctx, at_key(ctx, "promotion", "target"),
			  "promotion.target: \"fixed\" needs promotion.target_nodes; allowed "
			  "\"fixed\" with a non-empty target_nodes, or \"accessing-node\"");
	for (int i = 0; i < t->n; i++)
		if (nodes_has(&c->tiers.slow_nodes, t->node[i]))
			ctx_error(ctx, at_key(ctx, "promotion", "target_nodes"),
				  "promotion.target_nodes: node %d is in tiers.slow_nodes; allowed "
				  "fast nodes only",
				  t->node[i]);
}

/* A page's idle age counts from when the scanner first saw it where it is, so a promoted page
 * (moved, hence seen anew) cannot look cold before the idle time: with that at least the
 * promotion cooldown, no page is demoted within its cooldown. A min_idle_ms set below the
 * cooldown is refused; one left at its default follows a longer cooldown
 * (config_demotion_idle_ms()), so files written before demotion keep loading. */
static void check_demotion(struct parse_ctx *ctx)
{
	struct pghotd_config *c = ctx->cfg;
	struct where at = at_key(ctx, "demotion", "min_idle_ms");

	if (key_bad(ctx, "demotion", "min_idle_ms") || key_bad(ctx, "promotion", "cooldown_ms"))
		return;
	/* Left out: the effective value is stored, so --check-config prints a file that loads
	 * again to the same configuration (fuzz_config checks that). */
	if (at.line <= 0 && c->demotion.min_idle_ms < c->promotion.cooldown_ms)
		c->demotion.min_idle_ms = c->promotion.cooldown_ms;
	if (at.line > 0 && c->demotion.min_idle_ms < c->promotion.cooldown_ms)
		ctx_error(ctx, at,
			  "demotion.min_idle_ms: %u is below promotion.cooldown_ms (%u); allowed "
			  "%u..86400000, so a promoted page is not demoted within its cooldown",
			  c->demotion.min_idle_ms, c->promotion.cooldown_ms,
			  c->promotion.cooldown_ms < 1000 ? 1000 : c->promotion.cooldown_ms);
}

/* DAMON and page_idle both clear the Accessed bits: each would miss what the other cleared.
 * DAMON wants an aggregation of several samples and at least min_regions regions. */
static void check_damon(struct parse_ctx *ctx)
{
	const struct pghotd_config *c = ctx->cfg;

	if (c->sources.damon.enabled == SOURCE_ON && c->sources.abit.enabled == SOURCE_ON &&
	    !key_bad(ctx, "sources.damon", "enabled") && !key_bad(ctx, "sources.abit", "enabled"))
		ctx_error(ctx, at_key(ctx, "sources.damon", "enabled"),
			  "sources.damon.enabled: \"on\" with sources.abit.enabled \"on\"; allowed "
			  "one of them on, since both clear the pages' Accessed bits");
	if (!key_bad(ctx, "sources.damon", "sample_us") &&
	    !key_bad(ctx, "sources.damon", "aggr_us") &&
	    c->sources.damon.aggr_us < 2 * c->sources.damon.sample_us)
		ctx_error(ctx, at_key(ctx, "sources.damon", "aggr_us"),
			  "sources.damon.aggr_us: %u is below twice sources.damon.sample_us (%u); "
			  "allowed %u..%u",
			  c->sources.damon.aggr_us, c->sources.damon.sample_us,
			  2 * c->sources.damon.sample_us, CONFIG_DAMON_AGGR_US_MAX);
	if (!key_bad(ctx, "sources.damon", "min_regions") &&
	    !key_bad(ctx, "sources.damon", "max_regions") &&
	    c->sources.damon.max_regions < c->sources.damon.min_regions)
		ctx_error(ctx, at_key(ctx, "sources.damon", "max_regions"),
			  "sources.damon.max_regions: %u is below sources.damon.min_regions (%u); "
			  "allowed %u..1000000",
			  c->sources.damon.max_regions, c->sources.damon.min_regions,
			  c->sources.damon.min_regions);
}

/* ---- loading ---- */

static void ctx_syntax_error(struct parse_ctx *ctx, const config_t *lc)
{
	/* config_error_file() is set only for an @include'd file. */
	struct where at = {config_error_file(lc), config_error_line(lc)};
	const char *text = config_error_text(lc);

	ctx_error(ctx, at, "%s", text ? text : "syntax error");
}

static int read_include(void *ctx, const char *path, size_t max, char **out, size_t *len)
{
	(void)ctx;
	return file_read_alloc(path, max, out, len);
}

static void text_error(void *c, const char *file, int line, const char *msg)
{
	ctx_error(c, (struct where){file, line}, "%s", msg);
}

static void parse_text(struct parse_ctx *ctx, const char *text)
{
	config_t lc;

	config_init(&lc);
	if (config_read_string(&lc, text)) {
		parse_group(ctx, config_root_setting(&lc), "");
		check_tiers(ctx);
		check_target(ctx);
		check_demotion(ctx);
		check_damon(ctx);
	} else {
		ctx_syntax_error(ctx, &lc);
	}
	config_destroy(&lc);
}

static int parse_bytes(struct parse_ctx *ctx, const char *bytes, size_t len)
{
	struct config_text_ops ops = {
	    .read = read_include, .strerror = file_strerror, .error = text_error, .ctx = ctx};
	struct config_text text;
	int r = config_text_build(ctx->name, bytes, len, CONFIG_MAX_BYTES, &ops, &text);

	if (r == -ENOMEM)
		return r;
	ctx->text = &text;
	if (r != -EBADMSG) /* parsed even after a bad number, for the file's other errors */
		parse_text(ctx, text.text);
	ctx->text = NULL;
	config_text_free(&text);
	return ctx->nerr ? -EINVAL : 0;
}

int config_load_bytes(const char *bytes, size_t len, const char *name, struct pghotd_config **out,
		      struct config_errors *errs)
{
	struct parse_ctx ctx = {.name = name ? name : "<string>", .errs = errs};
	int r;

	config_errors_clear(errs);
	r = config_new_defaults(&ctx.cfg);
	if (r < 0)
		return r;
	r = parse_bytes(&ctx, bytes, len);
	if (r == 0 && name) {
		ctx.cfg->path = strdup(name);
		if (!ctx.cfg->path)
			r = -ENOMEM;
	}
	if (r < 0) {
		config_free(ctx.cfg);
		return r;
	}
	*out = ctx.cfg;
	return 0;
}

int config_load_string(const char *text, const char *name, struct pghotd_config **out,
		       struct config_errors *errs)
{
	return config_load_bytes(text, strlen(text), name, out, errs);
}

static int file_error(const char *path, int r, struct config_errors *errs)
{
	struct parse_ctx ctx = {.name = path, .errs = errs};

	ctx_error(&ctx, nowhere, "cannot read: %s", file_strerror(r));
	return r;
}

int config_load(const char *path, struct pghotd_config **out, struct config_errors *errs)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	config_errors_clear(errs);
	r = file_read_alloc(path, CONFIG_MAX_BYTES, &text, &len);
	if (r < 0)
		return file_error(path, r, errs);
	r = config_load_bytes(text, len, path, out, errs);
	free(text);
	return r;
}

/* ---- printing ---- */

static int section_depth(const char *s)
{
	int d = s[0] ? 1 : 0;

	for (; *s; s++)
		d += *s == '.';
	return d;
}

/* Number of leading path components a and b share. */
static int common_depth(const char *a, const char *b)
{
	int d = 0;

	while (*a && *b) {
		size_t la = strcspn(a, "."), lb = strcspn(b, ".");

		if (la != lb || strncmp(a, b, la) != 0)
			break;
		d++;
		a += la + (a[la] == '.');
		b += lb + (b[lb] == '.');
	}
	return d;
}

static void indent(FILE *f, int depth)
{
	for (int i = 0; i < depth; i++)
		fputc('\t', f);
}

/* Closes groups of from down to the part shared with to, then opens the rest of to. */
static void section_switch(FILE *f, const char *from, const char *to)
{
	int common = common_depth(from, to), to_depth = section_depth(to);
	const char *p = to;

	for (int d = section_depth(from); d > common; d--) {
		indent(f, d - 1);
		fputs("};\n", f);
	}
	for (int d = 0; d < to_depth; d++) {
		size_t len = strcspn(p, ".");

		if (d >= common) {
			indent(f, d);
			fprintf(f, "%.*s = {\n", (int)len, p);
		}
		p += len + (p[len] == '.');
	}
}

static void print_comment(FILE *f, const struct key_def *k)
{
	char r[160];

	if (k->type == KEY_UINT) {
		describe_range(k, r, sizeof(r));
		fprintf(f, " # %s", r);
	} else if (k->type == KEY_ENUM) {
		describe_enum(k->enm, r, sizeof(r));
		fprintf(f, " # %s", r);
	}
}

void config_print(const struct pghotd_config *cfg, FILE *f)
{
	const char *open = "";

	/* A newline in the path would end the comment and turn the rest into settings. */
	if (cfg->path)
		fprintf(f, "# pghotd effective configuration from %.*s\n",
			(int)strcspn(cfg->path, "\n"), cfg->path);
	else
		fputs("# pghotd effective configuration (defaults)\n", f);
	for (size_t i = 0; i < KEY_COUNT; i++) {
		const struct key_def *k = &keys[i];

		if (strcmp(k->section, open) != 0) {
			section_switch(f, open, k->section);
			open = k->section;
		}
		indent(f, section_depth(k->section));
		fprintf(f, "%s = ", k->name);
		ops[k->type].print(f, k, cfg);
		print_comment(f, k);
		fputc('\n', f);
	}
	section_switch(f, open, "");
}
