/* procs: handles of real processes, and pid reuse against a fixture
 * procfs tree whose stat files the tests rewrite. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "table/procs.h"

#define STAT_FMT                                                                                   \
	"%d (%s) S 1 %d %d 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 %" PRIu64                       \
	" 3133440 389 18446744073709551615 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

struct fixture {
	char root[64];
};

static void stat_write(const struct fixture *f, pid_t pid, const char *comm, uint64_t start)
{
	char path[256];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d", f->root, (int)pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/stat", f->root, (int)pid);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, STAT_FMT, (int)pid, comm, (int)pid, (int)pid, start);
	fclose(fp);
}

static void stat_remove(const struct fixture *f, pid_t pid)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%d/stat", f->root, (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%d", f->root, (int)pid);
	rmdir(path);
}

static int fixture_setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->root, "/tmp/pghotd-procs-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	*state = f;
	return 0;
}

static int fixture_teardown(void **state)
{
	struct fixture *f = *state;

	for (pid_t pid = 1; pid < 200; pid++)
		stat_remove(f, pid);
	stat_remove(f, 4242);
	rmdir(f->root);
	free(f);
	return 0;
}

static void gives_self_a_stable_valid_handle(void **state)
{
	struct procs *p = NULL;
	int64_t h, h2;
	pid_t pid = 0;
	(void)state;

	assert_int_equal(procs_new("/proc", 64, &p), 0);
	h = procs_handle(p, getpid());
	assert_true(h > 0);
	assert_true((uint64_t)h < (UINT64_C(1) << PROCS_HANDLE_BITS));
	h2 = procs_handle(p, getpid());
	assert_int_equal(h, h2);
	assert_true(procs_valid(p, (uint32_t)h));
	assert_int_equal(procs_pid(p, (uint32_t)h, &pid), 0);
	assert_int_equal(pid, getpid());
	assert_int_equal(procs_sweep(p), 0);
	assert_true(procs_valid(p, (uint32_t)h));
	procs_free(p);
}

static void forgets_a_child_after_it_exits(void **state)
{
	struct procs *p = NULL;
	int fds[2];
	int64_t h, hs;
	pid_t child, pid = 0;
	char c;
	(void)state;

	assert_int_equal(procs_new("/proc", 64, &p), 0);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		close(fds[1]);
		(void)!read(fds[0], &c, 1); /* wait for the parent's go */
		_exit(0);
	}
	close(fds[0]);
	hs = procs_handle(p, getpid());
	h = procs_handle(p, child);
	assert_true(h > 0);
	assert_int_not_equal(h, hs);
	assert_int_equal(procs_pid(p, (uint32_t)h, &pid), 0);
	assert_int_equal(pid, child);
	assert_int_equal(procs_sweep(p), 0);

	close(fds[1]);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(procs_sweep(p), 1);
	assert_false(procs_valid(p, (uint32_t)h));
	assert_int_equal(procs_pid(p, (uint32_t)h, &pid), -ESTALE);
	assert_true(procs_valid(p, (uint32_t)hs));
	assert_int_equal(procs_handle(p, child), -ESRCH);
	procs_free(p);
}

static void detects_pid_reuse_by_start_time(void **state)
{
	struct fixture *f = *state;
	struct procs *p = NULL;
	int64_t old, fresh;
	pid_t pid = 0;

	stat_write(f, 4242, "worker (1)", 100);
	assert_int_equal(procs_new(f->root, 8, &p), 0);
	old = procs_handle(p, 4242);
	assert_true(old > 0);
	assert_int_equal(procs_sweep(p), 0);

	stat_write(f, 4242, "other", 200); /* the pid now names a new process */
	assert_int_equal(procs_sweep(p), 1);
	assert_false(procs_valid(p, (uint32_t)old));
	fresh = procs_handle(p, 4242);
	assert_true(fresh > 0);
	assert_int_not_equal(fresh, old);
	assert_int_equal(procs_pid(p, (uint32_t)fresh, &pid), 0);
	assert_int_equal(pid, 4242);
	assert_int_equal(procs_pid(p, (uint32_t)old, &pid), -ESTALE);
	procs_free(p);
}

static void reports_a_missing_process(void **state)
{
	struct fixture *f = *state;
	struct procs *p = NULL;

	assert_int_equal(procs_new(f->root, 8, &p), 0);
	assert_int_equal(procs_handle(p, 31337), -ESRCH);
	assert_int_equal(procs_handle(p, 0), -ESRCH);
	procs_free(p);
}

static void refuses_more_processes_than_its_maximum(void **state)
{
	struct fixture *f = *state;
	struct procs *p = NULL;
	int64_t h1;

	for (pid_t pid = 10; pid < 13; pid++)
		stat_write(f, pid, "x", 1);
	assert_int_equal(procs_new(f->root, 2, &p), 0);
	h1 = procs_handle(p, 10);
	assert_true(h1 > 0);
	assert_true(procs_handle(p, 11) > 0);
	assert_int_equal(procs_handle(p, 12), -ENOSPC);
	procs_forget(p, (uint32_t)h1);
	assert_false(procs_valid(p, (uint32_t)h1));
	assert_true(procs_handle(p, 12) > 0);
	procs_free(p);
}

static void never_reissues_a_handle_to_the_next_occupant_of_a_slot(void **state)
{
	struct fixture *f = *state;
	struct procs *p = NULL;
	int64_t prev = 0;

	stat_write(f, 20, "x", 1);
	assert_int_equal(procs_new(f->root, 1, &p), 0);
	/* More reuses than there are generations: handles stay non-zero, fit the packed
	 * width, and each differs from the one before it. */
	for (unsigned i = 0; i < PROCS_GEN_MAX + 10; i++) {
		int64_t h = procs_handle(p, 20);

		assert_true(h > 0);
		assert_true((uint64_t)h < (UINT64_C(1) << PROCS_HANDLE_BITS));
		assert_true(h >> 16 >= 1);
		assert_int_not_equal(h, prev);
		procs_forget(p, (uint32_t)h);
		assert_false(procs_valid(p, (uint32_t)h));
		prev = h;
	}
	procs_free(p);
}

static void finds_many_processes_through_tombstones(void **state)
{
	struct fixture *f = *state;
	struct procs *p = NULL;
	int64_t h[100];

	for (pid_t pid = 100; pid < 200; pid++)
		stat_write(f, pid, "x", (uint64_t)pid);
	assert_int_equal(procs_new(f->root, 100, &p), 0);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 100; i++)
			h[i] = procs_handle(p, 100 + i);
		for (int i = 0; i < 100; i += 2)
			procs_forget(p, (uint32_t)h[i]);
		for (int i = 1; i < 100; i += 2)
			assert_int_equal(procs_handle(p, 100 + i), h[i]);
	}
	procs_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(gives_self_a_stable_valid_handle),
	    cmocka_unit_test(forgets_a_child_after_it_exits),
	    cmocka_unit_test_setup_teardown(detects_pid_reuse_by_start_time, fixture_setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(reports_a_missing_process, fixture_setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(refuses_more_processes_than_its_maximum, fixture_setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(never_reissues_a_handle_to_the_next_occupant_of_a_slot,
					    fixture_setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(finds_many_processes_through_tombstones, fixture_setup,
					    fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
