/* perf_ring: hand-built rings (metadata page + data pages in plain memory), every record type,
 * records wrapping the end at every 8-byte offset, and every malformed case. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sources/perf/perf_ring.h"
#include "base/stats.h"

#define PAGE	  4096u
#define DATA_SIZE (2 * PAGE)

static const struct perf_sample_layout layout = {.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
								PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU};
#define SAMPLE_BODY 32u

struct fixture {
	uint8_t *mem;
	struct perf_ring ring;
	struct perf_ring_reader *rd;
	struct stats stats;
	uint64_t head; /* where the "kernel" writes next */
	/* what the callbacks saw */
	int nsamples;
	struct perf_sample samples[64];
	int nrecords;
	uint32_t record_types[64];
	size_t record_lens[64];
};

static void on_sample(void *ctx, const struct perf_event_header *h, const struct perf_sample *s)
{
	struct fixture *f = ctx;

	assert_int_equal(h->type, PERF_RECORD_SAMPLE);
	if (f->nsamples < 64)
		f->samples[f->nsamples++] = *s;
}

static void on_record(void *ctx, const struct perf_event_header *h, const void *body, size_t len)
{
	struct fixture *f = ctx;

	(void)body;
	if (f->nrecords < 64) {
		f->record_types[f->nrecords] = h->type;
		f->record_lens[f->nrecords++] = len;
	}
}

static struct fixture *fixture_new(uint64_t start, bool old_kernel)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct perf_event_mmap_page *meta;

	assert_non_null(f);
	f->mem = aligned_alloc(PAGE, PAGE + DATA_SIZE);
	assert_non_null(f->mem);
	memset(f->mem, 0xee, PAGE + DATA_SIZE);
	meta = (struct perf_event_mmap_page *)f->mem;
	memset(meta, 0, sizeof(*meta));
	if (!old_kernel) {
		meta->data_offset = PAGE;
		meta->data_size = DATA_SIZE;
	}
	meta->data_head = meta->data_tail = start;
	f->head = start;
	assert_int_equal(perf_ring_init(&f->ring, f->mem, PAGE + DATA_SIZE, PAGE), 0);
	f->rd = calloc(1, sizeof(*f->rd));
	assert_non_null(f->rd);
	stats_init(&f->stats, 1);
	f->rd->layout = &layout;
	f->rd->stats = &f->stats;
	f->rd->source = SRC_PEBS;
	f->rd->on_sample = on_sample;
	f->rd->on_record = on_record;
	f->rd->ctx = f;
	return f;
}

static void fixture_free(struct fixture *f)
{
	free(f->mem);
	free(f->rd);
	free(f);
}

/* The kernel's side: bytes at the free-running head, wrapping at the end of the area. */
static void put(struct fixture *f, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->ring.data[(f->head + i) & (DATA_SIZE - 1)] = ((const uint8_t *)p)[i];
	f->head += n;
}

static void put_header(struct fixture *f, uint32_t type, uint16_t size)
{
	struct perf_event_header h = {.type = type, .misc = PERF_RECORD_MISC_USER, .size = size};
	put(f, &h, sizeof(h));
}

static void put64(struct fixture *f, uint64_t v)
{
	put(f, &v, 8);
}

static void put_sample(struct fixture *f, uint32_t pid, uint64_t addr, uint32_t cpu)
{
	uint32_t pt[2] = {pid, pid + 1}, cr[2] = {cpu, 0};

	put_header(f, PERF_RECORD_SAMPLE, 8 + SAMPLE_BODY);
	put(f, pt, 8);
	put64(f, 1000 + pid);
	put64(f, addr);
	put(f, cr, 8);
}

static void publish(struct fixture *f)
{
	f->ring.meta->data_head = f->head;
}

static uint64_t src_stat(struct fixture *f, enum stat_src_counter c)
{
	return atomic_load(&f->stats.src[SRC_PEBS][c]);
}

static void delivers_each_sample_with_its_fields(void **state)
{
	struct fixture *f = fixture_new(0, false);
	(void)state;

	put_sample(f, 10, 0x7f0000001000, 0);
	put_sample(f, 20, 0x7f0000002008, 1);
	publish(f);
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 2);
	assert_int_equal(f->nsamples, 2);
	assert_int_equal(f->samples[0].pid, 10);
	assert_int_equal(f->samples[0].tid, 11);
	assert_int_equal(f->samples[0].time, 1010);
	assert_int_equal(f->samples[0].addr, 0x7f0000001000);
	assert_int_equal(f->samples[1].addr, 0x7f0000002008);
	assert_int_equal(f->samples[1].cpu, 1);
	assert_int_equal(f->ring.meta->data_tail, f->head);
	assert_int_equal(src_stat(f, SS_SAMPLES), 2);
	assert_int_equal(src_stat(f, SS_MALFORMED), 0);
	/* nothing new: nothing delivered twice */
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 0);
	assert_int_equal(f->nsamples, 2);
	fixture_free(f);
}

