/* options: command-line parsing for pghotd. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/options.h"
#include "pghotd-build.h"

enum {
	OPT_CHECK = 0x100,
	OPT_PROBE,
	OPT_LOG,
	OPT_SYSFS,
	OPT_PROCFS,
	OPT_VERSION,
	OPT_REPLAY,
	OPT_RELOAD,
	OPT_STATUS,
	OPT_WATCH
};

static const struct option long_opts[] = {
    {"config", required_argument, NULL, 'c'},
    {"check-config", no_argument, NULL, OPT_CHECK},
    {"probe", no_argument, NULL, OPT_PROBE},
    {"replay", required_argument, NULL, OPT_REPLAY},
    {"reload", required_argument, NULL, OPT_RELOAD},
    {"status", no_argument, NULL, OPT_STATUS},
    {"watch", optional_argument, NULL, OPT_WATCH},
    {"log", required_argument, NULL, OPT_LOG},
    {"verbose", no_argument, NULL, 'v'},
    {"sysfs-root", required_argument, NULL, OPT_SYSFS},
    {"procfs-root", required_argument, NULL, OPT_PROCFS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int parse_log_target(const char *s, enum log_target *t)
{
	if (!strcmp(s, "auto"))
		*t = LOG_TARGET_AUTO;
	else if (!strcmp(s, "journal"))
		*t = LOG_TARGET_JOURNAL;
	else if (!strcmp(s, "stderr"))
		*t = LOG_TARGET_STDERR;
	else
		return -EINVAL;
	return 0;
}

static int parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT_MAX)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

/* --watch's SECONDS: 0.1 to a day. */
static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 86400))
		return -EINVAL;
	*out = v;
	return 0;
}

/* --watch SECONDS as two words: getopt gives an optional argument only as --watch=SECONDS,
 * and leaves a separate one among the operands, where it is the first. */
static int watch_operand(struct options *o, int argc, char **argv, char *msg, int len)
{
	if (!o->watch || o->watch_s > 0 || optind >= argc)
		return 0;
	if (parse_seconds(argv[optind], &o->watch_s) < 0) {
		snprintf(msg, len, "--watch: '%s' is not a number of seconds (0.1 to 86400)",
			 argv[optind]);
		return -EINVAL;
	}
	optind++;
	return 0;
}

static int set_mode(struct options *o, enum pghotd_mode m, char *msg, int len)
{
	if (o->mode != MODE_RUN && o->mode != m) {
		snprintf(msg, len,
			 "--check-config, --probe, --replay, --reload and --status exclude each "
			 "other");
		return -EINVAL;
	}
	o->mode = m;
	return 0;
}

int options_parse(int argc, char **argv, struct options *out, char *msg, int msg_len)
{
	struct options o = {
	    .mode = MODE_RUN,
	    .config_path = PGHOTD_DEFAULT_CONFIG,
	    .log_target = LOG_TARGET_AUTO,
	    .sysfs_root = "/sys",
	    .procfs_root = "/proc",
	};
	int c, r = 0;

	optind = 0; /* reset getopt so tests may call this repeatedly */
	opterr = 0;
	while (r == 0 && (c = getopt_long(argc, argv, ":c:vh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config_path = optarg;
			o.config_given = true;
			break;
		case 'v':
			o.verbose++;
			break;
		case 'h':
			r = set_mode(&o, MODE_HELP, msg, msg_len);
			break;
		case OPT_VERSION:
			r = set_mode(&o, MODE_VERSION, msg, msg_len);
			break;
		case OPT_CHECK:
			r = set_mode(&o, MODE_CHECK_CONFIG, msg, msg_len);
			break;
		case OPT_PROBE:
			r = set_mode(&o, MODE_PROBE, msg, msg_len);
			break;
		case OPT_REPLAY:
			r = set_mode(&o, MODE_REPLAY, msg, msg_len);
			o.replay_path = optarg;
			break;
		case OPT_RELOAD:
			r = set_mode(&o, MODE_RELOAD, msg, msg_len);
			if (r == 0 && parse_pid(optarg, &o.reload_pid) < 0) {
				snprintf(msg, msg_len, "--reload: '%s' is not a process id",
					 optarg);
				r = -EINVAL;
			}
			break;
		case OPT_STATUS:
			r = set_mode(&o, MODE_STATUS, msg, msg_len);
			break;
		case OPT_WATCH:
			o.watch = true;
			if (optarg && parse_seconds(optarg, &o.watch_s) < 0) {
				snprintf(msg, msg_len,
					 "--watch: '%s' is not a number of seconds (0.1 to 86400)",
					 optarg);
				r = -EINVAL;
			}
			break;
		case OPT_LOG:
			if (parse_log_target(optarg, &o.log_target) < 0) {
				snprintf(msg, msg_len,
					 "--log: '%s' is not one of auto, journal, stderr", optarg);
				r = -EINVAL;
			}
			break;
		case OPT_SYSFS:
			o.sysfs_root = optarg;
			break;
		case OPT_PROCFS:
			o.procfs_root = optarg;
			break;
		case ':':
			snprintf(msg, msg_len, "%s needs an argument", argv[optind - 1]);
			r = -EINVAL;
			break;
		default:
			snprintf(msg, msg_len, "unknown option '%s'", argv[optind - 1]);
			r = -EINVAL;
			break;
		}
	}
	if (r == 0)
		r = watch_operand(&o, argc, argv, msg, msg_len);
	if (r == 0 && o.watch && o.mode != MODE_STATUS) {
		snprintf(msg, msg_len, "--watch goes with --status");
		r = -EINVAL;
	}
	if (r == 0 && optind < argc) {
		snprintf(msg, msg_len, "unexpected argument '%s'", argv[optind]);
		r = -EINVAL;
	}
	if (r == 0)
		*out = o;
	return r;
}

void options_usage(const char *prog, void *file)
{
	fprintf(
	    file,
	    "Usage: %s [OPTIONS]\n"
	    "Promote hot pages from slow memory tiers (CXL, CPU-less NUMA nodes) to fast DRAM.\n\n"
	    "  -c, --config FILE     configuration file (default %s)\n"
	    "      --check-config    validate the configuration, print it with defaults, exit\n"
	    "      --probe           print what this machine supports (sources, tiers), exit\n"
	    "      --replay FILE     run a perf.data recording through the policy, print what\n"
	    "                        would be promoted, move nothing\n"
	    "      --reload PID      reload the pghotd with this pid (SIGHUP) and wait for its\n"
	    "                        answer: exit 0 when the new configuration is in force, 1\n"
	    "                        when it was refused (ExecReload= of pghotd.service)\n"
	    "      --status          show what the running pghotd does (its stats file, the\n"
	    "                        nodes), exit\n"
	    "      --watch [SECONDS] with --status: show it again every SECONDS (default the\n"
	    "                        stats interval) until Ctrl-C\n"
	    "      --log TARGET      auto (journal when started by systemd), journal, stderr\n"
	    "  -v, --verbose         more log output (repeat for debug)\n"
	    "      --sysfs-root DIR  read sysfs from DIR (default /sys; for tests)\n"
	    "      --procfs-root DIR read procfs from DIR (default /proc; for tests)\n"
	    "  -h, --help            this text\n"
	    "      --version         print the version\n"
	    "See pghotd(8) and pghotd.conf(5).\n",
	    prog, PGHOTD_DEFAULT_CONFIG);
}
