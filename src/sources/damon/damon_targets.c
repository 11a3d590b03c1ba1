/* damon_targets: the DAMON source's targets and their cuts (see damon_targets.h). */
#include <stdlib.h>
#include <unistd.h>

#include "sources/damon/damon_targets.h"

void damon_targets_free(struct damon_target *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++)
		if (t[i].fd >= 0)
			close(t[i].fd);
	free(t);
}

/* The open pagemap read least lately of l[0..n) and best, the open ones counted into *open. */
static struct damon_target *least_used(struct damon_target *l, size_t n, size_t *open,
				       struct damon_target *best)
{
	for (size_t i = 0; l && i < n; i++) {
		if (l[i].fd < 0)
			continue;
		(*open)++;
		if (!best || l[i].fd_used < best->fd_used)
			best = &l[i];
	}
	return best;
}

void damon_targets_fd_use(struct damon_targets *ts, struct damon_target *t, size_t max)
{
	t->fd_used = ++ts->fd_clock;
	if (t->fd < 0) {
		size_t open = 0;
		struct damon_target *v = least_used(ts->tg, ts->ntg, &open, NULL);

		v = least_used(ts->old, ts->nold, &open, v);
		if (v && open >= max) {
			close(v->fd);
			v->fd = -1;
		}
	}
}

size_t damon_target_find(const struct damon_target *t, size_t n, pid_t pid)
{
	size_t i = 0;

	while (i < n && t[i].p.pid != pid)
		i++;
	return i;
}

bool damon_targets_same_pids(const struct damon_target *a, size_t na, const struct damon_target *b,
			     size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].p.pid != b[i].p.pid)
			return false;
	return true;
}

void damon_targets_carry(const struct damon_targets *ts, struct damon_target *t, size_t n,
			 uint64_t now_ms, bool *recut, bool *added)
{
	*recut = *added = false;
	for (size_t i = 0; i < n; i++) {
		size_t j = damon_target_find(ts->tg, ts->ntg, t[i].p.pid);
		const struct damon_target *o;

		if (j == ts->ntg) {
			*added = true;
			continue;
		}
		o = &ts->tg[j];
		t[i].recent = o->recent;
		t[i].recut_after_ms = o->recut_after_ms;
		for (size_t z = 0; z < o->nzoom; z++)
			damon_recent_add(&t[i].recent, o->zoom[z].start, o->zoom[z].end, now_ms);
		if (o->nzoom) {
			t[i].recut_after_ms = now_ms + DAMON_RECUT_GAP_MS;
			*recut = true;
		}
	}
}

void damon_targets_switch(struct damon_targets *ts, struct damon_target *t, size_t n,
			  uint64_t now_ns)
{
	damon_targets_free(ts->old, ts->nold);
	ts->old = ts->tg, ts->nold = ts->ntg;
	ts->tg = t, ts->ntg = n;
	ts->switch_ns = now_ns;
}

void damon_targets_clear(struct damon_targets *ts)
{
	damon_targets_free(ts->tg, ts->ntg);
	damon_targets_free(ts->old, ts->nold);
	*ts = (struct damon_targets){0};
}

struct damon_target *damon_targets_of(struct damon_targets *ts, const struct damon_region *r,
				      uint64_t time_ns, pid_t kpid)
{
	bool before = time_ns < ts->switch_ns;
	struct damon_target *list = before ? ts->old : ts->tg;
	size_t n = before ? ts->nold : ts->ntg;

	if (r->kdamond != kpid)
		return NULL;
	return r->target < n ? &list[r->target] : NULL;
}

struct damon_target *damon_targets_now(struct damon_targets *ts, struct damon_target *t)
{
	size_t j;

	if (t >= ts->tg && t < ts->tg + ts->ntg)
		return t;
	j = damon_target_find(ts->tg, ts->ntg, t->p.pid);
	return j < ts->ntg ? &ts->tg[j] : NULL;
}

bool damon_target_zoom_add(struct damon_target *t, const struct damon_region *r, uint64_t now_ms)
{
	if (damon_recent_covers(&t->recent, r->start, r->end, now_ms))
		return false;
	for (size_t i = 0; i < t->nzoom; i++)
		if (damon_range_overlaps(&t->zoom[i], r->start, r->end))
			return false;
	if (t->nzoom == DAMON_ZOOM_MAX)
		return false;
	t->zoom[t->nzoom++] = (struct damon_range){r->start, r->end};
	return true;
}

bool damon_targets_mark_cut(struct damon_targets *ts, struct damon_target *t,
			    const struct damon_region *r, uint64_t now_ms)
{
	struct damon_target *z = damon_targets_now(ts, t);

	return z && now_ms >= z->recut_after_ms && damon_target_zoom_add(z, r, now_ms) &&
	       !damon_recent_knows(&z->recent, r->start, r->end, now_ms);
}

bool damon_targets_recut_pending(const struct damon_targets *ts)
{
	for (size_t i = 0; i < ts->ntg; i++)
		if (ts->tg[i].nzoom)
			return true;
	return false;
}

void damon_targets_recut_done(struct damon_targets *ts, uint64_t now_ms)
{
	for (size_t i = 0; i < ts->ntg; i++)
		if (ts->tg[i].nzoom) {
			ts->tg[i].nzoom = 0;
			ts->tg[i].recut_after_ms = now_ms + DAMON_RECUT_GAP_MS;
		}
}
