/* fileio: small whole-file reads and atomic writes; see fileio.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"

int file_open_regular(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
	int r;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (S_ISDIR(st.st_mode))
		r = -EISDIR;
	else if (!S_ISREG(st.st_mode))
		r = -EBADFD;
	else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		r = -errno;
	else
		return fd;
	close(fd);
	return r;
}

const char *file_strerror(int r)
{
	if (r == -EBADFD)
		return "not a regular file";
	return strerror(r < 0 ? -r : r);
}

/* Reads up to size bytes of fd; the count read or -errno. */
static ssize_t read_full(int fd, char *buf, size_t size)
{
	size_t len = 0;

	while (len < size) {
		ssize_t n = read(fd, buf + len, size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	return (ssize_t)len;
}

int file_read_small(const char *path, char *buf, size_t size)
{
	int fd = file_open_regular(path, 0);
	ssize_t len;

	if (fd < 0)
		return fd;
	len = read_full(fd, buf, size - 1);
	close(fd);
	if (len < 0)
		return (int)len;
	buf[len] = '\0';
	return (size_t)len == size - 1 ? -EFBIG : (int)len;
}

uint64_t file_nofile_limit(uint64_t unknown)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_NOFILE, &lim) < 0)
		return unknown;
	return lim.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)lim.rlim_cur;
}

int file_read_line(const char *path, char *buf, size_t size)
{
	int r = file_read_small(path, buf, size);

	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int file_read_alloc_mtime(const char *path, size_t max, char **out, size_t *len,
			  struct timespec *mtime)
{
	char *buf = malloc(max + 2);
	int fd = file_open_regular(path, 0);
	ssize_t n = -ENOMEM;
	struct stat st = {0};

	if (fd >= 0 && mtime && fstat(fd, &st) < 0)
		n = -errno;
	else if (fd >= 0 && buf)
		n = read_full(fd, buf, max + 1); /* one more than max: tells a longer file */
	else if (fd < 0)
		n = fd;
	if (fd >= 0)
		close(fd);
	if (n >= 0 && (size_t)n > max)
		n = -EFBIG;
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	if (mtime)
		*mtime = st.st_mtim;
	return 0;
}

int file_read_alloc(const char *path, size_t max, char **out, size_t *len)
{
	return file_read_alloc_mtime(path, max, out, len, NULL);
}

/* "DIR/.NAME.XXXXXX" for path "DIR/NAME" (or ".NAME.XXXXXX" for a bare name). */
static int temp_template(const char *path, char *tmp, size_t size)
{
	const char *slash = strrchr(path, '/');
	int dir_len = slash ? (int)(slash - path + 1) : 0;
	int n = snprintf(tmp, size, "%.*s.%s.XXXXXX", dir_len, path, path + dir_len);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int write_full(int fd, const char *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (n > 0)
			done += (size_t)n;
	}
	return 0;
}

/* -ELOOP when path's directory is a symbolic link someone other than root or us owns: one
 * planted in a shared directory (a stats.file under /tmp) would send the file elsewhere. */
static int dir_not_planted(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	struct stat st;

	if (!slash || slash == path || (size_t)(slash - path) >= sizeof(dir))
		return 0;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	if (lstat(dir, &st) < 0)
		return -errno;
	return S_ISLNK(st.st_mode) && st.st_uid != 0 && st.st_uid != geteuid() ? -ELOOP : 0;
}

int file_write_atomic(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	int fd, r = temp_template(path, tmp, sizeof(tmp));

	if (r == 0)
		r = dir_not_planted(path);
	if (r < 0)
		return r;
	/* mkostemp: O_CREAT|O_EXCL (an existing name, a symlink included, is never opened) and
	 * a name from getrandom(), so no one can plant a file where the next write goes. */
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* mkostemp creates mode 0600; readers such as node_exporter need 0644. */
	r = fchmod(fd, 0644) < 0 ? -errno : write_full(fd, buf, len);
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

static int open_attr(int dirfd, const char *path, int flags)
{
	struct stat st;
	int r, fd = openat(dirfd, path,
			   O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW | flags);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EBADFD;
	else
		return fd;
	close(fd);
	return r;
}

/* One write(2) of len bytes of s at offset off (-1: the file's own). */
static int write_once(int fd, const char *s, size_t len, off_t off)
{
	ssize_t n;

	do
		n = off < 0 ? write(fd, s, len) : pwrite(fd, s, len, off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
}

int file_write_attr(const char *path, const char *s)
{
	int r, fd = open_attr(AT_FDCWD, path, O_TRUNC);

	if (fd < 0)
		return fd;
	r = write_once(fd, s, strlen(s), -1);
	close(fd);
	return r;
}

int file_open_attr_at(int dirfd, const char *path)
{
	return open_attr(dirfd, path, 0);
}

int file_pwrite_attr(int fd, const char *s)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "%s\n", s);

	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	return write_once(fd, buf, (size_t)n, 0);
}

/* Hands line() the complete lines of buf[0..have); returns how many bytes were used, or a
 * negative return of line(). *skip: the first line is the rest of one already passed cut. */
static ssize_t lines_pass(const char *buf, size_t have, bool *skip,
			  int (*line)(void *ctx, const char *s, size_t len), void *ctx)
{
	const char *p = buf, *end = buf + have, *nl;
	int r;

	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		r = *skip ? 0 : line(ctx, p, (size_t)(nl - p));
		if (r < 0)
			return r;
		*skip = false;
		p = nl + 1;
	}
	return p - buf;
}

int file_read_lines(const char *path, char *buf, size_t size,
		    int (*line)(void *ctx, const char *s, size_t len), void *ctx)
{
	size_t have = 0;
	bool skip = false;
	int fd = file_open_regular(path, 0), r = 0;

	if (fd < 0)
		return fd;
	for (;;) {
		ssize_t n = read(fd, buf + have, size - have), used;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		have += (size_t)n;
		used = lines_pass(buf, have, &skip, line, ctx);
		if (used < 0) {
			r = (int)used;
			break;
		}
		have -= (size_t)used;
		memmove(buf, buf + used, have);
		if (n == 0) { /* the end: a last line without its newline */
			if (have && !skip)
				r = line(ctx, buf, have);
			break;
		}
		if (have == size) { /* a line longer than buf: passed cut, its rest skipped */
			r = skip ? 0 : line(ctx, buf, have);
			if (r < 0)
				break;
			skip = true;
			have = 0;
		}
	}
	close(fd);
	return r < 0 ? r : 0;
}
