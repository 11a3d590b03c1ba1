/* config: the daemon's configuration, parsed from one libconfig file.
 *
 * A config object is immutable once loaded: config_load() builds it from defaults plus the
 * file, validates every key strictly (syntax, unknown keys, types, ranges), and returns it only
 * when all is well; otherwise it returns -EINVAL and fills a list of errors, each naming
 * file:line, the key and what is allowed. Publication to worker threads is config_pub's job.
 * Every key, its default, unit and range live in one table in config.c, which also drives
 * config_print() (the --check-config output). */
#ifndef PGHOTD_CONFIG_H
#define PGHOTD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CONFIG_MAX_NODES 64

struct topology;
#define CONFIG_MAX_PATTERNS	 32
#define CONFIG_DAMON_AGGR_US_MAX 60000000 /* sources.damon.aggr_us at most */
/* stats.cgroups_max at most: 1,025 series a family, the stats file's size bound (pghotd.conf(5)).
 */
#define CONFIG_CGROUPS_MAX 1024

enum source_mode { SOURCE_AUTO, SOURCE_ON, SOURCE_OFF };
enum target_mode { TARGET_ACCESSING_NODE, TARGET_FIXED };
/* How the Accessed-bit source looks: every slow page each round, or sampled regions. */
enum abit_mode { ABIT_MODE_FULL, ABIT_MODE_REGIONS };

struct node_list {
	int n;
	int node[CONFIG_MAX_NODES];
};

struct pattern_list {
	int n;
	char *item[CONFIG_MAX_PATTERNS]; /* owned by the config */
};

struct pghotd_config {
	char *path;    /* file it came from, NULL for pure defaults */
	int log_level; /* enum log_level */
	bool dry_run;

	struct {
		struct node_list fast_nodes; /* empty: detect */
		struct node_list slow_nodes; /* empty: detect */
	} tiers;

	struct {
		unsigned cpu_budget_percent; /* daemon CPU the samplers may use, % of one CPU */
		struct {
			enum source_mode enabled;
			unsigned period; /* ops between samples, multiple of 16 */
			bool l3_miss_only;
			unsigned ring_pages; /* data pages per CPU, power of two */
		} ibs;
		struct {
			enum source_mode enabled;
			unsigned period;
			unsigned ldlat; /* cycles */
			bool stores;
			char *event; /* NULL or "": choose per CPU model */
			unsigned ring_pages;
		} pebs;
		struct {
			enum source_mode enabled;
			unsigned scan_interval_ms;
			unsigned max_pages_per_sec;
			unsigned max_cpu_percent; /* of one CPU, the source thread's own */
			enum abit_mode mode;
			unsigned max_regions;	  /* per process, mode regions */
			unsigned max_watched_mib; /* scanned page by page at once, all processes */
			unsigned full_scan_mib;	  /* mode regions: smaller ones scanned in full */
		} abit;
		struct {
			enum source_mode enabled;
			unsigned sample_us; /* DAMON's sampling interval */
			unsigned aggr_us;   /* aggregation interval: a region report each */
			unsigned min_regions, max_regions;
		} damon;
	} sources;

	struct {
		unsigned capacity; /* entries */
	} hot_table;

	struct {
		unsigned threshold; /* accesses within window_ms */
		unsigned window_ms;
		unsigned rate_limit_mbps; /* MiB/s, 0 = unlimited */
		unsigned batch;		  /* pages per move_pages call, <= 512 */
		enum target_mode target;
		struct node_list target_nodes; /* for TARGET_FIXED, nearest first */
		unsigned min_free_percent;
		unsigned cooldown_ms;
		unsigned interval_ms;
		unsigned max_retries; /* -EBUSY retries of one page */
		bool move_near_task;  /* run move_pages on the CPU the task last ran on */
	} promotion;

	/* Cold pages of fast nodes down to the nearest slow node (promoter.h). */
	struct {
		bool enabled;
		unsigned
		    free_target_percent; /* keep this share free; 0: only make room for hot pages */
		unsigned min_idle_ms;	 /* idle this long to be cold (config_demotion_idle_ms()) */
		unsigned rate_limit_mbps; /* MiB/s, 0 = unlimited; a bucket of its own */
	} demotion;

	struct {
		struct pattern_list include_comm;
		struct pattern_list exclude_comm;
		struct pattern_list include_cgroup;
		struct pattern_list exclude_cgroup;
		unsigned min_rss_mb;
	} processes;

	struct {
		char *file;
		unsigned interval_ms;
		unsigned
		    cgroups_max; /* cgroups with series of their own; 0: no per-cgroup families */
	} stats;

	/* Derived state the daemon attaches after a successful load (the topology with this
	 * config's tier overrides applied), published together with the config. NULL until
	 * attached; config_free() does not free it: config_pub's destructor does. */
	struct topology *topo;
	/* Publication number, set by config_pub when it publishes the object (0 for the first):
	 * lets caches built from one config notice a reload. */
	uint64_t generation;
};

