/* Integration: what the real daemon sends to the journal.
 *
 * The test stands in for journald. In a private mount namespace it mounts a tmpfs over
 * /run/systemd (or /run when that is absent), binds an AF_UNIX datagram socket at
 * /run/systemd/journal/socket, where sd_journal_send() writes, and decodes the native
 * protocol: "KEY=value\n" fields, the binary form "KEY\n<le64 size><data>\n" for values
 * holding a newline, and whole entries passed as a sealed memfd (SCM_RIGHTS, empty payload)
 * when a datagram would be too big. The parser is checked first against entries that
 * libsystemd itself produces; then the daemon is started with --log=journal and its start,
 * reload, reload-failed and stop events are checked field by field.
 *
 * main() forks: the child enters the namespace and runs the suite; the parent only waits, and
 * kills the child's process group (daemon included) if the whole run exceeds its deadline. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <systemd/sd-journal.h>

#include "base/log.h"

#define JOURNAL_SOCKET	"/run/systemd/journal/socket"
#define RUN_DEADLINE_MS 19000
#define MAX_FIELDS	64
#define SKIP_EXIT	77

/* Lifecycle events are notice (5), a rejected reload is err (3): the levels the daemon
 * documents for them. */
#define PRIO_LIFECYCLE	   "5"
#define PRIO_RELOAD_FAILED "3"

struct jfield {
	char key[64];
	char *val; /* NUL-terminated copy; len excludes the NUL */
	size_t len;
};

struct jentry {
	int n;
	struct jfield f[MAX_FIELDS];
	bool via_memfd;
	bool binary_form_seen;
	pid_t sender; /* from SCM_CREDENTIALS */
};

static int jsock = -1;

static void jentry_clear(struct jentry *e)
{
	for (int i = 0; i < e->n; i++)
		free(e->f[i].val);
	memset(e, 0, sizeof(*e));
}

static const char *jentry_get(const struct jentry *e, const char *key)
{
	for (int i = 0; i < e->n; i++) {
		if (strcmp(e->f[i].key, key) == 0)
			return e->f[i].val;
	}
	return NULL;
}

/* journald accepts field names of A-Z, 0-9 and '_', not starting with a digit. */
static bool journal_key_valid(const uint8_t *k, size_t len)
{
	if (len == 0 || len >= sizeof(((struct jfield *)0)->key) || (k[0] >= '0' && k[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return false;
	}
	return true;
}

static int jentry_add(struct jentry *e, const uint8_t *k, size_t klen, const uint8_t *v,
		      size_t vlen)
{
	struct jfield *f;

	if (!journal_key_valid(k, klen) || e->n >= MAX_FIELDS)
		return -EBADMSG;
	f = &e->f[e->n];
	f->val = malloc(vlen + 1);
	if (!f->val)
		return -ENOMEM;
	memcpy(f->key, k, klen);
	f->key[klen] = '\0';
	memcpy(f->val, v, vlen);
	f->val[vlen] = '\0';
	f->len = vlen;
	e->n++;
	return 0;
}

/* Decodes one native-protocol entry. -EBADMSG on anything journald would not accept as a
 * well-formed entry (we are stricter: a trailing partial line is an error too). */
static int journal_parse(const uint8_t *buf, size_t len, struct jentry *e)
{
	const uint8_t *p = buf, *end = buf + len;

	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		const uint8_t *eq;
		uint64_t vlen = 0;
		int r;

		if (!nl)
			return -EBADMSG;
		eq = memchr(p, '=', (size_t)(nl - p));
		if (eq) {
			r = jentry_add(e, p, (size_t)(eq - p), eq + 1, (size_t)(nl - eq - 1));
			p = nl + 1;
		} else {
			/* Binary form: the name, a newline, a little-endian 64-bit size. */
			if ((size_t)(end - nl - 1) < 8)
				return -EBADMSG;
			for (int i = 7; i >= 0; i--)
				vlen = (vlen << 8) | nl[1 + i];
			/* The data and its closing newline must fit in what is left. */
			if (vlen >= (uint64_t)(end - nl - 1 - 8) || nl[1 + 8 + vlen] != '\n')
				return -EBADMSG;
			r = jentry_add(e, p, (size_t)(nl - p), nl + 1 + 8, (size_t)vlen);
			e->binary_form_seen = true;
			p = nl + 1 + 8 + vlen + 1;
		}
		if (r < 0)
			return r;
	}
	return e->n > 0 ? 0 : -EBADMSG;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the whole content of an fd passed instead of a payload. */
static int read_memfd(int fd, uint8_t **out, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fstat(fd, &st) < 0)
		return -errno;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EBADMSG;
		}
		got += (size_t)n;
	}
	*out = buf;
	*len = got;
	return 0;
}

