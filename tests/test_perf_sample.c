/* perf_sample: every sample_type field lands in the right place, in the kernel's order; any
 * truncation or impossible length is rejected without touching the output. */
#include <byteswap.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include "sources/perf/perf_sample.h"

#define BR_HW_INDEX (1U << 17)
#define BR_COUNTERS (1U << 19)
#define FMT_LOST    (1U << 4)

struct buf {
	uint8_t b[4096];
	size_t n;
	bool swap;
};

static void put64(struct buf *b, uint64_t v)
{
	if (b->swap)
		v = bswap_64(v);
	memcpy(b->b + b->n, &v, 8);
	b->n += 8;
}

static void put32x2(struct buf *b, uint32_t x, uint32_t y)
{
	if (b->swap) {
		x = bswap_32(x);
		y = bswap_32(y);
	}
	memcpy(b->b + b->n, &x, 4);
	memcpy(b->b + b->n + 4, &y, 4);
	b->n += 8;
}

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static const uint64_t every_field =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
    PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
    PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR |
    PERF_SAMPLE_CGROUP | PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE | PERF_SAMPLE_AUX;

static const struct perf_sample_layout every_layout = {
    .sample_type = every_field,
    .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
		   PERF_FORMAT_TOTAL_TIME_RUNNING | FMT_LOST,
    .branch_sample_type = PERF_SAMPLE_BRANCH_ANY | BR_HW_INDEX | BR_COUNTERS,
    .sample_regs_user = 0x7,  /* 3 registers */
    .sample_regs_intr = 0x30, /* 2 registers */
};

