/* perf_sampler: per-CPU perf events, their rings and the thread that drains them.
 *
 * Stopping (src/worker.h): the main thread sets the worker's stop flag (release) and writes
 * its eventfd, which the thread's epoll set also holds; the thread wakes, loads the flag
 * (acquire, pairs with that store), drains once more and exits. */
#include "sources/perf/perf_sampler.h"
#include "base/worker.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"

#define BATCH	     256
#define NOFILE_SPARE 64 /* for everything else the daemon opens */
#define EPOLL_EVENTS 64

struct sampler_fd {
	int fd;
	int event; /* index into the source's attrs */
	void *map;
	struct perf_ring ring;
};

struct perf_sampler {
	struct perf_sampler_source src;
	struct perf_sampler_params p;
	struct perf_sample_layout layout[PERF_SAMPLER_MAX_EVENTS];
	struct sampler_fd *fds;
	size_t nfds;
	size_t map_len;
	int epfd;
	struct worker w;
	struct perf_ring_reader *reader;
	const struct pghotd_config *cfg; /* sampler thread: the config of this loop */
	struct access_event batch[BATCH];
	size_t nbatch;
};

/* ---- real syscalls ---- */

static int sys_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	(void)ctx;
	return fd < 0 ? -errno : (int)fd;
}

static int sys_mmap(void *ctx, int fd, size_t len, void **out)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	(void)ctx;
	if (p == MAP_FAILED)
		return -errno;
	*out = p;
	return 0;
}

static void sys_munmap(void *ctx, void *addr, size_t len)
{
	(void)ctx;
	munmap(addr, len);
}

static int sys_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	(void)ctx;
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

static void sys_close(void *ctx, int fd)
{
	(void)ctx;
	close(fd);
}

static int sys_getrlimit(void *ctx, struct rlimit *out)
{
	(void)ctx;
	return getrlimit(RLIMIT_NOFILE, out) < 0 ? -errno : 0;
}

static int sys_setrlimit(void *ctx, const struct rlimit *in)
{
	(void)ctx;
	return setrlimit(RLIMIT_NOFILE, in) < 0 ? -errno : 0;
}

const struct perf_sampler_ops perf_sampler_sys_ops = {
    .open = sys_open,
    .mmap = sys_mmap,
    .munmap = sys_munmap,
    .ioctl = sys_ioctl,
    .close = sys_close,
    .getrlimit = sys_getrlimit,
    .setrlimit = sys_setrlimit,
};

/* ---- setup ---- */

__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t len, int code,
						      const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

bool perf_sampler_nofile_plan(const struct rlimit *cur, uint64_t need, struct rlimit *want)
{
	if (cur->rlim_cur == RLIM_INFINITY || cur->rlim_cur >= need)
		return false;
	want->rlim_cur = need;
	want->rlim_max =
	    cur->rlim_max == RLIM_INFINITY || cur->rlim_max >= need ? cur->rlim_max : need;
	return true;
}

static int raise_nofile(const struct perf_sampler *s, size_t ncpus, char *err, size_t len)
{
	uint64_t need = (uint64_t)ncpus * (uint64_t)s->src.nr_events + NOFILE_SPARE;
	struct rlimit cur, want;
	int r = s->p.ops->getrlimit(s->p.ops->ctx, &cur);

	if (r < 0)
		return fail(err, len, r, "getrlimit(RLIMIT_NOFILE): %s", strerror(-r));
	if (!perf_sampler_nofile_plan(&cur, need, &want))
		return 0;
	r = s->p.ops->setrlimit(s->p.ops->ctx, &want);
	if (r < 0)
		return fail(err, len, r,
			    "RLIMIT_NOFILE is %llu (hard %llu) but %s needs %llu file descriptors "
			    "(%zu CPUs x %d events + %d) and raising it failed: %s",
			    (unsigned long long)cur.rlim_cur, (unsigned long long)cur.rlim_max,
			    s->src.name, (unsigned long long)need, ncpus, s->src.nr_events,
			    NOFILE_SPARE, strerror(-r));
	return 0;
}

static void attr_prepare(struct perf_sampler *s, struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->disabled = 1;
	if (!a->wakeup_watermark && !a->wakeup_events) {
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(s->p.ring_pages * s->p.page_size / 4);
	}
}

