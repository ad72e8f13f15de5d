// An inbox consumer over MessageService: a ReceiveMessages stream that
// reconnects with backoff, a handler per delivery, its result turned into
// AckMessages / NackMessages, and ExtendVisibility while the handler runs.
//
// Delivery is at-least-once: a message whose ack was lost (server restart
// between the handler's end and the ack) is delivered again after its
// visibility timeout, so handlers must tolerate a repeat (`delivery.deliveryCount > 1`).
import { ClientReadableStream, status } from "@grpc/grpc-js";

import type { StatekeeperClient } from "./client";
import { StatekeeperError, toStatekeeperError } from "./errors";
import { Duration } from "./gen/google/protobuf/duration";
import {
  AckMessagesRequest,
  Delivery,
  ExtendVisibilityRequest,
  NackMessagesRequest,
  ReceiptStatus,
  ReceiveMessagesRequest,
  ReceiveMessagesResponse,
} from "./gen/statekeeper/v1/message";
import { backoffMs, retryPolicy, RetryPolicy, sleep } from "./retry";

const METHOD = "statekeeper.v1.MessageService/ReceiveMessages";

/** A handler's request to give a delivery back instead of acknowledging it. */
export interface Nack {
  readonly nack: true;
  /** Redeliver after this long (ms); default: the consumer's `nackDelayMs`. */
  delayMs?: number;
  /** Move the message to the dead-letter list now (a poison message). */
  deadLetter?: boolean;
  /** Why (recorded on dead letters). */
  reason?: string;
}

/** `return nack({ delayMs: 5000 })` from a handler gives the delivery back. */
export function nack(options: Omit<Nack, "nack"> = {}): Nack {
  return { nack: true, ...options };
}

/**
 * Returning (anything but a {@link Nack}) acks the delivery; throwing nacks it.
 * `signal` aborts when the consumer stops (`stop()` or the consumer's own
 * signal): a long handler should give up then (throw or return), since
 * `stop()` waits for every running handler and settles its delivery.
 */
export type DeliveryHandler = (delivery: Delivery, signal: AbortSignal) => unknown | Promise<unknown>;

/**
 * How long (ms) a ReceiveMessages stream must stay open to count as working:
 * it then ends a run of failures even if nothing came (an idle inbox sends
 * neither a message nor headers).
 */
export const STREAM_WORKING_AFTER_MS = 1_000;

/** Options of {@link InboxConsumer} (`sk.consume(agentId, handler, options)`). */
export interface ConsumeOptions {
  /** Deliveries handled at once (the stream's `max_in_flight`); default 10. */
  maxInFlight?: number;
  /** Visibility timeout of each delivery (ms); default 30 000. */
  visibilityTimeoutMs?: number;
  /** Extend the visibility of a delivery whose handler still runs this often (ms); default a third of the timeout. */
  extendEveryMs?: number;
  /** Only messages of these types (default: all). */
  types?: string[];
  /**
   * Redelivery delay after a handler threw (ms): a number, or a function of
   * the delivery; default min(30 s, 1 s * 2^(deliveryCount - 1)).
   */
  nackDelayMs?: number | ((delivery: Delivery) => number);
  /** Backoff between reconnects of the stream (partial; default 100 ms doubling up to 5 s). */
  reconnect?: Partial<RetryPolicy>;
  /**
   * Stop with the last error when the stream could not be opened for this long (ms), counted from the
   * first failure of the current run (a stream open for {@link STREAM_WORKING_AFTER_MS} ends a run); default 60 000.
   */
  giveUpAfterMs?: number;
  /** Deadline of each ack / nack / extend call, UNAVAILABLE retried within it (ms); default 30 000. */
  settleTimeoutMs?: number;
  /** Told about every error that does not stop the consumer (a handler that threw, a failed ack, a reconnect). */
  onError?: (error: unknown, delivery?: Delivery) => void;
  /** Stops the consumer (like `stop()`). */
  signal?: AbortSignal;
}