/* Takes the fd and sender out of the control messages. */
static void scan_cmsgs(struct msghdr *mh, int *fd, pid_t *sender)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (c->cmsg_type == SCM_RIGHTS) {
			int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			int fds[4];

			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)(n < 4 ? n : 4));
			for (int i = 0; i < n && i < 4; i++) {
				if (*fd < 0)
					*fd = fds[i];
				else
					close(fds[i]);
			}
		} else if (c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred uc;

			memcpy(&uc, CMSG_DATA(c), sizeof(uc));
			*sender = uc.pid;
		}
	}
}

/* Receives and decodes one entry within timeout_ms. 0, -ETIMEDOUT or -errno/-EBADMSG. */
static int journal_recv(int sock, int timeout_ms, struct jentry *e)
{
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct ucred)) + CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	struct iovec iov;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	uint8_t *buf, *data;
	ssize_t size, n;
	size_t dlen;
	int fd = -1, r;

	r = poll(&pfd, 1, timeout_ms);
	if (r <= 0)
		return r == 0 ? -ETIMEDOUT : -errno;
	/* MSG_TRUNC with MSG_PEEK returns the datagram's real size without consuming it. */
	size = recv(sock, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	if (size < 0)
		return -errno;
	buf = malloc((size_t)size + 1);
	if (!buf)
		return -ENOMEM;
	iov = (struct iovec){buf, (size_t)size + 1};
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0) {
		r = -errno;
		free(buf);
		return r;
	}
	memset(e, 0, sizeof(*e));
	scan_cmsgs(&mh, &fd, &e->sender);
	data = buf;
	dlen = (size_t)n;
	if (fd >= 0) {
		/* libsystemd sends an empty payload with the fd; anything else is malformed. */
		r = n == 0 ? read_memfd(fd, &data, &dlen) : -EBADMSG;
		close(fd);
		free(buf);
		if (r < 0)
			return r;
		e->via_memfd = true;
	}
	r = journal_parse(data, dlen, e);
	free(data);
	if (r < 0)
		jentry_clear(e);
	return r;
}

/* --- namespace and socket --- */

