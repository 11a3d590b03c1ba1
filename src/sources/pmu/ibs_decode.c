/* ibs_decode: see ibs_decode.h. The data source mapping follows the kernel's
 * perf_ibs_get_mem_lvl() so live (6.1+) and RAW-decoded samples are judged alike. */
#include "sources/pmu/ibs_decode.h"

#include <errno.h>
#include <string.h>

#include <linux/perf_event.h>

#include "sources/pmu/mem_src.h"

int ibs_raw_parse(const void *raw, uint32_t size, struct ibs_op_regs *out)
{
	const uint8_t *p = raw;
	uint64_t regs[7];

	if (!raw || size < IBS_RAW_MIN_SIZE)
		return -EBADMSG;
	/* the registers sit at offset 4 of the payload: not 8-byte aligned, hence memcpy */
	memcpy(&out->caps, p, sizeof(out->caps));
	memcpy(regs, p + 4, sizeof(regs));
	out->op_ctl = regs[0];
	out->op_rip = regs[1];
	out->op_data = regs[2];
	out->op_data2 = regs[3];
	out->op_data3 = regs[4];
	out->dc_linaddr = regs[5];
	out->dc_physaddr = regs[6];
	return 0;
}

static uint64_t dsrc(uint64_t lvl, uint64_t lvlnum, bool remote)
{
	return (uint64_t)lvl << MEM_SRC_LVL_SHIFT | lvlnum << MEM_SRC_LVLNUM_SHIFT |
	       (uint64_t)remote << MEM_SRC_REMOTE_SHIFT;
}

#define HIT(x) (PERF_MEM_LVL_##x | PERF_MEM_LVL_HIT)

static bool erratum_1293(const struct ibs_cpu *cpu, uint64_t d3)
{
	return cpu->family == 0x19 && cpu->model <= 0xF &&
	       (d3 & (IBS_D3_SW_PF | IBS_D3_DC_MISS_NO_MAB_ALLOC));
}

/* Level from OP_DATA2's data source; 0 when it names none. */
static uint64_t level_from_data2(uint64_t d2, bool zen4)
{
	unsigned src = (unsigned)(d2 & IBS_D2_DATA_SRC_LO_MASK);
	bool rmt = d2 & IBS_D2_RMT_NODE;

	if (zen4)
		src |= (unsigned)((d2 >> IBS_D2_DATA_SRC_HI_SHIFT) & 3) << 3;
	if (src == IBS_SRC_DRAM)
		return rmt ? dsrc(HIT(REM_RAM1), PERF_MEM_LVLNUM_RAM, true)
			   : dsrc(HIT(LOC_RAM), PERF_MEM_LVLNUM_RAM, false);
	if (src == IBS_SRC_IO)
		return dsrc(HIT(IO), PERF_MEM_LVLNUM_IO, rmt);
	if (!zen4) {
		if (src == IBS_SRC_LOC_CACHE)
			return dsrc(HIT(L3) | PERF_MEM_LVL_REM_CCE1, PERF_MEM_LVLNUM_ANY_CACHE,
				    false);
		if (src == IBS_SRC_REM_CACHE)
			return dsrc(HIT(REM_CCE2), PERF_MEM_LVLNUM_ANY_CACHE, true);
		return 0;
	}
	switch (src) {
	case IBS_SRC_EXT_LOC_CACHE:
		return dsrc(HIT(L3), PERF_MEM_LVLNUM_L3, false);
	case IBS_SRC_EXT_NEAR_CCX_CACHE:
		return dsrc(HIT(REM_CCE1), PERF_MEM_LVLNUM_ANY_CACHE, false);
	case IBS_SRC_EXT_FAR_CCX_CACHE:
		return dsrc(HIT(REM_CCE2), PERF_MEM_LVLNUM_ANY_CACHE, true);
	case IBS_SRC_EXT_PMEM:
		return dsrc(PERF_MEM_LVL_NA, PERF_MEM_LVLNUM_PMEM, rmt);
	case IBS_SRC_EXT_EXT_MEM:
		return dsrc(PERF_MEM_LVL_NA, PERF_MEM_LVLNUM_CXL, rmt);
	default:
		return 0;
	}
}

