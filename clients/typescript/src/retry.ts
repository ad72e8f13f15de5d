// Retry policy and which calls are safe to repeat.
import { randomUUID } from "node:crypto";

import { status } from "@grpc/grpc-js";

/**
 * Exponential backoff. Retry n (n >= 1) waits
 * min(maxBackoffMs, initialBackoffMs * multiplier^(n-1)), spread by +/- jitter
 * (a fraction). A unary call makes at most `maxAttempts` attempts, all within
 * its deadline.
 */
export interface RetryPolicy {
  maxAttempts: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  multiplier: number;
  jitter: number;
}

/** The default: 5 attempts, 100 ms doubling up to 5 s, +/- 20 %. */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 5,
  initialBackoffMs: 100,
  maxBackoffMs: 5_000,
  multiplier: 2,
  jitter: 0.2,
});

/** A policy that never retries. */
export const NO_RETRY: Readonly<RetryPolicy> = Object.freeze({ ...DEFAULT_RETRY, maxAttempts: 1 });

/** A complete policy from a partial one (defaults from {@link DEFAULT_RETRY}), checked. */
export function retryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY, ...partial };
  if (!(policy.maxAttempts >= 1)) throw new RangeError("RetryPolicy.maxAttempts must be >= 1");
  if (policy.initialBackoffMs < 0 || policy.maxBackoffMs < 0 || policy.multiplier < 1) {
    throw new RangeError("RetryPolicy: backoffs must be >= 0 and multiplier >= 1");
  }
  if (!(policy.jitter >= 0 && policy.jitter < 1)) throw new RangeError("RetryPolicy.jitter must be in [0, 1)");
  return policy;
}

/** Milliseconds to wait before retry number `retry` (1-based). */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  let base = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (retry - 1));
  if (policy.jitter) base *= 1 + (Math.random() * 2 - 1) * policy.jitter;
  return Math.max(0, base);
}

/** Status codes a call is retried on: UNAVAILABLE only (the server was not reached, or asked for a retry). */
export const RETRYABLE_CODES: ReadonlySet<status> = new Set([status.UNAVAILABLE]);

/** Resolves after `ms`, or rejects at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Read-only methods, by the verb their name starts with (the proto's naming:
 * Get*, List*, Search*, Recall, QueryEntity). Repeating one changes nothing.
 */
const READ_VERBS = /^(Get|List|Search|Recall|Query|Check)/;

/** How the client treats a unary method of the generated service definitions. */
export interface MethodSafety {
  /** Its request has a `requestId` (AIP-155 idempotency key) that the client fills when empty. */
  idempotencyKey: boolean;
  /** It only reads. */
  readOnly: boolean;
}

/**
 * Whether a unary method may be retried: derived from the generated service
 * definition (a request with a `requestId` field is keyed: decoding an empty
 * message yields every field with its default) and from the method name
 * (reads). Mutations without an idempotency key are never retried: their
 * UNAVAILABLE may come after the server applied them.
 */
export function methodSafety(name: string, requestDeserialize: (bytes: Buffer) => unknown): MethodSafety {
  const empty = requestDeserialize(Buffer.alloc(0)) as Record<string, unknown>;
  return {
    idempotencyKey: typeof empty?.["requestId"] === "string",
    readOnly: READ_VERBS.test(name),
  };
}

/** `request` with `requestId` set to a fresh random key when it is empty (a shallow copy; the caller's object is left alone). */
export function withRequestId<T>(request: T): T {
  const fields = request as Record<string, unknown>;
  if (fields && typeof fields === "object" && !fields["requestId"]) {
    return { ...fields, requestId: randomUUID() } as T;
  }
  return request;
}
