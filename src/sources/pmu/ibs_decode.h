/* ibs_decode: AMD IBS op-sampling registers, as the kernel hands them out in
 * PERF_SAMPLE_RAW, turned into what pghotd needs: load or store, the linear and physical
 * address when the hardware marked them valid, the data source in union perf_mem_data_src
 * form (so the filter reads IBS and PEBS samples alike) and the load miss latency. It also
 * holds the hardware's period rules. Used where the kernel does not decode the registers
 * itself (ADDR, PHYS_ADDR and DATA_SRC for ibs_op arrived in 6.1).
 *
 * Sources: AMD PPR for family 19h (MSRC001_1033..C001_1039), arch/x86/include/asm/amd-ibs.h
 * and arch/x86/events/amd/ibs.c. The RAW layout is not ABI-stable; it has been: u32 caps,
 * then u64 OP_CTL, OP_RIP, OP_DATA, OP_DATA2, OP_DATA3, DC_LINADDR, DC_PHYSADDR (then
 * BR_TARGET and OP_DATA4 on CPUs that have them, which pghotd ignores). Pure, any thread. */
#ifndef PGHOTD_IBS_DECODE_H
#define PGHOTD_IBS_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#include "table/access.h"
#include "sources/perf/period_ctl.h"

/* CPUID Fn8000_001B EAX bits, as copied into the RAW caps word. */
#define IBS_CAPS_OPCNT	  (1u << 4)  /* op counting (cnt_ctl) */
#define IBS_CAPS_OPCNTEXT (1u << 6)  /* 7 more MaxCnt bits: periods up to 0x7FFFFF0 */
#define IBS_CAPS_ZEN4	  (1u << 11) /* extended data source encoding in OP_DATA2 */

/* IBS_OP_CTL */
#define IBS_OP_L3MISSONLY (1ull << 16)
#define IBS_OP_ENABLE	  (1ull << 17)
#define IBS_OP_VALID	  (1ull << 18)
#define IBS_OP_CNT_CTL	  (1ull << 19)
/* IBS_OP_DATA3 */
#define IBS_D3_LD_OP		    (1ull << 0)
#define IBS_D3_ST_OP		    (1ull << 1)
#define IBS_D3_DC_MISS		    (1ull << 7)
#define IBS_D3_DC_UC_MEM_ACC	    (1ull << 14)
#define IBS_D3_DC_MISS_NO_MAB_ALLOC (1ull << 16)
#define IBS_D3_DC_LIN_ADDR_VALID    (1ull << 17)
#define IBS_D3_DC_PHY_ADDR_VALID    (1ull << 18)
#define IBS_D3_L2_MISS		    (1ull << 20)
#define IBS_D3_SW_PF		    (1ull << 21)
#define IBS_D3_DC_MISS_LAT_SHIFT    32
/* IBS_OP_DATA2 */
#define IBS_D2_DATA_SRC_LO_MASK	 0x7ull
#define IBS_D2_RMT_NODE		 (1ull << 4)
#define IBS_D2_DATA_SRC_HI_SHIFT 6

/* OP_DATA2 data source values. Before Zen 4 only the low 3 bits exist. */
enum ibs_data_src {
	IBS_SRC_NONE = 0, /* no valid status */
	/* before Zen 4 */
	IBS_SRC_LOC_CACHE = 2,
	IBS_SRC_DRAM = 3,
	IBS_SRC_REM_CACHE = 4,
	IBS_SRC_IO = 7,
	/* Zen 4 extended (hi << 3 | lo); 3 (DRAM) and 7 (IO) keep their meaning */
	IBS_SRC_EXT_LOC_CACHE = 1,
	IBS_SRC_EXT_NEAR_CCX_CACHE = 2,
	IBS_SRC_EXT_FAR_CCX_CACHE = 5,
	IBS_SRC_EXT_PMEM = 6,
	IBS_SRC_EXT_EXT_MEM = 8, /* CXL and other extension memory */
	IBS_SRC_EXT_PEER_AGENT_MEM = 12,
};

#define IBS_PERIOD_MIN	   0x90ull
#define IBS_PERIOD_MAX	   0xFFFF0ull
#define IBS_PERIOD_MAX_EXT 0x7FFFFF0ull
#define IBS_RAW_MIN_SIZE   (4u + 7u * 8u)

struct ibs_op_regs {
	uint32_t caps;
	uint64_t op_ctl, op_rip, op_data, op_data2, op_data3, dc_linaddr, dc_physaddr;
};

/* The CPU, for errata. */
struct ibs_cpu {
	unsigned family, model;
};

struct ibs_op_sample {
	enum access_kind kind; /* ACCESS_UNKNOWN: neither a load nor a store */
	bool lin_valid, phys_valid;
	uint64_t vaddr, paddr; /* 0 unless valid */
	uint64_t data_src;     /* union perf_mem_data_src */
	uint32_t latency;      /* DC miss latency (cycles) of a load that missed, else 0 */
};

/* raw/size: the PERF_SAMPLE_RAW payload (after its u32 size), which may carry trailing
 * padding. -EBADMSG when it is too short for the seven op registers; *out untouched. */
int ibs_raw_parse(const void *raw, uint32_t size, struct ibs_op_regs *out);
/* Decodes the registers. Family 19h models 0x00-0x0F (erratum 1293): OP_DATA2 and the L2
 * miss bit are not trusted for software prefetches or DC misses without a MAB. */
void ibs_op_decode(const struct ibs_op_regs *r, const struct ibs_cpu *cpu,
		   struct ibs_op_sample *out);
/* A period the hardware accepts: rounded down to a multiple of 16 (the hardware counts in
 * units of 16 ops), then clamped to [IBS_PERIOD_MIN, IBS_PERIOD_MAX or _MAX_EXT]. */
uint64_t ibs_period_clamp(uint64_t period, bool ext_count);
/* The same rules for the adaptive period controller (period_ctl.h), with the extended MaxCnt
 * (IBS_CAPS_OPCNTEXT) or without. */
struct period_rules ibs_period_rules(bool ext_count);

#endif