static void counts_lost_throttle_and_passes_other_records(void **state)
{
	struct fixture *f = fixture_new(0, false);
	(void)state;

	put_header(f, PERF_RECORD_LOST, 8 + 16 + 8); /* id, lost, a sample_id trailer */
	put64(f, 5), put64(f, 17), put64(f, 0);
	put_header(f, PERF_RECORD_LOST_SAMPLES, 16);
	put64(f, 4);
	put_header(f, PERF_RECORD_THROTTLE, 32);
	put64(f, 1), put64(f, 5), put64(f, 5);
	put_header(f, PERF_RECORD_UNTHROTTLE, 32);
	put64(f, 2), put64(f, 5), put64(f, 5);
	put_header(f, PERF_RECORD_MMAP, 16); /* anything else: handed over, not counted */
	put64(f, 0);
	put_sample(f, 1, 0x1000, 0);
	publish(f);
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 6);
	assert_int_equal(f->nrecords, 5);
	assert_int_equal(f->record_types[0], PERF_RECORD_LOST);
	assert_int_equal(f->record_lens[0], 24);
	assert_int_equal(f->record_types[1], PERF_RECORD_LOST_SAMPLES);
	assert_int_equal(f->record_types[2], PERF_RECORD_THROTTLE);
	assert_int_equal(f->record_types[3], PERF_RECORD_UNTHROTTLE);
	assert_int_equal(f->record_types[4], PERF_RECORD_MMAP);
	assert_int_equal(f->nsamples, 1);
	assert_int_equal(src_stat(f, SS_SAMPLES_LOST), 21);
	assert_int_equal(src_stat(f, SS_THROTTLES), 1);
	assert_int_equal(src_stat(f, SS_SAMPLES), 1);
	assert_int_equal(f->rd->counts.lost, 21);
	assert_int_equal(f->rd->counts.throttles, 1);
	assert_int_equal(f->rd->counts.records, 6);
	fixture_free(f);
}

static void reads_records_wrapping_the_end_at_every_offset(void **state)
{
	(void)state;
	/* Start the stream so that the first sample ends at every 8-byte position around the
	 * end; the free-running counters start past several laps to prove only the mask
	 * matters. */
	for (uint64_t off = DATA_SIZE - 96; off <= DATA_SIZE + 8; off += 8) {
		struct fixture *f = fixture_new(5 * (uint64_t)DATA_SIZE + off, false);

		put_sample(f, 7, 0x7f00deadb000 + off, 1);
		put_header(f, PERF_RECORD_LOST, 24);
		put64(f, 9), put64(f, 3);
		put_sample(f, 8, 0x7f00beef0000 + off, 0);
		publish(f);
		assert_int_equal(perf_ring_drain(f->rd, &f->ring), 3);
		assert_int_equal(f->nsamples, 2);
		assert_int_equal(f->samples[0].pid, 7);
		assert_int_equal(f->samples[0].time, 1007);
		assert_int_equal(f->samples[0].addr, 0x7f00deadb000 + off);
		assert_int_equal(f->samples[0].cpu, 1);
		assert_int_equal(f->samples[1].addr, 0x7f00beef0000 + off);
		assert_int_equal(src_stat(f, SS_SAMPLES_LOST), 3);
		assert_int_equal(src_stat(f, SS_MALFORMED), 0);
		assert_int_equal(f->ring.meta->data_tail, f->head);
		fixture_free(f);
	}
}

static void finds_data_at_page_size_when_the_kernel_gives_no_offset(void **state)
{
	struct fixture *f = fixture_new(0, true);
	(void)state;

	assert_ptr_equal(f->ring.data, f->mem + PAGE);
	assert_int_equal(f->ring.size, DATA_SIZE);
	put_sample(f, 3, 0x3000, 0);
	publish(f);
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 1);
	assert_int_equal(f->samples[0].addr, 0x3000);
	assert_int_equal(f->mem[PAGE], PERF_RECORD_SAMPLE); /* the header went to page 1 */
	fixture_free(f);
}

static void rejects_a_data_area_that_does_not_fit(void **state)
{
	uint8_t *mem = aligned_alloc(PAGE, 3 * PAGE);
	struct perf_event_mmap_page *meta = (void *)mem;
	struct perf_ring r = {.size = 42};
	(void)state;

	memset(mem, 0, 3 * PAGE);
	meta->data_offset = PAGE;
	meta->data_size = 3 * PAGE; /* beyond the mapping */
	assert_int_equal(perf_ring_init(&r, mem, 3 * PAGE, PAGE), -EINVAL);
	meta->data_size = PAGE + 8; /* not a power of two */
	assert_int_equal(perf_ring_init(&r, mem, 3 * PAGE, PAGE), -EINVAL);
	meta->data_offset = 0; /* old kernel: 2 data pages */
	assert_int_equal(perf_ring_init(&r, mem, 3 * PAGE, PAGE), 0);
	assert_int_equal(r.size, 2 * PAGE);
	assert_int_equal(perf_ring_init(&r, mem, 4 * PAGE, PAGE), -EINVAL); /* 3 pages */
	assert_int_equal(r.size, 2 * PAGE);				    /* untouched */
	free(mem);
}

