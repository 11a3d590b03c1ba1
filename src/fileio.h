/* fileio: whole-file reads of the small text files pghotd lives on (sysfs attributes, procfs
 * entries), and atomic whole-file writes of the ones it publishes. Any thread. */
#ifndef PGHOTD_FILEIO_H
#define PGHOTD_FILEIO_H

#include <stddef.h>

/* Reads the whole file at path into buf (NUL-terminated), retrying on EINTR and short reads.
 * Returns its length, -errno when it cannot be opened or read, or -EFBIG when it fills all
 * size - 1 bytes (it may be longer: never silently cut). */
int file_read_small(const char *path, char *buf, size_t size);
/* Reads the first line of a small file, newline removed. 0 or -errno as above. */
int file_read_line(const char *path, char *buf, size_t size);

/* Replaces path with len bytes of buf atomically: a reader sees the old or the new file whole.
 * Writes path.tmp (never through a symbolic link) and renames it. 0 or -errno. */
int file_write_atomic(const char *path, const char *buf, size_t len);

#endif
