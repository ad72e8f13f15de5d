// A blackboard Watch that resumes where it stopped.
//
// BlackboardService.Watch promises that every response carries a
// `resume_revision`, and that a new Watch started at that revision continues
// exactly after the last delivered message, without a gap and without a
// repeat, on any replica. This helper keeps that revision and, when the stream
// breaks (UNAVAILABLE: server restart, lost connection; a stream that ends;
// RESOURCE_EXHAUSTED/SLOW_CONSUMER), opens a new stream from it after an
// exponential backoff.
//
// OUT_OF_RANGE/REVISION_COMPACTED (the revisions to replay are gone) is the
// documented re-list-then-watch: with `onCompacted`, the helper lists the
// selected keys at the current revision R (ListEntries, all pages at R), hands
// the listing to the callback, and continues the Watch from R + 1; without it,
// the iteration throws the REVISION_COMPACTED error (`ReasonErrors.REVISION_COMPACTED`,
// `oldestRevision(error)`), and {@link relist} does the same by hand.
import { ClientReadableStream, status } from "@grpc/grpc-js";

import type { StatekeeperClient } from "./client";
import { ReasonError, StatekeeperError, toStatekeeperError } from "./errors";
import {
  BlackboardEntry,
  BlackboardEvent,
  BlackboardEventType,
  ListEntriesRequest,
  WatchRequest,
  WatchResponse,
} from "./gen/statekeeper/v1/blackboard";
import { backoffMs, retryPolicy, RetryPolicy, sleep } from "./retry";

const METHOD = "statekeeper.v1.BlackboardService/Watch";

/** Which keys of a board: a prefix or a glob pattern (neither: every key). */
export interface Selector {
  prefix?: string;
  pattern?: string;
}

/** What {@link relist} returns: the entries live at `revision`, and where a Watch continues from. */
export interface Relisting {
  /** The matching entries at `revision`, by key. */
  entries: BlackboardEntry[];
  /** The revision of the listing. */
  revision: bigint;
  /** `revision + 1`: the start revision of a Watch that continues the listing without a gap. */
  startRevision: bigint;
}

/** Options of {@link Watch} (`sk.watch(board, options)`). */
export interface WatchOptions extends Selector {
  /**
   * First revision to deliver (inclusive). 0 (default): changes after the
   * current revision only. To continue an earlier watch, pass its `resumeRevision`.
   */
  startRevision?: bigint;
  /** Send the matching entries first (between snapshot markers), as of `startRevision - 1` (or now). */
  initialSnapshot?: boolean;
  /** Events carry the entry as it was before the change. */
  prevValue?: boolean;
  /** Ask for a progress notification when nothing was sent for this long (ms). */
  progressNotifyIntervalMs?: number;
  /** Only events of these kinds (default: all). */
  eventTypes?: BlackboardEventType[];
  /** Deadline of the whole watch, reconnects included (ms); the iteration then ends. Default: none. */
  timeoutMs?: number;
  /** Backoff between reconnects (partial; defaults: 100 ms doubling up to 5 s, unlimited attempts). */
  reconnect?: Partial<RetryPolicy>;
  /**
   * Give up (throw the last error) when no stream could be opened for this long (ms), counted from the
   * break (a quiet board's idle time does not count); default 60 000.
   */
  giveUpAfterMs?: number;
  /** Resume after SLOW_CONSUMER (default true); false: throw it. `onSlowConsumer` is called either way. */
  resumeOnSlowConsumer?: boolean;
  /**
   * Re-list-then-watch after OUT_OF_RANGE (REVISION_COMPACTED): the helper
   * lists the selected keys, awaits this callback with the listing, and
   * continues from `listing.startRevision`. Without it the iteration throws.
   */
  onCompacted?: (listing: Relisting, error: ReasonError<"REVISION_COMPACTED">) => void | Promise<void>;
  /** Called for every progress notification with the revision through which the stream is complete. */
  onProgress?: (revision: bigint) => void;
  /** Called when the stream was cancelled for falling behind (SLOW_CONSUMER), before resuming. */
  onSlowConsumer?: (error: ReasonError<"SLOW_CONSUMER">) => void;
  /** Called before each reconnect with the error that broke the stream. */
  onReconnect?: (error: StatekeeperError, attempt: number, resumeRevision: bigint) => void;
  /** Ends the watch (like `cancel()`). */
  signal?: AbortSignal;
}

/**
 * The oldest revision still available, from a REVISION_COMPACTED error's
 * metadata["oldest_revision"] (undefined if absent).
 */
