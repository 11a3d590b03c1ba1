/* perf_data: perf.data reader. Every offset and size read from the file is checked against
 * the buffer before use (sections by subtraction so no sum can wrap), so a corrupt file can
 * only produce an error naming where it went wrong. */
#include "perf_data.h"

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

#define MAGIC2		  UINT64_C(0x32454c4946524550) /* "PERFILE2" read as a little-endian u64 */
#define HEADER_MIN	  72u			       /* magic, size, attr_size, 3 sections */
#define PIPE_HEADER_SIZE  16u
#define ATTR_VER0	  64u
#define IDS_SECTION	  16u
#define ATTR_SIZE_MAX	  4096u
#define ATTRS_MAX	  65536u
#define SAMPLE_ID_ALL	  18 /* bit of the attr flags word */
#define RECORD_COMPRESSED 81

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

struct perf_data {
	const uint8_t *buf;
	size_t len;
	bool sw;
	void *map; /* perf_data_open()'s mapping, NULL for a caller's buffer */
	size_t map_len;
	uint64_t data_off, data_size;
	size_t nr_attrs;
	struct perf_data_attr *attrs;
	size_t nr_ids;
	struct id_entry *ids;
	int id_pos;
};

__attribute__((format(printf, 5, 6))) static int fail(char *err, size_t err_len, int code,
						      uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || err_len == 0)
		return code;
	n = snprintf(err, err_len, "offset %" PRIu64 ": ", off);
	if (n >= 0 && (size_t)n < err_len) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

static uint64_t rd64(const struct perf_data *d, uint64_t off)
{
	return perf_rd64(d->buf + off, d->sw);
}

/* true when [off, off + size) lies inside the file. */
static bool in_file(const struct perf_data *d, uint64_t off, uint64_t size)
{
	return off <= d->len && size <= d->len - off;
}

