/* libFuzzer target: the perf.data reader, header to last record. */
#include <stdint.h>
#include <stdlib.h>

#include "perf_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data *d = NULL;
	struct perf_data_counts c;
	char err[PERF_DATA_ERR_LEN];

	if (perf_data_open_buffer(data, size, &d, err, sizeof(err)) == 0) {
		perf_data_read(d, NULL, &c, err, sizeof(err));
		perf_data_close(d);
	}
	return 0;
}
