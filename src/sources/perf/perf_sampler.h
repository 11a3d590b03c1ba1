/* perf_sampler: the generic sampler every perf source (IBS, PEBS) runs on.
 *
 * It opens the source's events on every CPU (pid -1; or on one task, for tests), maps a ring
 * of 1 + 2^n pages per event fd, and drains the rings from its own thread: epoll on every fd
 * (the kernel wakes it at the watermark, a quarter of the ring unless the source set one)
 * plus a periodic drain. Each parsed sample goes to the source's convert callback, which
 * fills an access event or drops it (counted SS_SAMPLES_DROPPED here: a source filter that
 * counts on its own should be given no stats); kept events go to the sink in batches.
 * SAMPLE, LOST, THROTTLE and malformed records are counted by perf_ring.
 *
 * Syscalls go through perf_sampler_ops so unit tests can fake them. RLIMIT_NOFILE is raised
 * to fit one fd per CPU per event before anything is opened.
 *
 * Threads: new/start/stop/free from the main thread; set_period from any thread (the
 * controller typically calls it from on_drain, in the sampler thread). */
#ifndef PGHOTD_PERF_SAMPLER_H
#define PGHOTD_PERF_SAMPLER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "table/access.h"
#include "base/config_pub.h"
#include "sources/perf/perf_ring.h"
#include "sources/perf/period_ctl.h"
#include "base/stats.h"
#include "sources/source.h"

#define PERF_SAMPLER_MAX_EVENTS 4
#define PERF_SAMPLER_ERR_LEN	256

struct perf_sampler;

struct perf_sampler_ops {
	/* -errno on failure, like the others */
	int (*open)(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);
	int (*mmap)(void *ctx, int fd, size_t len, void **out);
	void (*munmap)(void *ctx, void *addr, size_t len);
	int (*ioctl)(void *ctx, int fd, unsigned long req, unsigned long arg);
	void (*close)(void *ctx, int fd);
	int (*getrlimit)(void *ctx, struct rlimit *out);
	int (*setrlimit)(void *ctx, const struct rlimit *in);
	void *ctx;
};

/* The real syscalls. */
extern const struct perf_sampler_ops perf_sampler_sys_ops;

struct perf_sampler_source {
	enum stat_source source;
	const char *name; /* for messages: "ibs", "pebs", ... */
	int nr_events;
	/* type, config*, sample_type, read_format, period, precise_ip, exclude_*: the
	 * source's; the sampler sets disabled, watermark/wakeup_watermark (when 0) and size. */
	struct perf_event_attr attr[PERF_SAMPLER_MAX_EVENTS];
	int leader; /* index of the group leader, -1: no group */
	/* Sampler thread. true: *out filled and kept; false: dropped (counted, unless
	 * keeps_samples: the source keeps every sample itself and delivers from on_drain). */
	bool (*convert)(void *ctx, const struct perf_event_header *h, const struct perf_sample *s,
			struct access_event *out);
	/* Sampler thread, optional: after every drain, with the totals so far (the adaptive
	 * period controller's hook). */
	void (*on_drain)(void *ctx, struct perf_sampler *sampler,
			 const struct perf_ring_counts *total);
	void *ctx;
	bool keeps_samples;
};

struct perf_sampler_params {
	unsigned ring_pages; /* data pages per ring: a power of two */
	unsigned drain_interval_ms;
	const int *cpus; /* NULL: CPUs 0..nr_cpus-1 (offline ones skipped) */
	int nr_cpus;
	pid_t pid; /* -1: every process on each CPU; else that task only, on any CPU */
	size_t page_size;
	struct stats *stats; /* may be NULL */
	struct access_sink sink;
	/* The config handed to the sink with each batch: the thread takes pub's current one
	 * (config_pub_get with pub_slot, registered by the caller, who also unregisters it
	 * after perf_sampler_stop) at the top of every loop; without pub, cfg as given. */
	struct config_pub *pub;
	int pub_slot;
	const struct pghotd_config *cfg;
	const struct perf_sampler_ops *ops; /* NULL: perf_sampler_sys_ops */
};

/* Main thread: raises RLIMIT_NOFILE, opens and maps every event (disabled). On failure
 * returns -errno, err holds one line naming what failed (the limit and the numbers for
 * RLIMIT_NOFILE; the event, CPU and errno for perf_event_open) and nothing stays open. */
int perf_sampler_new(const struct perf_sampler_source *src, const struct perf_sampler_params *p,
		     struct perf_sampler **out, char *err, size_t err_len);
