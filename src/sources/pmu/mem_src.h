/* mem_src: what a PERF_SAMPLE_DATA_SRC value (union perf_mem_data_src) says about where an
 * access was served from, reduced to what promotion cares about: a cache or local DRAM (no
 * reason to promote), remote DRAM, persistent memory, CXL, I/O, or unknown.
 *
 * mem_lvl_num (4.14+) is preferred; when it is 0 or NA the older mem_lvl bits are used, as
 * older kernels and perf.data recordings carry only those. A level marked MISS says the data
 * came from beyond that level, which tells nothing about the tier: unknown. Pure, any thread. */
#ifndef PGHOTD_MEM_SRC_H
#define PGHOTD_MEM_SRC_H

#include <stdint.h>

#include "table/access.h"

enum mem_src_level {
	MEM_SRC_UNKNOWN,
	MEM_SRC_CACHE,	    /* any cache level or the line fill buffer */
	MEM_SRC_LOCAL_RAM,  /* DRAM of the accessing CPU's node */
	MEM_SRC_REMOTE_RAM, /* DRAM of another node */
	MEM_SRC_PMEM,
	MEM_SRC_CXL,
	MEM_SRC_IO, /* I/O or uncached memory: not promotable */
	MEM_SRC__COUNT
};

/* The bit-field positions of union perf_mem_data_src (uapi), written out so the value can be
 * built and read without relying on the compiler's bit-field layout. */
#define MEM_SRC_OP_SHIFT     0
#define MEM_SRC_LVL_SHIFT    5
#define MEM_SRC_SNOOP_SHIFT  19
#define MEM_SRC_LOCK_SHIFT   24
#define MEM_SRC_DTLB_SHIFT   26
#define MEM_SRC_LVLNUM_SHIFT 33
#define MEM_SRC_REMOTE_SHIFT 37
#define MEM_SRC_HOPS_SHIFT   43

enum mem_src_level mem_src_level(uint64_t data_src);
/* ACCESS_LOAD / ACCESS_STORE from mem_op; ACCESS_UNKNOWN when neither (or both) is set. */
enum access_kind mem_src_kind(uint64_t data_src);
/* True when the level says the access never needed a slow tier: cache or local DRAM. */
static inline int mem_src_level_is_near(enum mem_src_level l)
{
	return l == MEM_SRC_CACHE || l == MEM_SRC_LOCAL_RAM;
}
const char *mem_src_level_name(enum mem_src_level l);

#endif
