/* promoter_ops tests: the page-size lookup of kernels before 6.7 on fixture pagemap and
 * kpageflags files. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "src/promoter_ops.h"

#define BASE UINT64_C(4096)

/* One 8-byte entry at index idx of the file fd. */
static void put_u64(int fd, uint64_t idx, uint64_t v)
{
	assert_int_equal(pwrite(fd, &v, sizeof(v), (off_t)(idx * sizeof(v))), sizeof(v));
}

/* Kernels before 6.7: pagemap and kpageflags, here fixture files. A page of a THP counts 2 MiB
 * when its PFN sits where a PMD mapping puts it; one at another offset is a base page, and its
 * kpageflags entry is not even read; absent pages, and pages far apart, each as they are. */
static void kpageflags_lookup_sizes_pmd_aligned_thp_pages_only(void **state)
{
	char pm_path[] = "/tmp/pghotd-test-pagemap.XXXXXX",
	     kpf_path[] = "/tmp/pghotd-test-kpf.XXXXXX";
	int pm = mkstemp(pm_path), kpf = mkstemp(kpf_path);
	const uint64_t present = UINT64_C(1) << 63, thp = UINT64_C(1) << 22;
	/* Page indexes: 0x200 and 0x201 in a THP at PFN 0x400 (aligned); 0x205 a THP page at a
	 * PFN of another offset; 0x300 an aligned base page; 0x301 absent; 0x5000 far away. */
	const uint64_t addrs[] = {0x200 * BASE, 0x201 * BASE, 0x205 * BASE,
				  0x300 * BASE, 0x301 * BASE, 0x5000 * BASE};
	uint64_t sizes[6];

	(void)state;
	assert_true(pm >= 0 && kpf >= 0);
	put_u64(pm, 0x200, present | 0x400);
	put_u64(pm, 0x201, present | 0x401);
	put_u64(pm, 0x205, present | 0x999);
	put_u64(pm, 0x300, present | 0x700); /* offset 0x100 in its PMD, as 0x300 is */
	put_u64(pm, 0x5000, present | 0x1000);
	put_u64(kpf, 0x400, thp);
	put_u64(kpf, 0x401, thp);
	put_u64(kpf, 0x999, thp); /* never read: 0x999 is not at offset 5 of its PMD */
	put_u64(kpf, 0x1000, thp);
	for (size_t i = 0; i < 6; i++)
		sizes[i] = BASE;
	assert_int_equal(promoter_sizes_by_kpageflags(pm, kpf_path, BASE, addrs, 6, sizes), 0);
	assert_int_equal(sizes[0], 512 * BASE);
	assert_int_equal(sizes[1], 512 * BASE);
	assert_int_equal(sizes[2], BASE);
	assert_int_equal(sizes[3], BASE);
	assert_int_equal(sizes[4], BASE);
	assert_int_equal(sizes[5], 512 * BASE);
	/* No kpageflags file: fine while no PFN is aligned, an error once one is. */
	assert_int_equal(
	    promoter_sizes_by_kpageflags(pm, "/nonexistent", BASE, addrs + 2, 1, sizes + 2), 0);
	assert_int_equal(promoter_sizes_by_kpageflags(pm, "/nonexistent", BASE, addrs, 1, sizes),
			 -ENOENT);
	close(pm);
	close(kpf);
	unlink(pm_path);
	unlink(kpf_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(kpageflags_lookup_sizes_pmd_aligned_thp_pages_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
