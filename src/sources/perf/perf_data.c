/* perf_data: perf.data reader. Every offset and size read from the file is checked against
 * the buffer before use (by subtraction, so no sum can wrap), so a corrupt file can only
 * produce an error naming where it went wrong.
 *
 * Opening reads the metadata in an order that lets each piece find what it refers to: the
 * header, the attrs section, the HEADER_ATTR records of the stream (pipe mode, or a file perf
 * inject made from one), then the feature sections, the records that name events or carry
 * features, and the event types section. The first pass over the stream stops quietly at a
 * record it cannot frame: perf_data_read() reports that with its offset. */
#include "base/fileio.h"
#include "sources/perf/perf_data.h"

#include <byteswap.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#define MAGIC2		 UINT64_C(0x32454c4946524550) /* "PERFILE2" read as a little-endian u64 */
#define HEADER_MIN	 72u			      /* magic, size, attr_size, 3 sections */
#define HEADER_FEATS	 104u			      /* ... and the 256-bit feature bitmap */
#define FEAT_BITS	 256u
#define PIPE_HEADER_SIZE 16u
#define ATTR_VER0	 64u
#define IDS_SECTION	 16u
#define ATTR_SIZE_MAX	 4096u
#define ATTRS_MAX	 65536u
#define PMUS_MAX	 4096u
#define SAMPLE_ID_ALL	 18  /* bit of the attr flags word */
#define EVENT_TYPE_SIZE	 72u /* struct perf_trace_event_type: u64 id, char name[64] */
#define DBUF_SIZE	 (4u * 65536u)

/* Records perf itself writes (tools/lib/perf/include/perf/event.h). */
enum {
	REC_LOST_SAMPLES = 13,
	REC_HEADER_ATTR = 64,
	REC_HEADER_EVENT_TYPE = 65,
	REC_HEADER_TRACING_DATA = 66,
	REC_AUXTRACE = 71,
	REC_EVENT_UPDATE = 78,
	REC_HEADER_FEATURE = 80,
	REC_COMPRESSED = 81,
	REC_COMPRESSED2 = 83,
};

/* Feature bits of the header bitmap (tools/perf/util/header.h). */
enum {
	FEAT_NRCPUS = 7,
	FEAT_CPUID = 9,
	FEAT_EVENT_DESC = 12,
	FEAT_PMU_MAPPINGS = 16,
};

#define EVENT_UPDATE_NAME 2

/* Where each attr field sits, and so how large an attr must be to hold it. */
#define ATTR_OFF_TYPE	     0
#define ATTR_OFF_SIZE	     4
#define ATTR_OFF_CONFIG	     8
#define ATTR_OFF_SAMPLE_TYPE 24
#define ATTR_OFF_READ_FORMAT 32
#define ATTR_OFF_FLAGS	     40
#define ATTR_OFF_BRANCH_TYPE 72
#define ATTR_OFF_REGS_USER   80
#define ATTR_OFF_REGS_INTR   96

struct id_entry {
	uint64_t id;
	uint32_t attr;
};

struct pmu_entry {
	uint32_t type;
	char name[PERF_DATA_PMU_MAX];
};

struct perf_data {
	const uint8_t *buf;
	size_t len;
	bool sw;
	void *map; /* perf_data_open()'s mapping, NULL for a caller's buffer */
	size_t map_len;
	struct perf_data_env env;
	uint64_t hdr_size, data_off, data_size;
	bool has_feats;
	size_t nr_attrs;
	struct perf_data_attr **attrs; /* one allocation each: callers keep the pointers */
	size_t nr_ids, ids_cap;
	struct id_entry *ids;
	int id_pos; /* -1: the attrs lay samples out alike and carry no common ID */
	size_t nr_pmus;
	struct pmu_entry *pmus;
	ZSTD_DCtx *zd;
	uint8_t *dbuf; /* decompressed records not yet read (one may be incomplete) */
	size_t dlen;
	uint64_t last_compressed; /* file offset of the last compressed record */
};

/* Where a record sits: in the file, or inside the decompressed data of the compressed record
 * at file offset `at`. */
struct where {
	uint64_t at;
	bool inner;
	uint64_t inner_pos;
};

static int vfail(char *err, size_t err_len, int code, const struct where *w, const char *fmt,
		 va_list ap)
{
	int n;

	if (!err || err_len == 0)
		return code;
	if (w->inner)
		n = snprintf(err, err_len,
			     "offset %" PRIu64 ": at byte %" PRIu64 " of its decompressed data: ",
			     w->at, w->inner_pos);
	else
		n = snprintf(err, err_len, "offset %" PRIu64 ": ", w->at);
	if (n >= 0 && (size_t)n < err_len)
		vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
	return code;
}

__attribute__((format(printf, 5, 6))) static int fail(char *err, size_t err_len, int code,
						      uint64_t off, const char *fmt, ...)
{
	struct where w = {.at = off};
	va_list ap;

	va_start(ap, fmt);
	vfail(err, err_len, code, &w, fmt, ap);
	va_end(ap);
	return code;
}

__attribute__((format(printf, 5, 6))) static int
fail_at(char *err, size_t err_len, int code, const struct where *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(err, err_len, code, w, fmt, ap);
	va_end(ap);
	return code;
}

