/* promoter_ops tests: the page-size lookup of kernels before 6.7 on fixture pagemap and
 * kpageflags files, and the real ops reading their files under the procfs root they are
 * given. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mover/promoter_ops.h"
#include "sys/topology.h"

#define BASE UINT64_C(4096)
#define PID  4242 /* the process of the fixture procfs root */

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

/* A file under the fixture root dir: its fd, open for writing. */
static int root_file(const char *dir, const char *name)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	return fd;
}

/* PID's stat line, every field 0 but the start time (22) and the CPU it last ran on (39). */
static void put_stat_cpu(int fd, int cpu)
{
	char line[512];
	int len = snprintf(line, sizeof(line), "%d (fake) S", PID);

	for (int field = 4; field <= 39; field++)
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %d",
				field == 22   ? 100
				: field == 39 ? cpu
					      : 0);
	len += snprintf(line + len, sizeof(line) - (size_t)len, "\n");
	assert_int_equal(write(fd, line, (size_t)len), len);
}

/* The real ops take <root>/PID/pagemap, <root>/kpageflags and <root>/PID/stat, not /proc's:
 * a fixture root's pagemap (a regular file: PAGEMAP_SCAN answers -ENOTTY, so the kpageflags
 * lookup runs) sizes its THP page 2 MiB, a pid without files under the root has no sizes, and
 * run_near reads the CPU from the root's stat file (one the thread may not use: -EPERM, no
 * move). */
static void real_ops_read_their_files_under_the_procfs_root(void **state)
{
	char root[] = "/tmp/pghotd-test-procfs.XXXXXX", dir[64], path[128];
	const uint64_t addrs[] = {0x200 * BASE, 0x300 * BASE};
	uint64_t sizes[2];
	struct promoter_sys sys;
	int pm, kpf, st;

	(void)state;
	if (sysconf(_SC_PAGESIZE) != (long)BASE)
		skip(); /* the fixture's entries are laid out for 4 KiB pages */
	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/%d", root, PID);
	assert_int_equal(mkdir(dir, 0700), 0);
	pm = root_file(dir, "pagemap");
	kpf = root_file(root, "kpageflags");
	st = root_file(dir, "stat");
	put_u64(pm, 0x200, UINT64_C(1) << 63 | 0x400);
	put_u64(pm, 0x300, UINT64_C(1) << 63 | 0x700);
	put_u64(kpf, 0x400, UINT64_C(1) << 22);
	put_stat_cpu(st, CPU_SETSIZE - 1);
	promoter_sys_init(&sys, root);
	assert_int_equal(promoter_real_ops.page_sizes(&sys, PID, addrs, 2, sizes), 0);
	assert_int_equal(sizes[0], 512 * BASE);
	assert_int_equal(sizes[1], BASE);
	assert_true(promoter_real_ops.page_sizes(&sys, PID + 1, addrs, 2, sizes) < 0);
	assert_int_equal(promoter_real_ops.run_near(&sys, PID), -EPERM);
	promoter_real_ops.release(&sys);
	promoter_sys_fini(&sys);
	close(pm);
	close(kpf);
	close(st);
	snprintf(path, sizeof(path), "%s/pagemap", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/stat", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/kpageflags", root);
	unlink(path);
	rmdir(dir);
	rmdir(root);
}

/* refresh_free gives each node its kernel mark from <root>/zoneinfo with its free memory, in
 * bytes; a root without the file leaves the marks unknown (0) and the refresh succeeds. */
static void refresh_free_reads_the_kernel_marks_under_the_procfs_root(void **state)
{
	const char *fx = getenv("PGHOTD_FIXTURES");
	char sysfs[PATH_MAX], procfs[PATH_MAX];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct promoter_sys sys;
	struct topology *t;

	(void)state;
	assert_non_null(fx);
	snprintf(sysfs, sizeof(sysfs), "%s/sysfs-3node-cxl", fx);
	snprintf(procfs, sizeof(procfs), "%s/procfs-zoneinfo", fx);
	assert_int_equal(topology_load(sysfs, &t), 0);
	promoter_sys_init(&sys, procfs);
	assert_int_equal(promoter_real_ops.refresh_free(&sys, t), 0);
	assert_int_equal(t->node[0].mem_mark, (32 + 446 + 2477) * page);
	assert_int_equal(t->node[1].mem_mark, 506 * page);
	assert_int_equal(t->node[2].mem_mark, 0);
	assert_true(t->node[0].mem_free > 0);
	promoter_sys_fini(&sys);

	snprintf(procfs, sizeof(procfs), "%s/procfs-root", fx); /* no zoneinfo there */
	promoter_sys_init(&sys, procfs);
	assert_int_equal(promoter_real_ops.refresh_free(&sys, t), 0);
	assert_int_equal(t->node[0].mem_mark, 0);
	assert_true(sys.marks_failed);
	promoter_sys_fini(&sys);
	topology_free(t);
}

/* The marks are read again every second while a node has less than 4 times its mark free,
 * else every 30 s; at once the first time. */
static void marks_are_read_again_often_only_near_them(void **state)
{
	struct topology t = {.nr_nodes = 2};

	(void)state;
	t.node[0] = (struct topo_node){.present = true, .mem_free = 100, .mem_mark = 10};
	t.node[1] = (struct topo_node){.present = true, .mem_free = 1000, .mem_mark = 0};
	assert_true(promoter_marks_due(&t, 0, 5));
	assert_false(promoter_marks_due(&t, 1000, 1999));
	assert_false(promoter_marks_due(&t, 1000, 2000)); /* 10 times its mark free: far */
	assert_true(promoter_marks_due(&t, 1000, 31000));
	t.node[0].mem_free = 39; /* under 4 times */
	assert_false(promoter_marks_due(&t, 1000, 1999));
	assert_true(promoter_marks_due(&t, 1000, 2000));
	t.node[0].present = false;
	assert_false(promoter_marks_due(&t, 1000, 2000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(kpageflags_lookup_sizes_pmd_aligned_thp_pages_only),
	    cmocka_unit_test(real_ops_read_their_files_under_the_procfs_root),
	    cmocka_unit_test(refresh_free_reads_the_kernel_marks_under_the_procfs_root),
	    cmocka_unit_test(marks_are_read_again_often_only_near_them),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
