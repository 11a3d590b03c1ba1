/* reload: the reload status file and the --reload client. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "daemon/reload.h"

int reload_status_format(char *buf, size_t len, const struct reload_status *s)
{
	return snprintf(buf, len, "generation=%" PRIu64 " result=%s\nmessage=%s\n", s->generation,
			s->generation == 0 ? "started"
			: s->ok		   ? "ok"
					   : "failed",
			s->message);
}

int reload_status_parse(const char *text, struct reload_status *out)
{
	struct reload_status s = {0};
	char result[16];
	const char *msg;
	int n = 0;

	if (sscanf(text, "generation=%" SCNu64 " result=%15[a-z]%n", &s.generation, result, &n) !=
		2 ||
	    n == 0)
		return -EBADMSG;
	if (!strcmp(result, "ok") || !strcmp(result, "started"))
		s.ok = true;
	else if (strcmp(result, "failed"))
		return -EBADMSG;
	msg = strstr(text + n, "message=");
	if (msg) {
		msg += strlen("message=");
		snprintf(s.message, sizeof(s.message), "%.*s", (int)strcspn(msg, "\n"), msg);
	}
	*out = s;
	return 0;
}

int reload_status_path(const char *runtime_dir, char *buf, size_t len)
{
	size_t dir_len;
	int n;

	if (!runtime_dir || !*runtime_dir)
		return -EINVAL;
	dir_len = strcspn(runtime_dir, ":");
	n = snprintf(buf, len, "%.*s/%s", (int)dir_len, runtime_dir, RELOAD_STATUS_FILE);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int reload_status_write(const char *path, const struct reload_status *s)
{
	char text[512];
	int n = reload_status_format(text, sizeof(text), s);

	if (n < 0 || (size_t)n >= sizeof(text))
		return -EOVERFLOW;
	return file_write_atomic(path, text, (size_t)n);
}

/* The generation in force now: 0 before the daemon wrote any (it may not have yet). */
static int read_status(const struct reload_ops *ops, struct reload_status *s)
{
	char text[512];
	int r = ops->read(ops->ctx, text, sizeof(text));

	if (r == -ENOENT) {
		*s = (struct reload_status){.ok = true};
		return 0;
	}
	return r < 0 ? r : reload_status_parse(text, s);
}

int reload_request(const struct reload_ops *ops, pid_t pid, unsigned timeout_ms,
		   struct reload_status *out)
{
	const unsigned step_ms = 20;
	struct reload_status before, now;
	int r = read_status(ops, &before);

	if (r < 0)
		return r;
	r = ops->hangup(ops->ctx, pid);
	if (r < 0)
		return r;
	for (unsigned waited = 0; waited <= timeout_ms; waited += step_ms) {
		r = read_status(ops, &now);
		/* The file is replaced by rename, so it is read whole: old or new. */
		if (r == 0 && now.generation > before.generation) {
			*out = now;
			return 0;
		}
		if (ops->alive(ops->ctx, pid) < 0)
			return -ESRCH;
		ops->sleep_ms(ops->ctx, step_ms);
	}
	return -ETIMEDOUT;
}

static int real_read(void *ctx, char *buf, size_t len)
{
	const char **path = ctx;
	int r = file_read_small(*path, buf, len);

	return r < 0 ? r : 0;
}

static int real_hangup(void *ctx, pid_t pid)
{
	(void)ctx;
	return kill(pid, SIGHUP) < 0 ? -errno : 0;
}

static int real_alive(void *ctx, pid_t pid)
{
	(void)ctx;
	return kill(pid, 0) < 0 && errno == ESRCH ? -ESRCH : 0;
}

static void real_sleep_ms(void *ctx, unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

	(void)ctx;
	nanosleep(&ts, NULL);
}

void reload_ops_real(struct reload_ops *ops, const char **path)
{
	*ops = (struct reload_ops){.read = real_read,
				   .hangup = real_hangup,
				   .alive = real_alive,
				   .sleep_ms = real_sleep_ms,
				   .ctx = path};
}
