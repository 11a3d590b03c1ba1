/* perf_sample: a PERF_RECORD_SAMPLE body parsed into fields, for any sample_type.
 *
 * The body is parsed in the kernel's order (include/uapi/linux/perf_event.h, the comment on
 * PERF_RECORD_SAMPLE), stepping over every field the kernel may place before the ones pghotd
 * uses, so any attr's samples parse. Pure code: no I/O, any thread. */
#ifndef PGHOTD_PERF_SAMPLE_H
#define PGHOTD_PERF_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the parser needs from the perf_event_attr that produced the samples. */
struct perf_sample_layout {
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint64_t sample_regs_intr;
	bool swapped; /* body written in the other byte order (a foreign perf.data file) */
};

struct perf_sample {
	uint64_t present; /* PERF_SAMPLE_* bits that were parsed (== layout's sample_type) */
	uint64_t id;	  /* IDENTIFIER or ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu; /* UINT32_MAX when the sample_type has no CPU */
	uint64_t period;
	uint64_t weight;   /* WEIGHT, or WEIGHT_STRUCT's full u64 (var1_dw in the low 32 bits) */
	uint64_t data_src; /* union perf_mem_data_src */
	uint64_t transaction;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	const uint8_t *raw; /* PERF_SAMPLE_RAW payload (points into the parsed body), or NULL */
	uint32_t raw_size;
};

/* Parses body[0..len) (the record after its 8-byte header). Returns 0, or -EBADMSG when the
 * body is shorter than the layout needs or a length inside it is impossible; *out is then
 * untouched. */
int perf_sample_parse(const struct perf_sample_layout *layout, const void *body, size_t len,
		      struct perf_sample *out);

/* A layout whose fields all have a fixed size (no READ, CALLCHAIN, RAW, BRANCH_STACK,
 * REGS_USER, STACK_USER, REGS_INTR or AUX: the usual IBS/PEBS/page-fault attrs) puts every
 * field at the same offset in every sample. A plan records those offsets once, so the
 * per-sample parse is one length check and direct loads; other layouts keep the walk. */
struct perf_sample_plan {
	struct perf_sample_layout layout; /* what the plan was made for */
	bool fixed;			  /* false: perf_sample_parse_planned() walks */
	uint16_t size;			  /* body bytes a sample needs */
	/* Byte offsets of the fields (meaningful when the field is in sample_type). */
	uint16_t id, ip, tid, time, addr, stream_id, cpu, period, weight, data_src, transaction,
	    phys_addr, cgroup, data_page_size, code_page_size;
};

void perf_sample_plan_init(struct perf_sample_plan *plan, const struct perf_sample_layout *layout);
/* perf_sample_parse() with the plan's layout: same results, same errors. */
int perf_sample_parse_planned(const struct perf_sample_plan *plan, const void *body, size_t len,
			      struct perf_sample *out);

/* Position of the sample's event id in the body, in u64 words: 0 with IDENTIFIER, the ID
 * field's position otherwise, -1 when the sample_type carries no id. Lets a reader of a
 * multi-event stream find the attr of a sample before parsing it. */
int perf_sample_id_pos(uint64_t sample_type);

/* Bytes of the sample_id trailer that non-sample records carry when sample_id_all is set. */
size_t perf_sample_id_trailer_size(uint64_t sample_type);

/* Reads one u64 / u32 from an unaligned pointer, swapping bytes when asked (perf.data files
 * written on a machine of the other byte order). */
uint64_t perf_rd64(const void *p, bool swapped);
uint32_t perf_rd32(const void *p, bool swapped);

#endif