/* A body for every_layout with distinct values in every field pghotd keeps. */
static void build_every_field(struct buf *b)
{
	static const uint8_t raw[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
	static const uint8_t stack[16] = {0};

	put64(b, 0x1d);		    /* IDENTIFIER */
	put64(b, 0x401000);	    /* IP */
	put32x2(b, 4242, 4243);	    /* TID */
	put64(b, 123456789);	    /* TIME */
	put64(b, 0x7f0000001234);   /* ADDR */
	put64(b, 0x1d);		    /* ID */
	put64(b, 0x5d);		    /* STREAM_ID */
	put32x2(b, 3, 0);	    /* CPU, res */
	put64(b, 1000);		    /* PERIOD */
	put64(b, 2);		    /* READ group: nr */
	put64(b, 11);		    /* time_enabled */
	put64(b, 12);		    /* time_running */
	for (int i = 0; i < 2; i++) /* value, id, lost */
		put64(b, 100 + i), put64(b, 200 + i), put64(b, 0);
	put64(b, 2); /* CALLCHAIN nr */
	put64(b, 0xffffffff81000000ull);
	put64(b, 0x401000);
	{ /* RAW: u32 size then data; 4 + 12 = 16 keeps 8-byte alignment */
		uint32_t sz = b->swap ? bswap_32(12) : 12;
		put_bytes(b, &sz, 4);
		put_bytes(b, raw, sizeof(raw));
	}
	put64(b, 1);				     /* BRANCH_STACK nr */
	put64(b, 77);				     /* hw_idx */
	put64(b, 0x1), put64(b, 0x2), put64(b, 0x3); /* from, to, flags */
	put64(b, 9);				     /* counters[nr] */
	put64(b, PERF_SAMPLE_REGS_ABI_64);	     /* REGS_USER */
	put64(b, 1), put64(b, 2), put64(b, 3);
	put64(b, sizeof(stack)); /* STACK_USER size, data, dyn_size */
	put_bytes(b, stack, sizeof(stack));
	put64(b, 8);
	put64(b, 350);			   /* WEIGHT */
	put64(b, 0x2080);		   /* DATA_SRC */
	put64(b, 0x6);			   /* TRANSACTION */
	put64(b, PERF_SAMPLE_REGS_ABI_64); /* REGS_INTR */
	put64(b, 4), put64(b, 5);
	put64(b, 0x12345000); /* PHYS_ADDR */
	put64(b, 0x99);	      /* CGROUP */
	put64(b, 4096);	      /* DATA_PAGE_SIZE */
	put64(b, 2097152);    /* CODE_PAGE_SIZE */
	put64(b, 8);	      /* AUX size, data */
	put64(b, 0);
}

static void check_every_field(const struct perf_sample *s, const struct buf *b)
{
	assert_int_equal(s->present, every_field);
	assert_int_equal(s->id, 0x1d);
	assert_int_equal(s->ip, 0x401000);
	assert_int_equal(s->pid, 4242);
	assert_int_equal(s->tid, 4243);
	assert_int_equal(s->time, 123456789);
	assert_int_equal(s->addr, 0x7f0000001234);
	assert_int_equal(s->stream_id, 0x5d);
	assert_int_equal(s->cpu, 3);
	assert_int_equal(s->period, 1000);
	assert_int_equal(s->weight, 350);
	assert_int_equal(s->data_src, 0x2080);
	assert_int_equal(s->transaction, 0x6);
	assert_int_equal(s->phys_addr, 0x12345000);
	assert_int_equal(s->cgroup, 0x99);
	assert_int_equal(s->data_page_size, 4096);
	assert_int_equal(s->code_page_size, 2097152);
	assert_int_equal(s->raw_size, 12);
	assert_non_null(s->raw);
	assert_true(s->raw >= b->b && s->raw + 12 <= b->b + b->n);
	assert_int_equal(s->raw[0], 1);
	assert_int_equal(s->raw[11], 12);
}

static void parses_every_field_in_kernel_order(void **state)
{
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	build_every_field(&b);
	assert_int_equal(perf_sample_parse(&every_layout, b.b, b.n, &s), 0);
	check_every_field(&s, &b);
}

static void parses_a_body_written_in_the_other_byte_order(void **state)
{
	struct buf b = {.swap = true};
	struct perf_sample_layout l = every_layout;
	struct perf_sample s;
	(void)state;

	l.swapped = true;
	build_every_field(&b);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	check_every_field(&s, &b);
}

static void rejects_every_truncation_and_leaves_output_untouched(void **state)
{
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	build_every_field(&b);
	for (size_t len = 0; len < b.n; len++) {
		memset(&s, 0xa5, sizeof(s));
		assert_int_equal(perf_sample_parse(&every_layout, b.b, len, &s), -EBADMSG);
		assert_int_equal(s.addr, 0xa5a5a5a5a5a5a5a5ull);
		assert_int_equal(s.pid, 0xa5a5a5a5u);
	}
}

static void parses_the_memory_sampling_layout(void **state)
{
	/* What the IBS/PEBS sources ask for: TID TIME ADDR CPU WEIGHT_STRUCT DATA_SRC PHYS_ADDR. */
	struct perf_sample_layout l = {.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						      PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
						      PERF_SAMPLE_WEIGHT_STRUCT |
						      PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR};
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	put32x2(&b, 10, 11);
	put64(&b, 5);
	put64(&b, 0x7ffd0000);
	put32x2(&b, 1, 0);
	put64(&b, (UINT64_C(7) << 48) | (UINT64_C(20) << 32) | 300); /* var3, var2, var1 */
	put64(&b, 0x1234);
	put64(&b, 0xabc000);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	assert_int_equal(s.pid, 10);
	assert_int_equal(s.tid, 11);
	assert_int_equal(s.time, 5);
	assert_int_equal(s.addr, 0x7ffd0000);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.weight & 0xffffffff, 300);
	assert_int_equal(s.data_src, 0x1234);
	assert_int_equal(s.phys_addr, 0xabc000);
	assert_null(s.raw);
	assert_int_equal(s.id, 0);
}

static void reports_no_cpu_when_the_layout_has_none(void **state)
{
	struct perf_sample_layout l = {.sample_type = PERF_SAMPLE_ADDR};
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	put64(&b, 0x1000);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	assert_int_equal(s.cpu, UINT32_MAX);
	assert_int_equal(s.addr, 0x1000);
}