/** Counters of an {@link InboxConsumer}. */
export interface ConsumerStats {
  /** Deliveries passed to the handler. */
  delivered: number;
  /** Deliveries acknowledged (status OK or ALREADY_ACKED). */
  acked: number;
  /** Deliveries given back. */
  nacked: number;
  /** Visibility extensions made. */
  extended: number;
  /** Acks, nacks or extensions that failed or came back EXPIRED / NOT_FOUND (the message will be redelivered). */
  settleFailures: number;
  /** Streams opened (1 + reconnects). */
  streamsOpened: number;
}

function duration(ms: number): Duration {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: Math.round((ms % 1000) * 1e6) };
}

function isNack(value: unknown): value is Nack {
  return typeof value === "object" && value !== null && (value as Nack).nack === true;
}

const FATAL = new Set([
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.UNIMPLEMENTED,
  status.FAILED_PRECONDITION,
]);

/**
 * Receives from one inbox until stopped. `done` resolves after `stop()` once
 * every handler has finished and its delivery is settled, and rejects when
 * the consumer cannot go on (a non-retryable error of the stream, or no
 * stream for `giveUpAfterMs`).
 */
export class InboxConsumer {
  readonly stats: ConsumerStats = {
    delivered: 0,
    acked: 0,
    nacked: 0,
    extended: 0,
    settleFailures: 0,
    streamsOpened: 0,
  };
  /** Settles when the consumer has stopped (see the class comment). */
  readonly done: Promise<void>;
  private stopping = false;
  private call: ClientReadableStream<ReceiveMessagesResponse> | undefined;
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();
  private readonly visibilityMs: number;
  private readonly policy: RetryPolicy;

  constructor(
    private readonly sk: StatekeeperClient,
    readonly agentId: string,
    private readonly handler: DeliveryHandler,
    private readonly options: ConsumeOptions = {},
  ) {
    this.visibilityMs = options.visibilityTimeoutMs ?? 30_000;
    this.policy = retryPolicy({ maxAttempts: Number.POSITIVE_INFINITY, ...options.reconnect });
    options.signal?.addEventListener("abort", () => void this.stop(), { once: true });
    this.done = this.loop();
    // `done` is also awaited by stop(); an unobserved rejection is not the caller's fault.
    this.done.catch(() => undefined);
    if (options.signal?.aborted) void this.stop();
  }