static void fd_close(struct perf_sampler *s, struct sampler_fd *f)
{
	if (f->map)
		s->p.ops->munmap(s->p.ops->ctx, f->map, s->map_len);
	if (f->fd >= 0)
		s->p.ops->close(s->p.ops->ctx, f->fd);
	f->map = NULL;
	f->fd = -1;
}

/* Opens and maps event ev on cpu; group_fd -1 or the leader's fd. */
static int fd_open(struct perf_sampler *s, int ev, int cpu, int group_fd, char *err, size_t len)
{
	struct perf_event_attr a = s->src.attr[ev];
	struct sampler_fd *f = &s->fds[s->nfds];
	int r;

	attr_prepare(s, &a);
	r = s->p.ops->open(s->p.ops->ctx, &a, s->p.pid, cpu, group_fd);
	if (r < 0)
		return fail(err, len, r,
			    "%s: perf_event_open(type %u, config 0x%llx, pid %d, cpu %d): %s",
			    s->src.name, a.type, (unsigned long long)a.config, (int)s->p.pid, cpu,
			    strerror(-r));
	*f = (struct sampler_fd){.fd = r, .event = ev};
	r = s->p.ops->mmap(s->p.ops->ctx, f->fd, s->map_len, &f->map);
	if (r < 0) {
		f->map = NULL;
		fd_close(s, f);
		return fail(err, len, r, "%s: mmap of %zu bytes of the cpu %d ring: %s",
			    s->src.name, s->map_len, cpu, strerror(-r));
	}
	r = perf_ring_init(&f->ring, f->map, s->map_len, s->p.page_size);
	if (r < 0) {
		fd_close(s, f);
		return fail(err, len, r, "%s: the kernel's ring metadata is unusable", s->src.name);
	}
	s->nfds++;
	return f->fd;
}

/* Every event on one CPU, the leader first. -ENODEV: CPU offline, skipped by the caller. */
static int cpu_open(struct perf_sampler *s, int cpu, char *err, size_t len)
{
	int leader_fd = -1, r;

	if (s->src.leader >= 0) {
		leader_fd = fd_open(s, s->src.leader, cpu, -1, err, len);
		if (leader_fd < 0)
			return leader_fd;
	}
	for (int ev = 0; ev < s->src.nr_events; ev++) {
		if (ev == s->src.leader)
			continue;
		r = fd_open(s, ev, cpu, leader_fd, err, len);
		if (r < 0)
			return r;
	}
	return 0;
}

static int open_all(struct perf_sampler *s, char *err, size_t len)
{
	long conf = sysconf(_SC_NPROCESSORS_CONF);
	size_t ncpus = s->p.pid >= 0 ? 1 : s->p.cpus ? (size_t)s->p.nr_cpus : (size_t)conf;
	int r;

	r = raise_nofile(s, ncpus, err, len);
	if (r < 0)
		return r;
	s->fds = calloc(ncpus * (size_t)s->src.nr_events, sizeof(*s->fds));
	if (!s->fds)
		return fail(err, len, -ENOMEM, "%s: out of memory", s->src.name);
	for (size_t i = 0; i < ncpus; i++) {
		int cpu = s->p.pid >= 0 ? -1 : s->p.cpus ? s->p.cpus[i] : (int)i;
		size_t before = s->nfds;

		r = cpu_open(s, cpu, err, len);
		if (r == -ENODEV && s->p.pid < 0) { /* offline CPU */
			while (s->nfds > before)
				fd_close(s, &s->fds[--s->nfds]);
			continue;
		}
		if (r < 0)
			return r;
	}
	return s->nfds ? 0 : fail(err, len, -ENODEV, "%s: no CPU accepted the events", s->src.name);
}

static int epoll_setup(struct perf_sampler *s, char *err, size_t len)
{
	struct epoll_event e = {.events = EPOLLIN};

	int r = worker_init(&s->w, s->src.name);

	if (r < 0)
		return fail(err, len, r, "%s: eventfd: %s", s->src.name, strerror(-r));
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return fail(err, len, -errno, "%s: epoll: %s", s->src.name, strerror(errno));
	e.data.fd = worker_fd(&s->w);
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, worker_fd(&s->w), &e) < 0)
		return fail(err, len, -errno, "%s: epoll_ctl: %s", s->src.name, strerror(errno));
	for (size_t i = 0; i < s->nfds; i++) {
		e.data.fd = s->fds[i].fd;
		/* a fake fd (tests) cannot be polled: the periodic drain still reads it */
		epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->fds[i].fd, &e);
	}
	return 0;
}