static uint64_t level_of(const struct ibs_op_regs *r, const struct ibs_cpu *cpu, bool load)
{
	uint64_t d3 = r->op_data3, lvl;
	bool errata = erratum_1293(cpu, d3);
	uint64_t d2 = errata ? 0 : r->op_data2;

	/* the miss bits and data source mean nothing for uncached accesses */
	if ((d3 & IBS_D3_DC_UC_MEM_ACC) && (d2 & IBS_D2_DATA_SRC_LO_MASK) != IBS_SRC_IO)
		return dsrc(HIT(UNC), PERF_MEM_LVLNUM_NA, false);
	if (!(d3 & IBS_D3_DC_MISS))
		return dsrc(HIT(L1), PERF_MEM_LVLNUM_L1, false);
	if (!(d3 & IBS_D3_L2_MISS) && !errata)
		return dsrc(HIT(L2), PERF_MEM_LVLNUM_L2, false);
	/* OP_DATA2 describes loads only */
	if (load) {
		lvl = level_from_data2(d2, r->caps & IBS_CAPS_ZEN4);
		if (lvl)
			return lvl;
	}
	/* an outstanding miss to the same line: served from the miss buffer, a cache */
	if (d3 & IBS_D3_DC_MISS_NO_MAB_ALLOC)
		return dsrc(HIT(LFB), PERF_MEM_LVLNUM_LFB, false);
	return dsrc(PERF_MEM_LVL_NA, PERF_MEM_LVLNUM_NA, false);
}

void ibs_op_decode(const struct ibs_op_regs *r, const struct ibs_cpu *cpu,
		   struct ibs_op_sample *out)
{
	uint64_t d3 = r->op_data3;
	uint64_t op;

	memset(out, 0, sizeof(*out));
	if (d3 & IBS_D3_LD_OP) {
		out->kind = ACCESS_LOAD;
		op = PERF_MEM_OP_LOAD;
	} else if (d3 & IBS_D3_ST_OP) {
		out->kind = ACCESS_STORE;
		op = PERF_MEM_OP_STORE;
	} else {
		out->kind = ACCESS_UNKNOWN;
		out->data_src = dsrc(PERF_MEM_LVL_NA, PERF_MEM_LVLNUM_NA, false) | PERF_MEM_OP_NA;
		return;
	}
	out->lin_valid = d3 & IBS_D3_DC_LIN_ADDR_VALID;
	out->phys_valid = d3 & IBS_D3_DC_PHY_ADDR_VALID;
	out->vaddr = out->lin_valid ? r->dc_linaddr : 0;
	out->paddr = out->phys_valid ? r->dc_physaddr : 0;
	out->data_src = op << MEM_SRC_OP_SHIFT | level_of(r, cpu, out->kind == ACCESS_LOAD);
	if (out->kind == ACCESS_LOAD && (d3 & IBS_D3_DC_MISS))
		out->latency = (uint32_t)((d3 >> IBS_D3_DC_MISS_LAT_SHIFT) & 0xFFFF);
}

uint64_t ibs_period_clamp(uint64_t period, bool ext_count)
{
	uint64_t max = ext_count ? IBS_PERIOD_MAX_EXT : IBS_PERIOD_MAX;

	period &= ~0xFull;
	if (period < IBS_PERIOD_MIN)
		return IBS_PERIOD_MIN;
	return period > max ? max : period;
}

static uint64_t clamp_std(uint64_t period)
{
	return ibs_period_clamp(period, false);
}

static uint64_t clamp_ext(uint64_t period)
{
	return ibs_period_clamp(period, true);
}

struct period_rules ibs_period_rules(bool ext_count)
{
	if (ext_count)
		return (struct period_rules){.clamp = clamp_ext, .max = IBS_PERIOD_MAX_EXT};
	return (struct period_rules){.clamp = clamp_std, .max = IBS_PERIOD_MAX};
}
