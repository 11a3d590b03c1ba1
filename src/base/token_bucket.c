/* token_bucket: see token_bucket.h for the contract and the debt rule. */
#include "base/token_bucket.h"

/* Longest refill step worth computing: 1000 s. With rate <= 2^40 B/s the product
 * rate * ms stays below 2^60 milli-bytes, well inside uint64_t. */
#define REFILL_MAX_MS UINT64_C(1000000)

static uint64_t clamp_rate(uint64_t rate)
{
	return rate > TOKEN_BUCKET_MAX_RATE ? TOKEN_BUCKET_MAX_RATE : rate;
}

static int64_t clamp_burst(uint64_t burst)
{
	/* A zero burst could never be full enough to pay anything in debt-free terms; one byte
	 * keeps the "full bucket pays" rule meaningful. */
	if (burst == 0)
		return 1;
	if (burst > (uint64_t)INT64_MAX / 2)
		return INT64_MAX / 2;
	return (int64_t)burst;
}

void token_bucket_init(struct token_bucket *b, uint64_t rate, uint64_t burst, uint64_t now_ms)
{
	b->rate = clamp_rate(rate);
	b->burst = clamp_burst(burst);
	b->tokens = b->burst;
	b->frac = 0;
	b->last_ms = now_ms;
}

void token_bucket_configure(struct token_bucket *b, uint64_t rate, uint64_t burst)
{
	b->rate = clamp_rate(rate);
	b->burst = clamp_burst(burst);
	if (b->tokens > b->burst)
		b->tokens = b->burst;
}

void token_bucket_refill(struct token_bucket *b, uint64_t now_ms)
{
	uint64_t elapsed, milli;

	if (now_ms <= b->last_ms)
		return;
	elapsed = now_ms - b->last_ms;
	b->last_ms = now_ms;
	if (b->rate == 0)
		return;
	if (elapsed > REFILL_MAX_MS) {
		b->tokens = b->burst;
		b->frac = 0;
		return;
	}
	/* rate B/s over elapsed ms earns rate * elapsed / 1000 bytes: keep the remainder so a
	 * short interval does not round the rate down. */
	milli = b->frac + b->rate * elapsed;
	b->tokens += (int64_t)(milli / 1000);
	b->frac = milli % 1000;
	if (b->tokens >= b->burst) {
		b->tokens = b->burst;
		b->frac = 0;
	}
}

bool token_bucket_take(struct token_bucket *b, uint64_t bytes)
{
	if (b->rate == 0)
		return true;
	if (bytes > (uint64_t)INT64_MAX / 2)
		return false;
	if (b->tokens >= (int64_t)bytes || b->tokens == b->burst) {
		b->tokens -= (int64_t)bytes;
		return true;
	}
	return false;
}

void token_bucket_refund(struct token_bucket *b, uint64_t bytes)
{
	if (b->rate == 0)
		return;
	if (bytes > (uint64_t)b->burst || b->tokens + (int64_t)bytes > b->burst)
		b->tokens = b->burst;
	else
		b->tokens += (int64_t)bytes;
}

bool token_bucket_exhausted(const struct token_bucket *b)
{
	return b->rate != 0 && b->tokens <= 0;
}
