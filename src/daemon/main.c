/* pghotd: main() and the daemon's lifecycle: options, config, preflight, signals, the event
 * loop (stats, status, watchdog), reload on SIGHUP and an orderly stop. The work itself lives
 * in the library modules; this file only wires them together. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/config_pub.h"
#include "daemon/engine.h"
#include "base/log.h"
#include "daemon/notify.h"
#include "daemon/options.h"
#include "pghotd-build.h"
#include "daemon/probe.h"
#include "daemon/reload.h"
#include "daemon/replay.h"
#include "daemon/status_cmd.h"
#include "base/stats.h"
#include "sys/topology.h"

struct daemon {
	struct options opt;
	sd_event *event;
	struct config_pub *pub;
	struct stats stats;
	struct engine *engine;
	struct probe_result probe; /* preflight of the config in force */
	uint64_t last_bytes;	   /* promoted bytes at the last status refresh */
	uint64_t last_usec;	   /* time of the last status refresh */
	int stats_error;	   /* last stats write error, to log each new one once */
	/* The reload status file ($RUNTIME_DIRECTORY/reload-status), "" outside a unit with
	 * RuntimeDirectory=; the generation of the last reload answered there. */
	char reload_status_path[PATH_MAX];
	uint64_t reload_generation;
};

static void destroy_config(struct pghotd_config *cfg)
{
	if (cfg)
		topology_free(cfg->topo);
	config_free(cfg);
}

static void log_config_errors(const struct config_errors *errs, int first)
{
	for (int i = first; i < errs->n; i++)
		log_error("%s", errs->msg[i]);
	if (errs->dropped)
		log_error("%d more configuration errors not shown", errs->dropped);
}

/* Loads path and attaches the topology with its tier overrides. On failure the errors are
 * in errs (or logged, for topology problems) and *out is untouched. */
static int load_config(const struct options *opt, struct pghotd_config **out,
		       struct config_errors *errs)
{
	struct pghotd_config *cfg;
	int r = config_load(opt->config_path, &cfg, errs);

	if (r == -ENOENT && !opt->config_given) {
		/* No file at the default path: an operator who wrote none gets the defaults. */
		config_errors_clear(errs);
		r = config_new_defaults(&cfg);
		if (r == 0)
			log_notice("%s not found, using the built-in defaults", opt->config_path);
	}
	if (r < 0)
		return r;
	r = topology_load(opt->sysfs_root, &cfg->topo);
	if (r < 0) {
		config_free(cfg);
		return -ENXIO; /* distinct from config errors: the system lacks NUMA sysfs */
	}
	r = topology_apply_config(cfg->topo, cfg);
	if (r < 0) {
		destroy_config(cfg);
		return r;
	}
	*out = cfg;
	return 0;
}

static void apply_log_level(const struct options *opt, const struct pghotd_config *cfg)
{
	int level = cfg->log_level + opt->verbose;

	log_set_level(level > LOG_LVL_DEBUG ? LOG_LVL_DEBUG : (enum log_level)level);
}

static void probe_line(void *ctx, const char *s)
{
	FILE *f = ctx;

	static const char warn[] = "warning: ";

	if (f)
		fprintf(f, "%s\n", s);
	else if (strncmp(s, warn, sizeof(warn) - 1) == 0)
		log_warning("%s", s + sizeof(warn) - 1);
	else
		log_info("%s", s);
}

/* Runs the preflight and reports it (to f, or to the log when f is NULL). Returns the exit
 * code the configuration calls for: a source set to "on" that cannot run stops startup. */
static int preflight(const struct options *opt, const struct pghotd_config *cfg, FILE *f,
		     struct probe_result *out)
{
	struct probe_env env = {.sysfs_root = opt->sysfs_root, .procfs_root = opt->procfs_root};
	struct probe_result res;
	enum stat_source which;
	int r = probe_run(&env, cfg->topo, cfg, &res);