export function oldestRevision(error: StatekeeperError): bigint | undefined {
  const value = error.errorMetadata["oldest_revision"];
  return value ? BigInt(value) : undefined;
}

/**
 * Lists the keys of `board` matching `selector` at one revision (all pages),
 * and the start revision of a Watch that continues from the listing: the
 * re-list half of re-list-then-watch.
 */
export async function relist(sk: StatekeeperClient, board: string, selector: Selector = {}): Promise<Relisting> {
  // A compaction between two pages invalidates the listing's revision: start again (bounded).
  for (let attempt = 1; ; attempt++) {
    try {
      return await listAll(sk, board, selector);
    } catch (error) {
      if (attempt >= 5 || !(error instanceof StatekeeperError) || error.reason !== "REVISION_COMPACTED") throw error;
    }
  }
}

async function listAll(sk: StatekeeperClient, board: string, selector: Selector): Promise<Relisting> {
  const entries: BlackboardEntry[] = [];
  let pageToken = "";
  let revision = 0n;
  for (let page = 0; page < 1_000_000; page++) {
    const res = await sk.api.blackboard.listEntries(
      ListEntriesRequest.fromPartial({ board, selector: selectorOf(selector), pageToken }),
    );
    if (page === 0) revision = res.header?.revision ?? 0n;
    entries.push(...res.entries);
    pageToken = res.nextPageToken;
    if (!pageToken) break;
  }
  return { entries, revision, startRevision: revision + 1n };
}

function selectorOf(selector: Selector): WatchRequest["selector"] {
  if (selector.prefix !== undefined && selector.pattern !== undefined) {
    throw new Error("pass prefix or pattern, not both");
  }
  if (selector.prefix !== undefined) return { $case: "prefix", prefix: selector.prefix };
  if (selector.pattern !== undefined) return { $case: "pattern", pattern: selector.pattern };
  return undefined;
}

function resumable(error: StatekeeperError): boolean {
  return error.code === status.UNAVAILABLE || error.reason === "SLOW_CONSUMER";
}

/**
 * A resuming blackboard watch. Iterate it for events (`for await (const event
 * of watch)`), in revision order, each exactly once across reconnects; or
 * iterate `watch.responses()` for every stream message (started, snapshot,
 * progress, events). Breaking out of the loop, `cancel()` or the `signal`
 * ends it. One iteration at a time.
 */
export class Watch implements AsyncIterable<BlackboardEvent> {
  /** Streams opened so far (1 + reconnects). */
  streamsOpened = 0;
  /** The revision of the last progress notification (0 before the first). */
  progressRevision = 0n;
  private resume: bigint;
  private snapshotPending: boolean;
  private call: ClientReadableStream<WatchResponse> | undefined;
  private cancelled = false;
  private readonly deadline: number | undefined;
  private readonly policy: RetryPolicy;
  private readonly selector: WatchRequest["selector"];

  constructor(
    private readonly sk: StatekeeperClient,
    readonly board: string,
    private readonly options: WatchOptions = {},
  ) {
    const start = options.startRevision ?? 0n;
    if (start < 0n) throw new RangeError("startRevision must be >= 0");
    this.selector = selectorOf(options);
    this.resume = start;
    this.snapshotPending = options.initialSnapshot ?? false;
    this.deadline = options.timeoutMs === undefined ? undefined : Date.now() + options.timeoutMs;
    this.policy = retryPolicy({ maxAttempts: Number.POSITIVE_INFINITY, ...options.reconnect });
    options.signal?.addEventListener("abort", () => this.cancel(), { once: true });
    if (options.signal?.aborted) this.cancelled = true;
  }

  /** The revision a new Watch would start at to continue this one (its `startRevision`). */
  get resumeRevision(): bigint {
    return this.resume;
  }

  private request(): WatchRequest {
    const interval = this.options.progressNotifyIntervalMs;
    return WatchRequest.fromPartial({
      board: this.board,
      selector: this.selector,
      startRevision: this.resume,
      initialSnapshot: this.snapshotPending,
      prevValue: this.options.prevValue ?? false,
      eventTypes: this.options.eventTypes ?? [],
      progressNotifyInterval:
        interval === undefined
          ? undefined
          : { seconds: BigInt(Math.floor(interval / 1000)), nanos: Math.round((interval % 1000) * 1e6) },
    });
  }

