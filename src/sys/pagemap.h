/* pagemap: decoding of the kernel's per-page files, pure and any thread.
 *
 * /proc/PID/pagemap holds one u64 per virtual page: PFN in bits 0-54 (0 without
 * CAP_SYS_ADMIN), soft-dirty 55, exclusive 56, file/shared-anon 61, swapped 62, present 63.
 * /proc/kpageflags holds one u64 of KPF_* bits per PFN. The callers do the I/O (procfs.h
 * opens pagemap, and parses the text files of /proc); these functions only take the bits
 * apart. */
#ifndef PGHOTD_PAGEMAP_H
#define PGHOTD_PAGEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAGEMAP_PAGE_SHIFT 12
#define PAGEMAP_PAGE_SIZE  (UINT64_C(1) << PAGEMAP_PAGE_SHIFT)
#define PAGEMAP_PFN_MASK   ((UINT64_C(1) << 55) - 1)
#define PAGEMAP_SOFT_DIRTY (UINT64_C(1) << 55)
#define PAGEMAP_EXCLUSIVE  (UINT64_C(1) << 56)
#define PAGEMAP_FILE	   (UINT64_C(1) << 61)
#define PAGEMAP_SWAPPED	   (UINT64_C(1) << 62)
#define PAGEMAP_PRESENT	   (UINT64_C(1) << 63)

/* kpageflags bit numbers (include/uapi/linux/kernel-page-flags.h). */
#define KPF_LRU		  5
#define KPF_ANON	  12
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_HUGE	  17
#define KPF_THP		  22
#define KPF_IDLE	  25

static inline bool pagemap_present(uint64_t e)
{
	return (e & PAGEMAP_PRESENT) != 0;
}
/* PFN of a present page; 0 when absent or hidden from an unprivileged reader. */
static inline uint64_t pagemap_pfn(uint64_t e)
{
	return pagemap_present(e) ? e & PAGEMAP_PFN_MASK : 0;
}
static inline bool kpf_test(uint64_t flags, int bit)
{
	return (flags >> bit) & 1;
}

/* What the Accessed-bit scanner makes of a frame from its kpageflags word. */
enum kpf_class {
	KPF_CLASS_UNTRACKABLE, /* not on an LRU list (page_idle ignores it), hugetlb, ... */
	KPF_CLASS_PAGE,	       /* base page on an LRU list */
	KPF_CLASS_THP_HEAD,    /* head of a transparent huge page: tracks the whole folio */
	KPF_CLASS_THP_TAIL,    /* tail of a THP: always reads "not idle", tracked by its head */
};
enum kpf_class kpf_classify(uint64_t flags);

#endif
