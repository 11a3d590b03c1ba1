/* perf_sample: PERF_RECORD_SAMPLE body parser.
 *
 * The body is a sequence of optional fields, each present when its bit is set in sample_type,
 * in the order the kernel writes them (kernel/events/core.c perf_output_sample(), which puts
 * PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE and then AUX at the end; the uapi comment
 * lists AUX earlier, the code is what counts). Every length read from the body is checked
 * against the bytes left before it is used, so a corrupt body can only make the parse fail. */
#include "sources/perf/perf_sample.h"

#include <byteswap.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

/* Newer than the installed uapi headers may be; the values are ABI. */
#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif
#define SAMPLE_BRANCH_HW_INDEX (1U << 17)
#define SAMPLE_BRANCH_COUNTERS (1U << 19) /* Linux 6.8: u64 counters[nr] after the entries */

#define SAMPLE_WEIGHT_STRUCT (1U << 24)

struct cursor {
	const uint8_t *p;
	size_t left;
	bool sw;
};

/* Inlined into the cursor: this is the per-sample hot path of every source. */
static inline __attribute__((always_inline)) uint64_t rd64(const void *p, bool swapped)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? bswap_64(v) : v;
}

static inline __attribute__((always_inline)) uint32_t rd32(const void *p, bool swapped)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? bswap_32(v) : v;
}

uint64_t perf_rd64(const void *p, bool swapped)
{
	return rd64(p, swapped);
}

uint32_t perf_rd32(const void *p, bool swapped)
{
	return rd32(p, swapped);
}

static bool skip(struct cursor *c, uint64_t n)
{
	if (n > c->left)
		return false;
	c->p += n;
	c->left -= n;
	return true;
}

static bool take64(struct cursor *c, uint64_t *v)
{
	if (c->left < 8)
		return false;
	*v = rd64(c->p, c->sw);
	c->p += 8;
	c->left -= 8;
	return true;
}

/* Two u32 in one u64 slot (pid/tid, cpu/res): each half is its own u32 in the writer's order. */
static bool take32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	if (c->left < 8)
		return false;
	*a = rd32(c->p, c->sw);
	*b = rd32(c->p + 4, c->sw);
	c->p += 8;
	c->left -= 8;
	return true;
}

/* n u64 words, with n taken from the body: checked by division so a huge n cannot wrap. */
static bool skip_words(struct cursor *c, uint64_t n)
{
	if (n > c->left / 8)
		return false;
	return skip(c, n * 8);
}

static bool skip_read(struct cursor *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t times =
	    !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t nr;

	if (!(rf & PERF_FORMAT_GROUP))
		return skip_words(c, per + times);
	if (!take64(c, &nr) || !skip_words(c, times))
		return false;
	return nr <= c->left / 8 / per && skip_words(c, nr * per);
}

static bool skip_branch_stack(struct cursor *c, uint64_t bst)
{
	uint64_t nr;

	if (!take64(c, &nr))
		return false;
	if ((bst & SAMPLE_BRANCH_HW_INDEX) && !skip_words(c, 1))
		return false;
	if (nr > c->left / 24 || !skip_words(c, nr * 3))
		return false;
	return !(bst & SAMPLE_BRANCH_COUNTERS) || skip_words(c, nr);
}

static bool skip_regs(struct cursor *c, uint64_t mask)
{
	uint64_t abi;

	if (!take64(c, &abi))
		return false;
	return abi == PERF_SAMPLE_REGS_ABI_NONE ||
	       skip_words(c, (uint64_t)__builtin_popcountll(mask));
}

static bool skip_stack_user(struct cursor *c)
{
	uint64_t size;

	if (!take64(c, &size) || !skip(c, size))
		return false;
	return size == 0 || skip_words(c, 1); /* dyn_size follows only a non-empty stack */
}

static bool take_raw(struct cursor *c, struct perf_sample *s)
{
	uint32_t size;

	if (c->left < 4)
		return false;
	size = rd32(c->p, c->sw);
	if (!skip(c, 4))
		return false;
	s->raw = c->p;
	s->raw_size = size;
	return skip(c, size); /* the kernel pads 4 + size to 8; the padding is inside size */
}

static bool take_aux(struct cursor *c)
{
	uint64_t size;

	return take64(c, &size) && skip(c, size);
}

