/* perf_ring: reader of one perf_event mmap ring buffer.
 *
 * A ring is the metadata page (struct perf_event_mmap_page) followed by 2^n data pages; the
 * reader only needs the memory, so tests build rings byte for byte in malloc'd memory. A
 * drain reads [data_tail, data_head), hands each sample (parsed with perf_sample_parse) and
 * each other record to callbacks, counts SAMPLE/LOST/LOST_SAMPLES/THROTTLE records and
 * malformed data into stats, then publishes the new data_tail. A malformed record (size < 8,
 * longer than the data available, a sample shorter than its sample_type needs, a LOST or
 * THROTTLE body too short) is counted as SS_MALFORMED and the rest of the ring is skipped
 * (tail = head): the framing can no longer be trusted.
 *
 * Concurrency: one thread drains a given ring at a time (the kernel is the only writer). A
 * reader holds the scratch buffer for records that wrap, so use one reader per thread. */
#ifndef PGHOTD_PERF_RING_H
#define PGHOTD_PERF_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/perf/perf_sample.h"
#include "base/stats.h"

#ifndef PERF_RECORD_LOST_SAMPLES
#define PERF_RECORD_LOST_SAMPLES 13
#endif

#define PERF_RING_MAX_RECORD 65535 /* header.size is a u16 */

struct perf_ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t size; /* power of two */
};

struct perf_ring_counts {
	uint64_t records;
	uint64_t samples; /* parsed samples handed to on_sample */
	uint64_t lost;	  /* samples the kernel or PMU reported lost */
	uint64_t throttles;
	uint64_t malformed;
};

struct perf_ring_reader {
	const struct perf_sample_layout *layout;
	struct stats *stats; /* may be NULL (tests, replay) */
	enum stat_source source;
	/* Either callback may be NULL. */
	void (*on_sample)(void *ctx, const struct perf_event_header *h,
			  const struct perf_sample *s);
	void (*on_record)(void *ctx, const struct perf_event_header *h, const void *body,
			  size_t len);
	void *ctx;
	struct perf_ring_counts counts; /* accumulated over every drain */
	/* Field offsets for layout, redone by a drain that finds layout changed. */
	struct perf_sample_plan plan;
	_Alignas(8) uint8_t scratch[PERF_RING_MAX_RECORD + 1];
};

/* Describes the mapping base[0..map_len) of a perf event fd (or a test buffer): data_offset
 * and data_size from the metadata page, or page_size and map_len - page_size when the kernel
 * predates them (data_offset 0). -EINVAL when the area does not fit the mapping or its size
 * is not a power of two; *out untouched then. */
int perf_ring_init(struct perf_ring *out, void *base, size_t map_len, size_t page_size);

/* Drains everything the kernel has published. Returns the number of records consumed. */
uint64_t perf_ring_drain(struct perf_ring_reader *rd, struct perf_ring *ring);

#endif
