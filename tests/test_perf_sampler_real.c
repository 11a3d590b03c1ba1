/* perf_sampler on the real kernel: page-fault samples (PERF_SAMPLE_ADDR|TID|TIME|CPU, period
 * 1) of a child that faults a known set of pages arrive, through perf_ring and the sampler
 * thread, as access events at the sink, each page as often as it faulted. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/perf/perf_sampler.h"
#include "base/stats.h"

#define MAX_EVENTS 100000

struct sink {
	pthread_mutex_t lock;
	size_t n;
	struct access_event *ev;
	pid_t want_pid;
};

static void deliver(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	struct sink *k = ctx;

	(void)cfg;
	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < n && k->n < MAX_EVENTS; i++)
		k->ev[k->n++] = ev[i];
	pthread_mutex_unlock(&k->lock);
}

static bool convert(void *ctx, const struct perf_event_header *h, const struct perf_sample *s,
		    struct access_event *out)
{
	struct sink *k = ctx;

	(void)h;
	if ((pid_t)s->pid != k->want_pid || s->addr == 0)
		return false;
	*out = (struct access_event){.pid = (pid_t)s->pid,
				     .tid = (pid_t)s->tid,
				     .vaddr = s->addr,
				     .cpu = (int)s->cpu,
				     .node = -1,
				     .time_ns = s->time,
				     .source = SRC_PEBS,
				     .kind = ACCESS_UNKNOWN};
	return true;
}

static void sibling(char *buf, size_t len, const char *name)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = 0;
	snprintf(buf, len, "%s/%s", dirname(self), name);
}

static bool wait_file(const char *path)
{
	struct timespec ts = {0, 1000000};

	for (int i = 0; i < 5000; i++) {
		if (access(path, F_OK) == 0)
			return true;
		nanosleep(&ts, NULL);
	}
	return false;
}

static size_t count_page(const struct sink *k, uint64_t page)
{
	size_t n = 0;

	for (size_t i = 0; i < k->n; i++)
		n += (k->ev[i].vaddr & ~UINT64_C(4095)) == page;
	return n;
}

static void delivers_the_pages_a_child_faults_as_access_events(void **state)
{
	char helper[PATH_MAX], dir[] = "/tmp/pghotd-sampler-XXXXXX", info[64], gate[64], line[256];
	struct sink k = {.lock = PTHREAD_MUTEX_INITIALIZER};
	struct stats st;
	struct perf_sampler_source src = {.source = SRC_PEBS,
					  .name = "test",
					  .nr_events = 1,
					  .leader = -1,
					  .convert = convert,
					  .ctx = &k};
	struct perf_sampler_params p = {.ring_pages = 8,
					.drain_interval_ms = 20,
					.page_size = (size_t)sysconf(_SC_PAGESIZE),
					.stats = &st,
					.sink = {.deliver = deliver, .ctx = &k}};
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	int pid_read, pages, rounds, status, r;
	uint64_t hot, cold;
	FILE *f;
	pid_t child;
	(void)state;

	k.ev = calloc(MAX_EVENTS, sizeof(*k.ev));
	assert_non_null(k.ev);
	stats_init(&st, 1);
	sibling(helper, sizeof(helper), "helper_fault_pages");
	assert_non_null(mkdtemp(dir));
	snprintf(info, sizeof(info), "%s/info", dir);
	snprintf(gate, sizeof(gate), "%s/gate", dir);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		execl(helper, helper, info, gate, (char *)NULL);
		_exit(127);
	}
	assert_true(wait_file(info));
	f = fopen(info, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_int_equal(sscanf(line, "pid=%d hot=%" SCNx64 " cold=%" SCNx64 " pages=%d rounds=%d",
				&pid_read, &hot, &cold, &pages, &rounds),
			 5);
	assert_int_equal(pid_read, child);

	k.want_pid = child;
	src.attr[0] = (struct perf_event_attr){
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_PAGE_FAULTS,
	    .sample_period = 1,
	    .sample_type = PERF_SAMPLE_ADDR | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
	};
	p.pid = child;
	r = perf_sampler_new(&src, &p, &s, err, sizeof(err));
	if (r == -EACCES || r == -ENOENT || r == -EPERM || r == -ENOSYS) {
		printf("skipped: %s\n", err);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		free(k.ev);
		skip();
		return;
	}
	if (r < 0)
		fail_msg("perf_sampler_new: %s", err);
	assert_int_equal(perf_sampler_nr_fds(s), 1);
	assert_int_equal(perf_sampler_start(s), 0);
	f = fopen(gate, "w"); /* let the child fault */
	assert_non_null(f);
	fclose(f);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	usleep(100000);
	perf_sampler_stop(s);

	for (int i = 0; i < pages; i++) {
		assert_int_equal(count_page(&k, hot + (uint64_t)i * p.page_size), rounds);
		assert_int_equal(count_page(&k, cold + (uint64_t)i * p.page_size), 1);
	}
	assert_true(atomic_load(&st.src[SRC_PEBS][SS_SAMPLES]) >= (uint64_t)pages * (rounds + 1));
	assert_int_equal(atomic_load(&st.src[SRC_PEBS][SS_SAMPLES]),
			 k.n + atomic_load(&st.src[SRC_PEBS][SS_SAMPLES_DROPPED]));
	assert_int_equal(atomic_load(&st.src[SRC_PEBS][SS_MALFORMED]), 0);
	for (size_t i = 0; i < k.n; i++)
		assert_int_equal(k.ev[i].pid, child);
	perf_sampler_free(s);
	unlink(info);
	unlink(gate);
	rmdir(dir);
	free(k.ev);
}

static void names_the_event_and_errno_when_perf_event_open_fails(void **state)
{
	struct stats st;
	struct perf_sampler_source src = {
	    .source = SRC_IBS, .name = "ibs", .nr_events = 1, .leader = -1, .convert = convert};
	struct perf_sampler_params p = {.ring_pages = 2,
					.page_size = (size_t)sysconf(_SC_PAGESIZE),
					.pid = -1,
					.stats = &st,
					.sink = {.deliver = deliver}};
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN] = "";
	(void)state;

	stats_init(&st, 1);
	src.attr[0] =
	    (struct perf_event_attr){.type = 0x7fff, .config = 0x1234, .sample_period = 1};
	assert_true(perf_sampler_new(&src, &p, &s, err, sizeof(err)) < 0);
	assert_null(s);
	assert_non_null(strstr(err, "ibs: perf_event_open(type 32767, config 0x1234"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(delivers_the_pages_a_child_faults_as_access_events),
	    cmocka_unit_test(names_the_event_and_errno_when_perf_event_open_fails),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
