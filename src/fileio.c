/* fileio: small whole-file reads. */
#include <errno.h>
#include <fcntl.h>
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
