/* abit_table: which processes and pieces the source keeps, and when it reads them again
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
 * the source keeps pieces for the small one only (numa_maps shows the big one empty), so
 * the mapping costs nothing, and nothing is counted as skipped. */
static void test_sparse_mapping_with_nothing_resident_costs_no_pieces(void **state)
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

/* A process spanning more pieces than its resident set pays for (500 resident pages:
 * VMAS_FLOOR + VMAS_PER_HUGE = 528 pieces), all of them holding pages: the first
 * 528 are kept, the other 72 counted as left out for the process's cap. */
static void test_pieces_beyond_a_process_allowance_are_left_out_and_counted(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + 600 * PIECE);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 527 * PIECE), 1);
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 528 * PIECE), -ENOENT);
	assert_int_equal(atomic_load(&f->stats.abit_skip[SKIP_PROCESS_CAP]), 72);
}

/* The source's cap over every process: with room for 100 pieces, a first process of 64 gets
 * them all, a second of 64 the 36 left, and 28 are counted as left out for the total. */
static void test_pieces_beyond_the_source_cap_are_left_out_and_counted(void **state)
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

/* Loads cfg text into f (the fixture's topology kept). */
static void fx_config(struct fx *f, const char *text)
{
	struct config_errors errs = {0};
	struct pghotd_config *cfg;

	assert_int_equal(config_load_string(text, "t", &cfg, &errs), 0);
	cfg->topo = f->topo;
	config_free(f->cfg);
	f->cfg = cfg;
}

static void test_selection_skips_unselected_processes(void **state)
{
	struct fx *f = *state;

	fx_config(f, "processes: { include_comm = [\"db*\"]; };\n"
		     "sources: { abit: { mode = \"full\"; }; };");
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

/* The shell forked to start a watched program is listed before its exec, under the shell's
 * name: passed over then, it is read again at the next steps, so the program is watched
 * from the step after its exec, not from the next periodic re-read of every process. */
static void test_shell_that_execs_a_watched_program_is_watched_at_the_next_step(void **state)
{
	struct fx *f = *state;
	char path[256];

	fx_config(f, "processes: { include_comm = [\"db*\"]; };\n"
		     "sources: { abit: { mode = \"full\"; }; };");
	fx_proc(f, 100, "dbserver", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	fx_proc(f, 200, "sh", 0, VA, VA + PIECE);
	assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	/* The exec. */
	fx_path(f, path, sizeof(path), "proc/200/comm");
	write_file(path, "dbload\n", 7);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 2);
	assert_int_equal(abit_piece_interval(f->a, 200, VA), 1);
}

/* A program listed before it maps anything is read again at the next steps too. */
static void test_process_with_nothing_mapped_yet_is_watched_when_it_maps(void **state)
{
	struct fx *f = *state;
	const char *vvar = "7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0 [vvar]\n";
	char path[256];

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	fx_proc(f, 200, "late", 0, VA + 8 * PIECE, VA + 9 * PIECE);
	fx_path(f, path, sizeof(path), "proc/200/maps");
	write_file(path, vvar, strlen(vvar));
	assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	fx_maps_one(f, 200, VA, VA + PIECE);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 2);
}

/* A kernel thread (no address space: statm all zeros) is not retried: new ones come all the
 * time, and none will ever map anything. (The fixture then gives it maps, which a kernel
 * thread never gets, to show no step reads it again.) */
