/* The real pghotd binary under a fake service manager: this test binds its own NOTIFY_SOCKET
 * and checks READY=1, reload (RELOADING=1 with MONOTONIC_USEC, READY=1, new value in force),
 * a broken file on reload (old value kept, failure counted), the watchdog, SIGTERM
 * (STOPPING=1, exit 0 within 2 s), the exit codes of bad starts, and `pghotd --reload PID`
 * (the ExecReload= of systemd before 253) returning only with the daemon's answer. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
	char dir[64];
	char conf[128];
	char stats[128];
	char errlog[128];
	char sock_path[128];
	int sock;
	pid_t pid;
};

static const char *binary(void)
{
	const char *b = getenv("PGHOTD_BINARY");
	return b ? b : "build/pghotd";
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void write_conf(struct fixture *f, unsigned threshold)
{
	FILE *c = fopen(f->conf, "w");
	assert_non_null(c);
	fprintf(c,
		"# test configuration\n"
		"sources: {\n  ibs: { enabled = \"off\"; };\n  pebs: { enabled = \"off\"; };\n"
		"  abit: { enabled = \"off\"; };\n};\n"
		"promotion: {\n  threshold = %u;\n};\n"
		"stats: {\n  file = \"%s\";\n  interval_ms = 100;\n};\n",
		threshold, f->stats);
	fclose(c);
}

static void write_text(const char *path, const char *text)
{
	FILE *c = fopen(path, "w");
	assert_non_null(c);
	fputs(text, c);
	fclose(c);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	strcpy(f->dir, "/tmp/pghotd-life-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->conf, sizeof(f->conf), "%s/pghotd.conf", f->dir);
	snprintf(f->stats, sizeof(f->stats), "%s/stats.prom", f->dir);
	snprintf(f->errlog, sizeof(f->errlog), "%s/stderr.log", f->dir);
	snprintf(f->sock_path, sizeof(f->sock_path), "%s/notify.sock", f->dir);
	f->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->sock >= 0);
	strcpy(sa.sun_path, f->sock_path);
	assert_int_equal(bind(f->sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	write_conf(f, 2);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	if (f->pid > 0) {
		kill(f->pid, SIGKILL);
		waitpid(f->pid, NULL, 0);
	}
	close(f->sock);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(f);
	return 0;
}

/* Starts the daemon with extra arguments; stdout and stderr go to f->errlog. */
static pid_t spawn(struct fixture *f, const char *watchdog_usec, const char *const *extra)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		const char *argv[16] = {binary(), "--config", f->conf, "--log=stderr"};
		int n = 4, fd = open(f->errlog, O_WRONLY | O_CREAT | O_APPEND, 0644);

		for (; extra && *extra; extra++)
			argv[n++] = *extra;
		dup2(fd, 1);
		dup2(fd, 2);
		setenv("NOTIFY_SOCKET", f->sock_path, 1);
		setenv("RUNTIME_DIRECTORY", f->dir, 1); /* as RuntimeDirectory= sets it */
		unsetenv("JOURNAL_STREAM");
		if (watchdog_usec) {
			char pidbuf[16];
			snprintf(pidbuf, sizeof(pidbuf), "%d", getpid());
			setenv("WATCHDOG_USEC", watchdog_usec, 1);
			setenv("WATCHDOG_PID", pidbuf, 1);
		}
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	return pid;
}

/* Waits up to timeout_ms for a notify datagram containing `want` as a line. Other messages
 * are skipped; returns 1 and copies the datagram into buf on a match, 0 on timeout. */
static int wait_msg(struct fixture *f, const char *want, char *buf, size_t len, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	while (now_ms() < end) {
		struct pollfd p = {.fd = f->sock, .events = POLLIN};
		if (poll(&p, 1, (int)(end - now_ms())) <= 0)
			continue;
		ssize_t n = recv(f->sock, buf, len - 1, 0);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *line = buf; line && *line;) {
			char *nl = strchr(line, '\n');
			size_t l = nl ? (size_t)(nl - line) : strlen(line);
			if (l == strlen(want) && !strncmp(line, want, l))
				return 1;
			line = nl ? nl + 1 : NULL;
		}
	}
	return 0;
}

