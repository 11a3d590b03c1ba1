/* Tests of the exposition-format parser: the good samples of a hostile file are read with
 * their labels unescaped, each malformed line is skipped and counted once, and the sample cap
 * holds. tests/fixtures/stats/hostile.prom has one malformed line per way to be wrong. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/fileio.h"
#include "base/prom_text.h"

static void read_fixture(const char *name, char **text, size_t *len)
{
	char path[512];
	const char *dir = getenv("PGHOTD_FIXTURES");

	snprintf(path, sizeof(path), "%s/stats/%s", dir ? dir : "tests/fixtures", name);
	assert_int_equal(file_read_alloc(path, 1 << 20, text, len), 0);
}

static void parse_fixture(const char *name, struct prom_text *t)
{
	char *text;
	size_t len;

	read_fixture(name, &text, &len);
	assert_int_equal(prom_text_parse(text, len, 1000, t), 0);
	free(text);
}

static const struct prom_sample *find(const struct prom_text *t, const char *name)
{
	for (size_t i = 0; i < t->nr; i++)
		if (strcmp(t->sample[i].name, name) == 0)
			return &t->sample[i];
	return NULL;
}

static void hostile_file_keeps_good_samples_and_counts_each_bad_line(void **state)
{
	static const char *const good[] = {
	    "good_total",  "good_labels",	"good_trailing_comma",
	    "good_blanks", "good_empty_labels", "good_escapes",
	    "good_inf",	   "good_nan",		"good_colon:name",
	    "good_bytes",  "good_last",
	};
	struct prom_text t;
	(void)state;

	parse_fixture("hostile.prom", &t);
	assert_int_equal(t.nr, sizeof(good) / sizeof(good[0]));
	for (size_t i = 0; i < t.nr; i++)
		assert_string_equal(t.sample[i].name, good[i]);
	assert_int_equal(t.malformed, 19);
	assert_int_equal(t.dropped, 0);
	prom_text_free(&t);
}

static void labels_and_values_read_as_the_format_says(void **state)
{
	const struct prom_sample *s;
	struct prom_text t;
	(void)state;

	parse_fixture("hostile.prom", &t);
	s = find(&t, "good_labels");
	assert_int_equal(s->nr_labels, 2);
	assert_string_equal(prom_sample_label(s, "a"), "x");
	assert_string_equal(prom_sample_label(s, "b"), "y");
	assert_null(prom_sample_label(s, "c"));
	assert_true(s->value == 2.0);
	s = find(&t, "good_blanks"); /* blanks around everything, and a timestamp */
	assert_string_equal(prom_sample_label(s, "b"), "y");
	assert_true(s->value == 4.0);
	assert_int_equal(find(&t, "good_empty_labels")->nr_labels, 0);
	s = find(&t, "good_escapes");
	assert_string_equal(prom_sample_label(s, "cgroup"), "/a\\b\"c\nd");
	assert_true(isinf(find(&t, "good_inf")->value) && find(&t, "good_inf")->value > 0);
	assert_true(isnan(find(&t, "good_nan")->value));
	/* Bytes the format does not escape (ESC, DEL, 0xff) come through as they are: the
	 * renderer, not the parser, makes them safe to print. */
	s = find(&t, "good_bytes");
	assert_string_equal(prom_sample_label(s, "cgroup"), "/sys\x1b[2Jtem\x7f\xff");
	assert_true(find(&t, "good_last")->value == 10.0); /* no final newline */
	prom_text_free(&t);
}

static void samples_past_the_cap_are_dropped_and_counted(void **state)
{
	const char text[] = "a 1\nb 2\nc 3\nd{x=\"1\"} 4\n";
	struct prom_text t;
	(void)state;

	assert_int_equal(prom_text_parse(text, sizeof(text) - 1, 2, &t), 0);
	assert_int_equal(t.nr, 2);
	assert_int_equal(t.dropped, 2);
	assert_string_equal(t.sample[1].name, "b");
	prom_text_free(&t);
}

static void empty_text_parses_to_no_sample(void **state)
{
	struct prom_text t;
	(void)state;

	assert_int_equal(prom_text_parse("", 0, 10, &t), 0);
	assert_int_equal(t.nr, 0);
	assert_int_equal(t.malformed, 0);
	prom_text_free(&t);
}

/* The text is copied: the caller's buffer is not edited by the in-place parsing. */
static void the_callers_text_is_left_as_it_was(void **state)
{
	char text[] = "m{a=\"x\\\\y\"} 1\n";
	struct prom_text t;
	(void)state;

	assert_int_equal(prom_text_parse(text, strlen(text), 10, &t), 0);
	assert_string_equal(text, "m{a=\"x\\\\y\"} 1\n");
	assert_string_equal(prom_sample_label(&t.sample[0], "a"), "x\\y");
	prom_text_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(hostile_file_keeps_good_samples_and_counts_each_bad_line),
	    cmocka_unit_test(labels_and_values_read_as_the_format_says),
	    cmocka_unit_test(samples_past_the_cap_are_dropped_and_counted),
	    cmocka_unit_test(empty_text_parses_to_no_sample),
	    cmocka_unit_test(the_callers_text_is_left_as_it_was),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
