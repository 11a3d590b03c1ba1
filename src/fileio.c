/* fileio: small whole-file reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"

int file_read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (r < 0)
		return r;
	buf[len] = '\0';
	return len == size - 1 ? -EFBIG : (int)len;
}

int file_read_line(const char *path, char *buf, size_t size)
{
	int r = file_read_small(path, buf, size);

	if (r < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int file_write_atomic(const char *path, const char *buf, size_t len)
{
	char tmp[PATH_MAX];
	size_t done = 0;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	while (done < len && r == 0) {
		ssize_t n = write(fd, buf + done, len - done);

		if (n < 0 && errno != EINTR)
			r = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}
