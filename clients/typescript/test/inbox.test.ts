// The inbox consumer against a real server that is killed (SIGKILL) and
// started again in the middle: every message is handled and acknowledged, a
// nacked one is redelivered, a slow handler keeps its delivery by extending
// the visibility timeout.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";

import { message, nack, StatekeeperClient } from "../dist/index";
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

async function send(to: string, type: string, body: string): Promise<string> {
  const res = await sk.api.messages.sendMessage(
    message.SendMessageRequest.fromPartial({
      fromAgent: "ts-test",
      toAgent: to,
      type,
      payload: { contentType: "text/plain", data: Buffer.from(body) },
    }),
  );
  return res.messageId;
}

test("the inbox consumer handles and acks every message across a server restart", async () => {
  const inbox = `ts-inbox-${Date.now()}`;
  const visibilityTimeoutMs = scaled(2_000);
  const sent = new Set<string>();
  for (let i = 0; i < 12; i++) sent.add(await send(inbox, "work", `m${i}`));
  const nackOnce = await send(inbox, "nack-once", "again");
  sent.add(nackOnce);
  let slow = "";

  const handled = new Map<string, number[]>(); // message id -> delivery counts that ended in an ack
  const deliveries = new Map<string, number[]>(); // message id -> every delivery count seen
  const errors: unknown[] = [];
  const consumer = sk.consume(
    inbox,
    async (delivery) => {
      const id = delivery.message!.messageId;
      deliveries.set(id, [...(deliveries.get(id) ?? []), delivery.deliveryCount]);
      if (delivery.message!.type === "nack-once" && delivery.deliveryCount === 1) return nack({ delayMs: 0 });
      // The slow one outlives its visibility timeout: only the extensions keep it.
      await delay(delivery.message!.type === "slow" ? 1.5 * visibilityTimeoutMs : 100);
      handled.set(id, [...(handled.get(id) ?? []), delivery.deliveryCount]);
      return undefined;
    },
    {
      maxInFlight: 4,
      visibilityTimeoutMs,
      extendEveryMs: visibilityTimeoutMs / 4,
      reconnect: { initialBackoffMs: 50, maxBackoffMs: 1_000 },
      giveUpAfterMs: scaled(180_000),
      settleTimeoutMs: scaled(120_000),
      onError: (error) => errors.push(error),
    },
  );
  try {
    await waitFor("a few handled messages", () => handled.size >= 4, scaled(60_000));
    await server.kill();
    await delay(200);
    await server.start();
    // Messages sent after the restart reach the same consumer.
    for (let i = 0; i < 6; i++) sent.add(await send(inbox, "work", `after${i}`));
    // (After the restart, so that the server stays up while its visibility is extended.)
    slow = await send(inbox, "slow", "slow");
    sent.add(slow);
    await waitFor("every message handled", () => [...sent].every((id) => handled.has(id)), scaled(120_000));
  } finally {
    await consumer.stop();
  }
  await consumer.done;

  assert.equal(server.starts, 2);
  assert.ok(consumer.stats.streamsOpened >= 2, `${consumer.stats.streamsOpened} streams`);
  for (const id of sent) assert.ok(handled.has(id), `message ${id} never handled`);
  assert.deepEqual(deliveries.get(nackOnce)?.slice(0, 2), [1, 2], "the nacked message is redelivered");
  assert.ok(consumer.stats.nacked >= 1);
  assert.deepEqual(deliveries.get(slow), [1], "the slow message was redelivered while its handler ran");
  assert.ok(consumer.stats.extended >= 1, `${consumer.stats.extended} extensions`);
  assert.ok(consumer.stats.acked >= sent.size, `${consumer.stats.acked} acks for ${sent.size} messages`);

  // Nothing is left: no delivery comes back after its visibility timeout.
  const left = await sk.api.messages.pullMessages(
    message.PullMessagesRequest.fromPartial({
      agentId: inbox,
      maxMessages: 10,
      waitTimeout: { seconds: BigInt(Math.ceil(visibilityTimeoutMs / 1000) + 1), nanos: 0 },
    }),
    { timeoutMs: 4 * visibilityTimeoutMs + scaled(10_000) },
  );
  assert.deepEqual(
    left.deliveries.map((d) => d.message?.messageId),
    [],
  );
});

test("a handler that throws gets its delivery back with a backoff, then succeeds", async () => {
  const inbox = `ts-inbox-retry-${Date.now()}`;
  const id = await send(inbox, "flaky", "x");
  const counts: number[] = [];
  const errors: unknown[] = [];
  const consumer = sk.consume(
    inbox,
    (delivery) => {
      counts.push(delivery.deliveryCount);
      if (delivery.deliveryCount < 3) throw new Error(`attempt ${delivery.deliveryCount} fails`);
    },
    { nackDelayMs: 100, onError: (error) => errors.push(error) },
  );
  try {
    await waitFor("three deliveries", () => counts.length >= 3 && consumer.stats.acked >= 1, scaled(30_000));
  } finally {
    await consumer.stop();
  }
  assert.deepEqual(counts, [1, 2, 3]);
  assert.equal(consumer.stats.nacked, 2);
  assert.equal(consumer.stats.acked, 1);
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ["attempt 1 fails", "attempt 2 fails"],
  );
  assert.ok(id);
});
