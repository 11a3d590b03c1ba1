/* abit_source: the Accessed-bit source (page_idle scanning of slow-tier pages): its life cycle,
 * its thread, and the round and step that drive the table (abit_table.c), the scan
 * (abit_scan.c), the watch of mode "regions" (abit_watch.c) and the cold side (abit_cold.c). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/abit/abit_source.h"
#include "sources/abit/abit_cold.h"
#include "sources/abit/abit_scan.h"
#include "sources/abit/abit_table.h"
#include "sources/abit/abit_watch.h"
#include "base/clock.h"
#include "base/config_pub.h"
#include "sources/evidence.h"
#include "base/log.h"
#include "sys/procfs.h"
#include "base/stats.h"
#include "sys/topology.h"

static uint64_t abit_now_ns(const struct abit *a)
{
	return a->ops->now_ns(a->ops->ctx);
}

static void abit_stat_add(struct abit *a, enum stat_src_counter c, uint64_t n)
{
	if (a->stats)
		stats_src_add(a->stats, SRC_ABIT, c, n);
}

static void abit_set_active(struct abit *a, int active)
{
	if (a->stats)
		stats_source_active(a->stats, SRC_ABIT, active);
}

static void abit_configure_budget(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t rate = cfg->sources.abit.max_pages_per_sec;
	uint64_t burst = rate * cfg->sources.abit.scan_interval_ms / 1000;
	uint64_t now_ms = a->now_ns / 1000000;

	/* A burst below one piece would stall it; the bucket's debt rule keeps the long-run
	 * rate anyway. */
	if (burst < ABIT_PIECE_PAGES)
		burst = ABIT_PIECE_PAGES;
	if (!a->budget_init) {
		token_bucket_init(&a->budget, rate, burst, now_ms);
		a->budget_init = true;
	} else {
		token_bucket_configure(&a->budget, rate, burst);
		token_bucket_refill(&a->budget, now_ms);
	}
}

/* Slow-tier use that grows by this many pages (16 MiB) wakes the backed-off pieces. */
#define ABIT_ARRIVAL_PAGES 4096

/* Pages that arrive on the slow tier (an operator's migratepages, the kernel's demotion, an
 * allocation that fell back to a slow node) land in pieces whose scans backed off while
 * they held no slow page, and would be seen up to ABIT_MAX_INTERVAL rounds later. The slow
 * nodes' use, read each round from their meminfo (less the bytes pghotd itself demoted), says
 * when that happens: grown by ABIT_ARRIVAL_PAGES since its lowest reading, every piece of
 * every watched process that backed off beyond one scan per interval is due at once, at most
 * once per interval (a stream of new processes filling the slow tier would otherwise keep the
 * scanner on every piece at its budget), and the page budget paces the scan as ever. */
static void abit_follow_arrivals(struct abit *a)
{
	const struct topology *t = a->cfg->topo;
	uint64_t used = 0, total, free_b, own = a->stats ? stats_demoted_bytes_total(a->stats) : 0;

	if (!t)
		return;
	for (int n = 0; n < t->nr_nodes; n++) {
		if (!t->node[n].present || !topology_node_is_slow(t, n))
			continue;
		if (topology_read_meminfo(t, n, &total, &free_b) < 0)
			return; /* no reading this round: the back-off stands */
		used += total > free_b ? total - free_b : 0;
	}
	used = used > own ? used - own : 0;
	if (!a->slow_used_known || used < a->slow_used) {
		a->slow_used = used;
		a->slow_used_known = true;
		return;
	}
	if (used - a->slow_used < (uint64_t)ABIT_ARRIVAL_PAGES * PAGEMAP_PAGE_SIZE ||
	    a->round < a->last_wake + ABIT_HOT_SPEEDUP)
		return;
	a->last_wake = a->round;
	log_debug("abit: %" PRIu64 " KiB more on the slow tier: every region scanned again",
		  (used - a->slow_used) >> 10);
	a->slow_used = used;
	for (size_t i = 0; i < a->table.nprocs; i++) {
		if (a->table.procs[i].smp)
			abit_sampler_wake(a->table.procs[i].smp);
		abit_proc_wake_pieces(a, &a->table.procs[i], ABIT_HOT_SPEEDUP);
	}
}

/* Between rounds, at each step: the pids the last listing did not hold are watched at once and
 * their pieces looked at (a readdir per step), pages newly on the slow tier wake their pieces,
 * and the quick looks of processes scanned in full are made. */
