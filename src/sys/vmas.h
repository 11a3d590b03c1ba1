/* vmas: which of a process's VMAs the Accessed-bit source keeps state for, so that its
 * memory follows what the process has resident, never what it maps.
 *
 * A process's trackable VMAs (readable, not [vdso]-like) come from its maps file, a line at
 * a time. Each 2 MiB piece of them costs the source a struct (and more once watched), so a
 * process gets at most vmas_allowance() pieces for its resident set (VMAS_FLOOR,
 * and VMAS_PER_HUGE per 2 MiB resident), and the source as a whole a global cap. When a
 * process's VMAs span more than that, its numa_maps says which VMAs hold any page at all
 * (a 4 TiB PROT_READ|MAP_NORESERVE mapping with nothing resident holds none: the kernel's walk
 * of it skips its empty page tables), and the empty ones are left out; what still does not
 * fit is cut in address order and the pieces left out are counted by the caller. A VMA
 * that later gains pages is taken in at the next re-read of the process's maps.
 *
 * The reads go through one caller-owned struct vmas (its buffers are reused from one
 * process to the next); paths are parameters, so tests use fixture files. One thread at a
 * time per struct (the source thread). */
#ifndef PGHOTD_VMAS_H
#define PGHOTD_VMAS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Pieces every process may have whatever its resident set (1 GiB of address space). */
#define VMAS_FLOOR 512
/* Pieces per 2 MiB of resident memory: room for a resident set scattered 16 times as thin. */
#define VMAS_PER_HUGE 16
/* The most of the maps and numa_maps text looked at at once (a longer line is cut). */
#define VMAS_LINE_BUF	  16384
#define VMAS_CANCEL_LINES 1024

struct vma {
	uint64_t start, end; /* [start, end), page aligned */
};

struct vmas {
	struct vma *v; /* in address order */
	size_t n, cap;
	/* When set and true, a read stops within VMAS_CANCEL_LINES lines with -ECANCELED (the
	 * source's stop flag: a maps file of 65,000 lines takes seconds in an emulator). */
	const atomic_bool *cancel;
	/* Every VMA, as DAMON's three regions see them (the DAMON source's cut), not only the
	 * trackable ones. */
	bool all;
	/* 0, or the most VMAs read: a longer maps file stops the read with -E2BIG. */
	size_t max;
	size_t lines;
	char buf[VMAS_LINE_BUF];
};

/* Pieces the source keeps for a process of rss_pages resident 4 KiB pages. Pure. */
uint64_t vmas_allowance(uint64_t rss_pages);
/* The default global cap for a machine of phys_pages 4 KiB pages: two pieces per 2 MiB of
 * memory (every page resident in some process, twice over), and 64 floors. Pure. */
uint64_t vmas_total_cap(uint64_t phys_pages);

/* Replaces s's list with the trackable VMAs of the maps file at path. 0 or -errno (-ENOENT /
 * -ESRCH: the process is gone). */
int vmas_read_maps(struct vmas *s, const char *path);
/* Drops from s's list the VMAs that the numa_maps file at path shows without a resident page
 * (listed there with no N<node>= field). 0, or -errno with the list unchanged. */
int vmas_drop_empty(struct vmas *s, const char *path);
/* 2 MiB-aligned pieces the list spans. Pure. */
uint64_t vmas_pieces(const struct vmas *s);
/* Keeps the list's first allow pieces (the VMA that crosses the limit is cut at a 2 MiB
 * boundary) and returns how many pieces were left out. Pure. */
uint64_t vmas_fit(struct vmas *s, uint64_t allow);

void vmas_free(struct vmas *s);

#endif
