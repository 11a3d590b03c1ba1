/* abit_source: the Accessed-bit source. Finds accesses to slow-tier pages with idle page
 * tracking (/sys/kernel/mm/page_idle/bitmap), for machines without a usable PMU.
 *
 * The selected processes' VMAs are cut into pieces of at most 2 MiB (aligned, so a
 * PMD-mapped THP is one piece). Scanning a piece: read back the bitmap words of the PFNs
 * marked at its last scan, read its pagemap (512 entries per pread), report every tracked
 * page whose bit was cleared and whose PFN is unchanged (so a page that moved or was unmapped
 * after the mark is never reported), learn the pages that are new or moved (kpageflags,
 * only for those: a THP is tracked once, by its head; pages off the LRU are not tracked),
 * then mark the tracked set idle again. Only present pages whose PFN is on a slow node are
 * tracked. Rounds run every sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP: a piece whose
 * last scan found accesses (or newly tracked pages) is scanned every round, so the second
 * access that makes a page hot is seen half a scan interval after the first; a piece
 * without accesses for ABIT_BACKOFF_SCANS scans goes back to once per scan interval
 * (ABIT_HOT_SPEEDUP rounds), and after
 * ABIT_BACKOFF_SCANS such scans doubles its interval, up to ABIT_MAX_INTERVAL rounds, so the
 * scan follows the heat; a piece holding pages of a fast node watched for demotion backs off
 * to a quarter of the demotion idle time at most, so its cold pages keep being offered. A token
 * bucket holds the pagemap entries looked at to sources.abit.max_pages_per_sec; pieces the budget
 * cannot pay for stay due and are served first next round. Processes and their VMAs are re-read
 * every ABIT_REFRESH_ROUNDS rounds and after a reload; in between, one readdir of the procfs root
 * per step (ABIT_SAMPLES_PER_ROUND steps a round; abit_step() between rounds in mode "full")
 * finds the pids it did not list before, and only those are read, added and looked at in that
 * step, without a re-read of every watched process; a new pid passed over (not selected yet,
 * as a shell forked to exec a watched program is, or nothing mapped yet) is read again at each
 * step of its first ABIT_REFRESH_ROUNDS rounds (up to ABIT_RETRY_MAX such pids). In a process
 * scanned in full, a piece whose scan learned new slow pages, or found accesses where its last scan
 * found none, is looked at again by the next QUICK_STEPS steps (quick looks; in a process's first
 * ABIT_REFRESH_ROUNDS rounds a piece that holds no page yet is looked at by every step), so a page
 * used all
 * the time counts twice within a quarter of a scan interval of the first look; arrivals on the slow
 * tier wake their pieces for the next step (but for pieces of watched fast pages only, which keep
 * the cold side's pace), and so does a process that was quiet for a round when
 * it shows accesses again (abit_scan_wake()). A scan marks again only the pages it found accessed
 * or learned: a page read idle keeps its mark. A page the last look learned (fresh) and this look,
 * within a quarter of a scan interval, found accessed is first evidence: delivered with a
 * threshold one below promotion.threshold while the fast node with most free memory has twice
 * the promotion reserve free (evidence_first_threshold()).
 *
 * With sources.abit.mode = "regions" a round is preceded by ABIT_SAMPLES_PER_ROUND - 1 sampling
 * steps (abit_round runs one step per call, and every ABIT_SAMPLES_PER_ROUND-th call is also a
 * round): each process's address space is covered by abit_sampler's regions (at most
 * sources.abit.max_regions, one per ABIT_REGION_MIN_PAGES pages at most), one page of each is
 * sampled per step, and at the end of each aggregation interval (ABIT_SAMPLES_PER_AGGR steps,
 * one scan interval) the 2 MiB pieces overlapping a sampling region whose samples saw an access, or
 * whose own scan found one since, are "watched"; so is, at once, the 2 MiB piece of a sample
 * read back accessed (and its pages learned and marked in that step, then read again at the
 * next two steps, before the rounds take it over); rounds scan only watched pieces, and an
 * unwatched piece keeps no per-page cache. Sampled pages count as pages looked at.
 *
 * Demotion (deps.cold): on the fast nodes the cold list wants watched, the same scan also
 * tracks the present LRU pages of fast nodes (their cache entries and idle bits like slow
 * pages'), keeps for each the time since which it was not seen accessed (its first scan at
 * this PFN, or its last access), and offers the page to the cold
 * list once idle for config_demotion_exchange_ms(), once per idle episode, or again after the
 * list's epoch changed (which also makes the pieces holding such pages due at once). An access to
 * a fast page is not delivered to the sink, and does not make its piece scanned more often. With
 * no node wanted, fast pages stay untracked and a page costs what it did before. In mode "regions"
 * the samples also mark pages of watched fast nodes and note the 2 MiB pieces where one stayed
 * idle from one step to the next, and a cold window
 * (half of sources.abit.max_watched_mib at most) scans them page by page in turn, each for
 * the idle time and a half, so their cold pages are offered as the full scan offers them.
 *
 * The source is unavailable (abit_new fails, or abit_round returns -EPERM and
 * abit_unavailable_reason() says why) when page_idle or kpageflags cannot be opened or pagemap
 * hides PFNs (no CAP_SYS_ADMIN). Processes that exit mid-scan are dropped silently.
 *
 * Threads: abit_new/free/start/stop on the main thread; abit_round on the source thread (or a
 * test or benchmark acting as it). */
