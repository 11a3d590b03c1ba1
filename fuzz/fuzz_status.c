/* libFuzzer target: a stats file through pghotd --status: the exposition-format parser, the
 * snapshot, the check and the view, the input taken as the file after an earlier one of the
 * same run (so the rates' paths run too). Every label byte that reaches the view must be
 * printable ASCII: a cgroup name may not drive the terminal (abort otherwise). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/status.h"

static void view_is_printable(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c < 0x20 && c != '\n') || c >= 0x7f)
			abort();
	}
}

static int snap(const uint8_t *data, size_t size, double mtime, struct status_snap *out)
{
	struct prom_text t;

	if (prom_text_parse((const char *)data, size, 4096, &t) < 0)
		return -1;
	return status_snap_build(&t, mtime, 1u << 1, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct status_snap prev, cur;
	char msg[512], *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (snap(data, size / 2, 1700000000.0, &prev) < 0)
		return 0;
	if (snap(data, size, 1700000010.0, &cur) == 0) {
		(void)status_check(&cur, 1700000011.0, 10000, "/run/pghotd/stats.prom", msg,
				   sizeof(msg));
		prev.start_time = cur.start_time; /* one run: the interval's rates */
		f = open_memstream(&buf, &len);
		if (f) {
			status_render(f, &cur, &prev, NULL, 1700000011.0, 10000);
			fclose(f);
			view_is_printable(buf, len);
			free(buf);
		}
		status_snap_free(&cur);
	}
	status_snap_free(&prev);
	return 0;
}