static uint64_t rd64(const struct perf_data *d, uint64_t off)
{
	return perf_rd64(d->buf + off, d->sw);
}

static uint32_t rd32(const struct perf_data *d, uint64_t off)
{
	return perf_rd32(d->buf + off, d->sw);
}

/* true when [off, off + size) lies inside the file. */
static bool in_file(const struct perf_data *d, uint64_t off, uint64_t size)
{
	return off <= d->len && size <= d->len - off;
}

static void header_at(const struct perf_data *d, const uint8_t *p, struct perf_event_header *h)
{
	memcpy(h, p, sizeof(*h));
	if (d->sw) {
		h->type = bswap_32(h->type);
		h->misc = bswap_16(h->misc);
		h->size = bswap_16(h->size);
	}
}

/* ---- the header ---- */

static bool v1_attr_size_ok(uint64_t v)
{
	return v >= ATTR_VER0 + IDS_SECTION && v <= ATTR_SIZE_MAX && v % 8 == 0;
}

/* Version 1 wrote no byte-order mark: the header size (pipe) or the attr size (file) is
 * read both ways and the order in which it makes sense wins. */
static int v1_byte_order(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t size, attr_size;

	memcpy(&size, d->buf + 8, 8);
	if (size == PIPE_HEADER_SIZE || bswap_64(size) == PIPE_HEADER_SIZE) {
		d->sw = size != PIPE_HEADER_SIZE;
		return 0;
	}
	if (d->len < HEADER_MIN)
		return 0; /* the header length check names the problem */
	memcpy(&attr_size, d->buf + 16, 8);
	if (v1_attr_size_ok(attr_size))
		d->sw = false;
	else if (v1_attr_size_ok(bswap_64(attr_size)))
		d->sw = true;
	else
		return fail(err, err_len, -EBADMSG, 16,
			    "version 1 perf.data with attr size %" PRIu64
			    " in either byte order: not a size perf wrote",
			    attr_size);
	return 0;
}

static int check_magic(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t magic;
	int r;

	if (d->len < 16)
		return fail(err, err_len, -EBADMSG, 0,
			    "file of %zu bytes is too short for a perf.data header", d->len);
	memcpy(&magic, d->buf, 8);
	if (memcmp(d->buf, "PERFFILE", 8) == 0) {
		d->env.version = 1;
		r = v1_byte_order(d, err, err_len);
		if (r < 0)
			return r;
	} else if (magic == MAGIC2 || magic == bswap_64(MAGIC2)) {
		d->env.version = 2;
		d->sw = magic != MAGIC2;
	} else {
		return fail(err, err_len, -EBADMSG, 0,
			    "not a perf.data file (no PERFILE2 or PERFFILE magic)");
	}
	d->env.swapped = d->sw;
	d->hdr_size = rd64(d, 8);
	d->env.pipe = d->hdr_size == PIPE_HEADER_SIZE;
	if (d->env.pipe)
		return 0;
	if (d->len < HEADER_MIN)
		return fail(err, err_len, -EBADMSG, d->len,
			    "file ends inside the perf.data header (%u bytes needed)", HEADER_MIN);
	if (d->hdr_size < HEADER_MIN)
		return fail(err, err_len, -EBADMSG, 8, "header size %" PRIu64 " is below %u",
			    d->hdr_size, HEADER_MIN);
	return 0;
}

static int check_section(const struct perf_data *d, uint64_t at, const char *what, char *err,
			 size_t err_len)
{
	uint64_t off = rd64(d, at), size = rd64(d, at + 8);

	if (!in_file(d, off, size))
		return fail(err, err_len, -EBADMSG, at,
			    "%s section at %" PRIu64 " of %" PRIu64
			    " bytes runs past the end of the file (%zu bytes; truncated?)",
			    what, off, size, d->len);
	return 0;
}

/* ---- attrs and their IDs ---- */

static uint64_t attr_field(const struct perf_data *d, uint64_t e, size_t held, unsigned off)
{
	return held >= off + 8 ? rd64(d, e + off) : 0;
}

/* One attr at file offset e, of which held bytes are in the file (held >= ATTR_VER0). */
static void attr_decode(const struct perf_data *d, uint64_t e, size_t held,
			struct perf_data_attr *a)
{
	uint32_t own = rd32(d, e + ATTR_OFF_SIZE);
	uint64_t flags = rd64(d, e + ATTR_OFF_FLAGS);

	if (own == 0)
		own = ATTR_VER0; /* the first ABI did not fill size */
	if (own < held)
		held = own;
	a->size = own;
	a->type = rd32(d, e + ATTR_OFF_TYPE);
	a->config = rd64(d, e + ATTR_OFF_CONFIG);
	/* A big-endian writer allocates bitfields from the top bit down. */
	a->sample_id_all = (flags >> (d->sw ? 63 - SAMPLE_ID_ALL : SAMPLE_ID_ALL)) & 1;
	a->layout = (struct perf_sample_layout){
	    .sample_type = rd64(d, e + ATTR_OFF_SAMPLE_TYPE),
	    .read_format = rd64(d, e + ATTR_OFF_READ_FORMAT),
	    .branch_sample_type = attr_field(d, e, held, ATTR_OFF_BRANCH_TYPE),
	    .sample_regs_user = attr_field(d, e, held, ATTR_OFF_REGS_USER),
	    .sample_regs_intr = attr_field(d, e, held, ATTR_OFF_REGS_INTR),
	    .swapped = d->sw,
	};
}

