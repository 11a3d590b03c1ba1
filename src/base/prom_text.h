/* prom_text: a parser of the Prometheus text exposition format 0.0.4, for reading a stats
 * file back (pghotd --status). Pure: it takes the text, never a path.
 *
 * Bounded whatever the text holds: a copy of the text plus at most max_samples samples, each
 * with at most PROM_TEXT_MAX_LABELS labels; a line longer than PROM_TEXT_LINE_MAX bytes is
 * not read. A line that is not the format (a bad name, an unterminated or wrongly escaped
 * label value, a duplicate label, a value that is not a number, a NUL byte, trailing
 * garbage) is skipped and counted; comments (# HELP, # TYPE, any other #) and blank lines
 * are skipped and not counted. Label values are unescaped as the format says (\\, \" and \n;
 * any other escape makes the line malformed), so a value may hold any byte but NUL.
 * Any thread; one object per caller. */
#ifndef PGHOTD_PROM_TEXT_H
#define PGHOTD_PROM_TEXT_H

#include <stddef.h>

/* The most labels a sample may have; pghotd's have at most two. */
#define PROM_TEXT_MAX_LABELS 8
/* A longer line is malformed: room for a cgroup path of 4096 bytes, every byte escaped. */
#define PROM_TEXT_LINE_MAX 16384

struct prom_label {
	const char *name;
	const char *value; /* unescaped, NUL-terminated */
};

struct prom_sample {
	const char *name;
	struct prom_label label[PROM_TEXT_MAX_LABELS];
	int nr_labels;
	double value; /* +-Inf and NaN as the text says */
};

struct prom_text {
	char *buf; /* the copy every name and value points into */
	struct prom_sample *sample;
	size_t nr;
	size_t malformed; /* lines skipped as not the format */
	size_t dropped;	  /* well-formed samples past max_samples */
};

/* Parses len bytes of text into *out (free with prom_text_free()). 0, or -ENOMEM with *out
 * untouched. */
int prom_text_parse(const char *text, size_t len, size_t max_samples, struct prom_text *out);
void prom_text_free(struct prom_text *t);
/* The value of label `name` of s, or NULL when s has none. */
const char *prom_sample_label(const struct prom_sample *s, const char *name);

#endif