/* Main thread: perf_sampler_new() then perf_sampler_start(); on failure err says which
 * step failed and why, and nothing stays open. */
int perf_sampler_launch(const struct perf_sampler_source *src, const struct perf_sampler_params *p,
			struct perf_sampler **out, char *err, size_t err_len);
/* Main thread: enables the events and starts the thread. */
int perf_sampler_start(struct perf_sampler *s);
/* Main thread: stops the thread after a last drain, disables the events. Idempotent. */
void perf_sampler_stop(struct perf_sampler *s);
void perf_sampler_free(struct perf_sampler *s);

/* Sampler thread (a source's on_drain hook): feeds the running totals and this thread's CPU
 * time to the adaptive period controller and applies the period it decides. */
void perf_sampler_adapt_period(struct perf_sampler *s, struct period_ctl *c,
			       struct period_ctl_clock *k, const struct perf_ring_counts *total);
/* Any thread: PERF_EVENT_IOC_PERIOD on every sampling fd. -errno of the first failure. */
int perf_sampler_set_period(struct perf_sampler *s, uint64_t period);
/* Sampler thread (or a test with the thread not started): drains every ring once and
 * delivers. Returns records consumed. */
uint64_t perf_sampler_drain(struct perf_sampler *s);
/* Sampler thread (a source's on_drain hook): the config of this loop iteration, valid until
 * on_drain returns. */
const struct pghotd_config *perf_sampler_config(const struct perf_sampler *s);
/* Number of event fds open. */
size_t perf_sampler_nr_fds(const struct perf_sampler *s);

/* --- a running perf source (IBS, PEBS): the tail both share --- */

/* The source's own state struct starts with this (its first member): the drain hook finds
 * it at the source's ctx. */
struct perf_source {
	struct perf_sampler *sampler; /* NULL until launched */
	struct period_ctl ctl;	      /* the adaptive period, run from the drain hook */
	struct period_ctl_clock clk;
	struct stats *stats; /* set while pghotd_source_active{source} is 1 */
	enum stat_source source;
	/* The config slot perf_source_ops_start registered for the sampler thread, given back
	 * by perf_source_stop; NULL when the caller keeps its own. */
	struct config_pub *pub;
	int pub_slot;
};

/* Main thread. ss->ctx must point at the struct ps begins; ss->on_drain is set to the
 * adaptive period hook (ps->ctl, initialised by the caller). Launches the sampler
 * (perf_sampler_launch) and marks the source active in p->stats. On failure: -errno,
 * reason as perf_sampler_launch gives it, nothing open and the gauge untouched. */
int perf_source_launch(struct perf_source *ps, struct perf_sampler_source *ss,
		       const struct perf_sampler_params *p, char *reason, size_t size);
/* Main thread: stops and frees the sampler, clears the gauge it set and gives back the slot
 * perf_source_ops_start registered. Idempotent; fine on a source never launched. */
void perf_source_stop(struct perf_source *ps);

/* Main thread: a PMU source's own start (ibs_source_start, pebs_source_start) on the sampler
 * params sp and the config cfg: *out set to the perf_source its state begins with, or -errno
 * and reason the text after "unavailable: ". */
typedef int (*perf_source_start_fn)(const struct source_deps *d, const struct pghotd_config *cfg,
				    const struct perf_sampler_params *sp, struct perf_source **out,
				    char *reason, size_t size);
/* Main thread: source_ops.start (sources/source.h) for a PMU source: registers a config_pub
 * slot on d->pub for the sampler thread, builds the sampler params from d (every process on
 * every CPU) and runs start; source_ops.start's returns, and its log line when start fails
 * ("source NAME: unavailable: REASON"). */
int perf_source_ops_start(const struct source_deps *d, enum stat_source id,
			  perf_source_start_fn start, void **out);
/* Main thread: source_ops.trial for a PMU source: start on d->cfg, with no slot, then stop. */
int perf_source_ops_trial(const struct source_deps *d, perf_source_start_fn start,
			  void (*stop)(void *handle), char *reason, size_t size);
/* Main thread, for --probe: opens, maps, enables and stops a software page-fault event on
 * every CPU as the PMU sources open theirs (d as for their trial): proof that the calls they
 * make are allowed here even where no PMU is. verdict: "ok: ..." or "refused: <why>". */
void perf_sampler_trial(const struct source_deps *d, char *verdict, size_t size);

/* Pure: the RLIMIT_NOFILE to ask for so that need descriptors fit; false when cur already
 * suffices. */
bool perf_sampler_nofile_plan(const struct rlimit *cur, uint64_t need, struct rlimit *want);

#endif
