/* config_text: the configuration's bytes made into the text libconfig 1.5 parses, and the map
 * back to where each line came from.
 *
 * libconfig 1.5 gets three things wrong that pghotd must not: it stops at a NUL byte as if
 * the file ended there; it keeps an integer written without an L suffix in 32 bits
 * (4294967298 reads as 2, 99999999999999999999 as -1); and it opens @include'd files itself
 * (blocking on a FIFO, resolving a relative path against the working directory, naming no
 * file when one is missing). So before libconfig sees the text, one lexer pass over each file
 * (strings and comments skipped as libconfig skips them):
 *  - refuses a NUL byte, naming its file and line;
 *  - gives every integer its L suffix, so libconfig keeps all 64 bits and the range checks
 *    see the value as written (every one, not only the large: libconfig refuses an array
 *    mixing 32- and 64-bit integers); one outside 64 bits is refused here;
 *  - replaces each `@include "file"` line by the file's own text, read through ops (a
 *    relative name resolves against the including file's directory, at most
 *    CONFIG_TEXT_MAX_DEPTH deep, a failure names the file).
 * The result holds no @include; config_text_where() maps its lines back to file:line.
 * Pure but for ops->read. Any thread. */
#ifndef PGHOTD_CONFIG_TEXT_H
#define PGHOTD_CONFIG_TEXT_H

#include <stddef.h>

#define CONFIG_TEXT_MAX_DEPTH 10 /* as libconfig's own include limit */

struct config_text_ops {
	/* Reads the file at path whole (at most max bytes, -EFBIG beyond) into a new buffer,
	 * NUL-terminated after *len bytes. 0 or -errno. */
	int (*read)(void *ctx, const char *path, size_t max, char **out, size_t *len);
	/* What a negative errno from read() means, for messages (NULL: strerror). */
	const char *(*strerror)(int r);
	/* Each problem found, at file:line; msg is one line without the position. */
	void (*error)(void *ctx, const char *file, int line, const char *msg);
	void *ctx;
};

struct config_text_span {
	int first;	  /* first line of the result (1-based) taken from file */
	int line;	  /* file's line at that point */
	const char *file; /* owned by the config_text */
};

struct config_text {
	char *text; /* NUL-terminated, no @include left */
	size_t len;
	struct config_text_span *span;
	int nspan;
	char **files;
	int nfiles;
};

/* Builds out from the top file's len bytes (name: how messages call it). Returns 0, or
 * -EBADMSG when problems were reported through ops->error (a NUL byte, an integer beyond 64
 * bits, an include that failed): out->text must not be parsed then; or -ENOMEM. out is
 * filled (and must be freed) unless -ENOMEM. max bounds the bytes of all files together. */
int config_text_build(const char *name, const char *bytes, size_t len, size_t max,
		      const struct config_text_ops *ops, struct config_text *out);
/* The file and line of line `line` of t->text. *file NULL and *out_line 0 when unknown. */
void config_text_where(const struct config_text *t, int line, const char **file, int *out_line);
void config_text_free(struct config_text *t);

#endif
