/* libFuzzer target: the sample parser and the ring reader. The first 48 bytes choose the
 * layout (sample_type, read_format, branch_sample_type, regs masks, byte order) and the ring's
 * starting tail; the rest is the ring's data, read with head = tail + its length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/perf/perf_ring.h"
#include "sources/perf/perf_sample.h"

#define RING_SIZE 4096u

static uint64_t word(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perf_ring_reader rd;
	static uint8_t mem[RING_SIZE + RING_SIZE];
	struct perf_sample_layout l;
	struct perf_sample s;
	struct perf_ring ring;
	struct perf_event_mmap_page *meta = (void *)mem;
	uint64_t start;
	size_t n;

	if (size < 48)
		return 0;
	l = (struct perf_sample_layout){.sample_type = word(data) & ((1u << 25) - 1),
					.read_format = word(data + 8) & 0x1f,
					.branch_sample_type = word(data + 16),
					.sample_regs_user = word(data + 24),
					.sample_regs_intr = word(data + 32),
					.swapped = data[40] & 1};
	start = word(data + 40) >> 8;
	data += 48, size -= 48;
	perf_sample_parse(&l, data, size, &s);

	memset(mem, 0, sizeof(mem));
	meta->data_offset = RING_SIZE;
	meta->data_size = RING_SIZE;
	if (perf_ring_init(&ring, mem, sizeof(mem), RING_SIZE) != 0)
		abort();
	n = size < RING_SIZE ? size : RING_SIZE;
	for (size_t i = 0; i < n; i++)
		ring.data[(start + i) & (RING_SIZE - 1)] = data[i];
	meta->data_tail = start;
	meta->data_head = start + n;
	l.swapped = false; /* the ring is always in the host's order */
	rd.layout = &l;
	perf_ring_drain(&rd, &ring);
	if (meta->data_tail != start + n)
		abort(); /* every drain must end resynchronised or caught up */
	return 0;
}
