/* notify: sd_notify messages for Type=notify-reload services. */
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "daemon/notify.h"

int notify_format_status(char *buf, size_t len, const struct status_info *s)
{
	if (s->nr_slow == 0)
		return snprintf(buf, len, "idle: no slow memory tier; reload to re-detect");
	return snprintf(
	    buf, len, "%s%d source%s active%s%s%s; %d slow node%s; %llu pages promoted, %.1f MiB/s",
	    s->dry_run ? "dry run: " : "", s->active_sources, s->active_sources == 1 ? "" : "s",
	    s->active_sources ? " (" : "", s->active_sources ? s->source_names : "",
	    s->active_sources ? ")" : "", s->nr_slow, s->nr_slow == 1 ? "" : "s",
	    (unsigned long long)s->promoted_pages, s->rate_mib_s);
}

void notify_ready(const char *status)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_reloading(uint64_t monotonic_usec)
{
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu\nSTATUS=reloading configuration",
		   (unsigned long long)monotonic_usec);
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

void notify_status(const char *status)
{
	sd_notifyf(0, "STATUS=%s", status);
}
