/* replay, end to end on a recording the real kernel and perf wrote: `perf record -e
 * page-faults -c 1 -d` of helper_fault_pages, whose hot pages fault many times and cold pages
 * once. The hot pages must be the candidates, the cold ones not, and the sample count must
 * match `perf script` on the same file. */
#include <errno.h>
#include <fcntl.h>
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

#include "base/config.h"
#include "base/log.h"
#include "sources/pmu/ibs_decode.h"
#include "sources/pmu/mem_src.h"
#include "daemon/replay.h"

#include <linux/perf_event.h>

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

/* ---- hand-built recordings: IBS op samples with RAW registers, PEBS-like samples ---- */

struct pfile {
	uint8_t b[32768];
	size_t n;
};

static void p64(struct pfile *f, uint64_t v)
{
	memcpy(f->b + f->n, &v, 8);
	f->n += 8;
}

static void p32(struct pfile *f, uint32_t v)
{
	memcpy(f->b + f->n, &v, 4);
	f->n += 4;
}

static void pstr(struct pfile *f, const char *s)
{
	p32(f, 32);
	memset(f->b + f->n, 0, 32);
	memcpy(f->b + f->n, s, strlen(s));
	f->n += 32;
}

static void at64(struct pfile *f, size_t off, uint64_t v)
{
	memcpy(f->b + off, &v, 8);
}

/* A file with one attr (type, sample_type, 136-byte attr) and, when asked, the CPUID and
 * PMU_MAPPINGS feature sections naming type 11 "ibs_op". Samples come from put(). */
static void pfile_build(struct pfile *f, uint32_t type, uint64_t sample_type, const char *cpuid,
			bool mappings, void (*put)(struct pfile *))
{
	size_t attr = 104, data, table, sec[2];

	memset(f, 0, sizeof(*f));
	memcpy(f->b, "PERFILE2", 8);
	at64(f, 8, 104);
	at64(f, 16, 136);
	at64(f, 24, attr);
	at64(f, 32, 136);
	f->n = attr;
	p32(f, type), p32(f, 120);
	p64(f, 0), p64(f, 0x10000), p64(f, sample_type);
	p64(f, 0), p64(f, 1ull << 18); /* read_format; sample_id_all */
	f->n = attr + 136;	       /* the rest of the attr and its empty ids section */
	data = f->n;
	put(f);
	at64(f, 40, data);
	at64(f, 48, f->n - data);
	at64(f, 72, (cpuid ? 1ull << 9 : 0) | (mappings ? 1ull << 16 : 0));
	table = f->n;
	f->n += 16 * (size_t)((cpuid != NULL) + mappings);
	sec[0] = f->n;
	if (cpuid)
		pstr(f, cpuid);
	sec[1] = f->n;
	if (mappings) {
		p32(f, 2);
		p32(f, 4), pstr(f, "cpu");
		p32(f, 11), pstr(f, "ibs_op");
	}
	if (cpuid)
		at64(f, table, sec[0]), at64(f, table + 8, sec[1] - sec[0]), table += 16;
	if (mappings)
		at64(f, table, sec[1]), at64(f, table + 8, f->n - sec[1]);
}

#define IBS_ST                                                                                     \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |                   \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)
#define PID_IBS 4242

static uint64_t ibs_time;

/* One IBS op sample as a kernel before 6.1 wrote it: RAW is u32 size, then u32 caps and the
 * seven op registers (60 bytes: with the size word, 8-byte aligned). */
static void put_ibs(struct pfile *f, const struct ibs_op_regs *r)
{
	uint64_t regs[7] = {r->op_ctl,	 r->op_rip,	r->op_data,    r->op_data2,
			    r->op_data3, r->dc_linaddr, r->dc_physaddr};

	p32(f, PERF_RECORD_SAMPLE), p32(f, (uint32_t)(112u << 16 | 1u)); /* misc 1, size 112 */
	p64(f, 0x401000);
	p32(f, PID_IBS), p32(f, PID_IBS);
	p64(f, ibs_time += 1000000);
	p32(f, 1), p32(f, 0);
	p64(f, 0x10000);
	p32(f, 60);
	p32(f, r->caps);
	memcpy(f->b + f->n, regs, sizeof(regs));
	f->n += sizeof(regs);
}

/* The AMD register values of tests/test_ibs.c: a load that missed L1 and L2. */
static struct ibs_op_regs ibs_load(uint64_t addr, uint64_t data2)
{
	struct ibs_op_regs r = {0};

	r.op_ctl = IBS_OP_VALID | IBS_OP_ENABLE;
	r.op_data3 = IBS_D3_LD_OP | IBS_D3_DC_MISS | IBS_D3_DC_LIN_ADDR_VALID |
		     IBS_D3_DC_PHY_ADDR_VALID | IBS_D3_L2_MISS | (300ull << 32);
	r.op_data2 = data2;
	r.dc_linaddr = addr;
	r.dc_physaddr = 0x20000000 | (addr & 0xfff);
	return r;
}

