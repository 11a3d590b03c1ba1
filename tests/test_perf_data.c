/* perf_data: hand-made files for every attr size, several events told apart by ID, the other
 * byte order, and every kind of corruption (each error names its offset); the shared real
 * recording checked against `perf script` on the same file. */
#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "perf_data.h"

#define REAL_FILE "/work/shared/data/perf/pebs-skx-loadlat-weight-struct.data"

/* ---- a tiny perf.data writer ---- */

struct file {
	uint8_t b[16384];
	size_t n;
	bool swap;
};

static void at64(struct file *f, size_t off, uint64_t v)
{
	if (f->swap)
		v = bswap_64(v);
	memcpy(f->b + off, &v, 8);
}

static void at32(struct file *f, size_t off, uint32_t v)
{
	if (f->swap)
		v = bswap_32(v);
	memcpy(f->b + off, &v, 4);
}

static void put64(struct file *f, uint64_t v)
{
	at64(f, f->n, v);
	f->n += 8;
}

struct ev {
	uint64_t sample_type;
	uint64_t regs_user;
	uint64_t id;
};

#define ST_BASIC (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID)

/* Header, attrs of attr_size bytes each (attr + ids section), one id per event, then an empty
 * data section starting at f->n. Returns the data section's offset. */
static size_t file_begin(struct file *f, size_t attr_size, const struct ev *evs, size_t nr)
{
	size_t attrs = 104, ids = attrs + nr * attr_size, data = ids + 8 * nr;

	memset(f->b, 0, sizeof(f->b));
	memcpy(f->b, "PERFILE2", 8);
	if (f->swap)
		memcpy(f->b, "2ELIFREP", 8);
	at64(f, 8, 104);
	at64(f, 16, attr_size);
	at64(f, 24, attrs);
	at64(f, 32, nr * attr_size);
	at64(f, 40, data);
	at64(f, 48, 0);
	for (size_t i = 0; i < nr; i++) {
		size_t e = attrs + i * attr_size, held = attr_size - 16;

		at32(f, e, 1);			/* PERF_TYPE_SOFTWARE */
		at32(f, e + 4, (uint32_t)held); /* attr.size */
		at64(f, e + 8, 2);		/* page faults */
		at64(f, e + 24, evs[i].sample_type);
		if (held >= 88)
			at64(f, e + 80, evs[i].regs_user);
		at64(f, e + held, ids + 8 * i); /* ids section */
		at64(f, e + held + 8, 8);
		at64(f, ids + 8 * i, evs[i].id);
	}
	f->n = data;
	return data;
}

static void file_end(struct file *f, size_t data)
{
	at64(f, 48, f->n - data);
}

static void put_header(struct file *f, uint32_t type, uint16_t size)
{
	uint16_t misc = 2, sz = size; /* PERF_RECORD_MISC_USER */

	at32(f, f->n, type);
	if (f->swap)
		misc = bswap_16(misc), sz = bswap_16(sz);
	memcpy(f->b + f->n + 4, &misc, 2);
	memcpy(f->b + f->n + 6, &sz, 2);
	f->n += 8;
}

static void put_sample(struct file *f, uint32_t pid, uint64_t addr, uint64_t id)
{
	put_header(f, PERF_RECORD_SAMPLE, 40);
	at32(f, f->n, pid);
	at32(f, f->n + 4, pid + 1);
	f->n += 8;
	put64(f, 777);
	put64(f, addr);
	put64(f, id);
}

/* ---- collecting what the reader delivers ---- */

struct seen {
	int n;
	uint32_t pid[64];
	uint64_t addr[64];
	const struct perf_data_attr *attr[64]; /* valid while the file is open */
	uint64_t regs_user[64];		       /* the attr's, copied while it was */
	int others;
};

static void on_sample(void *ctx, const struct perf_data_attr *a, const struct perf_event_header *h,
		      const struct perf_sample *s)
{
	struct seen *v = ctx;

	(void)h;
	if (v->n < 64) {
		v->pid[v->n] = s->pid;
		v->addr[v->n] = s->addr;
		v->regs_user[v->n] = a->layout.sample_regs_user;
		v->attr[v->n++] = a;
	}
}

static void on_record(void *ctx, const struct perf_event_header *h, const void *b, size_t len)
{
	(void)h, (void)b, (void)len;
	((struct seen *)ctx)->others++;
}

