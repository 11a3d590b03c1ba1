/* worker: start, wake, sleep and stop of the daemon's background threads. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "log.h"
#include "worker.h"

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

int worker_start(struct worker *w, void *(*fn)(void *), void *arg)
{
	int r;

	if (w->running)
		return -EALREADY;
	atomic_store_explicit(&w->stop, false, memory_order_relaxed); /* no thread yet */
	r = pthread_create(&w->thread, NULL, fn, arg);
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