/* Value of a metric line `name value` in the stats file, or -1. */
static long long stat_value(struct fixture *f, const char *name)
{
	FILE *s = fopen(f->stats, "r");
	char line[512];
	long long v = -1;
	size_t l = strlen(name);

	if (!s)
		return -1;
	while (fgets(line, sizeof(line), s)) {
		if (!strncmp(line, name, l) && line[l] == ' ')
			v = atoll(line + l + 1);
	}
	fclose(s);
	return v;
}

/* Reads and drops every waiting notify message, as a service manager would: a datagram socket
 * left unread fills after a few STATUS= messages (net.unix.max_dgram_qlen) and then blocks
 * the daemon in sd_notify(). */
static void drain_notify(struct fixture *f)
{
	char buf[4096];

	while (recv(f->sock, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

static int wait_stat(struct fixture *f, const char *name, long long want, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	while (now_ms() < end) {
		if (stat_value(f, name) == want)
			return 1;
		drain_notify(f);
		usleep(20000);
	}
	fprintf(stderr, "%s = %lld, wanted %lld\n", name, stat_value(f, name), want);
	return 0;
}

static int wait_exit(pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	while (now_ms() < end) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int log_contains(struct fixture *f, const char *needle)
{
	char buf[16384];
	FILE *e = fopen(f->errlog, "r");
	size_t n;

	if (!e)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, e);
	fclose(e);
	buf[n] = '\0';
	if (!strstr(buf, needle)) {
		fprintf(stderr, "log lacks \"%s\":\n%s\n", needle, buf);
		return 0;
	}
	return 1;
}

static void start_ready(struct fixture *f, const char *watchdog)
{
	char buf[4096];

	f->pid = spawn(f, watchdog, NULL);
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 10000));
}

static void stop_cleanly(struct fixture *f)
{
	char buf[4096];
	int status;
	uint64_t t0 = now_ms();

	assert_int_equal(kill(f->pid, SIGTERM), 0);
	assert_true(wait_msg(f, "STOPPING=1", buf, sizeof(buf), 2000));
	assert_true(wait_exit(f->pid, 2000, &status));
	assert_true(now_ms() - t0 < 2000);
	f->pid = 0;
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_ready_then_clean_stop_on_sigterm(void **state)
{
	struct fixture *f = *state;

	start_ready(f, NULL);
	assert_true(wait_stat(f, "pghotd_up", 1, 3000));
	stop_cleanly(f);
	assert_int_equal(stat_value(f, "pghotd_up"), 0); /* stats flushed at stop */
	assert_true(log_contains(f, "stop"));
}

static void test_stats_and_status_are_refreshed_every_interval(void **state)
{
	struct fixture *f = *state;
	char buf[4096];
	int statuses = 0;

	start_ready(f, NULL);
	assert_true(wait_stat(f, "pghotd_up", 1, 3000));
	for (int round = 0; round < 3; round++) {
		/* The config's stats.interval_ms is 100: the file must come back each time. */
		assert_int_equal(unlink(f->stats), 0);
		assert_true(wait_stat(f, "pghotd_up", 1, 2000));
	}
	for (uint64_t end = now_ms() + 1000; now_ms() < end && statuses < 3;) {
		ssize_t n = recv(f->sock, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n > 0 && (buf[n] = '\0', !strncmp(buf, "STATUS=", 7)))
			statuses++;
		else if (n <= 0)
			usleep(20000);
	}
	assert_true(statuses >= 3); /* STATUS= sent again at every refresh */
	stop_cleanly(f);
}

static void test_sighup_applies_new_threshold(void **state)
{
	struct fixture *f = *state;
	char buf[4096];

	start_ready(f, NULL);
	assert_true(wait_stat(f, "pghotd_promotion_threshold", 2, 3000));
	write_conf(f, 7);
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	assert_true(wait_msg(f, "RELOADING=1", buf, sizeof(buf), 3000));
	assert_non_null(strstr(buf, "MONOTONIC_USEC="));
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 3000));
	assert_true(wait_stat(f, "pghotd_promotion_threshold", 7, 3000));
	assert_true(wait_stat(f, "pghotd_config_reloads_total", 1, 3000));
	assert_int_equal(stat_value(f, "pghotd_config_reload_failures_total"), 0);
	assert_true(log_contains(f, "reload changed: promotion.threshold\n"));
	stop_cleanly(f);
}

