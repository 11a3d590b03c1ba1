/* The Accessed-bit source: pagemap/kpageflags/maps/stat decoding, page_idle bitmap I/O with
 * short counts, and scan rounds over generated procfs trees (maps, stat, pagemap, kpageflags)
 * and a bitmap file image, with the topology of tests/fixtures/abit-sysfs: node 0 has the CPUs
 * and PFNs 0-1023, node 1 is memory-only (slow) with PFNs 1024-2047.
 *
 * The bitmap image stands in for the kernel: a round's mark sets the tracked pages' bits, and
 * a test "accesses" a page by clearing its bit, as the kernel does on the next read-back. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "abit_idle.h"
#include "abit_regions.h"
#include "abit_sample.h"
#include "cold_list.h"
#include "config.h"
#include "config_pub.h"
#include "hot_table.h"
#include "idle_bitmap.h"
#include "log.h"
#include "pagemap.h"
#include "procs.h"
#include "promoter.h"
#include "stats.h"
#include "topology.h"

#define NR_PFNS	   4096
#define SLOW_PFN   1024 /* first PFN of node 1 */
#define KPF(b)	   (UINT64_C(1) << (b))
#define LRU	   KPF(KPF_LRU)
#define THP_HEAD   (KPF(KPF_THP) | KPF(KPF_COMPOUND_HEAD) | LRU)
#define THP_TAIL   (KPF(KPF_THP) | KPF(KPF_COMPOUND_TAIL))
#define VA	   UINT64_C(0x400000) /* a 2 MiB-aligned address with a small pagemap offset */
#define PIECE	   (UINT64_C(2) << 20)
#define MAX_EVENTS 4096

/* ---- fixture ---------------------------------------------------------------------------- */

struct fx {
	char root[64], procfs[96], sysfs[96];
	struct topology *topo;
	struct pghotd_config *cfg;
	struct stats stats;
	struct abit *a;
	struct access_event ev[MAX_EVENTS];
	size_t nev;
	pid_t remove_on_event; /* delete this pid's directory when an event of pid 100 arrives */
	struct idle_io_ops ops;
	uint64_t clock_ns;
	size_t max_io; /* 0: no limit */
	unsigned io_calls;
	uint64_t io_tick_ns; /* the clock advances this much at each pread and pwrite */
	bool or_writes; /* writes set bits, as the kernel's bitmap does, instead of replacing */
	/* With or_writes, as the kernel: a page page_idle does not track (kpageflags: not an LRU
	 * page nor a THP head) ignores writes to its bit and reads 0. */
	bool untracked_read_0;
	ino_t bitmap_ino;
	uint64_t seed;		/* region sampling's */
	uint64_t pieces_cap;	/* the source's cap (deps.pieces_cap); 0: the default */
	struct cold_list *cold; /* demotion tests: where cold fast pages go */
	struct procs *registry; /* demotion tests: handles for the offers */
};

static void fx_path(const struct fx *f, char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fx_path(const struct fx *f, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s/", f->root);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

static void pwrite_u64(const char *path, uint64_t off, uint64_t v)
{
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, 8, (off_t)off), 8);
	close(fd);
}

static uint64_t pread_u64(const char *path, uint64_t off)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 8, (off_t)off), 8);
	close(fd);
	return v;
}

static void fx_sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
		    size_t n)
{
	struct fx *f = ctx;

	assert_ptr_equal(cfg, f->cfg);
	for (size_t i = 0; i < n; i++) {
		assert_true(f->nev < MAX_EVENTS);
		f->ev[f->nev++] = ev[i];
		if (f->remove_on_event && ev[i].pid == 100) {
			char cmd[256];

			snprintf(cmd, sizeof(cmd), "rm -rf %s/%d", f->procfs,
				 (int)f->remove_on_event);
			assert_int_equal(system(cmd), 0);
			f->remove_on_event = 0;
		}
	}
}

/* The bits of the bitmap word at off whose pages page_idle tracks (see untracked_read_0). */
static uint64_t fx_tracked(struct fx *f, uint64_t off)
{
	char path[256];
	uint64_t flags[64] = {0}, mask = 0;
	int fd;

	fx_path(f, path, sizeof(path), "proc/kpageflags");
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_true(pread(fd, flags, sizeof(flags), (off_t)(off * 64)) >= 0);
	close(fd);
	for (int i = 0; i < 64; i++) {
		enum kpf_class c = kpf_classify(flags[i]);

		mask |= (uint64_t)(c == KPF_CLASS_PAGE || c == KPF_CLASS_THP_HEAD) << i;
	}
	return mask;
}

/* The fixture's bitmap file, under untracked_read_0. */
static bool fx_kernel_bitmap(struct fx *f, int fd, size_t len)
{
	struct stat st;

	return f->or_writes && f->untracked_read_0 && len % 8 == 0 && fstat(fd, &st) == 0 &&
	       st.st_ino == f->bitmap_ino;
}

/* Test I/O: the real calls, optionally cut to max_io bytes, and a clock the test moves. */
static ssize_t fx_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct fx *f = ctx;
	ssize_t r;

	f->io_calls++;
	f->clock_ns += f->io_tick_ns;
	if (f->max_io && len > f->max_io)
		len = f->max_io;
	r = idle_io_real_ops.pread(NULL, fd, buf, len, off);
	if (r > 0 && fx_kernel_bitmap(f, fd, len))
		for (size_t i = 0; i < (size_t)r / 8; i++)
			((uint64_t *)buf)[i] &= fx_tracked(f, off + i * 8);
	return r;
}

static ssize_t fx_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct fx *f = ctx;
	uint64_t w[IDLE_BITMAP_IO_WORDS];
	bool kernel = fx_kernel_bitmap(f, fd, len);

	f->io_calls++;
	f->clock_ns += f->io_tick_ns;
	if (f->max_io && len > f->max_io)
		len = f->max_io;
	/* Only the bitmap is ever written. */
	if (f->or_writes && len % 8 == 0 && len <= sizeof(w)) {
		memset(w, 0, sizeof(w));
		assert_true(idle_io_real_ops.pread(NULL, fd, w, len, off) >= 0);
		for (size_t i = 0; i < len / 8; i++)
			w[i] |= ((const uint64_t *)buf)[i] &
				(kernel ? fx_tracked(f, off + i * 8) : ~0ull);
		buf = w;
	}
	return idle_io_real_ops.pwrite(NULL, fd, buf, len, off);
}

/* Without a block map the node comes from move_pages: here, the first page of each region
 * is on node 1 and every other page on node 0. */
static long fx_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
{
	struct fx *f = ctx;

	(void)pid;
	f->io_calls++;
	for (unsigned long i = 0; i < n; i++)
		status[i] = (uintptr_t)pages[i] % PIECE == 0 ? 1 : 0;
	return 0;
}

static uint64_t fx_now(void *ctx)
{
	return ((struct fx *)ctx)->clock_ns;
}

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char path[256], fixture[512];
	static uint64_t zeros[NR_PFNS];
	const char *dir = getenv("PGHOTD_FIXTURES");
	struct stat st;

	assert_non_null(f);
	assert_non_null(dir);
	snprintf(f->root, sizeof(f->root), "/tmp/test_abit.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->procfs, sizeof(f->procfs), "%s/proc", f->root);
	snprintf(f->sysfs, sizeof(f->sysfs), "%s/sys", f->root);
	fx_path(f, path, sizeof(path), "proc");
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "sys");
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "sys/kernel");
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "sys/kernel/mm");
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle");
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	write_file(path, zeros, NR_PFNS / 8);
	assert_int_equal(stat(path, &st), 0);
	f->bitmap_ino = st.st_ino;
	f->untracked_read_0 = true;
	fx_path(f, path, sizeof(path), "proc/kpageflags");
	write_file(path, zeros, sizeof(zeros));

	snprintf(fixture, sizeof(fixture), "%s/abit-sysfs", dir);
	assert_int_equal(topology_load(fixture, &f->topo), 0);
	assert_int_equal(config_new_defaults(&f->cfg), 0);
	f->cfg->topo = f->topo;
	/* The full scan's tests; those of mode regions (the default) set it. */
	f->cfg->sources.abit.mode = ABIT_MODE_FULL;
	stats_init(&f->stats, 2);
	f->ops = (struct idle_io_ops){
	    .pread = fx_pread, .pwrite = fx_pwrite, .now_ns = fx_now, .ctx = f};
	f->clock_ns = UINT64_C(1000000000);
	*state = f;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	abit_free(f->a);
	cold_list_free(f->cold);
	procs_free(f->registry);
	log_set_stream(NULL);
	config_free(f->cfg); /* does not free topo */
	topology_free(f->topo);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void fx_new_abit(struct fx *f)
{
	struct abit_deps d = {
	    .procfs_root = f->procfs,
	    .sysfs_root = f->sysfs,
	    .sink = {.deliver = fx_sink, .ctx = f},
	    .stats = &f->stats,
	    .ops = &f->ops,
	    .self_pid = -1,
	    .seed = f->seed,
	    .pieces_cap = f->pieces_cap,
	    .cold = f->cold,
	    .procs = f->registry,
	};

	assert_int_equal(abit_new(&d, &f->a), 0);
}

/* A process with one VMA [start, end), last run on cpu. */
static void fx_proc(struct fx *f, pid_t pid, const char *comm, int cpu, uint64_t start,
		    uint64_t end)
{
	char path[256], text[512];
	int n = 0;

	fx_path(f, path, sizeof(path), "proc/%d", (int)pid);
	assert_int_equal(mkdir(path, 0755), 0);
	fx_path(f, path, sizeof(path), "proc/%d/comm", (int)pid);
	snprintf(text, sizeof(text), "%s\n", comm);
	write_file(path, text, strlen(text));
	fx_path(f, path, sizeof(path), "proc/%d/statm", (int)pid);
	write_file(path, "1000 500 100 10 0 400 0\n", 24);
	fx_path(f, path, sizeof(path), "proc/%d/cgroup", (int)pid);
	write_file(path, "0::/test.slice\n", 15);
	/* Fields 3..52 after "(comm)": 22 is the start time, 39 the last CPU. */
	n = snprintf(text, sizeof(text), "%d (%s) S", (int)pid, comm);
	for (int field = 4; field <= 52; field++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " %d",
			      field == 22   ? 4242
			      : field == 39 ? cpu
					    : 0);
	text[n++] = '\n';
	fx_path(f, path, sizeof(path), "proc/%d/stat", (int)pid);
	write_file(path, text, (size_t)n);
	fx_path(f, path, sizeof(path), "proc/%d/maps", (int)pid);
	snprintf(text, sizeof(text),
		 "%llx-%llx rw-p 00000000 00:00 0 \n"
		 "7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0                          "
		 "[vvar]\n",
		 (unsigned long long)start, (unsigned long long)end);
	write_file(path, text, strlen(text));
	/* Pagemap covering every page up to end, none present. */
	fx_path(f, path, sizeof(path), "proc/%d/pagemap", (int)pid);
	write_file(path, "", 0);
	assert_int_equal(truncate(path, (off_t)(end / 4096 * 8)), 0);
}

/* Maps pfn at vaddr in pid, mapped by pid alone (PAGEMAP_EXCLUSIVE), with kpageflags flags. */
static void fx_map(struct fx *f, pid_t pid, uint64_t vaddr, uint64_t pfn, uint64_t flags)
{
	char path[256];

	fx_path(f, path, sizeof(path), "proc/%d/pagemap", (int)pid);
	pwrite_u64(path, vaddr / 4096 * 8, pfn | PAGEMAP_PRESENT | PAGEMAP_EXCLUSIVE);
	fx_path(f, path, sizeof(path), "proc/kpageflags");
	pwrite_u64(path, pfn * 8, flags);
}

static void fx_unmap(struct fx *f, pid_t pid, uint64_t vaddr)
{
	char path[256];

	fx_path(f, path, sizeof(path), "proc/%d/pagemap", (int)pid);
	pwrite_u64(path, vaddr / 4096 * 8, 0);
}

static bool fx_idle_bit(struct fx *f, uint64_t pfn)
{
	char path[256];

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	return (pread_u64(path, pfn / 64 * 8) >> (pfn % 64)) & 1;
}