/* One validation or parse error; text is complete ("FILE:LINE: key: problem; allowed ..."). */
struct config_errors {
	int n;
	char *msg[32];
	int dropped; /* errors beyond the array */
};

/* Fills *out with a new object holding every default. -ENOMEM on failure. */
int config_new_defaults(struct pghotd_config **out);
/* Parses path over the defaults. On success *out is a new object and errs is empty; on
 * failure returns -ENOENT/-EACCES/-EBADFD (file unreadable or not a regular file: one error
 * naming it) or -EINVAL (errors listed), and *out is untouched. errs may be NULL; otherwise it
 * must be zeroed or left from an earlier call, and is cleared first. The bytes go through
 * config_text first (NUL bytes refused, integers kept at 64 bits, @include read by pghotd:
 * regular files only, a relative name against the including file's directory). */
int config_load(const char *path, struct pghotd_config **out, struct config_errors *errs);
/* Same, from len bytes in memory (which may hold NUL bytes: they are refused); name is used
 * in messages in place of a file name, and relative @include names resolve against its
 * directory. */
int config_load_bytes(const char *bytes, size_t len, const char *name, struct pghotd_config **out,
		      struct config_errors *errs);
/* config_load_bytes() of a NUL-terminated string (tests). */
int config_load_string(const char *text, const char *name, struct pghotd_config **out,
		       struct config_errors *errs);
void config_free(struct pghotd_config *cfg);
void config_errors_clear(struct config_errors *errs);
/* Writes the effective config, every key with its value, in the file's own syntax. */
void config_print(const struct pghotd_config *cfg, FILE *f);

/* True when every key of a and b has the same value (path is not compared). */
bool config_equal(const struct pghotd_config *a, const struct pghotd_config *b);
/* The key table, for tests and docs: how many keys, and the full path of key i
 * ("promotion.batch"). config_key_path returns -ERANGE past the end. */
size_t config_key_count(void);
int config_key_path(size_t i, char *buf, size_t size);
/* True when key i has the same value in a and b (false past the end): lets a reload name the
 * keys that changed. */
bool config_key_equal(size_t i, const struct pghotd_config *a, const struct pghotd_config *b);

/* The idle time that makes a page cold: demotion.min_idle_ms, or promotion.cooldown_ms when
 * that is longer (min_idle_ms left at its default under a raised cooldown), so a promoted page
 * is never demoted within its cooldown. */
static inline unsigned config_demotion_idle_ms(const struct pghotd_config *cfg)
{
	return cfg->demotion.min_idle_ms > cfg->promotion.cooldown_ms ? cfg->demotion.min_idle_ms
								      : cfg->promotion.cooldown_ms;
}

/* The idle time that lets a fast page make room for a hot page on a full node (an exchange):
 * promotion.window_ms, after which a page's own count starts again (a page idle that long is
 * not hot by the promotion rule), at least two scan intervals (the precision of an idle age),
 * at most config_demotion_idle_ms(). The Accessed-bit source offers pages from this age on, so
 * an exchange can start as soon as hot pages wait; demotion for
 * demotion.free_target_percent still takes only pages idle config_demotion_idle_ms(). */
static inline unsigned config_demotion_exchange_ms(const struct pghotd_config *cfg)
{
	unsigned ms = cfg->promotion.window_ms, scans = 2 * cfg->sources.abit.scan_interval_ms;
	unsigned idle = config_demotion_idle_ms(cfg);

	ms = ms > scans ? ms : scans;
	return ms < idle ? ms : idle;
}

/* How long a demotion candidate is trusted after the scan round that found it (stamped with
 * the round's start): a quarter of the idle time, but never less than two scan intervals, so
 * one round's offers last until the next round can renew them (a round may take most of an
 * interval). */
static inline unsigned config_demotion_trust_ms(const struct pghotd_config *cfg)
{
	unsigned quarter = config_demotion_idle_ms(cfg) / 4;
	unsigned rounds = 2 * cfg->sources.abit.scan_interval_ms;

	return quarter > rounds ? quarter : rounds;
}

/* Promoter intervals a hot page that found every target full waits for the room an exchange
 * makes: the two scan intervals the source may take to offer cold pages again (an exchange's
 * re-offer is looked at by the source's next round), so a page known hot is not sent back to
 * counting while its room is on its way; at least promotion.max_retries. */
static inline unsigned config_exchange_wait_intervals(const struct pghotd_config *cfg)
{
	unsigned iv = cfg->promotion.interval_ms ? cfg->promotion.interval_ms : 1;
	unsigned n = 2 * cfg->sources.abit.scan_interval_ms / iv;

	return n > cfg->promotion.max_retries ? n : cfg->promotion.max_retries;
}

const char *source_mode_name(enum source_mode m);
const char *target_mode_name(enum target_mode m);
const char *abit_mode_name(enum abit_mode m);

#endif