static void test_broken_file_on_sighup_keeps_old_config(void **state)
{
	struct fixture *f = *state;
	char buf[4096];

	start_ready(f, NULL);
	write_text(f->conf, "promotion: {\n  threshold = 9;\n  batch = 100000;\n};\n");
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	assert_true(wait_msg(f, "RELOADING=1", buf, sizeof(buf), 3000));
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 3000));
	assert_true(wait_stat(f, "pghotd_config_reload_failures_total", 1, 3000));
	assert_int_equal(stat_value(f, "pghotd_promotion_threshold"), 2);
	char where[160];
	snprintf(where, sizeof(where), "%s:3: promotion.batch", f->conf);
	assert_true(log_contains(f, where));

	unlink(f->conf); /* a missing file is a failed reload too */
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 3000));
	assert_true(wait_stat(f, "pghotd_config_reload_failures_total", 2, 3000));
	assert_int_equal(waitpid(f->pid, NULL, WNOHANG), 0); /* still running */
	assert_int_equal(stat_value(f, "pghotd_promotion_threshold"), 2);
	stop_cleanly(f);
}

static int run_to_exit(struct fixture *f, const char *const *extra);

/* As at the start, a reload to a stats.file in a directory that does not exist yet makes it. */
static void test_reload_to_a_new_stats_file_creates_its_directory(void **state)
{
	struct fixture *f = *state;
	char buf[4096], text[512], moved[128];
	struct stat st;

	start_ready(f, NULL);
	assert_true(wait_stat(f, "pghotd_up", 1, 3000));
	snprintf(moved, sizeof(moved), "%s/newdir/stats.prom", f->dir);
	snprintf(text, sizeof(text), "stats: {\n  file = \"%s\";\n  interval_ms = 100;\n};\n",
		 moved);
	write_text(f->conf, text);
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 3000));
	snprintf(f->stats, sizeof(f->stats), "%s", moved);
	assert_true(wait_stat(f, "pghotd_config_reloads_total", 1, 3000));
	assert_int_equal(stat(moved, &st), 0);
	stop_cleanly(f);
}

/* A FIFO planted at the stats file's old fixed temporary name: the daemon neither opens nor
 * blocks on it (it hung before READY=1 and ignored SIGTERM). */
static void test_fifo_at_the_old_stats_temp_name_does_not_stop_the_start(void **state)
{
	struct fixture *f = *state;
	char tmp[160];

	snprintf(tmp, sizeof(tmp), "%s.tmp", f->stats);
	assert_int_equal(mkfifo(tmp, 0666), 0);
	start_ready(f, NULL);
	assert_true(wait_stat(f, "pghotd_up", 1, 3000));
	stop_cleanly(f);
}

/* A FIFO as the configuration: --check-config and the start exit 3 naming it, a reload is
 * refused and the daemon goes on, each within a second (fopen() of a FIFO blocked until the
 * watchdog). */
static void test_fifo_as_config_fails_at_once_at_start_and_on_reload(void **state)
{
	struct fixture *f = *state;
	const char *const check[] = {"--check-config", NULL};
	char buf[4096], want[192];
	uint64_t t0;

	start_ready(f, NULL);
	assert_int_equal(unlink(f->conf), 0);
	assert_int_equal(mkfifo(f->conf, 0600), 0);
	t0 = now_ms();
	assert_int_equal(kill(f->pid, SIGHUP), 0);
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 1000));
	assert_true(wait_stat(f, "pghotd_config_reload_failures_total", 1, 1000));
	assert_true(now_ms() - t0 < 1000);
	snprintf(want, sizeof(want), "%s: cannot read: not a regular file", f->conf);
	assert_true(log_contains(f, want));
	stop_cleanly(f);
	t0 = now_ms();
	assert_int_equal(run_to_exit(f, check), 3);
	assert_int_equal(run_to_exit(f, NULL), 3);
	assert_true(now_ms() - t0 < 1000);
}

static void test_watchdog_keepalives_when_asked(void **state)
{
	struct fixture *f = *state;
	char buf[4096];

	start_ready(f, "200000");
	assert_true(wait_msg(f, "WATCHDOG=1", buf, sizeof(buf), 2000));
	stop_cleanly(f);
}

static void test_status_line_is_sent(void **state)
{
	struct fixture *f = *state;
	char buf[4096];
	const char *st;

	f->pid = spawn(f, NULL, NULL);
	assert_true(wait_msg(f, "READY=1", buf, sizeof(buf), 10000));
	st = strstr(buf, "STATUS=");
	assert_non_null(st);
	assert_true(strlen(st) > strlen("STATUS="));
	stop_cleanly(f);
}

