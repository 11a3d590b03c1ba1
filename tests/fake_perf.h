/* Fake perf syscalls for perf_sampler (struct perf_sampler_ops): each open gives a real
 * eventfd the sampler can poll, each map a zeroed ring of the asked size; the struct counts
 * what is open and remembers the last event. open_err makes every open fail with it. */
#ifndef PGHOTD_TESTS_FAKE_PERF_H
#define PGHOTD_TESTS_FAKE_PERF_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sources/perf/perf_sampler.h"

struct fake_perf {
	int opens, open_fds, maps, ioctls, open_err;
	struct perf_event_attr last; /* the last event opened */
	int cpu;
	pid_t pid;
};

static inline int fake_perf_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
				 int group_fd)
{
	struct fake_perf *f = ctx;
	int fd;

	(void)group_fd;
	if (f->open_err)
		return f->open_err;
	fd = eventfd(0, EFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	f->opens++;
	f->open_fds++;
	f->last = *attr;
	f->cpu = cpu;
	f->pid = pid;
	return fd;
}

static inline int fake_perf_mmap(void *ctx, int fd, size_t len, void **out)
{
	struct fake_perf *f = ctx;
	struct perf_event_mmap_page *m = aligned_alloc(4096, len);

	(void)fd;
	if (!m)
		return -ENOMEM;
	memset(m, 0, len);
	m->data_offset = 4096;
	m->data_size = len - 4096;
	f->maps++;
	*out = m;
	return 0;
}

static inline void fake_perf_munmap(void *ctx, void *addr, size_t len)
{
	(void)len;
	((struct fake_perf *)ctx)->maps--;
	free(addr);
}

static inline int fake_perf_ioctl(void *ctx, int fd, unsigned long req, unsigned long arg)
{
	(void)fd, (void)req, (void)arg;
	((struct fake_perf *)ctx)->ioctls++;
	return 0;
}

static inline void fake_perf_close(void *ctx, int fd)
{
	((struct fake_perf *)ctx)->open_fds--;
	close(fd);
}

static inline int fake_perf_getrlimit(void *ctx, struct rlimit *out)
{
	(void)ctx;
	out->rlim_cur = out->rlim_max = 65536;
	return 0;
}

static inline int fake_perf_setrlimit(void *ctx, const struct rlimit *in)
{
	(void)ctx, (void)in;
	return 0;
}

static inline struct perf_sampler_ops fake_perf_ops(struct fake_perf *f)
{
	return (struct perf_sampler_ops){
	    fake_perf_open,  fake_perf_mmap,	  fake_perf_munmap,    fake_perf_ioctl,
	    fake_perf_close, fake_perf_getrlimit, fake_perf_setrlimit, f};
}

#endif
