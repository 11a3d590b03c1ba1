/* mem_src: see mem_src.h. */
#include "sources/pmu/mem_src.h"

#include <linux/perf_event.h>

static uint64_t field(uint64_t v, unsigned shift, unsigned bits)
{
	return (v >> shift) & ((1ull << bits) - 1);
}

/* From mem_lvl_num; MEM_SRC__COUNT when it says nothing (0 on kernels before it existed, or
 * NA). L1-L4, LFB and "any cache" all count as cache. */
static enum mem_src_level level_from_lvlnum(uint64_t data_src)
{
	uint64_t num = field(data_src, MEM_SRC_LVLNUM_SHIFT, 4);
	int remote = (int)field(data_src, MEM_SRC_REMOTE_SHIFT, 1);

	switch (num) {
	case PERF_MEM_LVLNUM_L1:
	case PERF_MEM_LVLNUM_L2:
	case PERF_MEM_LVLNUM_L3:
	case PERF_MEM_LVLNUM_L4:
	case PERF_MEM_LVLNUM_ANY_CACHE:
	case PERF_MEM_LVLNUM_LFB:
		return MEM_SRC_CACHE;
	case PERF_MEM_LVLNUM_RAM:
		return remote ? MEM_SRC_REMOTE_RAM : MEM_SRC_LOCAL_RAM;
	case PERF_MEM_LVLNUM_PMEM:
		return MEM_SRC_PMEM;
	case PERF_MEM_LVLNUM_CXL:
		return MEM_SRC_CXL;
	case PERF_MEM_LVLNUM_IO:
		return MEM_SRC_IO;
	default:
		return MEM_SRC__COUNT;
	}
}

static enum mem_src_level level_from_lvl(uint64_t data_src)
{
	uint64_t lvl = field(data_src, MEM_SRC_LVL_SHIFT, 14);
	const uint64_t cache = PERF_MEM_LVL_L1 | PERF_MEM_LVL_LFB | PERF_MEM_LVL_L2 |
			       PERF_MEM_LVL_L3 | PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2;

	if (lvl & (PERF_MEM_LVL_NA | PERF_MEM_LVL_MISS))
		return MEM_SRC_UNKNOWN;
	if (lvl & (PERF_MEM_LVL_IO | PERF_MEM_LVL_UNC))
		return MEM_SRC_IO;
	if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
		return MEM_SRC_REMOTE_RAM;
	if (lvl & PERF_MEM_LVL_LOC_RAM)
		return MEM_SRC_LOCAL_RAM;
	if (lvl & cache)
		return MEM_SRC_CACHE;
	return MEM_SRC_UNKNOWN;
}

enum mem_src_level mem_src_level(uint64_t data_src)
{
	uint64_t lvl = field(data_src, MEM_SRC_LVL_SHIFT, 14);
	enum mem_src_level l;

	/* "missed L3" (lvl MISS, lvl_num L3) names the level that was passed, not the source */
	if ((lvl & PERF_MEM_LVL_MISS) && !(lvl & PERF_MEM_LVL_HIT))
		return MEM_SRC_UNKNOWN;
	l = level_from_lvlnum(data_src);

	return l != MEM_SRC__COUNT ? l : level_from_lvl(data_src);
}

enum access_kind mem_src_kind(uint64_t data_src)
{
	uint64_t op = field(data_src, MEM_SRC_OP_SHIFT, 5);
	int load = (op & PERF_MEM_OP_LOAD) != 0, store = (op & PERF_MEM_OP_STORE) != 0;

	if (load == store)
		return ACCESS_UNKNOWN;
	return load ? ACCESS_LOAD : ACCESS_STORE;
}

const char *mem_src_level_name(enum mem_src_level l)
{
	static const char *const names[MEM_SRC__COUNT] = {
	    [MEM_SRC_UNKNOWN] = "unknown",
	    [MEM_SRC_CACHE] = "cache",
	    [MEM_SRC_LOCAL_RAM] = "local-ram",
	    [MEM_SRC_REMOTE_RAM] = "remote-ram",
	    [MEM_SRC_PMEM] = "pmem",
	    [MEM_SRC_CXL] = "cxl",
	    [MEM_SRC_IO] = "io",
	};

	return (unsigned)l < MEM_SRC__COUNT ? names[l] : "invalid";
}