/* What the kernel does when the page is accessed: its idle bit reads 0. */
static void fx_access(struct fx *f, uint64_t pfn)
{
	char path[256];
	uint64_t w;

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	w = pread_u64(path, pfn / 64 * 8);
	pwrite_u64(path, pfn / 64 * 8, w & ~(UINT64_C(1) << (pfn % 64)));
}

static int fx_round(struct fx *f)
{
	f->clock_ns += (uint64_t)f->cfg->sources.abit.scan_interval_ms * 1000000u;
	return abit_round(f->a, f->cfg);
}

/* One scan interval: ABIT_HOT_SPEEDUP rounds, so a region that cooled down is scanned once.
 * Returns the accesses found, or the first error. */
static int fx_interval(struct fx *f)
{
	int total = 0;

	for (int i = 0; i < ABIT_HOT_SPEEDUP; i++) {
		int r = fx_round(f);
		if (r < 0)
			return r;
		total += r;
	}
	return total;
}

/* One step between rounds of mode full: a quarter of a round (abit_step()). */
static int fx_step(struct fx *f)
{
	f->clock_ns += (uint64_t)f->cfg->sources.abit.scan_interval_ms * 1000000u /
		       ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND;
	return abit_step(f->a, f->cfg);
}

static uint64_t fx_stat(struct fx *f, enum stat_src_counter c)
{
	return atomic_load(&f->stats.src[SRC_ABIT][c]);
}

/* ---- decoding --------------------------------------------------------------------------- */

static void test_pagemap_entry_gives_pfn_only_when_present(void **state)
{
	(void)state;
	uint64_t e = PAGEMAP_PRESENT | PAGEMAP_EXCLUSIVE | PAGEMAP_SOFT_DIRTY | 0x123456;

	assert_true(pagemap_present(e));
	assert_int_equal(pagemap_pfn(e), 0x123456);
	assert_int_equal(pagemap_pfn(PAGEMAP_PFN_MASK | PAGEMAP_PRESENT), PAGEMAP_PFN_MASK);
	/* A swapped page's low bits hold the swap type and offset, not a PFN. */
	assert_false(pagemap_present(PAGEMAP_SWAPPED | 0x55));
	assert_int_equal(pagemap_pfn(PAGEMAP_SWAPPED | 0x55), 0);
}

static void test_kpageflags_classify_lru_pages_and_thp_heads_and_tails(void **state)
{
	(void)state;
	assert_int_equal(kpf_classify(LRU | KPF(KPF_ANON)), KPF_CLASS_PAGE);
	assert_int_equal(kpf_classify(THP_HEAD), KPF_CLASS_THP_HEAD);
	assert_int_equal(kpf_classify(THP_TAIL), KPF_CLASS_THP_TAIL);
	/* A tail is a tail even when the LRU bit shows through from its head. */
	assert_int_equal(kpf_classify(THP_TAIL | LRU), KPF_CLASS_THP_TAIL);
	assert_int_equal(kpf_classify(KPF(KPF_ANON)), KPF_CLASS_UNTRACKABLE);
	/* hugetlb: compound head but not THP and off the LRU. */
	assert_int_equal(kpf_classify(KPF(KPF_HUGE) | KPF(KPF_COMPOUND_HEAD)),
			 KPF_CLASS_UNTRACKABLE);
}

/* maps_parse_line() of a whole NUL-terminated line. */
static int parse_line(const char *line, struct maps_vma *v)
{
	return maps_parse_line(line, strlen(line), v);
}

static void test_maps_line_parses_range_permissions_and_special_vmas(void **state)
{
	(void)state;
	struct maps_vma v;

	assert_int_equal(
	    parse_line("55d0c0a00000-55d0c0c00000 rw-p 00000000 00:00 0    [heap]\n", &v), 0);
	assert_int_equal(v.start, 0x55d0c0a00000);
	assert_int_equal(v.end, 0x55d0c0c00000);
	assert_true(v.readable);
	assert_false(v.special);
	assert_int_equal(parse_line("7ffd1000-7ffd3000 ---p 00000000 00:00 0", &v), 0);
	assert_false(v.readable);
	assert_int_equal(parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   "
				    "               [vsyscall]",
				    &v),
			 0);
	assert_true(v.special);
	assert_int_equal(parse_line("7f00-7e00 rw-p 0 00:00 0", &v), -EINVAL);
	assert_int_equal(parse_line("garbage", &v), -EINVAL);
	assert_int_equal(parse_line("1000-2001 rw-p 0 00:00 0", &v), -EINVAL);
}

/* A maps line is parsed from its own bytes: one placed at the very end of a readable page,
 * followed by an unreadable one, with no newline and no NUL, parses without a fault; the
 * same line inside a much longer text yields the same VMA, and a name cut short at the
 * length is still recognised. */
static void test_maps_line_is_parsed_within_its_length(void **state)
{
	(void)state;
	const char line[] = "7f0000000000-7f0000200000 rw-p 00000000 00:00 0          [vdso]";
	long pg = sysconf(_SC_PAGESIZE);
	char *m =
	    mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct maps_vma v;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memcpy(m + pg - (sizeof(line) - 1), line, sizeof(line) - 1);
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), sizeof(line) - 1, &v), 0);
	assert_int_equal(v.start, 0x7f0000000000);
	assert_int_equal(v.end, 0x7f0000200000);
	assert_true(v.special);
	/* Cut before the name: the same range, not special. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 48, &v), 0);
	assert_false(v.special);
	/* Cut inside the fields: malformed, and nothing past the cut is read. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 20, &v), -EINVAL);
	munmap(m, 2 * (size_t)pg);
}

static void test_stat_line_gives_start_time_and_cpu_past_odd_command_names(void **state)
{
	(void)state;
	char line[512];
	uint64_t start = 7;
	int cpu = 7, n;

	n = snprintf(line, sizeof(line), "77 (a) b) (c ) R");
	for (int field = 4; field <= 52; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %d",
			      field == 22   ? 987654
			      : field == 39 ? 13
					    : field);
	assert_int_equal(stat_parse_start_cpu(line, &start, &cpu), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(cpu, 13);

	start = 7;
	cpu = 7;
	assert_int_equal(stat_parse_start_cpu("77 (short) S 1 2 3\n", &start, &cpu), -EINVAL);
	assert_int_equal(stat_parse_start_cpu("no parenthesis", &start, &cpu), -EINVAL);
	assert_int_equal(start, 7);
	assert_int_equal(cpu, 7);
}

/* ---- bitmap I/O -------------------------------------------------------------------------- */

/* An in-memory page_idle bitmap that moves at most `cap` bytes per call, like the sysfs file
 * (4096) or worse, and ORs written bits in as marking does. */
struct fake_bitmap {
	uint64_t w[2048];
	size_t cap;
	unsigned reads, writes;
	bool stall; /* writes make no progress */
};

static ssize_t fake_pread(void *ctx, int fd, void *buf, size_t len, uint64_t off)
{
	struct fake_bitmap *b = ctx;
	size_t size = sizeof(b->w);

	(void)fd;
	b->reads++;
	if (off % 8 || len % 8)
		return -EINVAL;
	if (off >= size)
		return 0;
	len = len > b->cap ? b->cap : len;
	len = len > size - off ? size - off : len;
	memcpy(buf, (char *)b->w + off, len);
	return (ssize_t)len;
}

static ssize_t fake_pwrite(void *ctx, int fd, const void *buf, size_t len, uint64_t off)
{
	struct fake_bitmap *b = ctx;
	uint64_t v;

	(void)fd;
	b->writes++;
	if (off % 8 || len % 8)
		return -EINVAL;
	if (b->stall)
		return 0;
	len = len > b->cap ? b->cap : len;
	for (size_t i = 0; i < len / 8; i++) {
		memcpy(&v, (const char *)buf + i * 8, 8);
		b->w[off / 8 + i] |= v;
	}
	return (ssize_t)len;
}

static void test_bitmap_transfers_loop_on_short_counts(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	uint64_t out[1000], in[1000];

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	for (size_t i = 0; i < 1000; i++)
		in[i] = i * 0x9e3779b97f4a7c15u;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 7, in, 1000), 0);
	assert_int_equal(b.writes, 2); /* 8000 bytes: 4096 + 3904 */
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 7, out, 1000), 0);
	assert_int_equal(b.reads, 2);
	assert_memory_equal(in, out, sizeof(in));

	/* Three words a call. */
	memset(&b, 0, sizeof(b));
	b.cap = 24;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 0, in, 10), 0);
	assert_int_equal(b.writes, 4);
	memset(out, 0, sizeof(out));
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 0, out, 10), 0);
	assert_int_equal(b.reads, 4);
	assert_memory_equal(in, out, 10 * 8);
}

static void test_bitmap_read_past_the_end_and_stalled_write_fail(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	uint64_t w[4] = {1, 2, 3, 4};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_bitmap_read_words(&ops, 3, 2046, w, 4), -ENXIO);
	b.stall = true;
	assert_int_equal(idle_bitmap_write_words(&ops, 3, 0, w, 4), -EIO);
	assert_int_equal(b.w[0], 0);
}

static void test_words_past_the_end_of_the_bitmap_count_as_idle(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	struct idle_words w = {0};
	/* Words 2046, 2047 exist; 2048 is past the end (a node end not 64-page aligned). */
	uint64_t pfns[] = {2046 * 64, 2047 * 64 + 1, 2048 * 64 + 2};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_words_build(&w, pfns, 3), 0);
	assert_int_equal(idle_words_fetch(&ops, 3, &w), 1);
	assert_false(idle_words_idle(&w, 2046 * 64)); /* read back as 0: accessed */
	assert_true(idle_words_idle(&w, 2048 * 64 + 2));
	b.stall = true; /* the kernel takes nothing past its last full word */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 16), 1);
	idle_words_free(&w);
}

static void test_word_set_sorts_merges_and_marks_in_few_writes(void **state)
{
	(void)state;
	static struct fake_bitmap b;
	struct idle_io_ops ops = {.pread = fake_pread, .pwrite = fake_pwrite, .ctx = &b};
	struct idle_words w = {0};
	/* Unsorted with a duplicate; words 1, 2, 4 and 200. */
	uint64_t pfns[] = {300, 64, 65, 130, 12800, 64, 140};

	memset(&b, 0, sizeof(b));
	b.cap = IDLE_BITMAP_IO_MAX;
	assert_int_equal(idle_words_build(&w, pfns, 7), 0);
	assert_int_equal(w.n, 4);
	assert_int_equal(w.word[0], 1);
	assert_int_equal(w.mask[0], 3);
	assert_int_equal(w.word[1], 2);
	assert_int_equal(w.mask[1], (UINT64_C(1) << 2) | (UINT64_C(1) << 12));
	assert_int_equal(w.word[2], 4);
	assert_int_equal(w.word[3], 200);
	/* Gap of one word between 2 and 4 is merged, 200 is too far. */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 16), 2);
	assert_int_equal(b.w[1], 3);
	assert_int_equal(b.w[3], 0);
	assert_int_equal(b.w[4], UINT64_C(1) << 44);
	assert_int_equal(b.w[200], 1);
	/* Without gaps allowed, three runs: 1-2, 4, 200. */
	assert_int_equal(idle_words_mark(&ops, 3, &w, 0), 3);

	/* Reads cover only consecutive words: 1-2, 4, 200. Page 65 accessed. */
	b.w[1] &= ~UINT64_C(2);
	b.reads = 0;
	assert_int_equal(idle_words_fetch(&ops, 3, &w), 3);
	assert_int_equal(b.reads, 3);
	assert_true(idle_words_idle(&w, 64));
	assert_false(idle_words_idle(&w, 65));
	assert_true(idle_words_idle(&w, 12800));
	assert_false(idle_words_idle(&w, 5000)); /* not in the set */
	idle_words_free(&w);
}

/* ---- demotion candidates ---------------------------------------------------------------- */

#define COLD_MS 5000 /* demotion.min_idle_ms in these tests: five rounds */
/* The age from which an idle fast page is offered: config_demotion_exchange_ms(), the fixture's
 * promotion.window_ms (3000) here. */