static void reads_a_non_group_read_format(void **state)
{
	struct perf_sample_layout l = {.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_ADDR,
				       .read_format = PERF_FORMAT_ID | FMT_LOST};
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	put64(&b, 0xdead000); /* ADDR comes before READ */
	put64(&b, 0x77);      /* value, id, lost */
	put64(&b, 1);
	put64(&b, 2);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	assert_int_equal(s.addr, 0xdead000);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n - 8, &s), -EBADMSG);
}

static void takes_no_registers_when_the_abi_is_none(void **state)
{
	struct perf_sample_layout l = {.sample_type = PERF_SAMPLE_REGS_USER |
						      PERF_SAMPLE_STACK_USER | PERF_SAMPLE_DATA_SRC,
				       .sample_regs_user = 0xff};
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	put64(&b, PERF_SAMPLE_REGS_ABI_NONE);
	put64(&b, 0); /* empty stack: no dyn_size */
	put64(&b, 0x42);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	assert_int_equal(s.data_src, 0x42);
}

static void reads_a_branch_stack_without_index_or_counters(void **state)
{
	struct perf_sample_layout l = {.sample_type =
					   PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PHYS_ADDR,
				       .branch_sample_type = PERF_SAMPLE_BRANCH_ANY};
	struct buf b = {0};
	struct perf_sample s;
	(void)state;

	put64(&b, 2);
	for (int i = 0; i < 6; i++)
		put64(&b, i);
	put64(&b, 0x5000);
	assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), 0);
	assert_int_equal(s.phys_addr, 0x5000);
}

static void rejects_impossible_lengths_inside_the_body(void **state)
{
	static const uint64_t huge[] = {UINT64_MAX, UINT64_MAX / 8 + 1, UINT64_MAX / 24 + 1,
					1u << 20};
	struct buf b;
	struct perf_sample s;
	(void)state;

	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		const uint64_t types[] = {PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_BRANCH_STACK,
					  PERF_SAMPLE_STACK_USER, PERF_SAMPLE_AUX};
		for (size_t t = 0; t < 4; t++) {
			struct perf_sample_layout l = {.sample_type = types[t]};
			memset(&b, 0, sizeof(b));
			put64(&b, huge[i]);
			put64(&b, 0);
			put64(&b, 0);
			assert_int_equal(perf_sample_parse(&l, b.b, b.n, &s), -EBADMSG);
		}
	}
	{ /* RAW size beyond the body, and a group read with an impossible nr */
		struct perf_sample_layout raw = {.sample_type = PERF_SAMPLE_RAW};
		struct perf_sample_layout grp = {.sample_type = PERF_SAMPLE_READ,
						 .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID};
		uint32_t big = 0xfffffff0u;
		memset(&b, 0, sizeof(b));
		put_bytes(&b, &big, 4);
		put_bytes(&b, "abcd", 4);
		assert_int_equal(perf_sample_parse(&raw, b.b, b.n, &s), -EBADMSG);
		memset(&b, 0, sizeof(b));
		put64(&b, UINT64_MAX / 2);
		put64(&b, 1);
		put64(&b, 2);
		assert_int_equal(perf_sample_parse(&grp, b.b, b.n, &s), -EBADMSG);
	}
}

static void finds_the_id_position(void **state)
{
	(void)state;
	assert_int_equal(
	    perf_sample_id_pos(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID | PERF_SAMPLE_IP), 0);
	assert_int_equal(perf_sample_id_pos(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_CPU),
			 4);
	assert_int_equal(perf_sample_id_pos(PERF_SAMPLE_ID), 0);
	assert_int_equal(perf_sample_id_pos(PERF_SAMPLE_IP | PERF_SAMPLE_ADDR), -1);
	assert_int_equal(perf_sample_id_trailer_size(PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
						     PERF_SAMPLE_ADDR | PERF_SAMPLE_IP |
						     PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER),
			 32);
}