/* IDENTIFIER up to PERIOD: fixed-size fields. */
static bool parse_head(struct cursor *c, uint64_t st, struct perf_sample *s)
{
	if ((st & PERF_SAMPLE_IDENTIFIER) && !take64(c, &s->id))
		return false;
	if ((st & PERF_SAMPLE_IP) && !take64(c, &s->ip))
		return false;
	if ((st & PERF_SAMPLE_TID) && !take32x2(c, &s->pid, &s->tid))
		return false;
	if ((st & PERF_SAMPLE_TIME) && !take64(c, &s->time))
		return false;
	if ((st & PERF_SAMPLE_ADDR) && !take64(c, &s->addr))
		return false;
	if ((st & PERF_SAMPLE_ID) && !take64(c, &s->id))
		return false;
	if ((st & PERF_SAMPLE_STREAM_ID) && !take64(c, &s->stream_id))
		return false;
	if (st & PERF_SAMPLE_CPU) {
		uint32_t res;

		if (!take32x2(c, &s->cpu, &res))
			return false;
	}
	return !(st & PERF_SAMPLE_PERIOD) || take64(c, &s->period);
}

/* READ up to STACK_USER: variable-size fields pghotd steps over (RAW is kept). */
static bool parse_middle(struct cursor *c, const struct perf_sample_layout *l,
			 struct perf_sample *s)
{
	uint64_t st = l->sample_type, nr;

	if ((st & PERF_SAMPLE_READ) && !skip_read(c, l->read_format))
		return false;
	if ((st & PERF_SAMPLE_CALLCHAIN) && !(take64(c, &nr) && skip_words(c, nr)))
		return false;
	if ((st & PERF_SAMPLE_RAW) && !take_raw(c, s))
		return false;
	if ((st & PERF_SAMPLE_BRANCH_STACK) && !skip_branch_stack(c, l->branch_sample_type))
		return false;
	if ((st & PERF_SAMPLE_REGS_USER) && !skip_regs(c, l->sample_regs_user))
		return false;
	return !(st & PERF_SAMPLE_STACK_USER) || skip_stack_user(c);
}

/* WEIGHT up to AUX. */
static bool parse_tail(struct cursor *c, const struct perf_sample_layout *l, struct perf_sample *s)
{
	uint64_t st = l->sample_type;

	if ((st & (PERF_SAMPLE_WEIGHT | SAMPLE_WEIGHT_STRUCT)) && !take64(c, &s->weight))
		return false;
	if ((st & PERF_SAMPLE_DATA_SRC) && !take64(c, &s->data_src))
		return false;
	if ((st & PERF_SAMPLE_TRANSACTION) && !take64(c, &s->transaction))
		return false;
	if ((st & PERF_SAMPLE_REGS_INTR) && !skip_regs(c, l->sample_regs_intr))
		return false;
	if ((st & PERF_SAMPLE_PHYS_ADDR) && !take64(c, &s->phys_addr))
		return false;
	if ((st & PERF_SAMPLE_CGROUP) && !take64(c, &s->cgroup))
		return false;
	if ((st & PERF_SAMPLE_DATA_PAGE_SIZE) && !take64(c, &s->data_page_size))
		return false;
	if ((st & PERF_SAMPLE_CODE_PAGE_SIZE) && !take64(c, &s->code_page_size))
		return false;
	return !(st & PERF_SAMPLE_AUX) || take_aux(c);
}

int perf_sample_parse(const struct perf_sample_layout *layout, const void *body, size_t len,
		      struct perf_sample *out)
{
	struct cursor c = {.p = body, .left = len, .sw = layout->swapped};
	struct perf_sample s = {.present = layout->sample_type, .cpu = UINT32_MAX};

	if (!parse_head(&c, layout->sample_type, &s) || !parse_middle(&c, layout, &s) ||
	    !parse_tail(&c, layout, &s))
		return -EBADMSG;
	*out = s;
	return 0;
}

/* Fields of variable size: a layout with any of them has no fixed offsets. */
#define SAMPLE_VARIABLE                                                                            \
	(PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |   \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX)

/* Gives field bit its offset in the kernel's order if the layout has it. */
static void plan_field(struct perf_sample_plan *plan, uint64_t bits, uint16_t *off)
{
	if (!(plan->layout.sample_type & bits))
		return;
	*off = plan->size;
	plan->size += 8;
}