static void on_sample(void *ctx, const struct perf_event_header *h, const struct perf_sample *smp);

static int reader_setup(struct perf_sampler *s)
{
	s->reader = calloc(1, sizeof(*s->reader));
	if (!s->reader)
		return -ENOMEM;
	s->reader->stats = s->p.stats;
	s->reader->source = s->src.source;
	s->reader->on_sample = on_sample;
	s->reader->ctx = s;
	for (int i = 0; i < s->src.nr_events; i++)
		s->layout[i] = (struct perf_sample_layout){
		    .sample_type = s->src.attr[i].sample_type,
		    .read_format = s->src.attr[i].read_format,
		    .branch_sample_type = s->src.attr[i].branch_sample_type,
		    .sample_regs_user = s->src.attr[i].sample_regs_user,
		    .sample_regs_intr = s->src.attr[i].sample_regs_intr,
		};
	return 0;
}

static int params_check(const struct perf_sampler_source *src, const struct perf_sampler_params *p,
			char *err, size_t len)
{
	if (src->nr_events < 1 || src->nr_events > PERF_SAMPLER_MAX_EVENTS ||
	    src->leader >= src->nr_events || !src->convert)
		return fail(err, len, -EINVAL, "%s: bad event list", src->name);
	if (p->ring_pages == 0 || (p->ring_pages & (p->ring_pages - 1)) || p->page_size == 0 ||
	    (!p->cpus && p->pid < 0 && sysconf(_SC_NPROCESSORS_CONF) < 1) || !p->sink.deliver)
		return fail(err, len, -EINVAL,
			    "%s: ring_pages must be a power of two (got %u) and a sink is needed",
			    src->name, p->ring_pages);
	return 0;
}

int perf_sampler_new(const struct perf_sampler_source *src, const struct perf_sampler_params *p,
		     struct perf_sampler **out, char *err, size_t err_len)
{
	struct perf_sampler *s;
	int r = params_check(src, p, err, err_len);

	if (r < 0)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(err, err_len, -ENOMEM, "%s: out of memory", src->name);
	s->src = *src;
	s->p = *p;
	if (!s->p.ops)
		s->p.ops = &perf_sampler_sys_ops;
	s->map_len = (1 + (size_t)p->ring_pages) * p->page_size;
	s->epfd = s->w.efd = -1;
	s->cfg = p->cfg;
	r = reader_setup(s);
	if (r < 0)
		r = fail(err, err_len, r, "%s: out of memory", src->name);
	if (r == 0)
		r = open_all(s, err, err_len);
	if (r == 0)
		r = epoll_setup(s, err, err_len);
	if (r < 0) {
		perf_sampler_free(s);
		return r;
	}
	*out = s;
	return 0;
}

int perf_sampler_launch(const struct perf_sampler_source *src, const struct perf_sampler_params *p,
			struct perf_sampler **out, char *err, size_t err_len)
{
	struct perf_sampler *s;
	int r = perf_sampler_new(src, p, &s, err, err_len);

	if (r < 0)
		return r;
	r = perf_sampler_start(s);
	if (r < 0) {
		snprintf(err, err_len, "%s: cannot start the sampler: %s", src->name, strerror(-r));
		perf_sampler_free(s);
		return r;
	}
	*out = s;
	return 0;
}