static int ids_reserve(struct perf_data *d, size_t more)
{
	size_t cap = d->ids_cap ? d->ids_cap : 16;
	struct id_entry *n;

	if (more > SIZE_MAX / 2 / sizeof(*n) - d->nr_ids)
		return -ENOMEM;
	if (d->nr_ids + more <= d->ids_cap)
		return 0;
	while (cap < d->nr_ids + more)
		cap *= 2;
	n = realloc(d->ids, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	d->ids = n;
	d->ids_cap = cap;
	return 0;
}

/* Adds the attr at file offset e (held bytes) with n IDs at file offset ids_off (checked). */
static int attr_add(struct perf_data *d, uint64_t e, size_t held, uint64_t ids_off, size_t n,
		    char *err, size_t err_len)
{
	struct perf_data_attr **na, *a;
	uint32_t idx = (uint32_t)d->nr_attrs;

	if (d->nr_attrs >= ATTRS_MAX)
		return fail(err, err_len, -EBADMSG, e, "more than %u events", ATTRS_MAX);
	na = realloc(d->attrs, (d->nr_attrs + 1) * sizeof(*na));
	if (!na)
		return fail(err, err_len, -ENOMEM, e, "out of memory for attrs");
	d->attrs = na;
	a = calloc(1, sizeof(*a));
	if (!a || ids_reserve(d, n) < 0) {
		free(a);
		return fail(err, err_len, -ENOMEM, e, "out of memory for %zu ids", n);
	}
	attr_decode(d, e, held, a);
	a->nr_ids = n;
	d->attrs[d->nr_attrs++] = a;
	for (size_t k = 0; k < n; k++)
		d->ids[d->nr_ids++] = (struct id_entry){rd64(d, ids_off + 8 * k), idx};
	return 0;
}

static int attrs_section_load(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t attr_size = rd64(d, 16), off = rd64(d, 24), size = rd64(d, 32), nr;

	if (attr_size < ATTR_VER0 + IDS_SECTION || attr_size > ATTR_SIZE_MAX)
		return fail(err, err_len, -EBADMSG, 16, "attr size %" PRIu64 " is outside %u..%u",
			    attr_size, ATTR_VER0 + IDS_SECTION, ATTR_SIZE_MAX);
	nr = size / attr_size;
	if ((size > 0 && nr == 0) || nr > ATTRS_MAX)
		return fail(err, err_len, -EBADMSG, 32,
			    "attrs section of %" PRIu64 " bytes holds %" PRIu64
			    " events of %" PRIu64 " bytes",
			    size, nr, attr_size);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t e = off + i * attr_size, sec = e + attr_size - IDS_SECTION;
		uint64_t ids = rd64(d, sec), ids_size = rd64(d, sec + 8);
		int r;

		if (ids_size % 8 || !in_file(d, ids, ids_size))
			return fail(err, err_len, -EBADMSG, sec,
				    "ids of event %" PRIu64 " at %" PRIu64 " (%" PRIu64
				    " bytes) do not fit the file (%zu bytes)",
				    i, ids, ids_size, d->len);
		r = attr_add(d, e, attr_size - IDS_SECTION, ids, ids_size / 8, err, err_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* PERF_RECORD_HEADER_ATTR: the attr (its own size field says how long), then its IDs. */
static int attr_record(struct perf_data *d, uint64_t pos, const struct perf_event_header *h,
		       char *err, size_t err_len)
{
	uint64_t body = pos + sizeof(*h);
	size_t len = h->size - sizeof(*h);
	uint32_t own;

	if (len < ATTR_VER0)
		return fail(err, err_len, -EBADMSG, pos,
			    "attr record of %u bytes is shorter than the first attr ABI", h->size);
	own = rd32(d, body + ATTR_OFF_SIZE);
	if (own == 0)
		own = ATTR_VER0;
	if (own < ATTR_VER0 || own > len)
		return fail(err, err_len, -EBADMSG, pos,
			    "attr record of %u bytes holds an attr of %u bytes", h->size, own);
	return attr_add(d, body, own, body + own, (len - own) / 8, err, err_len);
}

static int ids_cmp(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Linear: used while names are read, before the table is sorted for samples. */
static struct perf_data_attr *attr_by_id(const struct perf_data *d, uint64_t id)
{
	for (size_t i = 0; i < d->nr_ids; i++)
		if (d->ids[i].id == id)
			return d->attrs[d->ids[i].attr];
	return NULL;
}

static void name_set(struct perf_data_attr *a, const uint8_t *s, size_t max)
{
	size_t n = strnlen((const char *)s, max);

	if (!a || a->name[0])
		return; /* the first source that names an event wins */
	if (n >= sizeof(a->name))
		n = sizeof(a->name) - 1;
	memcpy(a->name, s, n);
	a->name[n] = 0;
}

/* ---- features ---- */

/* A perf_header_string at *p (u32 len, then len bytes, NUL-padded) inside [.., end). */
static int feat_str(const struct perf_data *d, uint64_t *p, uint64_t end, char *out, size_t out_len,
		    char *err, size_t err_len)
{
	uint32_t len;
	size_t n;

	if (end - *p < 4)
		return fail(err, err_len, -EBADMSG, *p,
			    "feature string length runs past its section");
	len = rd32(d, *p);
	if (len > end - *p - 4)
		return fail(err, err_len, -EBADMSG, *p,
			    "feature string of %" PRIu32 " bytes runs past its section", len);
	n = strnlen((const char *)d->buf + *p + 4, len);
	if (out) {
		if (n >= out_len)
			n = out_len - 1;
		memcpy(out, d->buf + *p + 4, n);
		out[n] = 0;
	}
	*p += 4 + (uint64_t)len;
	return 0;
}

static int feat_pmus(struct perf_data *d, uint64_t p, uint64_t end, char *err, size_t err_len)
{
	uint32_t nr;

	if (end - p < 4)
		return fail(err, err_len, -EBADMSG, p, "PMU mappings section too short");
	nr = rd32(d, p);
	p += 4;
	if (nr > PMUS_MAX || nr > (end - p) / 8)
		return fail(err, err_len, -EBADMSG, p - 4, "PMU mappings claim %" PRIu32 " PMUs",
			    nr);
	free(d->pmus);
	d->nr_pmus = 0;
	d->pmus = calloc(nr ? nr : 1, sizeof(*d->pmus));
	if (!d->pmus)
		return fail(err, err_len, -ENOMEM, p, "out of memory for %" PRIu32 " PMUs", nr);
	for (uint32_t i = 0; i < nr; i++) {
		struct pmu_entry *e = &d->pmus[d->nr_pmus];
		int r;

		if (end - p < 4)
			return fail(err, err_len, -EBADMSG, p, "PMU mapping %" PRIu32 " truncated",
				    i);
		e->type = rd32(d, p);
		p += 4;
		r = feat_str(d, &p, end, e->name, sizeof(e->name), err, err_len);
		if (r < 0)
			return r;
		d->nr_pmus++;
	}
	return 0;
}

/* One HEADER_EVENT_DESC entry: attr, u32 nr_ids, name, ids. Named by ID, else by position
 * (perf writes the entries in attr order). */
static int feat_event_one(struct perf_data *d, uint32_t idx, uint32_t attr_size, uint64_t *p,
			  uint64_t end, char *err, size_t err_len)
{
	char name[PERF_DATA_NAME_MAX];
	struct perf_data_attr *a = NULL;
	uint32_t nr_ids;
	int r;

	if (end - *p < (uint64_t)attr_size + 4)
		return fail(err, err_len, -EBADMSG, *p, "event description %" PRIu32 " truncated",
			    idx);
	nr_ids = rd32(d, *p + attr_size);
	*p += (uint64_t)attr_size + 4;
	r = feat_str(d, p, end, name, sizeof(name), err, err_len);
	if (r < 0)
		return r;
	if (nr_ids > (end - *p) / 8)
		return fail(err, err_len, -EBADMSG, *p,
			    "event description %" PRIu32 " claims %" PRIu32 " ids", idx, nr_ids);
	for (uint32_t k = 0; k < nr_ids && !a; k++)
		a = attr_by_id(d, rd64(d, *p + 8 * (uint64_t)k));
	if (!a && nr_ids == 0 && idx < d->nr_attrs)
		a = d->attrs[idx];
	name_set(a, (const uint8_t *)name, sizeof(name));
	*p += 8 * (uint64_t)nr_ids;
	return 0;
}

static int feat_event_desc(struct perf_data *d, uint64_t p, uint64_t end, char *err, size_t err_len)
{
	uint32_t nr, attr_size;

	if (end - p < 8)
		return fail(err, err_len, -EBADMSG, p, "event description section too short");
	nr = rd32(d, p);
	attr_size = rd32(d, p + 4);
	if (attr_size < ATTR_VER0 || attr_size > ATTR_SIZE_MAX)
		return fail(err, err_len, -EBADMSG, p + 4,
			    "event description attr size %" PRIu32 " is outside %u..%u", attr_size,
			    ATTR_VER0, ATTR_SIZE_MAX);
	p += 8;
	for (uint32_t i = 0; i < nr; i++) {
		int r = feat_event_one(d, i, attr_size, &p, end, err, err_len);

		if (r < 0)
			return r;
	}
	return 0;
}

/* The feature at [off, off + size) (inside the file). Features this reader has no use for
 * are skipped. */
static int feat_parse(struct perf_data *d, unsigned feat, uint64_t off, uint64_t size, char *err,
		      size_t err_len)
{
	uint64_t end = off + size, p = off;

	switch (feat) {
	case FEAT_NRCPUS:
		if (size < 8)
			return fail(err, err_len, -EBADMSG, off, "nrcpus section too short");
		d->env.nr_cpus_avail = rd32(d, off);
		d->env.nr_cpus_online = rd32(d, off + 4);
		return 0;
	case FEAT_CPUID:
		return feat_str(d, &p, end, d->env.cpuid, sizeof(d->env.cpuid), err, err_len);
	case FEAT_PMU_MAPPINGS:
		return feat_pmus(d, off, end, err, err_len);
	case FEAT_EVENT_DESC:
		return feat_event_desc(d, off, end, err, err_len);
	default:
		return 0;
	}
}

static bool feat_bit(const struct perf_data *d, unsigned bit)
{
	return (rd64(d, HEADER_MIN + 8 * (bit / 64)) >> (bit % 64)) & 1;
}

/* The table after the data section: one {offset, size} per bit set, in bit order. */
static int feats_load(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t table = d->data_off + d->data_size, nr = 0;

	if (!d->has_feats)
		return 0;
	for (unsigned b = 0; b < FEAT_BITS; b++)
		nr += feat_bit(d, b);
	if (!in_file(d, table, nr * 16))
		return fail(err, err_len, -EBADMSG, table,
			    "table of %" PRIu64 " feature sections runs past the end of the file",
			    nr);
	for (unsigned b = 0, i = 0; b < FEAT_BITS; b++) {
		uint64_t e = table + 16 * (uint64_t)i, off, size;
		int r;

		if (!feat_bit(d, b))
			continue;
		i++;
		off = rd64(d, e);
		size = rd64(d, e + 8);
		if (!in_file(d, off, size))
			return fail(err, err_len, -EBADMSG, e,
				    "feature %u at %" PRIu64 " of %" PRIu64
				    " bytes runs past the end of the file",
				    b, off, size);
		r = feat_parse(d, b, off, size, err, err_len);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Version 1's event types section: {u64 config, char name[64]} per event. */
static int event_types_load(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t off = rd64(d, 56), size = rd64(d, 64);
	int r = check_section(d, 56, "event types", err, err_len);

	if (r < 0)
		return r;
	for (uint64_t p = off; size - (p - off) >= EVENT_TYPE_SIZE; p += EVENT_TYPE_SIZE)
		for (size_t i = 0; i < d->nr_attrs; i++)
			if (d->attrs[i]->config == rd64(d, p))
				name_set(d->attrs[i], d->buf + p + 8, EVENT_TYPE_SIZE - 8);
	return 0;
}

/* ---- the first pass over the stream ---- */

/* Bytes that follow a record outside its size (AUXTRACE data, tracing data); -1 when the
 * record is too short to say. */
static int64_t record_extra(const struct perf_data *d, const uint8_t *body, size_t len,
			    uint32_t type)
{
	if (type == REC_AUXTRACE)
		return len < 8 ? -1 : (int64_t)(perf_rd64(body, d->sw) & INT64_MAX);
	if (type == REC_HEADER_TRACING_DATA)
		return len < 4 ? -1 : (int64_t)perf_rd32(body, d->sw);
	return 0;
}

/* The next top-level record at *pos: 1 (with *h, and *pos moved past it and its payload),
 * 0 at the end, or -EBADMSG with err naming *pos (left at the bad record). */
static int next_record(const struct perf_data *d, uint64_t *pos, struct perf_event_header *h,
		       char *err, size_t err_len)
{
	uint64_t end = d->data_off + d->data_size, left = end - *pos;
	int64_t extra;

	if (*pos >= end)
		return 0;
	if (left < sizeof(*h))
		return fail(err, err_len, -EBADMSG, *pos,
			    "data section ends inside a record header");
	header_at(d, d->buf + *pos, h);
	if (h->size < sizeof(*h) || h->size > left)
		return fail(err, err_len, -EBADMSG, *pos,
			    "record of type %u claims %u bytes; %" PRIu64
			    " are left in the data section",
			    h->type, h->size, left);
	extra = record_extra(d, d->buf + *pos + sizeof(*h), h->size - sizeof(*h), h->type);
	if (extra < 0 || (uint64_t)extra > left - h->size)
		return fail(err, err_len, -EBADMSG, *pos,
			    "record of type %u announces a payload that runs past the data section",
			    h->type);
	*pos += h->size + (uint64_t)extra;
	return 1;
}

static int meta_record(struct perf_data *d, uint64_t pos, const struct perf_event_header *h,
		       char *err, size_t err_len)
{
	uint64_t body = pos + sizeof(*h);
	size_t len = h->size - sizeof(*h);

	switch (h->type) {
	case REC_HEADER_EVENT_TYPE:
		if (len >= 8)
			for (size_t i = 0; i < d->nr_attrs; i++)
				if (d->attrs[i]->config == rd64(d, body))
					name_set(d->attrs[i], d->buf + body + 8, len - 8);
		return 0;
	case REC_EVENT_UPDATE:
		if (len >= 16 && rd64(d, body) == EVENT_UPDATE_NAME)
			name_set(attr_by_id(d, rd64(d, body + 8)), d->buf + body + 16, len - 16);
		return 0;
	case REC_HEADER_FEATURE:
		if (len < 8)
			return fail(err, err_len, -EBADMSG, pos, "feature record of %u bytes",
				    h->size);
		if (rd64(d, body) >= FEAT_BITS)
			return 0;
		return feat_parse(d, (unsigned)rd64(d, body), body + 8, len - 8, err, err_len);
	default:
		return 0;
	}
}

/* attrs: the attr records only (pass 1), else everything that names or describes. */
static int stream_scan(struct perf_data *d, bool attrs, char *err, size_t err_len)
{
	uint64_t pos = d->data_off, at = pos;
	struct perf_event_header h;
	int r;

	while ((r = next_record(d, &pos, &h, NULL, 0)) > 0) {
		if (attrs && h.type == REC_HEADER_ATTR)
			r = attr_record(d, at, &h, err, err_len);
		else if (!attrs)
			r = meta_record(d, at, &h, err, err_len);
		if (r < 0)
			return r;
		at = pos;
	}
	return 0; /* a framing error is perf_data_read()'s to report */
}

/* ---- opening ---- */

static int id_pos_choose(struct perf_data *d, char *err, size_t err_len)
{
	const struct perf_sample_layout *l0 = &d->attrs[0]->layout;
	bool alike = true;

	d->id_pos = perf_sample_id_pos(l0->sample_type);
	for (size_t i = 1; i < d->nr_attrs; i++) {
		const struct perf_sample_layout *l = &d->attrs[i]->layout;

		if (perf_sample_id_pos(l->sample_type) != d->id_pos)
			d->id_pos = -1;
		alike &= l->sample_type == l0->sample_type && l->read_format == l0->read_format &&
			 l->branch_sample_type == l0->branch_sample_type &&
			 l->sample_regs_user == l0->sample_regs_user &&
			 l->sample_regs_intr == l0->sample_regs_intr;
	}
	if (d->nr_attrs == 1 || d->id_pos >= 0 || alike)
		return 0;
	return fail(err, err_len, -EBADMSG, d->env.pipe ? PIPE_HEADER_SIZE : rd64(d, 24),
		    "%zu events whose samples carry no common ID position to tell them apart",
		    d->nr_attrs);
}

static void pmus_name_attrs(struct perf_data *d)
{
	for (size_t i = 0; i < d->nr_attrs; i++) {
		const char *n = perf_data_pmu_name(d, d->attrs[i]->type);

		if (n)
			snprintf(d->attrs[i]->pmu, sizeof(d->attrs[i]->pmu), "%s", n);
	}
}

static int file_header_load(struct perf_data *d, char *err, size_t err_len)
{
	int r = check_section(d, 24, "attrs", err, err_len);

	if (r == 0)
		r = check_section(d, 40, "data", err, err_len);
	if (r < 0)
		return r;
	d->data_off = rd64(d, 40);
	d->data_size = rd64(d, 48);
	d->has_feats = d->hdr_size >= HEADER_FEATS && d->len >= HEADER_FEATS;
	if (d->data_size == 0) {
		/* perf stopped before it rewrote the header: the data runs to the end and no
		 * feature table was written */
		d->data_size = d->len - d->data_off;
		d->has_feats = false;
	}
	return attrs_section_load(d, err, err_len);
}

static int open_parse(struct perf_data *d, char *err, size_t err_len)
{
	int r = check_magic(d, err, err_len);

	if (r < 0)
		return r;
	if (d->env.pipe) {
		d->data_off = PIPE_HEADER_SIZE;
		d->data_size = d->len - PIPE_HEADER_SIZE;
	} else {
		r = file_header_load(d, err, err_len);
		if (r < 0)
			return r;
	}
	r = stream_scan(d, true, err, err_len);
	if (r < 0)
		return r;
	if (d->nr_attrs == 0)
		return fail(err, err_len, -EBADMSG, d->env.pipe ? PIPE_HEADER_SIZE : 32,
			    "no events: neither an attrs section nor attr records");
	r = feats_load(d, err, err_len);
	if (r == 0)
		r = stream_scan(d, false, err, err_len);
	if (r == 0 && !d->env.pipe)
		r = event_types_load(d, err, err_len);
	if (r < 0)
		return r;
	if (d->nr_ids)
		qsort(d->ids, d->nr_ids, sizeof(*d->ids), ids_cmp);
	pmus_name_attrs(d);
	return id_pos_choose(d, err, err_len);
}

int perf_data_open_buffer(const void *buf, size_t len, struct perf_data **out, char *err,
			  size_t err_len)
{
	struct perf_data *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return fail(err, err_len, -ENOMEM, 0, "out of memory");
	d->buf = buf;
	d->len = len;
	r = open_parse(d, err, err_len);
	if (r < 0) {
		perf_data_close(d);
		return r;
	}
	*out = d;
	return 0;
}

int perf_data_open(const char *path, struct perf_data **out, char *err, size_t err_len)
{
	struct perf_data *d = NULL;
	struct stat st;
	void *map;
	int fd, r;

	/* A regular file only: a FIFO (or /dev/stdin on a pipe) would block, then map nothing. */
	fd = file_open_regular(path, 0);
	if (fd < 0)
		return fail(err, err_len, fd, 0, "cannot open %s: %s", path, file_strerror(fd));
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return fail(err, err_len, r, 0, "cannot stat %s: %s", path, strerror(-r));
	}
	if (st.st_size == 0) {
		close(fd);
		return fail(err, err_len, -EBADMSG, 0, "%s is empty", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	r = -errno;
	close(fd);
	if (map == MAP_FAILED)
		return fail(err, err_len, r, 0, "cannot map %s: %s", path, strerror(-r));
	r = perf_data_open_buffer(map, (size_t)st.st_size, &d, err, err_len);
	if (r < 0) {
		munmap(map, (size_t)st.st_size);
		return r;
	}
	d->map = map;
	d->map_len = (size_t)st.st_size;
	*out = d;
	return 0;
}

void perf_data_close(struct perf_data *d)
{
	if (!d)
		return;
	if (d->map)
		munmap(d->map, d->map_len);
	for (size_t i = 0; i < d->nr_attrs; i++)
		free(d->attrs[i]);
	free(d->attrs);
	free(d->ids);
	free(d->pmus);
	free(d->dbuf);
	ZSTD_freeDCtx(d->zd);
	free(d);
}

size_t perf_data_nr_attrs(const struct perf_data *d)
{
	return d->nr_attrs;
}

const struct perf_data_attr *perf_data_attr(const struct perf_data *d, size_t i)
{
	return i < d->nr_attrs ? d->attrs[i] : NULL;
}

const struct perf_data_env *perf_data_env(const struct perf_data *d)
{
	return &d->env;
}

const char *perf_data_pmu_name(const struct perf_data *d, uint32_t type)
{
	for (size_t i = 0; i < d->nr_pmus; i++)
		if (d->pmus[i].type == type)
			return d->pmus[i].name;
	return NULL;
}

/* ---- reading the records ---- */

struct reader {
	struct perf_data *d;
	const struct perf_data_ops *ops;
	struct perf_data_counts c;
	char *err;
	size_t err_len;
};

/* The attr a sample belongs to; NULL when its ID is unknown. len >= what id_pos needs. */
static const struct perf_data_attr *attr_of_sample(const struct perf_data *d, const uint8_t *body)
{
	struct id_entry key, *hit;

	if (d->nr_attrs == 1 || d->id_pos < 0)
		return d->attrs[0];
	if (d->nr_ids == 0)
		return NULL;
	key.id = perf_rd64(body + 8 * (size_t)d->id_pos, d->sw);
	hit = bsearch(&key, d->ids, d->nr_ids, sizeof(*d->ids), ids_cmp);
	return hit ? d->attrs[hit->attr] : NULL;
}

static int read_sample(struct reader *rd, const struct where *w, const struct perf_event_header *h,
		       const uint8_t *body)
{
	struct perf_data *d = rd->d;
	size_t len = h->size - sizeof(*h);
	const struct perf_data_attr *a;
	struct perf_sample s;

	if (d->nr_attrs > 1 && d->id_pos >= 0 && len < 8 * ((size_t)d->id_pos + 1))
		return fail_at(rd->err, rd->err_len, -EBADMSG, w,
			       "sample of %u bytes too short to hold its ID", h->size);
	a = attr_of_sample(d, body);
	if (!a) {
		rd->c.unmatched++;
		return 0;
	}
	if (perf_sample_parse(&a->layout, body, len, &s) < 0)
		return fail_at(rd->err, rd->err_len, -EBADMSG, w,
			       "sample of %u bytes is shorter than its sample_type 0x%" PRIx64
			       " needs, or holds an impossible length",
			       h->size, a->layout.sample_type);
	rd->c.samples++;
	if (rd->ops && rd->ops->on_sample)
		rd->ops->on_sample(rd->ops->ctx, a, h, &s);
	return 0;
}

static int read_record(struct reader *rd, const struct where *w, const struct perf_event_header *h,
		       const uint8_t *body);

/* Hands every whole record of dbuf to read_record and keeps the incomplete tail. */
static int drain_decompressed(struct reader *rd, struct where *w)
{
	struct perf_data *d = rd->d;
	size_t p = 0;
	int r = 0;

	while (d->dlen - p >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;

		header_at(d, d->dbuf + p, &h);
		if (h.size < sizeof(h)) {
			r = fail_at(rd->err, rd->err_len, -EBADMSG, w,
				    "record of type %u claims %u bytes", h.type, h.size);
			break;
		}
		if (h.size > d->dlen - p)
			break; /* its end is in the next compressed record */
		r = read_record(rd, w, &h, d->dbuf + p + sizeof(h));
		if (r < 0)
			break;
		p += h.size;
		w->inner_pos += h.size;
	}
	memmove(d->dbuf, d->dbuf + p, d->dlen - p);
	d->dlen -= p;
	return r;
}

/* The compressed bytes of a COMPRESSED (all of the body) or COMPRESSED2 (u64 data_size,
 * then the data, then padding to 8) record. */
static int compressed_payload(struct reader *rd, const struct where *w,
			      const struct perf_event_header *h, const uint8_t *body,
			      ZSTD_inBuffer *in)
{
	size_t len = h->size - sizeof(*h);
	uint64_t n;

	*in = (ZSTD_inBuffer){body, len, 0};
	if (h->type == REC_COMPRESSED)
		return 0;
	if (len < 8)
		return fail_at(rd->err, rd->err_len, -EBADMSG, w,
			       "compressed record of %u bytes has no data size", h->size);
	n = perf_rd64(body, rd->d->sw);
	if (n > len - 8)
		return fail_at(rd->err, rd->err_len, -EBADMSG, w,
			       "compressed record of %u bytes claims %" PRIu64 " bytes of data",
			       h->size, n);
	*in = (ZSTD_inBuffer){body + 8, (size_t)n, 0};
	return 0;
}

static int read_compressed(struct reader *rd, const struct where *rec,
			   const struct perf_event_header *h, const uint8_t *body)
{
	struct perf_data *d = rd->d;
	struct where w = {.at = rec->at, .inner = true};
	ZSTD_inBuffer in;
	int r;

	if (rec->inner)
		return fail_at(rd->err, rd->err_len, -EBADMSG, rec,
			       "compressed record inside compressed data");
	r = compressed_payload(rd, rec, h, body, &in);
	if (r < 0)
		return r;
	if (!d->zd)
		d->zd = ZSTD_createDCtx();
	if (!d->dbuf)
		d->dbuf = malloc(DBUF_SIZE);
	if (!d->zd || !d->dbuf)
		return fail_at(rd->err, rd->err_len, -ENOMEM, rec, "out of memory for zstd");
	d->last_compressed = rec->at;
	while (in.pos < in.size) {
		/* the kept tail is under 64 KiB, so there is always room for output */
		ZSTD_outBuffer out = {d->dbuf + d->dlen, DBUF_SIZE - d->dlen, 0};
		size_t before = in.pos, z = ZSTD_decompressStream(d->zd, &out, &in);

		if (ZSTD_isError(z))
			return fail_at(rd->err, rd->err_len, -EBADMSG, rec,
				       "zstd cannot decompress the record: %s",
				       ZSTD_getErrorName(z));
		d->dlen += out.pos;
		r = drain_decompressed(rd, &w);
		if (r < 0)
			return r;
		if (out.pos == 0 && in.pos == before)
			break; /* no progress: never loop on a stream zstd will not advance */
	}
	return 0;
}

static int read_record(struct reader *rd, const struct where *w, const struct perf_event_header *h,
		       const uint8_t *body)
{
	size_t len = h->size - sizeof(*h);
	bool swapped = rd->d->sw;

	rd->c.records++;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return read_sample(rd, w, h, body);
	case REC_COMPRESSED:
	case REC_COMPRESSED2:
		return read_compressed(rd, w, h, body);
	case PERF_RECORD_LOST:
	case REC_LOST_SAMPLES:
		if (len < (h->type == PERF_RECORD_LOST ? 16u : 8u))
			return fail_at(rd->err, rd->err_len, -EBADMSG, w,
				       "lost record of %u bytes too short", h->size);
		rd->c.lost += perf_rd64(body + (h->type == PERF_RECORD_LOST ? 8 : 0), swapped);
		break;
	case PERF_RECORD_THROTTLE:
		rd->c.throttles++;
		break;
	default:
		break;
	}
	if (rd->ops && rd->ops->on_record)
		rd->ops->on_record(rd->ops->ctx, h, body, len);
	return 0;
}

int perf_data_read(struct perf_data *d, const struct perf_data_ops *ops,
		   struct perf_data_counts *counts, char *err, size_t err_len)
{
	struct reader rd = {.d = d, .ops = ops, .err = err, .err_len = err_len};
	uint64_t pos = d->data_off;
	struct perf_event_header h;
	int r;

	d->dlen = 0;
	ZSTD_freeDCtx(d->zd); /* a second walk starts a fresh stream */
	d->zd = NULL;
	for (;;) {
		struct where w = {.at = pos};

		r = next_record(d, &pos, &h, err, err_len);
		if (r <= 0)
			break;
		r = read_record(&rd, &w, &h, d->buf + w.at + sizeof(h));
		if (r < 0)
			break;
	}
	if (r == 0 && d->dlen > 0)
		r = fail(err, err_len, -EBADMSG, d->last_compressed,
			 "compressed data ends inside a record (%zu bytes left over)", d->dlen);
	if (counts)
		*counts = rd.c;
	return r;
}

/* ---- HEADER_CPUID ---- */

int perf_data_cpuid_parse(const char *cpuid, struct perf_data_cpu *out)
{
	struct perf_data_cpu c = {0};
	const char *sep = strpbrk(cpuid, ",-");
	unsigned long v[3];
	const char *p;
	char *end;
	size_t n;

	if (!sep || sep == cpuid || (size_t)(sep - cpuid) >= sizeof(c.vendor))
		return -EINVAL;
	n = (size_t)(sep - cpuid);
	memcpy(c.vendor, cpuid, n);
	p = sep;
	for (int i = 0; i < 3; i++) {
		if (*p != *sep)
			return -EINVAL;
		p++;
		/* the comma form is decimal; the dash form has hex model and stepping */
		errno = 0;
		v[i] = strtoul(p, &end, *sep == ',' || i == 0 ? 10 : 16);
		if (end == p || errno || v[i] > 0xFFFF)
			return -EINVAL;
		p = end;
	}
	if (*p && *p != ',' && *p != '-' && *p != '$')
		return -EINVAL;
	c.family = (unsigned)v[0];
	c.model = (unsigned)v[1];
	c.stepping = (unsigned)v[2];
	*out = c;
	return 0;
}
