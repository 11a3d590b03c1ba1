/* abit_internal: what the modules of the Accessed-bit source share, and nothing else of the
 * daemon includes. The source is one struct abit (abit_source.c: life cycle, thread, rounds),
 * whose processes and their 2 MiB pieces the table keeps (abit_table.c), which the page-by-page
 * scan reads and marks (abit_scan.c), mode "regions" chooses through its samplers
 * (abit_watch.c), and whose idle fast pages the cold side offers for demotion (abit_cold.c).
 *
 * Each module declares its functions in its own header, and they use each other one way:
 * abit_source -> abit_watch -> abit_scan -> abit_cold -> abit_table -> abit_piece -> here.
 *
 * Every function here runs on the source thread (or a test or benchmark acting as it), with
 * a->cfg, a->now_ns and a->now_ms set for the round or step under way (abit_source.c's
 * abit_begin()). */
#ifndef PGHOTD_ABIT_INTERNAL_H
#define PGHOTD_ABIT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_params.h"
#include "sources/abit/abit_sampler.h"
#include "sys/vmas.h"
#include "table/access.h"
#include "table/cold_list.h"
#include "base/config.h"
#include "sources/abit/idle_bitmap.h"
#include "sys/pagemap.h"
#include "base/token_bucket.h"
#include "base/worker.h"

struct procs;
struct stats;

/* A piece: ABIT_PIECE_PAGES pages, 2 MiB aligned (abit_sampler.h). */
#define PIECE_BYTES (ABIT_PIECE_PAGES * PAGEMAP_PAGE_SIZE)

/* Cached pagemap decode of one page of a piece: the PFN seen at the last scan, plus
 * whether its kpageflags were checked for that PFN (KNOWN), it is marked idle (TRACKED) and
 * it heads a THP (HUGE). A slow page not on an LRU list stays unKNOWN, so it is looked at
 * again next scan. */
#define ENT_PFN	    PAGEMAP_PFN_MASK
#define ENT_KNOWN   (UINT64_C(1) << 63)
#define ENT_TRACKED (UINT64_C(1) << 62)
#define ENT_HUGE    (UINT64_C(1) << 61)
/* A fast page offered to the cold list in this idle episode (cleared by an access, a new PFN
 * or a new offer epoch). */
#define ENT_OFFERED (UINT64_C(1) << 60)
/* A page of a watched fast node: tracked for its idle time, not for promotion. */
#define ENT_FAST (UINT64_C(1) << 59)
/* A slow page learned at this PFN by the piece's last scan and not looked at since: an access
 * the next look finds is the first evidence of its use (evidence_first_threshold()). */
#define ENT_FRESH (UINT64_C(1) << 58)
/* Cold pages gathered before one cold_list_offer(). */
#define COLD_BATCH 256
/* Mode regions: a 2 MiB piece a sample found accessed is read again at this many of the
 * following sampling steps, not only from the next round: a page accessed all the time then
 * reaches a promotion threshold of 2 two steps after the sample (a quarter of a scan interval
 * at the shipped settings), not a round and a half later. */
#define QUICK_STEPS 2

struct abit_piece {
	uint64_t start;
	uint32_t npages;
	uint32_t ntracked;
	uint32_t nfast;	     /* of them, pages of watched fast nodes (ENT_FAST) */
	uint16_t interval;   /* rounds between scans */
	uint16_t idle_scans; /* consecutive scans without an access */
	bool watch;	     /* mode regions: scanned for promotion */
	bool seen;	     /* mode regions: a scan found accesses since the last aggregation */
	bool fast_hint;	     /* mode regions: a sample found a watched fast node's page idle */
	bool cold_scanned;   /* mode regions: scanned since it joined the cold window */
	/* Sampling steps left that read it again (QUICK_STEPS): mode regions, after a sample's
	 * hit; a process scanned in full, after its pages were learned or it woke from idleness. */
	uint8_t quick;
	bool fresh;	     /* never scanned: looked at by the next step, not the next round */
	bool used;	     /* its last scan found accesses */
	uint32_t marked_ms;  /* abit_since_now() of its last mark */
	uint64_t cold_until; /* mode regions: in the cold window until this round; 0 not */
	uint64_t next_round;
	uint64_t *ent; /* [npages]; NULL while the piece holds no slow page */
	/* Demotion: for each tracked page of a watched fast node, the time (the scanner's
	 * milliseconds, modulo 2^32) since which it was not seen accessed; NULL while the piece
	 * holds no such page. offer_epoch: the cold list's epoch its OFFERED bits belong to. */
	uint32_t *since;
	uint32_t offer_epoch;
};

struct abit_proc {
	pid_t pid;
	uint64_t starttime;
	size_t npieces;
	struct abit_piece *piece;
	bool gone;
	int cpu, node; /* where it last ran; read once per round, when it has accesses */
	bool cpu_read;
	struct abit_sampler *smp; /* mode regions */
	int64_t handle;		  /* procs handle for cold offers; 0 not looked up, < 0 none */
	size_t nquick;		  /* pieces with re-reads pending (quick) or fresh, at most */
	uint64_t added;		  /* the round it was first watched (table_reread_young()) */
	uint64_t vm_size, vm_rss; /* statm (pages) when its maps were last read */
	unsigned maps_kept;	  /* re-reads since, that found both unchanged (proc_build()) */
	bool capped;		  /* pieces were left out at that read: read again at each */
	/* The process wake (abit_scan_wake()): whether a scan found accesses since the last round
	 * began; quiet since a round (and its steps) found none, and the scans with accesses since;
	 * the round of the last wake. */
	bool round_used;
	uint32_t wake_scans;
	bool quiet;
	uint64_t woke_round;
	size_t sentinel; /* the piece its next sentinel looks start from (abit_scan_quick()) */
};

