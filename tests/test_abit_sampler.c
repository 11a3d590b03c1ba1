/* abit_sampler: samples marked and read back through page_idle, lazily or precisely
 * (abit_fixture.h). */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_samples_are_marked_and_read_back_through_page_idle),
	    FX(test_lazy_samples_read_kpageflags_only_for_a_cleared_bit),
	    FX(test_lazy_fast_thp_tail_is_counted),
	    FX(test_sampler_turns_precise_for_thps_and_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
