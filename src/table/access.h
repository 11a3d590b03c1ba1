/* access: the one access-event format every source produces (IBS, PEBS, the Accessed-bit
 * scanner, perf.data replay), and the sink they deliver to. The daemon's sink resolves the
 * process identity and records the event in the hot table; tests install their own sink. */
#ifndef PGHOTD_ACCESS_H
#define PGHOTD_ACCESS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "table/hot_table.h"
#include "base/stats.h"

enum access_kind { ACCESS_UNKNOWN, ACCESS_LOAD, ACCESS_STORE };

struct access_event {
	pid_t pid;
	pid_t tid;
	uint64_t vaddr;	  /* user virtual address (any byte of the page) */
	uint64_t paddr;	  /* physical address, 0 when unknown */
	int cpu;	  /* accessing CPU, -1 unknown */
	int node;	  /* node of that CPU, -1 unknown */
	uint64_t time_ns; /* CLOCK_MONOTONIC for live sources; the recording's clock for replay */
	enum stat_source source;
	enum access_kind kind;
	enum hot_size size; /* the page's mapping size, when the source knows it */
	/* 0: the page is hot after promotion.threshold accesses, as usual. Otherwise the lower
	 * threshold this one observation is worth: the Accessed-bit source's first evidence
	 * while a fast node has room (abit_source.h). */
	unsigned threshold;
};

struct pghotd_config;

/* deliver() is called from the source's own thread, with a batch of n events and the config
 * the source got from config_pub_get() at the top of its current loop iteration (the sink
 * uses it only during the call: threshold, window, process selection). */
struct access_sink {
	void (*deliver)(void *ctx, const struct pghotd_config *cfg, const struct access_event *ev,
			size_t n);
	void *ctx;
};

static inline void access_deliver(const struct access_sink *s, const struct pghotd_config *cfg,
				  const struct access_event *ev, size_t n)
{
	if (n)
		s->deliver(s->ctx, cfg, ev, n);
}

#endif