#define PAGE_REMOTE  0x7f0000010000ull
#define PAGE_LOCAL   0x7f0000020000ull
#define PAGE_L1	     0x7f0000030000ull
#define PAGE_STORE   0x7f0000040000ull
#define PAGE_KERNEL  0xffff888000050000ull
#define PAGE_ERRATUM 0x7f0000060000ull
#define PAGE_NOLIN   0x7f0000070000ull

static void put_ibs_samples(struct pfile *f)
{
	ibs_time = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t off = 8 * (uint64_t)i;
		struct ibs_op_regs r;

		put_ibs(f, &(struct ibs_op_regs){0});
		r = ibs_load(PAGE_REMOTE + off, IBS_SRC_DRAM | IBS_D2_RMT_NODE);
		put_ibs(f, &r);
		r = ibs_load(PAGE_LOCAL + off, IBS_SRC_DRAM);
		put_ibs(f, &r);
		r = ibs_load(PAGE_L1 + off, IBS_SRC_DRAM | IBS_D2_RMT_NODE);
		r.op_data3 &= ~IBS_D3_DC_MISS;
		put_ibs(f, &r);
		r = ibs_load(PAGE_STORE + off, 0);
		r.op_data3 = (r.op_data3 & ~IBS_D3_LD_OP) | IBS_D3_ST_OP;
		put_ibs(f, &r);
		r = ibs_load(PAGE_KERNEL + off, IBS_SRC_DRAM | IBS_D2_RMT_NODE);
		put_ibs(f, &r);
		/* erratum 1293: a software prefetch's data source is not to be trusted on family
		 * 19h models 0-0xF, so "local DRAM" tells nothing there */
		r = ibs_load(PAGE_ERRATUM + off, IBS_SRC_DRAM);
		r.op_data3 |= IBS_D3_SW_PF;
		put_ibs(f, &r);
		r = ibs_load(PAGE_NOLIN + off, IBS_SRC_DRAM | IBS_D2_RMT_NODE);
		r.op_data3 &= ~IBS_D3_DC_LIN_ADDR_VALID;
		put_ibs(f, &r);
	}
}

/* Runs replay on f (threshold 4) into res; also checks the sample count with perf script
 * when perf reads the file. */
static void replay_pfile(const struct pfile *f, struct result *res)
{
	char path[] = "/tmp/pghotd-replay-synth-XXXXXX";
	struct pghotd_config *cfg = NULL;
	int fd = mkstemp(path);
	FILE *out = tmpfile();
	char cmd[256], line[64];
	FILE *p;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, f->b, f->n), (ssize_t)f->n);
	close(fd);
	assert_non_null(out);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->promotion.threshold = 4;
	assert_int_equal(replay_run(path, cfg, out), 0);
	parse_output(out, res);
	snprintf(cmd, sizeof(cmd),
		 "command -v perf >/dev/null && perf script -f -i %s -F pid 2>/dev/null | wc -l",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (fgets(line, sizeof(line), p) && strtoull(line, NULL, 10) > 0)
		assert_int_equal(res->samples, strtoull(line, NULL, 10));
	pclose(p);
	unlink(path);
	config_free(cfg);
	fclose(out);
}

static void assert_candidate(const struct result *res, uint64_t page, bool want)
{
	const struct promote *p = find(res, PID_IBS, page);

	if (want && !p)
		fail_msg("page 0x%" PRIx64 " is not a candidate", page);
	if (!want && p)
		fail_msg("page 0x%" PRIx64 " should not be a candidate", page);
	if (p)
		assert_int_equal(p->samples, 5);
}

static void decodes_ibs_raw_samples_of_an_ibs_op_recording(void **state)
{
	static struct pfile f;
	struct result *res = calloc(1, sizeof(*res));
	(void)state;

	assert_non_null(res);
	pfile_build(&f, 11, IBS_ST, "AuthenticAMD,25,1,1", true, put_ibs_samples);
	replay_pfile(&f, res);
	assert_int_equal(res->samples, 40);
	assert_candidate(res, PAGE_REMOTE, true);
	assert_candidate(res, PAGE_STORE, true);   /* a store's level is unknown: slow */
	assert_candidate(res, PAGE_ERRATUM, true); /* data source not trusted on this CPU */
	assert_candidate(res, PAGE_LOCAL, false);
	assert_candidate(res, PAGE_L1, false);
	assert_candidate(res, PAGE_KERNEL, false);
	assert_candidate(res, PAGE_NOLIN, false);
	assert_int_equal(res->candidates, 3);

	/* the same registers from a Zen 3 without the erratum: local DRAM is believed */
	pfile_build(&f, 11, IBS_ST, "AuthenticAMD,25,33,1", true, put_ibs_samples);
	replay_pfile(&f, res);
	assert_candidate(res, PAGE_ERRATUM, false);
	assert_int_equal(res->candidates, 2);

	/* without PMU_MAPPINGS nothing says type 11 is ibs_op: no ADDR, nothing to promote */
	pfile_build(&f, 11, IBS_ST, "AuthenticAMD,25,1,1", false, put_ibs_samples);
	replay_pfile(&f, res);
	assert_int_equal(res->samples, 40);
	assert_int_equal(res->candidates, 0);
	free(res);
}

