/* worker: start, wake, sleep and stop of the daemon's background threads. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/log.h"
#include "base/worker.h"

int worker_init(struct worker *w, const char *name)
{
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0)
		return -errno;
	atomic_init(&w->stop, false);
	w->running = false;
	w->name = name;
	return 0;
}

void worker_fini(struct worker *w)
{
	if (w->efd >= 0)
		close(w->efd);
	w->efd = -1;
}

void worker_comm(const char *name, char out[WORKER_COMM_SIZE])
{
	size_t n = strlen(WORKER_COMM_PREFIX), word = strcspn(name, " ");

	memcpy(out, WORKER_COMM_PREFIX, n);
	if (word > WORKER_COMM_SIZE - 1 - n)
		word = WORKER_COMM_SIZE - 1 - n;
	memcpy(out + n, name, word);
	out[n + word] = '\0';
}

/* The thread's start: its name, then the worker's function. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char comm[WORKER_COMM_SIZE];

	worker_comm(w->name, comm);
	if (prctl(PR_SET_NAME, comm, 0, 0, 0) < 0)
		log_warning_errno(errno, "%s thread: cannot set its name", w->name);
	return w->fn(w->arg);
}

int worker_start(struct worker *w, void *(*fn)(void *), void *arg)
{
	int r;

	if (w->running)
		return -EALREADY;
	atomic_store_explicit(&w->stop, false, memory_order_relaxed); /* no thread yet */
	w->fn = fn, w->arg = arg; /* pthread_create orders them before the thread */
	r = pthread_create(&w->thread, NULL, worker_main, w);
	if (r != 0)
		return log_error_errno(r, "cannot start the %s thread", w->name);
	w->running = true;
	return 0;
}

void worker_wake(struct worker *w)
{
	uint64_t one = 1;

	if (write(w->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is saturated, a wake-up is pending anyway. */
	}
}

void worker_stop(struct worker *w)
{
	if (!w->running)
		return;
	/* Release: pairs with the acquire load in worker_stopping(). */
	atomic_store_explicit(&w->stop, true, memory_order_release);
	worker_wake(w);
	pthread_join(w->thread, NULL);
	w->running = false;
}

bool worker_sleep(struct worker *w, int ms, atomic_bool *pending)
{
	struct pollfd pfd = {.fd = w->efd, .events = POLLIN};
	uint64_t drain;
	int r;

	if (worker_stopping(w))
		return true;
	r = poll(&pfd, 1, ms);
	if (r < 0 && errno != EINTR)
		log_warning_errno(errno, "%s thread: poll failed", w->name);
	if (r <= 0)
		return false;
	if (pending)
		atomic_store_explicit(pending, false, memory_order_release);
	if (read(w->efd, &drain, sizeof(drain)) < 0) {
		/* EAGAIN: only this thread reads; nothing left to drain. */
	}
	return true;
}
