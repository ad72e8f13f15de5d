// A tiny example agent: it keeps its conversation in a statekeeper session,
// asks for a context window that fits its model, answers (a canned echo
// instead of a model call) and announces progress on the team blackboard.
//
//   STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev node dist/examples/agent.js
import { isUnimplemented, StatekeeperClient } from "../client";
import { PutEntryRequest } from "../gen/statekeeper/v1/blackboard";
import {
  AppendMessagesRequest,
  CreateSessionRequest,
  GetContextWindowRequest,
  Role,
} from "../gen/statekeeper/v1/session";

async function main(): Promise<void> {
  const sk = new StatekeeperClient(process.env.STATEKEEPER_ADDR || "127.0.0.1:50051", {
    apiKey: process.env.STATEKEEPER_API_KEY,
    timeoutMs: 10_000,
  });
  try {
    const { session } = await sk.api.sessions.createSession(
      CreateSessionRequest.fromPartial({ session: { userId: "alice", agentId: "example-agent-ts" } }),
    );
    const sessionId = session!.sessionId;
    for (const question of ["Hello!", "What can you remember?"]) {
      await sk.api.sessions.appendMessages(
        AppendMessagesRequest.fromPartial({ sessionId, messages: [{ role: Role.ROLE_USER, content: question }] }),
      );
      const window = await sk.api.sessions.getContextWindow(
        GetContextWindowRequest.fromPartial({
          sessionId,
          tokenBudget: 8192,
          reservedOutputTokens: 1024,
          systemPrompt: "You are a helpful agent.",
        }),
      );
      // A real agent sends window.messages to its model here.
      const answer = `(echo) ${question} [${window.messages.length} messages, ${window.accounting?.totalTokens} tokens in context]`;
      await sk.api.sessions.appendMessages(
        AppendMessagesRequest.fromPartial({ sessionId, messages: [{ role: Role.ROLE_ASSISTANT, content: answer }] }),
      );
      console.log(`agent: ${answer}`);
    }
    try {
      await sk.api.blackboard.putEntry(
        PutEntryRequest.fromPartial({
          board: "team",
          key: "agents/example-agent-ts",
          writerAgentId: "example-agent-ts",
          value: { kind: { $case: "json", json: { session: sessionId, state: "done" } } },
        }),
      );
      console.log("announced on the blackboard");
    } catch (error) {
      if (!isUnimplemented(error)) throw error;
      console.log(`blackboard not available on this server yet: ${(error as Error).message}`);
    }
  } finally {
    sk.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