#ifndef PGHOTD_ABIT_SOURCE_H
#define PGHOTD_ABIT_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "table/access.h"
#include "base/config.h"
#include "sources/abit/abit_params.h"
#include "sources/abit/idle_bitmap.h"
#include "sources/source.h"

struct cold_list;
struct config_pub;
struct procs;
struct stats;

struct abit_deps {
	const char *procfs_root; /* "/proc" live */
	const char *sysfs_root;	 /* "/sys" live: kernel/mm/page_idle/bitmap */
	struct access_sink sink;
	struct stats *stats;	       /* may be NULL (tests) */
	const struct idle_io_ops *ops; /* NULL: idle_io_real_ops */
	/* Process never scanned (pghotd itself): 0 means getpid(), -1 means none. */
	pid_t self_pid;
	/* Seed of region sampling's random numbers; 0: from the clock. */
	uint64_t seed;
	/* Demotion: where cold pages of fast nodes go, and which nodes to watch
	 * (cold_list_wanted()); NULL: none are looked for. procs gives each offer its process's
	 * handle (NULL: offers carry none). */
	struct cold_list *cold;
	struct procs *procs;
	/* 2 MiB pieces the source keeps over every process at most (vmas.h); 0: from the
	 * machine's memory, vmas_total_cap(). */
	uint64_t pieces_cap;
};

struct abit;

/* Main thread. Opens the bitmap (read-write) and kpageflags; when either cannot be opened the
 * source is unavailable: one log line with the reason, -errno, *out untouched. */
int abit_new(const struct abit_deps *deps, struct abit **out);
/* Main thread, after abit_stop(). */
void abit_free(struct abit *a);

/* Source thread: one scan round with cfg (topology from cfg->topo; none: nothing is slow).
 * Delivers the accesses found to the sink and returns how many, or -errno: -EPERM when the
 * source has become unavailable (reason in abit_unavailable_reason()). Does not sleep. */
int abit_round(struct abit *a, const struct pghotd_config *cfg);

/* Source thread, between rounds of mode "full" (in mode "regions" the same as abit_round(),
 * which counts its own steps): the pids the last listing did not hold are watched and their
 * pieces looked at, arrivals on the slow tier wake their pieces, and the quick looks are
 * made. Returns what abit_round() returns. */
int abit_step(struct abit *a, const struct pghotd_config *cfg);

/* Main thread: registers a config_pub slot, starts the thread (a round or a step, then a
 * sleep of abit_step_pause_ms(), longer after a call whose CPU time would put the thread past
 * sources.abit.max_cpu_percent (abit_cpu_pace_ms()), it can be woken from, config_pub_get() at the
 * top of each loop; nothing while sources.abit.enabled is off). -errno, nothing started, on
 * failure. */
int abit_start(struct abit *a, struct config_pub *pub);
/* Main thread: wakes and joins the thread, unregisters the slot. No-op when not started. */
void abit_stop(struct abit *a);
/* The thread's CPU pace (sources.abit.max_cpu_percent): credit earned at pct percent of the
 * wall time, at most a window's worth banked; zeroed means "not started". */
struct abit_cpu_pace {
	int64_t credit_ns;
	uint64_t last_ns;
	bool started;
};

/* Pure but for *p: the sleep after a round or step that took cpu_ns of the thread's CPU time
 * (user and kernel) and ended at now_ns, so that the thread uses at most pct percent of one CPU
 * over time, at most window_ms's share beyond it in a burst, and never less than step_ms: a
 * costly round is followed by steps at their pace while the banked credit lasts (the first
 * looks at a process that wakes then are not put off by it), then by sleeps that earn the
 * debt back. */
unsigned abit_cpu_pace_ms(struct abit_cpu_pace *p, uint64_t now_ns, uint64_t cpu_ns, unsigned pct,
			  unsigned step_ms, unsigned window_ms);

/* Source thread: the step's pause before the next call, before the CPU pace
 * (abit_cpu_pace_ms()): sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP /
 * ABIT_SAMPLES_PER_ROUND, or ABIT_HURRY_DIV times less once after a call that woke a process or
 * found a piece used again, so the quick looks that follow come soon. */
unsigned abit_step_pause_ms(struct abit *a, const struct pghotd_config *cfg);

/* The source interface: abit_new and abit_start on the engine's deps; stop frees. */
extern const struct source_ops abit_source_ops;

/* Why the source is unavailable, or NULL while it is usable. Thread that runs rounds, or the
 * main thread after abit_stop(). */
const char *abit_unavailable_reason(const struct abit *a);

/* Introspection for tests and the benchmark (source thread). */
size_t abit_nr_procs(const struct abit *a);
/* Pages tracked (marked idle) over every process. */
size_t abit_nr_tracked(const struct abit *a);
/* Scan interval in rounds of the piece of pid holding vaddr; -ENOENT when none. */
int abit_piece_interval(const struct abit *a, pid_t pid, uint64_t vaddr);
/* Mode "regions": 1 when the piece of pid holding vaddr is watched, 0 when not, -ENOENT. */
int abit_piece_watched(const struct abit *a, pid_t pid, uint64_t vaddr);
/* Mode "regions": sampling regions of pid (0 when it has no sampler). */
size_t abit_nr_sample_regions(const struct abit *a, pid_t pid);

#endif
