/* config_text: NUL check, 64-bit integers and @include before libconfig; see config_text.h.
 *
 * One pass per file copies its bytes to the result and changes only three things: an
 * integer gets an L (one outside 64 bits is reported), an
 * @include line becomes the included file's text. The lexer knows libconfig 1.5's tokens
 * only as far as it must to find integers and @include where libconfig would: strings (with
 * backslash escapes), # and // comments to the end of the line, block comments, and names,
 * whose digits are not numbers. Each newline passed moves the result's line, and a span is
 * opened wherever the result's lines start coming from another file or place. */
#include "base/config_text.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct builder {
	const struct config_text_ops *ops;
	struct config_text *t;
	size_t cap;
	int out_line;  /* line of the result being written, 1-based */
	size_t budget; /* bytes of input still allowed */
	int status;
	bool unparsable; /* a number beyond 64 bits: libconfig would read a wrong value */
};

/* The worse of two outcomes: -ENOMEM, then -EBADMSG, then 0. */
static int worse(int a, int b)
{
	return a == -ENOMEM || b == -ENOMEM ? -ENOMEM : a ? a : b;
}

static bool stopped(const struct builder *b)
{
	return b->status == -EBADMSG || b->status == -ENOMEM;
}

__attribute__((format(printf, 5, 6))) static void report(struct builder *b, const char *file,
							 int line, int status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->ops->error)
		b->ops->error(b->ops->ctx, file, line, msg);
	b->status = worse(b->status, status);
}

static void emit(struct builder *b, const char *s, size_t n)
{
	struct config_text *t = b->t;

	if (b->status == -ENOMEM)
		return;
	if (t->len + n + 1 > b->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *p = realloc(t->text, cap);

		if (!p) {
			b->status = -ENOMEM;
			return;
		}
		t->text = p;
		b->cap = cap;
	}
	memcpy(t->text + t->len, s, n);
	t->len += n;
	t->text[t->len] = '\0';
}

/* From the result's current line on, lines come from file at line. */
static void mark(struct builder *b, const char *file, int line)
{
	struct config_text *t = b->t;
	struct config_text_span *s;

	if (t->nspan > 0 && t->span[t->nspan - 1].first == b->out_line) {
		t->nspan--; /* nothing came from the previous span */
	} else if (t->nspan % 16 == 0) {
		s = realloc(t->span, (size_t)(t->nspan + 16) * sizeof(*s));
		if (!s) {
			b->status = -ENOMEM;
			return;
		}
		t->span = s;
	}
	t->span[t->nspan++] = (struct config_text_span){b->out_line, line, file};
}

/* Keeps a copy of name for the spans; NULL when out of memory. */
static const char *keep_name(struct builder *b, const char *name, size_t len)
{
	struct config_text *t = b->t;
	char **files = realloc(t->files, (size_t)(t->nfiles + 1) * sizeof(*files));
	char *copy = files ? strndup(name, len) : NULL;

	if (files)
		t->files = files;
	if (!copy) {
		b->status = -ENOMEM;
		return NULL;
	}
	t->files[t->nfiles++] = copy;
	return copy;
}

static bool nul_free(struct builder *b, const char *file, const char *bytes, size_t len)
{
	const char *nul = memchr(bytes, '\0', len);
	int line = 1;

	if (!nul)
		return true;
	for (const char *p = bytes; p < nul; p++)
		line += *p == '\n';
	report(b, file, line, -EBADMSG,
	       "a NUL byte; allowed text only (libconfig would ignore "
	       "the rest of the file)");
	return false;
}

struct lexer {
	const char *file;
	const char *p, *end;
	const char *copied; /* bytes before it are in the result */
	int line;
	int depth;
};

static void flush_to(struct builder *b, struct lexer *lx, const char *to)
{
	emit(b, lx->copied, (size_t)(to - lx->copied));
	lx->copied = to;
}

/* Reads digits of base from lx->p into *v; *over when the value passes limit. */
static void digits(struct lexer *lx, int base, uint64_t limit, uint64_t *v, bool *over)
{
	for (; lx->p < lx->end && isxdigit((unsigned char)*lx->p); lx->p++) {
		int d = isdigit((unsigned char)*lx->p) ? *lx->p - '0'
						       : tolower((unsigned char)*lx->p) - 'a' + 10;

		if (d >= base)
			break;
		if (*v > (limit - (uint64_t)d) / (uint64_t)base)
			*over = true;
		else
			*v = *v * (uint64_t)base + (uint64_t)d;
	}
}