static int abit_between(struct abit *a, const struct pghotd_config *cfg)
{
	pid_t *pids;
	size_t n;
	int r;

	if (a->table.refreshed && a->table.cfg_generation == cfg->generation &&
	    procfs_list_pids(a->procfs_root, &pids, &n) == 0) {
		r = abit_table_add_new(a, cfg, pids, n);
		if (r < 0)
			return r;
	}
	abit_follow_arrivals(a);
	a->scan.sentinels = ABIT_SENTINELS_PER_STEP;
	for (size_t i = 0; i < a->table.nprocs && !abit_stopping(a); i++)
		if (abit_scan_quick(a, &a->table.procs[i]) == -EPERM)
			return -EPERM;
	return 0;
}

/* The start of a round or a step: its config, clock and demotion signals. */
static void abit_begin(struct abit *a, const struct pghotd_config *cfg, uint64_t t0)
{
	a->cfg = cfg;
	a->now_ns = t0;
	a->now_ms = t0 / 1000000;
	/* No cold list, or demotion off: every fast page stays untracked, as before demotion. */
	a->cold.want = a->cold.list && cfg->demotion.enabled ? cold_list_wanted(a->cold.list) : 0;
	a->cold.epoch = a->cold.list ? cold_list_epoch(a->cold.list) : 0;
	a->scanned = a->found = 0;
	a->error = 0;
}

/* The end of a round or a step: gone processes dropped, the counters; returns the verdict. */
static int abit_end(struct abit *a, uint64_t t0, bool round, int r)
{
	abit_scan_wake(a);
	abit_table_drop_gone(a);
	abit_stat_add(a, SS_PAGES_SCANNED, a->scanned);
	abit_stat_add(a, SS_SCAN_IO_BYTES, a->io.bytes);
	a->io.bytes = 0;
	abit_stat_add(a, SS_SAMPLES, a->found);
	/* The gauge holds a whole round: its steps since the last one too (each step alone is
	 * short, and the last would hide a long re-read). */
	a->round_ns += abit_now_ns(a) - t0;
	if (a->stats && round) {
		/* relaxed: an independent gauge, like every stats counter. */
		atomic_store_explicit(&a->stats->src_scan_round_us[SRC_ABIT], a->round_ns / 1000,
				      memory_order_relaxed);
	}
	if (round)
		a->round_ns = 0;
	if (r == -EPERM) {
		snprintf(a->reason, sizeof(a->reason),
			 "%s/PID/pagemap hides page frame numbers (no CAP_SYS_ADMIN)",
			 a->procfs_root);
		return r;
	}
	if (r < 0)
		return r;
	return a->error ? a->error : (int)a->found;
}

int abit_round(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t t0 = abit_now_ns(a);
	bool regions = cfg->sources.abit.mode == ABIT_MODE_REGIONS;
	/* In mode regions only every ABIT_SAMPLES_PER_ROUND-th step is a round. */
	bool round = !regions || a->watch.step % ABIT_SAMPLES_PER_ROUND == 0;
	int r = 0;

	if (a->reason[0])
		return -EPERM;
	abit_begin(a, cfg, t0);
	/* A reload is taken up at once: it may switch the mode. */
	if (round || cfg->generation != a->table.cfg_generation)
		r = abit_table_refresh(a, cfg);
	if (r < 0)
		return r;
	abit_configure_budget(a, cfg);
	if (round)
		a->scan.first_thr = evidence_first_threshold(cfg);
	if (regions) {
		r = abit_watch_sample_all(a);
		a->watch.step++;
	}
	if (!round && r == 0)
		r = abit_between(a, cfg);
	if (round && r == 0) {
		abit_scan_new_round(a);
		abit_follow_arrivals(a);
		abit_cold_follow_epoch(a);
		if (regions)
			abit_cold_window(a);
		r = abit_scan_all(a);
		a->round++;
	}
	return abit_end(a, t0, round, r);
}

int abit_step(struct abit *a, const struct pghotd_config *cfg)
{
	uint64_t t0 = abit_now_ns(a);
	int r = 0;

	if (a->reason[0])
		return -EPERM;
	if (cfg->sources.abit.mode == ABIT_MODE_REGIONS)
		return abit_round(a, cfg);
	abit_begin(a, cfg, t0);
	if (cfg->generation != a->table.cfg_generation)
		r = abit_table_refresh(a, cfg);
	if (r < 0)
		return r;
	abit_configure_budget(a, cfg);
	r = abit_between(a, cfg);
	return abit_end(a, t0, false, r);
}

static int open_required(const char *path, int flags, const char *what, char *reason, size_t len)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	snprintf(reason, len, "no %s (%s: %s)", what, path, strerror(errno));
	return -errno;
}

