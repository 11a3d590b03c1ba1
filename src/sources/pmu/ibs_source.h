/* ibs_source: the AMD IBS op-sampling source's hardware-specific half: finding the ibs_op
 * PMU and what it supports in sysfs, building the perf_event_attr, and turning each parsed
 * sample into an access event (through pmu_filter). The generic sampler (perf_sampler)
 * opens, maps and drains the per-CPU events.
 *
 * Kernels before 6.1 leave ADDR, PHYS_ADDR and DATA_SRC empty for ibs_op: there the attr asks
 * for PERF_SAMPLE_RAW and the registers are decoded here (ibs_decode). sysfs reading is
 * separate from the pure attr and sample logic, which tests drive with fixture trees. */
#ifndef PGHOTD_IBS_SOURCE_H
#define PGHOTD_IBS_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#include "table/access.h"
#include "sources/pmu/ibs_decode.h"
#include "sources/perf/perf_sampler.h"
#include "sources/pmu/pmu_filter.h"
#include "sources/source.h"

struct perf_sample;

#define SAMPLER_REASON_MAX 512

/* A bit the PMU's format/ directory names ("config:19", "config2:0"). */
struct pmu_format_bit {
	bool present;
	int word; /* 0 config, 1 config1, 2 config2 */
	int bit;
};

struct ibs_pmu {
	int type;			  /* ibs_op/type */
	struct pmu_format_bit cnt_ctl;	  /* op counting (dispatched ops) */
	struct pmu_format_bit l3missonly; /* Zen 4+ */
	struct pmu_format_bit swfilt;	  /* 6.14+: exclude_* honoured in software */
	bool zen4;			  /* caps/zen4_ibs_extensions */
	uint32_t cpuid_caps;		  /* CPUID 8000_001B EAX; 0 if unknown */
	struct ibs_cpu cpu;		  /* family/model, for errata */
};

struct ibs_opts {
	uint64_t period;   /* sources.ibs.period */
	bool l3_miss_only; /* sources.ibs.l3_miss_only */
	bool phys_addr;	   /* PHYS_ADDR permitted (CAP_PERFMON / paranoid <= 1) */
	unsigned kernel_major, kernel_minor;
};

/* Reads <sysfs_root>/bus/event_source/devices/ibs_op/ (type, format/, caps/). cpuid_caps and
 * cpu are left 0 (see ibs_source_read_cpu). -ENODEV when there is no ibs_op PMU, -EINVAL for
 * a malformed file; reason (may be NULL) then says which file and why. *out untouched on
 * failure. Main thread. */
int ibs_source_pmu_read(const char *sysfs_root, struct ibs_pmu *out, char *reason, size_t size);
/* Fills cpuid_caps and cpu from CPUID on an AMD x86 CPU; leaves them 0 elsewhere. */
void ibs_source_read_cpu(struct ibs_pmu *pmu);
/* The --probe / startup check: 0 when the PMU is there; else -ENODEV and reason is
 * "no ibs_op PMU (<path>: <strerror>)" (the text after "unavailable: "). */
int ibs_source_available(const char *sysfs_root, char *reason, size_t size);

/* True when the kernel decodes IBS op samples itself (6.1+). */
bool ibs_source_kernel_decodes(unsigned major, unsigned minor);

/* Pure: the attr for one per-CPU ibs_op event (pid -1). Period from ibs_period_clamp (the
 * extended maximum only with IBS_CAPS_OPCNTEXT); op counting when the PMU has it;
 * L3-miss-only when asked and supported; exclude_kernel/hv only with swfilt (before 6.14 any
 * exclude_* bit is -EINVAL); time from CLOCK_MONOTONIC; starts disabled. */
void ibs_source_build_attr(const struct ibs_pmu *pmu, const struct ibs_opts *o,
			   struct perf_event_attr *attr);
/* The period rules for period_ctl. */
bool ibs_source_ext_count(const struct ibs_pmu *pmu);

/* Per-source conversion state, owned by the source thread. */
struct ibs_convert {
	struct pmu_filter filter;
	struct ibs_cpu cpu;
	bool use_raw;	/* attr asked for RAW (kernel < 6.1) */
	bool phys_addr; /* PHYS_ADDR permitted */
};

void ibs_source_convert_init(struct ibs_convert *c, const struct ibs_pmu *pmu,
			     const struct ibs_opts *o, const struct topology *topo,
			     struct stats *stats);
/* One parsed sample -> *ev (SAMPLE_KEPT) or a counted drop. Source thread. */
enum sample_drop ibs_source_convert(struct ibs_convert *c, const struct perf_sample *s,
				    struct access_event *ev);

/* --- the running source, on perf_sampler --- */

struct ibs_source_params {
	const char *sysfs_root;		 /* "/sys" */
	const char *kernel_release;	 /* uname(2) release; NULL: taken from uname */
	const struct pghotd_config *cfg; /* sources.ibs.*, sources.cpu_budget_percent */
	const struct topology *topo;	 /* placement; must outlive the source (may be NULL) */
	bool phys_addr;			 /* PHYS_ADDR permitted */
	/* ring_pages 0: cfg's sources.ibs.ring_pages; stats, sink, cpus, pid, pub... as
	 * perf_sampler_new takes them */
	struct perf_sampler_params sampler;
};

struct ibs_source;

/* Main thread. Finds the PMU, builds the attr, opens every per-CPU event through
 * perf_sampler and starts its thread, with the adaptive period controller on its drain hook
 * (PERF_EVENT_IOC_PERIOD through perf_sampler_set_period). On failure: -ENODEV (no PMU) or
 * the -errno of the refused open, reason holds the text to show after "unavailable: ", and
 * pghotd_source_active{ibs} stays 0. */
int ibs_source_start(const struct ibs_source_params *p, struct ibs_source **out, char *reason,
		     size_t size);
/* Main thread: stops the thread, closes the events, frees. NULL is fine. */
void ibs_source_stop(struct ibs_source *s);
/* The period in force (tests, status). */
uint64_t ibs_source_period(const struct ibs_source *s);

/* The source interface: ibs_source_start on the engine's deps, a config slot of its own. */
extern const struct source_ops ibs_source_ops;

#endif