static int read_all(const struct file *f, struct seen *v, struct perf_data_counts *c, char *err)
{
	struct perf_data_ops ops = {.on_sample = on_sample, .on_record = on_record, .ctx = v};
	struct perf_data *d = NULL;
	int r;

	memset(v, 0, sizeof(*v));
	err[0] = 0;
	r = perf_data_open_buffer(f->b, f->n, &d, err, PERF_DATA_ERR_LEN);
	if (r < 0)
		return r;
	r = perf_data_read(d, &ops, c, err, PERF_DATA_ERR_LEN);
	perf_data_close(d);
	return r;
}

static void reads_samples_with_every_attr_size_perf_has_written(void **state)
{
	static const size_t sizes[] = {64, 72, 80, 96, 104, 112, 120, 128, 136, 144};
	(void)state;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* REGS_USER after ADDR/ID: the regs mask decides how long the sample is, and only
		 * attrs of 88 bytes and more hold it. */
		struct ev ev = {
		    .sample_type = ST_BASIC | PERF_SAMPLE_REGS_USER, .regs_user = 0x3, .id = 5};
		struct file f = {0};
		struct perf_data_counts c;
		struct seen v;
		char err[PERF_DATA_ERR_LEN];
		size_t data = file_begin(&f, sizes[i] + 16, &ev, 1);
		bool holds_regs = sizes[i] >= 88;

		put_header(&f, PERF_RECORD_SAMPLE, (uint16_t)(40 + 8 + (holds_regs ? 16 : 0)));
		at32(&f, f.n, 42), at32(&f, f.n + 4, 43), f.n += 8;
		put64(&f, 1), put64(&f, 0x7f0000003000), put64(&f, 5);
		put64(&f, 2); /* abi 64 */
		if (holds_regs)
			put64(&f, 0xa), put64(&f, 0xb);
		file_end(&f, data);
		assert_int_equal(read_all(&f, &v, &c, err), 0);
		assert_int_equal(c.samples, 1);
		assert_int_equal(v.pid[0], 42);
		assert_int_equal(v.addr[0], 0x7f0000003000);
		assert_int_equal(v.regs_user[0], holds_regs ? 0x3 : 0);
	}
}

static void tells_events_apart_by_sample_id(void **state)
{
	struct ev evs[2] = {{.sample_type = ST_BASIC, .id = 100},
			    {.sample_type = ST_BASIC, .id = 7}};
	struct file f = {0};
	struct seen v = {0};
	struct perf_data_ops ops = {.on_sample = on_sample, .on_record = on_record, .ctx = &v};
	struct perf_data_counts c;
	struct perf_data *d = NULL;
	char err[PERF_DATA_ERR_LEN];
	size_t data = file_begin(&f, 128 + 16, evs, 2);
	(void)state;

	put_sample(&f, 1, 0x1000, 7);
	put_sample(&f, 2, 0x2000, 100);
	put_sample(&f, 3, 0x3000, 55); /* no such event */
	put_header(&f, PERF_RECORD_LOST, 24);
	put64(&f, 7), put64(&f, 9);
	put_header(&f, 13, 16); /* LOST_SAMPLES */
	put64(&f, 4);
	file_end(&f, data);
	assert_int_equal(perf_data_open_buffer(f.b, f.n, &d, err, sizeof(err)), 0);
	assert_int_equal(perf_data_read(d, &ops, &c, err, sizeof(err)), 0);
	assert_int_equal(c.records, 5);
	assert_int_equal(c.samples, 2);
	assert_int_equal(c.unmatched, 1);
	assert_int_equal(c.lost, 13);
	assert_int_equal(v.n, 2);
	assert_int_equal(v.others, 2);
	assert_int_equal(v.pid[0], 1);
	assert_ptr_equal(v.attr[0], perf_data_attr(d, 1)); /* id 7 */
	assert_int_equal(v.pid[1], 2);
	assert_ptr_equal(v.attr[1], perf_data_attr(d, 0)); /* id 100 */
	assert_int_equal(perf_data_attr(d, 0)->nr_ids, 1);
	perf_data_close(d);
}

static void reads_a_file_written_in_the_other_byte_order(void **state)
{
	struct ev ev = {.sample_type = ST_BASIC, .id = 9};
	struct file f = {.swap = true};
	struct perf_data_counts c;
	struct seen v;
	char err[PERF_DATA_ERR_LEN];
	size_t data = file_begin(&f, 112, &ev, 1);
	(void)state;

	put_sample(&f, 31, 0x7f00000a1000, 9);
	put_header(&f, PERF_RECORD_LOST, 24);
	put64(&f, 9), put64(&f, 6);
	file_end(&f, data);
	assert_int_equal(read_all(&f, &v, &c, err), 0);
	assert_int_equal(c.samples, 1);
	assert_int_equal(c.lost, 6);
	assert_int_equal(v.pid[0], 31);
	assert_int_equal(v.addr[0], 0x7f00000a1000);
}