static bool at(const struct lexer *lx, size_t off, char c)
{
	return lx->p + off < lx->end && lx->p[off] == c;
}

/* The rest of a float: digits, '.', an exponent and its sign. */
static void float_tail(struct lexer *lx)
{
	while (lx->p < lx->end &&
	       (isdigit((unsigned char)*lx->p) || strchr(".eE", *lx->p) ||
		((*lx->p == '-' || *lx->p == '+') && (lx->p[-1] == 'e' || lx->p[-1] == 'E'))))
		lx->p++;
}

/* A number at lx->p: an integer gets its L (every one, so that an array mixing small and
 * large values stays of one type for libconfig); one beyond 64 bits is refused. */
static void number(struct builder *b, struct lexer *lx)
{
	const char *start = lx->p;
	bool neg = *lx->p == '-', sign = neg || *lx->p == '+', over = false, hex;
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	lx->p += sign;
	hex = !sign && at(lx, 0, '0') && (at(lx, 1, 'x') || at(lx, 1, 'X')) &&
	      lx->p + 2 < lx->end && isxdigit((unsigned char)lx->p[2]);
	lx->p += hex ? 2 : 0;
	digits(lx, hex ? 16 : 10, limit, &v, &over);
	if (!hex && (at(lx, 0, '.') || at(lx, 0, 'e') || at(lx, 0, 'E'))) {
		float_tail(lx);
		return;
	}
	if (over) {
		/* Reported, and the lexing goes on to report every such number. */
		report(b, lx->file, lx->line, 0,
		       "%.*s does not fit in 64 bits; allowed integers in "
		       "-9223372036854775808..9223372036854775807",
		       (int)(lx->p - start), start);
		b->unparsable = true;
	} else if (!at(lx, 0, 'L')) {
		flush_to(b, lx, lx->p);
		emit(b, "L", 1);
	}
	while (at(lx, 0, 'L'))
		lx->p++;
}

static void expand(struct builder *b, const char *file, const char *bytes, size_t len, int depth);

/* DIR/name for a relative name in file DIR/FILE; name itself when absolute or file has no
 * directory. */
static const char *resolve(struct builder *b, const char *file, const char *name, size_t len)
{
	const char *slash = strrchr(file, '/');
	char *path;
	const char *kept;

	if (name[0] == '/' || !slash)
		return keep_name(b, name, len);
	if (asprintf(&path, "%.*s%.*s", (int)(slash - file + 1), file, (int)len, name) < 0) {
		b->status = -ENOMEM;
		return NULL;
	}
	kept = keep_name(b, path, strlen(path));
	free(path);
	return kept;
}

static void include(struct builder *b, struct lexer *lx, const char *name, size_t nlen)
{
	const char *path;
	char *buf = NULL;
	size_t blen = 0;
	int r;

	if (lx->depth + 1 >= CONFIG_TEXT_MAX_DEPTH) {
		report(b, lx->file, lx->line, -EBADMSG,
		       "@include \"%.*s\": nested deeper than %d files", (int)nlen, name,
		       CONFIG_TEXT_MAX_DEPTH);
		return;
	}
	path = resolve(b, lx->file, name, nlen);
	if (!path)
		return;
	r = b->ops->read(b->ops->ctx, path, b->budget, &buf, &blen);
	if (r < 0) {
		report(b, lx->file, lx->line, -EBADMSG, "@include \"%.*s\": cannot read %s: %s",
		       (int)nlen, name, path,
		       b->ops->strerror ? b->ops->strerror(r) : strerror(-r));
		return;
	}
	b->budget -= blen;
	expand(b, path, buf, blen, lx->depth + 1);
	if (blen == 0 || buf[blen - 1] != '\n') {
		emit(b, "\n", 1);
		b->out_line++;
	}
	free(buf);
	mark(b, lx->file, lx->line); /* the rest of the @include line */
}

/* At an @ that starts a line: `@include "name"` is replaced, anything else left to libconfig. */
static void at_sign(struct builder *b, struct lexer *lx)
{
	const char *q = lx->p + 8, *name, *close;

	if (lx->end - lx->p < 9 || memcmp(lx->p, "@include", 8) != 0 || (*q != ' ' && *q != '\t')) {
		lx->p++;
		return;
	}
	while (q < lx->end && (*q == ' ' || *q == '\t'))
		q++;
	if (q >= lx->end || *q != '"') {
		lx->p++;
		return;
	}
	name = q + 1;
	close = name;
	while (close < lx->end && !strchr("\"\\\n", *close))
		close++;
	if (close >= lx->end || *close != '"') {
		report(b, lx->file, lx->line, -EBADMSG,
		       "@include: allowed a file name in double quotes, on one line, without "
		       "backslashes");
		lx->p = close;
		return;
	}
	flush_to(b, lx, lx->p);
	include(b, lx, name, (size_t)(close - name));
	lx->p = lx->copied = close + 1;
}