/* The process table (abit_table.c). */
struct abit_table_state {
	struct abit_proc *procs; /* sorted by pid */
	size_t nprocs;
	pid_t *listed; /* every pid of the procfs root at the last refresh, sorted */
	size_t nlisted;
	uint64_t last_refresh, cfg_generation;
	bool refreshed;
	struct vmas vmas; /* proc_vmas() scratch */
	/* 2 MiB pieces over every process, at most (deps.pieces_cap), and held now. */
	uint64_t pieces_cap, pieces_used;
	bool maps_keep; /* the configuration is the one the kept pieces were built for */
	/* Pids new to a listing that were passed over (not selected, or nothing mapped yet: a
	 * forked shell before its exec, a program before its first mapping), sorted, each with
	 * the last round it is looked at again: at every step until then (abit_table_add_new()),
	 * not only at the next periodic re-read. */
	struct abit_retry {
		pid_t pid;
		uint64_t until;
	} retry[ABIT_RETRY_MAX];
	size_t nretry;
};

/* The scan (abit_scan.c): the threshold a fresh page's first access is worth
 * (evidence_first_threshold(), read once a round), whether the scan under way is a step's quick
 * look, the events gathered, one piece's scratch. */
struct abit_scan_state {
	unsigned first_thr;
	bool quick;
	unsigned sentinels; /* sentinel looks left to this step (ABIT_SENTINELS_PER_STEP) */
	bool pfn_seen;	    /* some present page showed a non-zero PFN */
	struct access_event ev[ABIT_EVENT_BATCH];
	size_t nev;
	uint64_t pm[ABIT_PIECE_PAGES];
	uint64_t pfns[ABIT_PIECE_PAGES];
	uint32_t idx[ABIT_PIECE_PAGES];
	int node[ABIT_PIECE_PAGES]; /* page nodes, when the topology has no block map */
	void *addr[ABIT_PIECE_PAGES];
	/* Pages the fetch read idle at an unchanged PFN: still marked, so not marked again. */
	bool still[ABIT_PIECE_PAGES];
	/* The piece under scan: milliseconds until the first of its watched fast pages found idle
	 * and not offered yet is idle long enough to be offered (UINT32_MAX: none). */
	uint32_t cold_wait_ms;
	struct idle_words words;
};

/* Mode regions (abit_watch.c, and abit_cold.c's window). */
struct abit_watch_state {
	uint64_t step, rng; /* sampling steps, random state */
	size_t nwatched;    /* 2 MiB pieces watched or in the cold window, all processes */
	pid_t cold_pid;	    /* where the cold window's walk goes on */
	uint64_t cold_vaddr;
};

/* Demotion candidates (abit_cold.c): where they go (NULL: none wanted) and the handles for
 * them, and per round: the fast nodes to watch (a mask), the offer epoch and the last one
 * abit_cold_follow_epoch() saw, the pages gathered. */
struct abit_cold_state {
	struct cold_list *list;
	struct procs *registry; /* deps.procs */
	uint64_t want;
	uint32_t epoch, woken_epoch;
	struct cold_page batch[COLD_BATCH];
	size_t nbatch;
};

struct abit {
	/* Set at abit_new() (abit_source.c). */
	char *procfs_root, *sysfs_root;
	struct access_sink sink;
	struct stats *stats;
	/* The I/O: ops is io.ops, which counts the bytes moved and passes each call to the
	 * caller's ops (deps.ops). */
	const struct idle_io_ops *ops;
	struct idle_io_counter io;
	pid_t self_pid;
	int bitmap_fd, kpf_fd;
	char reason[256]; /* why the source is unavailable; empty while usable */
	struct worker w;
	struct config_pub *pub;
	int slot;

	/* The round (abit_source.c): its config and clock, the page budget and where the last
	 * round's ran out, the counters of the call under way. */
	const struct pghotd_config *cfg;
	uint64_t now_ns, now_ms;
	uint64_t round_ns; /* time spent in the calls since the last round ended */
	uint64_t round;
	struct token_bucket budget;
	bool budget_init;
	pid_t cur_pid;
	uint64_t cur_vaddr;
	uint64_t scanned, found;
	int error;
	/* abit_follow_arrivals(): the slow nodes' use (bytes) less pghotd's own demotions, at
	 * its lowest since the last wake; known once read. */
	uint64_t slow_used;
	bool slow_used_known;
	uint64_t last_wake; /* the round of the last wake */
	/* A scan woke a process or found a piece used again (abit_scan_wake(), piece_quicken()):
	 * the quick looks that follow come after a short step (ABIT_HURRY_DIV), not a whole one. */
	bool hurry;

	struct abit_table_state table;
	struct abit_scan_state scan;
	struct abit_watch_state watch;
	struct abit_cold_state cold;
};

static inline bool abit_errno_gone(int r)
{
	return r == -ENOENT || r == -ESRCH;
}

/* Mode regions: the piece is scanned page by page (for promotion, or in the cold window). */
static inline bool abit_piece_scanned(const struct abit_piece *g)
{
	return g->watch || g->cold_until;
}

/* The scanner's milliseconds as a since[] value: odd, so 0 means "not known yet". */
static inline uint32_t abit_since_now(const struct abit *a)
{
	return (uint32_t)a->now_ms | 1;
}

static inline bool abit_stopping(struct abit *a)
{
	return worker_stopping(&a->w);
}

#endif