#define OFFER_MS 3000

/* The source with a cold list, one slow page and fast pages at VA + 0x1000.. (PFNs 100..). */
static void fx_cold_setup(struct fx *f, int nfast)
{
	assert_int_equal(cold_list_new(64, &f->cold), 0);
	assert_int_equal(procs_new(f->procfs, 16, &f->registry), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 76, LRU);
	for (int i = 0; i < nfast; i++)
		fx_map(f, 100, VA + 0x1000 * (uint64_t)(i + 1), 100 + (uint64_t)i, LRU);
	fx_new_abit(f);
	assert_int_equal(config_demotion_exchange_ms(f->cfg), OFFER_MS);
}

static size_t fx_take_cold(struct fx *f, struct cold_page *out, size_t max)
{
	return cold_list_take(f->cold, 0, f->clock_ns / 1000000, UINT32_MAX, 0, out, max);
}

static void test_fast_pages_are_not_tracked_while_no_node_is_watched(void **state)
{
	struct fx *f = *state;

	fx_cold_setup(f, 3);
	for (int r = 0; r < 10; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_false(fx_idle_bit(f, 100));
	assert_int_equal(cold_list_len(f->cold), 0);
}

static void test_idle_fast_page_of_a_watched_node_is_offered_once_with_its_age(void **state)
{
	struct fx *f = *state;
	struct cold_page c[8];
	uint64_t tracked_ms;
	pid_t pid;

	fx_cold_setup(f, 2);
	cold_list_want(f->cold, UINT64_C(1) << 0);
	assert_int_equal(fx_round(f), 0);
	tracked_ms = f->clock_ns / 1000000;
	assert_int_equal(abit_nr_tracked(f->a), 3);
	assert_true(fx_idle_bit(f, 100));
	/* The second fast page is used every round; the first never. */
	for (int r = 0; r < 12; r++) {
		fx_access(f, 101);
		fx_access(f, SLOW_PFN + 76);
		assert_true(fx_round(f) >= 0);
	}
	/* Slow accesses still reach the sink; fast ones never do. */
	assert_true(f->nev >= 1);
	for (size_t i = 0; i < f->nev; i++)
		assert_int_equal(f->ev[i].vaddr, VA);
	assert_int_equal(fx_take_cold(f, c, 8), 1);
	assert_int_equal(c[0].pid, 100);
	/* With the procs registry, the offer names its process as the promoter checks it. */
	assert_true(c[0].proc > 0);
	assert_int_equal(procs_pid(f->registry, c[0].proc, &pid), 0);
	assert_int_equal(pid, 100);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
	assert_int_equal(c[0].node, 0);
	assert_int_equal(c[0].size, HOT_SIZE_BASE);
	assert_true(c[0].idle_since_ms <= tracked_ms + 1 && c[0].idle_since_ms + 1 >= tracked_ms);
	assert_true(c[0].offered_ms - c[0].idle_since_ms >= OFFER_MS);
	/* Offered once: still idle, but not again. */
	for (int r = 0; r < 12; r++) {
		fx_access(f, 101);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(cold_list_len(f->cold), 0);
}

/* A page another process maps too (no PAGEMAP_EXCLUSIVE) is never offered: move_pages(2)
 * refuses to move it (-EACCES). Its idle neighbour mapped once is offered. */
static void test_idle_shared_fast_page_is_not_offered(void **state)
{
	struct fx *f = *state;
	struct cold_page c[8];
	char path[256];

	fx_cold_setup(f, 2);
	fx_path(f, path, sizeof(path), "proc/100/pagemap");
	pwrite_u64(path, (VA + 0x2000) / 4096 * 8, 101 | PAGEMAP_PRESENT); /* shared */
	cold_list_want(f->cold, UINT64_C(1) << 0);
	for (int r = 0; r < 13; r++) {
		fx_access(f, SLOW_PFN + 76);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(fx_take_cold(f, c, 8), 1);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
}

static void test_access_restarts_the_idle_time_and_a_new_epoch_offers_again(void **state)
{
	struct fx *f = *state;
	struct cold_page c[4];
	int rounds = 0;

	fx_cold_setup(f, 1);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 3; r++)
		assert_true(fx_round(f) >= 0);
	fx_access(f, 100); /* used at 3 s: its idle time starts again */
	while (cold_list_len(f->cold) == 0 && rounds < 40) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	/* Found no sooner than OFFER_MS after the access was seen. */
	assert_true(c[0].offered_ms - c[0].idle_since_ms >= OFFER_MS);
	assert_true(rounds >= OFFER_MS / 1000);
	/* Taken and not moved (say the bucket was empty): offered again after a re-offer. */
	for (int r = 0; r < 5; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(cold_list_len(f->cold), 0);
	cold_list_reoffer(f->cold);
	for (int r = 0; r < 40 && cold_list_len(f->cold) == 0; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	assert_int_equal(c[0].vaddr, VA + 0x1000);
}

/* A longer promotion.window_ms makes the offer wait longer: a page idle for less than the
 * window could still be counted hot, so it is not traded for one. */
static void test_longer_promotion_window_holds_the_offer_back(void **state)
{
	struct fx *f = *state;
	int rounds = 0;

	fx_cold_setup(f, 1);
	f->cfg->promotion.window_ms = OFFER_MS + 1000; /* still under demotion.min_idle_ms */
	cold_list_want(f->cold, 1);
	assert_int_equal(fx_round(f), 0); /* first seen where it is: its idle time starts */
	while (cold_list_len(f->cold) == 0 && rounds < 60) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	assert_int_equal(cold_list_len(f->cold), 1);
	assert_true(rounds >= (OFFER_MS + 1000) / 1000);
}

static void test_fast_pages_appearing_do_not_quicken_the_scans_of_their_region(void **state)
{
	struct fx *f = *state;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 100, LRU);
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	/* A new fast page every round (the process allocating on its fast node): the region
	 * still backs off as one without slow pages does. */
	for (int r = 1; r <= 40; r++) {
		fx_map(f, 100, VA + 0x1000 * (uint64_t)r, 100 + (uint64_t)r, LRU);
		assert_true(fx_round(f) >= 0);
	}
	assert_true(abit_nr_tracked(f->a) > 1);
	assert_true(abit_piece_interval(f->a, 100, VA) > ABIT_HOT_SPEEDUP);
}

static void test_region_of_watched_fast_pages_is_seen_every_quarter_idle_time(void **state)
{
	struct fx *f = *state;
	/* Idle time 16 scan intervals: a quarter is 4 intervals, 8 rounds of half an interval
	 * (without the cap the region would back off to ABIT_MAX_INTERVAL rounds). */
	const uint16_t cap = 8;
	size_t offered = 0;
	struct cold_page c;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	f->cfg->demotion.min_idle_ms = 16 * f->cfg->sources.abit.scan_interval_ms;
	f->cfg->promotion.cooldown_ms = f->cfg->demotion.min_idle_ms;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 100, LRU); /* one fast page, never used: nothing slow to speed up for */
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 8 * ABIT_MAX_INTERVAL; r++) {
		assert_true(fx_round(f) >= 0);
		assert_true(abit_piece_interval(f->a, 100, VA) <= cap);
		/* Each offer taken and not moved, and re-offered: it comes at each scan. */
		offered += cold_list_take(f->cold, 0, f->clock_ns / 1000000, UINT32_MAX, 0, &c, 1);
		cold_list_reoffer(f->cold);
	}
	assert_int_equal(abit_piece_interval(f->a, 100, VA), cap);
	/* Cold after 32 rounds, then offered at every scan: one in cap rounds. */
	assert_true(offered >= (8 * ABIT_MAX_INTERVAL - 32) / cap - 1);
}

static void test_thp_head_on_a_fast_node_is_offered_as_huge(void **state)
{
	struct fx *f = *state;
	struct cold_page c[4];

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, 512, THP_HEAD);
	for (uint64_t i = 1; i < 512; i++)
		fx_map(f, 100, VA + i * 0x1000, 512 + i, THP_TAIL);
	fx_new_abit(f);
	cold_list_want(f->cold, 1);
	for (int r = 0; r < 40 && cold_list_len(f->cold) == 0; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(fx_take_cold(f, c, 4), 1);
	assert_int_equal(c[0].vaddr, VA);
	assert_int_equal(c[0].size, HOT_SIZE_HUGE);
}

static void test_fast_pages_stop_being_tracked_when_the_node_is_no_longer_watched(void **state)
{
	struct fx *f = *state;

	fx_cold_setup(f, 3);
	cold_list_want(f->cold, 1);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 4);
	cold_list_want(f->cold, 0);
	for (int r = 0; r < 40; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(cold_list_len(f->cold), 0);
	/* demotion.enabled = false overrides a mask left set. */
	cold_list_want(f->cold, 1);
	f->cfg->demotion.enabled = false;
	for (int r = 0; r < 40; r++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
}

/* The promoter's side of the chain, faked: every page asked about sits on node 0 until moved,
 * and node 0 has free_pct of its memory free. */
struct fake_mover {
	struct fx *f;
	unsigned free_pct;
	unsigned moved, moved_to_1;
	uint64_t moved_addr[16];
};

static long mover_move_pages(void *ctx, pid_t pid, unsigned long count, void **pages,
			     const int *nodes, int *status, int flags)
{
	struct fake_mover *m = ctx;

	(void)flags;
	assert_int_equal(pid, 100);
	for (unsigned long i = 0; i < count; i++) {
		bool moved = false;

		for (unsigned k = 0; k < m->moved && !moved; k++)
			moved = m->moved_addr[k] == (uintptr_t)pages[i];
		status[i] = nodes ? nodes[i] : moved ? 1 : 0;
		if (nodes && m->moved < 16) {
			m->moved_addr[m->moved++] = (uintptr_t)pages[i];
			m->moved_to_1 += nodes[i] == 1;
		}
	}
	return 0;
}

static uint64_t mover_now(void *ctx)
{
	return ((struct fake_mover *)ctx)->f->clock_ns / 1000000;
}

static int mover_refresh_free(void *ctx, struct topology *t)
{
	struct fake_mover *m = ctx;

	t->node[0].mem_free = t->node[0].mem_total / 100 * m->free_pct;
	return 0;
}

static int mover_page_sizes(void *ctx, pid_t pid, const uint64_t *addrs, size_t n, uint64_t *sizes)
{
	(void)ctx;
	(void)pid;
	(void)addrs;
	for (size_t i = 0; i < n; i++)
		sizes[i] = 4096;
	return 0;
}

static void test_fast_pages_the_scan_finds_cold_are_demoted_by_the_promoter(void **state)
{
	struct fx *f = *state;
	struct fake_mover m = {.f = f, .free_pct = 50};
	struct promoter_ops ops = {.move_pages = mover_move_pages,
				   .now_ms = mover_now,
				   .refresh_free = mover_refresh_free,
				   .page_sizes = mover_page_sizes,
				   .ctx = &m};
	struct hot_table *hot;
	struct promoter *p;
	int rounds = 0;

	fx_cold_setup(f, 3);
	f->cfg->demotion.free_target_percent = 20;
	f->cfg->demotion.rate_limit_mbps = 0;
	assert_int_equal(hot_table_new(1024, 4096, &hot), 0);
	assert_int_equal(promoter_new(&(struct promoter_deps){.hot = hot,
							      .procs = f->registry,
							      .topo = f->topo,
							      .stats = &f->stats,
							      .ops = &ops,
							      .cold = f->cold},
				      &p),
			 0);
	/* Node 0 has room: not watched, fast pages untracked. */
	assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	/* Short of its target: watched at once, and its three idle pages go down once cold. */
	m.free_pct = 10;
	f->clock_ns += UINT64_C(2000000000);
	while (m.moved < 3 && rounds++ < 40) {
		assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(m.moved, 3);
	assert_int_equal(m.moved_to_1, 3);
	assert_int_equal(atomic_load(&f->stats.demoted_pages[DEMOTE_FREE_TARGET][0]), 3);
	assert_true(rounds >= COLD_MS / 1000);
	/* The slow page was never offered, and nothing moves twice: offered again after a new
	 * epoch, the pages are found on the slow node already and skipped. */
	for (unsigned k = 0; k < m.moved; k++)
		assert_true(m.moved_addr[k] != VA);
	for (int r = 0; r < 30; r++) {
		assert_int_equal(promoter_run_once(p, f->cfg, mover_now(&m)), 0);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(m.moved, 3);
	assert_true(stats_get(&f->stats, ST_DEMOTE_SKIPPED) >= 3);
	promoter_free(p);
	hot_table_free(hot);
}

/* ---- rounds ------------------------------------------------------------------------------ */

static void test_round_reports_accessed_slow_pages_and_nothing_else(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 76, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 77, LRU);
	fx_map(f, 100, VA + 0x2000, 100, LRU);	       /* fast node */
	fx_map(f, 100, VA + 0x3000, SLOW_PFN + 78, 0); /* off the LRU */
	fx_new_abit(f);

	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	assert_int_equal(abit_nr_tracked(f->a), 2);
	assert_true(fx_idle_bit(f, SLOW_PFN + 76));
	assert_true(fx_idle_bit(f, SLOW_PFN + 77));
	assert_false(fx_idle_bit(f, 100));
	assert_false(fx_idle_bit(f, SLOW_PFN + 78));

	fx_access(f, SLOW_PFN + 76);
	fx_access(f, 100);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].pid, 100);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, (uint64_t)(SLOW_PFN + 76) << 12);
	assert_int_equal(f->ev[0].size, HOT_SIZE_BASE);
	assert_int_equal(f->ev[0].cpu, 1);
	assert_int_equal(f->ev[0].node, 0);
	assert_int_equal(f->ev[0].source, SRC_ABIT);
	assert_int_equal(f->ev[0].time_ns, f->clock_ns);
	/* Re-marked for the next round. */
	assert_true(fx_idle_bit(f, SLOW_PFN + 76));
	assert_int_equal(fx_stat(f, SS_SAMPLES), 1);
	assert_int_equal(fx_stat(f, SS_PAGES_SCANNED), 2 * 512);

	/* Not accessed again: nothing. */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 1);
}

