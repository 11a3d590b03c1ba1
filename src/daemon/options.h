/* options: the command line. Pure parsing (no I/O besides nothing): tests call it directly. */
#ifndef PGHOTD_OPTIONS_H
#define PGHOTD_OPTIONS_H

#include <stdbool.h>

#include "base/log.h"

/* Exit codes, documented in pghotd(8). */
enum pghotd_exit {
	EXIT_OK = 0,
	EXIT_FAILED = 1,      /* runtime failure not covered below */
	EXIT_USAGE = 2,	      /* bad command line */
	EXIT_CONFIG = 3,      /* configuration file missing, unreadable or invalid */
	EXIT_PERMISSION = 4,  /* a privilege or capability the configuration needs is missing */
	EXIT_UNSUPPORTED = 5, /* the system lacks what the configuration requires (NUMA sysfs,
				 a source set to "on") */
};

enum pghotd_mode {
	MODE_RUN,
	MODE_CHECK_CONFIG,
	MODE_PROBE,
	MODE_REPLAY,
	MODE_RELOAD,
	MODE_STATUS,
	MODE_HELP,
	MODE_VERSION
};

struct options {
	enum pghotd_mode mode;
	const char *config_path;
	bool config_given; /* --config was on the command line */
	enum log_target log_target;
	int verbose; /* count of -v */
	const char *sysfs_root;
	const char *procfs_root;
	const char *replay_path; /* --replay FILE */
	int reload_pid;		 /* --reload PID */
	bool watch;		 /* --status --watch */
	double watch_s;		 /* its SECONDS; 0: stats.interval_ms (at least 1 s) */
};

/* Fills *out from argv. On a usage error returns -EINVAL and writes one message to msg. */
int options_parse(int argc, char **argv, struct options *out, char *msg, int msg_len);
/* Prints --help text. */
void options_usage(const char *prog, void *file);

#endif
