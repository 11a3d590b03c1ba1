/* config_text: what libconfig gets from the configuration's bytes, and the map back to
 * file:line, with the files served from memory. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/config_text.h"

struct fake_file {
	const char *path, *text;
};

struct fake {
	const struct fake_file *files;
	int reads;
	char errors[1024];
};

static int fake_read(void *ctx, const char *path, size_t max, char **out, size_t *len)
{
	struct fake *f = ctx;

	f->reads++;
	for (const struct fake_file *ff = f->files; ff && ff->path; ff++) {
		if (strcmp(ff->path, path) != 0)
			continue;
		if (strlen(ff->text) > max)
			return -EFBIG;
		*out = strdup(ff->text);
		*len = strlen(ff->text);
		return *out ? 0 : -ENOMEM;
	}
	return -ENOENT;
}

static void fake_error(void *ctx, const char *file, int line, const char *msg)
{
	struct fake *f = ctx;
	size_t used = strlen(f->errors);

	snprintf(f->errors + used, sizeof(f->errors) - used, "%s:%d: %s\n", file, line, msg);
}

static int build(struct fake *f, const char *name, const char *text, size_t len, size_t max,
		 struct config_text *out)
{
	struct config_text_ops ops = {.read = fake_read, .error = fake_error, .ctx = f};

	return config_text_build(name, text, len, max, &ops, out);
}

static void where_is(const struct config_text *t, int line, const char *file, int want)
{
	const char *got_file;
	int got;

	config_text_where(t, line, &got_file, &got);
	assert_non_null(got_file);
	assert_string_equal(got_file, file);
	assert_int_equal(got, want);
}

static void every_integer_gets_its_l_and_nothing_else_changes(void **state)
{
	static const char in[] = "a = 1; b = -2147483649; c = 0x10; d = 5L; e = 1.5e3;\n"
				 "s = \"7 \\\" 8\"; # 9\n/* 10\n 11 */ n-1 = 2LL; f = .5;\n";
	static const char want[] = "a = 1L; b = -2147483649L; c = 0x10L; d = 5L; e = 1.5e3;\n"
				   "s = \"7 \\\" 8\"; # 9\n/* 10\n 11 */ n-1 = 2LL; f = .5;\n";
	struct fake f = {0};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "t.conf", in, sizeof(in) - 1, 4096, &t), 0);
	assert_string_equal(t.text, want);
	assert_string_equal(f.errors, "");
	where_is(&t, 4, "t.conf", 4);
	config_text_free(&t);
}

static void numbers_beyond_64_bits_are_each_reported(void **state)
{
	static const char in[] = "a = 9223372036854775807;\nb = 9223372036854775808;\n"
				 "c = -9223372036854775808; d = 0x8000000000000000;\n";
	struct fake f = {0};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "t.conf", in, sizeof(in) - 1, 4096, &t), -EBADMSG);
	assert_string_equal(
	    f.errors, "t.conf:2: 9223372036854775808 does not fit in 64 bits; allowed integers "
		      "in -9223372036854775808..9223372036854775807\n"
		      "t.conf:3: 0x8000000000000000 does not fit in 64 bits; allowed integers "
		      "in -9223372036854775808..9223372036854775807\n");
	config_text_free(&t);
}

static void a_nul_byte_stops_with_its_line(void **state)
{
	static const char in[] = "a = 1;\n\"x\ny\0\"\n";
	struct fake f = {0};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "t.conf", in, sizeof(in) - 1, 4096, &t), -EBADMSG);
	assert_non_null(strstr(f.errors, "t.conf:3: a NUL byte"));
	config_text_free(&t);
}

/* The included text takes the place of the @include; every line maps back to its file, the
 * rest of the @include line to the includer's line. */
static void includes_are_inlined_and_every_line_maps_back(void **state)
{
	static const struct fake_file files[] = {
	    {"/etc/p/d/a.conf", "x = 1;\n@include \"b.conf\"\ny = 2;"},
	    {"/etc/p/d/b.conf", "z = 3;\n"},
	    {NULL, NULL},
	};
	static const char in[] =
	    "g = {\n  @include \"d/a.conf\" };\n# \n"
	    "/*\n@include \"no.conf\"\n*/ s = \"\n@include \\\"no.conf\\\"\";\n";
	struct fake f = {.files = files};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "/etc/p/top.conf", in, sizeof(in) - 1, 4096, &t), 0);
	assert_string_equal(t.text, "g = {\n  x = 1L;\nz = 3L;\n\ny = 2L;\n };\n# \n/*\n@include "
				    "\"no.conf\"\n*/ s = \"\n@include \\\"no.conf\\\"\";\n");
	assert_int_equal(f.reads, 2);
	where_is(&t, 1, "/etc/p/top.conf", 1);
	where_is(&t, 2, "/etc/p/d/a.conf", 1);
	where_is(&t, 3, "/etc/p/d/b.conf", 1);
	where_is(&t, 4, "/etc/p/d/a.conf", 2); /* the rest of a.conf's @include line */
	where_is(&t, 5, "/etc/p/d/a.conf", 3);
	where_is(&t, 6, "/etc/p/top.conf", 2);
	where_is(&t, 9, "/etc/p/top.conf", 5);
	config_text_free(&t);
}

static void a_failed_include_names_the_file_and_the_path_tried(void **state)
{
	static const char in[] = "a = 1;\n@include \"missing.conf\"\n";
	struct fake f = {0};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "/etc/p/top.conf", in, sizeof(in) - 1, 4096, &t), -EBADMSG);
	assert_string_equal(f.errors, "/etc/p/top.conf:2: @include \"missing.conf\": cannot read "
				      "/etc/p/missing.conf: No such file or directory\n");
	config_text_free(&t);
}

static void includes_stop_at_the_depth_limit_and_the_size_bound(void **state)
{
	static const struct fake_file loop[] = {{"self.conf", "@include \"self.conf\"\n"},
						{NULL, NULL}};
	static const struct fake_file big[] = {{"big.conf", "a = 1; b = 2; c = 3;\n"},
					       {NULL, NULL}};
	static const char in[] = "@include \"self.conf\"\n", in2[] = "@include \"big.conf\"\n";
	struct fake f = {.files = loop}, g = {.files = big};
	struct config_text t;
	(void)state;

	assert_int_equal(build(&f, "self.conf", in, sizeof(in) - 1, 4096, &t), -EBADMSG);
	assert_int_equal(f.reads, CONFIG_TEXT_MAX_DEPTH - 1);
	assert_non_null(strstr(f.errors, "nested deeper than 10 files"));
	config_text_free(&t);
	assert_int_equal(build(&g, "top.conf", in2, sizeof(in2) - 1, sizeof(in2) + 5, &t),
			 -EBADMSG);
	assert_non_null(strstr(g.errors, "cannot read big.conf: File too large"));
	config_text_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_integer_gets_its_l_and_nothing_else_changes),
	    cmocka_unit_test(numbers_beyond_64_bits_are_each_reported),
	    cmocka_unit_test(a_nul_byte_stops_with_its_line),
	    cmocka_unit_test(includes_are_inlined_and_every_line_maps_back),
	    cmocka_unit_test(a_failed_include_names_the_file_and_the_path_tried),
	    cmocka_unit_test(includes_stop_at_the_depth_limit_and_the_size_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