	if (r < 0) {
		log_error_errno(r, "cannot run the preflight checks");
		return EXIT_FAILED;
	}
	if (f) /* --probe: try the perf events for real */
		engine_probe_perf(&(struct engine_env){.sysfs_root = opt->sysfs_root,
						       .procfs_root = opt->procfs_root},
				  cfg, &res);
	if (cfg->topo) /* the kernel's marks beside each node's free memory */
		(void)topology_read_marks(cfg->topo, opt->procfs_root);
	probe_describe(&res, cfg->topo, probe_line, f);
	if (out)
		*out = res;
	r = probe_check_required(&res, &which);
	if (r == 0)
		return EXIT_OK;
	log_error("source %s is set to \"on\" but cannot run: %s", stat_source_name(which),
		  res.source[which].reason);
	return r == -EACCES ? EXIT_PERMISSION : EXIT_UNSUPPORTED;
}

/* pghotd_node_slow{node}: the tiers of the configuration in force. */
static void publish_tiers(struct stats *s, const struct topology *t)
{
	for (int n = 0; n < t->nr_nodes; n++)
		stats_node_slow(s, n, topology_node_is_slow(t, n));
}

static void refresh_status(struct daemon *d)
{
	const struct pghotd_config *cfg = config_pub_current(d->pub);
	struct status_info si = {
	    .active_sources = engine_sources_running(d->engine),
	    .source_names = engine_source_names(d->engine),
	    .nr_slow = topology_nr_slow(cfg->topo),
	    .promoted_pages = stats_promoted_pages_total(&d->stats),
	    .dry_run = cfg->dry_run,
	};
	uint64_t now = clock_monotonic_us(), bytes = stats_promoted_bytes_total(&d->stats);
	char buf[256];

	if (now > d->last_usec)
		si.rate_mib_s = (double)(bytes - d->last_bytes) / (1024.0 * 1024.0) /
				((double)(now - d->last_usec) / 1e6);
	d->last_usec = now;
	d->last_bytes = bytes;
	notify_format_status(buf, sizeof(buf), &si);
	notify_status(buf);
}

static void write_stats(struct daemon *d)
{
	const struct pghotd_config *cfg = config_pub_current(d->pub);
	int r;

	stats_set(&d->stats, ST_CPU_US, clock_process_cpu_us());
	r = stats_write_file(&d->stats, cfg->stats.file);

	if (r < 0 && r != d->stats_error)
		log_warning_errno(r, "cannot write stats file %s, will retry", cfg->stats.file);
	else if (r == 0 && d->stats_error)
		log_info("stats file %s written again", cfg->stats.file);
	d->stats_error = r;
}

/* Answers a reload (or the start, generation 0) for pghotd --reload. */
static void publish_reload_status(struct daemon *d, bool ok, const char *message)
{
	struct reload_status st = {.generation = d->reload_generation, .ok = ok};
	int r;

	if (!d->reload_status_path[0])
		return;
	snprintf(st.message, sizeof(st.message), "%s", message);
	r = reload_status_write(d->reload_status_path, &st);
	if (r < 0)
		log_warning_errno(r, "cannot write the reload status %s, ignoring",
				  d->reload_status_path);
}

/* Creates the stats file's directory when missing (one level, as RuntimeDirectory= would). */
static int prepare_stats_dir(const char *file)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* A reload to another stats.file: its directory made as at the start; a failure is logged,
 * and the write after the reload says the file cannot be written. */
static void reload_stats_dir(const char *file)
{
	int r = prepare_stats_dir(file);

	if (r < 0)
		log_warning_errno(r, "cannot create the directory of stats file %s", file);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	const struct pghotd_config *cfg = config_pub_current(d->pub);
	int r;

	config_pub_reclaim(d->pub);
	engine_tick(d->engine, cfg);
	write_stats(d);
	refresh_status(d);
	r = sd_event_source_set_time(s, usec + (uint64_t)cfg->stats.interval_ms * 1000u);
	/* A time source is one-shot: it must be enabled again for the next interval. */
	if (r >= 0)
		r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return r;
}