/* Expects failure with code and a message that starts with "offset <off>:". */
static void expect_error(const struct file *f, int code, uint64_t off)
{
	struct perf_data_counts c;
	struct seen v;
	char err[PERF_DATA_ERR_LEN], want[64];

	assert_int_equal(read_all(f, &v, &c, err), code);
	snprintf(want, sizeof(want), "offset %" PRIu64 ": ", off);
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("error \"%s\" does not start with \"%s\"", err, want);
}

static size_t one_event_file(struct file *f)
{
	struct ev ev = {.sample_type = ST_BASIC, .id = 1};
	size_t data = file_begin(f, 112, &ev, 1);

	put_sample(f, 1, 0x1000, 1);
	return data;
}

static void rejects_corrupt_headers_naming_the_offset(void **state)
{
	struct file f = {0};
	size_t data;
	(void)state;

	data = one_event_file(&f);
	file_end(&f, data);
	memcpy(f.b, "PERFXXXX", 8);
	expect_error(&f, -EBADMSG, 0);
	memcpy(f.b, "PERFFILE", 8);
	at64(&f, 16, 44); /* version 1: no attr size perf wrote, in either byte order */
	expect_error(&f, -EBADMSG, 16);
	at64(&f, 16, 112);
	memcpy(f.b, "PERFILE2", 8);
	at64(&f, 8, 16); /* pipe mode: the rest is no stream of records naming an attr */
	expect_error(&f, -EBADMSG, 16);
	at64(&f, 8, 64); /* header size below the first header's 72 bytes */
	expect_error(&f, -EBADMSG, 8);
	at64(&f, 8, 104);
	at64(&f, 16, 40); /* attr size below VER0 */
	expect_error(&f, -EBADMSG, 16);
	at64(&f, 16, 112);
	at64(&f, 32, 50); /* attrs section smaller than one attr */
	expect_error(&f, -EBADMSG, 32);
	at64(&f, 32, 112);
	at64(&f, 24, UINT64_MAX - 8); /* attrs beyond the end, sum would wrap */
	expect_error(&f, -EBADMSG, 24);
	at64(&f, 24, 104);
	at64(&f, 104 + 96 + 8, 12); /* ids size not a multiple of 8 */
	expect_error(&f, -EBADMSG, 104 + 96);
	at64(&f, 104 + 96 + 8, 8);
	at64(&f, 48, f.n); /* data section runs past the end */
	expect_error(&f, -EBADMSG, 40);
}

static void rejects_corrupt_records_naming_their_offset(void **state)
{
	struct file f = {0};
	size_t data, bad;
	(void)state;

	data = one_event_file(&f);
	bad = f.n;
	put_header(&f, PERF_RECORD_SAMPLE, 4); /* smaller than its header */
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);

	data = one_event_file(&f);
	bad = f.n;
	put_header(&f, PERF_RECORD_SAMPLE, 400); /* beyond the data section */
	put64(&f, 0);
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);

	data = one_event_file(&f);
	bad = f.n;
	put_header(&f, PERF_RECORD_SAMPLE, 24); /* shorter than its sample_type needs */
	put64(&f, 0), put64(&f, 0);
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);

	data = one_event_file(&f);
	bad = f.n;
	put_header(&f, PERF_RECORD_LOST, 8); /* no id, no count */
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);

	data = one_event_file(&f);
	bad = f.n;
	put_header(&f, 81, 16); /* PERF_RECORD_COMPRESSED holding no zstd frame */
	put64(&f, 0);
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);

	data = one_event_file(&f);
	bad = f.n;
	f.n += 4; /* the section ends inside a header */
	file_end(&f, data);
	expect_error(&f, -EBADMSG, bad);
}

static void delivers_what_precedes_a_corrupt_record(void **state)
{
	struct file f = {0};
	struct perf_data_counts c;
	struct seen v;
	char err[PERF_DATA_ERR_LEN];
	size_t data = one_event_file(&f);
	(void)state;

	put_sample(&f, 2, 0x2000, 1);
	put_header(&f, PERF_RECORD_SAMPLE, 0);
	file_end(&f, data);
	assert_int_equal(read_all(&f, &v, &c, err), -EBADMSG);
	assert_int_equal(v.n, 2);
	assert_int_equal(c.samples, 2);
}