int abit_new(const struct abit_deps *deps, struct abit **out)
{
	struct abit *a = calloc(1, sizeof(*a));
	char path[PATH_MAX], why[PATH_MAX + 64];
	int r = -ENOMEM;

	if (!a)
		return -ENOMEM;
	a->bitmap_fd = a->kpf_fd = a->w.efd = -1;
	a->slot = -1;
	a->procfs_root = strdup(deps->procfs_root);
	a->sysfs_root = strdup(deps->sysfs_root);
	if (!a->procfs_root || !a->sysfs_root)
		goto fail;
	a->sink = deps->sink;
	a->stats = deps->stats;
	a->cold.list = deps->cold;
	a->cold.registry = deps->procs;
	/* The bytes they move are counted for pghotd_scan_io_bytes_total. */
	idle_io_counter_init(&a->io, deps->ops ? deps->ops : &idle_io_real_ops);
	a->ops = &a->io.ops;
	a->self_pid = deps->self_pid == 0 ? getpid() : deps->self_pid;
	a->table.pieces_cap =
	    deps->pieces_cap ? deps->pieces_cap : vmas_total_cap((uint64_t)sysconf(_SC_PHYS_PAGES));
	a->watch.rng = deps->seed ? deps->seed : a->ops->now_ns(a->ops->ctx) ^ (uint64_t)getpid();
	snprintf(path, sizeof(path), "%s/kernel/mm/page_idle/bitmap", a->sysfs_root);
	r = a->bitmap_fd = open_required(path, O_RDWR, "page_idle", why, sizeof(why));
	if (r < 0)
		goto unavailable;
	snprintf(path, sizeof(path), "%s/kpageflags", a->procfs_root);
	r = a->kpf_fd = open_required(path, O_RDONLY, "kpageflags", why, sizeof(why));
	if (r < 0)
		goto unavailable;
	a->table.vmas.cancel = &a->w.stop;
	r = worker_init(&a->w, "abit source");
	if (r < 0) {
		log_error_errno(r, "abit source: cannot create its wake-up eventfd");
		goto fail;
	}
	*out = a;
	return 0;
unavailable:
	log_warning("abit source unavailable: %s", why);
fail:
	abit_set_active(a, 0);
	abit_free(a);
	return r;
}

void abit_free(struct abit *a)
{
	if (!a)
		return;
	abit_stop(a);
	abit_table_free(a->table.procs, a->table.nprocs);
	vmas_free(&a->table.vmas);
	free(a->table.listed);
	idle_words_free(&a->scan.words);
	if (a->bitmap_fd >= 0)
		close(a->bitmap_fd);
	if (a->kpf_fd >= 0)
		close(a->kpf_fd);
	worker_fini(&a->w);
	free(a->procfs_root);
	free(a->sysfs_root);
	free(a);
}

const char *abit_unavailable_reason(const struct abit *a)
{
	return a->reason[0] ? a->reason : NULL;
}

/* Sleeps up to ms (forever when negative), returning early when woken by abit_stop(). */
static void abit_sleep(struct abit *a, int ms)
{
	worker_sleep(&a->w, ms, NULL);
}

unsigned abit_step_pause_ms(struct abit *a, const struct pghotd_config *cfg)
{
	unsigned ms =
	    cfg->sources.abit.scan_interval_ms / ABIT_HOT_SPEEDUP / ABIT_SAMPLES_PER_ROUND;

	if (a->hurry)
		ms /= ABIT_HURRY_DIV;
	a->hurry = false;
	return ms ? ms : 1;
}

unsigned abit_cpu_pace_ms(struct abit_cpu_pace *p, uint64_t now_ns, uint64_t cpu_ns, unsigned pct,
			  unsigned step_ms, unsigned window_ms)
{
	int64_t cap = (int64_t)window_ms * 1000000 / 100 * pct;
	uint64_t ms;

	if (pct == 0 || pct >= 100)
		return step_ms;
	if (!p->started) {
		p->started = true;
		p->credit_ns = cap;
		p->last_ns = now_ns;
	}
	/* Earned since the last call ended: its sleep and the call's own wall time, which is at
	 * least its CPU time. A clock that goes backwards earns nothing. */
	if (now_ns > p->last_ns)
		p->credit_ns += (int64_t)((now_ns - p->last_ns) / 100 * pct);
	p->last_ns = now_ns;
	if (p->credit_ns > cap)
		p->credit_ns = cap;
	p->credit_ns -= cpu_ns > INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)cpu_ns;
	if (p->credit_ns >= 0)
		return step_ms;
	/* The sleep that earns the debt back: debt * 100 / pct of wall time. */
	ms = (uint64_t)(-p->credit_ns) / pct * 100 / 1000000 + 1;
	return ms > step_ms ? (unsigned)(ms < INT_MAX ? ms : INT_MAX) : step_ms;
}

