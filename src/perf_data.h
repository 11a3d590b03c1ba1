/* perf_data: reader of perf.data files written by `perf record` (file mode, PERFILE2, either
 * byte order). Layout: tools/perf/Documentation/perf.data-file-format.txt.
 *
 * The file header names the attrs section (one perf_event_attr per event, each attr_size
 * bytes long with a {offset, size} section of its sample IDs at the end) and the data section
 * (the kernel's records, as in the ring buffer). Every attr size perf has written is read:
 * fields beyond what an attr holds (branch_sample_type needs 80 bytes, sample_regs_user 88,
 * sample_regs_intr 104) are taken as 0. A sample finds its attr through its ID (IDENTIFIER,
 * else the ID position); a file with a single attr needs none.
 *
 * The parsing works on a byte buffer (tests and the fuzzer hand one in); perf_data_open()
 * maps a file. Pipe-mode and version 1 (PERFFILE) files are rejected with a message saying so.
 * Every error message names the byte offset in the file where the problem is. */
#ifndef PGHOTD_PERF_DATA_H
#define PGHOTD_PERF_DATA_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf_sample.h"

#define PERF_DATA_ERR_LEN 256

struct perf_data_attr {
	uint32_t type;
	uint64_t config;
	bool sample_id_all;
	struct perf_sample_layout layout;
	size_t nr_ids;
};

struct perf_data_counts {
	uint64_t records; /* records in the data section */
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

/* Reads the header and attrs of buf[0..len) (kept by reference: buf must outlive the
 * object). -EBADMSG (corrupt or truncated), -EPROTONOSUPPORT (pipe mode, version 1) or
 * -ENOMEM; err (may be NULL) then holds "offset N: problem". */
int perf_data_open_buffer(const void *buf, size_t len, struct perf_data **out, char *err,
			  size_t err_len);
/* Maps path and does the same; -errno of open/fstat/mmap with the path in err. */
int perf_data_open(const char *path, struct perf_data **out, char *err, size_t err_len);
void perf_data_close(struct perf_data *d);

size_t perf_data_nr_attrs(const struct perf_data *d);
const struct perf_data_attr *perf_data_attr(const struct perf_data *d, size_t i);

/* Walks the data section once, in file order. counts (may be NULL) is filled as far as the
 * walk got, also on error. Returns 0, or -EBADMSG with err naming the offset of the bad
 * record (what came before it was delivered). */
int perf_data_read(struct perf_data *d, const struct perf_data_ops *ops,
		   struct perf_data_counts *counts, char *err, size_t err_len);

#endif