static void test_page_joining_the_lru_later_is_tracked_then(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 5, 0);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	fx_map(f, 100, VA, SLOW_PFN + 5, LRU);
	assert_int_equal(fx_interval(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	fx_access(f, SLOW_PFN + 5);
	assert_int_equal(fx_interval(f), 1);
}

static void test_thp_is_tracked_once_by_its_head(void **state)
{
	struct fx *f = *state;
	uint64_t head = SLOW_PFN + 512;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, head + i, i ? THP_TAIL : THP_HEAD);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, head));
	for (uint64_t i = 1; i < 512; i++)
		assert_false(fx_idle_bit(f, head + i)); /* tails read "not idle" */

	assert_int_equal(fx_round(f), 0); /* head not accessed; tails never reported */
	assert_int_equal(f->nev, 0);
	fx_access(f, head);
	assert_int_equal(fx_interval(f), 1);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, head << 12);
	assert_int_equal(f->ev[0].size, HOT_SIZE_HUGE); /* the promoter needs no lookup */
}

static void test_page_moved_between_mark_and_read_is_not_reported(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 10, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 11, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);

	/* Both pages migrate; their old frames now belong to someone who touched them. */
	fx_access(f, SLOW_PFN + 10);
	fx_access(f, SLOW_PFN + 11);
	fx_map(f, 100, VA, SLOW_PFN + 300, LRU); /* still slow, new frame */
	fx_map(f, 100, VA + 0x1000, 200, LRU);	 /* promoted to the fast node */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, SLOW_PFN + 300));

	/* The new frame is followed from now on. */
	fx_access(f, SLOW_PFN + 300);
	assert_int_equal(fx_interval(f), 1);
	assert_int_equal(f->ev[0].paddr, (uint64_t)(SLOW_PFN + 300) << 12);
}

static void test_without_a_block_map_page_nodes_come_from_the_kernel(void **state)
{
	struct fx *f = *state;

	f->topo->nr_blocks = 0; /* a kernel without CONFIG_MEMORY_HOTPLUG */
	f->ops.page_nodes = fx_page_nodes;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, 7, LRU);	     /* node 1 says the kernel, whatever the PFN */
	fx_map(f, 100, VA + 0x1000, 8, LRU); /* node 0 */
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_idle_bit(f, 7));
	fx_access(f, 7);
	fx_access(f, 8);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->ev[0].vaddr, VA);
	assert_int_equal(f->ev[0].paddr, UINT64_C(7) << 12);
}

static void test_unmapped_page_is_not_reported(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 10, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_unmap(f, 100, VA);
	fx_access(f, SLOW_PFN + 10);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

static void test_process_exiting_mid_round_is_dropped_silently(void **state)
{
	struct fx *f = *state;
	char *logbuf = NULL;
	size_t loglen = 0;
	FILE *logf = open_memstream(&logbuf, &loglen);

	assert_non_null(logf);
	log_set_stream(logf);
	log_set_level(LOG_LVL_DEBUG);
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_proc(f, 200, "other", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_map(f, 200, VA, SLOW_PFN + 2, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_procs(f->a), 2);

	fx_access(f, SLOW_PFN + 1);
	fx_access(f, SLOW_PFN + 2);
	f->remove_on_event = 200; /* pid 200 exits while pid 100's events are delivered */
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->nev, 1);
	assert_int_equal(f->ev[0].pid, 100);
	assert_int_equal(abit_nr_procs(f->a), 1);
	fflush(logf);
	assert_int_equal(loglen, 0);
	log_set_stream(NULL);
	log_set_level(LOG_LVL_INFO);
	fclose(logf);
	free(logbuf);
}

/* Removes pid's procfs directory: what its exit looks like. */
static void fx_exit(struct fx *f, pid_t pid)
{
	char path[256];

	fx_path(f, path, sizeof(path), "proc/%d", (int)pid);
	assert_int_equal(nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A sampled process that exits takes all its state with it, its sampler too: twenty of them
 * coming and going leave the heap within a few KiB of what one did (with the sampler leaked,
 * each exit kept 12.8 KiB: 257 KiB after twenty). */
static void test_exited_sampled_process_leaves_nothing_allocated(void **state)
{
	struct fx *f = *state;
	size_t before = 0;

	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.full_scan_mib = 0; /* sampled, however small */
	fx_new_abit(f);
	for (int i = 0; i <= 20; i++) {
		pid_t pid = 300 + i;
		int steps = 0;

		fx_proc(f, pid, "short", 0, VA, VA + 4 * PIECE);
		fx_map(f, pid, VA, SLOW_PFN + 1, LRU);
		while (abit_nr_sample_regions(f->a, pid) == 0 && steps++ < 16)
			assert_true(fx_round(f) >= 0);
		assert_true(abit_nr_sample_regions(f->a, pid) > 0);
		fx_exit(f, pid);
		while (abit_nr_procs(f->a) && steps++ < 32)
			assert_true(fx_round(f) >= 0);
		assert_int_equal(abit_nr_procs(f->a), 0);
		if (i == 0)
			before = mallinfo2().uordblks;
	}
	printf("heap after 1 exit %zu bytes, after 21 %zu\n", before, mallinfo2().uordblks);
	assert_true(mallinfo2().uordblks <= before + 32768);
}

/* A maps line longer than the read buffer (a VMA of a file with a very long name) is taken
 * from its start and the rest skipped: the VMAs before and after it are all found. */
static void test_maps_with_a_very_long_line_gives_every_vma(void **state)
{
	struct fx *f = *state;
	char path[256], *text = malloc(100000);
	size_t n;

	assert_non_null(text);
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	n = (size_t)sprintf(text, "%llx-%llx rw-p 00000000 00:00 0 \n%llx-%llx r--p 0 08:01 12 /",
			    (unsigned long long)VA, (unsigned long long)(VA + PIECE),
			    (unsigned long long)(VA + PIECE), (unsigned long long)(VA + 2 * PIECE));
	memset(text + n, 'x', 70000);
	n += 70000;
	n += (size_t)sprintf(text + n, "\n%llx-%llx rw-p 00000000 00:00 0",
			     (unsigned long long)(VA + 2 * PIECE),
			     (unsigned long long)(VA + 3 * PIECE));
	fx_path(f, path, sizeof(path), "proc/100/maps");
	write_file(path, text, n);
	fx_path(f, path, sizeof(path), "proc/100/pagemap");
	assert_int_equal(truncate(path, (off_t)((VA + 3 * PIECE) / 4096 * 8)), 0);
	free(text);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 2 * PIECE), 1);
}

/* A 4 TiB PROT_READ|MAP_NORESERVE mapping with nothing resident beside a small one in use:
 * the source keeps regions for the small one only (numa_maps shows the big one empty), so
 * the mapping costs nothing, and nothing is counted as skipped. */
static void test_sparse_mapping_with_nothing_resident_costs_no_regions(void **state)
{
	struct fx *f = *state;
	char path[256], text[512];
	const uint64_t big = UINT64_C(0x100000000000), big_end = big + (UINT64_C(4) << 40);

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	snprintf(text, sizeof(text),
		 "%llx-%llx rw-p 00000000 00:00 0 \n%llx-%llx r--p 00000000 00:00 0 \n",
		 (unsigned long long)VA, (unsigned long long)(VA + PIECE), (unsigned long long)big,
		 (unsigned long long)big_end);
	fx_path(f, path, sizeof(path), "proc/100/maps");
	write_file(path, text, strlen(text));
	snprintf(text, sizeof(text), "%llx default anon=1 N1=1 kernelpagesize_kB=4\n%llx default\n",
		 (unsigned long long)VA, (unsigned long long)big);
	fx_path(f, path, sizeof(path), "proc/100/numa_maps");
	write_file(path, text, strlen(text));
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, big), -ENOENT);
	assert_int_equal(abit_piece_interval(f->a, 100, big_end - 4096), -ENOENT);
	assert_int_equal(atomic_load(&f->stats.abit_skip[SKIP_PROCESS_CAP]), 0);
	assert_int_equal(atomic_load(&f->stats.abit_skip[SKIP_TOTAL_CAP]), 0);
}

/* A process spanning more regions than its resident set pays for (500 resident pages:
 * ABIT_VMAS_FLOOR + ABIT_VMAS_PER_HUGE = 528 regions), all of them holding pages: the first
 * 528 are kept, the other 72 counted as left out for the process's cap. */
static void test_regions_beyond_a_process_allowance_are_left_out_and_counted(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + 600 * PIECE);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 527 * PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 528 * PIECE), -ENOENT);
	assert_int_equal(atomic_load(&f->stats.abit_skip[SKIP_PROCESS_CAP]), 72);
}

/* The source's cap over every process: with room for 100 regions, a first process of 64 gets
 * them all, a second of 64 the 36 left, and 28 are counted as left out for the total. */
static void test_regions_beyond_the_source_cap_are_left_out_and_counted(void **state)
{
	struct fx *f = *state;

	f->pieces_cap = 100;
	fx_proc(f, 100, "app", 0, VA, VA + 64 * PIECE);
	fx_proc(f, 200, "other", 0, VA, VA + 64 * PIECE);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 63 * PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 200, VA + 35 * PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 200, VA + 36 * PIECE), -ENOENT);
	assert_int_equal(atomic_load(&f->stats.abit_skip[SKIP_TOTAL_CAP]), 28);
	/* The first process exits: at the next re-read the second one has room for all. */
	fx_exit(f, 100);
	for (int i = 0; i < ABIT_REFRESH_ROUNDS + 1; i++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	assert_true(abit_piece_interval(f->a, 200, VA + 63 * PIECE) >= 1);
}

static void test_hidden_pfns_make_the_source_unavailable(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, 0, 0); /* present, PFN 0: what an unprivileged reader sees */
	fx_new_abit(f);
	assert_null(abit_unavailable_reason(f->a));
	assert_int_equal(fx_round(f), -EPERM);
	assert_non_null(abit_unavailable_reason(f->a));
	assert_non_null(strstr(abit_unavailable_reason(f->a), "CAP_SYS_ADMIN"));
	assert_int_equal(fx_round(f), -EPERM);
}