/* One line naming the keys a reload changed. */
static void log_changed_keys(const struct pghotd_config *old, const struct pghotd_config *next)
{
	char line[1024] = "", path[128];
	size_t l = 0;

	for (size_t i = 0; i < config_key_count() && l < sizeof(line) - 1; i++) {
		if (config_key_equal(i, old, next) || config_key_path(i, path, sizeof(path)) < 0)
			continue;
		l += (size_t)snprintf(line + l, sizeof(line) - l, "%s%s", l ? ", " : "", path);
	}
	log_info("reload changed: %s", l ? line : "nothing");
}

static void reload_failed(struct daemon *d, const char *why, struct reload_status *answer)
{
	stats_add(&d->stats, ST_CONFIG_RELOAD_FAILURES, 1);
	log_event(LOG_LVL_ERR, "reload-failed",
		  "reload failed, keeping the running configuration: %s", why);
	answer->ok = false;
	snprintf(answer->message, sizeof(answer->message), "%s", why);
}

static void reload(struct daemon *d)
{
	struct pghotd_config *next = NULL;
	struct config_errors errs = {0};
	struct probe_result pr;
	struct reload_status answer = {.ok = true, .message = "configuration reloaded"};
	int r;

	notify_reloading(clock_monotonic_us());
	d->reload_generation++;
	r = load_config(&d->opt, &next, &errs);
	if (r < 0) {
		log_config_errors(&errs, 1);
		reload_failed(d,
			      errs.n
				  ? errs.msg[0]
				  : (r == -ENXIO ? "cannot read the NUMA topology" : strerror(-r)),
			      &answer);
		config_errors_clear(&errs);
	} else if (preflight(&d->opt, next, NULL, &pr) != EXIT_OK) {
		destroy_config(next);
		reload_failed(d, "a source set to \"on\" cannot run", &answer);
	} else {
		const struct pghotd_config *old = config_pub_current(d->pub);

		if (next->hot_table.capacity != old->hot_table.capacity)
			log_warning("hot_table.capacity changed to %u: the table keeps its size "
				    "until pghotd restarts",
				    next->hot_table.capacity);
		/* Preflight ran on next before publication: workers never share it with us. */
		config_pub_swap(d->pub, next);
		publish_tiers(&d->stats, next->topo);
		d->probe = pr;
		log_changed_keys(old, next);
		if (strcmp(old->stats.file, next->stats.file) != 0)
			reload_stats_dir(next->stats.file);
		if (engine_apply(d->engine, d->pub, old, &pr) < 0)
			log_error("a source set to \"on\" could not start after the reload");
		apply_log_level(&d->opt, next);
		stats_set(&d->stats, ST_CONFIG_THRESHOLD, next->promotion.threshold);
		stats_add(&d->stats, ST_CONFIG_RELOADS, 1);
		log_event(LOG_LVL_NOTICE, "reload",
			  "configuration reloaded from %s (%d slow node%s)", d->opt.config_path,
			  topology_nr_slow(next->topo),
			  topology_nr_slow(next->topo) == 1 ? "" : "s");
	}
	write_stats(d);
	/* After the stats: pghotd --reload returns on this, and what it reports is then in
	 * the stats file too. */
	publish_reload_status(d, answer.ok, answer.message);
	notify_ready("reloaded");
	refresh_status(d);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;

	(void)s;
	if (si->ssi_signo == SIGHUP) {
		reload(d);
		return 0;
	}
	notify_stopping();
	log_event(LOG_LVL_NOTICE, "stop", "stopping on %s", strsignal((int)si->ssi_signo));
	return sd_event_exit(d->event, 0);
}

static int setup_events(struct daemon *d)
{
	const struct pghotd_config *cfg = config_pub_current(d->pub);
	int sigs[] = {SIGHUP, SIGTERM, SIGINT};
	int r = sd_event_new(&d->event);

	for (size_t i = 0; r >= 0 && i < sizeof(sigs) / sizeof(sigs[0]); i++)
		r = sd_event_add_signal(d->event, NULL, sigs[i], on_signal, d);
	if (r >= 0)
		r = sd_event_add_time_relative(d->event, NULL, CLOCK_MONOTONIC,
					       (uint64_t)cfg->stats.interval_ms * 1000u, 0,
					       on_timer, d);
	if (r >= 0)
		r = sd_event_set_watchdog(d->event, 1); /* WATCHDOG=1 when WATCHDOG_USEC is set */
	return r < 0 ? log_error_errno(r, "cannot set up the event loop") : 0;
}

