/* replay, end to end on a recording the real kernel and perf wrote: `perf record -e
 * page-faults -c 1 -d` of helper_fault_pages, whose hot pages fault many times and cold pages
 * once. The hot pages must be the candidates, the cold ones not, and the sample count must
 * match `perf script` on the same file. */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "log.h"
#include "replay.h"

struct recording {
	char dir[64];
	char data[128];
	char info[128];
	int pid, pages, rounds;
	uint64_t hot, cold;
};

struct promote {
	int pid;
	uint64_t addr;
	uint64_t samples;
	int target;
};

struct result {
	int n;
	struct promote p[4096];
	uint64_t records, samples, lost, candidates;
	bool summary;
};

static void helper_path(char *buf, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	assert_true(n > 0);
	self[n] = 0;
	snprintf(buf, len, "%s/helper_fault_pages", dirname(self));
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

/* Records the helper; returns false (after printing why) when this kernel or user cannot. */
static bool record(struct recording *rec)
{
	char helper[PATH_MAX], cmd[2 * PATH_MAX], log[160];
	int st;

	if (system("command -v perf >/dev/null 2>&1") != 0) {
		printf("skipped: perf is not installed\n");
		return false;
	}
	strcpy(rec->dir, "/tmp/pghotd-replay-XXXXXX");
	assert_non_null(mkdtemp(rec->dir));
	snprintf(rec->data, sizeof(rec->data), "%s/perf.data", rec->dir);
	snprintf(rec->info, sizeof(rec->info), "%s/info", rec->dir);
	snprintf(log, sizeof(log), "%s/perf.log", rec->dir);
	helper_path(helper, sizeof(helper));
	snprintf(cmd, sizeof(cmd), "perf record -q -e page-faults -c 1 -d -o %s -- %s %s >%s 2>&1",
		 rec->data, helper, rec->info, log);
	st = system(cmd);
	if (st != 0) {
		const char *why = slurp(log);
		if (strstr(why, "ermission") || strstr(why, "No such file") ||
		    strstr(why, "not supported")) {
			printf("skipped: perf record cannot open page-faults here: %s\n", why);
			return false;
		}
		fail_msg("perf record failed (%d): %s", st, why);
	}
	assert_int_equal(sscanf(slurp(rec->info),
				"pid=%d hot=%" SCNx64 " cold=%" SCNx64 " pages=%d rounds=%d",
				&rec->pid, &rec->hot, &rec->cold, &rec->pages, &rec->rounds),
			 5);
	return true;
}

static void cleanup(struct recording *rec)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", rec->dir);
	if (system(cmd) != 0)
		printf("could not remove %s\n", rec->dir);
}

static void parse_output(FILE *f, struct result *res)
{
	char line[256];

	rewind(f);
	memset(res, 0, sizeof(*res));
	while (fgets(line, sizeof(line), f)) {
		struct promote p;

		assert_false(res->summary); /* the summary is the last line */
		if (sscanf(line, "promote pid=%d addr=0x%" SCNx64 " samples=%" SCNu64 " target=%d",
			   &p.pid, &p.addr, &p.samples, &p.target) == 4) {
			assert_true(res->n < 4096);
			res->p[res->n++] = p;
		} else if (sscanf(line,
				  "replay: records=%" SCNu64 " samples=%" SCNu64 " lost=%" SCNu64
				  " candidates=%" SCNu64,
				  &res->records, &res->samples, &res->lost,
				  &res->candidates) == 4) {
			res->summary = true;
		} else {
			fail_msg("unexpected output line: %s", line);
		}
	}
	assert_true(res->summary);
}

static const struct promote *find(const struct result *res, int pid, uint64_t addr)
{
	for (int i = 0; i < res->n; i++)
		if (res->p[i].pid == pid && res->p[i].addr == addr)
			return &res->p[i];
	return NULL;
}

static uint64_t perf_script_samples(const char *data)
{
	char cmd[256], line[64];
	uint64_t n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "perf script -f -i %s -F pid,addr 2>/dev/null | wc -l", data);
	p = popen(cmd, "r");
	assert_non_null(p);
	assert_non_null(fgets(line, sizeof(line), p));
	assert_int_equal(pclose(p), 0);
	n = strtoull(line, NULL, 10);
	return n;
}

static void promotes_the_repeatedly_faulted_pages_and_not_the_others(void **state)
{
	struct recording rec = {0};
	struct pghotd_config *cfg = NULL;
	struct result *res = calloc(1, sizeof(*res));
	long page = sysconf(_SC_PAGESIZE);
	FILE *out = tmpfile();
	(void)state;

	assert_non_null(res);
	assert_non_null(out);
	if (!record(&rec)) {
		free(res);
		fclose(out);
		skip();
		return;
	}
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.threshold = 4; /* hot pages fault `rounds` (8) times, cold ones once */
	cfg->promotion.target_nodes.n = 1;
	cfg->promotion.target_nodes.node[0] = 3;
	assert_int_equal(replay_run(rec.data, cfg, out), 0);
	parse_output(out, res);

	assert_int_equal(res->samples, perf_script_samples(rec.data));
	assert_true(res->records > res->samples); /* comm, mmap, ... records too */
	assert_int_equal(res->candidates, (uint64_t)res->n);
	for (int i = 0; i < rec.pages; i++) {
		const struct promote *p = find(res, rec.pid, rec.hot + (uint64_t)i * page);

		if (!p)
			fail_msg("hot page %d (0x%" PRIx64 ") is not a candidate", i,
				 rec.hot + (uint64_t)i * page);
		assert_int_equal(p->samples, rec.rounds);
		assert_int_equal(p->target, 3);
		assert_null(find(res, rec.pid, rec.cold + (uint64_t)i * page));
	}
	config_free(cfg);
	fclose(out);
	free(res);
	cleanup(&rec);
}

static void rejects_a_truncated_recording_with_its_offset(void **state)
{
	struct recording rec = {0};
	struct pghotd_config *cfg = NULL;
	char cut[160], cmd[400], logbuf[2048] = "";
	FILE *out = tmpfile(), *log = fmemopen(logbuf, sizeof(logbuf), "w");
	struct stat st;
	(void)state;

	assert_non_null(out);
	if (!record(&rec)) {
		fclose(out);
		fclose(log);
		skip();
		return;
	}
	assert_int_equal(stat(rec.data, &st), 0);
	snprintf(cut, sizeof(cut), "%s/cut.data", rec.dir);
	snprintf(cmd, sizeof(cmd), "head -c %lld %s > %s", (long long)st.st_size / 2, rec.data,
		 cut);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(config_new_defaults(&cfg), 0);
	log_set_stream(log);
	assert_int_equal(replay_run(cut, cfg, out), -EBADMSG);
	log_set_stream(NULL);
	fclose(log);
	assert_int_equal(ftell(out), 0); /* nothing printed */
	assert_non_null(strstr(logbuf, "offset "));
	config_free(cfg);
	fclose(out);
	cleanup(&rec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(promotes_the_repeatedly_faulted_pages_and_not_the_others),
	    cmocka_unit_test(rejects_a_truncated_recording_with_its_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
