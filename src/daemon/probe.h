/* probe: the startup preflight, also printed by `pghotd --probe`.
 *
 * For each sampling source (ibs, pebs, abit, damon) it decides whether the source can run here and,
 * if not, the real reason: the PMU or kernel feature is missing (-ENODEV), a privilege is
 * missing (-EACCES: perf_event_paranoid without CAP_PERFMON / CAP_SYS_ADMIN, or no
 * CAP_SYS_ADMIN for page_idle and pagemap PFNs), DAMON is in use by someone else (-EBUSY), or
 * the config turned it off. `auto` then chooses: PMU samples first (per page, no kernel
 * thread), then page_idle (page by page), then DAMON (regions); DAMON and page_idle never both
 * run, since both clear the Accessed bits. page_idle before DAMON by measurement on a 6.12
 * kernel with both (tests/vm/benches/race-sources, README): it finds a hot set scattered page
 * by page, which DAMON moves with the cold pages around it, and was as fast or faster on the
 * other shapes. It also reports the kernel's NUMA balancing mode (warning when its tiering
 * mode would promote the same pages) and the tiers found.
 *
 * probe_gather() reads the facts from a sysfs and a procfs root (fixture trees in tests);
 * probe_decide() turns facts, config and topology into verdicts without touching the system.
 * Main thread. */
#ifndef PGHOTD_PROBE_H
#define PGHOTD_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/config.h"
#include "base/stats.h"
#include "sys/topology.h"

#define PROBE_PATH_MAX	 512
#define PROBE_REASON_MAX 768

/* Capability bits in CapEff (linux/capability.h). */
#define PROBE_CAP_SYS_ADMIN 21
#define PROBE_CAP_PERFMON   38

struct probe_env {
	const char *sysfs_root;	 /* "/sys" on a live system */
	const char *procfs_root; /* "/proc" on a live system */
};

/* One file the probe looked at: err is 0 when it exists (and, for values, parsed), else
 * -errno (-EINVAL for content that does not parse). */
struct probe_file {
	char path[PROBE_PATH_MAX];
	int err;
};

struct probe_facts {
	struct probe_file ibs_pmu;	 /* bus/event_source/devices/ibs_op/type */
	struct probe_file pebs_event;	 /* .../cpu/events/mem-loads, else .../cpu_core/... */
	struct probe_file page_idle;	 /* kernel/mm/page_idle/bitmap */
	struct probe_file paranoid_file; /* sys/kernel/perf_event_paranoid */
	int paranoid;
	struct probe_file status_file;	       /* self/status */
	uint64_t cap_eff;		       /* CapEff; 0 when status_file.err != 0 */
	struct probe_file numa_balancing_file; /* sys/kernel/numa_balancing */
	int numa_balancing;
	struct probe_file damon_sysfs; /* kernel/mm/damon/admin/kdamonds/nr_kdamonds */
	struct probe_file damon_event; /* tracefs' events/damon/damon_aggregated/format */
	int damon_busy;		       /* damon_sysfs_inspect(): 0, or -EBUSY and why */
	char damon_busy_why[PROBE_REASON_MAX / 2];
};

/* PROBE_PASSED: usable, but `auto` chose another source (reason says which and why). */
enum probe_state { PROBE_AVAILABLE, PROBE_UNAVAILABLE, PROBE_DISABLED, PROBE_PASSED };

struct probe_source {
	enum probe_state state;
	int err;       /* 0; for PROBE_UNAVAILABLE -ENODEV (system lacks it) or -EACCES */
	bool required; /* the config says "on": the daemon must not start without it */
	char reason[PROBE_REASON_MAX]; /* why unavailable; "" otherwise */
};

struct probe_result {
	struct probe_source source[SRC__COUNT];
	int nr_available;
	int numa_balancing;			    /* mode, -1 when unknown */
	bool numa_balancing_tiering;		    /* mode has NUMA_BALANCING_MEMORY_TIERING (2) */
	char numa_balancing_note[PROBE_REASON_MAX]; /* why unknown; "" otherwise */
	int nr_slow;				    /* -1 without a topology */
	int nr_fast;
	/* Perf samples may carry PHYS_ADDR: perf_event_paranoid <= 1, or CAP_PERFMON /
	 * CAP_SYS_ADMIN. The perf sources ask for it only then. */
	bool phys_addr;
	/* --probe only: a sampling software event opened the samplers' way on every CPU,
	 * "ok: ..." or why not; "" when not tried. Shows that perf_event_open, the ring's
	 * mmap and the enable ioctl are allowed here (a sandbox, CAP_PERFMON) without a PMU. */
	char perf_sampling[PROBE_REASON_MAX];
	/* "auto: SOURCES: why", the one line of what runs and why; "" when nothing can. */
	char choice[PROBE_REASON_MAX];
};

/* Why page_idle runs where DAMON could, and what DAMON alone finds: the measured reasons
 * (README, "Which source where"). */
#define PROBE_WHY_ABIT_OVER_DAMON                                                                  \
	"page_idle sees each page, so it finds hot sets of any shape, and it was as fast as "      \
	"DAMON or faster in every race on a kernel with both (README); DAMON, not chosen, "        \
	"costs less CPU on memory of gigabytes"
#define PROBE_WHY_DAMON_ONLY                                                                       \
	"DAMON, the one Accessed-bit source here (no page_idle): it finds hot data in runs of "    \
	"2 MiB or more and data used broadly; a hot set scattered page by page moves only "        \
	"while DRAM has room, with the cold pages around it, and is not found with DRAM full "     \
	"(a kernel with CONFIG_IDLE_PAGE_TRACKING lets pghotd see each page; README)"

/* Reads every fact; a missing file is a fact, not a failure. -ENAMETOOLONG when a root is
 * too long for a path; *out is then untouched. */
int probe_gather(const struct probe_env *env, struct probe_facts *out);
/* Pure. cfg NULL: every source "auto". t NULL: tiers unknown. */
void probe_decide(const struct probe_facts *f, const struct pghotd_config *cfg,
		  const struct topology *t, struct probe_result *out);
/* probe_gather + probe_decide. */
int probe_run(const struct probe_env *env, const struct topology *t,
	      const struct pghotd_config *cfg, struct probe_result *out);
/* Human lines, no newline: one per source ("source ibs: unavailable: no ibs_op PMU (...)"),
 * the NUMA balancing mode (and a warning line in tiering mode), the tiers (topology_describe)
 * and a line when there is no slow tier or no usable source. */
void probe_describe(const struct probe_result *r, const struct topology *t,
		    void (*line)(void *ctx, const char *s), void *ctx);
/* 0 when every source the config set to "on" is available; else that source's err
 * (-ENODEV or -EACCES) and *which names it. */
int probe_check_required(const struct probe_result *r, enum stat_source *which);
const char *probe_state_name(enum probe_state s);

#endif
