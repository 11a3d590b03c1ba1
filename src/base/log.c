/* log: the one logging front end; see log.h for the contract.
 *
 * Each message is formatted once into a stack buffer and handed over in one call (one
 * sd_journal_sendv() datagram, or one locked fwrite+fflush), so lines from several threads
 * never interleave and logging needs no allocation. */
#include "base/log.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-journal.h>

#define LOG_IDENTIFIER "pghotd"
#define LOG_MSG_MAX    2048

/* Read by every logging thread, written by SIGHUP handling on the main thread; the level is
 * independent of all other memory, so relaxed order suffices on both sides. */
static _Atomic int log_max_level = LOG_LVL_INFO;
/* Set by log_setup() and the test hooks before other threads start; thread creation orders
 * these plain stores before any reader. */
static bool log_journal;
static FILE *log_stream;
static log_journal_sendv_fn log_sender = sd_journal_sendv;

static const char *const level_names[] = {
    [LOG_LVL_ERR] = "err",   [LOG_LVL_WARNING] = "warning", [LOG_LVL_NOTICE] = "notice",
    [LOG_LVL_INFO] = "info", [LOG_LVL_DEBUG] = "debug",
};

/* The stderr prefix spells "error" out: "pghotd[1]: err: ..." reads like a typo. */
static const char *const level_prefixes[] = {
    [LOG_LVL_ERR] = "error", [LOG_LVL_WARNING] = "warning", [LOG_LVL_NOTICE] = "notice",
    [LOG_LVL_INFO] = "info", [LOG_LVL_DEBUG] = "debug",
};

static bool log_level_valid(int level)
{
	return level >= LOG_LVL_ERR && level <= LOG_LVL_DEBUG;
}

int log_level_from_string(const char *s, enum log_level *out)
{
	if (!s)
		return -EINVAL;
	for (int l = LOG_LVL_ERR; l <= LOG_LVL_DEBUG; l++) {
		if (strcmp(s, level_names[l]) == 0) {
			*out = (enum log_level)l;
			return 0;
		}
	}
	return -EINVAL;
}

const char *log_level_to_string(enum log_level level)
{
	return log_level_valid((int)level) ? level_names[level] : "unknown";
}

bool log_journal_stream_matches(const char *journal_stream, dev_t dev, ino_t ino)
{
	uintmax_t d, i;
	int end = 0;

	if (!journal_stream)
		return false;
	if (sscanf(journal_stream, "%ju:%ju%n", &d, &i, &end) != 2 || journal_stream[end] != '\0')
		return false;
	return d == (uintmax_t)dev && i == (uintmax_t)ino;
}

static bool log_stderr_is_journal(void)
{
	struct stat st;

	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return log_journal_stream_matches(getenv("JOURNAL_STREAM"), st.st_dev, st.st_ino);
}

void log_setup(enum log_target target, enum log_level level)
{
	if (target == LOG_TARGET_AUTO)
		log_journal = log_stderr_is_journal();
	else
		log_journal = target == LOG_TARGET_JOURNAL;
	log_set_level(level);
}

void log_set_level(enum log_level level)
{
	if (!log_level_valid((int)level))
		return;
	/* Relaxed: pairs with the relaxed load in log_get_level(); no other data rides on it. */
	atomic_store_explicit(&log_max_level, (int)level, memory_order_relaxed);
}

enum log_level log_get_level(void)
{
	/* Relaxed: pairs with the relaxed store in log_set_level(). */
	return (enum log_level)atomic_load_explicit(&log_max_level, memory_order_relaxed);
}

bool log_to_journal(void)
{
	return log_journal;
}

void log_set_stream(FILE *f)
{
	log_stream = f;
}

void log_set_journal_sender(log_journal_sendv_fn fn)
{
	log_sender = fn ? fn : sd_journal_sendv;
}

static int log_errno_abs(int err)
{
	if (err == INT_MIN)
		return INT_MAX;
	return err < 0 ? -err : err;
}

/* Formats the message and, when err != 0, ": <strerror>" into buf; truncates silently. */
static void log_format(char *buf, size_t size, int err, const char *fmt, va_list ap)
{
	char ebuf[128];
	int n = vsnprintf(buf, size, fmt, ap);

	if (n < 0) {
		buf[0] = '\0';
		n = 0;
	}
	if (err == 0 || (size_t)n >= size - 1)
		return;
	snprintf(buf + n, size - (size_t)n, ": %s",
		 strerror_r(log_errno_abs(err), ebuf, sizeof(ebuf)));
}

static int log_send_journal(enum log_level level, int err, const char *event, const char *msg)
{
	char prio[32], ev[128], errno_field[32];
	struct iovec iov[5];
	int n = 0;

	snprintf(prio, sizeof(prio), "PRIORITY=%d", (int)level);
	iov[n++] = (struct iovec){prio, strlen(prio)};
	iov[n++] = (struct iovec){(void *)msg, strlen(msg)};
	iov[n++] = (struct iovec){(void *)"SYSLOG_IDENTIFIER=" LOG_IDENTIFIER,
				  strlen("SYSLOG_IDENTIFIER=" LOG_IDENTIFIER)};
	if (event) {
		snprintf(ev, sizeof(ev), "PGHOTD_EVENT=%s", event);
		iov[n++] = (struct iovec){ev, strlen(ev)};
	}
	if (err != 0) {
		snprintf(errno_field, sizeof(errno_field), "ERRNO=%d", log_errno_abs(err));
		iov[n++] = (struct iovec){errno_field, strlen(errno_field)};
	}
	return log_sender(iov, n);
}

/* One line per message: embedded newlines would let a message forge the next log line. */
static void log_write_stream(enum log_level level, const char *msg)
{
	char line[LOG_MSG_MAX + 64];
	FILE *f = log_stream ? log_stream : stderr;
	int n = snprintf(line, sizeof(line), LOG_IDENTIFIER "[%d]: %s: %s", (int)getpid(),
			 level_prefixes[level], msg);

	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	for (char *p = line; p < line + n; p++) {
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	}
	line[n++] = '\n';
	flockfile(f);
	fwrite_unlocked(line, 1, (size_t)n, f);
	fflush_unlocked(f);
	funlockfile(f);
}

int log_emit(enum log_level level, int err, const char *event, const char *fmt, ...)
{
	static const char key[] = "MESSAGE=";
	char buf[sizeof(key) - 1 + LOG_MSG_MAX];
	int saved_errno = errno;
	int ret = err == 0 ? 0 : -log_errno_abs(err);
	va_list ap;

	if (!log_level_valid((int)level))
		level = LOG_LVL_ERR;
	if ((int)level > (int)log_get_level())
		return ret;

	memcpy(buf, key, sizeof(key) - 1);
	va_start(ap, fmt);
	log_format(buf + sizeof(key) - 1, LOG_MSG_MAX, err, fmt, ap);
	va_end(ap);

	if (!log_journal || log_send_journal(level, err, event, buf) < 0)
		log_write_stream(level, buf + sizeof(key) - 1);
	/* Callers log between a failing call and their check of errno, as in systemd. */
	errno = saved_errno;
	return ret;
}
