/* perf_data: reader of the files `perf record` writes, in every form perf has used. Layout:
 * tools/perf/Documentation/perf.data-file-format.txt.
 *
 * Forms read:
 * - PERFILE2 files, in either byte order (the magic tells): a header naming the attrs section
 *   (one perf_event_attr per event, each attr_size bytes with a {offset, size} section of its
 *   sample IDs at the end), the data section (the kernel's records, as in the ring buffer)
 *   and, after the data, a table of feature sections (one per bit set in the header's
 *   feature bitmap). A header of 72 bytes (no bitmap) has no features. A data size of 0
 *   (perf stopped before rewriting its header) is taken to run to the end of the file.
 * - Version 1 files ("PERFFILE" as bytes, perf of the 2.6.3x era and its backports): the same
 *   header, but the byte order is told by the attr_size field (a known attr size + 16 in one
 *   order or the other); the event types section names events by config.
 * - Pipe mode (`perf record -o -`, either magic): a 16-byte header, then records only; attrs
 *   arrive in PERF_RECORD_HEADER_ATTR records (attr, then its IDs inline), features in
 *   PERF_RECORD_HEADER_FEATURE records, names in HEADER_EVENT_TYPE / EVENT_UPDATE records.
 * - Compressed records (COMPRESSED, COMPRESSED2; `perf record -z`): one zstd stream over the
 *   whole file, whose output is records again (one may span two compressed records).
 * Every attr size is read: fields beyond what an attr holds (config1 needs 72 bytes,
 * branch_sample_type 80, sample_regs_user 88, sample_regs_intr 104) are 0; fields of sizes
 * newer than this reader are skipped. A sample finds its attr through its ID (IDENTIFIER,
 * else the ID position); a file with one attr, or whose attrs all lay samples out alike,
 * needs none. Records the reader has no use for are stepped over by their size (AUXTRACE and
 * TRACING_DATA also by the payload that follows them).
 *
 * Features read: HEADER_CPUID, HEADER_NRCPUS, HEADER_PMU_MAPPINGS (type -> PMU name),
 * HEADER_EVENT_DESC (event names). Every error message names the byte offset in the file
 * where the problem is ("offset N: ..."). Pure parsing on a byte buffer (tests and the fuzzer
 * hand one in); perf_data_open() maps a file. One thread per object. */
#ifndef PGHOTD_PERF_DATA_H
#define PGHOTD_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/perf/perf_sample.h"

#define PERF_DATA_ERR_LEN  256
#define PERF_DATA_NAME_MAX 128
#define PERF_DATA_PMU_MAX  64

struct perf_data_attr {
	uint32_t type;
	uint64_t config;
	uint32_t size; /* attr bytes as written (64 when the writer left size 0) */
	bool sample_id_all;
	struct perf_sample_layout layout;
	size_t nr_ids;
	char name[PERF_DATA_NAME_MAX]; /* EVENT_DESC / event types / EVENT_UPDATE; "" unknown */
	char pmu[PERF_DATA_PMU_MAX];   /* PMU_MAPPINGS name of type; "" unknown */
};

/* What the header says about the recording and the machine that made it. */
struct perf_data_env {
	int version; /* 1 (PERFFILE) or 2 (PERFILE2) */
	bool pipe;
	bool swapped;		/* written in the other byte order */
	char cpuid[128];	/* HEADER_CPUID, "" when absent */
	uint32_t nr_cpus_avail; /* HEADER_NRCPUS, 0 when absent */
	uint32_t nr_cpus_online;
};

/* HEADER_CPUID of x86, parsed: "GenuineIntel,6,85,4" (vendor,family,model,stepping, all
 * decimal, as perf writes it) or "AuthenticAMD-25-1-1" (the pmu-events form: family decimal,
 * model and stepping hex). */
struct perf_data_cpu {
	char vendor[16];
	unsigned family, model, stepping;
};

struct perf_data_counts {
	uint64_t records; /* records read, those inside compressed records included */
	uint64_t samples; /* PERF_RECORD_SAMPLE parsed */
	uint64_t lost;	  /* samples reported lost (LOST and LOST_SAMPLES) */
	uint64_t throttles;
	uint64_t unmatched; /* samples whose ID names no attr: skipped */
};

struct perf_data_ops {
	/* Either may be NULL. attr is the event the sample belongs to. */
	void (*on_sample)(void *ctx, const struct perf_data_attr *attr,
			  const struct perf_event_header *h, const struct perf_sample *s);
	void (*on_record)(void *ctx, const struct perf_event_header *h, const void *body,
			  size_t len);
	void *ctx;
};

struct perf_data;

/* Reads the header, attrs and features of buf[0..len) (kept by reference: buf must outlive
 * the object; pipe mode: the attr and feature records of the whole stream). -EBADMSG
 * (corrupt or truncated) or -ENOMEM; err (may be NULL) then holds "offset N: problem". */
int perf_data_open_buffer(const void *buf, size_t len, struct perf_data **out, char *err,
			  size_t err_len);
/* Maps path and does the same; -errno of open/fstat/mmap with the path in err. */
int perf_data_open(const char *path, struct perf_data **out, char *err, size_t err_len);
void perf_data_close(struct perf_data *d);

size_t perf_data_nr_attrs(const struct perf_data *d);
const struct perf_data_attr *perf_data_attr(const struct perf_data *d, size_t i);
const struct perf_data_env *perf_data_env(const struct perf_data *d);
/* PMU name of an attr type from HEADER_PMU_MAPPINGS; NULL when the file does not say. */
const char *perf_data_pmu_name(const struct perf_data *d, uint32_t type);

/* Walks the data section once, in file order (records inside a compressed record where
 * that record stands). counts (may be NULL) is filled as far as the walk got, also on error.
 * Returns 0, or -EBADMSG with err naming the offset of the bad record (what came before it
 * was delivered; inside compressed data, the offset of the compressed record and the
 * position in its decompressed stream), or -ENOMEM. */
int perf_data_read(struct perf_data *d, const struct perf_data_ops *ops,
		   struct perf_data_counts *counts, char *err, size_t err_len);

/* Parses an x86 HEADER_CPUID string. 0, or -EINVAL (another architecture's form, or
 * malformed); *out untouched then. Pure. */
int perf_data_cpuid_parse(const char *cpuid, struct perf_data_cpu *out);

#endif
