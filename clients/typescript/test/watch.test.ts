// The resuming Watch against a real server that is killed (SIGKILL) and
// started again on the same port and data directory while a writer puts keys:
// every revision is seen once, in order, and none is missed.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import {
  blackboard,
  oldestRevision,
  ReasonErrors,
  Relisting,
  StatekeeperClient,
  StatekeeperError,
} from "../dist/index";
import { delay, scaled, ServerProcess, waitFor } from "./server";
import { watchUnderFailures } from "./watch-scenario";

const RESTARTS = 3;

let server: ServerProcess;
let sk: StatekeeperClient;

before(async () => {
  server = await ServerProcess.start();
  sk = server.connect({ timeoutMs: scaled(30_000) });
});

after(async () => {
  sk?.close();
  await server?.dispose();
});

function put(board: string, key: string): Promise<blackboard.PutEntryResponse> {
  return sk.api.blackboard.putEntry(
    blackboard.PutEntryRequest.fromPartial({ board, key, value: { kind: { $case: "json", json: { key } } } }),
    { timeoutMs: scaled(10_000) },
  );
}

test("the Watch resumes across server kills and restarts without a gap or a repeat", async () => {
  const result = await watchUnderFailures(sk, RESTARTS, async () => {
    await server.kill();
    await delay(200);
    await server.start();
  });
  assert.equal(server.starts, RESTARTS + 1);
  assert.ok(result.streamsOpened >= RESTARTS + 1, `${result.streamsOpened} streams opened`);
  assert.ok(result.reconnects.length >= RESTARTS);
  assert.ok(
    result.reconnects.every((error) => error.code === 14 /* UNAVAILABLE */),
    result.reconnects.join("; "),
  );
});

test("a compacted start revision: re-list, then watch from the listing", async () => {
  const board = `ts-compact-${Date.now()}`;
  const a = await put(board, "p/a");
  await put(board, "p/b");
  const c = await put(board, "p/c");
  await put(board, "other/x");
  await sk.api.blackboard.compactBlackboard(
    blackboard.CompactBlackboardRequest.fromPartial({ revision: c.header!.revision }),
  );

  // Without onCompacted: the typed error, with the oldest revision.
  const plain = sk.watch(board, { prefix: "p/", startRevision: a.header!.revision, timeoutMs: scaled(20_000) });
  await assert.rejects(
    async () => {
      for await (const _ of plain) assert.fail("an event from a compacted revision");
    },
    (error: unknown) => {
      assert.ok(error instanceof ReasonErrors.REVISION_COMPACTED, `${error}`);
      assert.equal(error.code, 11 /* OUT_OF_RANGE */);
      assert.equal(error.reason, "REVISION_COMPACTED");
      assert.ok((oldestRevision(error) ?? 0n) >= c.header!.revision);
      return true;
    },
  );

  // With onCompacted: the listing, then the events after it.
  const listings: Relisting[] = [];
  const watch = sk.watch(board, {
    prefix: "p/",
    startRevision: a.header!.revision,
    timeoutMs: scaled(30_000),
    onCompacted: (listing) => {
      listings.push(listing);
    },
  });
  const events: string[] = [];
  const reader = (async () => {
    for await (const event of watch) {
      events.push(event.entry?.key ?? "");
      if (event.entry?.key === "p/d") break;
    }
  })();
  await waitFor("the re-listing", () => listings.length === 1, scaled(20_000));
  const d = await put(board, "p/d");
  await reader;
  assert.deepEqual(
    listings[0].entries.map((e) => e.key),
    ["p/a", "p/b", "p/c"],
  );
  assert.ok(listings[0].revision >= c.header!.revision && listings[0].revision < d.header!.revision);
  assert.equal(listings[0].startRevision, listings[0].revision + 1n);
  assert.deepEqual(events, ["p/d"]);
  assert.equal(watch.resumeRevision, d.header!.revision + 1n);
});

test("progress notifications are exposed on a quiet board", async () => {
  const board = `ts-progress-${Date.now()}`;
  const res = await put(board, "q/a");
  const progress: bigint[] = [];
  const watch = sk.watch(board, {
    prefix: "q/",
    startRevision: res.header!.revision + 1n,
    progressNotifyIntervalMs: 100,
    timeoutMs: scaled(30_000),
    onProgress: (revision) => progress.push(revision),
  });
  const kinds: string[] = [];
  for await (const response of watch.responses()) {
    kinds.push(response.kind?.$case ?? "");
    if (progress.length >= 2) break;
  }
  assert.equal(kinds[0], "started");
  assert.ok(kinds.includes("progress"));
  assert.ok(progress.every((revision) => revision >= res.header!.revision), progress.join(","));
  assert.equal(watch.progressRevision, progress[progress.length - 1]);
  assert.equal(watch.resumeRevision, watch.progressRevision + 1n);
});

test("SLOW_CONSUMER: a watcher that stops reading is cancelled by the server, surfaced, and resumed without a gap", async () => {
  const slowServer = await ServerProcess.start(["--limit", "blackboard.watch_buffer_responses=2"]);
  const client = slowServer.connect({ timeoutMs: scaled(30_000) });
  try {
    const board = `ts-slow-${Date.now()}`;
    const pad = "x".repeat(16_000);
    const putOne = (key: string) =>
      client.api.blackboard.putEntry(
        blackboard.PutEntryRequest.fromPartial({ board, key, value: { kind: { $case: "json", json: { pad } } } }),
      );
    const first = await putOne("s/0000");
    const slow: StatekeeperError[] = [];
    const watch = client.watch(board, {
      prefix: "s/",
      startRevision: first.header!.revision,
      timeoutMs: scaled(120_000),
      onSlowConsumer: (error) => slow.push(error),
    });
    const events = watch[Symbol.asyncIterator]();
    const seen: bigint[] = [];
    const head = await events.next();
    assert.ok(!head.done);
    seen.push(head.value.revision);
    // Not reading while the writer puts ~6 MB: far more than the HTTP/2 window
    // and the socket buffers hold, so the server's buffer of 2 responses overflows.
    const revisions = [first.header!.revision];
    for (let batch = 0; batch < 16; batch++) {
      const puts = await Promise.all(
        Array.from({ length: 25 }, (_, i) => putOne(`s/${String(batch * 25 + i + 1).padStart(4, "0")}`)),
      );
      revisions.push(...puts.map((p) => p.header!.revision));
    }
    const last = revisions.reduce((a, b) => (a > b ? a : b));
    for (;;) {
      const next = await events.next();
      assert.ok(!next.done, "the watch ended early");
      seen.push(next.value.revision);
      if (next.value.revision >= last) break;
    }
    await events.return?.(undefined);
    assert.ok(slow.length >= 1, "no SLOW_CONSUMER was surfaced");
    assert.ok(slow.every((e) => e instanceof ReasonErrors.SLOW_CONSUMER && e.code === 8 /* RESOURCE_EXHAUSTED */));
    assert.ok(watch.streamsOpened >= 2);
    assert.deepEqual(
      seen,
      [...revisions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  } finally {
    client.close();
    await slowServer.dispose();
  }
});