static void test_missing_page_idle_makes_the_source_unavailable(void **state)
{
	struct fx *f = *state;
	char path[256], *logbuf = NULL;
	size_t loglen = 0;
	FILE *logf = open_memstream(&logbuf, &loglen);
	struct abit_deps d = {
	    .procfs_root = f->procfs,
	    .sysfs_root = f->sysfs,
	    .sink = {.deliver = fx_sink, .ctx = f},
	    .stats = &f->stats,
	};
	struct abit *a = (struct abit *)&d; /* must stay untouched */

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	assert_int_equal(unlink(path), 0);
	log_set_stream(logf);
	assert_int_equal(abit_new(&d, &a), -ENOENT);
	assert_ptr_equal(a, (struct abit *)&d);
	fflush(logf);
	assert_non_null(strstr(logbuf, "abit source unavailable: no page_idle"));
	assert_non_null(strstr(logbuf, "page_idle/bitmap"));
	log_set_stream(NULL);
	fclose(logf);
	free(logbuf);
}

static void test_round_with_word_sized_transfers_finds_the_same_accesses(void **state)
{
	struct fx *f = *state;

	f->max_io = 8; /* one word, one pagemap entry per call */
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 100; i++)
		fx_map(f, 100, VA + i * 4096, SLOW_PFN + i, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 100);
	fx_access(f, SLOW_PFN + 3);
	fx_access(f, SLOW_PFN + 70);
	assert_int_equal(fx_round(f), 2);
	assert_int_equal(f->ev[0].vaddr, VA + 3 * 4096);
	assert_int_equal(f->ev[1].vaddr, VA + 70 * 4096);
	assert_true(f->io_calls > 512); /* the pagemap alone took 512 calls a round */
}

static void test_selection_skips_unselected_processes(void **state)
{
	struct fx *f = *state;
	struct config_errors errs = {0};
	struct pghotd_config *cfg;

	assert_int_equal(config_load_string("processes: { include_comm = [\"db*\"]; };\n"
					    "sources: { abit: { mode = \"full\"; }; };",
					    "t", &cfg, &errs),
			 0);
	cfg->topo = f->topo;
	config_free(f->cfg);
	f->cfg = cfg;
	fx_proc(f, 100, "dbserver", 0, VA, VA + PIECE);
	fx_proc(f, 200, "shell", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_map(f, 200, VA, SLOW_PFN + 2, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	assert_false(fx_idle_bit(f, SLOW_PFN + 2));
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->ev[0].pid, 100);
}

static void test_pages_looked_at_stay_within_max_pages_per_sec(void **state)
{
	struct fx *f = *state;
	uint64_t prev = 0;

	/* Eight regions with one slow page each; 1024 pages a second pays two regions. */
	f->cfg->sources.abit.max_pages_per_sec = 1024;
	f->cfg->sources.abit.scan_interval_ms = 1000;
	fx_proc(f, 100, "app", 0, VA, VA + 8 * PIECE);
	for (uint64_t i = 0; i < 8; i++)
		fx_map(f, 100, VA + i * PIECE, SLOW_PFN + 64 * i, LRU);
	fx_new_abit(f);
	for (int round = 1; round <= 4; round++) {
		assert_int_equal(fx_round(f), 0);
		assert_int_equal(fx_stat(f, SS_PAGES_SCANNED) - prev, 1024);
		prev = fx_stat(f, SS_PAGES_SCANNED);
		/* The cursor moves on: every region is reached within four rounds. */
		assert_int_equal(abit_nr_tracked(f->a), 2 * (size_t)round);
	}
	for (int round = 0; round < 16; round++) {
		for (uint64_t i = 0; i < 8; i++)
			fx_access(f, SLOW_PFN + 64 * i); /* all hot: every region wants a scan */
		assert_true(fx_round(f) >= 0);
	}
	/* 20 seconds at 1024/s, plus one burst. */
	assert_true(fx_stat(f, SS_PAGES_SCANNED) <= 20 * 1024 + 1024);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) >= 19 * 1024);
	assert_true(fx_stat(f, SS_SAMPLES) > 0);
}

static void test_region_intervals_follow_the_accesses(void **state)
{
	struct fx *f = *state;
	unsigned cold_events = 0;

	fx_proc(f, 100, "app", 0, VA, VA + 2 * PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);		 /* hot */
	fx_map(f, 100, VA + PIECE, SLOW_PFN + 200, LRU); /* cold */
	fx_new_abit(f);
	for (int round = 0; round < 64; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + PIECE), ABIT_MAX_INTERVAL);
	/* 64 rounds of the hot region, far fewer of the cold one: 2,2,4,4,8,8,16,16 apart. */
	assert_true(fx_stat(f, SS_PAGES_SCANNED) < (64 + 12) * 512);

	/* The cold region heats up: found at its next scan, then scanned every round. */
	fx_access(f, SLOW_PFN + 200);
	for (int round = 0; round < ABIT_MAX_INTERVAL; round++) {
		size_t before = f->nev;

		fx_access(f, SLOW_PFN + 200);
		assert_true(fx_round(f) >= 0);
		for (size_t i = before; i < f->nev; i++)
			cold_events += f->ev[i].vaddr == VA + PIECE;
	}
	assert_true(cold_events >= 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 7 * PIECE), -ENOENT);
}

static void test_region_with_accesses_is_scanned_twice_per_interval(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0); /* learned */
	/* Accessed all the time: seen at every round, ABIT_HOT_SPEEDUP times per interval. */
	for (int round = 0; round < 3 * ABIT_HOT_SPEEDUP; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_round(f), 1);
		assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	}
	/* One quiet scan keeps the pace; ABIT_BACKOFF_SCANS of them: once per scan interval. */
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), ABIT_HOT_SPEEDUP);
}

static void test_new_process_is_watched_from_the_next_round(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	/* Started between two rounds, well before the periodic re-read is due. */
	fx_proc(f, 200, "late", 0, VA, VA + PIECE);
	/* Another bitmap word: the fixture's bitmap is a plain file, where a mark rewrites
	 * the whole word (the kernel only sets bits). */
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 2);
	fx_access(f, SLOW_PFN + 130);
	assert_int_equal(fx_round(f), 1);
	assert_int_equal(f->ev[f->nev - 1].pid, 200);
}

static void fx_node_used(struct fx *f, int node, unsigned used_kib);

/* Mode full: a process that starts between rounds is found by the next step and its pages
 * learned there; the next two steps look again, so a page used all the time is seen twice
 * within three steps (under half a round), and its first sighting (accesses where the last
 * look found none) asks for two more; after that the rounds take over. */
static void test_new_process_is_looked_at_by_the_next_steps(void **state)
{
	struct fx *f = *state;

	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	assert_int_equal(fx_step(f), 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	for (int step = 0; step < 3; step++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_step(f), 1);
	}
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 0); /* no quick look left: the round sees it */
	assert_int_equal(fx_round(f), 1);
}

/* Mode full: a region accessed at every round gets no look between them, but one whose scan
 * found accesses after quiet scans (a hot set moving in) is looked at again by the next
 * steps. */
static void test_region_waking_from_idleness_gets_quick_looks(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	for (int step = 0; step < 3; step++)
		assert_int_equal(fx_step(f), 0); /* the learned page, not used */
	for (int round = 0; round < 4; round++) {
		fx_access(f, SLOW_PFN + 1);
		assert_int_equal(fx_round(f), 1);
		fx_access(f, SLOW_PFN + 1);
		/* First used at round 0: two looks between rounds follow (here the steps after
		 * rounds 0 and 1); used at every round since: none. */
		assert_int_equal(fx_step(f), round < 2 ? 1 : 0);
	}
	assert_int_equal(fx_round(f), 1); /* the access the last step did not look at */
	/* Quiet for a while, then used again: the steps after that scan look again. */
	for (int round = 0; round < 8; round++)
		assert_int_equal(fx_round(f), 0);
	assert_true(abit_piece_interval(f->a, 100, VA) > 1);
	fx_access(f, SLOW_PFN + 1);
	for (int round = 0; round < ABIT_MAX_INTERVAL && fx_round(f) == 0; round++)
		fx_access(f, SLOW_PFN + 1);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 1);
}

/* A fresh page (learned by the last look) found accessed by a look within a quarter of a scan
 * interval is first evidence: while the fast node has twice the reserve free, it counts one
 * access more (threshold 1 at the shipped 2, 254 at 255); with less room the configured
 * threshold holds. A later access, or one
 * seen after a longer gap, carries no lower threshold. */
static void test_first_evidence_counts_while_the_fast_node_has_room(void **state)
{
	struct fx *f = *state;

	f->cfg->promotion.threshold = 2;
	f->cfg->promotion.min_free_percent = 5;
	fx_node_used(f, 0, 65536 / 2); /* 50% free: room */
	fx_new_abit(f);
	assert_int_equal(fx_round(f), 0);
	fx_proc(f, 100, "app", 1, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_map(f, 100, VA + 0x1000, SLOW_PFN + 2, LRU);
	assert_int_equal(fx_step(f), 0);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[0].threshold, 1);
	/* Its next access is not first evidence, nor is the other page's first one now that the
	 * gap is a whole scan interval (fx_round). */
	fx_access(f, SLOW_PFN + 1);
	fx_access(f, SLOW_PFN + 2);
	assert_int_equal(fx_round(f), 2);
	assert_int_equal(f->ev[1].threshold, 0);
	assert_int_equal(f->ev[2].threshold, 0);

	/* An operator's higher threshold keeps its meaning: first evidence is one access more. */
	f->cfg->promotion.threshold = 255;
	fx_proc(f, 300, "strict", 1, VA, VA + PIECE);
	fx_map(f, 300, VA, SLOW_PFN + 200, LRU);
	assert_true(fx_round(f) >= 0);
	fx_access(f, SLOW_PFN + 200);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[f->nev - 1].pid, 300);
	assert_int_equal(f->ev[f->nev - 1].threshold, 254);
	f->cfg->promotion.threshold = 2;

	/* Node 0 short (6% free, under twice the 5% reserve): the threshold rises. */
	fx_node_used(f, 0, 65536 - 65536 * 6 / 100);
	fx_proc(f, 200, "late", 1, VA, VA + PIECE);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_round(f) >= 0);
	fx_access(f, SLOW_PFN + 130);
	assert_int_equal(fx_step(f), 1);
	assert_int_equal(f->ev[f->nev - 1].pid, 200);
	assert_int_equal(f->ev[f->nev - 1].threshold, 0);
}

static void test_new_process_costs_its_own_reads_not_everyones(void **state)
{
	struct fx *f = *state;
	char path[256];

	int rounds = 0;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	/* Past its first rounds, and just after a periodic re-read of everyone. */
	for (int r = 0; r <= ABIT_REFRESH_ROUNDS; r++)
		assert_true(fx_round(f) >= 0);
	/* The watched process's maps can no longer be read: a round that re-read every
	 * process would lose it. */
	fx_path(f, path, sizeof(path), "proc/100/maps");
	assert_int_equal(unlink(path), 0);
	fx_proc(f, 200, "late", 0, VA, VA + PIECE);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 2);
	assert_true(abit_piece_interval(f->a, 100, VA) > 0); /* still known */
	/* The periodic re-read reads everyone: the process without maps is dropped then, and
	 * not before. */
	while (abit_nr_procs(f->a) == 2 && rounds < 2 * ABIT_REFRESH_ROUNDS) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	assert_int_equal(abit_nr_procs(f->a), 1);
	assert_true(rounds >= ABIT_REFRESH_ROUNDS - 3);
}

/* pid's maps become one VMA [start, end) (its statm stays as it was). */
static void fx_maps_one(struct fx *f, pid_t pid, uint64_t start, uint64_t end)
{
	char path[256], text[128];

	fx_path(f, path, sizeof(path), "proc/%d/maps", (int)pid);
	snprintf(text, sizeof(text), "%llx-%llx rw-p 00000000 00:00 0 \n",
		 (unsigned long long)start, (unsigned long long)end);
	write_file(path, text, strlen(text));
}

