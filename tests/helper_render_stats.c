/* Prints the stats file pghotd writes, as stats_render() renders a fresh struct stats with
 * two nodes: every family stats.c exports (each is present even at 0). For the checks that
 * need the exported names without a running daemon (tests/check_dashboard.py). */
#include <stdio.h>

#include "base/stats.h"

int main(void)
{
	struct stats s;

	stats_init(&s, 2);
	return stats_render(&s, stdout) == 0 ? 0 : 1;
}