static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int startup_config(const struct options *opt, struct pghotd_config **out)
{
	struct config_errors errs = {0};
	int r = load_config(opt, out, &errs);

	if (r == 0)
		return EXIT_OK;
	if (r == -ENXIO) {
		log_error("cannot read the NUMA topology under %s/devices/system/node",
			  opt->sysfs_root);
		return EXIT_UNSUPPORTED;
	}
	log_config_errors(&errs, 0);
	config_errors_clear(&errs);
	return EXIT_CONFIG;
}

static int check_config(const struct options *opt)
{
	struct pghotd_config *cfg;
	struct config_errors errs = {0};
	int r = config_load(opt->config_path, &cfg, &errs);

	if (r < 0) {
		for (int i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msg[i]);
		config_errors_clear(&errs);
		fprintf(stderr, "%s: configuration is not valid\n", opt->config_path);
		return EXIT_CONFIG;
	}
	config_print(cfg, stdout);
	config_free(cfg);
	return EXIT_OK;
}

static int run(struct daemon *d, struct pghotd_config *cfg)
{
	int code, r;

	/* Before any thread exists, so every thread inherits the mask and signals reach only
	 * the event loop's signalfd. */
	if (block_signals() < 0) {
		destroy_config(cfg);
		return EXIT_FAILED;
	}
	r = config_pub_new(cfg, destroy_config, &d->pub);
	if (r < 0) {
		destroy_config(cfg);
		return EXIT_FAILED;
	}
	stats_init(&d->stats, cfg->topo->nr_nodes);
	stats_set(&d->stats, ST_UP, 1);
	stats_set(&d->stats, ST_CONFIG_THRESHOLD, cfg->promotion.threshold);
	stats_set(&d->stats, ST_START_TIME_SECONDS, (uint64_t)time(NULL));
	publish_tiers(&d->stats, cfg->topo);
	code = preflight(&d->opt, cfg, NULL, &d->probe);
	if (code != EXIT_OK)
		return code;
	if (topology_nr_slow(cfg->topo) == 0)
		log_notice("no slow memory tier found: staying idle; add one or set "
			   "tiers.slow_nodes and reload");
	r = prepare_stats_dir(cfg->stats.file);
	if (r == 0)
		r = stats_write_file(&d->stats, cfg->stats.file);
	if (r == -EACCES || r == -EPERM || r == -EROFS) {
		log_error_errno(r, "cannot write stats file %s", cfg->stats.file);
		return EXIT_PERMISSION;
	}
	if (r < 0)
		log_warning_errno(r, "cannot write stats file %s, will retry", cfg->stats.file);
	d->stats_error = r;
	if (setup_events(d) < 0)
		return EXIT_FAILED;
	struct engine_env env = {
	    .sysfs_root = d->opt.sysfs_root, .procfs_root = d->opt.procfs_root, .stats = &d->stats};
	if (engine_new(&env, cfg, &d->engine) < 0)
		return EXIT_FAILED;
	r = engine_start(d->engine, d->pub, &d->probe);
	if (r < 0) /* a source set to "on" failed to start, or a thread could not be made */
		return r == -EACCES || r == -EPERM			  ? EXIT_PERMISSION
		       : r == -ENODEV || r == -ENOENT || r == -EOPNOTSUPP ? EXIT_UNSUPPORTED
									  : EXIT_FAILED;
	d->last_usec = clock_monotonic_us();
	log_event(LOG_LVL_NOTICE, "start", "pghotd %s started with %s", PGHOTD_VERSION,
		  d->opt.config_path);
	publish_reload_status(d, true, "started");
	notify_ready("started");
	refresh_status(d);
	r = sd_event_loop(d->event);
	engine_stop(d->engine, d->pub);
	engine_tick(d->engine, config_pub_current(d->pub));
	stats_set(&d->stats, ST_UP, 0);
	write_stats(d);
	return r < 0 ? EXIT_FAILED : EXIT_OK;
}

