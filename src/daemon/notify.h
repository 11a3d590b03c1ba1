/* notify: the service manager protocol (sd_notify) and the one-line STATUS= summary.
 * Every call is a no-op when NOTIFY_SOCKET is unset. Main thread only. */
#ifndef PGHOTD_NOTIFY_H
#define PGHOTD_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

struct status_info {
	int active_sources;	  /* sources running */
	const char *source_names; /* "abit,ibs" or "" */
	int nr_slow;		  /* slow-tier nodes in force */
	uint64_t promoted_pages;
	double rate_mib_s; /* promotion rate over the last refresh period */
	int dry_run;
};

/* Pure: formats the STATUS= text. Returns what snprintf returns. */
int notify_format_status(char *buf, size_t len, const struct status_info *s);

void notify_ready(const char *status);
void notify_reloading(uint64_t monotonic_usec);
void notify_stopping(void);
void notify_status(const char *status);

#endif
