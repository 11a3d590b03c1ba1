/* Tests of the logging front end: level parsing, the stderr line format, level filtering,
 * the journal fields (through an injected sender), AUTO target detection and thread safety. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/log.h"

static FILE *out;

/* The journal sender fake records the fields of the last datagram. */
#define FAKE_MAX_FIELDS 8
static struct {
	int calls;
	int n;
	char field[FAKE_MAX_FIELDS][4096];
	int ret;
} fake;

static int fake_sendv(const struct iovec *iov, int n)
{
	fake.calls++;
	fake.n = n;
	for (int i = 0; i < n && i < FAKE_MAX_FIELDS; i++) {
		size_t len = iov[i].iov_len < 4095 ? iov[i].iov_len : 4095;
		memcpy(fake.field[i], iov[i].iov_base, len);
		fake.field[i][len] = '\0';
	}
	return fake.ret;
}

/* Returns the field "KEY=..." of the last datagram, or NULL. */
static const char *fake_field(const char *key)
{
	size_t klen = strlen(key);

	for (int i = 0; i < fake.n; i++) {
		if (strncmp(fake.field[i], key, klen) == 0 && fake.field[i][klen] == '=')
			return fake.field[i] + klen + 1;
	}
	return NULL;
}

static int setup(void **state)
{
	(void)state;
	out = tmpfile();
	if (!out)
		return -1;
	memset(&fake, 0, sizeof(fake));
	log_set_stream(out);
	log_set_journal_sender(fake_sendv);
	log_setup(LOG_TARGET_STDERR, LOG_LVL_INFO);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	log_set_stream(NULL);
	log_set_journal_sender(NULL);
	log_setup(LOG_TARGET_STDERR, LOG_LVL_INFO);
	fclose(out);
	return 0;
}

/* Everything written to the stream so far; caller frees. */
static char *written(void)
{
	long len;
	char *buf;

	fflush(out);
	len = ftell(out);
	assert_true(len >= 0);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	rewind(out);
	assert_int_equal(fread(buf, 1, (size_t)len, out), (size_t)len);
	fseek(out, 0, SEEK_END);
	return buf;
}

static void assert_written(const char *expected)
{
	char *got = written();

	assert_string_equal(got, expected);
	free(got);
}

static void level_from_string_parses_every_documented_name(void **state)
{
	static const struct {
		const char *s;
		enum log_level l;
	} cases[] = {{"err", LOG_LVL_ERR},
		     {"warning", LOG_LVL_WARNING},
		     {"notice", LOG_LVL_NOTICE},
		     {"info", LOG_LVL_INFO},
		     {"debug", LOG_LVL_DEBUG}};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum log_level l = LOG_LVL_ERR;

		assert_int_equal(log_level_from_string(cases[i].s, &l), 0);
		assert_int_equal(l, cases[i].l);
		assert_string_equal(log_level_to_string(l), cases[i].s);
	}
}

static void level_from_string_rejects_unknown_names_leaving_output_untouched(void **state)
{
	const char *bad[] = {"", "Err", "warn", "critical", "debug ", "7"};
	enum log_level l = LOG_LVL_NOTICE;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(log_level_from_string(bad[i], &l), -EINVAL);
	assert_int_equal(log_level_from_string(NULL, &l), -EINVAL);
	assert_int_equal(l, LOG_LVL_NOTICE);
}

static void stderr_line_has_identifier_pid_and_level_prefix(void **state)
{
	char expected[256];
	(void)state;

	assert_int_equal(log_warning("disk %s at %d%%", "sda", 97), 0);
	assert_int_equal(log_error("gone"), 0);
	snprintf(expected, sizeof(expected),
		 "pghotd[%d]: warning: disk sda at 97%%\n"
		 "pghotd[%d]: error: gone\n",
		 (int)getpid(), (int)getpid());
	assert_written(expected);
}

static void errno_variant_appends_strerror_and_returns_negative_errno(void **state)
{
	char expected[256];
	(void)state;

	assert_int_equal(log_error_errno(-ENOENT, "open %s", "/x"), -ENOENT);
	/* A positive errno is accepted too and still returned negative. */
	assert_int_equal(log_warning_errno(EACCES, "read"), -EACCES);
	snprintf(expected, sizeof(expected),
		 "pghotd[%d]: error: open /x: No such file or directory\n"
		 "pghotd[%d]: warning: read: Permission denied\n",
		 (int)getpid(), (int)getpid());
	assert_written(expected);
}

static void messages_above_the_level_are_dropped(void **state)
{
	char expected[256];
	(void)state;

	log_set_level(LOG_LVL_NOTICE);
	log_debug("d1");
	log_info("i1");
	log_notice("n1");
	log_warning("w1");
	log_error("e1");
	snprintf(expected, sizeof(expected),
		 "pghotd[%d]: notice: n1\npghotd[%d]: warning: w1\npghotd[%d]: error: e1\n",
		 (int)getpid(), (int)getpid(), (int)getpid());
	assert_written(expected);
}