/* A process found before its exec (the forked shell) maps its buffer after: in its first
 * rounds its maps are read every round, so the buffer is watched at once. */
static void test_young_process_maps_are_read_every_round(void **state)
{
	struct fx *f = *state;
	char path[256];

	fx_proc(f, 100, "sh", 0, VA + 8 * PIECE, VA + 9 * PIECE);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	/* The exec: new mappings, the buffer among them (the pagemap already covers it). */
	fx_maps_one(f, 100, VA, VA + PIECE);
	fx_path(f, path, sizeof(path), "proc/100/statm");
	write_file(path, "1200 520 100 10 0 400 0\n", 24);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
}

/* A process whose size and resident set stay as they were keeps its regions without a read
 * of its maps, at most ABIT_MAPS_KEEP_MAX times in a row: a process of huge maps that does
 * nothing costs a statm read per re-read. A changed maps file is taken in at the latest
 * after those. */
static void test_unchanged_process_is_not_reread_until_its_statm_changes(void **state)
{
	struct fx *f = *state;
	int rounds = 0;

	fx_proc(f, 100, "app", 0, VA + 8 * PIECE, VA + 9 * PIECE);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	fx_maps_one(f, 100, VA, VA + PIECE);
	while (abit_piece_interval(f->a, 100, VA) < 0 && rounds < 200) {
		assert_true(fx_round(f) >= 0);
		rounds++;
	}
	printf("maps taken in after %d rounds\n", rounds);
	/* Its young re-reads (every round) and the first refresh kept the regions (without the
	 * statm check the first re-read takes the new maps in)... */
	assert_true(rounds > ABIT_REFRESH_ROUNDS);
	/* ...until ABIT_MAPS_KEEP_MAX of them had, and the next one read the maps. */
	assert_true(rounds <= ABIT_REFRESH_ROUNDS * (ABIT_MAPS_KEEP_MAX + 2));
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 8 * PIECE), -ENOENT);
}

/* Node node's meminfo with used KiB of 65536 in use, in a sysfs of the test's own (the
 * committed fixture is read-only) that the topology now reads. */
static void fx_node_used(struct fx *f, int node, unsigned used_kib)
{
	char path[256], text[128];
	int n;

	fx_path(f, path, sizeof(path), "sys/devices");
	mkdir(path, 0755);
	fx_path(f, path, sizeof(path), "sys/devices/system");
	mkdir(path, 0755);
	fx_path(f, path, sizeof(path), "sys/devices/system/node");
	mkdir(path, 0755);
	fx_path(f, path, sizeof(path), "sys/devices/system/node/node%d", node);
	mkdir(path, 0755);
	fx_path(f, path, sizeof(path), "sys/devices/system/node/node%d/meminfo", node);
	n = snprintf(text, sizeof(text),
		     "Node %d MemTotal:       65536 kB\nNode %d MemFree:    %8u kB\n", node, node,
		     65536 - used_kib);
	write_file(path, text, (size_t)n);
	if (strcmp(f->topo->sysfs_root, f->sysfs) != 0) {
		free(f->topo->sysfs_root);
		f->topo->sysfs_root = strdup(f->sysfs);
		assert_non_null(f->topo->sysfs_root);
	}
}

static void fx_slow_used(struct fx *f, unsigned used_kib)
{
	fx_node_used(f, 1, used_kib);
}

static void test_pages_arriving_on_the_slow_tier_wake_backed_off_regions(void **state)
{
	struct fx *f = *state;

	fx_slow_used(f, 1024);
	fx_proc(f, 100, "app", 0, VA, VA + PIECE); /* nothing on the slow tier yet */
	fx_new_abit(f);
	for (int round = 0; round < 64; round++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), ABIT_MAX_INTERVAL);
	/* A page moves to the slow tier, but the node's use has not grown by 16 MiB: the region
	 * waits for its turn. */
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_slow_used(f, 1024 + 8192);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	/* 16 MiB more than the lowest reading (an operator moved the process): scanned at once. */
	fx_slow_used(f, 1024 + 16384);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
}

static void test_region_populated_late_is_scanned_every_round_again(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_new_abit(f);
	/* Empty for a while: nothing to watch, so its scans back off. */
	for (int round = 0; round < 12; round++)
		assert_true(fx_round(f) >= 0);
	assert_true(abit_piece_interval(f->a, 100, VA) > 1);
	/* The workload populates it: once its pages are learned it is scanned every round, so
	 * the first access after that is found at the very next round. */
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	for (int round = 0; round < ABIT_MAX_INTERVAL && abit_nr_tracked(f->a) == 0; round++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA), 1);
	fx_access(f, SLOW_PFN + 1);
	assert_int_equal(fx_round(f), 1);
}

static void test_thread_runs_rounds_and_stops_promptly(void **state)
{
	struct fx *f = *state;
	struct config_pub *pub;
	struct pghotd_config *cfg;
	struct timespec t0, t1;
	double ms;

	f->ops = idle_io_real_ops;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_int_equal(config_new_defaults(&cfg), 0);
	cfg->topo = f->topo;
	cfg->sources.abit.scan_interval_ms = 3600000; /* the longest sleep there is */
	cfg->sources.abit.mode = ABIT_MODE_FULL;
	assert_int_equal(config_pub_new(cfg, NULL, &pub), 0);
	assert_int_equal(abit_start(f->a, pub), 0);
	for (int i = 0; i < 500 && fx_stat(f, SS_PAGES_SCANNED) == 0; i++)
		usleep(2000);
	assert_int_equal(fx_stat(f, SS_PAGES_SCANNED), 512);
	assert_int_equal(atomic_load(&f->stats.src_active[SRC_ABIT]), 1);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	abit_stop(f->a);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms < 500);
	assert_int_equal(atomic_load(&f->stats.src_active[SRC_ABIT]), 0);
	cfg->topo = NULL;
	config_pub_free(pub);
}

/* ---- mode regions ------------------------------------------------------------------------ */

/* Six samples in process 100, and io's files: [0] a slow LRU page, [1] a fast one, [2] a slow
 * page off the LRU, [3] absent, [4] a tail of a THP whose head is *head, [5] a slow LRU page. */
/* The fixture's bitmap, kpageflags and pid 100's pagemap, opened into io. */
static void fx_samples_open(struct fx *f, struct abit_sample_io *io)
{
	char path[256];

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	io->bitmap_fd = open(path, O_RDWR);
	fx_path(f, path, sizeof(path), "proc/kpageflags");
	io->kpf_fd = open(path, O_RDONLY);
	fx_path(f, path, sizeof(path), "proc/100/pagemap");
	io->pagemap_fd = open(path, O_RDONLY);
}

static void fx_samples(struct fx *f, struct abit_sample_io *io, uint64_t *addr, uint64_t *head)
{
	*head = SLOW_PFN + 512;
	f->or_writes = true;
	fx_proc(f, 100, "app", 0, VA, VA + 2 * PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 5, LRU);
	fx_map(f, 100, VA + 0x1000, 100, LRU);			  /* fast */
	fx_map(f, 100, VA + 0x2000, SLOW_PFN + 6, 0);		  /* off the LRU */
	fx_map(f, 100, VA + PIECE, *head, THP_HEAD);		  /* THP head */
	fx_map(f, 100, VA + PIECE + 0x3000, *head + 3, THP_TAIL); /* and a tail of it */
	for (int i = 0; i < 6; i++)
		addr[i] = VA + (uint64_t)i * 0x1000;
	addr[3] = VA + 0x5000; /* absent */
	addr[4] = VA + PIECE + 0x3000;
	addr[5] = VA + 0x6000;
	fx_map(f, 100, addr[5], SLOW_PFN + 7, LRU);
	fx_samples_open(f, io);
}

static void fx_samples_close(struct abit_sample_io *io)
{
	close(io->bitmap_fd);
	close(io->kpf_fd);
	close(io->pagemap_fd);
}

/* Precise sampling through the fixture: a slow LRU page is marked and read back accessed after
 * an access; a fast page, a page off the LRU and an absent one are not marked; a THP tail is
 * marked through its head's bit; a page that moved since its mark reads as not accessed. */
static void test_samples_are_marked_and_read_back_through_page_idle(void **state)
{
	struct fx *f = *state;
	bool seen = false, acc[6];
	uint64_t addr[6], pfn[6], fast[6], head;
	size_t nfast = 9, thp = 0;
	struct abit_sample_io io = {.ops = &f->ops,
				    .pid = 100,
				    .topo = f->topo,
				    .pfn_seen = &seen,
				    .precise = true,
				    .thp = &thp};

	fx_samples(f, &io, addr, &head);
	assert_int_equal(abit_sample_mark(&io, addr, 6, pfn), 3);
	assert_int_equal(thp, 1);
	assert_int_equal(pfn[0], SLOW_PFN + 5);
	assert_int_equal(pfn[1], 0);
	assert_int_equal(pfn[2], 0);
	assert_int_equal(pfn[3], 0);
	assert_int_equal(pfn[4], (head + 3) | ABIT_SAMPLE_TAIL);
	assert_true(fx_idle_bit(f, SLOW_PFN + 5));
	assert_true(fx_idle_bit(f, head));
	assert_false(fx_idle_bit(f, 100));
	assert_true(seen);

	fx_access(f, SLOW_PFN + 5);
	fx_access(f, head);
	fx_access(f, SLOW_PFN + 7);
	fx_map(f, 100, addr[5], SLOW_PFN + 8, LRU); /* moved after the mark */
	assert_int_equal(abit_sample_read(&io, addr, pfn, 6, acc, NULL, NULL), 2);
	assert_true(acc[0] && acc[4]);
	assert_false(acc[1] || acc[2] || acc[3] || acc[5]);

	/* With node 0 watched for demotion the fast page is marked too, and read back never as
	 * an access: named idle while its bit stays set, not named once it was used. */
	io.fast_mask = 1;
	fx_map(f, 100, addr[5], SLOW_PFN + 7, LRU);
	assert_int_equal(abit_sample_mark(&io, addr, 6, pfn), 4);
	assert_int_equal(pfn[1], 100 | ABIT_SAMPLE_FAST);
	assert_true(fx_idle_bit(f, 100));
	assert_int_equal(abit_sample_read(&io, addr, pfn, 6, acc, fast, &nfast), 0);
	assert_false(acc[1]);
	assert_int_equal(nfast, 1);
	assert_int_equal(fast[0], VA + 0x1000);
	assert_int_equal(abit_sample_mark(&io, addr, 6, pfn), 4);
	fx_access(f, 100);
	assert_int_equal(abit_sample_read(&io, addr, pfn, 6, acc, fast, &nfast), 0);
	assert_false(acc[1]);
	assert_int_equal(nfast, 0);
	fx_samples_close(&io);
}

/* Lazy sampling: an idle sample costs its pagemap read, the bit's write and the bit's read;
 * kpageflags are read only for a bit that reads 0, which tells a use (the LRU page) from a
 * page page_idle ignores (off the LRU; a THP tail, counted in *io.thp). */
static void test_lazy_samples_read_kpageflags_only_for_a_cleared_bit(void **state)
{
	struct fx *f = *state;
	bool seen = false, acc[6];
	uint64_t addr[6], pfn[6], head;
	size_t thp = 0;
	unsigned calls;
	struct abit_sample_io io = {
	    .ops = &f->ops, .pid = 100, .topo = f->topo, .pfn_seen = &seen, .thp = &thp};

	fx_samples(f, &io, addr, &head);
	calls = f->io_calls;
	assert_int_equal(abit_sample_mark(&io, addr, 6, pfn), 4);
	assert_int_equal(f->io_calls - calls, 6 + 4); /* six pagemap reads, four bit writes */
	assert_int_equal(pfn[0], (SLOW_PFN + 5) | ABIT_SAMPLE_LAZY);
	assert_int_equal(pfn[1], 0);
	assert_int_equal(pfn[2], (SLOW_PFN + 6) | ABIT_SAMPLE_LAZY);
	assert_int_equal(pfn[3], 0);
	assert_int_equal(pfn[4], (head + 3) | ABIT_SAMPLE_LAZY);
	assert_int_equal(thp, 0);
	assert_true(fx_idle_bit(f, SLOW_PFN + 5));
	assert_false(fx_idle_bit(f, SLOW_PFN + 6)); /* ignored, as the kernel does */
	assert_false(fx_idle_bit(f, head));

	fx_access(f, SLOW_PFN + 5);
	calls = f->io_calls;
	assert_int_equal(abit_sample_read(&io, addr, pfn, 6, acc, NULL, NULL), 1);
	/* Four bit reads; kpageflags for the three that read 0: [0], [2] and [4]. */
	assert_int_equal(f->io_calls - calls, 4 + 3);
	assert_true(acc[0]);
	assert_false(acc[1] || acc[2] || acc[3] || acc[4] || acc[5]);
	assert_int_equal(thp, 1);
	fx_samples_close(&io);
}

