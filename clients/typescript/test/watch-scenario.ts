// The Watch-under-failures scenario shared by the restart and the replica
// failover tests: a writer puts new keys while a resuming Watch reads them
// and `disrupt` breaks the server side `cycles` times; then the checks:
// ordered, unique, every acknowledged put seen, and exactly what one
// uninterrupted Watch of the history delivers.
import assert from "node:assert/strict";

import { blackboard, isStatekeeperError, StatekeeperClient, StatekeeperError } from "../dist/index";
import { delay, scaled, waitFor } from "./server";

export interface ScenarioResult {
  streamsOpened: number;
  reconnects: StatekeeperError[];
}

function put(sk: StatekeeperClient, board: string, key: string): Promise<blackboard.PutEntryResponse> {
  return sk.api.blackboard.putEntry(
    blackboard.PutEntryRequest.fromPartial({ board, key, value: { kind: { $case: "json", json: { key } } } }),
    { timeoutMs: scaled(10_000) },
  );
}

/** The events of `board` from `start` through revision `last`, read by one plain Watch. */
async function replay(sk: StatekeeperClient, board: string, prefix: string, start: bigint, last: bigint): Promise<string[]> {
  const seen: string[] = [];
  const watch = sk.watch(board, { prefix, startRevision: start, timeoutMs: scaled(60_000) });
  for await (const event of watch) {
    seen.push(`${event.revision}:${event.entry?.key}`);
    if (event.revision >= last) break;
  }
  return seen;
}

export async function watchUnderFailures(
  sk: StatekeeperClient,
  cycles: number,
  disrupt: (cycle: number) => Promise<void>,
): Promise<ScenarioResult> {
  const board = `ts-watch-${Date.now()}-${Math.random().toString(16).slice(2, 8)}`;
  const first = await put(sk, board, "k/000000");
  const start = first.header!.revision + 1n;

  const seen: { revision: bigint; key: string }[] = [];
  const reconnects: StatekeeperError[] = [];
  const watch = sk.watch(board, {
    prefix: "k/",
    startRevision: start,
    reconnect: { initialBackoffMs: 50, maxBackoffMs: 1_000 },
    giveUpAfterMs: scaled(180_000),
    onReconnect: (error) => reconnects.push(error),
  });
  let lastRevision = -1n;
  let watchError: unknown;
  const reader = (async () => {
    try {
      for await (const event of watch) {
        seen.push({ revision: event.revision, key: event.entry?.key ?? "" });
        if (lastRevision >= 0n && event.revision >= lastRevision) break;
      }
    } catch (error) {
      watchError = error;
    }
  })();

  // The writer: one new key at a time; a put that fails while the server is
  // down is not retried (no idempotency key) and may or may not have been applied.
  const acknowledged: bigint[] = [];
  let writing = true;
  let n = 1;
  const writer = (async () => {
    while (writing) {
      try {
        const res = await put(sk, board, `k/${String(n++).padStart(6, "0")}`);
        acknowledged.push(res.header!.revision);
      } catch (error) {
        assert.ok(isStatekeeperError(error), `put failed with ${error}`);
        await delay(50);
      }
      await delay(10);
    }
  })();

  try {
    for (let cycle = 1; cycle <= cycles; cycle++) {
      const before = seen.length;
      await waitFor(`events before disruption ${cycle}`, () => seen.length >= before + 5 || watchError !== undefined, scaled(60_000));
      assert.equal(watchError, undefined);
      await disrupt(cycle);
    }
    const before = seen.length;
    await waitFor("events after the last disruption", () => seen.length >= before + 5 || watchError !== undefined, scaled(60_000));
  } finally {
    writing = false;
    await writer;
  }
  const final = await put(sk, board, "k/final");
  lastRevision = final.header!.revision;
  await waitFor("the final put", () => seen.some((e) => e.revision >= lastRevision) || watchError !== undefined, scaled(60_000));
  watch.cancel();
  await reader;
  assert.equal(watchError, undefined, `the watch failed: ${watchError}`);

  // Ordered and unique.
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i].revision > seen[i - 1].revision, `revision ${seen[i].revision} after ${seen[i - 1].revision}`);
  }
  // Every acknowledged put was seen.
  const revisions = new Set(seen.map((e) => e.revision));
  for (const revision of [...acknowledged, lastRevision]) assert.ok(revisions.has(revision), `revision ${revision} missed`);
  // Nothing missed: exactly what one uninterrupted Watch of the history delivers.
  const history = await replay(sk, board, "k/", start, lastRevision);
  assert.deepEqual(
    seen.map((e) => `${e.revision}:${e.key}`),
    history,
  );
  assert.equal(watch.resumeRevision, lastRevision + 1n);
  return { streamsOpened: watch.streamsOpened, reconnects };
}
