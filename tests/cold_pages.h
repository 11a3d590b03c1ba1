/* A cold page for the cold_list tests: base size, offered at 1000 ms. */
#ifndef PGHOTD_TESTS_COLD_PAGES_H
#define PGHOTD_TESTS_COLD_PAGES_H

#include "table/cold_list.h"

static inline struct cold_page page(pid_t pid, uint64_t vaddr, uint64_t since, int node)
{
	return (struct cold_page){.pid = pid,
				  .vaddr = vaddr,
				  .idle_since_ms = since,
				  .offered_ms = 1000,
				  .node = node,
				  .size = HOT_SIZE_BASE};
}

#endif
