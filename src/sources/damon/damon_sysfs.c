/* damon_sysfs: claiming, driving and giving back pghotd's kdamond (see damon_sysfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/damon/damon_sysfs.h"
#include "base/fileio.h"
#include "base/log.h"
#include "sys/procfs.h"

#define ATTR_MAX 64

/* What pghotd last wrote under one target's directory. */
struct kd_slot {
	pid_t pid;		 /* pid_target */
	size_t nreg;		 /* regions/nr_regions */
	struct damon_range *val; /* [nreg] each region's start and end; UINT64_MAX: not yet */
	int *fd;		 /* [2 * nreg] their files held open, -1: not */
};

/* At most this many region files held open, all targets (a cut of DAMON_ZOOM_PIECES pieces in
 * two spans and the ranges around them), and only descriptors in the lower half of
 * RLIMIT_NOFILE (the source holds a pagemap descriptor per target too): the rest are written
 * by path and closed. */
#define KD_FDS_MAX 320

struct damon_kdamond {
	char dir[PATH_MAX]; /* <sysfs_root>/kernel/mm/damon/admin/kdamonds */
	unsigned index;
	bool configured; /* our context is written */
	pid_t self;
	/* The targets' directories as pghotd last wrote them, so a commit writes only what
	 * changed: DAMON's sysfs rebuilds every directory below a count it is given (nr_targets:
	 * every target's; nr_regions: the target's regions), even an unchanged one, and in the
	 * emulator a region written whole (directory, start and end by path) cost about 130 us of
	 * CPU, its two values through files held open 6 us (Debian's 6.12, 2026-12-06). Valid
	 * while known; forgotten (kd_forget()) after any failed write and with the context. */
	bool known;
	size_t nslot; /* nr_targets */
	struct kd_slot *slot;
	size_t nfds;	 /* region files held open */
	int fd_hold_max; /* held only below this descriptor (half of RLIMIT_NOFILE) */
};

/* What claim needs to know of one kdamond. */
struct kd_state {
	bool on;
	pid_t pid;	 /* thread, -1 when off */
	bool context;	 /* has a context (someone set it up) */
	pid_t owner;	 /* pghotd that marked it, 0: not marked */
	bool owner_live; /* that pghotd still runs */
};

struct kd_view {
	unsigned n;
	struct kd_state k[DAMON_MAX_KDAMONDS];
};