static int mount_private_run(void)
{
	struct stat st;
	const char *over = stat("/run/systemd", &st) == 0 ? "/run/systemd" : "/run";

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	/* The tmpfs hides any real journal socket and keeps every file we make off the host. */
	if (mount("tmpfs", over, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
		return -errno;
	if (mkdir("/run/systemd", 0755) < 0 && errno != EEXIST)
		return -errno;
	if (mkdir("/run/systemd/journal", 0755) < 0)
		return -errno;
	return 0;
}

static int bind_journal_socket(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = JOURNAL_SOCKET};
	int one = 1, fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Drops whatever is queued (e.g. from a previous test). */
static void journal_drain(void)
{
	struct jentry e;

	while (journal_recv(jsock, 0, &e) != -ETIMEDOUT)
		jentry_clear(&e);
}

/* --- parser against libsystemd --- */

static void parses_plain_fields_sent_by_libsystemd(void **state)
{
	struct jentry e;
	(void)state;

	journal_drain();
	assert_int_equal(sd_journal_send("MESSAGE=hello %d", 42, "PRIORITY=6", "PGHOTD_EVENT=probe",
					 "SYSLOG_IDENTIFIER=pghotd-test", NULL),
			 0);
	assert_int_equal(journal_recv(jsock, 2000, &e), 0);
	assert_string_equal(jentry_get(&e, "MESSAGE"), "hello 42");
	assert_string_equal(jentry_get(&e, "PRIORITY"), "6");
	assert_string_equal(jentry_get(&e, "PGHOTD_EVENT"), "probe");
	assert_string_equal(jentry_get(&e, "SYSLOG_IDENTIFIER"), "pghotd-test");
	assert_false(e.via_memfd);
	assert_false(e.binary_form_seen);
	assert_int_equal(e.sender, getpid());
	jentry_clear(&e);
}

static void parses_binary_form_of_a_value_holding_a_newline(void **state)
{
	static const char msg[] = "first line\nsecond = line\n";
	struct iovec iov[2] = {{(void *)"MESSAGE=first line\nsecond = line\n", 8 + sizeof(msg) - 1},
			       {(void *)"PRIORITY=3", 10}};
	struct jentry e;
	(void)state;

	journal_drain();
	assert_int_equal(sd_journal_sendv(iov, 2), 0);
	assert_int_equal(journal_recv(jsock, 2000, &e), 0);
	assert_true(e.binary_form_seen);
	assert_string_equal(jentry_get(&e, "MESSAGE"), msg);
	assert_string_equal(jentry_get(&e, "PRIORITY"), "3");
	jentry_clear(&e);
}

static void parses_an_entry_too_big_for_a_datagram_from_its_memfd(void **state)
{
	/* Above the 16 MiB send buffer libsystemd can force as root, so sendmsg() says
	 * EMSGSIZE and libsystemd falls back to a memfd. */
	const size_t big = 20u << 20;
	char *field = malloc(8 + big);
	struct iovec iov;
	struct jentry e;
	const char *v;
	(void)state;

	assert_non_null(field);
	memcpy(field, "MESSAGE=", 8);
	for (size_t i = 0; i < big; i++)
		field[8 + i] = (char)('a' + i % 26);
	iov = (struct iovec){field, 8 + big};
	journal_drain();
	assert_int_equal(sd_journal_sendv(&iov, 1), 0);
	assert_int_equal(journal_recv(jsock, 5000, &e), 0);
	assert_true(e.via_memfd);
	v = jentry_get(&e, "MESSAGE");
	assert_non_null(v);
	assert_int_equal(e.f[0].len, big);
	assert_memory_equal(v, field + 8, big);
	jentry_clear(&e);
	free(field);
}

/* log.c's journal path end to end, with the real sd_journal_sendv(). */
static void log_front_end_sends_structured_fields_to_the_socket(void **state)
{
	struct jentry e;
	(void)state;

	journal_drain();
	log_setup(LOG_TARGET_JOURNAL, LOG_LVL_INFO);
	log_event(LOG_LVL_NOTICE, "reload", "config %s reloaded", "/x.conf");
	assert_int_equal(journal_recv(jsock, 2000, &e), 0);
	assert_string_equal(jentry_get(&e, "PRIORITY"), "5");
	assert_string_equal(jentry_get(&e, "MESSAGE"), "config /x.conf reloaded");
	assert_string_equal(jentry_get(&e, "SYSLOG_IDENTIFIER"), "pghotd");
	assert_string_equal(jentry_get(&e, "PGHOTD_EVENT"), "reload");
	assert_null(jentry_get(&e, "ERRNO"));
	jentry_clear(&e);

	assert_int_equal(log_error_errno(-ENOENT, "open %s", "/x.conf"), -ENOENT);
	assert_int_equal(journal_recv(jsock, 2000, &e), 0);
	assert_string_equal(jentry_get(&e, "PRIORITY"), "3");
	assert_string_equal(jentry_get(&e, "MESSAGE"), "open /x.conf: No such file or directory");
	assert_string_equal(jentry_get(&e, "ERRNO"), "2");
	assert_null(jentry_get(&e, "PGHOTD_EVENT"));
	jentry_clear(&e);

	log_debug("below the level");
	assert_int_equal(journal_recv(jsock, 100, &e), -ETIMEDOUT);
	log_setup(LOG_TARGET_STDERR, LOG_LVL_INFO);
}

static void rejects_malformed_entries(void **state)
{
	static const struct {
		const char *data;
		size_t len;
	} bad[] = {
	    {"MESSAGE=no newline", 18},
	    {"lower=case\n", 11},
	    {"1DIGIT=x\n", 9},
	    {"MESSAGE\n\x05\0\0\0\0\0\0\0abc\n", 20}, /* size beyond the data */
	    {"MESSAGE\n\x03\0\0\0\0\0\0\0abcX", 20},  /* no newline after data */
	    {"MESSAGE\n\x03\0\0", 11},		      /* truncated size */
	    {"", 0},
	};
	struct jentry e;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&e, 0, sizeof(e));
		assert_int_equal(journal_parse((const uint8_t *)bad[i].data, bad[i].len, &e),
				 -EBADMSG);
		jentry_clear(&e);
	}
	memset(&e, 0, sizeof(e));
	assert_int_equal(
	    journal_parse((const uint8_t *)"MESSAGE\n\x03\0\0\0\0\0\0\0a\nb\nA=1\n", 24, &e), 0);
	assert_string_equal(jentry_get(&e, "MESSAGE"), "a\nb");
	assert_string_equal(jentry_get(&e, "A"), "1");
	jentry_clear(&e);
}

