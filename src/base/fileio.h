/* fileio: whole-file reads of the small text files pghotd lives on (sysfs attributes, procfs
 * entries, its configuration), and atomic whole-file writes of the ones it publishes. Any
 * thread.
 *
 * Every read opens the file as what it must be: a regular file, opened with O_NONBLOCK so a
 * FIFO or a device planted where a file was expected fails at once (-EBADFD, -EISDIR for a
 * directory) instead of blocking the daemon. Writes never open an existing name: the
 * temporary is created exclusively under an unpredictable name in the target's directory. */
#ifndef PGHOTD_FILEIO_H
#define PGHOTD_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Opens path read-only as a regular file: O_NONBLOCK while opening (cleared after), then
 * fstat. flags may add O_NOFOLLOW. Returns the fd, -EISDIR for a directory, -EBADFD for
 * anything else not a regular file (FIFO, socket, device), or -errno. */
int file_open_regular(const char *path, int flags);
/* What r (a negative errno from this module) means, for messages: "not a regular file" for
 * -EBADFD, "file too large" for -EFBIG, else strerror(). */
const char *file_strerror(int r);

/* Reads the whole file at path into buf (NUL-terminated), retrying on EINTR and short reads.
 * Returns its length, -errno when it cannot be opened or read (see file_open_regular()), or
 * -EFBIG when it fills all size - 1 bytes (it may be longer: never silently cut). */
int file_read_small(const char *path, char *buf, size_t size);
/* The soft RLIMIT_NOFILE: UINT64_MAX when unlimited, unknown when it cannot be read. */
uint64_t file_nofile_limit(uint64_t unknown);
/* Reads the first line of a small file, newline removed. 0 or -errno as above. */
int file_read_line(const char *path, char *buf, size_t size);
/* Reads the whole regular file at path into a new buffer (*out, NUL-terminated after *len
 * bytes; the file may itself hold NUL bytes: *len tells). -EFBIG past max bytes. 0 or -errno
 * as above; *out and *len untouched on failure. */
int file_read_alloc(const char *path, size_t max, char **out, size_t *len);
/* As file_read_alloc(), and *mtime the modification time of the file read (from the same
 * open file, so a file replaced meanwhile cannot pair one file's text with another's time).
 * *mtime untouched on failure. */
int file_read_alloc_mtime(const char *path, size_t max, char **out, size_t *len,
			  struct timespec *mtime);

/* Reads the text file at path line by line through buf[size] (size > 0) and calls line() with
 * each line, newline removed, not NUL-terminated. A line longer than size bytes is passed cut
 * to its first size bytes and the rest skipped: memory and time follow what is read, whatever
 * the file claims. 0, the first negative return of line(), or -errno. */
int file_read_lines(const char *path, char *buf, size_t size,
		    int (*line)(void *ctx, const char *s, size_t len), void *ctx);

/* Replaces path with len bytes of buf atomically: a reader sees the old or the new file
 * whole, mode 0644 whatever the umask. The bytes go to a temporary created with O_EXCL under
 * an unpredictable name (".NAME.XXXXXX", mkostemp) in path's directory, then renamed over
 * path: nothing planted at a fixed name (a FIFO, a link) is ever opened. -ELOOP when path's
 * directory is a symbolic link owned by another user than root or the caller (planted in a
 * shared directory). 0 or -errno; the temporary is gone on failure. */
int file_write_atomic(const char *path, const char *buf, size_t len);

/* Writes the string s to an existing attribute file (sysfs, procfs; a regular file in test
 * fixtures, truncated first) in one write(2), as the kernel parses an attribute. Opened
 * O_NOFOLLOW | O_NONBLOCK and checked to be a regular file (-EBADFD otherwise). A short write
 * is -EIO. 0 or -errno (the kernel's refusal, e.g. -EBUSY or -EINVAL). */
int file_write_attr(const char *path, const char *s);
/* For an attribute written again, or one of many in a directory: opens path (relative to dirfd,
 * or AT_FDCWD) write-only, checked as file_write_attr() does (-EBADFD), and returns the fd for
 * file_pwrite_attr(), or -errno. */
int file_open_attr_at(int dirfd, const char *path);
/* Writes s (under 127 bytes, else -EINVAL) and a newline at offset 0 of fd in one write(2):
 * an attribute takes the value whole each time, and a regular file (a test fixture, not
 * truncated) reads it back as its first line. 0 or -errno; a short write is -EIO. */
int file_pwrite_attr(int fd, const char *s);

#endif
