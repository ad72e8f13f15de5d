// Regressions of the client review (issue 17), against a real server reached
// through a relay that cuts connections while the server keeps running:
// - a Watch on a quiet board, idle for longer than giveUpAfterMs, reconnects
//   after a break (the give-up time counts from the break);
// - an idle inbox consumer survives two breaks further apart than giveUpAfterMs;
// - a re-list after REVISION_COMPACTED that fails UNAVAILABLE is retried like
//   a broken stream instead of ending the watch;
// - stop() aborts the signal handlers receive, so a long handler can end.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { blackboard, message, Relisting, StatekeeperClient } from "../dist/index";
import { Relay } from "./relay";
import { delay, scaled, ServerProcess, waitFor } from "./server";

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

async function send(to: string, body: string): Promise<string> {
  const res = await sk.api.messages.sendMessage(
    message.SendMessageRequest.fromPartial({
      fromAgent: "ts-review",
      toAgent: to,
      type: "job",
      payload: { contentType: "text/plain", data: Buffer.from(body) },
    }),
  );
  return res.messageId;
}

async function withRelay(body: (relay: Relay, client: StatekeeperClient) => Promise<void>, retry = true): Promise<void> {
  const relay = await Relay.start(server.address);
  const client = new StatekeeperClient(relay.address, { apiKey: server.apiKey, timeoutMs: scaled(30_000), retry });
  try {
    await body(relay, client);
  } finally {
    client.close();
    await relay.close();
  }
}

const QUICK = { initialBackoffMs: 50, maxBackoffMs: 300 };

test("a Watch idle on a quiet board for longer than giveUpAfterMs reconnects after a break", async () => {
  await withRelay(async (relay, client) => {
    const board = `ts-quiet-${Date.now()}`;
    const giveUpAfterMs = 2_000;
    const watch = client.watch(board, { giveUpAfterMs, reconnect: QUICK, timeoutMs: scaled(60_000) });
    const keys: string[] = [];
    let failure: unknown;
    const reader = (async () => {
      try {
        for await (const event of watch) {
          keys.push(event.entry?.key ?? "");
          if (keys.length === 1) break;
        }
      } catch (error) {
        failure = error;
      }
    })();
    await waitFor("the first stream", () => watch.streamsOpened === 1, scaled(20_000));
    await delay(giveUpAfterMs + 1_500); // quiet: no event, no progress notification
    relay.cut();
    await waitFor("the second stream", () => watch.streamsOpened >= 2 || failure !== undefined, scaled(20_000));
    assert.equal(failure, undefined, `the watch gave up at the first break: ${failure}`);
    await delay(500); // the new stream is open before the put (start revision 0: from now on)
    await put(board, "after-break");
    await reader;
    assert.equal(failure, undefined, `${failure}`);
    assert.deepEqual(keys, ["after-break"]);
  });
});

test("an idle inbox consumer survives two breaks further apart than giveUpAfterMs", async () => {
  await withRelay(async (relay, client) => {
    const inbox = `ts-idle-${Date.now()}`;
    const giveUpAfterMs = 2_000;
    const handled: string[] = [];
    const consumer = client.consume(inbox, (d) => void handled.push(d.message!.messageId), {
      giveUpAfterMs,
      reconnect: QUICK,
    });
    let failure: unknown;
    consumer.done.catch((error) => (failure = error));
    try {
      await waitFor("the first stream", () => consumer.stats.streamsOpened === 1, scaled(20_000));
      await delay(500);
      relay.cut(); // break 1: reconnects at once
      await waitFor("the second stream", () => consumer.stats.streamsOpened >= 2 || failure !== undefined, scaled(20_000));
      await delay(giveUpAfterMs + 1_500); // idle: nothing comes on the stream
      relay.cut();
      await waitFor("the third stream", () => consumer.stats.streamsOpened >= 3 || failure !== undefined, scaled(20_000));
      assert.equal(failure, undefined, `the consumer gave up after the second break: ${failure}`);
      const id = await send(inbox, "after-two-breaks");
      await waitFor("the message handled", () => handled.includes(id) || failure !== undefined, scaled(30_000));
      assert.equal(failure, undefined, `${failure}`);
      await waitFor("the ack", () => consumer.stats.acked === 1, scaled(30_000));
    } finally {
      await consumer.stop();
    }
  });
});

test("a re-list that fails UNAVAILABLE is retried like a broken stream", async () => {
  // Unary calls not retried by the client: the re-list sees the UNAVAILABLE itself.
  await withRelay(async (relay, client) => {
    const board = `ts-relist-${Date.now()}`;
    const a = await put(board, "p/a");
    const c = await put(board, "p/c");
    await sk.api.blackboard.compactBlackboard(
      blackboard.CompactBlackboardRequest.fromPartial({ revision: c.header!.revision }),
    );
    await client.api.blackboard.getEntry(blackboard.GetEntryRequest.fromPartial({ board, key: "p/a" })); // connected
    const listings: Relisting[] = [];
    const watch = client.watch(board, {
      prefix: "p/",
      startRevision: a.header!.revision,
      reconnect: QUICK,
      timeoutMs: scaled(60_000),
      onCompacted: (listing) => void listings.push(listing),
    });
    // Call 1 is the Watch (answered REVISION_COMPACTED), call 2 the re-list's ListEntries: cut.
    relay.cutAtCall(2, 300);
    const keys: string[] = [];
    let failure: unknown;
    const reader = (async () => {
      try {
        for await (const event of watch) {
          keys.push(event.entry?.key ?? "");
          if (event.entry?.key === "p/d") break;
        }
      } catch (error) {
        failure = error;
      }
    })();
    await waitFor("the re-listing", () => listings.length === 1 || failure !== undefined, scaled(30_000));
    assert.equal(failure, undefined, `the failed re-list ended the watch: ${failure}`);
    assert.equal(relay.cuts, 1, "the re-list call was cut");
    assert.ok(watch.streamsOpened >= 2, `${watch.streamsOpened} streams`);
    assert.deepEqual(
      listings[0].entries.map((e) => e.key),
      ["p/a", "p/c"],
    );
    await put(board, "p/d");
    await reader;
    assert.equal(failure, undefined, `${failure}`);
    assert.deepEqual(keys, ["p/d"]);
  }, false);
});

test("stop() aborts the handlers' signal, so a handler waiting for it ends and is settled", async () => {
  const inbox = `ts-abort-${Date.now()}`;
  await send(inbox, "long");
  let started = false;
  let aborted = false;
  const consumer = sk.consume(inbox, async (_delivery, signal) => {
    started = true;
    await new Promise<void>((done) => signal?.addEventListener("abort", () => done(), { once: true }));
    aborted = true;
    throw new Error("stopped");
  });
  await waitFor("the handler running", () => started, scaled(20_000));
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    consumer.stop().then(() => true),
    new Promise<boolean>((done) => (timer = setTimeout(() => done(false), scaled(20_000)))),
  ]);
  clearTimeout(timer);
  assert.ok(stopped, "stop() did not resolve: the handler was never told to stop");
  assert.ok(aborted);
  assert.equal(consumer.stats.nacked, 1, "the aborted delivery is given back");
});
