/* status_cmd: see status_cmd.h. */
#include "daemon/status_cmd.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "daemon/status.h"

/* Both snapshots of a watch: the rates are over the daemon's two last writes. */
struct watch_state {
	struct status_snap cur, prev;
	bool has_cur, has_prev;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t slow_mask(const struct topology *t)
{
	uint64_t m = 0;

	for (int n = 0; t && n < t->nr_nodes && n < 64; n++)
		if (topology_node_is_slow(t, n))
			m |= 1ull << n;
	return m;
}

static void read_error(const struct status_cmd *c, int r, char *msg, size_t len)
{
	if (r == -ENOENT)
		snprintf(msg, len,
			 "no stats file at %s: pghotd is not running (or the configuration read "
			 "is not its own: --config); see systemctl status pghotd",
			 c->stats_path);
	else if (r == -EFBIG)
		snprintf(msg, len, "%s is larger than %u MiB: not a pghotd stats file",
			 c->stats_path, STATUS_CMD_MAX_BYTES >> 20);
	else
		snprintf(msg, len, "cannot read the stats file %s: %s", c->stats_path,
			 file_strerror(r));
}

/* Reads and sorts the stats file into *out. 0, or -errno with one line in msg. */
static int read_snap(const struct status_cmd *c, struct status_snap *out, char *msg, size_t len)
{
	struct prom_text text;
	struct timespec mtime;
	char *buf;
	size_t n;
	int r = file_read_alloc_mtime(c->stats_path, STATUS_CMD_MAX_BYTES, &buf, &n, &mtime);

	if (r < 0) {
		read_error(c, r, msg, len);
		return r;
	}
	r = prom_text_parse(buf, n, STATUS_MAX_SAMPLES, &text);
	free(buf);
	if (r == 0)
		r = status_snap_build(&text, (double)mtime.tv_sec + mtime.tv_nsec / 1e9,
				      slow_mask(c->topo), out);
	if (r < 0)
		snprintf(msg, len, "cannot read the stats file %s: %s", c->stats_path,
			 strerror(-r));
	return r;
}

/* The nodes as they are now; a failure leaves the figures of the last read. */
static void refresh_nodes(const struct status_cmd *c)
{
	if (!c->topo)
		return;
	(void)topology_refresh_free(c->topo);
	(void)topology_read_marks(c->topo, c->procfs_root);
}

static int once(const struct status_cmd *c)
{
	struct status_snap s;
	char msg[1024];
	int r = read_snap(c, &s, msg, sizeof(msg));

	if (r == 0) {
		r = status_check(&s, now_s(), c->interval_ms, c->stats_path, msg, sizeof(msg));
		if (r == 0) {
			refresh_nodes(c);
			status_render(c->out, &s, NULL, c->topo, now_s(), c->interval_ms);
		}
		status_snap_free(&s);
	}
	if (r < 0)
		fprintf(c->err, "pghotd: %s\n", msg);
	return r < 0 ? 1 : 0;
}

/* Keeps a new snapshot when the daemon wrote the file since the last one; a new start
 * (another pghotd_start_time_seconds) drops the old pair. */
static void watch_take(struct watch_state *w, struct status_snap *s)
{
	if (w->has_cur && w->cur.mtime == s->mtime) {
		status_snap_free(s);
		return;
	}
	if (w->has_prev)
		status_snap_free(&w->prev);
	w->has_prev = w->has_cur && w->cur.start_time == s->start_time;
	if (w->has_prev)
		w->prev = w->cur;
	else if (w->has_cur)
		status_snap_free(&w->cur);
	w->cur = *s;
	w->has_cur = true;
}

static void watch_frame(const struct status_cmd *c, struct watch_state *w, FILE *f)
{
	struct status_snap s;
	char msg[1024];
	time_t t = time(NULL);
	struct tm tm;
	int r = read_snap(c, &s, msg, sizeof(msg));

	localtime_r(&t, &tm);
	fprintf(f, "pghotd --status, every %.1f s (Ctrl-C quits)%*s%02d:%02d:%02d\n\n", c->watch_s,
		30, "", tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (r == 0) {
		r = status_check(&s, now_s(), c->interval_ms, c->stats_path, msg, sizeof(msg));
		if (r == 0)
			watch_take(w, &s);
		else
			status_snap_free(&s);
	}
	if (r < 0) {
		fprintf(f, "pghotd: %s\n", msg);
		return;
	}
	refresh_nodes(c);
	status_render(f, &w->cur, w->has_prev ? &w->prev : NULL, c->topo, now_s(), c->interval_ms);
}

/* One frame written whole, after clearing a terminal (another output gets a blank line). */
static void watch_show(const struct status_cmd *c, struct watch_state *w)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	watch_frame(c, w, f);
	fclose(f);
	fputs(isatty(fileno(c->out)) ? "\033[H\033[2J" : "\n", c->out);
	fwrite(buf, 1, len, c->out);
	fflush(c->out);
	free(buf);
}

static int watch(const struct status_cmd *c)
{
	struct watch_state w = {0};
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 || (sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		fprintf(c->err, "pghotd: cannot watch for Ctrl-C: %s\n", strerror(errno));
		return 1;
	}
	for (;;) {
		struct pollfd p = {.fd = sfd, .events = POLLIN};

		watch_show(c, &w);
		if (poll(&p, 1, (int)(c->watch_s * 1000)) > 0)
			break;
	}
	close(sfd);
	if (w.has_prev)
		status_snap_free(&w.prev);
	if (w.has_cur)
		status_snap_free(&w.cur);
	return 0;
}

int status_cmd_run(const struct status_cmd *c)
{
	return c->watch_s > 0 ? watch(c) : once(c);
}