/* A good sample, then bad bytes, then a good sample the reader must not trust. */
static void expect_resync(struct fixture *f, uint64_t drained)
{
	put_sample(f, 99, 0x9000, 0);
	publish(f);
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), drained);
	assert_int_equal(f->nsamples, 1);
	assert_int_equal(f->samples[0].pid, 1);
	assert_int_equal(src_stat(f, SS_MALFORMED), 1);
	assert_int_equal(f->rd->counts.malformed, 1);
	assert_int_equal(f->ring.meta->data_tail, f->head); /* resynchronised */
	/* the next batch is read normally */
	put_sample(f, 5, 0x5000, 0);
	publish(f);
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 1);
	assert_int_equal(f->nsamples, 2);
	assert_int_equal(f->samples[1].pid, 5);
}

static void resyncs_on_a_record_smaller_than_its_header(void **state)
{
	for (uint16_t size = 0; size < 8; size++) {
		struct fixture *f = fixture_new(0, false);
		(void)state;

		put_sample(f, 1, 0x1000, 0);
		put_header(f, PERF_RECORD_SAMPLE, size);
		expect_resync(f, 1);
		fixture_free(f);
	}
}

static void resyncs_on_a_record_longer_than_the_data_available(void **state)
{
	struct fixture *f = fixture_new(0, false);
	(void)state;

	put_sample(f, 1, 0x1000, 0);
	put_header(f, PERF_RECORD_SAMPLE, 8 + SAMPLE_BODY + 8 + SAMPLE_BODY + 8);
	put64(f, 0);
	/* expect_resync adds one 40-byte sample: the bad record claims 48 more than that */
	expect_resync(f, 1);
	fixture_free(f);
}

static void resyncs_on_a_sample_shorter_than_its_sample_type_needs(void **state)
{
	struct fixture *f = fixture_new(0, false);
	(void)state;

	put_sample(f, 1, 0x1000, 0);
	put_header(f, PERF_RECORD_SAMPLE, 8 + 24); /* TID TIME ADDR but no CPU */
	put64(f, 0), put64(f, 0), put64(f, 0);
	expect_resync(f, 2);
	fixture_free(f);
}

static void resyncs_on_control_records_too_short_for_their_fields(void **state)
{
	const uint32_t types[] = {PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES, PERF_RECORD_THROTTLE,
				  PERF_RECORD_UNTHROTTLE};
	(void)state;

	for (int i = 0; i < 4; i++) {
		struct fixture *f = fixture_new(0, false);

		put_sample(f, 1, 0x1000, 0);
		put_header(f, types[i], 8); /* no body at all */
		expect_resync(f, 2);
		assert_int_equal(src_stat(f, SS_SAMPLES_LOST), 0);
		assert_int_equal(src_stat(f, SS_THROTTLES), 0);
		fixture_free(f);
	}
}

static void resyncs_when_head_runs_more_than_a_ring_ahead(void **state)
{
	struct fixture *f = fixture_new(0, false);
	(void)state;

	put_sample(f, 1, 0x1000, 0);
	f->ring.meta->data_head = 2 * DATA_SIZE; /* impossible: the kernel never laps us */
	assert_int_equal(perf_ring_drain(f->rd, &f->ring), 0);
	assert_int_equal(f->nsamples, 0);
	assert_int_equal(src_stat(f, SS_MALFORMED), 1);
	assert_int_equal(f->ring.meta->data_tail, 2 * DATA_SIZE);
	fixture_free(f);
}

static void survives_random_garbage_without_reading_outside_the_ring(void **state)
{
	(void)state;
	srand(42);
	for (int round = 0; round < 200; round++) {
		struct fixture *f = fixture_new((uint64_t)rand() % DATA_SIZE, false);
		size_t n = (size_t)rand() % DATA_SIZE;

		for (size_t i = 0; i < n; i++) {
			uint8_t b = (uint8_t)rand();
			put(f, &b, 1);
		}
		publish(f);
		perf_ring_drain(f->rd, &f->ring);
		assert_int_equal(f->ring.meta->data_tail, f->head);
		fixture_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(delivers_each_sample_with_its_fields),
	    cmocka_unit_test(counts_lost_throttle_and_passes_other_records),
	    cmocka_unit_test(reads_records_wrapping_the_end_at_every_offset),
	    cmocka_unit_test(finds_data_at_page_size_when_the_kernel_gives_no_offset),
	    cmocka_unit_test(rejects_a_data_area_that_does_not_fit),
	    cmocka_unit_test(resyncs_on_a_record_smaller_than_its_header),
	    cmocka_unit_test(resyncs_on_a_record_longer_than_the_data_available),
	    cmocka_unit_test(resyncs_on_a_sample_shorter_than_its_sample_type_needs),
	    cmocka_unit_test(resyncs_on_control_records_too_short_for_their_fields),
	    cmocka_unit_test(resyncs_when_head_runs_more_than_a_ring_ahead),
	    cmocka_unit_test(survives_random_garbage_without_reading_outside_the_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
