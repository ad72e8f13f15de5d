// Failover between two replicas of the production tier (PostgreSQL + Redis):
// the client dials both (pick_first), the replica it uses is killed, and the
// Watch resumes on the other one, three times, with the same guarantees.
// Needs STATEKEEPER_TEST_POSTGRES_DSN and STATEKEEPER_TEST_REDIS_URL
// (`scripts/services.sh start DIR && . DIR/env`); skipped without them.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";

import { StatekeeperClient } from "../dist/index";
import { delay, scaled, ServerProcess } from "./server";
import { watchUnderFailures } from "./watch-scenario";

const DSN = process.env.STATEKEEPER_TEST_POSTGRES_DSN;
const REDIS = process.env.STATEKEEPER_TEST_REDIS_URL;

test(
  "the Watch resumes on the other replica when the one it uses is killed",
  { skip: DSN && REDIS ? false : "STATEKEEPER_TEST_POSTGRES_DSN / STATEKEEPER_TEST_REDIS_URL not set" },
  async () => {
    // One tenant (API key) and one Redis prefix for both replicas.
    const id = randomBytes(4).toString("hex");
    const apiKey = `ts-replicas-${id}`;
    const args = [
      "--postgres-dsn", DSN!,
      "--redis-url", REDIS!,
      "--redis-key-prefix", `ts-replicas-${id}:`,
      "--migrate-on-start",
      "--api-key", `${apiKey}=ts-replicas-${id}`,
    ];
    const replicas: ServerProcess[] = [];
    let sk: StatekeeperClient | undefined;
    try {
      replicas.push(await ServerProcess.start(args, { apiKey }));
      replicas.push(await ServerProcess.start(args, { apiKey }));
      // Both addresses; grpc-js pick_first uses one and moves to the other when it fails.
      sk = new StatekeeperClient(`ipv4:${replicas[0].address},${replicas[1].address}`, {
        apiKey,
        timeoutMs: scaled(30_000),
      });
      let killed = 0;
      const result = await watchUnderFailures(sk, 3, async () => {
        // Kill the replica that serves the client (whichever answers), keep the
        // other up, then bring the killed one back for the next round.
        for (const replica of replicas) {
          if (killed % 2 === replicas.indexOf(replica)) {
            await replica.kill();
            await delay(scaled(1_000));
            await replica.start();
          }
        }
        killed++;
      });
      assert.ok(result.reconnects.length >= 3, `${result.reconnects.length} failovers`);
      assert.ok(replicas.every((r) => r.starts >= 2));
    } finally {
      sk?.close();
      for (const replica of replicas) await replica.dispose();
    }
  },
);