#define PEBS_ST                                                                                    \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |            \
	 PERF_SAMPLE_PHYS_ADDR)
#define DSRC(lvl, num, rem)                                                                        \
	((uint64_t)PERF_MEM_OP_LOAD | (uint64_t)(lvl) << MEM_SRC_LVL_SHIFT |                       \
	 (uint64_t)(num) << MEM_SRC_LVLNUM_SHIFT | (uint64_t)(rem) << MEM_SRC_REMOTE_SHIFT)

static void put_pebs(struct pfile *f, uint64_t addr, uint64_t dsrc, uint64_t phys)
{
	p32(f, PERF_RECORD_SAMPLE), p32(f, (uint32_t)(48u << 16 | 2u));
	p32(f, PID_IBS), p32(f, PID_IBS);
	p64(f, ibs_time += 1000000);
	p64(f, addr), p64(f, dsrc), p64(f, phys);
}

static void put_pebs_samples(struct pfile *f)
{
	ibs_time = 0;
	for (uint64_t i = 0; i < 5; i++) {
		/* the same physical address on both: it does not decide */
		put_pebs(f, PAGE_REMOTE + 8 * i,
			 DSRC(PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_HIT, PERF_MEM_LVLNUM_RAM, 1),
			 0x1000);
		put_pebs(f, PAGE_LOCAL + 8 * i,
			 DSRC(PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT, PERF_MEM_LVLNUM_RAM, 0),
			 0x1000);
		put_pebs(f, PAGE_STORE + 8 * i, DSRC(PERF_MEM_LVL_NA, PERF_MEM_LVLNUM_CXL, 0),
			 0x1000);
	}
}

static void judges_pebs_samples_by_data_source_not_physical_address(void **state)
{
	static struct pfile f;
	struct result *res = calloc(1, sizeof(*res));
	(void)state;

	assert_non_null(res);
	pfile_build(&f, 4, PEBS_ST, "GenuineIntel,6,85,4", true, put_pebs_samples);
	replay_pfile(&f, res);
	assert_int_equal(res->samples, 15);
	assert_candidate(res, PAGE_REMOTE, true);
	assert_candidate(res, PAGE_STORE, true); /* CXL */
	assert_candidate(res, PAGE_LOCAL, false);
	assert_int_equal(res->candidates, 2);
	free(res);
}

/* Replays path with stdin on fd (-1: left alone); the result, and the log in logbuf. */
static int replay_with_stdin(const char *path, int fd, char *logbuf, size_t len)
{
	struct pghotd_config *cfg = NULL;
	FILE *out = tmpfile(), *log = fmemopen(logbuf, len, "w");
	int saved = dup(0), r;

	assert_non_null(out);
	assert_non_null(log);
	assert_int_equal(config_new_defaults(&cfg), 0);
	if (fd >= 0)
		assert_int_equal(dup2(fd, 0), 0);
	log_set_stream(log);
	alarm(5); /* a replay that opened a FIFO or pipe as a file would block or call it empty */
	r = replay_run(path, cfg, out);
	alarm(0);
	log_set_stream(NULL);
	fclose(log);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	config_free(cfg);
	fclose(out);
	return r;
}

static void refuses_a_fifo_or_stdin_on_a_pipe_at_once_and_reads_stdin_on_a_file(void **state)
{
	char dir[] = "/tmp/pghotd-replay-odd-XXXXXX", fifo[64], data[64], logbuf[1024] = "";
	static struct pfile f;
	int fds[2], fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(replay_with_stdin(fifo, -1, logbuf, sizeof(logbuf)), -EBADFD);
	assert_non_null(strstr(logbuf, fifo));
	assert_non_null(strstr(logbuf, "not a regular file"));

	assert_int_equal(pipe(fds), 0);
	assert_int_equal(replay_with_stdin("/dev/stdin", fds[0], logbuf, sizeof(logbuf)), -EBADFD);
	assert_non_null(strstr(logbuf, "cannot open /dev/stdin: not a regular file"));
	close(fds[0]);
	close(fds[1]);

	pfile_build(&f, 4, PEBS_ST, "GenuineIntel,6,85,4", true, put_pebs_samples);
	snprintf(data, sizeof(data), "%s/rec.data", dir);
	fd = open(data, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, f.b, f.n), (ssize_t)f.n);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	assert_int_equal(replay_with_stdin("/dev/stdin", fd, logbuf, sizeof(logbuf)), 0);
	close(fd);
	assert_int_equal(unlink(data) | unlink(fifo) | rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(promotes_the_repeatedly_faulted_pages_and_not_the_others),
	    cmocka_unit_test(rejects_a_truncated_recording_with_its_offset),
	    cmocka_unit_test(decodes_ibs_raw_samples_of_an_ibs_op_recording),
	    cmocka_unit_test(judges_pebs_samples_by_data_source_not_physical_address),
	    cmocka_unit_test(refuses_a_fifo_or_stdin_on_a_pipe_at_once_and_reads_stdin_on_a_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