static void raising_the_level_lets_debug_through(void **state)
{
	char expected[128];
	(void)state;

	log_debug("hidden");
	log_set_level(LOG_LVL_DEBUG);
	assert_int_equal(log_get_level(), LOG_LVL_DEBUG);
	log_debug("shown");
	snprintf(expected, sizeof(expected), "pghotd[%d]: debug: shown\n", (int)getpid());
	assert_written(expected);
}

static void filtered_errno_message_still_returns_negative_errno(void **state)
{
	(void)state;

	log_set_level(LOG_LVL_ERR);
	assert_int_equal(log_warning_errno(-EBUSY, "busy"), -EBUSY);
	assert_written("");
}

static void set_level_ignores_out_of_range_values(void **state)
{
	(void)state;

	log_set_level(LOG_LVL_WARNING);
	log_set_level((enum log_level)9);
	log_set_level((enum log_level)0);
	assert_int_equal(log_get_level(), LOG_LVL_WARNING);
}

static void logging_preserves_errno(void **state)
{
	(void)state;

	errno = EXDEV;
	log_error_errno(-ENOMEM, "x");
	log_info("y");
	assert_int_equal(errno, EXDEV);
}

static void embedded_newlines_cannot_start_a_second_line(void **state)
{
	char expected[128];
	(void)state;

	log_info("a\nb\rc");
	snprintf(expected, sizeof(expected), "pghotd[%d]: info: a b c\n", (int)getpid());
	assert_written(expected);
}

static void overlong_message_is_truncated_to_one_line(void **state)
{
	char *big = malloc(10000);
	char *got;
	size_t len;
	(void)state;

	assert_non_null(big);
	memset(big, 'x', 9999);
	big[9999] = '\0';
	log_info("%s", big);
	got = written();
	len = strlen(got);
	assert_true(len > 1000 && len < 9999);
	assert_int_equal(got[len - 1], '\n');
	assert_ptr_equal(strchr(got, '\n'), got + len - 1);
	free(got);
	free(big);
}

static void journal_target_sends_structured_fields(void **state)
{
	char pid_msg[64];
	(void)state;

	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	assert_true(log_to_journal());
	snprintf(pid_msg, sizeof(pid_msg), "reloaded %d", 3);
	log_event(LOG_LVL_NOTICE, "reload", "reloaded %d", 3);
	assert_int_equal(fake.calls, 1);
	assert_int_equal(fake.n, 4);
	assert_string_equal(fake_field("PRIORITY"), "5");
	assert_string_equal(fake_field("MESSAGE"), pid_msg);
	assert_string_equal(fake_field("SYSLOG_IDENTIFIER"), "pghotd");
	assert_string_equal(fake_field("PGHOTD_EVENT"), "reload");
	assert_null(fake_field("ERRNO"));
	assert_written("");
}

static void journal_errno_adds_errno_field_and_strerror(void **state)
{
	(void)state;

	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	assert_int_equal(log_error_errno(-EACCES, "open %s", "/etc/pghotd.conf"), -EACCES);
	assert_int_equal(fake.calls, 1);
	assert_int_equal(fake.n, 4);
	assert_string_equal(fake_field("PRIORITY"), "3");
	assert_string_equal(fake_field("MESSAGE"), "open /etc/pghotd.conf: Permission denied");
	assert_string_equal(fake_field("ERRNO"), "13");
	assert_null(fake_field("PGHOTD_EVENT"));
}

static void journal_target_filters_by_level(void **state)
{
	(void)state;

	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_WARNING);
	log_notice("n");
	log_info("i");
	assert_int_equal(fake.calls, 0);
	log_warning("w");
	assert_int_equal(fake.calls, 1);
	assert_string_equal(fake_field("PRIORITY"), "4");
}

static void failed_journal_send_falls_back_to_the_stream(void **state)
{
	char expected[128];
	(void)state;

	fake.ret = -ECONNREFUSED;
	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	log_event(LOG_LVL_NOTICE, "start", "started");
	assert_int_equal(fake.calls, 1);
	snprintf(expected, sizeof(expected), "pghotd[%d]: notice: started\n", (int)getpid());
	assert_written(expected);
}

static void stderr_target_never_calls_the_journal(void **state)
{
	(void)state;

	log_setup(LOG_TARGET_STDERR, LOG_LVL_DEBUG);
	assert_false(log_to_journal());
	log_event(LOG_LVL_NOTICE, "start", "s");
	assert_int_equal(fake.calls, 0);
}

