/* The Accessed-bit source's test fixture (abit_fixture.h). */
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
#include "sources/abit/abit_source.h"
#include "sources/abit/abit_regions.h"
#include "sources/abit/abit_sampler.h"
#include "table/cold_list.h"
#include "base/config.h"
#include "base/config_pub.h"
#include "table/hot_table.h"
#include "sources/abit/idle_bitmap.h"
#include "base/log.h"
#include "sys/pagemap.h"
#include "table/procs.h"
#include "mover/promoter.h"
#include "base/stats.h"
#include "sys/topology.h"
#include "abit_fixture.h"

void fx_path(const struct fx *f, char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(buf, len, "%s/", f->root);

	va_start(ap, fmt);
	vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
}

void write_file(const char *path, const void *data, size_t len)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_int_equal(fwrite(data, 1, len, fp), len);
	assert_int_equal(fclose(fp), 0);
}

void pwrite_u64(const char *path, uint64_t off, uint64_t v)
{
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &v, 8, (off_t)off), 8);
	close(fd);
}

uint64_t pread_u64(const char *path, uint64_t off)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, 8, (off_t)off), 8);
	close(fd);
	return v;
}

void fx_sink(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev, size_t n)
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

	return f->untracked_read_0 && len % 8 == 0 && fstat(fd, &st) == 0 &&
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
	/* Only the bitmap is ever written, and as the kernel's: a write sets bits, a 0 leaves the
	 * page's flag alone. */
	if (len % 8 == 0 && len <= sizeof(w)) {
		memset(w, 0, sizeof(w));
		assert_true(idle_io_real_ops.pread(NULL, fd, w, len, off) >= 0);
		for (size_t i = 0; i < len / 8; i++) {
			uint64_t set = ((const uint64_t *)buf)[i] &
				       (kernel ? fx_tracked(f, off + i * 8) : ~0ull);

			f->bits_marked += kernel ? (uint64_t)__builtin_popcountll(set) : 0;
			w[i] |= set;
		}
		buf = w;
	}
	return idle_io_real_ops.pwrite(NULL, fd, buf, len, off);
}

/* Without a block map the node comes from move_pages: here, the first page of each piece
 * is on node 1 and every other page on node 0. */
long fx_page_nodes(void *ctx, pid_t pid, unsigned long n, void **pages, int *status)
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

int fx_setup(void **state)
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

int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int fx_teardown(void **state)
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

void fx_new_abit(struct fx *f)
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
void fx_proc(struct fx *f, pid_t pid, const char *comm, int cpu, uint64_t start, uint64_t end)
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
void fx_map(struct fx *f, pid_t pid, uint64_t vaddr, uint64_t pfn, uint64_t flags)
{
	char path[256];

	fx_path(f, path, sizeof(path), "proc/%d/pagemap", (int)pid);
	pwrite_u64(path, vaddr / 4096 * 8, pfn | PAGEMAP_PRESENT | PAGEMAP_EXCLUSIVE);
	fx_path(f, path, sizeof(path), "proc/kpageflags");
	pwrite_u64(path, pfn * 8, flags);
}

void fx_unmap(struct fx *f, pid_t pid, uint64_t vaddr)
{
	char path[256];

	fx_path(f, path, sizeof(path), "proc/%d/pagemap", (int)pid);
	pwrite_u64(path, vaddr / 4096 * 8, 0);
}

bool fx_idle_bit(struct fx *f, uint64_t pfn)
{
	char path[256];

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	return (pread_u64(path, pfn / 64 * 8) >> (pfn % 64)) & 1;
}

/* What the kernel does when the page is accessed: its idle bit reads 0. */
void fx_access(struct fx *f, uint64_t pfn)
{
	char path[256];
	uint64_t w;

	fx_path(f, path, sizeof(path), "sys/kernel/mm/page_idle/bitmap");
	w = pread_u64(path, pfn / 64 * 8);
	pwrite_u64(path, pfn / 64 * 8, w & ~(UINT64_C(1) << (pfn % 64)));
}

int fx_round(struct fx *f)
{
	f->clock_ns += (uint64_t)f->cfg->sources.abit.scan_interval_ms * 1000000u;
	return abit_round(f->a, f->cfg);
}

/* One scan interval: ABIT_HOT_SPEEDUP rounds, so a piece that cooled down is scanned once.
 * Returns the accesses found, or the first error. */
int fx_interval(struct fx *f)
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
void fx_node_used(struct fx *f, int node, unsigned used_kib)
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

int fx_step(struct fx *f)
{
	f->clock_ns += (uint64_t)f->cfg->sources.abit.scan_interval_ms * 1000000u /
		       ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND;
	return abit_step(f->a, f->cfg);
}

uint64_t fx_stat(struct fx *f, enum stat_src_counter c)
{
	return atomic_load(&f->stats.src[SRC_ABIT][c]);
}

/* A process of 16 pieces of 2 MiB (8192 pages) with slow pages everywhere, max_regions 64:
 * sampling regions of at most L = ceil(4 * 8192 / 64) = 512 pages. */
void fx_regions_proc(struct fx *f)
{
	f->seed = 12345;
	f->cfg->sources.abit.mode = ABIT_MODE_REGIONS;
	f->cfg->sources.abit.max_regions = 64;
	f->cfg->sources.abit.full_scan_mib = 0; /* sampled, however small */
	fx_proc(f, 100, "app", 0, VA, VA + 16 * PIECE);
	/* The hot band's 64 pages at the start of piece 5 (PFNs of one bitmap word), then every
	 * 16th page of the others. */
	for (uint64_t i = 0; i < 64; i++)
		fx_map(f, 100, VA + 5 * PIECE + i * 4096, SLOW_PFN + i, LRU);
	for (uint64_t g = 0, k = 0; g < 16; g++)
		for (uint64_t i = 0; g != 5 && i < 512; i += 16, k++)
			fx_map(f, 100, VA + g * PIECE + i * 4096, SLOW_PFN + 64 + k, LRU);
	fx_new_abit(f);
}