static void test_new_kernel_thread_is_not_read_again_at_each_step(void **state)
{
	struct fx *f = *state;
	char path[256];

	fx_proc(f, 100, "app", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	fx_proc(f, 200, "kworker/0:1", 0, VA, VA + PIECE);
	fx_path(f, path, sizeof(path), "proc/200/statm");
	write_file(path, "0 0 0 0 0 0 0\n", 14);
	assert_true(fx_step(f) >= 0);
	write_file(path, "1000 500 100 10 0 400 0\n", 24);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	for (int k = 1; k < ABIT_SAMPLES_PER_ROUND; k++)
		assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
}

/* The retries end: a pid passed over for its first ABIT_REFRESH_ROUNDS rounds is left to the
 * periodic re-read (a process that never execs a watched program costs no reads at each step
 * for ever). */
static void test_pid_passed_over_is_not_read_at_each_step_for_ever(void **state)
{
	struct fx *f = *state;
	char path[256];
	int steps = 0;

	fx_config(f, "processes: { include_comm = [\"db*\"]; };\n"
		     "sources: { abit: { mode = \"full\"; }; };");
	fx_proc(f, 100, "dbserver", 0, VA, VA + PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	/* Just after a periodic re-read. */
	for (int r = 0; r <= ABIT_REFRESH_ROUNDS; r++)
		assert_true(fx_round(f) >= 0);
	fx_proc(f, 200, "sh", 0, VA, VA + PIECE);
	assert_true(fx_step(f) >= 0);
	for (int r = 0; r <= ABIT_REFRESH_ROUNDS; r++) {
		assert_true(fx_round(f) >= 0);
		for (int k = 1; k < ABIT_SAMPLES_PER_ROUND; k++)
			assert_true(fx_step(f) >= 0);
	}
	/* Old now: its exec is found by the periodic re-read, not by a step. */
	fx_path(f, path, sizeof(path), "proc/200/comm");
	write_file(path, "dbload\n", 7);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	for (int k = 1; k < ABIT_SAMPLES_PER_ROUND; k++)
		assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 1);
	while (abit_nr_procs(f->a) == 1 &&
	       steps++ < 4 * ABIT_REFRESH_ROUNDS * ABIT_SAMPLES_PER_ROUND)
		assert_true((steps % ABIT_SAMPLES_PER_ROUND ? fx_step(f) : fx_round(f)) >= 0);
	assert_int_equal(abit_nr_procs(f->a), 2);
}

/* A young process places its data: a piece its first look found empty is looked at by the
 * steps after, so a page placed there is learned at the next step, not the next round; once
 * the process is past its first rounds, an empty piece waits for the rounds again. */
static void test_young_process_piece_filled_after_its_look_is_learned_at_the_next_step(void **state)
{
	struct fx *f = *state;

	fx_proc(f, 100, "app", 0, VA, VA + 2 * PIECE);
	fx_map(f, 100, VA, SLOW_PFN + 1, LRU);
	fx_new_abit(f);
	assert_true(fx_round(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 1);
	assert_true(fx_step(f) >= 0);
	fx_map(f, 100, VA + PIECE, SLOW_PFN + 2, LRU);
	assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 2);

	/* Old: a page placed in an empty piece is learned at a round. */
	fx_proc(f, 200, "old", 0, VA, VA + 2 * PIECE);
	fx_map(f, 200, VA, SLOW_PFN + 130, LRU);
	for (int r = 0; r <= ABIT_REFRESH_ROUNDS; r++) {
		assert_true(fx_round(f) >= 0);
		assert_true(fx_step(f) >= 0);
	}
	assert_int_equal(abit_nr_tracked(f->a), 3);
	fx_map(f, 200, VA + PIECE, SLOW_PFN + 131, LRU);
	for (int k = 1; k < ABIT_SAMPLES_PER_ROUND; k++)
		assert_true(fx_step(f) >= 0);
	assert_int_equal(abit_nr_tracked(f->a), 3);
}

/* A process whose size and resident set stay as they were keeps its pieces without a read
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
	/* Its young re-reads (every round) and the first refresh kept the pieces (without the
	 * statm check the first re-read takes the new maps in)... */
	assert_true(rounds > ABIT_REFRESH_ROUNDS);
	/* ...until ABIT_MAPS_KEEP_MAX of them had, and the next one read the maps. */
	assert_true(rounds <= ABIT_REFRESH_ROUNDS * (ABIT_MAPS_KEEP_MAX + 2));
	assert_int_equal(abit_piece_interval(f->a, 100, VA + 8 * PIECE), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define FX(t) cmocka_unit_test_setup_teardown(t, fx_setup, fx_teardown)
	    FX(test_process_exiting_mid_round_is_dropped_silently),
	    FX(test_exited_sampled_process_leaves_nothing_allocated),
	    FX(test_maps_with_a_very_long_line_gives_every_vma),
	    FX(test_sparse_mapping_with_nothing_resident_costs_no_pieces),
	    FX(test_pieces_beyond_a_process_allowance_are_left_out_and_counted),
	    FX(test_pieces_beyond_the_source_cap_are_left_out_and_counted),
	    FX(test_selection_skips_unselected_processes),
	    FX(test_new_process_is_watched_from_the_next_round),
	    FX(test_new_process_costs_its_own_reads_not_everyones),
	    FX(test_young_process_maps_are_read_every_round),
	    FX(test_shell_that_execs_a_watched_program_is_watched_at_the_next_step),
	    FX(test_process_with_nothing_mapped_yet_is_watched_when_it_maps),
	    FX(test_pid_passed_over_is_not_read_at_each_step_for_ever),
	    FX(test_new_kernel_thread_is_not_read_again_at_each_step),
	    FX(test_young_process_piece_filled_after_its_look_is_learned_at_the_next_step),
	    FX(test_unchanged_process_is_not_reread_until_its_statm_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
