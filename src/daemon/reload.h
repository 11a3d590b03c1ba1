/* reload: the answer to a reload request, for systemd before 253 (Type=notify, whose
 * ExecReload= must not return before the daemon has answered).
 *
 * The daemon publishes a reload status file, "generation=N result=ok|failed|started" and a
 * message line, in its runtime directory ($RUNTIME_DIRECTORY, set by RuntimeDirectory=),
 * replacing it atomically after each reload, whatever the outcome. `pghotd --reload PID`
 * reads the generation, sends SIGHUP, and waits for a higher one: it exits 0 when that
 * reload took effect, 1 when it was refused or the daemon went away. The parse, format and
 * wait logic is pure or runs through reload_ops so tests drive it without a daemon. */
#ifndef PGHOTD_RELOAD_H
#define PGHOTD_RELOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RELOAD_STATUS_FILE "reload-status"

struct reload_status {
	uint64_t generation; /* 0 at start, one more per reload */
	bool ok;	     /* the last reload took effect (true at start) */
	char message[256];   /* what happened, one line */
};

/* Pure: formats s as the file's text. Returns what snprintf returns. */
int reload_status_format(char *buf, size_t len, const struct reload_status *s);
/* Pure: parses the file's text. 0, or -EBADMSG when it is not a status; *out untouched then. */
int reload_status_parse(const char *text, struct reload_status *out);
/* The status file's path in the runtime directory named by runtime_dir (the value of
 * $RUNTIME_DIRECTORY: the first of a colon-separated list). -EINVAL when runtime_dir is
 * NULL or empty, -ENAMETOOLONG when it does not fit. */
int reload_status_path(const char *runtime_dir, char *buf, size_t len);
/* Writes s to path atomically (temporary file and rename). 0 or -errno. */
int reload_status_write(const char *path, const struct reload_status *s);

struct reload_ops {
	/* Reads the status file into buf, NUL-terminated: 0 or -errno (-ENOENT: none yet). */
	int (*read)(void *ctx, char *buf, size_t len);
	/* Sends SIGHUP to pid (0 or -errno); alive() is 0 while pid exists, else -ESRCH. */
	int (*hangup)(void *ctx, pid_t pid);
	int (*alive)(void *ctx, pid_t pid);
	void (*sleep_ms)(void *ctx, unsigned ms);
	void *ctx;
};

/* Requests a reload of pid and waits up to timeout_ms for its answer. Returns 0 with *out
 * set when the daemon answered (out->ok tells the outcome), -ESRCH when it went away,
 * -ETIMEDOUT when it did not answer, or what the ops returned. */
int reload_request(const struct reload_ops *ops, pid_t pid, unsigned timeout_ms,
		   struct reload_status *out);

/* The ops over the real file at path, kill(2) and nanosleep. */
void reload_ops_real(struct reload_ops *ops, const char **path);

#endif
