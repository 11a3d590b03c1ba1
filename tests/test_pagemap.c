/* pagemap: pagemap entries, kpageflags classes, maps lines and stat lines taken apart. */
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

#include "pagemap.h"

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

/* maps_parse_line() of a whole NUL-terminated line. */
static int parse_line(const char *line, struct maps_vma *v)
{
	return maps_parse_line(line, strlen(line), v);
}

static void test_maps_line_parses_range_permissions_and_special_vmas(void **state)
{
	(void)state;
	struct maps_vma v;

	assert_int_equal(
	    parse_line("55d0c0a00000-55d0c0c00000 rw-p 00000000 00:00 0    [heap]\n", &v), 0);
	assert_int_equal(v.start, 0x55d0c0a00000);
	assert_int_equal(v.end, 0x55d0c0c00000);
	assert_true(v.readable);
	assert_false(v.special);
	assert_int_equal(parse_line("7ffd1000-7ffd3000 ---p 00000000 00:00 0", &v), 0);
	assert_false(v.readable);
	assert_int_equal(parse_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0   "
				    "               [vsyscall]",
				    &v),
			 0);
	assert_true(v.special);
	assert_int_equal(parse_line("7f00-7e00 rw-p 0 00:00 0", &v), -EINVAL);
	assert_int_equal(parse_line("garbage", &v), -EINVAL);
	assert_int_equal(parse_line("1000-2001 rw-p 0 00:00 0", &v), -EINVAL);
}

/* A maps line is parsed from its own bytes: one placed at the very end of a readable page,
 * followed by an unreadable one, with no newline and no NUL, parses without a fault; the
 * same line inside a much longer text yields the same VMA, and a name cut short at the
 * length is still recognised. */
static void test_maps_line_is_parsed_within_its_length(void **state)
{
	(void)state;
	const char line[] = "7f0000000000-7f0000200000 rw-p 00000000 00:00 0          [vdso]";
	long pg = sysconf(_SC_PAGESIZE);
	char *m =
	    mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct maps_vma v;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
	memcpy(m + pg - (sizeof(line) - 1), line, sizeof(line) - 1);
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), sizeof(line) - 1, &v), 0);
	assert_int_equal(v.start, 0x7f0000000000);
	assert_int_equal(v.end, 0x7f0000200000);
	assert_true(v.special);
	/* Cut before the name: the same range, not special. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 48, &v), 0);
	assert_false(v.special);
	/* Cut inside the fields: malformed, and nothing past the cut is read. */
	assert_int_equal(maps_parse_line(m + pg - (sizeof(line) - 1), 20, &v), -EINVAL);
	munmap(m, 2 * (size_t)pg);
}

static void test_stat_line_gives_start_time_and_cpu_past_odd_command_names(void **state)
{
	(void)state;
	char line[512];
	uint64_t start = 7;
	int cpu = 7, n;

	n = snprintf(line, sizeof(line), "77 (a) b) (c ) R");
	for (int field = 4; field <= 52; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %d",
			      field == 22   ? 987654
			      : field == 39 ? 13
					    : field);
	assert_int_equal(stat_parse_start_cpu(line, &start, &cpu), 0);
	assert_int_equal(start, 987654);
	assert_int_equal(cpu, 13);

	start = 7;
	cpu = 7;
	assert_int_equal(stat_parse_start_cpu("77 (short) S 1 2 3\n", &start, &cpu), -EINVAL);
	assert_int_equal(stat_parse_start_cpu("no parenthesis", &start, &cpu), -EINVAL);
	assert_int_equal(start, 7);
	assert_int_equal(cpu, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pagemap_entry_gives_pfn_only_when_present),
	    cmocka_unit_test(test_kpageflags_classify_lru_pages_and_thp_heads_and_tails),
	    cmocka_unit_test(test_maps_line_parses_range_permissions_and_special_vmas),
	    cmocka_unit_test(test_maps_line_is_parsed_within_its_length),
	    cmocka_unit_test(test_stat_line_gives_start_time_and_cpu_past_odd_command_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
