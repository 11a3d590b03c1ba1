/* log: the one logging front end.
 *
 * Writes to the systemd journal with structured fields (PRIORITY, MESSAGE, PGHOTD_EVENT=...)
 * when stderr is the journal (JOURNAL_STREAM matches stderr's device and inode) or when asked
 * with --log=journal; to stderr with a level prefix otherwise. Any thread may log; the level
 * is read with a relaxed atomic load so SIGHUP can change it while workers log. */
#ifndef PGHOTD_LOG_H
#define PGHOTD_LOG_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/uio.h>

enum log_level {
	LOG_LVL_ERR = 3,
	LOG_LVL_WARNING = 4,
	LOG_LVL_NOTICE = 5,
	LOG_LVL_INFO = 6,
	LOG_LVL_DEBUG = 7
};

enum log_target { LOG_TARGET_AUTO, LOG_TARGET_JOURNAL, LOG_TARGET_STDERR };

/* Main thread, before other threads start. AUTO picks the journal when JOURNAL_STREAM
 * names stderr. */
void log_setup(enum log_target target, enum log_level level);
/* Any thread. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
bool log_to_journal(void);
/* Parses "err", "warning", "notice", "info", "debug"; -EINVAL otherwise. */
int log_level_from_string(const char *s, enum log_level *out);
const char *log_level_to_string(enum log_level level);

/* event: NULL, or a lifecycle event name sent as PGHOTD_EVENT= (start, reload,
 * reload-failed, stop, ...). Returns -abs(err) when err != 0 so callers can
 * `return log_error_errno(r, ...)`. */
int log_emit(enum log_level level, int err, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define log_error(...)		  log_emit(LOG_LVL_ERR, 0, NULL, __VA_ARGS__)
#define log_error_errno(e, ...)	  log_emit(LOG_LVL_ERR, (e), NULL, __VA_ARGS__)
#define log_warning(...)	  log_emit(LOG_LVL_WARNING, 0, NULL, __VA_ARGS__)
#define log_warning_errno(e, ...) log_emit(LOG_LVL_WARNING, (e), NULL, __VA_ARGS__)
#define log_notice(...)		  log_emit(LOG_LVL_NOTICE, 0, NULL, __VA_ARGS__)
#define log_info(...)		  log_emit(LOG_LVL_INFO, 0, NULL, __VA_ARGS__)
#define log_debug(...)		  log_emit(LOG_LVL_DEBUG, 0, NULL, __VA_ARGS__)
#define log_event(lvl, ev, ...)	  log_emit((lvl), 0, (ev), __VA_ARGS__)

/* Pure check behind LOG_TARGET_AUTO: true when journal_stream ("DEV:INODE", the value of
 * $JOURNAL_STREAM, may be NULL) names the file with device dev and inode ino. */
bool log_journal_stream_matches(const char *journal_stream, dev_t dev, ino_t ino);

/* Test hooks; main thread, while no other thread logs. The stderr line has the form
 * "pghotd[PID]: LEVEL: MESSAGE[: STRERROR]\n" (LEVEL: error, warning, notice, info, debug).
 * log_set_stream(NULL) restores stderr; log_set_journal_sender(NULL) restores
 * sd_journal_sendv(). A journal send that fails falls back to the stream. */
typedef int (*log_journal_sendv_fn)(const struct iovec *iov, int n);
void log_set_stream(FILE *f);
void log_set_journal_sender(log_journal_sendv_fn fn);

#endif
