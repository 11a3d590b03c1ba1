/* Command-line parsing and the STATUS= line. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/notify.h"
#include "daemon/options.h"

#define ARGV(...)	 ((char *[]){"pghotd", __VA_ARGS__, NULL})
#define ARGC(...)	 ((int)(sizeof((char *[]){"pghotd", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(o, m, ...) options_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (o), (m), sizeof(m))

static void test_defaults_run_with_default_config(void **state)
{
	(void)state;
	struct options o;
	char msg[128] = "";
	char *argv[] = {"pghotd", NULL};

	assert_int_equal(options_parse(1, argv, &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.mode, MODE_RUN);
	assert_false(o.config_given);
	assert_string_equal(o.sysfs_root, "/sys");
	assert_int_equal(o.log_target, LOG_TARGET_AUTO);
}

static void test_config_check_and_log_target(void **state)
{
	(void)state;
	struct options o;
	char msg[128] = "";

	assert_int_equal(
	    PARSE(&o, msg, "--check-config", "-c", "/x.conf", "--log=journal", "-v", "-v"), 0);
	assert_int_equal(o.mode, MODE_CHECK_CONFIG);
	assert_string_equal(o.config_path, "/x.conf");
	assert_true(o.config_given);
	assert_int_equal(o.log_target, LOG_TARGET_JOURNAL);
	assert_int_equal(o.verbose, 2);
}

static void test_rejects_unknown_option_naming_it(void **state)
{
	(void)state;
	struct options o = {.verbose = 42};
	char msg[128] = "";

	assert_int_equal(PARSE(&o, msg, "--frobnicate"), -EINVAL);
	assert_non_null(strstr(msg, "--frobnicate"));
	assert_int_equal(o.verbose, 42); /* untouched on failure */
}

static void test_rejects_bad_log_target_and_missing_argument(void **state)
{
	(void)state;
	struct options o;
	char msg[128] = "";

	assert_int_equal(PARSE(&o, msg, "--log=syslog"), -EINVAL);
	assert_non_null(strstr(msg, "syslog"));
	assert_int_equal(PARSE(&o, msg, "--config"), -EINVAL);
	assert_non_null(strstr(msg, "needs an argument"));
	assert_int_equal(PARSE(&o, msg, "--probe", "--check-config"), -EINVAL);
	assert_int_equal(PARSE(&o, msg, "stray"), -EINVAL);
	assert_non_null(strstr(msg, "stray"));
}

static void test_status_and_watch_take_seconds_in_either_form(void **state)
{
	(void)state;
	struct options o;
	char msg[160] = "";

	assert_int_equal(PARSE(&o, msg, "--status", "-c", "/x.conf"), 0);
	assert_int_equal(o.mode, MODE_STATUS);
	assert_false(o.watch);
	assert_int_equal(PARSE(&o, msg, "--status", "--watch"), 0);
	assert_true(o.watch);
	assert_true(o.watch_s == 0);
	assert_int_equal(PARSE(&o, msg, "--status", "--watch", "2.5", "--config", "/x.conf"), 0);
	assert_true(o.watch_s == 2.5);
	assert_string_equal(o.config_path, "/x.conf");
	assert_int_equal(PARSE(&o, msg, "--watch=0.5", "--status"), 0);
	assert_true(o.watch_s == 0.5);
}

static void test_watch_without_status_or_with_bad_seconds_is_refused(void **state)
{
	(void)state;
	struct options o;
	char msg[160] = "";

	assert_int_equal(PARSE(&o, msg, "--watch"), -EINVAL);
	assert_non_null(strstr(msg, "--watch goes with --status"));
	assert_int_equal(PARSE(&o, msg, "--status", "--watch", "soon"), -EINVAL);
	assert_non_null(strstr(msg, "'soon'"));
	assert_int_equal(PARSE(&o, msg, "--status", "--watch=0"), -EINVAL);
	assert_int_equal(PARSE(&o, msg, "--status", "--probe"), -EINVAL);
	assert_int_equal(PARSE(&o, msg, "--status", "--watch", "1", "stray"), -EINVAL);
	assert_non_null(strstr(msg, "stray"));
}

static void test_status_line_summarises_state(void **state)
{
	(void)state;
	char buf[256];
	struct status_info si = {.active_sources = 2,
				 .source_names = "ibs,abit",
				 .nr_slow = 1,
				 .promoted_pages = 1234,
				 .rate_mib_s = 3.25};

	notify_format_status(buf, sizeof(buf), &si);
	assert_string_equal(
	    buf, "2 sources active (ibs,abit); 1 slow node; 1234 pages promoted, 3.2 MiB/s");
	si.nr_slow = 0;
	notify_format_status(buf, sizeof(buf), &si);
	assert_non_null(strstr(buf, "no slow memory tier"));
	si = (struct status_info){.source_names = "", .nr_slow = 2, .dry_run = 1};
	notify_format_status(buf, sizeof(buf), &si);
	assert_string_equal(buf,
			    "dry run: 0 sources active; 2 slow nodes; 0 pages promoted, 0.0 MiB/s");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_run_with_default_config),
	    cmocka_unit_test(test_config_check_and_log_target),
	    cmocka_unit_test(test_rejects_unknown_option_naming_it),
	    cmocka_unit_test(test_rejects_bad_log_target_and_missing_argument),
	    cmocka_unit_test(test_status_and_watch_take_seconds_in_either_form),
	    cmocka_unit_test(test_watch_without_status_or_with_bad_seconds_is_refused),
	    cmocka_unit_test(test_status_line_summarises_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