void perf_sampler_free(struct perf_sampler *s)
{
	if (!s)
		return;
	perf_sampler_stop(s);
	for (size_t i = 0; i < s->nfds; i++)
		fd_close(s, &s->fds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	worker_fini(&s->w);
	free(s->fds);
	free(s->reader);
	free(s);
}

const struct pghotd_config *perf_sampler_config(const struct perf_sampler *s)
{
	return s->cfg;
}

size_t perf_sampler_nr_fds(const struct perf_sampler *s)
{
	return s->nfds;
}

/* ---- draining ---- */

static void flush(struct perf_sampler *s)
{
	access_deliver(&s->p.sink, s->cfg, s->batch, s->nbatch);
	s->nbatch = 0;
}

static void on_sample(void *ctx, const struct perf_event_header *h, const struct perf_sample *smp)
{
	struct perf_sampler *s = ctx;

	if (!s->src.convert(s->src.ctx, h, smp, &s->batch[s->nbatch])) {
		if (s->p.stats && !s->src.keeps_samples)
			stats_src_add(s->p.stats, s->src.source, SS_SAMPLES_DROPPED, 1);
		return;
	}
	if (++s->nbatch == BATCH)
		flush(s);
}

uint64_t perf_sampler_drain(struct perf_sampler *s)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->nfds; i++) {
		s->reader->layout = &s->layout[s->fds[i].event];
		n += perf_ring_drain(s->reader, &s->fds[i].ring);
	}
	flush(s);
	if (s->src.on_drain)
		s->src.on_drain(s->src.ctx, s, &s->reader->counts);
	return n;
}

static void *sampler_thread(void *arg)
{
	struct perf_sampler *s = arg;
	struct epoll_event ev[EPOLL_EVENTS];
	int timeout = s->p.drain_interval_ms ? (int)s->p.drain_interval_ms : 100;

	while (!worker_stopping(&s->w)) {
		int n;

		s->cfg = s->p.pub ? config_pub_get(s->p.pub, s->p.pub_slot) : s->p.cfg;
		n = epoll_wait(s->epfd, ev, EPOLL_EVENTS, timeout);

		if (n < 0 && errno != EINTR) {
			log_error_errno(-errno, "%s sampler: epoll_wait failed, stopping",
					s->src.name);
			break;
		}
		perf_sampler_drain(s);
	}
	perf_sampler_drain(s); /* what arrived before the events were disabled */
	return NULL;
}