static void fails_cleanly_at_every_truncation(void **state)
{
	struct file f = {0};
	size_t data = one_event_file(&f), full;
	(void)state;

	put_sample(&f, 2, 0x2000, 1);
	file_end(&f, data);
	full = f.n;
	for (size_t len = 0; len < full; len++) {
		struct file *t = malloc(sizeof(*t));
		struct perf_data_counts c;
		struct seen v;
		char err[PERF_DATA_ERR_LEN];

		assert_non_null(t);
		memcpy(t, &f, sizeof(f));
		t->n = len;
		assert_true(read_all(t, &v, &c, err) < 0);
		assert_true(strncmp(err, "offset ", 7) == 0);
		free(t);
	}
}

/* ---- the real recording ---- */

struct triple {
	uint32_t pid, tid;
	uint64_t addr, data_src;
};

static int triple_cmp(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

struct real {
	int n;
	struct triple t[256];
	uint32_t attr_type[256];
};

static void on_real(void *ctx, const struct perf_data_attr *a, const struct perf_event_header *h,
		    const struct perf_sample *s)
{
	struct real *r = ctx;

	(void)h;
	assert_true(r->n < 256);
	r->attr_type[r->n] = a->type;
	r->t[r->n++] = (struct triple){s->pid, s->tid, s->addr, s->data_src};
}

static int perf_script_triples(struct triple *out, int max)
{
	FILE *p =
	    popen("perf script -f -i " REAL_FILE " -F pid,tid,addr,data_src 2>/dev/null", "r");
	char line[512];
	int n = 0;

	if (!p)
		return -1;
	while (n < max && fgets(line, sizeof(line), p)) {
		struct triple t;
		if (sscanf(line, " %" SCNu32 "/%" SCNu32 " %" SCNx64 " %" SCNx64, &t.pid, &t.tid,
			   &t.addr, &t.data_src) == 4)
			out[n++] = t;
	}
	return pclose(p) == 0 ? n : -1;
}

static void reads_the_real_recording_like_perf_script(void **state)
{
	struct real *r = calloc(1, sizeof(*r));
	struct triple *want = calloc(256, sizeof(*want));
	struct perf_data_ops ops = {.on_sample = on_real, .ctx = r};
	struct perf_data_counts c;
	struct perf_data *d = NULL;
	char err[PERF_DATA_ERR_LEN];
	int nwant;
	(void)state;

	if (access(REAL_FILE, R_OK) != 0) {
		printf("skipped: %s is absent\n", REAL_FILE);
		free(r), free(want);
		skip();
		return;
	}
	assert_int_equal(perf_data_open(REAL_FILE, &d, err, sizeof(err)), 0);
	assert_int_equal(perf_data_nr_attrs(d), 2);
	assert_int_equal(perf_data_attr(d, 0)->type, 4); /* PERF_TYPE_RAW */
	assert_int_equal(perf_data_attr(d, 0)->config, 0x1cd);
	assert_true(perf_data_attr(d, 0)->layout.sample_type & PERF_SAMPLE_WEIGHT_STRUCT);
	assert_true(perf_data_attr(d, 0)->sample_id_all);
	assert_int_equal(perf_data_read(d, &ops, &c, err, sizeof(err)), 0);
	perf_data_close(d);
	assert_int_equal(c.samples, 14); /* README: 14 samples */
	assert_int_equal(r->n, 14);
	for (int i = 0; i < r->n; i++)
		assert_int_equal(r->attr_type[i], 4); /* all from the PEBS event, none dummy */

	nwant = perf_script_triples(want, 256);
	if (nwant < 0) {
		printf("skipped the perf script comparison: perf script failed or is absent\n");
		free(r), free(want);
		skip();
		return;
	}
	assert_int_equal(nwant, r->n);
	qsort(want, (size_t)nwant, sizeof(*want), triple_cmp);
	qsort(r->t, (size_t)r->n, sizeof(*want), triple_cmp);
	for (int i = 0; i < nwant; i++) {
		assert_int_equal(r->t[i].pid, want[i].pid);
		assert_int_equal(r->t[i].tid, want[i].tid);
		assert_int_equal(r->t[i].addr, want[i].addr);
		assert_int_equal(r->t[i].data_src, want[i].data_src);
	}
	free(r), free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_samples_with_every_attr_size_perf_has_written),
	    cmocka_unit_test(tells_events_apart_by_sample_id),
	    cmocka_unit_test(reads_a_file_written_in_the_other_byte_order),
	    cmocka_unit_test(rejects_corrupt_headers_naming_the_offset),
	    cmocka_unit_test(rejects_corrupt_records_naming_their_offset),
	    cmocka_unit_test(delivers_what_precedes_a_corrupt_record),
	    cmocka_unit_test(fails_cleanly_at_every_truncation),
	    cmocka_unit_test(reads_the_real_recording_like_perf_script),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
