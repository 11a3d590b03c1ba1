/* idle_bitmap: page_idle bitmap I/O with short counts, word sets, the counting ops. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/abit/idle_bitmap.h"

/* An in-memory page_idle bitmap that moves at most `cap` bytes per call, like the sysfs file
 * (4096) or worse, and ORs written bits in as marking does. */
struct fake_bitmap {
	uint64_t w[2048];
	size_t cap;
	unsigned reads, writes;
	bool stall; /* writes make no progress */
};

static ssize_t fake_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct fake_bitmap *b = ctx;
	size_t size = sizeof(b->w);

	(void)fd;
	b->reads++;
	if (off % 8 || len % 8)
		return -EINVAL;
	if (off >= size)
		return 0;
	len = len > b->cap ? b->cap : len;
	len = len > size - off ? size - off : len;
	memcpy(buf, (char *)b->w + off, len);
	return (ssize_t)len;
}

static ssize_t fake_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct fake_bitmap *b = ctx;
	uint64_t v;

	(void)fd;
	b->writes++;
	if (off % 8 || len % 8)
		return -EINVAL;
	if (b->stall)
		return 0;
	len = len > b->cap ? b->cap : len;
	for (size_t i = 0; i < len / 8; i++) {
		memcpy(&v, (const char *)buf + i * 8, 8);
		b->w[off / 8 + i] |= v;
	}
	return (ssize_t)len;
}

static void test_bitmap_transfers_loop_on_short_counts(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	uint64_t out[1000], in[1000];

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	for (size_t i = 0; i < 1000; i++)
		in[i] = i * 0x9e3779b97f4a7c15u;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 7, in, 1000), 0);
	assert_int_equal(b.writes, 2); /* 8000 bytes: 4096 + 3904 */
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 7, out, 1000), 0);
	assert_int_equal(b.reads, 2);
	assert_memory_equal(in, out, sizeof(in));

	/* Three words a call. */
	memset(&b, 0, sizeof(b));
	b.cap = 24;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 0, in, 10), 0);
	assert_int_equal(b.writes, 4);
	memset(out, 0, sizeof(out));
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 0, out, 10), 0);
	assert_int_equal(b.reads, 4);
	assert_memory_equal(in, out, 10 * 8);
}

static void test_bitmap_read_past_the_end_and_stalled_write_fail(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	uint64_t w[4] = {1, 2, 3, 4};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 2046, w, 4), -ENXIO);
	b.stall = true;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 0, w, 4), -EIO);
	assert_int_equal(b.w[0], 0);
}

static void test_words_past_the_end_of_the_bitmap_count_as_idle(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	struct idle_words w = {0};
	/* Words 2046, 2047 exist; 2048 is past the end (a node end not 64-page aligned). */
	uint64_t pfns[] = {2046 * 64, 2047 * 64 + 1, 2048 * 64 + 2};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_words_build(&w, pfns, 3), 0);
	assert_int_equal(idle_words_fetch(&ops, 3, &w), 1);
	assert_false(idle_words_idle(&w, 2046 * 64)); /* read back as 0: accessed */
	assert_true(idle_words_idle(&w, 2048 * 64 + 2));
	b.stall = true; /* the kernel takes nothing past its last full word */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 16), 1);
	idle_words_free(&w);
}

static void test_word_set_sorts_merges_and_marks_in_few_writes(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	struct idle_words w = {0};
	/* Unsorted with a duplicate; words 1, 2, 4 and 200. */
	uint64_t pfns[] = {300, 64, 65, 130, 12800, 64, 140};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_words_build(&w, pfns, 7), 0);
	assert_int_equal(w.n, 4);
	assert_int_equal(w.word[0], 1);
	assert_int_equal(w.mask[0], 3);
	assert_int_equal(w.word[1], 2);
	assert_int_equal(w.mask[1], (UINT64_C(1) << 2) | (UINT64_C(1) << 12));
	assert_int_equal(w.word[2], 4);
	assert_int_equal(w.word[3], 200);
	/* Gap of one word between 2 and 4 is merged, 200 is too far. */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 16), 2);
	assert_int_equal(b.w[1], 3);
	assert_int_equal(b.w[3], 0);
	assert_int_equal(b.w[4], UINT64_C(1) << 44);
	assert_int_equal(b.w[200], 1);
	/* Without gaps allowed, three runs: 1-2, 4, 200. */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 0), 3);

	/* Reads cover only consecutive words: 1-2, 4, 200. Page 65 accessed. */
	b.w[1] &= ~UINT64_C(2);
	b.reads = 0;
	assert_int_equal(idle_words_fetch(&ops, 3, &w), 3);
	assert_int_equal(b.reads, 3);
	assert_true(idle_words_idle(&w, 64));
	assert_false(idle_words_idle(&w, 65));
	assert_true(idle_words_idle(&w, 12800));
	assert_false(idle_words_idle(&w, 5000)); /* not in the set */
	idle_words_free(&w);
}

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return 42;
}

/* The counter (pghotd_scan_io_bytes_total) adds what each pread and pwrite moved, short counts
 * as they came and failures as nothing, and hands every call and its result through. */
static void test_counter_adds_the_bytes_moved_and_passes_each_call_on(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops inner = {
	    .pread = fake_pread, .pwrite = fake_pwrite, .now_ns = fake_now, .ctx = &b};
	struct idle_io_counter c;
	uint64_t w[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

	memset(&b, 0, sizeof(b));
	b.cap = 24;
	idle_io_counter_init(&c, &inner);
	assert_null(c.ops.page_nodes); /* none where the inner ops have none */
	assert_int_equal(idle_bitmap_write_words(&c.ops, 3, 0, w, 10), 0);
	assert_int_equal(b.writes, 4);
	assert_int_equal(c.bytes, 80);
	assert_int_equal(c.ops.pread(c.ops.ctx, 3, w, 80, 0), 24); /* short, as the inner one */
	assert_int_equal(c.bytes, 104);
	assert_int_equal(c.ops.pread(c.ops.ctx, 3, w, 8, 3), -EINVAL);
	assert_int_equal(c.bytes, 104);
	assert_int_equal(b.reads, 2);
	assert_int_equal(c.ops.now_ns(c.ops.ctx), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bitmap_transfers_loop_on_short_counts),
	    cmocka_unit_test(test_bitmap_read_past_the_end_and_stalled_write_fail),
	    cmocka_unit_test(test_word_set_sorts_merges_and_marks_in_few_writes),
	    cmocka_unit_test(test_words_past_the_end_of_the_bitmap_count_as_idle),
	    cmocka_unit_test(test_counter_adds_the_bytes_moved_and_passes_each_call_on),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