static int ioctl_all(struct perf_sampler *s, unsigned long req, unsigned long arg)
{
	int first = 0;

	for (size_t i = 0; i < s->nfds; i++) {
		int r = s->p.ops->ioctl(s->p.ops->ctx, s->fds[i].fd, req, arg);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

int perf_sampler_start(struct perf_sampler *s)
{
	int r;

	if (s->w.running)
		return 0;
	r = ioctl_all(s, PERF_EVENT_IOC_ENABLE, 0);
	if (r < 0)
		return log_error_errno(r, "%s: cannot enable the events", s->src.name);
	r = worker_start(&s->w, sampler_thread, s);
	if (r < 0)
		ioctl_all(s, PERF_EVENT_IOC_DISABLE, 0);
	return r;
}

void perf_sampler_stop(struct perf_sampler *s)
{
	if (!s->w.running)
		return;
	ioctl_all(s, PERF_EVENT_IOC_DISABLE, 0);
	worker_stop(&s->w);
}

void perf_sampler_adapt_period(struct perf_sampler *s, struct period_ctl *c,
			       struct period_ctl_clock *k, const struct perf_ring_counts *total)
{
	uint64_t period;

	if (period_ctl_tick(c, k, clock_monotonic_ns(), clock_thread_cpu_ns(), total->samples,
			    total->lost, total->throttles, &period))
		perf_sampler_set_period(s, period);
}

int perf_sampler_set_period(struct perf_sampler *s, uint64_t period)
{
	int first = 0;

	for (size_t i = 0; i < s->nfds; i++) {
		int r;

		if (s->src.attr[s->fds[i].event].sample_period == 0)
			continue; /* a counting leader has no period to change */
		r = s->p.ops->ioctl(s->p.ops->ctx, s->fds[i].fd, PERF_EVENT_IOC_PERIOD,
				    (unsigned long)&period);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

/* ---- the running perf source ---- */

static void perf_source_on_drain(void *ctx, struct perf_sampler *sampler,
				 const struct perf_ring_counts *total)
{
	struct perf_source *ps = ctx; /* the source's first member (perf_source_launch) */

	perf_sampler_adapt_period(sampler, &ps->ctl, &ps->clk, total);
}

int perf_source_launch(struct perf_source *ps, struct perf_sampler_source *ss,
		       const struct perf_sampler_params *p, char *reason, size_t size)
{
	int r;

	ss->on_drain = perf_source_on_drain;
	r = perf_sampler_launch(ss, p, &ps->sampler, reason, size);
	if (r < 0)
		return r;
	ps->source = ss->source;
	ps->stats = p->stats;
	if (ps->stats)
		stats_source_active(ps->stats, ps->source, 1);
	return 0;
}

void perf_source_stop(struct perf_source *ps)
{
	perf_sampler_free(ps->sampler); /* stops it first */
	ps->sampler = NULL;
	if (ps->stats)
		stats_source_active(ps->stats, ps->source, 0);
	ps->stats = NULL;
	if (ps->pub)
		config_pub_unregister(ps->pub, ps->pub_slot);
	ps->pub = NULL;
}

/* The periodic drain; under load the rings' watermark wakes the thread sooner. */
#define PERF_SOURCE_DRAIN_MS 100

static struct perf_sampler_params perf_source_params(const struct source_deps *d,
						     const struct pghotd_config *cfg, int slot)
{
	return (struct perf_sampler_params){
	    .drain_interval_ms = PERF_SOURCE_DRAIN_MS,
	    .pid = -1,
	    .page_size = (size_t)sysconf(_SC_PAGESIZE),
	    .stats = d->stats,
	    .sink = d->sink,
	    .pub = d->pub,
	    .pub_slot = slot,
	    .cfg = d->pub ? NULL : cfg,
	    .ops = d->perf_ops,
	};
}

int perf_source_ops_start(const struct source_deps *d, enum stat_source id,
			  perf_source_start_fn start, void **out)
{
	const struct pghotd_config *cfg = config_pub_current(d->pub);
	char reason[SOURCE_REASON_MAX] = "";
	int slot = config_pub_register(d->pub), r;
	struct perf_sampler_params sp;
	struct perf_source *ps;

	if (slot < 0)
		return log_error_errno(slot, "no config slot for source %s", stat_source_name(id));
	sp = perf_source_params(d, cfg, slot);
	r = start(d, cfg, &sp, &ps, reason, sizeof(reason));
	if (r == 0) {
		ps->pub = d->pub;
		ps->pub_slot = slot;
		*out = ps;
		return 1;
	}
	config_pub_unregister(d->pub, slot);
	if (d->required)
		return log_error_errno(r, "source %s: unavailable: %s", stat_source_name(id),
				       reason);
	log_warning("source %s: unavailable: %s", stat_source_name(id), reason);
	return 0;
}

int perf_source_ops_trial(const struct source_deps *d, perf_source_start_fn start,
			  void (*stop)(void *handle), char *reason, size_t size)
{
	struct perf_sampler_params sp = perf_source_params(d, d->cfg, -1);
	struct perf_source *ps = NULL;
	int r = start(d, d->cfg, &sp, &ps, reason, size);

	stop(ps);
	return r;
}

static bool perf_trial_drop(void *ctx, const struct perf_event_header *h,
			    const struct perf_sample *s, struct access_event *out)
{
	(void)ctx, (void)h, (void)s, (void)out;
	return false;
}

void perf_sampler_trial(const struct source_deps *d, char *verdict, size_t size)
{
	struct perf_sampler_source src = {
	    .source = SRC_PEBS,
	    .name = "software page-fault event",
	    .nr_events = 1,
	    .attr = {{.type = PERF_TYPE_SOFTWARE,
		      .config = PERF_COUNT_SW_PAGE_FAULTS,
		      .sample_period = 1000,
		      .sample_type =
			  PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU,
		      .exclude_kernel = 1}},
	    .leader = -1,
	    .convert = perf_trial_drop};
	struct perf_sampler_params p = perf_source_params(d, d->cfg, -1);
	struct perf_sampler *s = NULL;
	char err[PERF_SAMPLER_ERR_LEN];
	int r;

	p.ring_pages = 1;
	r = perf_sampler_launch(&src, &p, &s, err, sizeof(err));
	if (r < 0) {
		snprintf(verdict, size, "refused: %s", err);
		return;
	}
	perf_sampler_stop(s);
	perf_sampler_free(s);
	snprintf(verdict, size,
		 "ok: a software event opens, maps and enables on every CPU (perf_event_open "
		 "allowed)");
}
