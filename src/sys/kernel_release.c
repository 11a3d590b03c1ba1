/* kernel_release: see kernel_release.h. */
#include <errno.h>
#include <stdio.h>

#include "sys/kernel_release.h"

int kernel_release_version(const char *release, unsigned *major, unsigned *minor)
{
	unsigned ma, mi;
	int n = 0;

	if (!release || sscanf(release, "%u.%u%n", &ma, &mi, &n) != 2 || n == 0)
		return -EINVAL;
	*major = ma;
	*minor = mi;
	return 0;
}