/* --- the daemon --- */

static struct {
	char dir[64];
	char conf[128];
	char stats[128];
	pid_t pid;
} d = {.pid = -1};

static const char conf_head[] =
    "sources: { ibs: { enabled = \"off\"; }; pebs: { enabled = \"off\"; }; "
    "abit: { enabled = \"off\"; }; };\n";

static void write_conf(bool broken)
{
	FILE *f = fopen(d.conf, "w");

	assert_non_null(f);
	fputs(conf_head, f);
	fprintf(f, "stats: { file = \"%s\"; };\n", d.stats);
	/* Line 3 carries the error, so the message must say CONF:3. */
	if (broken)
		fputs("promotion: { threshold = ; };\n", f);
	assert_int_equal(fclose(f), 0);
}

static int daemon_start(void)
{
	const char *bin = getenv("PGHOTD_BINARY");
	pid_t pid;

	if (!bin || access(bin, X_OK) < 0) {
		fprintf(stderr, "PGHOTD_BINARY (%s) is not an executable\n", bin ? bin : "unset");
		return -ENOENT;
	}
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* Not under systemd: no notify socket, no journal stream on stderr. */
		unsetenv("NOTIFY_SOCKET");
		unsetenv("JOURNAL_STREAM");
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
		execl(bin, bin, "--config", d.conf, "--log=journal", (char *)NULL);
		_exit(127);
	}
	d.pid = pid;
	return 0;
}

/* Waits for the entry with PGHOTD_EVENT=event from the daemon; prints what else came. */
static int wait_event(const char *event, int timeout_ms, struct jentry *out)
{
	int64_t deadline = now_ms() + timeout_ms;

	for (;;) {
		int64_t left = deadline - now_ms();
		struct jentry e;
		const char *ev;
		int status, r;

		if (left <= 0)
			return -ETIMEDOUT;
		r = journal_recv(jsock, left > 100 ? 100 : (int)left, &e);
		if (r == -ETIMEDOUT) {
			if (d.pid > 0 && waitpid(d.pid, &status, WNOHANG) == d.pid) {
				fprintf(stderr, "daemon exited (status 0x%x) before '%s'\n", status,
					event);
				d.pid = -1;
				return -ECHILD;
			}
			continue;
		}
		if (r < 0)
			return r;
		ev = jentry_get(&e, "PGHOTD_EVENT");
		fprintf(stderr, "journal: PRIORITY=%s PGHOTD_EVENT=%s MESSAGE=%s\n",
			jentry_get(&e, "PRIORITY") ? jentry_get(&e, "PRIORITY") : "-",
			ev ? ev : "-", jentry_get(&e, "MESSAGE") ? jentry_get(&e, "MESSAGE") : "-");
		if (ev && strcmp(ev, event) == 0 && e.sender == d.pid) {
			*out = e;
			return 0;
		}
		jentry_clear(&e);
	}
}

static void assert_common_fields(const struct jentry *e, const char *prio)
{
	const char *msg = jentry_get(e, "MESSAGE");

	assert_non_null(jentry_get(e, "PRIORITY"));
	assert_string_equal(jentry_get(e, "PRIORITY"), prio);
	assert_non_null(jentry_get(e, "SYSLOG_IDENTIFIER"));
	assert_string_equal(jentry_get(e, "SYSLOG_IDENTIFIER"), "pghotd");
	assert_non_null(msg);
	assert_true(strlen(msg) > 0);
}

static void daemon_logs_start_event_with_structured_fields(void **state)
{
	struct jentry e;
	(void)state;

	journal_drain();
	write_conf(false);
	assert_int_equal(daemon_start(), 0);
	assert_int_equal(wait_event("start", 4000, &e), 0);
	assert_common_fields(&e, PRIO_LIFECYCLE);
	jentry_clear(&e);
}

static void daemon_logs_reload_event_on_sighup(void **state)
{
	struct jentry e;
	(void)state;

	assert_true(d.pid > 0);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	assert_int_equal(wait_event("reload", 3000, &e), 0);
	assert_common_fields(&e, PRIO_LIFECYCLE);
	jentry_clear(&e);
}