  /**
   * Stops receiving, aborts the handlers' signal, and waits for the running
   * handlers and their acks/nacks (a handler that ignores its signal delays this).
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.call?.cancel();
    await this.done;
  }

  private report(error: unknown, delivery?: Delivery): void {
    try {
      this.options.onError?.(error, delivery);
    } catch {
      // a throwing onError must not stop the consumer
    }
  }

  private async loop(): Promise<void> {
    let failures = 0;
    // When the current run of failures began (undefined while a stream works).
    let brokenSince: number | undefined;
    const giveUpAfterMs = this.options.giveUpAfterMs ?? 60_000;
    try {
      while (!this.stopping) {
        const call = this.sk.messages.receiveMessages(
          ReceiveMessagesRequest.fromPartial({
            agentId: this.agentId,
            maxInFlight: this.options.maxInFlight ?? 10,
            visibilityTimeout: duration(this.visibilityMs),
            types: this.options.types ?? [],
          }),
        );
        this.call = call;
        this.stats.streamsOpened++;
        const openedAt = Date.now();
        const working = () => {
          failures = 0;
          brokenSince = undefined;
        };
        let failure: StatekeeperError | undefined;
        try {
          // The stream works once its headers or a message arrive; an idle inbox
          // may send neither, so staying open for a while counts too (below).
          call.on("metadata", working);
          for await (const response of call as AsyncIterable<ReceiveMessagesResponse>) {
            working();
            for (const delivery of response.deliveries) this.spawn(delivery);
          }
        } catch (error) {
          if (this.stopping) break;
          failure = toStatekeeperError(error, METHOD);
          if (FATAL.has(failure.code)) throw failure;
        } finally {
          this.call = undefined;
          call.cancel();
        }
        if (this.stopping) break;
        if (Date.now() - openedAt >= STREAM_WORKING_AFTER_MS) working();
        failures++;
        brokenSince ??= Date.now();
        const pause = backoffMs(this.policy, failures);
        if (failures >= this.policy.maxAttempts || Date.now() + pause - brokenSince > giveUpAfterMs) {
          throw failure ?? new StatekeeperError(status.UNAVAILABLE, "ReceiveMessages kept ending", { method: METHOD });
        }
        this.report(failure ?? new StatekeeperError(status.UNAVAILABLE, "ReceiveMessages ended", { method: METHOD }));
        try {
          await sleep(pause, this.abort.signal);
        } catch {
          break;
        }
      }
    } finally {
      this.stopping = true;
      // Drain: every handler finishes and its delivery is settled.
      while (this.running.size) await Promise.allSettled([...this.running]);
    }
  }

  private spawn(delivery: Delivery): void {
    const task = this.handle(delivery).finally(() => this.running.delete(task));
    this.running.add(task);
  }

  private async handle(delivery: Delivery): Promise<void> {
    this.stats.delivered++;
    const handle = delivery.receiptHandle;
    const every = this.options.extendEveryMs ?? this.visibilityMs / 3;
    let extending: Promise<void> = Promise.resolve();
    const timer = setInterval(() => {
      extending = extending.then(() => this.extend(delivery));
    }, every);
    let result: unknown;
    let threw = false;
    try {
      result = await this.handler(delivery, this.abort.signal);
    } catch (error) {
      threw = true;
      this.report(error, delivery);
    } finally {
      clearInterval(timer);
      await extending;
    }
    if (!threw && !isNack(result)) {
      await this.settle(delivery, "ack", () =>
        this.sk.api.messages.ackMessages(AckMessagesRequest.fromPartial({ receiptHandles: [handle] }), this.settleOptions()),
      );
      return;
    }
    const wanted: Nack = isNack(result) ? result : nack();
    const configured = this.options.nackDelayMs;
    const delayMs =
      wanted.delayMs ??
      (typeof configured === "function"
        ? configured(delivery)
        : (configured ?? Math.min(30_000, 1000 * 2 ** Math.max(0, delivery.deliveryCount - 1))));
    await this.settle(delivery, "nack", () =>
      this.sk.api.messages.nackMessages(
        NackMessagesRequest.fromPartial({
          receiptHandles: [handle],
          delay: duration(delayMs),
          deadLetter: wanted.deadLetter ?? false,
          reason: wanted.reason ?? "",
        }),
        this.settleOptions(),
      ),
    );
  }

  private settleOptions() {
    // Acking, nacking or extending twice is harmless: retried on UNAVAILABLE
    // (a server restart) for the whole deadline.
    return {
      idempotent: true,
      timeoutMs: this.options.settleTimeoutMs ?? 30_000,
      retry: { maxAttempts: Number.POSITIVE_INFINITY, maxBackoffMs: 2_000 },
    };
  }

  private async extend(delivery: Delivery): Promise<void> {
    await this.settle(delivery, "extend", () =>
      this.sk.api.messages.extendVisibility(
        ExtendVisibilityRequest.fromPartial({
          receiptHandles: [delivery.receiptHandle],
          visibilityTimeout: duration(this.visibilityMs),
        }),
        this.settleOptions(),
      ),
    );
  }

  private async settle(
    delivery: Delivery,
    what: "ack" | "nack" | "extend",
    send: () => Promise<{ results: { status: ReceiptStatus }[] }>,
  ): Promise<void> {
    try {
      const res = await send();
      const outcome = res.results[0]?.status;
      const ok =
        outcome === ReceiptStatus.RECEIPT_STATUS_OK ||
        (what === "ack" && outcome === ReceiptStatus.RECEIPT_STATUS_ALREADY_ACKED) ||
        (what === "nack" && outcome === ReceiptStatus.RECEIPT_STATUS_DEAD_LETTERED);
      if (!ok) {
        this.stats.settleFailures++;
        this.report(new Error(`${what} of ${delivery.message?.messageId}: receipt ${ReceiptStatus[outcome ?? 0]}`), delivery);
        return;
      }
      if (what === "ack") this.stats.acked++;
      else if (what === "nack") this.stats.nacked++;
      else this.stats.extended++;
    } catch (error) {
      this.stats.settleFailures++;
      this.report(error, delivery);
    }
  }
}
