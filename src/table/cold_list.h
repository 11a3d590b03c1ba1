/* cold_list: demotion candidates handed from the Accessed-bit source to the mover (promoter).
 *
 * The source offers pages of fast nodes that stayed idle for config_demotion_exchange_ms(),
 * each once per idle episode; the mover takes the coldest pages of one node when that node needs
 * room. The list is bounded: an offer into a full list first drops its warmer half. An entry
 * offered longer ago than the mover's max_age is stale (the page may have been used since) and is
 * dropped when the mover takes.
 *
 * Two signals go back to the source, both atomics:
 *   - wanted: the fast nodes that want candidates (a node mask). The source measures idle ages
 *     of fast pages on those nodes only, so a machine with free DRAM pays nothing.
 *   - epoch: bumped by the mover when a node still needs room the list cannot give; the source
 *     then offers again pages it offered before (taken and not moved, dropped, or stale).
 *
 * Threads: cold_list_offer() and the readers of the signals on the source thread;
 * cold_list_take(), cold_list_want(), cold_list_reoffer() on the mover thread. A mutex guards
 * the entries: an offer comes once per region scanned, a take once per interval and node. */
#ifndef PGHOTD_COLD_LIST_H
#define PGHOTD_COLD_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "table/hot_table.h"

struct cold_page {
	pid_t pid;
	/* procs handle of the process the page was found in (0: not known), so a pid reused
	 * between the offer and the move is caught as promotion catches it (procs_pid()). */
	uint32_t proc;
	uint64_t vaddr;		/* page aligned */
	uint64_t idle_since_ms; /* monotonic ms since which the page was not seen accessed */
	uint64_t offered_ms;	/* monotonic ms of the offer */
	int node;		/* the fast node holding it */
	enum hot_size size;	/* as the scanner saw it */
};

struct cold_list;

/* Main thread. capacity: entries kept at most (>= 2). -ENOMEM, -EINVAL. */
int cold_list_new(size_t capacity, struct cold_list **out);
void cold_list_free(struct cold_list *cl);

/* Source thread (or the mover, handing back what it took and will not move): adds n
 * pages. */
void cold_list_offer(struct cold_list *cl, const struct cold_page *pages, size_t n);
/* Mover thread: removes and returns up to max pages of node idle for min_idle_ms or more at
 * now_ms, coldest (oldest idle_since) first, after dropping every entry offered more than
 * max_age_ms before now_ms. Younger pages stay listed. */
size_t cold_list_take(struct cold_list *cl, int node, uint64_t now_ms, uint64_t max_age_ms,
		      uint64_t min_idle_ms, struct cold_page *out, size_t max);
/* Any thread: entries held. */
size_t cold_list_len(struct cold_list *cl);
/* A take's worth of entries (the promoter's 4,096-page work list): while a node wants
 * candidates and the list holds fewer, the DAMON source looks for cold pages at its quicker
 * pace (damon_cold_pass_due()); a take that finds too few bumps the epoch in any case. */
#define COLD_LIST_LOW 4096

/* Mover thread: the fast nodes that want candidates (bit n for node n). */
void cold_list_want(struct cold_list *cl, uint64_t node_mask);
/* Source thread: the mask last set by cold_list_want(). */
uint64_t cold_list_wanted(const struct cold_list *cl);
/* Mover thread: asks the source to offer again the pages it offered before. */
void cold_list_reoffer(struct cold_list *cl);
/* Source thread: the current offer epoch (changes after cold_list_reoffer()). */
uint32_t cold_list_epoch(const struct cold_list *cl);

#endif