/* Every fixed-size field bit perf_sample_plan can place. */
static const uint64_t fixed_bits[] = {
    PERF_SAMPLE_IDENTIFIER,
    PERF_SAMPLE_IP,
    PERF_SAMPLE_TID,
    PERF_SAMPLE_TIME,
    PERF_SAMPLE_ADDR,
    PERF_SAMPLE_ID,
    PERF_SAMPLE_STREAM_ID,
    PERF_SAMPLE_CPU,
    PERF_SAMPLE_PERIOD,
    PERF_SAMPLE_WEIGHT,
    PERF_SAMPLE_DATA_SRC,
    PERF_SAMPLE_TRANSACTION,
    PERF_SAMPLE_PHYS_ADDR,
    PERF_SAMPLE_CGROUP,
    PERF_SAMPLE_DATA_PAGE_SIZE,
    PERF_SAMPLE_CODE_PAGE_SIZE,
    (1ULL << 24) /* WEIGHT_STRUCT */,
};

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The planned parse must match the walk field for field, and fail where it fails. */
static void planned_parse_matches_the_walk(const struct perf_sample_layout *l, const uint8_t *body,
					   size_t len)
{
	struct perf_sample_plan plan;
	struct perf_sample a, b;
	int ra, rb;

	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	perf_sample_plan_init(&plan, l);
	ra = perf_sample_parse(l, body, len, &a);
	rb = perf_sample_parse_planned(&plan, body, len, &b);
	assert_int_equal(ra, rb);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void planned_parse_agrees_with_the_walk_for_fixed_layouts(void **state)
{
	const size_t nbits = sizeof(fixed_bits) / sizeof(fixed_bits[0]);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t body[256];
	(void)state;

	for (size_t i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)next_rand(&x);
	for (int round = 0; round < 2000; round++) {
		struct perf_sample_layout l = {.swapped = round & 1};
		uint64_t pick = next_rand(&x);

		for (size_t k = 0; k < nbits; k++)
			if (pick >> k & 1)
				l.sample_type |= fixed_bits[k];
		/* Every length from empty to more than the layout needs. */
		for (size_t len = 0; len <= 8 * nbits + 8; len += 4)
			planned_parse_matches_the_walk(&l, body, len);
	}
}

static void planned_parse_walks_a_layout_with_variable_fields(void **state)
{
	struct buf b = {0};
	struct perf_sample_layout l = {.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN |
						      PERF_SAMPLE_ADDR};
	struct perf_sample_plan plan;
	struct perf_sample s;
	(void)state;

	put32x2(&b, 10, 11);
	put64(&b, 0xdead000);
	put64(&b, 2); /* callchain of two, after ADDR in the kernel's order */
	put64(&b, 0x1);
	put64(&b, 0x2);
	perf_sample_plan_init(&plan, &l);
	assert_false(plan.fixed);
	assert_int_equal(perf_sample_parse_planned(&plan, b.b, b.n, &s), 0);
	assert_int_equal(s.addr, 0xdead000);
	assert_int_equal(s.tid, 11);
	assert_int_equal(perf_sample_parse_planned(&plan, b.b, b.n - 1, &s), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(parses_every_field_in_kernel_order),
	    cmocka_unit_test(parses_a_body_written_in_the_other_byte_order),
	    cmocka_unit_test(rejects_every_truncation_and_leaves_output_untouched),
	    cmocka_unit_test(parses_the_memory_sampling_layout),
	    cmocka_unit_test(reports_no_cpu_when_the_layout_has_none),
	    cmocka_unit_test(reads_a_non_group_read_format),
	    cmocka_unit_test(takes_no_registers_when_the_abi_is_none),
	    cmocka_unit_test(reads_a_branch_stack_without_index_or_counters),
	    cmocka_unit_test(rejects_impossible_lengths_inside_the_body),
	    cmocka_unit_test(finds_the_id_position),
	    cmocka_unit_test(planned_parse_agrees_with_the_walk_for_fixed_layouts),
	    cmocka_unit_test(planned_parse_walks_a_layout_with_variable_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