/* A lazily marked fast page that reads back used is looked up in kpageflags too: a THP tail
 * there (its mark went nowhere, so it would never read idle) is counted, which turns the
 * sampler precise; a used base page is not. */
static void test_lazy_fast_thp_tail_is_counted(void **state)
{
	struct fx *f = *state;
	bool seen = false, acc[2];
	uint64_t addr[2] = {VA, VA + 0x1000}, pfn[2], fast[2];
	size_t thp = 0, nfast = 0;
	struct abit_sample_io io = {.ops = &f->ops,
				    .pid = 100,
				    .topo = f->topo,
				    .pfn_seen = &seen,
				    .fast_mask = 1,
				    .thp = &thp};

	f->or_writes = true;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, 200, LRU);			/* a fast base page */
	fx_map(f, 100, VA + 0x1000, 512 + 3, THP_TAIL); /* a fast THP's tail */
	fx_samples_open(f, &io);
	assert_int_equal(abit_sample_mark(&io, addr, 2, pfn), 2);
	fx_access(f, 200);
	assert_int_equal(abit_sample_read(&io, addr, pfn, 2, acc, fast, &nfast), 0);
	assert_int_equal(nfast, 0);
	assert_int_equal(thp, 1);
	fx_samples_close(&io);
}

/* A sampler marks lazily until it meets a THP: a process whose slow pages are one THP has its
 * first marks go nowhere (tails), reads that back, turns precise, and then finds the THP's
 * use through its head. Once the THP is gone, 4 aggregation intervals without one turn it
 * lazy again. */
static void test_sampler_turns_precise_for_thps_and_back(void **state)
{
	struct fx *f = *state;
	struct abit_sampler *smp;
	struct abit_range r = {.start = VA, .end = VA + PIECE};
	bool seen = false;
	uint64_t addr[6], head, rng = 7;
	size_t nhit;
	struct abit_sample_io io = {.ops = &f->ops, .pid = 100, .topo = f->topo, .pfn_seen = &seen};

	fx_samples(f, &io, addr, &head);
	fx_map(f, 100, VA, head, THP_HEAD);
	for (uint64_t i = 1; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, head + i, THP_TAIL);
	assert_int_equal(abit_sampler_new(16, 4, &rng, &smp), 0);
	assert_int_equal(abit_sampler_update(smp, &r, 1), 0);
	assert_int_equal(abit_sampler_step(smp, &io), 0);
	assert_false(abit_sampler_precise(smp));
	assert_false(fx_idle_bit(f, head)); /* tails marked: nothing set */
	assert_int_equal(abit_sampler_step(smp, &io), 0);
	assert_true(abit_sampler_precise(smp));
	assert_true(fx_idle_bit(f, head));
	fx_access(f, head);
	assert_int_equal(abit_sampler_step(smp, &io), 0);
	abit_sampler_hits(smp, &nhit);
	assert_int_equal(nhit, abit_sampler_taken(smp));

	/* The THP split into base pages: precise for 4 x 4 steps more, then lazy. */
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, head + i, LRU);
	for (int i = 0; i < 4 * 4; i++) {
		assert_true(abit_sampler_precise(smp));
		assert_true(abit_sampler_step(smp, &io) >= 0);
	}
	assert_false(abit_sampler_precise(smp));
	abit_sampler_free(smp);
	fx_samples_close(&io);
}

/* A process of 16 regions of 2 MiB (8192 pages) with slow pages everywhere, max_regions 64:
 * sampling regions of at most L = ceil(4 * 8192 / 64) = 512 pages. */
static void fx_regions_proc(struct fx *f)
{
	f->or_writes = true;
	f->seed = 12345;
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.max_regions = 64;
	f->cfg->sources.abit.full_scan_mib = 0; /* sampled, however small */
	fx_proc(f, 100, "app", 0, VA, VA + 16 * PIECE);
	/* The hot band's 64 pages at the start of region 5 (PFNs of one bitmap word), then every
	 * 16th page of the others. */
	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, SLOW_PFN + i, LRU);
	for (uint64_t g = 0, k = 0; g < 16; g++)
		for (uint64_t i = 0; g != 5 && i < 512; i += 16, k++)
			fx_map(f, 100, VA + g * PIECE + i * 4096, SLOW_PFN + 64 + k, LRU);
	fx_new_abit(f);
}

/* pghotd_source_scan_round_seconds in mode regions is the time of the whole round: its
 * sampling steps since the round before, and the round's own scan, not only the last call
 * (the clock here moves 1 ms at each read of the source). */
static void test_round_gauge_holds_the_steps_of_the_whole_round(void **state)
{
	struct fx *f = *state;
	unsigned calls;

	fx_regions_proc(f);
	f->io_tick_ns = 1000000;
	assert_true(fx_round(f) >= 0); /* step 0 is a round */
	calls = f->io_calls;
	for (int i = 1; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_true(f->io_calls > calls); /* the sampling steps read pages */
	assert_true(fx_round(f) >= 0);	  /* the next round */
	assert_int_equal(atomic_load(&f->stats.src_scan_round_us[SRC_ABIT]),
			 (uint64_t)(f->io_calls - calls) * 1000);
}

/* The thread's CPU budget: after a call that took c of CPU, it sleeps at least
 * c * (100 - pct) / pct, so its share stays at pct of one CPU, and never less than a step. */
static void test_cpu_budget_lengthens_the_sleep_after_a_costly_call(void **state)
{
	(void)state;
	assert_int_equal(abit_cpu_sleep_ms(1000000, 50, 125), 125);
	assert_int_equal(abit_cpu_sleep_ms(UINT64_C(400000000), 50, 125), 400);
	assert_int_equal(abit_cpu_sleep_ms(UINT64_C(400000000), 10, 125), 3600);
	assert_int_equal(abit_cpu_sleep_ms(UINT64_C(400000000), 100, 125), 125);
}

/* What the kernel shows after the band's 64 pages were all accessed: one bitmap word. */
static void fx_access_band(struct fx *f)
{
	char path[256];

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	pwrite_u64(path, SLOW_PFN / 64 * 8, 0);
}

/* The band of w = 64 pages accessed all the time is sampled within
 * k = abit_regions_miss_bound(8192, 64, 16, 8, 10, 512) = 138 aggregation intervals (scan
 * intervals: ceil(2 * 10 * 512 / 64) = 160 samples, since only the uniform half of the draws
 * is counted on (the other half goes to the pieces' tails), 28 in the first six intervals
 * while the band's region looks idle and takes longer turns, one per interval after that) but with
 * probability e^-10, and its pages are reported one scan interval later (the region becomes
 * watched, the next round learns it, the one after reports): within
 * (k + 1) * ABIT_SAMPLES_PER_AGGR steps. Nothing else is reported, cold regions are never
 * scanned page by page. */
static void test_region_mode_finds_a_hot_band_within_the_bound(void **state)
{
	struct fx *f = *state;
	uint64_t k =
	    abit_regions_miss_bound(8192, 64, 64 / 4, ABIT_SAMPLES_PER_AGGR, 10, ABIT_PIECE_PAGES);
	int steps = 0;

	assert_int_equal(k, 138);
	fx_regions_proc(f);
	while (f->nev == 0 && steps < (int)(k + 1) * ABIT_SAMPLES_PER_AGGR) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	printf("hot band reported after %d steps (%.2f scan intervals; bound %d)\n", steps,
	       (double)steps / ABIT_SAMPLES_PER_AGGR, (int)(k + 1) * ABIT_SAMPLES_PER_AGGR);
	assert_true(f->nev > 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	assert_true(abit_nr_sample_regions(f->a, 100) <= 64);
	assert_true(abit_nr_sample_regions(f->a, 100) >= 16);
	for (int i = 0; i < 2 * ABIT_SAMPLES_PER_AGGR; i++) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
	}
	/* Every band page is reported, once per round; nothing outside it. */
	for (size_t i = 0; i < f->nev; i++) {
		assert_true(f->ev[i].vaddr >= VA + 5 * PIECE);
		assert_true(f->ev[i].vaddr < VA + 5 * PIECE + 64 * 4096);
	}
	assert_true(f->nev >= 64);
	assert_int_equal(abit_piece_watched(f->a, 100, VA + 5 * PIECE), 1);
	for (uint64_t g = 0; g < 16; g++)
		if (g < 4 || g > 6)
			assert_int_equal(abit_piece_watched(f->a, 100, VA + g * PIECE), 0);
}

/* A sample read back accessed watches its 2 MiB region at once, not at the end of the
 * aggregation interval (ABIT_SAMPLES_PER_AGGR steps): one region of 512 slow pages, all used
 * all the time, is watched at the second step (the first reads back nothing) and its pages are
 * reported at the step after that, and again at the next (QUICK_STEPS re-reads), not from the
 * next round: a page used all the time is counted twice two steps after its sample. */
static void test_region_mode_watches_a_sampled_access_at_once(void **state)
{
	struct fx *f = *state;
	char path[256];
	static const char zeros[NR_PFNS / 8];
	int steps = 0;
	size_t nev;

	f->or_writes = true;
	f->seed = 7;
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.full_scan_mib = 0;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, SLOW_PFN + i, LRU);
	fx_new_abit(f);
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	while (f->nev == 0 && steps < ABIT_SAMPLES_PER_AGGR) {
		write_file(path, zeros, sizeof(zeros)); /* every page accessed again */
		assert_true(fx_round(f) >= 0);
		steps++;
		if (steps == 2)
			assert_int_equal(abit_piece_watched(f->a, 100, VA), 1);
	}
	assert_int_equal(steps, 3);
	/* Every page, but those the step before sampled: marked idle after this fixture's
	 * accesses, which come only between steps (a kernel's come all the time). */
	assert_true(f->nev >= 512 - abit_nr_sample_regions(f->a, 100));
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_true(f->nev - nev >= 512 - abit_nr_sample_regions(f->a, 100));
	/* The re-reads are done: the next call is a round, which reads the region as every
	 * round does a watched one, and the step after it reports nothing. */
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_true(f->nev > nev);
	nev = f->nev;
	write_file(path, zeros, sizeof(zeros));
	assert_true(fx_round(f) >= 0);
	assert_int_equal(f->nev, nev);
}

/* Issue 13's pages that become slow later: the band's pages sit on the fast node for three
 * scan intervals (accessed all along), then move to the slow node, as migratepages(8) would
 * move them. The samples cover the whole address space wherever its pages are, so the band is
 * reported within the same bound as a band that was slow from the start. */
static int steps_to_find_moved_band(struct fx *f)
{
	int steps = 0;

	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, 64 + i, LRU); /* node 0 */
	for (int i = 0; i < 3 * ABIT_SAMPLES_PER_AGGR; i++) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(f->nev, 0);
	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, SLOW_PFN + i, LRU);
	while (f->nev == 0 && steps < 40 * ABIT_SAMPLES_PER_AGGR) {
		fx_access_band(f);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	return steps;
}

static void test_region_mode_sees_pages_that_become_slow_later(void **state)
{
	struct fx *f = *state;
	uint64_t k =
	    abit_regions_miss_bound(8192, 64, 64 / 4, ABIT_SAMPLES_PER_AGGR, 10, ABIT_PIECE_PAGES);
	int steps;

	fx_regions_proc(f);
	steps = steps_to_find_moved_band(f);
	printf("band moved to the slow node reported after %.2f scan intervals (bound %d)\n",
	       (double)steps / ABIT_SAMPLES_PER_AGGR, (int)k + 1);
	assert_true(f->nev > 0 && steps <= (int)(k + 1) * ABIT_SAMPLES_PER_AGGR);
}

