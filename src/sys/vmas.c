/* vmas: the VMAs the Accessed-bit source keeps state for; see vmas.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sys/vmas.h"
#include "base/fileio.h"
#include "sys/pagemap.h"
#include "sys/procfs.h"

#define HUGE_BYTES (UINT64_C(2) << 20)
#define HUGE_PAGES (HUGE_BYTES / PAGEMAP_PAGE_SIZE)

uint64_t vmas_allowance(uint64_t rss_pages)
{
	uint64_t huge = rss_pages / HUGE_PAGES + (rss_pages % HUGE_PAGES != 0);

	return VMAS_FLOOR + VMAS_PER_HUGE * huge;
}

uint64_t vmas_total_cap(uint64_t phys_pages)
{
	return 2 * (phys_pages / HUGE_PAGES) + 64 * VMAS_FLOOR;
}

static uint64_t vma_pieces(const struct vma *v)
{
	return (v->end - 1) / HUGE_BYTES - v->start / HUGE_BYTES + 1;
}

uint64_t vmas_pieces(const struct vmas *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += vma_pieces(&s->v[i]);
	return n;
}

uint64_t vmas_fit(struct vmas *s, uint64_t allow)
{
	uint64_t kept = 0, dropped = 0;
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct vma v = s->v[i];
		uint64_t r = vma_pieces(&v);

		if (kept + r > allow) {
			uint64_t room = allow - kept;

			dropped += r - room;
			if (room == 0)
				continue;
			/* The first room pieces: up to the end of the room-th 2 MiB boundary. */
			v.end = (v.start / HUGE_BYTES + room) * HUGE_BYTES;
			r = room;
		}
		kept += r;
		s->v[k++] = v;
	}
	s->n = k;
	return dropped;
}

static int vmas_add(struct vmas *s, uint64_t start, uint64_t end)
{
	if (s->n == s->cap) {
		size_t c = s->cap ? s->cap * 2 : 64;
		struct vma *bigger = realloc(s->v, c * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		s->v = bigger;
		s->cap = c;
	}
	s->v[s->n++] = (struct vma){.start = start, .end = end};
	return 0;
}

static bool vmas_cancelled(struct vmas *s)
{
	/* Acquire: pairs with the release store of the stop flag (worker_stop()). */
	return s->cancel && ++s->lines % VMAS_CANCEL_LINES == 0 &&
	       atomic_load_explicit(s->cancel, memory_order_acquire);
}

static int maps_line(void *ctx, const char *line, size_t len)
{
	struct vmas *s = ctx;
	struct maps_vma v;

	if (vmas_cancelled(s))
		return -ECANCELED;
	if (maps_parse_line(line, len, &v) < 0 || (!s->all && (!v.readable || v.special)))
		return 0;
	if (s->max && s->n == s->max)
		return -E2BIG;
	return vmas_add(s, v.start, v.end);
}

int vmas_read_maps(struct vmas *s, const char *path)
{
	s->n = 0;
	return file_read_lines(path, s->buf, sizeof(s->buf), maps_line, s);
}

/* numa_maps walk: the VMAs of the list are marked empty (end = start) in place as their
 * numa_maps lines show no page; both are in address order. */
struct numa_walk {
	struct vmas *s;
	size_t at;
	bool *empty;
};

static int numa_line(void *ctx, const char *line, size_t len)
{
	struct numa_walk *w = ctx;
	uint64_t start, pages;

	if (vmas_cancelled(w->s))
		return -ECANCELED;
	if (numa_maps_parse_line(line, len, &start, &pages) < 0)
		return 0;
	while (w->at < w->s->n && w->s->v[w->at].start < start)
		w->at++;
	if (w->at < w->s->n && w->s->v[w->at].start == start && pages == 0)
		w->empty[w->at] = true;
	return 0;
}

int vmas_drop_empty(struct vmas *s, const char *path)
{
	struct numa_walk w = {.s = s, .empty = calloc(s->n ? s->n : 1, sizeof(bool))};
	size_t k = 0;
	int r;

	if (!w.empty)
		return -ENOMEM;
	r = file_read_lines(path, s->buf, sizeof(s->buf), numa_line, &w);
	for (size_t i = 0; r == 0 && i < s->n; i++)
		if (!w.empty[i])
			s->v[k++] = s->v[i];
	if (r == 0)
		s->n = k;
	free(w.empty);
	return r;
}

void vmas_free(struct vmas *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}
