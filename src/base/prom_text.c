/* prom_text: see prom_text.h.
 *
 * Each line is parsed in place in the copy: a name is NUL-terminated once the parser has
 * moved past the byte that ended it, and a label value is unescaped over itself (the text
 * only shrinks), so a sample's strings cost nothing beyond the copy. */
#include "base/prom_text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The line s[0..len), NUL at s[len], and the parser's place in it. */
struct cursor {
	char *s;
	size_t i, len;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static void skip_blanks(struct cursor *c)
{
	while (c->i < c->len && is_blank(c->s[c->i]))
		c->i++;
}

static bool eat(struct cursor *c, char ch)
{
	if (c->i >= c->len || c->s[c->i] != ch)
		return false;
	c->i++;
	return true;
}

static bool name_char(char ch, bool first, bool colon)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
	    (colon && ch == ':'))
		return true;
	return !first && ch >= '0' && ch <= '9';
}

/* A metric name (colon) or label name at the cursor, moved past; its end is returned in
 * *end, not yet terminated. NULL when there is none. */
static char *scan_name(struct cursor *c, bool colon, size_t *end)
{
	size_t start = c->i;

	while (c->i < c->len && name_char(c->s[c->i], c->i == start, colon))
		c->i++;
	*end = c->i;
	return c->i > start ? c->s + start : NULL;
}

/* The label value after its opening quote, unescaped over itself and terminated. */
static int unescape_value(struct cursor *c, const char **out)
{
	char *start = c->s + c->i, *w = start;

	while (c->i < c->len) {
		char ch = c->s[c->i++];

		if (ch == '"') {
			*w = '\0'; /* at or before the closing quote, already read */
			*out = start;
			return 0;
		}
		if (ch == '\\') {
			ch = c->i < c->len ? c->s[c->i++] : '\0';
			if (ch == 'n')
				ch = '\n';
			else if (ch != '\\' && ch != '"')
				return -EINVAL;
		}
		*w++ = ch;
	}
	return -EINVAL; /* no closing quote */
}

static bool has_label(const struct prom_sample *s, const char *name)
{
	return prom_sample_label(s, name) != NULL;
}

/* name="value" after the cursor; the value goes in out's next label. */
static int parse_label(struct cursor *c, struct prom_sample *out)
{
	size_t end;
	char *name = scan_name(c, false, &end);
	const char *value;

	if (!name || out->nr_labels == PROM_TEXT_MAX_LABELS)
		return -EINVAL;
	skip_blanks(c);
	if (!eat(c, '='))
		return -EINVAL;
	c->s[end] = '\0'; /* the '=' or a blank before it, both read */
	skip_blanks(c);
	if (!eat(c, '"') || unescape_value(c, &value) < 0 || has_label(out, name))
		return -EINVAL;
	out->label[out->nr_labels++] = (struct prom_label){.name = name, .value = value};
	return 0;
}

/* The labels after '{', through '}': name="value" pairs separated by commas, one trailing
 * comma allowed. */
static int parse_labels(struct cursor *c, struct prom_sample *out)
{
	for (;;) {
		skip_blanks(c);
		if (eat(c, '}'))
			return 0;
		if (parse_label(c, out) < 0)
			return -EINVAL;
		skip_blanks(c);
		if (eat(c, '}'))
			return 0;
		if (!eat(c, ','))
			return -EINVAL;
	}
}

/* The blank-delimited token at the cursor, terminated; the cursor moves past its end. */
static char *take_token(struct cursor *c)
{
	size_t start = c->i;

	while (c->i < c->len && !is_blank(c->s[c->i]))
		c->i++;
	if (c->i == start)
		return NULL;
	if (c->i < c->len)
		c->s[c->i++] = '\0'; /* a blank, now read */
	return c->s + start;
}

/* The value, then an optional integer timestamp, then nothing but blanks. */
static int parse_value(struct cursor *c, struct prom_sample *out)
{
	char *tok = take_token(c), *end;

	if (!tok)
		return -EINVAL;
	out->value = strtod(tok, &end);
	if (*end != '\0')
		return -EINVAL;
	skip_blanks(c);
	tok = take_token(c);
	if (tok) { /* a timestamp in milliseconds: read, not kept */
		(void)strtoll(tok, &end, 10);
		if (*end != '\0' || end == tok)
			return -EINVAL;
		skip_blanks(c);
	}
	return c->i == c->len ? 0 : -EINVAL;
}

static int parse_sample(struct cursor *c, struct prom_sample *out)
{
	size_t end;
	char *name = scan_name(c, true, &end);

	if (!name)
		return -EINVAL;
	*out = (struct prom_sample){.name = name};
	skip_blanks(c);
	if (eat(c, '{') && parse_labels(c, out) < 0)
		return -EINVAL;
	if (end == c->i) /* the name must end at a '{' or a blank */
		return -EINVAL;
	skip_blanks(c);
	c->s[end] = '\0'; /* the '{' or a blank, read */
	return parse_value(c, out);
}

static int add_sample(struct prom_text *t, const struct prom_sample *s, size_t *cap,
		      size_t max_samples)
{
	if (t->nr == max_samples) {
		t->dropped++;
		return 0;
	}
	if (t->nr == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct prom_sample *grown;

		if (n > max_samples)
			n = max_samples;
		grown = realloc(t->sample, n * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		t->sample = grown;
		*cap = n;
	}
	t->sample[t->nr++] = *s;
	return 0;
}

/* One line, s[0..len) with s[len] writable. */
static int parse_line(struct prom_text *t, char *s, size_t len, size_t *cap, size_t max_samples)
{
	struct cursor c = {.s = s, .len = len};
	struct prom_sample sample;

	if (len > PROM_TEXT_LINE_MAX || memchr(s, '\0', len)) {
		t->malformed++;
		return 0;
	}
	s[len] = '\0';
	skip_blanks(&c);
	if (c.i == len || s[c.i] == '#')
		return 0;
	if (parse_sample(&c, &sample) < 0) {
		t->malformed++;
		return 0;
	}
	return add_sample(t, &sample, cap, max_samples);
}

int prom_text_parse(const char *text, size_t len, size_t max_samples, struct prom_text *out)
{
	struct prom_text t = {.buf = malloc(len + 1)};
	size_t cap = 0, pos = 0;
	int r = 0;

	if (!t.buf)
		return -ENOMEM;
	memcpy(t.buf, text, len);
	t.buf[len] = '\0';
	while (r == 0 && pos < len) {
		char *nl = memchr(t.buf + pos, '\n', len - pos);
		size_t line_len = nl ? (size_t)(nl - (t.buf + pos)) : len - pos;

		r = parse_line(&t, t.buf + pos, line_len, &cap, max_samples);
		pos += line_len + 1;
	}
	if (r < 0) {
		prom_text_free(&t);
		return r;
	}
	*out = t;
	return 0;
}

void prom_text_free(struct prom_text *t)
{
	free(t->sample);
	free(t->buf);
	*t = (struct prom_text){0};
}

const char *prom_sample_label(const struct prom_sample *s, const char *name)
{
	for (int i = 0; i < s->nr_labels; i++)
		if (strcmp(s->label[i].name, name) == 0)
			return s->label[i].value;
	return NULL;
}
