/* idle_bitmap: I/O on /sys/kernel/mm/page_idle/bitmap, and the small set of words one scan
 * touches.
 *
 * The bitmap is u64 words; PFN p is bit p % 64 of word p / 64. Every read or write must be
 * 8-byte aligned and sized, and the sysfs binary file moves at most 4096 bytes per call, so
 * every transfer loops on short counts. Writing a 1 bit marks that page idle (a 0 bit does
 * nothing); reading gives 1 for pages not accessed since they were marked, 0 for accessed
 * pages and for pages page_idle does not track.
 *
 * All I/O goes through struct idle_io_ops so tests use a regular file image or a fake that
 * returns short counts, and the benchmark can record what a scan did. Any thread; an
 * idle_words object belongs to one thread. */
#ifndef PGHOTD_IDLE_BITMAP_H
#define PGHOTD_IDLE_BITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest transfer the kernel's sysfs binary files move in one call. */
#define IDLE_BITMAP_IO_MAX   4096
#define IDLE_BITMAP_IO_WORDS (IDLE_BITMAP_IO_MAX / 8)

struct idle_io_ops {
	/* pread(2)/pwrite(2): bytes moved (possibly short), or -errno. */
	ssize_t (*pread)(void *ctx, int fd, void *buf, size_t len, uint64_t off);
	ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len, uint64_t off);
	/* CLOCK_MONOTONIC nanoseconds. */
	uint64_t (*now_ns)(void *ctx);
	/* Node of each page of pid (move_pages(2) with nodes NULL): status[i] is the node or a
	 * negative errno. 0 or -errno for the call. Used only where sysfs has no memory block
	 * map to find a PFN's node (kernels without CONFIG_MEMORY_HOTPLUG). May be NULL. */
	long (*page_nodes)(void *ctx, pid_t pid, unsigned long n, void **pages, int *status);
	void *ctx;
};

/* pread/pwrite (retrying EINTR), clock_monotonic_ns(), move_pages. */
extern const struct idle_io_ops idle_io_real_ops;

/* Ops that pass every call to inner and add the bytes each pread and pwrite moved to bytes
 * (the source's pghotd_scan_io_bytes_total); page_nodes is NULL where inner's is. Set up by
 * idle_io_counter_init(), which points ops.ctx at the counter: it must not move after. The
 * thread that uses ops owns bytes. */
struct idle_io_counter {
	const struct idle_io_ops *inner;
	struct idle_io_ops ops;
	uint64_t bytes;
};

void idle_io_counter_init(struct idle_io_counter *c, const struct idle_io_ops *inner);

/* Reads up to len bytes at off, looping on short counts until len or end of file. Returns
 * the bytes read (less than len only at end of file), or -errno. */
ssize_t idle_io_read_full(const struct idle_io_ops *ops, int fd, void *buf, size_t len,
			  uint64_t off);
/* Writes len bytes at off, looping on short counts. 0, or -errno (-EIO when a call makes no
 * progress). */
int idle_io_write_full(const struct idle_io_ops *ops, int fd, const void *buf, size_t len,
		       uint64_t off);

/* n words from word index first. -ENXIO when the file ends first (PFN past the last one). */
int idle_bitmap_read_words(const struct idle_io_ops *ops, int fd, uint64_t first, uint64_t *w,
			   size_t n);
int idle_bitmap_write_words(const struct idle_io_ops *ops, int fd, uint64_t first,
			    const uint64_t *w, size_t n);

/* The bitmap words covering a set of PFNs: word indices sorted and unique, the bits of the
 * set's PFNs in each, and the value last read back. */
struct idle_words {
	size_t n, cap;
	uint64_t *word; /* word index (pfn / 64), ascending */
	uint64_t *mask; /* bits of the set's PFNs */
	uint64_t *val;	/* value read by idle_words_fetch() */
};

void idle_words_reset(struct idle_words *w);
void idle_words_free(struct idle_words *w);
/* Adds the PFNs (any order, duplicates allowed) to an empty set. -ENOMEM; w then empty. */
int idle_words_build(struct idle_words *w, const uint64_t *pfns, size_t n);
/* Marks every PFN of the set idle: one write per run of words whose gaps are at most
 * max_gap words (gap words are written as 0, which changes nothing), each run at most
 * IDLE_BITMAP_IO_WORDS long. Words the kernel will not take (past its last full word
 * below max_pfn: 0-byte transfers) are skipped. Returns the number of write runs, or -errno. */
int idle_words_mark(const struct idle_io_ops *ops, int fd, const struct idle_words *w,
		    size_t max_gap);
/* Reads the set's words back into val, one read per run of consecutive words (reading a
 * word costs the kernel a reverse-map walk for each of its 64 pages, so gaps are not read).
 * Words past the end of the bitmap read as all idle. Returns the number of read runs, or
 * -errno. */
int idle_words_fetch(const struct idle_io_ops *ops, int fd, struct idle_words *w);
/* After a fetch: true when pfn's bit read back as 1 (not accessed). pfn not in the set: false. */
bool idle_words_idle(const struct idle_words *w, uint64_t pfn);

#endif
