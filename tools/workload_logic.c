/* workload_logic: see workload_logic.h. */
#include <string.h>

#include "workload_logic.h"

#include <math.h>

double wl_rand_unit(uint64_t *state)
{
	/* The top 53 bits fill a double's mantissa exactly. */
	return (double)(wl_rand(state) >> 11) * (1.0 / 9007199254740992.0);
}

void wl_shuffle(size_t *a, size_t n, uint64_t *state)
{
	for (size_t i = 0; i < n; i++)
		a[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(wl_rand(state) % i);
		size_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

void wl_zipf_build(double *cdf, size_t n, double s)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		sum += 1.0 / pow((double)(i + 1), s);
		cdf[i] = sum;
	}
	for (size_t i = 0; i < n; i++)
		cdf[i] /= sum;
}

size_t wl_zipf_rank(const double *cdf, size_t n, double u)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void wl_count(const int *status, const bool *hot_page, size_t n, int node, size_t *hot,
	      size_t *cold)
{
	size_t h = 0, c = 0;
	for (size_t i = 0; i < n; i++) {
		if (status[i] != node)
			continue;
		if (hot_page[i])
			h++;
		else
			c++;
	}
	*hot = h;
	*cold = c;
}

void wl_count_moved(const int *status, const bool *placed, const bool *hot_page, size_t n, int to,
		    size_t *hot, size_t *cold)
{
	size_t h = 0, c = 0;
	for (size_t i = 0; i < n; i++) {
		if (!placed[i] || status[i] != to)
			continue;
		if (hot_page[i])
			h++;
		else
			c++;
	}
	*hot = h;
	*cold = c;
}

/* The addresses of the pages status[] shows off node into off[]; how many. */
static size_t wl_off_node(void **addrs, const int *status, size_t n, int node, void **off)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (status[i] != node)
			off[k++] = addrs[i];
	return k;
}

long wl_place_retry(const struct wl_place_ops *ops, void **addrs, int *status, size_t n, int node,
		    int tries, void **off, size_t *moved)
{
	size_t left = wl_off_node(addrs, status, n, node, off), placed = 0;
	for (int t = 0; t < tries && left > 0; t++) {
		if (ops->move(ops->ctx, left, off, node) < 0)
			break;
		int err = ops->query(ops->ctx, n, addrs, status);
		if (err < 0)
			return err;
		size_t now = wl_off_node(addrs, status, n, node, off);
		placed += left > now ? left - now : 0;
		left = now;
	}
	*moved = placed;
	return (long)left;
}

void wl_track(const int *status, const bool *hot_page, size_t n, int fast, int8_t *last,
	      uint8_t *moves, struct wl_moves *m)
{
	for (size_t i = 0; i < n; i++) {
		int s = status[i];

		if (s < 0 || s > INT8_MAX)
			continue;
		if (last[i] >= 0 && last[i] != s) {
			if (moves[i] == 0)
				m->moved++;
			if (moves[i] < UINT8_MAX)
				moves[i]++;
			if (moves[i] > m->max)
				m->max = moves[i];
			m->total++;
			if (hot_page[i] && last[i] == fast)
				m->hot_demoted++;
		}
		last[i] = (int8_t)s;
	}
}

uint64_t wl_stamp_word(uint64_t seed, size_t page)
{
	uint64_t st = seed ^ ((uint64_t)page * UINT64_C(0x9e3779b97f4a7c15));

	return wl_rand(&st);
}

void wl_stamp_page(unsigned char *base, size_t page_size, size_t page, uint64_t seed)
{
	uint64_t w = wl_stamp_word(seed, page);

	memcpy(base + page * page_size + WL_STAMP_OFFSET, &w, sizeof(w));
}

void wl_stamp(unsigned char *base, size_t n, size_t page_size, uint64_t seed)
{
	for (size_t i = 0; i < n; i++)
		wl_stamp_page(base, page_size, i, seed);
}

size_t wl_verify(const unsigned char *base, size_t n, size_t page_size, uint64_t seed,
		 size_t *first, uint64_t *want, uint64_t *got)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t w = wl_stamp_word(seed, i), r;

		memcpy(&r, base + i * page_size + WL_STAMP_OFFSET, sizeof(r));
		if (r == w)
			continue;
		if (bad++ == 0) {
			*first = i;
			*want = w;
			*got = r;
		}
	}
	return bad;
}

bool wl_sweep_due(double t, double next, double period, double duration)
{
	return period > 0 && t >= next && t < duration;
}
