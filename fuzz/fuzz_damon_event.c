/* libFuzzer target: the damon_aggregated tracepoint's format file and a record decoded with
 * it. The input up to its first NUL byte is the format text (the whole input without one);
 * what follows the NUL is a PERF_SAMPLE_RAW payload. A format that parses must keep every
 * field it read within the record size it demands, so a record that decodes was read within
 * its bytes (ASan checks the reads). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/damon/damon_event.h"

static void within(const struct damon_field *f, uint32_t min_size)
{
	if (f->size && (uint32_t)f->offset + f->size > min_size)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t text_len = nul ? (size_t)(nul - data) : size;
	char *text = malloc(text_len + 1);
	struct damon_event_format f;
	struct damon_region r;
	uint8_t *raw;
	size_t raw_len;

	if (!text)
		return 0;
	memcpy(text, data, text_len);
	text[text_len] = '\0';
	if (damon_event_format_parse(text, &f) == 0) {
		within(&f.pid, f.min_size), within(&f.target_id, f.min_size);
		within(&f.nr_regions, f.min_size), within(&f.start, f.min_size);
		within(&f.end, f.min_size), within(&f.nr_accesses, f.min_size);
		within(&f.age, f.min_size);
		/* The payload in a buffer of its own size, so ASan sees any read past it. */
		raw_len = nul ? size - text_len - 1 : 0;
		raw = malloc(raw_len ? raw_len : 1);
		if (raw) {
			memcpy(raw, nul ? nul + 1 : data, raw_len);
			if (damon_event_decode(&f, raw, raw_len, &r) == 0 && raw_len < f.min_size)
				abort();
			free(raw);
		}
	}
	free(text);
	return 0;
}