/* wait_exit() that keeps reading the notify socket meanwhile (drain_notify). */
static int wait_exit_draining(struct fixture *f, pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	while (now_ms() < end) {
		drain_notify(f);
		if (waitpid(pid, status, WNOHANG) == pid)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* Runs `pghotd --reload PID` as the unit's ExecReload= would; returns its exit status, or -1
 * (with the log shown) when it did not return within 10 s. */
static int run_reload_client(struct fixture *f)
{
	char pidbuf[16];
	int status;
	pid_t pid;

	snprintf(pidbuf, sizeof(pidbuf), "%d", f->pid);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(f->errlog, O_WRONLY | O_CREAT | O_APPEND, 0644);

		dup2(fd, 1);
		dup2(fd, 2);
		setenv("RUNTIME_DIRECTORY", f->dir, 1);
		unsetenv("NOTIFY_SOCKET");
		execl(binary(), binary(), "--log=stderr", "--reload", pidbuf, (char *)NULL);
		_exit(127);
	}
	if (!wait_exit_draining(f, pid, 10000, &status)) {
		log_contains(f, "(a reload client that did not return: the log so far)");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_reload_client_returns_after_the_answer_and_fails_on_a_refused_file(void **state)
{
	struct fixture *f = *state;
	int rc;

	start_ready(f, NULL);
	write_conf(f, 7);
	/* The new threshold is in force when the client returns: no waiting here. */
	assert_int_equal(run_reload_client(f), 0);
	assert_int_equal(stat_value(f, "pghotd_promotion_threshold"), 7);
	assert_true(log_contains(f, "configuration reloaded"));

	write_text(f->conf, "promotion: {\n  threshold = 9;\n  batch = 100000;\n};\n");
	rc = run_reload_client(f);
	if (rc != 1)
		log_contains(f, "(a refused reload: the log so far)");
	assert_int_equal(rc, 1);
	assert_int_equal(stat_value(f, "pghotd_config_reload_failures_total"), 1);
	assert_int_equal(stat_value(f, "pghotd_promotion_threshold"), 7);
	assert_true(log_contains(f, "refused: "));
	stop_cleanly(f);
}

static void test_reload_client_fails_when_the_daemon_is_gone(void **state)
{
	struct fixture *f = *state;
	int status;

	start_ready(f, NULL);
	stop_cleanly(f);
	f->pid = spawn(f, NULL, (const char *const[]){"--check-config", NULL});
	assert_true(wait_exit(f->pid, 10000, &status)); /* a pid that is surely gone now */
	assert_int_not_equal(run_reload_client(f), 0);
	f->pid = 0;
}

static int run_to_exit(struct fixture *f, const char *const *extra)
{
	int status;
	pid_t pid = spawn(f, NULL, extra);

	assert_true(wait_exit(pid, 10000, &status));
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_bad_config_at_start_exits_3_naming_file_and_line(void **state)
{
	struct fixture *f = *state;
	char where[160];

	write_text(f->conf, "promotion: {\n  threshold = \"many\";\n};\n");
	assert_int_equal(run_to_exit(f, NULL), 3);
	snprintf(where, sizeof(where), "%s:2: promotion.threshold", f->conf);
	assert_true(log_contains(f, where));
}

static void test_missing_named_config_exits_3(void **state)
{
	struct fixture *f = *state;

	unlink(f->conf);
	assert_int_equal(run_to_exit(f, NULL), 3);
	assert_true(log_contains(f, f->conf));
}

static void test_check_config_prints_effective_config(void **state)
{
	struct fixture *f = *state;
	const char *const args[] = {"--check-config", NULL};

	assert_int_equal(run_to_exit(f, args), 0);
	assert_true(log_contains(f, "threshold = 2"));
	assert_true(log_contains(f, "window_ms")); /* a default filled in */
	write_text(f->conf, "hot_table: { capacity = -1; };\n");
	assert_int_equal(run_to_exit(f, args), 3);
	assert_true(log_contains(f, ":1: hot_table.capacity"));
}

static void test_usage_error_exits_2(void **state)
{
	struct fixture *f = *state;
	const char *const args[] = {"--no-such-option", NULL};

	assert_int_equal(run_to_exit(f, args), 2);
	assert_true(log_contains(f, "--no-such-option"));
}

static void test_probe_reports_each_source(void **state)
{
	struct fixture *f = *state;
	const char *const args[] = {"--probe", NULL};

	assert_int_equal(run_to_exit(f, args), 0);
	assert_true(log_contains(f, "ibs"));
	assert_true(log_contains(f, "pebs"));
	assert_true(log_contains(f, "abit"));
	assert_true(log_contains(f, "disabled by config"));
}

static void test_required_source_missing_exits_5_with_the_reason(void **state)
{
	struct fixture *f = *state;
	char text[512];

	if (access("/sys/kernel/mm/page_idle/bitmap", F_OK) == 0) {
		printf("skipped: this kernel has page_idle, so abit is not missing\n");
		skip();
	}
	snprintf(text, sizeof(text),
		 "sources: { abit: { enabled = \"on\"; }; };\nstats: { file = \"%s\"; };\n",
		 f->stats);
	write_text(f->conf, text);
	assert_int_equal(run_to_exit(f, NULL), 5);
	assert_true(log_contains(f, "source abit is set to \"on\" but cannot run: no page_idle"));
}

/* A sysfs tree that has an ibs_op PMU this kernel does not know: --probe must try the event
 * and report the kernel's refusal, not just the PMU's presence. */
static void test_probe_reports_a_refused_perf_event_with_its_errno(void **state)
{
	struct fixture *f = *state;
	const char *fx = getenv("PGHOTD_FIXTURES");
	char cmd[1024], root[160], opt[200];
	const char *args[] = {"--probe", opt, NULL};

	assert_non_null(fx);
	snprintf(root, sizeof(root), "%s/sysfs", f->dir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s && cp -r %s/sysfs-one-node/. %s/sysfs-ibs-zen4/. %s", root, fx, fx,
		 root);
	assert_int_equal(system(cmd), 0);
	write_text(f->conf, "sources: { ibs: { enabled = \"auto\"; }; };\n");
	snprintf(opt, sizeof(opt), "--sysfs-root=%s", root);
	assert_int_equal(run_to_exit(f, args), 0);
	assert_true(log_contains(f, "source ibs: unavailable: "));
	assert_true(log_contains(f, "perf_event_open"));
}

static void test_replay_of_a_missing_file_fails_naming_it(void **state)
{
	struct fixture *f = *state;
	char missing[160];
	const char *args[] = {"--replay", missing, NULL};

	snprintf(missing, sizeof(missing), "%s/none.data", f->dir);
	assert_int_equal(run_to_exit(f, args), 1);
	assert_true(log_contains(f, missing));
}

static void test_replay_of_a_real_recording_prints_its_summary(void **state)
{
	struct fixture *f = *state;
	const char *dir = getenv("PGHOTD_TEST_DATA");
	char rec[4096];
	const char *args[] = {"--replay", rec, NULL};

	/* The real PEBS recording in tests/data/. */
	snprintf(rec, sizeof(rec), "%s/pebs-skx-loadlat-weight-struct.data",
		 dir ? dir : "tests/data");
	assert_int_equal(run_to_exit(f, args), 0);
	assert_true(log_contains(f, "replay: records="));
	assert_true(log_contains(f, " samples=14 "));
}
int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ready_then_clean_stop_on_sigterm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stats_and_status_are_refreshed_every_interval,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sighup_applies_new_threshold, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_broken_file_on_sighup_keeps_old_config, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(
		test_reload_client_returns_after_the_answer_and_fails_on_a_refused_file, setup,
		teardown),
	    cmocka_unit_test_setup_teardown(test_reload_client_fails_when_the_daemon_is_gone, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_reload_to_a_new_stats_file_creates_its_directory,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_fifo_at_the_old_stats_temp_name_does_not_stop_the_start, setup, teardown),
	    cmocka_unit_test_setup_teardown(
		test_fifo_as_config_fails_at_once_at_start_and_on_reload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_watchdog_keepalives_when_asked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_status_line_is_sent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_config_at_start_exits_3_naming_file_and_line,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_missing_named_config_exits_3, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_check_config_prints_effective_config, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_usage_error_exits_2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_probe_reports_each_source, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_required_source_missing_exits_5_with_the_reason,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_probe_reports_a_refused_perf_event_with_its_errno,
					    setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replay_of_a_missing_file_fails_naming_it, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_replay_of_a_real_recording_prints_its_summary,
					    setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
