/* kernel_release: the running kernel's release string (uname's release) read as numbers, for
 * the features that arrived in a known version. Pure, any thread. */
#ifndef PGHOTD_KERNEL_RELEASE_H
#define PGHOTD_KERNEL_RELEASE_H

/* "6.1.0-18-amd64" -> 6, 1. -EINVAL when release does not start with N.N; *major and *minor
 * untouched then. */
int kernel_release_version(const char *release, unsigned *major, unsigned *minor);

#endif