enum lex_state { LX_CODE, LX_LINE_COMMENT, LX_BLOCK_COMMENT, LX_STRING };

/* Inside a comment or string: moves past one character (or an escape). */
static enum lex_state skip_quoted(struct lexer *lx, enum lex_state st)
{
	char c = *lx->p;

	if (st == LX_BLOCK_COMMENT && c == '*' && at(lx, 1, '/')) {
		lx->p += 2;
		return LX_CODE;
	}
	if (st == LX_STRING && c == '\\' && lx->p + 1 < lx->end && lx->p[1] != '\n') {
		lx->p += 2;
		return st;
	}
	lx->p++;
	return st == LX_STRING && c == '"' ? LX_CODE : st;
}

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '*';
}

/* In code: one token or character. Returns the state after it. */
static enum lex_state code(struct builder *b, struct lexer *lx, bool fresh)
{
	char c = *lx->p;

	if (c == '#' || (c == '/' && at(lx, 1, '/')))
		return LX_LINE_COMMENT;
	if (c == '/' && at(lx, 1, '*')) {
		lx->p += 2;
		return LX_BLOCK_COMMENT;
	}
	if (c == '"') {
		lx->p++;
		return LX_STRING;
	}
	if (c == '@' && fresh) {
		at_sign(b, lx);
	} else if (isalpha((unsigned char)c) || c == '*') {
		while (lx->p < lx->end && name_char(*lx->p))
			lx->p++;
	} else if (isdigit((unsigned char)c) || ((c == '-' || c == '+') && lx->p + 1 < lx->end &&
						 isdigit((unsigned char)lx->p[1]))) {
		number(b, lx);
	} else if (c == '.' || ((c == '-' || c == '+') && at(lx, 1, '.'))) {
		lx->p++;
		float_tail(lx); /* .5, -.5: digits after a point are no integer */
	} else {
		lx->p++;
	}
	return LX_CODE;
}

static void expand(struct builder *b, const char *file, const char *bytes, size_t len, int depth)
{
	struct lexer lx = {file, bytes, bytes + len, bytes, 1, depth};
	enum lex_state st = LX_CODE;
	bool fresh = true; /* only blanks since the line began: where @include may stand */

	if (!nul_free(b, file, bytes, len))
		return;
	mark(b, file, 1);
	while (lx.p < lx.end && !stopped(b)) {
		char c = *lx.p;

		if (c == '\n') {
			lx.line++;
			b->out_line++;
			fresh = true;
			st = st == LX_LINE_COMMENT ? LX_CODE : st;
			lx.p++;
		} else if (st != LX_CODE) {
			st = skip_quoted(&lx, st);
			fresh = false;
		} else if (c == ' ' || c == '\t' || c == '\r') {
			lx.p++;
		} else {
			st = code(b, &lx, fresh);
			fresh = false;
		}
	}
	if (!stopped(b))
		flush_to(b, &lx, lx.end);
}

int config_text_build(const char *name, const char *bytes, size_t len, size_t max,
		      const struct config_text_ops *ops, struct config_text *out)
{
	struct builder b = {.ops = ops, .t = out, .out_line = 1};
	const char *top;

	memset(out, 0, sizeof(*out));
	b.budget = len > max ? 0 : max - len;
	top = keep_name(&b, name, strlen(name));
	emit(&b, "", 0);
	if (top)
		expand(&b, top, bytes, len, 0);
	if (b.unparsable)
		b.status = worse(b.status, -EBADMSG);
	if (b.status == -ENOMEM)
		config_text_free(out);
	return b.status;
}

void config_text_where(const struct config_text *t, int line, const char **file, int *out_line)
{
	*file = NULL;
	*out_line = 0;
	for (int i = t->nspan - 1; i >= 0 && line > 0; i--) {
		if (t->span[i].first <= line) {
			*file = t->span[i].file;
			*out_line = t->span[i].line + (line - t->span[i].first);
			return;
		}
	}
}

void config_text_free(struct config_text *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nfiles; i++)
		free(t->files[i]);
	free(t->files);
	free(t->span);
	free(t->text);
	memset(t, 0, sizeof(*t));
}
