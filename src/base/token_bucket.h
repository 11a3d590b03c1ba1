/* token_bucket: a byte-denominated rate limiter driven by a caller-supplied millisecond clock.
 *
 * The bucket holds at most `burst` bytes of credit and refills at `rate` bytes per second.
 * A charge larger than the whole burst (a 2 MiB THP against a small burst) would otherwise
 * never be paid, so a full bucket may pay it and go into debt; the debt is repaid by later
 * refills. Over any span of T seconds the bytes taken therefore stay within
 * rate * T + max(burst, largest single charge).
 *
 * Not thread safe: one owner (the promoter thread, or a test). No clock reads inside. */
#ifndef PGHOTD_TOKEN_BUCKET_H
#define PGHOTD_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

/* Rates above this are clamped so the refill arithmetic cannot overflow. */
#define TOKEN_BUCKET_MAX_RATE (UINT64_C(1) << 40)

struct token_bucket {
	uint64_t rate;	/* bytes per second; 0 = unlimited */
	int64_t burst;	/* credit ceiling, bytes */
	int64_t tokens; /* credit, bytes; negative while in debt */
	uint64_t frac;	/* sub-byte credit carried between refills, in 1/1000 byte */
	uint64_t last_ms;
};

/* Starts full. rate 0 means unlimited (every take succeeds). */
void token_bucket_init(struct token_bucket *b, uint64_t rate, uint64_t burst, uint64_t now_ms);
/* Changes rate and burst (config reload) keeping the current credit, clamped to the new burst. */
void token_bucket_configure(struct token_bucket *b, uint64_t rate, uint64_t burst);
/* Adds the credit earned since the last refill. A clock that goes backwards earns nothing. */
void token_bucket_refill(struct token_bucket *b, uint64_t now_ms);
/* Takes bytes if the credit covers them (or the bucket is full: see above). */
bool token_bucket_take(struct token_bucket *b, uint64_t bytes);
/* Gives back bytes taken for work that did not happen, up to the burst. */
void token_bucket_refund(struct token_bucket *b, uint64_t bytes);
/* True when no take of any size can succeed before the next refill. */
bool token_bucket_exhausted(const struct token_bucket *b);

#endif
