/* bench_ring: the sampler's per-sample path on one core, from a prepared ring: perf_ring
 * drain (header, wrap check, perf_sample_parse of a PEBS-like TID|TIME|ADDR|CPU|
 * WEIGHT_STRUCT|DATA_SRC sample), pmu_filter (data source says CXL: kept) and
 * hot_table_record into a 1 M-entry table. Also prints the parse-only cost (drain with an
 * empty callback), measured in the same run, so the filter+table share is visible.
 *
 * Usage: bench_ring [passes]. Last line: ns_per_sample: <x> (target: 100 or less). */
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table/hot_table.h"
#include "sources/perf/perf_ring.h"
#include "sources/pmu/pmu_filter.h"

#define PAGE	    4096u
#define DATA_PAGES  256u
#define DATA_SIZE   (DATA_PAGES * PAGE)
#define RECORD	    64u /* 8 header + 56 body */
#define SAMPLES	    (DATA_SIZE / RECORD)
#define WORKING_SET (1u << 18) /* pages sampled */
#define HANDLE	    ((1u << 16) | 1u)

static const struct perf_sample_layout layout = {
    .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
		   PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC};

struct bench {
	uint8_t *mem;
	struct perf_ring ring;
	struct perf_ring_reader *rd;
	struct pmu_filter filter;
	struct hot_table *hot;
	struct hot_params params;
	uint64_t kept, recorded;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fill(struct bench *b)
{
	uint64_t x = 88172645463325252ull,
		 src = PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVLNUM, CXL);

	for (uint32_t i = 0; i < SAMPLES; i++) {
		uint8_t *r = b->ring.data + (size_t)i * RECORD;
		struct perf_event_header h = {PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, RECORD};
		uint32_t pidtid[2] = {1234, 1234}, cpu[2] = {i & 1, 0};
		uint64_t t = 1000000ull * i, addr, w = 300;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		addr = 0x7f0000000000ull + (x % WORKING_SET) * PAGE + (x & 0xff8);
		memcpy(r, &h, 8);
		memcpy(r + 8, pidtid, 8);
		memcpy(r + 16, &t, 8);
		memcpy(r + 24, &addr, 8);
		memcpy(r + 32, cpu, 8);
		memcpy(r + 40, &w, 8);
		memcpy(r + 48, &src, 8);
	}
}

static void on_sample_full(void *ctx, const struct perf_event_header *h,
			   const struct perf_sample *s)
{
	struct bench *b = ctx;
	struct sample_in in;
	struct access_event ev;
	struct hot_access a;

	(void)h;
	sample_in_from_perf(s, ACCESS_LOAD, false, &in);
	if (pmu_filter_apply(&b->filter, &in, &ev) != SAMPLE_KEPT)
		return;
	b->kept++;
	a = (struct hot_access){
	    .proc = HANDLE, .vaddr = ev.vaddr, .now_ms = ev.time_ns / 1000000, .node = 0};
	if (hot_table_record(b->hot, &a, &b->params) >= 0)
		b->recorded++;
}

static void on_sample_none(void *ctx, const struct perf_event_header *h,
			   const struct perf_sample *s)
{
	(void)ctx, (void)h, (void)s;
}

/* The machine's speed, for reading the figure: ns per iteration of a dependent add loop
 * (about 0.3 ns on a current x86 core at 3+ GHz). */
static double reference_loop_ns(void)
{
	volatile uint64_t x = 0;
	uint64_t t0 = now_ns();

	for (uint64_t i = 0; i < 20000000; i++)
		x += i;
	/* Reading x back keeps clang's unused-but-set warning quiet (and the loop honest). */
	return (double)(now_ns() - t0 + (x & 0)) / 20000000.0;
}

/* ns per sample over passes drains of the full ring. */
static double run(struct bench *b, int passes)
{
	uint64_t t0 = now_ns(), n = 0;

	for (int p = 0; p < passes; p++) {
		/* the "kernel" republishes the same records one lap later */
		b->ring.meta->data_head = b->ring.meta->data_tail + DATA_SIZE;
		n += perf_ring_drain(b->rd, &b->ring);
	}
	return (double)(now_ns() - t0) / (double)n;
}

int main(int argc, char **argv)
{
	int passes = argc > 1 ? atoi(argv[1]) : 200;
	struct bench b = {.params = {.threshold = 8, .window_ms = 3000, .cooldown_ms = 60000}};
	cpu_set_t one;
	double parse, full, ref;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one); /* one core; best effort */
	b.mem = aligned_alloc(PAGE, PAGE + DATA_SIZE);
	b.rd = calloc(1, sizeof(*b.rd));
	if (!b.mem || !b.rd || hot_table_new(1u << 20, 4096, &b.hot) < 0)
		return 1;
	memset(b.mem, 0, PAGE);
	((struct perf_event_mmap_page *)b.mem)->data_offset = PAGE;
	((struct perf_event_mmap_page *)b.mem)->data_size = DATA_SIZE;
	if (perf_ring_init(&b.ring, b.mem, PAGE + DATA_SIZE, PAGE) < 0)
		return 1;
	fill(&b);
	pmu_filter_init(&b.filter, NULL, NULL, SRC_PEBS);
	b.rd->layout = &layout;
	b.rd->ctx = &b;

	b.rd->on_sample = on_sample_none;
	run(&b, passes / 10 + 1); /* warm up */
	parse = run(&b, passes);
	b.rd->on_sample = on_sample_full;
	run(&b, passes / 10 + 1);
	full = run(&b, passes);
	ref = reference_loop_ns();
	if (b.kept == 0 || b.rd->counts.malformed)
		return 1; /* the benchmark measured nothing real */
	printf("samples per pass: %u, passes: %d, working set: %u pages\n", SAMPLES, passes,
	       WORKING_SET);
	printf("kept: %llu, recorded: %llu, hot table used: %zu\n", (unsigned long long)b.kept,
	       (unsigned long long)b.recorded, hot_table_used(b.hot));
	printf("ring parse only: %.1f ns/sample\n", parse);
	printf("reference add loop: %.2f ns/iteration (sample path = %.0f iterations)\n", ref,
	       full / ref);
	printf("ns_per_sample: %.1f\n", full);
	hot_table_free(b.hot);
	free(b.rd);
	free(b.mem);
	return 0;
}
