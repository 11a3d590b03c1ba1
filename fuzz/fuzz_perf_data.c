/* libFuzzer target: the perf.data reader, header to last record, in every form it reads
 * (file, pipe, version 1, zstd-compressed records). Every delivered field and piece of
 * metadata is touched so the sanitizers see any read outside the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/perf/perf_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void on_sample(void *ctx, const struct perf_data_attr *a, const struct perf_event_header *h,
		      const struct perf_sample *s)
{
	(void)ctx;
	sink += a->type + strlen(a->name) + strlen(a->pmu) + h->size + s->addr + s->pid;
	if (s->raw && s->raw_size)
		sink += s->raw[0] + s->raw[s->raw_size - 1];
}

static void on_record(void *ctx, const struct perf_event_header *h, const void *body, size_t len)
{
	(void)ctx;
	sink += h->type + (len ? ((const uint8_t *)body)[len - 1] : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data_ops ops = {.on_sample = on_sample, .on_record = on_record};
	struct perf_data *d = NULL;
	struct perf_data_counts c;
	struct perf_data_cpu cpu;
	char err[PERF_DATA_ERR_LEN];

	if (perf_data_open_buffer(data, size, &d, err, sizeof(err)) == 0) {
		const struct perf_data_env *env = perf_data_env(d);

		sink += strlen(env->cpuid) + env->nr_cpus_online;
		if (perf_data_cpuid_parse(env->cpuid, &cpu) == 0)
			sink += cpu.family + cpu.model;
		for (size_t i = 0; i < perf_data_nr_attrs(d); i++)
			sink += perf_data_pmu_name(d, perf_data_attr(d, i)->type) != NULL;
		perf_data_read(d, &ops, &c, err, sizeof(err));
		perf_data_read(d, NULL, &c, err, sizeof(err)); /* a second walk starts afresh */
		perf_data_close(d);
	}
	return 0;
}