/* --status [--watch [SECONDS]]: the running daemon's stats file, read with the tiers of cfg. */
static int status(const struct options *opt, const struct pghotd_config *cfg)
{
	double every = cfg->stats.interval_ms < 1000 ? 1.0 : cfg->stats.interval_ms / 1000.0;
	struct status_cmd c = {
	    .stats_path = cfg->stats.file,
	    .interval_ms = cfg->stats.interval_ms,
	    .procfs_root = opt->procfs_root,
	    .topo = cfg->topo,
	    .watch_s = !opt->watch	  ? 0
		       : opt->watch_s > 0 ? opt->watch_s
					  : every,
	    .out = stdout,
	    .err = stderr,
	};

	return status_cmd_run(&c);
}

/* --reload PID: the ExecReload= of pghotd.service before systemd 253. */
static int reload_client(const struct options *opt)
{
	char path[PATH_MAX];
	const char *p = path;
	struct reload_ops ops;
	struct reload_status st;
	int r = reload_status_path(getenv("RUNTIME_DIRECTORY"), path, sizeof(path));

	if (r < 0) {
		log_error(
		    "--reload needs $RUNTIME_DIRECTORY (RuntimeDirectory= of pghotd.service)");
		return EXIT_USAGE;
	}
	reload_ops_real(&ops, &p);
	r = reload_request(&ops, opt->reload_pid, 60000, &st);
	if (r < 0) {
		log_error_errno(r, "reload of pghotd (pid %d) got no answer", opt->reload_pid);
		return EXIT_FAILED;
	}
	if (!st.ok) {
		log_error("reload of pghotd (pid %d) refused: %s", opt->reload_pid, st.message);
		return EXIT_FAILED;
	}
	log_info("reload of pghotd (pid %d): %s", opt->reload_pid, st.message);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct daemon d = {0};
	struct pghotd_config *cfg;
	char msg[256];
	int code;

	if (options_parse(argc, argv, &d.opt, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pghotd: %s (try --help)\n", msg);
		return EXIT_USAGE;
	}
	switch (d.opt.mode) {
	case MODE_HELP:
		options_usage(argv[0], stdout);
		return EXIT_OK;
	case MODE_VERSION:
		printf("pghotd %s\n", PGHOTD_VERSION);
		return EXIT_OK;
	case MODE_CHECK_CONFIG:
		return check_config(&d.opt);
	default:
		break;
	}
	log_setup(d.opt.log_target, d.opt.verbose ? LOG_LVL_DEBUG : LOG_LVL_INFO);
	if (d.opt.mode == MODE_RELOAD)
		return reload_client(&d.opt);
	if (reload_status_path(getenv("RUNTIME_DIRECTORY"), d.reload_status_path,
			       sizeof(d.reload_status_path)) < 0)
		d.reload_status_path[0] = '\0';
	if (d.opt.mode == MODE_STATUS && !d.opt.verbose) /* its output is the view */
		log_set_level(LOG_LVL_WARNING);
	code = startup_config(&d.opt, &cfg);
	if (code != EXIT_OK)
		return code;
	if (d.opt.mode == MODE_STATUS) {
		code = status(&d.opt, cfg);
		destroy_config(cfg);
		return code;
	}
	apply_log_level(&d.opt, cfg);
	if (d.opt.mode == MODE_REPLAY) {
		code = replay_run(d.opt.replay_path, cfg, stdout) < 0 ? EXIT_FAILED : EXIT_OK;
		destroy_config(cfg);
		return code;
	}
	if (d.opt.mode == MODE_PROBE) {
		code = preflight(&d.opt, cfg, stdout, NULL);
		destroy_config(cfg);
		return code;
	}
	code = run(&d, cfg);
	if (d.engine)
		engine_stop(d.engine, d.pub); /* joins every thread before the configs go */
	engine_free(d.engine);
	sd_event_unref(d.event);
	config_pub_free(d.pub);
	return code;
}
