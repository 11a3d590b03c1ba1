/* cgroup_top: the shown cgroups and (other); see cgroup_top.h for the rule.
 *
 * The places are an array; an open-addressing index (key -> place + 1, twice the places, keys
 * are keyed hashes already) finds a cgroup's place, rebuilt after each settle. The folded
 * cgroups of a round that could take a place are kept in a min-heap of max candidates by slow
 * bytes: no more than max can enter in one round. */
#include "table/cgroup_top.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "sys/procfs.h"

struct candidate {
	uint64_t key, slow;
	uint32_t rep;
};

struct cgroup_top {
	unsigned max;
	int nr_nodes;
	struct cgroup_series *place; /* [max] */
	struct cgroup_series other;
	uint64_t *bytes; /* [(max + 1) * nr_nodes], other's last */
	char *labels;	 /* [max * PROCFS_CGROUP_MAX] */
	char scratch[PROCFS_CGROUP_MAX];
	struct candidate *cand; /* [max], a min-heap by slow */
	unsigned ncand;
	uint32_t *index; /* [index_mask + 1] */
	size_t index_mask;
	unsigned offered, shown;
};

static const char other_label[] = "(other)";

int cgroup_top_new(unsigned max, int nr_nodes, struct cgroup_top **out)
{
	struct cgroup_top *t = calloc(1, sizeof(*t));
	size_t n = max ? max : 1;

	if (!t)
		return -ENOMEM;
	t->max = max;
	t->nr_nodes = nr_nodes > 0 ? nr_nodes : 0;
	for (t->index_mask = 1; t->index_mask < 2 * n;) /* a power of two past twice the places */
		t->index_mask <<= 1;
	t->index_mask--;
	t->place = calloc(n, sizeof(*t->place));
	t->bytes = calloc((n + 1) * (size_t)(t->nr_nodes ? t->nr_nodes : 1), sizeof(uint64_t));
	t->labels = calloc(n, PROCFS_CGROUP_MAX);
	t->cand = calloc(n, sizeof(*t->cand));
	t->index = calloc(t->index_mask + 1, sizeof(*t->index));
	if (!t->place || !t->bytes || !t->labels || !t->cand || !t->index) {
		cgroup_top_free(t);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < max; i++) {
		t->place[i].bytes = t->bytes + (size_t)i * (size_t)t->nr_nodes;
		t->place[i].label = t->labels + (size_t)i * PROCFS_CGROUP_MAX;
	}
	t->other.bytes = t->bytes + (size_t)max * (size_t)t->nr_nodes;
	t->other.label = (char *)other_label;
	t->other.len = sizeof(other_label) - 1;
	*out = t;
	return 0;
}

void cgroup_top_free(struct cgroup_top *t)
{
	if (!t)
		return;
	free(t->index);
	free(t->cand);
	free(t->labels);
	free(t->bytes);
	free(t->place);
	free(t);
}

unsigned cgroup_top_max(const struct cgroup_top *t)
{
	return t->max;
}

/* The place of key, or -1. */
static int index_find(const struct cgroup_top *t, uint64_t key)
{
	for (size_t i = 0; i <= t->index_mask; i++) {
		uint32_t c = t->index[(key + i) & t->index_mask];

		if (c == 0)
			return -1;
		if (t->place[c - 1].key == key)
			return (int)(c - 1);
	}
	return -1;
}

static void index_rebuild(struct cgroup_top *t)
{
	memset(t->index, 0, (t->index_mask + 1) * sizeof(*t->index));
	t->shown = 0;
	for (unsigned p = 0; p < t->max; p++) {
		size_t i = (size_t)t->place[p].key;

		if (!t->place[p].key)
			continue;
		while (t->index[i & t->index_mask])
			i++;
		t->index[i & t->index_mask] = p + 1;
		t->shown++;
	}
}

/* Candidates by slow bytes, largest first. */
static int cand_by_slow(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;

	return (x->slow < y->slow) - (x->slow > y->slow);
}

/* Places by their last round's slow bytes, largest first. */
static int place_by_slow(const void *a, const void *b)
{
	const struct cgroup_series *x = *(const struct cgroup_series *const *)a;
	const struct cgroup_series *y = *(const struct cgroup_series *const *)b;

	return (x->slow < y->slow) - (x->slow > y->slow);
}

static void series_copy(struct cgroup_series *to, const struct cgroup_series *from, int nr_nodes)
{
	uint64_t *bytes = to->bytes;
	char *label = to->label;

	*to = *from;
	to->bytes = bytes;
	to->label = label;
	memcpy(bytes, from->bytes, (size_t)nr_nodes * sizeof(*bytes));
	if (label != other_label)
		memcpy(label, from->label, from->len + 1);
}

int cgroup_top_resize(struct cgroup_top **tp, unsigned max)
{
	struct cgroup_top *old = *tp, *t;
	struct cgroup_series **order = calloc(old->max ? old->max : 1, sizeof(*order));
	unsigned n = 0;
	int r = order ? cgroup_top_new(max, old->nr_nodes, &t) : -ENOMEM;

	if (r < 0) {
		free(order);
		return r;
	}
	for (unsigned i = 0; i < old->max; i++)
		if (old->place[i].key)
			order[n++] = &old->place[i];
	qsort(order, n, sizeof(*order), place_by_slow);
	for (unsigned i = 0; i < n && i < max; i++)
		series_copy(&t->place[i], order[i], t->nr_nodes);
	series_copy(&t->other, &old->other, t->nr_nodes);
	index_rebuild(t);
	free(order);
	cgroup_top_free(old);
	*tp = t;
	return 0;
}