static int path_of(char *buf, size_t size, const char *dir, long idx, const char *rel)
{
	int n = idx < 0 ? snprintf(buf, size, "%s/%s", dir, rel)
			: snprintf(buf, size, "%s/%ld/%s", dir, idx, rel);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* DAMON's sysfs answers -EBUSY while its lock is held, which the running kdamond takes for a
 * moment every sampling interval: such a read or write is tried again, a millisecond apart,
 * up to BUSY_TRIES times (a write the kernel refuses for a running kdamond stays -EBUSY). */
#define BUSY_TRIES 50

static int kd_read(const char *dir, long idx, const char *rel, char *buf, size_t size)
{
	char path[PATH_MAX];
	int r = path_of(path, sizeof(path), dir, idx, rel);

	for (int i = 0; r == 0 || (r == -EBUSY && i < BUSY_TRIES); i++) {
		if (i)
			usleep(1000);
		r = file_read_line(path, buf, size);
		if (r != -EBUSY)
			break;
	}
	return r;
}

static int kd_write(const char *dir, long idx, const char *rel, const char *val)
{
	char path[PATH_MAX];
	int r = path_of(path, sizeof(path), dir, idx, rel);

	for (int i = 0; r == 0 || (r == -EBUSY && i < BUSY_TRIES); i++) {
		if (i)
			usleep(1000);
		r = file_write_attr(path, val);
		if (r != -EBUSY)
			break;
	}
	return r;
}

static int kd_write_u64(const char *dir, long idx, const char *rel, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return kd_write(dir, idx, rel, buf);
}

/* Pure: a whole decimal value (a sysfs line) in [min, max]. */
static int parse_s64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int kd_read_s64(const char *dir, long idx, const char *rel, int64_t min, int64_t max,
		       int64_t *out)
{
	char buf[ATTR_MAX];
	int r = kd_read(dir, idx, rel, buf, sizeof(buf));

	return r < 0 ? r : parse_s64(buf, min, max, out);
}

/* A pghotd other than this one runs as pid. */
static bool pghotd_live(const char *procfs_root, pid_t pid, pid_t self)
{
	char path[PATH_MAX], comm[64];

	if (pid == self || procfs_path(path, sizeof(path), procfs_root, pid, "comm") < 0)
		return false;
	return file_read_line(path, comm, sizeof(comm)) == 0 && !strcmp(comm, "pghotd");
}

/* The pghotd whose mark kdamond idx carries: its scheme 0 is "stat" with apply_interval_us
 * DAMON_MARK_BASE + pid. 0 when unmarked. */
static pid_t kd_owner(const char *dir, unsigned idx)
{
	char buf[ATTR_MAX];
	int64_t v, n;

	if (kd_read_s64(dir, idx, "contexts/0/schemes/nr_schemes", 0, INT_MAX, &n) < 0 || n != 1 ||
	    kd_read(dir, idx, "contexts/0/schemes/0/action", buf, sizeof(buf)) < 0 ||
	    strcmp(buf, "stat") ||
	    kd_read_s64(dir, idx, "contexts/0/schemes/0/apply_interval_us", 0, INT64_MAX, &v) < 0 ||
	    v <= (int64_t)DAMON_MARK_BASE || v - (int64_t)DAMON_MARK_BASE > INT_MAX)
		return 0;
	return (pid_t)(v - (int64_t)DAMON_MARK_BASE);
}

static int kd_state_read(const char *dir, const char *procfs_root, unsigned idx, pid_t self,
			 struct kd_state *out)
{
	char state[ATTR_MAX];
	int64_t pid, nctx;
	int r = kd_read(dir, idx, "state", state, sizeof(state));

	if (r == 0)
		r = kd_read_s64(dir, idx, "pid", -1, INT_MAX, &pid);
	if (r == 0)
		r = kd_read_s64(dir, idx, "contexts/nr_contexts", 0, INT_MAX, &nctx);
	if (r < 0)
		return r;
	out->on = !strcmp(state, "on");
	out->pid = (pid_t)pid;
	out->context = nctx > 0;
	out->owner = out->context ? kd_owner(dir, idx) : 0;
	out->owner_live = out->owner && pghotd_live(procfs_root, out->owner, self);
	return 0;
}

static int view_read(const char *dir, const char *procfs_root, pid_t self, struct kd_view *v)
{
	int64_t n;
	int r = kd_read_s64(dir, -1, "nr_kdamonds", 0, INT_MAX, &n);

	if (r < 0)
		return r == -ENOENT ? -ENODEV : r;
	if (n > DAMON_MAX_KDAMONDS)
		return -E2BIG;
	v->n = (unsigned)n;
	for (unsigned i = 0; i < v->n; i++) {
		r = kd_state_read(dir, procfs_root, i, self, &v->k[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

enum pick { PICK_OURS, PICK_FREE, PICK_CREATE };

/* Pure: -EBUSY and why when a kdamond runs that is not a stale one of ours, or another
 * pghotd's is there; else 0. */
static int busy(const struct kd_view *v, char *why, size_t size)
{
	for (unsigned i = 0; i < v->n; i++) {
		const struct kd_state *k = &v->k[i];

		if (k->owner_live)
			snprintf(why, size, "kdamond %u is another pghotd's (pid %d)", i,
				 (int)k->owner);
		else if (k->on && !k->owner)
			snprintf(why, size,
				 "kdamond %u (pid %d) is running: DAMON is in use by someone else",
				 i, (int)k->pid);
		else
			continue;
		return -EBUSY;
	}
	return 0;
}

/* Pure: which kdamond to take (a stale one of ours first, then a free one, then a new one
 * when there is none), or -EBUSY and why not. */
static int decide(const struct kd_view *v, enum pick *pick, unsigned *idx, char *why, size_t size)
{
	int r = busy(v, why, size);

	if (r < 0)
		return r;
	for (unsigned i = 0; i < v->n; i++) {
		if (v->k[i].owner) {
			*pick = PICK_OURS, *idx = i;
			return 0;
		}
	}
	for (unsigned i = 0; i < v->n; i++) {
		if (!v->k[i].on && !v->k[i].context) {
			*pick = PICK_FREE, *idx = i;
			return 0;
		}
	}
	if (v->n == 0) {
		*pick = PICK_CREATE, *idx = 0;
		return 0;
	}
	snprintf(why, size,
		 "%u kdamond%s set up by someone else and none free (state off, no context): "
		 "pghotd does not rewrite nr_kdamonds under them",
		 v->n, v->n == 1 ? " is" : "s are");
	return -EBUSY;
}

static int admin_dir(char *buf, size_t size, const char *sysfs_root)
{
	int n = snprintf(buf, size, "%s/" DAMON_ADMIN, sysfs_root);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int look(const char *sysfs_root, const char *procfs_root, char *dir, size_t dsize,
		struct kd_view *v, enum pick *pick, unsigned *idx, char *why, size_t size)
{
	int r = admin_dir(dir, dsize, sysfs_root);

	if (r == 0)
		r = view_read(dir, procfs_root, getpid(), v);
	if (r == -ENODEV)
		snprintf(why, size, "no DAMON sysfs interface (%s/nr_kdamonds: %s)", dir,
			 strerror(ENOENT));
	else if (r == -E2BIG)
		snprintf(why, size, "more than %d kdamonds: DAMON is in use by someone else",
			 DAMON_MAX_KDAMONDS);
	else if (r < 0)
		snprintf(why, size, "cannot read the kdamonds under %s: %s", dir, file_strerror(r));
	else
		r = decide(v, pick, idx, why, size);
	return r == -E2BIG ? -EBUSY : r;
}

int damon_sysfs_inspect(const char *sysfs_root, const char *procfs_root, char *why, size_t size)
{
	struct kd_view *v = malloc(sizeof(*v));
	char dir[PATH_MAX];
	enum pick pick;
	unsigned idx;
	int r;

	if (!v)
		return -ENOMEM;
	r = look(sysfs_root, procfs_root, dir, sizeof(dir), v, &pick, &idx, why, size);
	free(v);
	return r;
}

static int take(struct damon_kdamond *k, const struct kd_view *v, enum pick pick)
{
	const struct kd_state *s = &v->k[k->index];
	int r = 0;

	if (pick == PICK_CREATE)
		return kd_write_u64(k->dir, -1, "nr_kdamonds", 1);
	if (pick == PICK_OURS && s->on) {
		r = kd_write(k->dir, k->index, "state", "off");
		if (r < 0)
			return r;
		log_notice("damon: stopped kdamond %u (pid %d), left running by pghotd %d that "
			   "is gone",
			   k->index, (int)s->pid, (int)s->owner);
	}
	return r;
}

int damon_sysfs_claim(const char *sysfs_root, const char *procfs_root, struct damon_kdamond **out,
		      char *why, size_t size)
{
	struct damon_kdamond *k = calloc(1, sizeof(*k));
	struct kd_view *v = malloc(sizeof(*v));
	uint64_t lim;
	enum pick pick;
	int r = k && v ? 0 : -ENOMEM;

	if (r == 0)
		r = look(sysfs_root, procfs_root, k->dir, sizeof(k->dir), v, &pick, &k->index, why,
			 size);
	if (r == 0) {
		r = take(k, v, pick);
		if (r < 0)
			snprintf(why, size, "cannot take kdamond %u under %s: %s", k->index, k->dir,
				 file_strerror(r));
	}
	free(v);
	if (r < 0) {
		free(k);
		return r;
	}
	k->self = getpid();
	lim = file_nofile_limit(2 * KD_FDS_MAX); /* unknown: the first KD_FDS_MAX */
	k->fd_hold_max = lim / 2 > INT_MAX ? INT_MAX : (int)(lim / 2);
	*out = k;
	return 0;
}

static void slot_close(struct damon_kdamond *k, struct kd_slot *sl)
{
	for (size_t j = 0; sl->fd && j < 2 * sl->nreg; j++)
		if (sl->fd[j] >= 0) {
			close(sl->fd[j]);
			k->nfds--;
		}
	free(sl->fd);
	free(sl->val);
	sl->fd = NULL;
	sl->val = NULL;
	sl->nreg = 0;
}

/* Whatever the directories hold now is unknown: the next write of the targets is whole. */
static void kd_forget(struct damon_kdamond *k)
{
	for (size_t i = 0; i < k->nslot; i++)
		slot_close(k, &k->slot[i]);
	free(k->slot);
	k->slot = NULL;
	k->nslot = 0;
	k->known = false;
}

/* The context: vaddr, our attributes, and the mark (a stat scheme applied once in about 35
 * days). Written while the kdamond is off, before the first start. */
static int write_context(struct damon_kdamond *k)
{
	static const char *const any[][2] = {
	    {"contexts/0/schemes/0/access_pattern/sz/min", "0"},
	    {"contexts/0/schemes/0/access_pattern/sz/max", "18446744073709551615"},
	    {"contexts/0/schemes/0/access_pattern/nr_accesses/min", "0"},
	    {"contexts/0/schemes/0/access_pattern/nr_accesses/max", "4294967295"},
	    {"contexts/0/schemes/0/access_pattern/age/min", "0"},
	    {"contexts/0/schemes/0/access_pattern/age/max", "4294967295"},
	};
	int r = kd_write(k->dir, k->index, "contexts/nr_contexts", "1");

	if (r == 0)
		r = kd_write(k->dir, k->index, "contexts/0/operations", "vaddr");
	if (r == 0)
		r = kd_write(k->dir, k->index, "contexts/0/schemes/nr_schemes", "1");
	if (r == 0)
		r = kd_write(k->dir, k->index, "contexts/0/schemes/0/action", "stat");
	for (size_t i = 0; r == 0 && i < sizeof(any) / sizeof(any[0]); i++)
		r = kd_write(k->dir, k->index, any[i][0], any[i][1]);
	if (r == 0)
		r = kd_write_u64(k->dir, k->index, "contexts/0/schemes/0/apply_interval_us",
				 DAMON_MARK_BASE + (uint64_t)k->self);
	k->configured = r == 0;
	kd_forget(k); /* a new context has no targets */
	return r;
}

static int write_attrs(struct damon_kdamond *k, const struct damon_attrs *a)
{
	static const char *const rel[] = {
	    "contexts/0/monitoring_attrs/intervals/sample_us",
	    "contexts/0/monitoring_attrs/intervals/aggr_us",
	    "contexts/0/monitoring_attrs/intervals/update_us",
	    "contexts/0/monitoring_attrs/nr_regions/max",
	    "contexts/0/monitoring_attrs/nr_regions/min",
	};
	const uint64_t val[] = {a->sample_us, a->aggr_us, a->update_us, a->max_regions,
				a->min_regions};
	int r = 0;

	for (size_t i = 0; r == 0 && i < sizeof(rel) / sizeof(rel[0]); i++)
		r = kd_write_u64(k->dir, k->index, rel[i], val[i]);
	return r;
}

/* Writes region file j/<end ? "end" : "start"> (under dirfd, the target's regions directory):
 * through the file held open, or opened now, and held while fewer than KD_FDS_MAX are. */
static int write_value(struct damon_kdamond *k, struct kd_slot *sl, int dirfd, size_t j, bool end,
		       uint64_t v)
{
	int *fd = &sl->fd[2 * j + end], f = *fd, r;
	char rel[48], buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	if (f < 0) {
		snprintf(rel, sizeof(rel), "%zu/%s", j, end ? "end" : "start");
		f = file_open_attr_at(dirfd, rel);
		if (f < 0)
			return f;
	}
	r = file_pwrite_attr(f, buf);
	if (*fd >= 0)
		return r; /* held already */
	if (k->nfds < KD_FDS_MAX && f < k->fd_hold_max)
		*fd = f, k->nfds++;
	else
		close(f);
	return r;
}

/* The target's regions directory (dir, relative to the kdamond's), opened into *dirfd on first
 * need. 0 or -errno. */
static int regions_dir(const struct damon_kdamond *k, const char *dir, int *dirfd)
{
	char path[PATH_MAX];
	int r;

	if (*dirfd >= 0)
		return 0;
	r = path_of(path, sizeof(path), k->dir, k->index, dir);
	if (r == 0 && (*dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		r = -errno;
	return r;
}

/* Target i's regions: nr_regions makes their directories (when their number changed; 0: the
 * commit keeps DAMON's own), then each one's start and end that changed. */
static int write_regions(struct damon_kdamond *k, size_t i, const struct damon_ranges *g)
{
	struct kd_slot *sl = &k->slot[i];
	size_t n = g ? g->n : 0;
	char dir[64], rel[96];
	int r = 0, dirfd = -1;

	snprintf(dir, sizeof(dir), "contexts/0/targets/%zu/regions", i);
	if (sl->nreg != n) {
		slot_close(k, sl);
		snprintf(rel, sizeof(rel), "%s/nr_regions", dir);
		r = kd_write_u64(k->dir, k->index, rel, n);
		if (r < 0 || n == 0)
			return r;
		sl->val = malloc(n * sizeof(*sl->val));
		sl->fd = malloc(2 * n * sizeof(*sl->fd));
		if (!sl->val || !sl->fd)
			return -ENOMEM; /* the caller forgets the slots */
		sl->nreg = n;
		for (size_t j = 0; j < n; j++) {
			sl->val[j] = (struct damon_range){UINT64_MAX, UINT64_MAX};
			sl->fd[2 * j] = sl->fd[2 * j + 1] = -1;
		}
	}
	for (size_t j = 0; r == 0 && j < n; j++) {
		bool s = sl->val[j].start != g->r[j].start, e = sl->val[j].end != g->r[j].end;

		if ((s && sl->fd[2 * j] < 0) || (e && sl->fd[2 * j + 1] < 0))
			r = regions_dir(k, dir, &dirfd);
		if (r == 0 && s)
			r = write_value(k, sl, dirfd, j, false, g->r[j].start);
		if (r == 0 && e)
			r = write_value(k, sl, dirfd, j, true, g->r[j].end);
		if (r == 0)
			sl->val[j] = g->r[j];
	}
	if (dirfd >= 0)
		close(dirfd);
	return r;
}

static int write_targets(struct damon_kdamond *k, const pid_t *pids,
			 const struct damon_ranges *init, size_t n)
{
	char rel[64];
	int r = 0;

	if (!k->known || k->nslot != n) {
		kd_forget(k);
		k->slot = calloc(n, sizeof(*k->slot));
		if (!k->slot)
			return -ENOMEM;
		r = kd_write_u64(k->dir, k->index, "contexts/0/targets/nr_targets", n);
		k->nslot = n;
		k->known = r == 0;
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		if (k->slot[i].pid != pids[i]) {
			snprintf(rel, sizeof(rel), "contexts/0/targets/%zu/pid_target", i);
			r = kd_write_u64(k->dir, k->index, rel, (uint64_t)pids[i]);
			k->slot[i].pid = r == 0 ? pids[i] : 0;
		}
		if (r == 0)
			r = write_regions(k, i, init ? &init[i] : NULL);
	}
	if (r < 0)
		kd_forget(k);
	return r;
}

static bool kd_on(const struct damon_kdamond *k)
{
	char state[ATTR_MAX];

	return kd_read(k->dir, k->index, "state", state, sizeof(state)) == 0 &&
	       !strcmp(state, "on");
}

int damon_sysfs_set_targets(struct damon_kdamond *k, const struct damon_attrs *a, const pid_t *pids,
			    const struct damon_ranges *init, size_t n)
{
	bool on = kd_on(k);
	int r = 0;

	if (n == 0)
		return on ? kd_write(k->dir, k->index, "state", "off") : 0;
	if (!k->configured) {
		if (on)
			r = kd_write(k->dir, k->index, "state", "off");
		if (r == 0)
			r = write_context(k);
		on = false;
	}
	if (r == 0)
		r = write_attrs(k, a);
	if (r == 0)
		r = write_targets(k, pids, init, n);
	if (r < 0)
		return r;
	if (on) {
		r = kd_write(k->dir, k->index, "state", "commit");
		/* Refused while it runs (a target exited since it was listed): the caller lists
		 * again; its regions stay. Refused because it stopped since (every target gone):
		 * start it with the new targets. */
		if (r == 0 || kd_on(k))
			return r;
	}
	return kd_write(k->dir, k->index, "state", "on");
}

int damon_sysfs_kdamond_pid(const struct damon_kdamond *k, pid_t *out)
{
	int64_t pid;
	int r = kd_read_s64(k->dir, k->index, "pid", -1, INT_MAX, &pid);

	if (r < 0)
		return r;
	if (pid <= 0)
		return -ESRCH;
	*out = (pid_t)pid;
	return 0;
}

unsigned damon_sysfs_index(const struct damon_kdamond *k)
{
	return k->index;
}

void damon_sysfs_release(struct damon_kdamond *k)
{
	int64_t n;
	int r = 0;

	if (!k)
		return;
	if (kd_on(k))
		r = kd_write(k->dir, k->index, "state", "off");
	if (r == 0)
		r = kd_write(k->dir, k->index, "contexts/nr_contexts", "0");
	if (r == 0 && k->index == 0 &&
	    kd_read_s64(k->dir, -1, "nr_kdamonds", 0, INT_MAX, &n) == 0 && n == 1)
		r = kd_write(k->dir, -1, "nr_kdamonds", "0");
	if (r < 0)
		log_warning_errno(r, "damon: cannot give kdamond %u back under %s", k->index,
				  k->dir);
	kd_forget(k);
	free(k);
}