void perf_sample_plan_init(struct perf_sample_plan *plan, const struct perf_sample_layout *layout)
{
	memset(plan, 0, sizeof(*plan));
	plan->layout = *layout;
	plan->fixed = !(layout->sample_type & SAMPLE_VARIABLE);
	if (!plan->fixed)
		return;
	/* The order of parse_head() and parse_tail(); ID and IDENTIFIER share the id field. */
	plan_field(plan, PERF_SAMPLE_IDENTIFIER, &plan->id);
	plan_field(plan, PERF_SAMPLE_IP, &plan->ip);
	plan_field(plan, PERF_SAMPLE_TID, &plan->tid);
	plan_field(plan, PERF_SAMPLE_TIME, &plan->time);
	plan_field(plan, PERF_SAMPLE_ADDR, &plan->addr);
	plan_field(plan, PERF_SAMPLE_ID, &plan->id);
	plan_field(plan, PERF_SAMPLE_STREAM_ID, &plan->stream_id);
	plan_field(plan, PERF_SAMPLE_CPU, &plan->cpu);
	plan_field(plan, PERF_SAMPLE_PERIOD, &plan->period);
	plan_field(plan, PERF_SAMPLE_WEIGHT | SAMPLE_WEIGHT_STRUCT, &plan->weight);
	plan_field(plan, PERF_SAMPLE_DATA_SRC, &plan->data_src);
	plan_field(plan, PERF_SAMPLE_TRANSACTION, &plan->transaction);
	plan_field(plan, PERF_SAMPLE_PHYS_ADDR, &plan->phys_addr);
	plan_field(plan, PERF_SAMPLE_CGROUP, &plan->cgroup);
	plan_field(plan, PERF_SAMPLE_DATA_PAGE_SIZE, &plan->data_page_size);
	plan_field(plan, PERF_SAMPLE_CODE_PAGE_SIZE, &plan->code_page_size);
}

/* Loads field f (a u64) at the plan's offset when the sample_type has bits. */
#define PLAN_TAKE(bits, f)                                                                         \
	do {                                                                                       \
		if (st & (bits))                                                                   \
			s->f = rd64(b + plan->f, sw);                                              \
	} while (0)

int perf_sample_parse_planned(const struct perf_sample_plan *plan, const void *body, size_t len,
			      struct perf_sample *out)
{
	const uint8_t *b = body;
	uint64_t st = plan->layout.sample_type;
	bool sw = plan->layout.swapped;
	struct perf_sample *s = out; /* written only once the length is known to suffice */

	if (!plan->fixed)
		return perf_sample_parse(&plan->layout, body, len, out);
	if (len < plan->size)
		return -EBADMSG;
	memset(s, 0, sizeof(*s));
	s->present = st;
	s->cpu = UINT32_MAX;
	PLAN_TAKE(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID, id);
	PLAN_TAKE(PERF_SAMPLE_IP, ip);
	if (st & PERF_SAMPLE_TID) {
		s->pid = rd32(b + plan->tid, sw);
		s->tid = rd32(b + plan->tid + 4, sw);
	}
	PLAN_TAKE(PERF_SAMPLE_TIME, time);
	PLAN_TAKE(PERF_SAMPLE_ADDR, addr);
	PLAN_TAKE(PERF_SAMPLE_STREAM_ID, stream_id);
	if (st & PERF_SAMPLE_CPU)
		s->cpu = rd32(b + plan->cpu, sw);
	PLAN_TAKE(PERF_SAMPLE_PERIOD, period);
	PLAN_TAKE(PERF_SAMPLE_WEIGHT | SAMPLE_WEIGHT_STRUCT, weight);
	PLAN_TAKE(PERF_SAMPLE_DATA_SRC, data_src);
	PLAN_TAKE(PERF_SAMPLE_TRANSACTION, transaction);
	PLAN_TAKE(PERF_SAMPLE_PHYS_ADDR, phys_addr);
	PLAN_TAKE(PERF_SAMPLE_CGROUP, cgroup);
	PLAN_TAKE(PERF_SAMPLE_DATA_PAGE_SIZE, data_page_size);
	PLAN_TAKE(PERF_SAMPLE_CODE_PAGE_SIZE, code_page_size);
	return 0;
}

int perf_sample_id_pos(uint64_t st)
{
	int pos = 0;

	if (st & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(st & PERF_SAMPLE_ID))
		return -1;
	pos += !!(st & PERF_SAMPLE_IP);
	pos += !!(st & PERF_SAMPLE_TID);
	pos += !!(st & PERF_SAMPLE_TIME);
	pos += !!(st & PERF_SAMPLE_ADDR);
	return pos;
}

size_t perf_sample_id_trailer_size(uint64_t st)
{
	uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
			PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	return 8 * (size_t)__builtin_popcountll(st & bits);
}