static void series_begin(struct cgroup_series *s, int nr_nodes)
{
	s->hot = 0;
	s->slow = 0;
	s->seen = false;
	s->fresh = false;
	memset(s->bytes, 0, (size_t)nr_nodes * sizeof(*s->bytes));
}

void cgroup_top_begin(struct cgroup_top *t)
{
	for (unsigned i = 0; i < t->max; i++)
		series_begin(&t->place[i], t->nr_nodes);
	series_begin(&t->other, t->nr_nodes);
	t->ncand = 0;
	t->offered = 0;
}

static void heap_sift_down(struct candidate *h, unsigned n, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, m = i;
		struct candidate tmp;

		if (l < n && h[l].slow < h[m].slow)
			m = l;
		if (l + 1 < n && h[l + 1].slow < h[m].slow)
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

static void heap_push(struct candidate *h, unsigned *n, struct candidate c)
{
	unsigned i = (*n)++;

	h[i] = c;
	while (i > 0 && h[(i - 1) / 2].slow > h[i].slow) {
		struct candidate tmp = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

void cgroup_top_offer(struct cgroup_top *t, uint64_t key, uint64_t slow, uint32_t rep,
		      bool showable)
{
	int p = key ? index_find(t, key) : -1;

	if (!key)
		return;
	t->offered++;
	if (!showable)
		return;
	if (p >= 0) {
		t->place[p].seen = true;
		t->place[p].slow = slow;
		t->place[p].rep = rep;
		return;
	}
	if (t->ncand < t->max) {
		heap_push(t->cand, &t->ncand, (struct candidate){key, slow, rep});
	} else if (t->max && slow > t->cand[0].slow) {
		t->cand[0] = (struct candidate){key, slow, rep};
		heap_sift_down(t->cand, t->ncand, 0);
	}
}

/* A free place, or -1. */
static int free_place(const struct cgroup_top *t)
{
	for (unsigned i = 0; i < t->max; i++)
		if (!t->place[i].key)
			return (int)i;
	return -1;
}

/* The shown place with the fewest slow bytes (max > 0, every place taken). */
static int smallest_place(const struct cgroup_top *t)
{
	unsigned m = 0;

	for (unsigned i = 1; i < t->max; i++)
		if (t->place[i].slow < t->place[m].slow)
			m = i;
	return (int)m;
}

/* The place candidate c takes: a free one, or the smallest shown one when c has more than twice
 * its slow bytes; -1 for none. */
static int place_for(const struct cgroup_top *t, const struct candidate *c)
{
	int p = free_place(t);

	if (p >= 0 || t->max == 0)
		return p;
	p = smallest_place(t);
	if (t->place[p].slow > UINT64_MAX / 2 || c->slow <= 2 * t->place[p].slow)
		return -1;
	return p;
}

/* Shows candidate c in place p if its path reads as a label value. */
static void admit(struct cgroup_top *t, int p, const struct candidate *c, cgroup_top_path_fn path,
		  void *ctx)
{
	struct cgroup_series *s = &t->place[p];
	int len = path(ctx, c->rep, c->key, t->scratch, sizeof(t->scratch));

	if (len < 0 || (size_t)len >= sizeof(t->scratch) ||
	    !stats_label_valid(t->scratch, (size_t)len))
		return;
	memcpy(s->label, t->scratch, (size_t)len + 1);
	s->len = (size_t)len;
	s->key = c->key;
	s->promoted = s->demoted = 0;
	s->slow = c->slow;
	s->rep = c->rep;
	s->seen = true;
	s->fresh = true;
}

void cgroup_top_settle(struct cgroup_top *t, cgroup_top_path_fn path, void *ctx)
{
	/* A cgroup with no watched process left gives its place up (its bytes and hot pages are
	 * 0 from the begin of the round). */
	for (unsigned i = 0; i < t->max; i++)
		if (t->place[i].key && !t->place[i].seen)
			t->place[i].key = 0;
	qsort(t->cand, t->ncand, sizeof(*t->cand), cand_by_slow);
	for (unsigned i = 0; i < t->ncand; i++) {
		int p = place_for(t, &t->cand[i]);

		if (p < 0)
			break; /* the others have fewer bytes still */
		admit(t, p, &t->cand[i], path, ctx);
	}
	t->ncand = 0;
	index_rebuild(t);
}

struct cgroup_series *cgroup_top_gauges(struct cgroup_top *t, uint64_t key)
{
	int p = key ? index_find(t, key) : -1;

	return p >= 0 ? &t->place[p] : &t->other;
}

struct cgroup_series *cgroup_top_counters(struct cgroup_top *t, uint64_t key)
{
	struct cgroup_series *s = cgroup_top_gauges(t, key);

	return s->fresh ? &t->other : s;
}

void cgroup_top_sizes(const struct cgroup_top *t, unsigned *shown, unsigned *folded)
{
	*shown = t->shown;
	*folded = t->offered > t->shown ? t->offered - t->shown : 0;
}

const struct cgroup_series *cgroup_top_at(const struct cgroup_top *t, unsigned i)
{
	return i < t->max && t->place[i].key ? &t->place[i] : NULL;
}

const struct cgroup_series *cgroup_top_other(const struct cgroup_top *t)
{
	return &t->other;
}
