/* perf_ring: the consumer side of the perf mmap protocol.
 *
 * The kernel (kernel/events/ring_buffer.c) and the reader pair up like this:
 *
 *   kernel                              reader
 *   if (LOAD data_tail)  (A: ctrl dep)  LOAD data_head         (C: acquire)
 *       STORE records                   LOAD records
 *       smp_wmb()        (B)            full barrier / release (D)
 *       STORE data_head                 STORE data_tail
 *
 * C pairs with B: once we see a head value, the records below it are visible. D pairs with A:
 * our reads of the records complete before the kernel can see the tail move and overwrite
 * them. The kernel comment asks for smp_mb() at D; a store-release orders every earlier load
 * and store before the tail store, which is what D needs (tools/perf uses
 * smp_store_release() there too).
 *
 * head and tail are free-running byte counters; a position in the data area is counter &
 * (size - 1). Records are 8-byte aligned in a well-formed ring, but every copy here wraps byte
 * by byte so a corrupt size cannot make a read leave the data area. */
#include "sources/perf/perf_ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

struct lost_body {
	uint64_t id, lost;
};

int perf_ring_init(struct perf_ring *out, void *base, size_t map_len, size_t page_size)
{
	struct perf_event_mmap_page *meta = base;
	uint64_t off = meta->data_offset, size = meta->data_size;

	if (off == 0) {
		off = page_size;
		size = map_len > page_size ? map_len - page_size : 0;
	}
	if (size == 0 || (size & (size - 1)) || off > map_len || size > map_len - off)
		return -EINVAL;
	out->meta = meta;
	out->data = (uint8_t *)base + off;
	out->size = size;
	return 0;
}

/* Copies n bytes starting at free-running position pos, wrapping at the end of the area. */
static void ring_copy(const struct perf_ring *r, uint64_t pos, void *dst, size_t n)
{
	uint64_t at = pos & (r->size - 1);
	size_t first = r->size - at < n ? (size_t)(r->size - at) : n;

	memcpy(dst, r->data + at, first);
	memcpy((uint8_t *)dst + first, r->data, n - first);
}

static void count(struct perf_ring_reader *rd, enum stat_src_counter c, uint64_t n)
{
	if (rd->stats && n)
		stats_src_add(rd->stats, rd->source, c, n);
}

/* The accounting records; false when the body is too short to hold its fields. */
static bool handle_control(struct perf_ring_reader *rd, uint32_t type, const uint8_t *body,
			   size_t len)
{
	uint64_t lost;

	switch (type) {
	case PERF_RECORD_LOST:
		if (len < sizeof(struct lost_body))
			return false;
		memcpy(&lost, body + 8, sizeof(lost));
		break;
	case PERF_RECORD_LOST_SAMPLES:
		if (len < 8)
			return false;
		memcpy(&lost, body, sizeof(lost));
		break;
	case PERF_RECORD_THROTTLE:
		if (len < 24) /* time, id, stream_id */
			return false;
		rd->counts.throttles++;
		count(rd, SS_THROTTLES, 1);
		return true;
	case PERF_RECORD_UNTHROTTLE:
		return len >= 24;
	default:
		return true;
	}
	rd->counts.lost += lost;
	count(rd, SS_SAMPLES_LOST, lost);
	return true;
}

/* One record whose body is contiguous. false: malformed. */
static bool handle_record(struct perf_ring_reader *rd, const struct perf_event_header *h,
			  const uint8_t *body, size_t len)
{
	struct perf_sample s;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (perf_sample_parse_planned(&rd->plan, body, len, &s) < 0)
			return false;
		rd->counts.samples++;
		count(rd, SS_SAMPLES, 1);
		if (rd->on_sample)
			rd->on_sample(rd->ctx, h, &s);
		return true;
	}
	if (!handle_control(rd, h->type, body, len))
		return false;
	if (rd->on_record)
		rd->on_record(rd->ctx, h, body, len);
	return true;
}

static void malformed(struct perf_ring_reader *rd)
{
	rd->counts.malformed++;
	count(rd, SS_MALFORMED, 1);
}

static bool layout_equal(const struct perf_sample_layout *a, const struct perf_sample_layout *b)
{
	return a->sample_type == b->sample_type && a->read_format == b->read_format &&
	       a->branch_sample_type == b->branch_sample_type &&
	       a->sample_regs_user == b->sample_regs_user &&
	       a->sample_regs_intr == b->sample_regs_intr && a->swapped == b->swapped;
}

uint64_t perf_ring_drain(struct perf_ring_reader *rd, struct perf_ring *ring)
{
	/* C: pairs with the kernel's smp_wmb() before its data_head store (B). */
	uint64_t head =
	    atomic_load_explicit((_Atomic uint64_t *)&ring->meta->data_head, memory_order_acquire);
	/* We are the only writer of data_tail: a relaxed load reads our own last store. */
	uint64_t tail =
	    atomic_load_explicit((_Atomic uint64_t *)&ring->meta->data_tail, memory_order_relaxed);
	uint64_t n = 0;

	/* Once per drain, not per sample: the plan makes each sample's parse a few loads. */
	if (rd->layout && !layout_equal(&rd->plan.layout, rd->layout))
		perf_sample_plan_init(&rd->plan, rd->layout);
	while (tail != head) {
		struct perf_event_header h;
		uint64_t avail = head - tail, at = tail & (ring->size - 1);
		const uint8_t *body;

		if (avail < sizeof(h) || avail > ring->size) {
			malformed(rd);
			break;
		}
		ring_copy(ring, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > avail) {
			malformed(rd);
			break;
		}
		if (at + h.size <= ring->size) {
			body = ring->data + at + sizeof(h);
		} else {
			ring_copy(ring, tail, rd->scratch, h.size); /* wraps: copy it whole */
			body = rd->scratch + sizeof(h);
		}
		rd->counts.records++;
		n++;
		if (!handle_record(rd, &h, body, h.size - sizeof(h))) {
			malformed(rd);
			break;
		}
		tail += h.size;
	}
	/* D: pairs with the kernel's load of data_tail before it writes records (A); release
	 * keeps our reads of the records above before this store. Malformed data: resync by
	 * dropping everything up to the head we saw. */
	atomic_store_explicit((_Atomic uint64_t *)&ring->meta->data_tail, head,
			      memory_order_release);
	return n;
}