static void journal_stream_match_requires_exact_device_and_inode(void **state)
{
	(void)state;

	assert_true(log_journal_stream_matches("8:1234", 8, 1234));
	assert_false(log_journal_stream_matches("8:1235", 8, 1234));
	assert_false(log_journal_stream_matches("9:1234", 8, 1234));
	assert_false(log_journal_stream_matches("8:1234x", 8, 1234));
	assert_false(log_journal_stream_matches("8", 8, 1234));
	assert_false(log_journal_stream_matches("", 8, 1234));
	assert_false(log_journal_stream_matches(NULL, 8, 1234));
}

static void auto_target_picks_journal_only_when_journal_stream_names_stderr(void **state)
{
	struct stat st;
	char val[64];
	(void)state;

	assert_int_equal(fstat(STDERR_FILENO, &st), 0);
	snprintf(val, sizeof(val), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);

	assert_int_equal(setenv("JOURNAL_STREAM", val, 1), 0);
	log_setup(LOG_TARGET_AUTO, LOG_LVL_INFO);
	assert_true(log_to_journal());
	log_setup(LOG_TARGET_STDERR, LOG_LVL_INFO);
	assert_false(log_to_journal());

	snprintf(val, sizeof(val), "%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino + 1);
	assert_int_equal(setenv("JOURNAL_STREAM", val, 1), 0);
	log_setup(LOG_TARGET_AUTO, LOG_LVL_INFO);
	assert_false(log_to_journal());

	assert_int_equal(unsetenv("JOURNAL_STREAM"), 0);
	log_setup(LOG_TARGET_AUTO, LOG_LVL_INFO);
	assert_false(log_to_journal());
}

#define MT_THREADS 4
#define MT_LINES   2000

static void *mt_logger(void *arg)
{
	int id = (int)(intptr_t)arg;

	for (int i = 0; i < MT_LINES; i++)
		log_info("thread %d line %d padding-padding-padding-padding-padding", id, i);
	return NULL;
}

static void concurrent_loggers_never_interleave_lines(void **state)
{
	pthread_t th[MT_THREADS];
	int next[MT_THREADS] = {0};
	char prefix[64];
	char *got, *line, *save = NULL;
	int lines = 0;
	(void)state;

	for (int t = 0; t < MT_THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, mt_logger, (void *)(intptr_t)t), 0);
	for (int t = 0; t < MT_THREADS; t++)
		assert_int_equal(pthread_join(th[t], NULL), 0);

	snprintf(prefix, sizeof(prefix), "pghotd[%d]: info: thread ", (int)getpid());
	got = written();
	for (line = strtok_r(got, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int id, n, end = 0;

		assert_memory_equal(line, prefix, strlen(prefix));
		assert_int_equal(sscanf(line + strlen(prefix),
					"%d line %d padding-padding-padding-padding-padding%n", &id,
					&n, &end),
				 2);
		assert_int_equal(line[strlen(prefix) + (size_t)end], '\0');
		assert_in_range(id, 0, MT_THREADS - 1);
		/* Each thread's lines arrive whole and in its own order. */
		assert_int_equal(n, next[id]);
		next[id]++;
		lines++;
	}
	assert_int_equal(lines, MT_THREADS * MT_LINES);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(level_from_string_parses_every_documented_name),
	    cmocka_unit_test(level_from_string_rejects_unknown_names_leaving_output_untouched),
	    cmocka_unit_test_setup_teardown(stderr_line_has_identifier_pid_and_level_prefix, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		errno_variant_appends_strerror_and_returns_negative_errno, setup, teardown),
	    cmocka_unit_test_setup_teardown(messages_above_the_level_are_dropped, setup, teardown),
	    cmocka_unit_test_setup_teardown(raising_the_level_lets_debug_through, setup, teardown),
	    cmocka_unit_test_setup_teardown(filtered_errno_message_still_returns_negative_errno,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(set_level_ignores_out_of_range_values, setup, teardown),
	    cmocka_unit_test_setup_teardown(logging_preserves_errno, setup, teardown),
	    cmocka_unit_test_setup_teardown(embedded_newlines_cannot_start_a_second_line, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(overlong_message_is_truncated_to_one_line, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(journal_target_sends_structured_fields, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(journal_errno_adds_errno_field_and_strerror, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(journal_target_filters_by_level, setup, teardown),
	    cmocka_unit_test_setup_teardown(failed_journal_send_falls_back_to_the_stream, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(stderr_target_never_calls_the_journal, setup, teardown),
	    cmocka_unit_test(journal_stream_match_requires_exact_device_and_inode),
	    cmocka_unit_test_setup_teardown(
		auto_target_picks_journal_only_when_journal_stream_names_stderr, setup, teardown),
	    cmocka_unit_test_setup_teardown(concurrent_loggers_never_interleave_lines, setup,
					    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
