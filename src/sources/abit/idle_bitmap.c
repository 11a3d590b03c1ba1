/* idle_bitmap: page_idle bitmap transfers with short-count loops, and word sets. */
#include <errno.h>
#include <numaif.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "sources/abit/idle_bitmap.h"

static ssize_t real_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	(void)ctx;
	do
		n = pread(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static ssize_t real_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	(void)ctx;
	do
		n = pwrite(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

static uint64_t real_now_ns(void *ctx)
{
	(void)ctx;
	return clock_monotonic_ns();
}

static long real_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
{
	(void)ctx;
	return move_pages(pid, n, pages, NULL, status, 0) < 0 ? -errno : 0;
}

const struct idle_io_ops idle_io_real_ops = {
    .pread = real_pread,
    .pwrite = real_pwrite,
    .now_ns = real_now_ns,
    .page_nodes = real_page_nodes,
};

static ssize_t counting_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct idle_io_counter *c = ctx;
	ssize_t n = c->inner->pread(c->inner->ctx, fd, buf, len, off);

	c->bytes += n > 0 ? (uint64_t)n : 0;
	return n;
}

static ssize_t counting_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct idle_io_counter *c = ctx;
	ssize_t n = c->inner->pwrite(c->inner->ctx, fd, buf, len, off);

	c->bytes += n > 0 ? (uint64_t)n : 0;
	return n;
}

static uint64_t counting_now_ns(void *ctx)
{
	const struct idle_io_counter *c = ctx;

	return c->inner->now_ns(c->inner->ctx);
}

static long counting_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
{
	const struct idle_io_counter *c = ctx;

	return c->inner->page_nodes(c->inner->ctx, pid, n, pages, status);
}

void idle_io_counter_init(struct idle_io_counter *c, const struct idle_io_ops *inner)
{
	c->inner = inner;
	c->bytes = 0;
	c->ops = (struct idle_io_ops){.pread = counting_pread,
				      .pwrite = counting_pwrite,
				      .now_ns = counting_now_ns,
				      .page_nodes = inner->page_nodes ? counting_page_nodes : NULL,
				      .ctx = c};
}

ssize_t idle_io_read_full(const struct idle_io_ops *ops, int fd, void *buf, size_t len,
			  uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = ops->pread(ops->ctx, fd, (char *)buf + done, len - done, off + done);

		if (n < 0)
			return n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

int idle_io_write_full(const struct idle_io_ops *ops, int fd, const void *buf, size_t len,
		       uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n =
		    ops->pwrite(ops->ctx, fd, (const char *)buf + done, len - done, off + done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int idle_bitmap_read_words(const struct idle_io_ops *ops, int fd, uint64_t first, uint64_t *w,
			   size_t n)
{
	ssize_t r = idle_io_read_full(ops, fd, w, n * 8, first * 8);

	if (r < 0)
		return (int)r;
	return (size_t)r == n * 8 ? 0 : -ENXIO;
}

int idle_bitmap_write_words(const struct idle_io_ops *ops, int fd, uint64_t first,
			    const uint64_t *w, size_t n)
{
	return idle_io_write_full(ops, fd, w, n * 8, first * 8);
}

void idle_words_reset(struct idle_words *w)
{
	w->n = 0;
}

void idle_words_free(struct idle_words *w)
{
	free(w->word);
	free(w->mask);
	free(w->val);
	*w = (struct idle_words){0};
}

static int idle_words_reserve(struct idle_words *w, size_t n)
{
	uint64_t *a, *b, *c;

	if (n <= w->cap)
		return 0;
	a = realloc(w->word, n * sizeof(*a));
	if (a)
		w->word = a;
	b = realloc(w->mask, n * sizeof(*b));
	if (b)
		w->mask = b;
	c = realloc(w->val, n * sizeof(*c));
	if (c)
		w->val = c;
	if (!a || !b || !c)
		return -ENOMEM;
	w->cap = n;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool pfns_sorted(const uint64_t *pfns, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (pfns[i] < pfns[i - 1])
			return false;
	return true;
}

/* Folds sorted PFNs into words. */
static void idle_words_fold(struct idle_words *w, const uint64_t *pfns, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t word = pfns[i] / 64, bit = UINT64_C(1) << (pfns[i] % 64);

		if (w->n && w->word[w->n - 1] == word) {
			w->mask[w->n - 1] |= bit;
			continue;
		}
		w->word[w->n] = word;
		w->mask[w->n] = bit;
		w->val[w->n] = 0;
		w->n++;
	}
}

int idle_words_build(struct idle_words *w, const uint64_t *pfns, size_t n)
{
	uint64_t *sorted = NULL;

	w->n = 0;
	if (idle_words_reserve(w, n) < 0)
		return -ENOMEM;
	/* Pages of a region are mostly in physical order already; sort only when not. */
	if (!pfns_sorted(pfns, n)) {
		sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, pfns, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
		pfns = sorted;
	}
	idle_words_fold(w, pfns, n);
	free(sorted);
	return 0;
}

/* The kernel stops at its last full word below max_pfn (the last word of a node whose end
 * is not 64-page aligned reads and writes as 0 bytes): pages beyond cannot be marked, and a
 * write making no progress ends the run without error. */
static int idle_mark_run(const struct idle_io_ops *ops, int fd, uint64_t first, const uint64_t *buf,
			 size_t len)
{
	size_t done = 0;

	while (done < len * 8) {
		ssize_t n = ops->pwrite(ops->ctx, fd, (const char *)buf + done, len * 8 - done,
					first * 8 + done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return 0;
}

int idle_words_mark(const struct idle_io_ops *ops, int fd, const struct idle_words *w,
		    size_t max_gap)
{
	uint64_t buf[IDLE_BITMAP_IO_WORDS];
	size_t i = 0;
	int runs = 0;

	while (i < w->n) {
		uint64_t first = w->word[i];
		size_t len = 1;
		int r;

		memset(buf, 0, sizeof(buf));
		buf[0] = w->mask[i++];
		while (i < w->n && w->word[i] - first < IDLE_BITMAP_IO_WORDS &&
		       w->word[i] - (first + len - 1) <= max_gap + 1) {
			len = w->word[i] - first + 1;
			buf[len - 1] = w->mask[i++];
		}
		r = idle_mark_run(ops, fd, first, buf, len);
		if (r < 0)
			return r;
		runs++;
	}
	return runs;
}

int idle_words_fetch(const struct idle_io_ops *ops, int fd, struct idle_words *w)
{
	size_t i = 0;
	int runs = 0;

	while (i < w->n) {
		size_t j = i + 1;
		ssize_t n;

		while (j < w->n && w->word[j] == w->word[j - 1] + 1 && j - i < IDLE_BITMAP_IO_WORDS)
			j++;
		n = idle_io_read_full(ops, fd, w->val + i, (j - i) * 8, w->word[i] * 8);
		if (n < 0)
			return (int)n;
		/* Words past the kernel's last full word are never read: their pages count as
		 * idle, so they cannot turn into false accesses. */
		for (size_t k = i + (size_t)n / 8; k < j; k++)
			w->val[k] = w->mask[k];
		runs++;
		i = j;
	}
	return runs;
}

bool idle_words_idle(const struct idle_words *w, uint64_t pfn)
{
	uint64_t word = pfn / 64;
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->word[mid] < word)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == w->n || w->word[lo] != word)
		return false;
	return (w->val[lo] >> (pfn % 64)) & 1;
}