static void daemon_logs_reload_failure_naming_file_and_line(void **state)
{
	char where[160];
	struct jentry e;
	(void)state;

	assert_true(d.pid > 0);
	write_conf(true);
	assert_int_equal(kill(d.pid, SIGHUP), 0);
	assert_int_equal(wait_event("reload-failed", 3000, &e), 0);
	assert_common_fields(&e, PRIO_RELOAD_FAILED);
	snprintf(where, sizeof(where), "%s:3", d.conf);
	if (!strstr(jentry_get(&e, "MESSAGE"), where))
		fail_msg("reload-failed MESSAGE \"%s\" does not name %s", jentry_get(&e, "MESSAGE"),
			 where);
	jentry_clear(&e);
	/* A rejected reload keeps the daemon running on its old config. */
	assert_int_equal(kill(d.pid, 0), 0);
}

static void daemon_logs_stop_event_on_sigterm_and_exits_zero(void **state)
{
	struct jentry e;
	int64_t deadline;
	int status = -1;
	(void)state;

	assert_true(d.pid > 0);
	assert_int_equal(kill(d.pid, SIGTERM), 0);
	assert_int_equal(wait_event("stop", 3000, &e), 0);
	assert_common_fields(&e, PRIO_LIFECYCLE);
	jentry_clear(&e);
	deadline = now_ms() + 3000;
	while (waitpid(d.pid, &status, WNOHANG) == 0 && now_ms() < deadline)
		usleep(10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	d.pid = -1;
}

static int daemon_group_setup(void **state)
{
	(void)state;
	snprintf(d.dir, sizeof(d.dir), "/tmp/test_journal.XXXXXX");
	if (!mkdtemp(d.dir))
		return -1;
	snprintf(d.conf, sizeof(d.conf), "%s/pghotd.conf", d.dir);
	snprintf(d.stats, sizeof(d.stats), "%s/stats.prom", d.dir);
	return 0;
}

static int daemon_group_teardown(void **state)
{
	(void)state;

	if (d.pid > 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
		d.pid = -1;
	}
	unlink(d.conf);
	unlink(d.stats);
	return rmdir(d.dir) < 0 ? -1 : 0;
}

static int run_suites(void)
{
	const struct CMUnitTest parser[] = {
	    cmocka_unit_test(parses_plain_fields_sent_by_libsystemd),
	    cmocka_unit_test(parses_binary_form_of_a_value_holding_a_newline),
	    cmocka_unit_test(parses_an_entry_too_big_for_a_datagram_from_its_memfd),
	    cmocka_unit_test(rejects_malformed_entries),
	    cmocka_unit_test(log_front_end_sends_structured_fields_to_the_socket),
	};
	const struct CMUnitTest daemon[] = {
	    cmocka_unit_test(daemon_logs_start_event_with_structured_fields),
	    cmocka_unit_test(daemon_logs_reload_event_on_sighup),
	    cmocka_unit_test(daemon_logs_reload_failure_naming_file_and_line),
	    cmocka_unit_test(daemon_logs_stop_event_on_sigterm_and_exits_zero),
	};
	int failed = cmocka_run_group_tests_name("journal_protocol", parser, NULL, NULL);

	failed += cmocka_run_group_tests_name("daemon_journal", daemon, daemon_group_setup,
					      daemon_group_teardown);
	return failed;
}

/* The child: namespace, socket, suites. */
static int child_main(void)
{
	int r;

	if (unshare(CLONE_NEWNS) < 0) {
		if (errno == EPERM) {
			printf("SKIP: unshare(CLONE_NEWNS) not permitted (needs root)\n");
			return SKIP_EXIT;
		}
		fprintf(stderr, "unshare: %s\n", strerror(errno));
		return 1;
	}
	r = mount_private_run();
	if (r < 0) {
		fprintf(stderr, "mounting a private /run: %s\n", strerror(-r));
		return 1;
	}
	jsock = bind_journal_socket();
	if (jsock < 0) {
		fprintf(stderr, "binding %s: %s\n", JOURNAL_SOCKET, strerror(-jsock));
		return 1;
	}
	return run_suites() ? 1 : 0;
}

int main(void)
{
	int64_t deadline = now_ms() + RUN_DEADLINE_MS;
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* Own process group, so the parent can kill the daemon with us on timeout. */
		setpgid(0, 0);
		exit(child_main());
	}
	setpgid(pid, pid);
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (now_ms() > deadline) {
			fprintf(stderr, "test_journal: no result after %d ms, killing\n",
				RUN_DEADLINE_MS);
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			return 1;
		}
		usleep(20000);
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "test_journal: child killed by signal %d\n", WTERMSIG(status));
	return 1;
}