static void *abit_thread(void *arg)
{
	struct abit *a = arg;
	struct abit_cpu_pace pace = {0};
	bool failing = false;
	unsigned k = 0;

	while (!abit_stopping(a)) {
		const struct pghotd_config *cfg = config_pub_get(a->pub, a->slot);
		uint64_t cpu0 = clock_thread_cpu_ns();
		int r;

		if (cfg->sources.abit.enabled == SOURCE_OFF) {
			abit_set_active(a, 0);
			abit_sleep(a, (int)cfg->sources.abit.scan_interval_ms);
			continue;
		}
		/* Mode full: a round every ABIT_SAMPLES_PER_ROUND steps; mode regions counts its
		 * own. */
		r = k++ % ABIT_SAMPLES_PER_ROUND == 0 ? abit_round(a, cfg) : abit_step(a, cfg);
		if (r == -EPERM) {
			log_warning("abit source unavailable: %s", a->reason);
			abit_set_active(a, 0);
			while (!abit_stopping(a))
				abit_sleep(a, -1);
			break;
		}
		if (r < 0 && !failing)
			log_warning_errno(r, "abit scan round failed, will retry");
		failing = r < 0;
		abit_set_active(a, !failing);
		/* The burst allowed: one scan interval's share. */
		abit_sleep(a, (int)abit_cpu_pace_ms(
				  &pace, clock_monotonic_ns(), clock_thread_cpu_ns() - cpu0,
				  cfg->sources.abit.max_cpu_percent, abit_step_pause_ms(a, cfg),
				  cfg->sources.abit.scan_interval_ms));
	}
	return NULL;
}

int abit_start(struct abit *a, struct config_pub *pub)
{
	int slot, r;

	if (a->w.running)
		return -EALREADY;
	slot = config_pub_register(pub);
	if (slot < 0)
		return log_error_errno(slot, "cannot register the abit source with the config");
	a->pub = pub;
	a->slot = slot;
	r = worker_start(&a->w, abit_thread, a);
	if (r < 0) {
		config_pub_unregister(pub, slot);
		a->slot = -1;
		return r;
	}
	abit_set_active(a, 1);
	return 0;
}

void abit_stop(struct abit *a)
{
	if (!a->w.running)
		return;
	worker_stop(&a->w);
	config_pub_unregister(a->pub, a->slot);
	a->slot = -1;
	abit_set_active(a, 0);
}

size_t abit_nr_procs(const struct abit *a)
{
	return a->table.nprocs;
}

size_t abit_nr_tracked(const struct abit *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->table.nprocs; i++)
		for (size_t j = 0; j < a->table.procs[i].npieces; j++)
			n += a->table.procs[i].piece[j].ntracked;
	return n;
}

int abit_piece_interval(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_piece *g = abit_table_piece_at(a, pid, vaddr);

	return g ? g->interval : -ENOENT;
}

int abit_piece_watched(const struct abit *a, pid_t pid, uint64_t vaddr)
{
	const struct abit_piece *g = abit_table_piece_at(a, pid, vaddr);

	return g ? g->watch : -ENOENT;
}

size_t abit_nr_sample_regions(const struct abit *a, pid_t pid)
{
	const struct abit_proc *p = abit_table_find(a->table.procs, a->table.nprocs, pid);

	return p && p->smp ? abit_sampler_count(p->smp) : 0;
}

/* --- the source interface (sources/source.h) --- */

static int abit_ops_start(const struct source_deps *d, void **out)
{
	struct abit_deps ad = {.procfs_root = d->procfs_root,
			       .sysfs_root = d->sysfs_root,
			       .sink = d->sink,
			       .stats = d->stats,
			       .cold = d->cold,
			       .procs = d->procs};
	struct abit *a;
	int r = abit_new(&ad, &a); /* logs its reason when unavailable */

	if (r == 0) {
		r = abit_start(a, d->pub);
		if (r < 0) {
			abit_free(a);
			log_error_errno(r, "cannot start the abit source thread");
		}
	}
	return source_start_result(d, r, a, out);
}

static void abit_ops_stop(void *handle)
{
	if (!handle)
		return;
	abit_stop(handle);
	abit_free(handle);
}

const struct source_ops abit_source_ops = {
    .id = SRC_ABIT,
    .start = abit_ops_start,
    .stop = abit_ops_stop,
    .clears_accessed = true,
};
