/* worker: a background thread that can be woken and stopped promptly. The main thread starts
 * and stops it; the thread names itself (worker_comm: what top -H and ps -L show) and runs
 * fn(arg), which loops while !worker_stopping() and sleeps with
 * worker_sleep() (or polls worker_fd() itself among its own fds). Stop: the stop flag is
 * stored with release order and the eventfd written; the thread sees the fd readable, loads
 * the flag with acquire order and returns; the main thread joins it. */
#ifndef PGHOTD_WORKER_H
#define PGHOTD_WORKER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct worker {
	pthread_t thread;
	int efd;
	atomic_bool stop;
	bool running; /* main thread only */
	const char *name;
	void *(*fn)(void *); /* set before the thread starts, read by it only */
	void *arg;
};

/* The thread name of a worker called name: WORKER_COMM_PREFIX and name's first word, cut to
 * the kernel's 15 characters ("pghotd/promoter", "pghotd/damon"). Pure. */
#define WORKER_COMM_PREFIX "pghotd/"
#define WORKER_COMM_SIZE   16 /* the kernel's TASK_COMM_LEN */
void worker_comm(const char *name, char out[WORKER_COMM_SIZE]);

/* Main thread: creates the eventfd. -errno on failure. */
int worker_init(struct worker *w, const char *name);
/* Main thread, after worker_stop(): closes the eventfd. */
void worker_fini(struct worker *w);
/* Main thread: starts fn(arg). -EALREADY when running; -errno (logged) on failure. */
int worker_start(struct worker *w, void *(*fn)(void *), void *arg);
/* Main thread: sets the stop flag, wakes the thread and joins it. No-op when not running. */
void worker_stop(struct worker *w);
/* Any thread, async-signal-safe: wakes the thread's worker_sleep() or poll of worker_fd(). */
void worker_wake(struct worker *w);

static inline bool worker_stopping(struct worker *w)
{
	/* Acquire: pairs with the release store in worker_stop(). */
	return atomic_load_explicit(&w->stop, memory_order_acquire);
}

static inline int worker_fd(const struct worker *w)
{
	return w->efd;
}

/* Worker thread: sleeps up to ms (forever when negative) or until woken. Returns true when
 * woken; the wake-up is consumed, after *pending (if not NULL) is cleared with release order
 * (pairs with the waker's exchange), so a wake-up landing in between is never lost. */
bool worker_sleep(struct worker *w, int ms, atomic_bool *pending);

#endif
