/* pagemap: pagemap entries and kpageflags classes taken apart. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "sys/pagemap.h"

#define KPF(b)	 (UINT64_C(1) << (b))
#define LRU	 KPF(KPF_LRU)
#define THP_HEAD (KPF(KPF_THP) | KPF(KPF_COMPOUND_HEAD) | LRU)
#define THP_TAIL (KPF(KPF_THP) | KPF(KPF_COMPOUND_TAIL))

static void test_pagemap_entry_gives_pfn_only_when_present(void **state)
{
	(void)state;
	uint64_t e = PAGEMAP_PRESENT | PAGEMAP_EXCLUSIVE | PAGEMAP_SOFT_DIRTY | 0x123456;

	assert_true(pagemap_present(e));
	assert_int_equal(pagemap_pfn(e), 0x123456);
	assert_int_equal(pagemap_pfn(PAGEMAP_PFN_MASK | PAGEMAP_PRESENT), PAGEMAP_PFN_MASK);
	/* A swapped page's low bits hold the swap type and offset, not a PFN. */
	assert_false(pagemap_present(PAGEMAP_SWAPPED | 0x55));
	assert_int_equal(pagemap_pfn(PAGEMAP_SWAPPED | 0x55), 0);
}

static void test_kpageflags_classify_lru_pages_and_thp_heads_and_tails(void **state)
{
	(void)state;
	assert_int_equal(kpf_classify(LRU | KPF(KPF_ANON)), KPF_CLASS_PAGE);
	assert_int_equal(kpf_classify(THP_HEAD), KPF_CLASS_THP_HEAD);
	assert_int_equal(kpf_classify(THP_TAIL), KPF_CLASS_THP_TAIL);
	/* A tail is a tail even when the LRU bit shows through from its head. */
	assert_int_equal(kpf_classify(THP_TAIL | LRU), KPF_CLASS_THP_TAIL);
	assert_int_equal(kpf_classify(KPF(KPF_ANON)), KPF_CLASS_UNTRACKABLE);
	/* hugetlb: compound head but not THP and off the LRU. */
	assert_int_equal(kpf_classify(KPF(KPF_HUGE) | KPF(KPF_COMPOUND_HEAD)),
			 KPF_CLASS_UNTRACKABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pagemap_entry_gives_pfn_only_when_present),
	    cmocka_unit_test(test_kpageflags_classify_lru_pages_and_thp_heads_and_tails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