static int check_magic(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t magic;

	if (d->len < 16)
		return fail(err, err_len, -EBADMSG, 0,
			    "file of %zu bytes is too short for a perf.data header", d->len);
	if (memcmp(d->buf, "PERFFILE", 8) == 0)
		return fail(err, err_len, -EPROTONOSUPPORT, 0,
			    "version 1 perf.data (PERFFILE) is not supported");
	memcpy(&magic, d->buf, 8);
	if (magic == bswap_64(MAGIC2))
		d->sw = true;
	else if (magic != MAGIC2)
		return fail(err, err_len, -EBADMSG, 0, "not a perf.data file (no PERFILE2 magic)");
	if (rd64(d, 8) == PIPE_HEADER_SIZE)
		return fail(err, err_len, -EPROTONOSUPPORT, 8,
			    "pipe-mode perf.data is not supported; record to a file (perf record "
			    "-o FILE)");
	if (d->len < HEADER_MIN)
		return fail(err, err_len, -EBADMSG, d->len,
			    "file ends inside the perf.data header (%u bytes needed)", HEADER_MIN);
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

static uint64_t attr_field(const struct perf_data *d, uint64_t e, size_t held, unsigned off)
{
	return held >= off + 8 ? rd64(d, e + off) : 0;
}

/* One attr entry at file offset e. held: the attr bytes the entry holds. */
static void attr_decode(const struct perf_data *d, uint64_t e, size_t held,
			struct perf_data_attr *a)
{
	uint32_t own = perf_rd32(d->buf + e + ATTR_OFF_SIZE, d->sw);
	uint64_t flags = rd64(d, e + ATTR_OFF_FLAGS);

	if (own == 0)
		own = ATTR_VER0; /* the first ABI did not fill size */
	if (own < held)
		held = own;
	a->type = perf_rd32(d->buf + e + ATTR_OFF_TYPE, d->sw);
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

static int ids_cmp(const void *a, const void *b)
{
	const struct id_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The IDs of every attr, sorted for lookup. */
static int ids_load(struct perf_data *d, uint64_t attrs_off, uint64_t attr_size, char *err,
		    size_t err_len)
{
	size_t total = 0;

	for (size_t i = 0; i < d->nr_attrs; i++) {
		uint64_t sec = attrs_off + i * attr_size + attr_size - IDS_SECTION;
		uint64_t off = rd64(d, sec), size = rd64(d, sec + 8);

		if (size % 8 || !in_file(d, off, size))
			return fail(err, err_len, -EBADMSG, sec,
				    "ids of event %zu at %" PRIu64 " (%" PRIu64
				    " bytes) do not fit the file (%zu bytes)",
				    i, off, size, d->len);
		d->attrs[i].nr_ids = size / 8;
		total += size / 8;
	}
	d->ids = calloc(total ? total : 1, sizeof(*d->ids));
	if (!d->ids)
		return fail(err, err_len, -ENOMEM, attrs_off, "out of memory for %zu ids", total);
	for (size_t i = 0; i < d->nr_attrs; i++) {
		uint64_t off = rd64(d, attrs_off + i * attr_size + attr_size - IDS_SECTION);

		for (size_t k = 0; k < d->attrs[i].nr_ids; k++)
			d->ids[d->nr_ids++] = (struct id_entry){rd64(d, off + 8 * k), (uint32_t)i};
	}
	qsort(d->ids, d->nr_ids, sizeof(*d->ids), ids_cmp);
	return 0;
}

static int attrs_load(struct perf_data *d, char *err, size_t err_len)
{
	uint64_t attr_size = rd64(d, 16), off = rd64(d, 24), size = rd64(d, 32);

	if (attr_size < ATTR_VER0 + IDS_SECTION || attr_size > ATTR_SIZE_MAX)
		return fail(err, err_len, -EBADMSG, 16, "attr size %" PRIu64 " is outside %u..%u",
			    attr_size, ATTR_VER0 + IDS_SECTION, ATTR_SIZE_MAX);
	d->nr_attrs = size / attr_size;
	if (d->nr_attrs == 0 || d->nr_attrs > ATTRS_MAX)
		return fail(err, err_len, -EBADMSG, 32,
			    "attrs section of %" PRIu64 " bytes holds %zu events of %" PRIu64
			    " bytes",
			    size, d->nr_attrs, attr_size);
	d->attrs = calloc(d->nr_attrs, sizeof(*d->attrs));
	if (!d->attrs)
		return fail(err, err_len, -ENOMEM, off, "out of memory for %zu attrs", d->nr_attrs);
	for (size_t i = 0; i < d->nr_attrs; i++)
		attr_decode(d, off + i * attr_size, attr_size - IDS_SECTION, &d->attrs[i]);
	return ids_load(d, off, attr_size, err, err_len);
}

static int id_pos_choose(struct perf_data *d, char *err, size_t err_len)
{
	d->id_pos = perf_sample_id_pos(d->attrs[0].layout.sample_type);
	if (d->nr_attrs == 1)
		return 0;
	for (size_t i = 1; i < d->nr_attrs; i++)
		if (perf_sample_id_pos(d->attrs[i].layout.sample_type) != d->id_pos)
			d->id_pos = -1;
	if (d->id_pos < 0)
		return fail(err, err_len, -EBADMSG, rd64(d, 24),
			    "%zu events whose samples carry no common ID position to tell them "
			    "apart",
			    d->nr_attrs);
	return 0;
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
	r = check_magic(d, err, err_len);
	if (r < 0)
		goto fail;
	r = check_section(d, 24, "attrs", err, err_len);
	if (r < 0)
		goto fail;
	r = check_section(d, 40, "data", err, err_len);
	if (r < 0)
		goto fail;
	d->data_off = rd64(d, 40);
	d->data_size = rd64(d, 48);
	r = attrs_load(d, err, err_len);
	if (r < 0)
		goto fail;
	r = id_pos_choose(d, err, err_len);
	if (r < 0)
		goto fail;
	*out = d;
	return 0;
fail:
	perf_data_close(d);
	return r;
}

int perf_data_open(const char *path, struct perf_data **out, char *err, size_t err_len)
{
	struct perf_data *d = NULL;
	struct stat st;
	void *map;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, err_len, -errno, 0, "cannot open %s: %s", path, strerror(errno));
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
	free(d->attrs);
	free(d->ids);
	free(d);
}

size_t perf_data_nr_attrs(const struct perf_data *d)
{
	return d->nr_attrs;
}

const struct perf_data_attr *perf_data_attr(const struct perf_data *d, size_t i)
{
	return i < d->nr_attrs ? &d->attrs[i] : NULL;
}

/* The attr a sample belongs to; NULL when its ID is unknown. len >= what id_pos needs. */
static const struct perf_data_attr *attr_of_sample(const struct perf_data *d, const uint8_t *body)
{
	struct id_entry key, *hit;

	if (d->nr_attrs == 1)
		return &d->attrs[0];
	key.id = perf_rd64(body + 8 * (size_t)d->id_pos, d->sw);
	hit = bsearch(&key, d->ids, d->nr_ids, sizeof(*d->ids), ids_cmp);
	return hit ? &d->attrs[hit->attr] : NULL;
}

static int read_sample(struct perf_data *d, const struct perf_data_ops *ops,
		       struct perf_data_counts *c, uint64_t pos, const struct perf_event_header *h,
		       char *err, size_t err_len)
{
	const uint8_t *body = d->buf + pos + sizeof(*h);
	size_t len = h->size - sizeof(*h);
	const struct perf_data_attr *a;
	struct perf_sample s;

	if (d->nr_attrs > 1 && len < 8 * ((size_t)d->id_pos + 1))
		return fail(err, err_len, -EBADMSG, pos,
			    "sample of %u bytes too short to hold its ID", h->size);
	a = attr_of_sample(d, body);
	if (!a) {
		c->unmatched++;
		return 0;
	}
	if (perf_sample_parse(&a->layout, body, len, &s) < 0)
		return fail(err, err_len, -EBADMSG, pos,
			    "sample of %u bytes is shorter than its sample_type 0x%" PRIx64
			    " needs, or holds an impossible length",
			    h->size, a->layout.sample_type);
	c->samples++;
	if (ops && ops->on_sample)
		ops->on_sample(ops->ctx, a, h, &s);
	return 0;
}

static int read_other(struct perf_data *d, const struct perf_data_ops *ops,
		      struct perf_data_counts *c, uint64_t pos, const struct perf_event_header *h,
		      char *err, size_t err_len)
{
	const uint8_t *body = d->buf + pos + sizeof(*h);
	size_t len = h->size - sizeof(*h);

	switch (h->type) {
	case PERF_RECORD_LOST:
	case 13: /* PERF_RECORD_LOST_SAMPLES */
		if (len < (h->type == PERF_RECORD_LOST ? 16u : 8u))
			return fail(err, err_len, -EBADMSG, pos,
				    "lost record of %u bytes too short", h->size);
		c->lost += perf_rd64(body + (h->type == PERF_RECORD_LOST ? 8 : 0), d->sw);
		break;
	case PERF_RECORD_THROTTLE:
		c->throttles++;
		break;
	case RECORD_COMPRESSED:
		return fail(err, err_len, -EPROTONOSUPPORT, pos,
			    "compressed records (perf record -z) are not supported; "
			    "decompress with perf inject");
	default:
		break;
	}
	if (ops && ops->on_record)
		ops->on_record(ops->ctx, h, body, len);
	return 0;
}

static void header_at(const struct perf_data *d, uint64_t pos, struct perf_event_header *h)
{
	memcpy(h, d->buf + pos, sizeof(*h));
	if (d->sw) {
		h->type = bswap_32(h->type);
		h->misc = bswap_16(h->misc);
		h->size = bswap_16(h->size);
	}
}

int perf_data_read(struct perf_data *d, const struct perf_data_ops *ops,
		   struct perf_data_counts *counts, char *err, size_t err_len)
{
	struct perf_data_counts c = {0};
	uint64_t pos = d->data_off, end = d->data_off + d->data_size; /* checked at open */
	int r = 0;

	while (pos < end) {
		struct perf_event_header h;

		if (end - pos < sizeof(h)) {
			r = fail(err, err_len, -EBADMSG, pos,
				 "data section ends inside a record header");
			break;
		}
		header_at(d, pos, &h);
		if (h.size < sizeof(h) || h.size > end - pos) {
			r = fail(err, err_len, -EBADMSG, pos,
				 "record of type %u claims %u bytes; %" PRIu64
				 " are left in the data section",
				 h.type, h.size, end - pos);
			break;
		}
		c.records++;
		if (h.type == PERF_RECORD_SAMPLE)
			r = read_sample(d, ops, &c, pos, &h, err, err_len);
		else
			r = read_other(d, ops, &c, pos, &h, err, err_len);
		if (r < 0)
			break;
		pos += h.size;
	}
	if (counts)
		*counts = c;
	return r;
}
