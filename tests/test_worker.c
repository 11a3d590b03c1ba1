/* worker tests: the thread name (worker_comm) on its own, and a real thread that reads its
 * name back from the kernel and sleeps until stopped. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>

#include <cmocka.h>

#include "base/worker.h"

static void comm_is_the_prefix_and_the_first_word(void **state)
{
	char c[WORKER_COMM_SIZE];

	(void)state;
	worker_comm("promoter", c);
	assert_string_equal(c, "pghotd/promoter");
	worker_comm("abit source", c);
	assert_string_equal(c, "pghotd/abit");
	worker_comm("damon", c);
	assert_string_equal(c, "pghotd/damon");
	worker_comm("", c);
	assert_string_equal(c, "pghotd/");
}

static void comm_is_cut_to_the_kernel_length(void **state)
{
	char c[WORKER_COMM_SIZE + 8];

	(void)state;
	memset(c, 'x', sizeof(c));
	worker_comm("software page-fault event", c);
	assert_string_equal(c, "pghotd/software");
	worker_comm("averyveryverylongname", c);
	assert_int_equal(strlen(c), WORKER_COMM_SIZE - 1);
	assert_string_equal(c, "pghotd/averyver");
	assert_int_equal(c[WORKER_COMM_SIZE], 'x'); /* nothing written past the size */
}

struct probe {
	struct worker w;
	char comm[WORKER_COMM_SIZE];
};

static void *probe_thread(void *arg)
{
	struct probe *p = arg;

	prctl(PR_GET_NAME, p->comm, 0, 0, 0);
	while (!worker_stopping(&p->w))
		worker_sleep(&p->w, -1, NULL);
	return NULL;
}

static void a_started_thread_carries_its_name_and_stops(void **state)
{
	struct probe p = {0};
	char self[WORKER_COMM_SIZE] = "";

	(void)state;
	assert_int_equal(worker_init(&p.w, "mover test"), 0);
	assert_int_equal(worker_start(&p.w, probe_thread, &p), 0);
	assert_int_equal(worker_start(&p.w, probe_thread, &p), -EALREADY);
	worker_stop(&p.w); /* joins: the thread's writes are seen */
	worker_fini(&p.w);
	assert_string_equal(p.comm, "pghotd/mover");
	prctl(PR_GET_NAME, self, 0, 0, 0);
	assert_string_not_equal(self, "pghotd/mover"); /* the caller keeps its own name */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(comm_is_the_prefix_and_the_first_word),
	    cmocka_unit_test(comm_is_cut_to_the_kernel_length),
	    cmocka_unit_test(a_started_thread_carries_its_name_and_stops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
