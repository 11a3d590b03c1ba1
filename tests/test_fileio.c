/* fileio: reads open only regular files, at once whatever sits at the path; whole reads are
 * bounded and keep NUL bytes visible. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/fileio.h"

static char dir[64];

static int dir_setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_fileio.XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int dir_teardown(void **state)
{
	char cmd[128];
	(void)state;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void in_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void put(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

/* Without O_NONBLOCK and the fstat, the first read of the FIFO blocks: the alarm fails it. */
static void reads_of_a_fifo_or_a_directory_fail_at_once(void **state)
{
	char fifo[128], buf[64], *text = NULL;
	size_t len = 0;
	(void)state;

	in_dir(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(5);
	assert_int_equal(file_open_regular(fifo, 0), -EBADFD);
	assert_int_equal(file_read_small(fifo, buf, sizeof(buf)), -EBADFD);
	assert_int_equal(file_read_line(fifo, buf, sizeof(buf)), -EBADFD);
	assert_int_equal(file_read_alloc(fifo, 100, &text, &len), -EBADFD);
	alarm(0);
	assert_null(text);
	assert_int_equal(file_read_small(dir, buf, sizeof(buf)), -EISDIR);
	assert_int_equal(file_read_small("/dev/null", buf, sizeof(buf)), -EBADFD);
	assert_string_equal(file_strerror(-EBADFD), "not a regular file");
	assert_string_equal(file_strerror(-ENOENT), strerror(ENOENT));
}

static void open_regular_returns_a_blocking_fd_and_can_refuse_symlinks(void **state)
{
	char file[128], link_path[128];
	int fd;
	(void)state;

	in_dir(file, sizeof(file), "plain");
	in_dir(link_path, sizeof(link_path), "link");
	put(file, "x", 1);
	assert_int_equal(symlink(file, link_path), 0);
	fd = file_open_regular(link_path, 0);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	close(fd);
	assert_int_equal(file_open_regular(link_path, O_NOFOLLOW), -ELOOP);
}

static void read_alloc_keeps_nul_bytes_and_bounds_the_size(void **state)
{
	char file[128], *text = NULL;
	size_t len = 0;
	(void)state;

	in_dir(file, sizeof(file), "nul");
	put(file, "a\0b", 3);
	assert_int_equal(file_read_alloc(file, 3, &text, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(text, "a\0b", 4);
	free(text);
	text = NULL;
	assert_int_equal(file_read_alloc(file, 2, &text, &len), -EFBIG);
	assert_null(text);
	assert_int_equal(len, 3);
}

/* The time comes from the file read: the one utimensat() set, not the reader's clock. */
static void read_alloc_mtime_gives_the_files_modification_time(void **state)
{
	char file[128], *text = NULL;
	size_t len = 0;
	struct timespec t = {0}, set[2] = {{.tv_sec = 1000000000, .tv_nsec = 5},
					   {.tv_sec = 1000000000, .tv_nsec = 5}};
	(void)state;

	in_dir(file, sizeof(file), "mtime");
	put(file, "x\n", 2);
	assert_int_equal(utimensat(AT_FDCWD, file, set, 0), 0);
	assert_int_equal(file_read_alloc_mtime(file, 10, &text, &len, &t), 0);
	assert_int_equal(t.tv_sec, 1000000000);
	assert_int_equal(t.tv_nsec, 5);
	assert_string_equal(text, "x\n");
	free(text);
	t.tv_sec = 7;
	in_dir(file, sizeof(file), "absent");
	assert_int_equal(file_read_alloc_mtime(file, 10, &text, &len, &t), -ENOENT);
	assert_int_equal(t.tv_sec, 7);
}

/* An attribute held open takes each value whole at offset 0; a link and a FIFO are refused at
 * once, as file_write_attr() refuses them. */
static void attr_held_open_takes_each_value_at_offset_0(void **state)
{
	char file[128], link_path[128], fifo[128], buf[64], big[160];
	int fd, dfd;
	(void)state;

	in_dir(file, sizeof(file), "attr");
	in_dir(link_path, sizeof(link_path), "attr-link");
	in_dir(fifo, sizeof(fifo), "attr-fifo");
	put(file, "0", 1);
	fd = file_open_attr_at(AT_FDCWD, file);
	assert_true(fd >= 0);
	assert_int_equal(file_pwrite_attr(fd, "123456"), 0);
	assert_int_equal(file_pwrite_attr(fd, "99"), 0);
	close(fd);
	assert_int_equal(file_read_line(file, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "99");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(file_pwrite_attr(0, big), -EINVAL); /* over 127 bytes */
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = file_open_attr_at(dfd, "attr");
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink(file, link_path), 0);
	assert_int_equal(file_open_attr_at(dfd, "attr-link"), -ELOOP);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	alarm(5);
	assert_true(file_open_attr_at(dfd, "attr-fifo") < 0); /* no reader: -ENXIO at once */
	alarm(0);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(reads_of_a_fifo_or_a_directory_fail_at_once),
	    cmocka_unit_test(open_regular_returns_a_blocking_fd_and_can_refuse_symlinks),
	    cmocka_unit_test(read_alloc_keeps_nul_bytes_and_bounds_the_size),
	    cmocka_unit_test(read_alloc_mtime_gives_the_files_modification_time),
	    cmocka_unit_test(attr_held_open_takes_each_value_at_offset_0),
	};
	return cmocka_run_group_tests(tests, dir_setup, dir_teardown);
}
