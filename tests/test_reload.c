/* reload: the status file's text and the --reload client's wait, through fake ops. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/reload.h"

/* A fake daemon: answers the nth SIGHUP by moving to status `after` once `delay` sleeps
 * have passed; `dies` makes it vanish instead. */
struct fake {
	const char *before; /* NULL: no status file yet */
	const char *after;
	int delay, slept, hangups, dies;
};

static int fake_read(void *ctx, char *buf, size_t len)
{
	struct fake *f = ctx;
	const char *text = f->hangups && f->slept >= f->delay ? f->after : f->before;

	if (!text)
		return -ENOENT;
	snprintf(buf, len, "%s", text);
	return 0;
}

static int fake_hangup(void *ctx, pid_t pid)
{
	struct fake *f = ctx;

	(void)pid;
	f->hangups++;
	return 0;
}

static int fake_alive(void *ctx, pid_t pid)
{
	struct fake *f = ctx;

	(void)pid;
	return f->dies && f->hangups ? -ESRCH : 0;
}

static void fake_sleep(void *ctx, unsigned ms)
{
	struct fake *f = ctx;

	(void)ms;
	f->slept++;
}

static struct reload_ops ops_for(struct fake *f)
{
	return (struct reload_ops){.read = fake_read,
				   .hangup = fake_hangup,
				   .alive = fake_alive,
				   .sleep_ms = fake_sleep,
				   .ctx = f};
}

static void test_status_text_round_trips(void **state)
{
	struct reload_status s = {.generation = 42, .ok = false}, back;
	char text[512];

	(void)state;
	snprintf(s.message, sizeof(s.message), "%s", "/etc/pghotd.conf:3: promotion.batch: bad");
	reload_status_format(text, sizeof(text), &s);
	assert_string_equal(text, "generation=42 result=failed\n"
				  "message=/etc/pghotd.conf:3: promotion.batch: bad\n");
	assert_int_equal(reload_status_parse(text, &back), 0);
	assert_int_equal(back.generation, 42);
	assert_false(back.ok);
	assert_string_equal(back.message, s.message);
	assert_int_equal(reload_status_parse("generation=0 result=started\n", &back), 0);
	assert_true(back.ok);
}

static void test_rejects_text_that_is_no_status(void **state)
{
	struct reload_status s = {.generation = 7};

	(void)state;
	assert_int_equal(reload_status_parse("", &s), -EBADMSG);
	assert_int_equal(reload_status_parse("generation=x result=ok\n", &s), -EBADMSG);
	assert_int_equal(reload_status_parse("generation=3 result=maybe\n", &s), -EBADMSG);
	assert_int_equal(s.generation, 7); /* untouched on failure */
}

static void test_path_is_the_first_runtime_directory(void **state)
{
	char p[64];

	(void)state;
	assert_int_equal(reload_status_path("/run/pghotd:/run/other", p, sizeof(p)), 0);
	assert_string_equal(p, "/run/pghotd/reload-status");
	assert_int_equal(reload_status_path(NULL, p, sizeof(p)), -EINVAL);
	assert_int_equal(reload_status_path("", p, sizeof(p)), -EINVAL);
	assert_int_equal(reload_status_path("/a/very/long/runtime/directory/name", p, 16),
			 -ENAMETOOLONG);
}

static void test_request_returns_the_answer_to_its_own_signal(void **state)
{
	struct fake f = {.before = "generation=3 result=ok\nmessage=x\n",
			 .after = "generation=4 result=failed\nmessage=bad file\n",
			 .delay = 5};
	struct reload_ops ops = ops_for(&f);
	struct reload_status out;

	(void)state;
	assert_int_equal(reload_request(&ops, 123, 1000, &out), 0);
	assert_int_equal(f.hangups, 1);
	assert_true(f.slept >= 5); /* it waited for the new generation */
	assert_int_equal(out.generation, 4);
	assert_false(out.ok);
	assert_string_equal(out.message, "bad file");
}

static void test_request_before_any_status_waits_for_the_first(void **state)
{
	struct fake f = {.after = "generation=1 result=ok\nmessage=configuration reloaded\n"};
	struct reload_ops ops = ops_for(&f);
	struct reload_status out;

	(void)state;
	assert_int_equal(reload_request(&ops, 123, 1000, &out), 0);
	assert_true(out.ok);
}

static void test_request_fails_when_the_daemon_goes_away(void **state)
{
	struct fake f = {
	    .before = "generation=1 result=ok\n", .after = "generation=1 result=ok\n", .dies = 1};
	struct reload_ops ops = ops_for(&f);
	struct reload_status out = {.generation = 99};

	(void)state;
	assert_int_equal(reload_request(&ops, 123, 1000, &out), -ESRCH);
	assert_int_equal(out.generation, 99);
}

static void test_request_times_out_without_an_answer(void **state)
{
	struct fake f = {.before = "generation=1 result=ok\n", .after = "generation=1 result=ok\n"};
	struct reload_ops ops = ops_for(&f);
	struct reload_status out;

	(void)state;
	assert_int_equal(reload_request(&ops, 123, 200, &out), -ETIMEDOUT);
}

/* The status is written through an exclusive temporary of random name: a hard link planted
 * at the old fixed name (reload-status.tmp) is neither truncated nor chmod'ed. */
static void test_status_write_leaves_what_is_planted_at_a_fixed_temp_name_alone(void **state)
{
	char dir[] = "/tmp/test_reload.XXXXXX", path[64], tmp[64], victim[64];
	struct reload_status st = {.generation = 7, .ok = true, .message = "m"}, back;
	char text[512];
	struct stat sb;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/reload-status", dir);
	snprintf(tmp, sizeof(tmp), "%s/reload-status.tmp", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("keep\n", f);
	fclose(f);
	assert_int_equal(link(victim, tmp), 0);
	assert_int_equal(chmod(victim, 0600), 0);
	assert_int_equal(reload_status_write(path, &st), 0);
	assert_int_equal(stat(victim, &sb), 0);
	assert_int_equal(sb.st_size, 5);
	assert_int_equal(sb.st_nlink, 2);
	assert_int_equal(sb.st_mode & 07777, 0600);
	f = fopen(path, "r");
	assert_non_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	assert_int_equal(reload_status_parse(text, &back), 0);
	assert_int_equal(back.generation, 7);
	assert_int_equal(unlink(path) | unlink(tmp) | unlink(victim), 0);
	assert_int_equal(rmdir(dir), 0); /* no temporary left behind */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_status_text_round_trips),
	    cmocka_unit_test(test_rejects_text_that_is_no_status),
	    cmocka_unit_test(test_path_is_the_first_runtime_directory),
	    cmocka_unit_test(test_request_returns_the_answer_to_its_own_signal),
	    cmocka_unit_test(test_request_before_any_status_waits_for_the_first),
	    cmocka_unit_test(test_request_fails_when_the_daemon_goes_away),
	    cmocka_unit_test(test_request_times_out_without_an_answer),
	    cmocka_unit_test(test_status_write_leaves_what_is_planted_at_a_fixed_temp_name_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
