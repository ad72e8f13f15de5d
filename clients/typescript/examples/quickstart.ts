import { blackboard, ReasonErrors, StatekeeperClient } from "@statekeeper/client";

const sk = new StatekeeperClient("127.0.0.1:50051", { apiKey: process.env.STATEKEEPER_API_KEY });
const claim = blackboard.PutEntryRequest.fromPartial({
  board: "team-1", key: "plan/step-1", expectedModRevision: 0n, // create only if absent
  value: { kind: { $case: "json", json: { owner: "agent-7" } } },
});
await sk.api.blackboard.putEntry(claim).catch((err) => {
  if (!(err instanceof ReasonErrors.REVISION_MISMATCH)) throw err; // someone else claimed it
});
sk.consume("agent-7", async (delivery) => console.log("task", delivery.message?.type)); // return: ack, throw: nack
for await (const event of sk.watch("team-1", { prefix: "plan/" })) { // resumes after restarts
  console.log(event.revision, event.entry?.key);
}