  private observe(response: WatchResponse): void {
    const kind = response.kind?.$case;
    if (kind === "snapshotEnd") this.snapshotPending = false;
    if (this.snapshotPending) {
      // A snapshot cannot be resumed half way: a broken stream starts again
      // with a new snapshot from the original start revision.
      return;
    }
    if (response.resumeRevision > 0n) this.resume = response.resumeRevision;
    else if (response.kind?.$case === "started" && response.kind.started.startRevision > 0n) {
      this.resume = response.kind.started.startRevision;
    }
    if (response.kind?.$case === "progress") {
      this.progressRevision = response.kind.progress.revision;
      this.options.onProgress?.(this.progressRevision);
    }
  }

  /** Every message of the stream(s), reconnecting as needed. */
  async *responses(): AsyncGenerator<WatchResponse, void, undefined> {
    let failures = 0;
    // When the current run of failures began (undefined while a stream works):
    // the give-up time counts from the break, not from the last message.
    let brokenSince: number | undefined;
    const giveUpAfterMs = this.options.giveUpAfterMs ?? 60_000;
    try {
      while (!this.cancelled) {
        const call = this.sk.blackboard.watch(
          this.request(),
          this.deadline === undefined ? {} : { deadline: new Date(this.deadline) },
        );
        this.call = call;
        this.streamsOpened++;
        let failure: StatekeeperError | undefined;
        try {
          for await (const response of call as AsyncIterable<WatchResponse>) {
            failures = 0;
            brokenSince = undefined;
            this.observe(response);
            yield response;
            if (this.cancelled) return;
          }
        } catch (error) {
          if (this.cancelled) return;
          failure = toStatekeeperError(error, METHOD);
          if (failure.code === status.DEADLINE_EXCEEDED && this.deadline !== undefined && Date.now() >= this.deadline) {
            return; // the watch's own deadline: the iteration ends
          }
          if (failure.reason === "REVISION_COMPACTED" && this.options.onCompacted) {
            let listing: Relisting | undefined;
            try {
              listing = await relist(this.sk, this.board, this.options);
            } catch (error) {
              // A transient failure of the re-list (the server away after the
              // unary retries, or compacting again) is a broken stream: back
              // off and try again (the next stream fails compacted again).
              if (!(error instanceof StatekeeperError) || !(resumable(error) || error.reason === "REVISION_COMPACTED")) {
                throw error;
              }
              failure = error;
            }
            if (listing !== undefined) {
              await this.options.onCompacted(listing, failure as ReasonError<"REVISION_COMPACTED">);
              this.resume = listing.startRevision;
              this.snapshotPending = false;
              failures = 0;
              brokenSince = undefined;
              continue;
            }
          } else {
            if (failure.reason === "SLOW_CONSUMER") {
              this.options.onSlowConsumer?.(failure as ReasonError<"SLOW_CONSUMER">);
              if (this.options.resumeOnSlowConsumer === false) throw failure;
            }
            if (!resumable(failure)) throw failure;
          }
        } finally {
          this.call = undefined;
          call.cancel();
        }
        if (this.cancelled) return;
        failures++;
        brokenSince ??= Date.now();
        const pause = backoffMs(this.policy, failures);
        if (failures >= this.policy.maxAttempts || Date.now() + pause - brokenSince > giveUpAfterMs) {
          throw failure ?? new StatekeeperError(status.UNAVAILABLE, "Watch stream kept ending", { method: METHOD });
        }
        if (this.deadline !== undefined && this.deadline - Date.now() <= pause) return;
        this.options.onReconnect?.(
          failure ?? new StatekeeperError(status.UNAVAILABLE, "Watch stream ended", { method: METHOD }),
          failures,
          this.resume,
        );
        try {
          await sleep(pause, this.options.signal);
        } catch {
          return; // aborted
        }
      }
    } finally {
      this.cancelled = true;
    }
  }

  /** The events, in revision order. */
  async *events(): AsyncGenerator<BlackboardEvent, void, undefined> {
    for await (const response of this.responses()) {
      if (response.kind?.$case !== "events") continue;
      const events = response.kind.events.events;
      const after = this.resume; // response.resumeRevision
      for (let i = 0; i < events.length; i++) {
        // Where a later Watch continues if the caller stops while holding
        // events[i]: after its revision when that revision is complete, else
        // at it (the rest of that transaction is not lost, its start repeats).
        const next = events[i + 1];
        this.resume =
          next === undefined ? after : next.revision !== events[i].revision ? events[i].revision + 1n : events[i].revision;
        yield events[i];
      }
      this.resume = after;
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<BlackboardEvent> {
    return this.events();
  }

  /** Ends the watch; an iteration in progress ends (without an error). */
  cancel(): void {
    this.cancelled = true;
    this.call?.cancel();
  }
}
