package dev.statekeeper.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Exponential backoff: retry {@code n} (1-based) waits {@code min(maxBackoff, initialBackoff *
 * multiplier^(n-1))}, spread by +/- {@code jitter} (a fraction).
 *
 * <p>For unary calls, {@code maxAttempts} (at most 5, a gRPC limit) bounds the attempts of one call
 * that fails with UNAVAILABLE; the call's deadline bounds them too. The {@link Watch} and the
 * {@link InboxConsumer} use the backoff between reconnects, and give up after their own
 * reconnect time budget instead.
 *
 * @param maxAttempts attempts of one unary call, the first included (1 = no retry)
 * @param initialBackoff the wait before the first retry
 * @param maxBackoff the longest wait
 * @param multiplier growth of the wait per retry (>= 1)
 * @param jitter random spread of each wait, in [0, 1)
 */
public record RetryPolicy(
    int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier, double jitter) {

  /** 5 attempts, 100 ms doubling up to 5 s, +/- 20 %. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(5, Duration.ofMillis(100), Duration.ofSeconds(5), 2.0, 0.2);

  /** No retry at all. */
  public static final RetryPolicy NONE =
      new RetryPolicy(1, Duration.ofMillis(100), Duration.ofSeconds(5), 2.0, 0.2);

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1");
    }
    if (initialBackoff.isNegative() || maxBackoff.isNegative() || multiplier < 1) {
      throw new IllegalArgumentException("backoffs must be >= 0 and multiplier >= 1");
    }
    if (jitter < 0 || jitter >= 1) {
      throw new IllegalArgumentException("jitter must be in [0, 1)");
    }
  }

  /** The wait before retry number {@code retry} (1-based). */
  public Duration backoff(int retry) {
    double base =
        Math.min(
            maxBackoff.toNanos(),
            initialBackoff.toNanos() * Math.pow(multiplier, Math.max(0, retry - 1)));
    if (jitter > 0) {
      base *= 1 + ThreadLocalRandom.current().nextDouble(-jitter, jitter);
    }
    return Duration.ofNanos((long) Math.max(0, base));
  }
}