/* Every page accessed all the time, 16 regions hot: no more than max_watched_mib (4 regions)
 * are scanned page by page, and only they hold per-page state. */
static void test_region_mode_watches_no_more_than_the_cap(void **state)
{
	struct fx *f = *state;
	char path[256];
	static const char zeros[NR_PFNS / 8];
	size_t watched = 0;

	fx_regions_proc(f);
	f->cfg->sources.abit.max_watched_mib = 8;
	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	for (int i = 0; i < 10 * ABIT_SAMPLES_PER_AGGR; i++) {
		write_file(path, zeros, sizeof(zeros)); /* every page accessed again */
		assert_true(fx_round(f) >= 0);
		watched = 0;
		for (uint64_t g = 0; g < 16; g++)
			watched += abit_piece_watched(f->a, 100, VA + g * PIECE) == 1;
		assert_true(watched <= 4);
	}
	assert_int_equal(watched, 4);
	assert_true(abit_nr_tracked(f->a) <= 4 * 64); /* 64 pages mapped in the fullest region */
	assert_true(f->nev > 0);
}

/* Nothing accessed for ten scan intervals: no region is watched, no event, and the pages
 * looked at are the samples alone, at most max_regions a step, a fraction of what the full
 * scan looks at. */
static void test_region_mode_looks_at_cold_memory_through_samples_only(void **state)
{
	struct fx *f = *state;
	int steps = 10 * ABIT_SAMPLES_PER_AGGR;

	fx_regions_proc(f);
	for (int i = 0; i < steps; i++)
		assert_int_equal(fx_round(f), 0);
	assert_int_equal(f->nev, 0);
	for (uint64_t g = 0; g < 16; g++)
		assert_int_equal(abit_piece_watched(f->a, 100, VA + g * PIECE), 0);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) <= (uint64_t)steps * 64);
	assert_true(fx_stat(f, SS_PAGES_SCANNED) >= (uint64_t)steps * 16);
	assert_int_equal(abit_nr_tracked(f->a), 0);
	/* The I/O counted: a pagemap entry for each sampled page, then for the slow ones their
	 * kpageflags, a bitmap word written, and at the next step the entry and word again. */
	assert_true(fx_stat(f, SS_SCAN_IO_BYTES) >= 8 * fx_stat(f, SS_PAGES_SCANNED));
	assert_true(fx_stat(f, SS_SCAN_IO_BYTES) <= 5 * 8 * fx_stat(f, SS_PAGES_SCANNED));
}

/* Demotion in mode regions: eight idle pages of node 0 in region 3 and eight in region 9 that
 * are used all the time, among the fixture's slow pages. Samples that land on them put their
 * regions in the cold window (about one step in 64 per region: 8 of its 512 pages), where
 * they are scanned page by page: the idle ones are offered, with their age, the used ones
 * never. Without the cold window no page is offered, as promotion watches no region here.
 * The bound: a hint is missed for 640 steps with probability (63/64)^640 < e^-10. */
static void test_region_mode_offers_idle_fast_pages_through_the_cold_window(void **state)
{
	struct fx *f = *state;
	struct cold_page c[16];
	int steps = 0;
	size_t n;

	assert_int_equal(cold_list_new(64, &f->cold), 0);
	assert_int_equal(procs_new(f->procfs, 16, &f->registry), 0);
	f->cfg->demotion.min_idle_ms = COLD_MS;
	f->cfg->promotion.cooldown_ms = COLD_MS;
	fx_regions_proc(f);
	for (uint64_t i = 0; i < 8; i++) {
		fx_map(f, 100, VA + 3 * PIECE + (2 * i + 1) * 4096, 100 + i, LRU);
		fx_map(f, 100, VA + 9 * PIECE + (2 * i + 1) * 4096, 200 + i, LRU);
	}
	cold_list_want(f->cold, 1);
	while (cold_list_len(f->cold) < 8 && steps < 640 + 40 * ABIT_SAMPLES_PER_ROUND) {
		for (uint64_t i = 0; i < 8; i++)
			fx_access(f, 200 + i);
		assert_true(fx_round(f) >= 0);
		steps++;
	}
	printf("eight idle fast pages offered after %d steps\n", steps);
	n = fx_take_cold(f, c, 16);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].pid, 100);
		assert_int_equal(c[i].node, 0);
		assert_true(c[i].vaddr > VA + 3 * PIECE && c[i].vaddr < VA + 4 * PIECE);
		assert_true(c[i].offered_ms - c[i].idle_since_ms >= OFFER_MS);
	}
	/* The used pages are never offered; nothing slow is. */
	for (int i = 0; i < 20 * ABIT_SAMPLES_PER_ROUND; i++) {
		for (uint64_t k = 0; k < 8; k++)
			fx_access(f, 200 + k);
		assert_true(fx_round(f) >= 0);
	}
	assert_int_equal(cold_list_len(f->cold), 0);
	assert_int_equal(f->nev, 0);
	/* Demotion wants no more: the window lets its regions go, with their per-page state. */
	cold_list_want(f->cold, 0);
	for (int i = 0; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

/* Mode regions with the shipped full_scan_mib: a process of 32 MiB is scanned in full, every
 * slow page tracked from the first round and no sampler; with the threshold under its size it
 * is sampled, the per-page state going with the full scan. */
static void test_region_mode_scans_small_processes_in_full(void **state)
{
	struct fx *f = *state;

	fx_regions_proc(f);
	f->cfg->sources.abit.full_scan_mib = 32;
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_sample_regions(f->a, 100), 0);
	assert_int_equal(abit_nr_tracked(f->a), 64 + 15 * 32);
	fx_access_band(f);
	for (int i = 0; i < ABIT_SAMPLES_PER_ROUND; i++)
		assert_true(fx_round(f) >= 0);
	assert_int_equal(f->nev, 64);
	f->cfg->sources.abit.full_scan_mib = 31;
	f->cfg->generation++;
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

/* The mode follows a reload: full scans every region, regions samples, full again. */
static void test_mode_follows_the_configuration(void **state)
{
	struct fx *f = *state;

	fx_regions_proc(f);
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	f->cfg->sources.abit.mode = ABIT_MODE_FULL;
	f->cfg->generation++;
	assert_int_equal(fx_round(f), 0);
	assert_int_equal(abit_nr_sample_regions(f->a, 100), 0);
	assert_int_equal(abit_nr_tracked(f->a), 64 + 15 * 32);
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->generation++;
	/* Taken up at the next step, round or not: the per-page state goes with the full scan. */
	assert_int_equal(fx_round(f), 0);
	assert_true(abit_nr_sample_regions(f->a, 100) > 0);
	assert_int_equal(abit_nr_tracked(f->a), 0);
}

static void test_region_mode_hidden_pfns_make_the_source_unavailable(void **state)
{
	struct fx *f = *state;

	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.full_scan_mib = 0;
	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	for (uint64_t i = 0; i < 512; i++)
		fx_map(f, 100, VA + i * 4096, 0, 0);
	fx_new_abit(f);
	assert_int_equal(fx_round(f), -EPERM);
	assert_non_null(strstr(abit_unavailable_reason(f->a), "CAP_SYS_ADMIN"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pagemap_entry_gives_pfn_only_when_present),
	    cmocka_unit_test(test_kpageflags_classify_lru_pages_and_thp_heads_and_tails),
	    cmocka_unit_test(test_maps_line_parses_range_permissions_and_special_vmas),
	    cmocka_unit_test(test_maps_line_is_parsed_within_its_length),
	    cmocka_unit_test(test_stat_line_gives_start_time_and_cpu_past_odd_command_names),
	    cmocka_unit_test(test_bitmap_transfers_loop_on_short_counts),
	    cmocka_unit_test(test_bitmap_read_past_the_end_and_stalled_write_fail),
	    cmocka_unit_test(test_word_set_sorts_merges_and_marks_in_few_writes),
	    cmocka_unit_test(test_words_past_the_end_of_the_bitmap_count_as_idle),
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_round_reports_accessed_slow_pages_and_nothing_else),
	    FX(test_page_joining_the_lru_later_is_tracked_then),
	    FX(test_thp_is_tracked_once_by_its_head),
	    FX(test_page_moved_between_mark_and_read_is_not_reported),
	    FX(test_without_a_block_map_page_nodes_come_from_the_kernel),
	    FX(test_unmapped_page_is_not_reported),
	    FX(test_process_exiting_mid_round_is_dropped_silently),
	    FX(test_exited_sampled_process_leaves_nothing_allocated),
	    FX(test_maps_with_a_very_long_line_gives_every_vma),
	    FX(test_sparse_mapping_with_nothing_resident_costs_no_regions),
	    FX(test_round_gauge_holds_the_steps_of_the_whole_round),
	    FX(test_cpu_budget_lengthens_the_sleep_after_a_costly_call),
	    FX(test_regions_beyond_a_process_allowance_are_left_out_and_counted),
	    FX(test_regions_beyond_the_source_cap_are_left_out_and_counted),
	    FX(test_hidden_pfns_make_the_source_unavailable),
	    FX(test_missing_page_idle_makes_the_source_unavailable),
	    FX(test_round_with_word_sized_transfers_finds_the_same_accesses),
	    FX(test_selection_skips_unselected_processes),
	    FX(test_pages_looked_at_stay_within_max_pages_per_sec),
	    FX(test_region_intervals_follow_the_accesses),
	    FX(test_region_with_accesses_is_scanned_twice_per_interval),
	    FX(test_new_process_is_watched_from_the_next_round),
	    FX(test_new_process_is_looked_at_by_the_next_steps),
	    FX(test_region_waking_from_idleness_gets_quick_looks),
	    FX(test_first_evidence_counts_while_the_fast_node_has_room),
	    FX(test_new_process_costs_its_own_reads_not_everyones),
	    FX(test_young_process_maps_are_read_every_round),
	    FX(test_unchanged_process_is_not_reread_until_its_statm_changes),
	    FX(test_pages_arriving_on_the_slow_tier_wake_backed_off_regions),
	    FX(test_region_populated_late_is_scanned_every_round_again),
	    FX(test_thread_runs_rounds_and_stops_promptly),
	    FX(test_samples_are_marked_and_read_back_through_page_idle),
	    FX(test_lazy_samples_read_kpageflags_only_for_a_cleared_bit),
	    FX(test_lazy_fast_thp_tail_is_counted),
	    FX(test_sampler_turns_precise_for_thps_and_back),
	    FX(test_region_mode_finds_a_hot_band_within_the_bound),
	    FX(test_region_mode_watches_no_more_than_the_cap),
	    FX(test_region_mode_looks_at_cold_memory_through_samples_only),
	    FX(test_region_mode_sees_pages_that_become_slow_later),
	    FX(test_region_mode_offers_idle_fast_pages_through_the_cold_window),
	    FX(test_region_mode_watches_a_sampled_access_at_once),
	    FX(test_region_mode_scans_small_processes_in_full),
	    FX(test_mode_follows_the_configuration),
	    FX(test_region_mode_hidden_pfns_make_the_source_unavailable),
	    FX(test_fast_pages_are_not_tracked_while_no_node_is_watched),
	    FX(test_idle_fast_page_of_a_watched_node_is_offered_once_with_its_age),
	    FX(test_idle_shared_fast_page_is_not_offered),
	    FX(test_access_restarts_the_idle_time_and_a_new_epoch_offers_again),
	    FX(test_longer_promotion_window_holds_the_offer_back),
	    FX(test_fast_pages_appearing_do_not_quicken_the_scans_of_their_region),
	    FX(test_region_of_watched_fast_pages_is_seen_every_quarter_idle_time),
	    FX(test_thp_head_on_a_fast_node_is_offered_as_huge),
	    FX(test_fast_pages_the_scan_finds_cold_are_demoted_by_the_promoter),
	    FX(test_fast_pages_stop_being_tracked_when_the_node_is_no_longer_watched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
