/* abit_watch: mode "regions" of the Accessed-bit source: the sampling steps and the pieces
 * they watch. Built on the scan, the cold side and the table; used by the source. Source
 * thread. */
#ifndef PGHOTD_ABIT_WATCH_H
#define PGHOTD_ABIT_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sources/abit/abit_internal.h"

/* One sampling step of every sampled process. 0 or -EPERM. */
int abit_watch_sample_all(struct abit *a);

#endif
