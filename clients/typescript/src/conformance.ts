// The statekeeper conformance scenario, TypeScript edition (see clients/CONFORMANCE.md).
//
//   STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev node dist/conformance.js
//
// A step whose service answers UNIMPLEMENTED is skipped, unless the service is
// named in STATEKEEPER_REQUIRE (comma separated, or "all"). Exits 1 if a step failed.
import { randomBytes } from "node:crypto";

import { errorInfo, isUnimplemented, StatekeeperClient, tlsOptionsFromEnv } from "./client";
import { BlackboardEventType, PutEntryRequest, WatchRequest, WatchResponse } from "./gen/statekeeper/v1/blackboard";
import { GetCheckpointRequest, SaveCheckpointRequest } from "./gen/statekeeper/v1/checkpoint";
import {
  RecallRequest,
  RecordEpisodeRequest,
  RecordEpisodesRequest,
  RecordEpisodeStatus,
} from "./gen/statekeeper/v1/memory";
import {
  AckMessagesRequest,
  PullMessagesRequest,
  ReceiptStatus,
  SendMessageRequest,
} from "./gen/statekeeper/v1/message";
import {
  AppendMessagesRequest,
  CreateSessionRequest,
  GetContextWindowRequest,
  SessionMessage,
  Role,
} from "./gen/statekeeper/v1/session";

const LANGUAGE = "typescript";
const BUDGET = 4096;
const RESERVE = 256;
const STATE = Buffer.from('{"step":1,"plan":["fetch","summarize"]}');

class StepFailed extends Error {}

function check(condition: boolean, message: string): void {
  if (!condition) throw new StepFailed(message);
}

class Report {
  passed = 0;
  failed = 0;
  skipped = 0;
  readonly start = Date.now();

  constructor(readonly required: Set<string>) {}

  async run(step: string, service: string, body: () => Promise<string>): Promise<void> {
    const start = Date.now();
    try {
      const note = await body();
      this.passed++;
      console.log(`  [PASS] ${step} (${Date.now() - start} ms) ${note}`);
    } catch (error) {
      if (isUnimplemented(error) && !this.required.has(service) && !this.required.has("all")) {
        this.skipped++;
        const capability = errorInfo(error)?.metadata["capability"] ?? (error as Error).message;
        console.log(`  [SKIP] ${step}: ${service} service answers UNIMPLEMENTED (${capability})`);
      } else {
        this.failed++;
        console.log(`  [FAIL] ${step} (${Date.now() - start} ms): ${(error as Error).message ?? error}`);
      }
    }
  }

  finish(): number {
    console.log(
      `conformance ${LANGUAGE}: ${this.passed} passed, ${this.failed} failed, ${this.skipped} skipped (${Date.now() - this.start} ms)`,
    );
    return this.failed === 0 ? 0 : 1;
  }
}

function conversation(): SessionMessage[] {
  return [
    SessionMessage.fromPartial({ role: Role.ROLE_USER, content: "What is the weather in Paris?" }),
    SessionMessage.fromPartial({
      role: Role.ROLE_ASSISTANT,
      toolCalls: [{ id: "call-1", name: "get_weather", arguments: '{"city":"Paris"}' }],
    }),
    SessionMessage.fromPartial({ role: Role.ROLE_TOOL, toolCallId: "call-1", content: '{"temp_c":21}' }),
    SessionMessage.fromPartial({ role: Role.ROLE_ASSISTANT, content: "It is 21 degrees in Paris." }),
  ];
}

async function main(): Promise<number> {
  const addr = process.env.STATEKEEPER_ADDR || "127.0.0.1:50051";
  const apiKey = process.env.STATEKEEPER_API_KEY || "";
  const required = new Set(
    (process.env.STATEKEEPER_REQUIRE || "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s),
  );
  const report = new Report(required);
  const run = `${LANGUAGE}-${randomBytes(4).toString("hex")}`;
  const user = `conf-user-${run}`;
  const agent = `conf-agent-${run}`;
  const execution = `conf-exec-${run}`;
  const board = `conf-board-${run}`;
  const sender = `conf-sender-${run}`;
  const receiver = `conf-receiver-${run}`;
  let sessionId = "";

  console.log(`conformance ${LANGUAGE} against ${addr}`);
  const sk = new StatekeeperClient(addr, { apiKey, timeoutMs: 10_000, tls: tlsOptionsFromEnv() });
  try {
    await report.run("connect", "connect", async () => {
      await sk.waitForReady(10_000);
      return `addr=${addr}`;
    });
    if (report.failed) return report.finish();

    await report.run("health", "health", async () => {
      const s = await sk.healthCheck();
      check(s === "SERVING", `health status ${s}`);
      return s;
    });

    await report.run("create_session", "session", async () => {
      const { session } = await sk.api.sessions.createSession(
        CreateSessionRequest.fromPartial({ session: { userId: user, agentId: agent } }),
      );
      check(!!session?.sessionId, "no session_id");
      check(session?.version === 1n, `version ${session?.version}`);
      sessionId = session!.sessionId;
      return `session_id=${sessionId}`;
    });

    await report.run("append_messages", "session", async () => {
      check(sessionId !== "", "no session (create_session failed)");
      const res = await sk.api.sessions.appendMessages(
        AppendMessagesRequest.fromPartial({ sessionId, messages: conversation(), requestId: `append-${run}` }),
      );
      check(res.messages.length === 4, `${res.messages.length} messages appended`);
      check(res.session?.messageCount === 4n, `message_count ${res.session?.messageCount}`);
      return `version=${res.session?.version}`;
    });

    await report.run("context_window", "session", async () => {
      check(sessionId !== "", "no session (create_session failed)");
      const res = await sk.api.sessions.getContextWindow(
        GetContextWindowRequest.fromPartial({
          sessionId,
          tokenBudget: BUDGET,
          reservedOutputTokens: RESERVE,
          systemPrompt: "You are a conformance test agent.",
        }),
      );
      const total = res.accounting?.totalTokens ?? -1;
      check(total >= 0 && total <= BUDGET - RESERVE, `total_tokens ${total} > budget ${BUDGET} - reserve ${RESERVE}`);
      check(res.messages.length === 4, `${res.messages.length} messages in window`);
      return `total_tokens=${total} messages=${res.messages.length}`;
    });

    await report.run("episode_record_recall", "memory", async () => {
      const teal = RecordEpisodeRequest.fromPartial({
        userId: user,
        sessionId,
        userMessage: "My favourite colour is teal.",
        assistantResponse: "Noted: your favourite colour is teal.",
        importance: 0.9,
      });
      // One RecordEpisodes call: the episode, then the same interaction again.
      const rec = await sk.api.memory.recordEpisodes(
        RecordEpisodesRequest.fromPartial({ episodes: [teal, teal] }),
      );
      check(rec.results.length === 2, `${rec.results.length} results for 2 episodes`);
      const [first, second] = rec.results;
      check(
        first.status === RecordEpisodeStatus.RECORD_EPISODE_STATUS_CREATED,
        `first item: status ${first.status}`,
      );
      const id = first.result?.episode?.id ?? "";
      check(id !== "", "no episode id");
      check(
        second.status === RecordEpisodeStatus.RECORD_EPISODE_STATUS_DUPLICATE &&
          second.result?.duplicateOf === id,
        `second item: status ${second.status}, duplicate_of ${second.result?.duplicateOf}`,
      );
      const got = await sk.api.memory.recall(
        RecallRequest.fromPartial({
          userId: user,
          query: { $case: "queryText", queryText: "favourite colour" },
          topK: 5,
        }),
      );
      check(
        got.results.some((r) => r.episode?.id === id),
        `episode ${id} not recalled`,
      );
      return `episode_id=${id}`;
    });

    await report.run("checkpoint_save_get", "checkpoint", async () => {
      const saved = await sk.api.checkpoints.saveCheckpoint(
        SaveCheckpointRequest.fromPartial({
          checkpoint: {
            executionId: execution,
            step: 1,
            stepName: "plan",
            state: { contentType: "application/json", schemaVersion: 1, data: STATE },
          },
        }),
      );
      check(saved.checkpointId !== "", "no checkpoint_id");
      const got = await sk.api.checkpoints.getCheckpoint(GetCheckpointRequest.fromPartial({ executionId: execution }));
      check(got.checkpoint?.checkpointId === saved.checkpointId, `latest is ${got.checkpoint?.checkpointId}`);
      check(Buffer.from(got.checkpoint?.state?.data ?? []).equals(STATE), "state differs");
      return `checkpoint_id=${saved.checkpointId}`;
    });

    await report.run("blackboard_watch", "blackboard", async () => {
      const stream = sk.blackboard.watch(
        WatchRequest.fromPartial({ board, selector: { $case: "prefix", prefix: "plan/" } }),
        { deadline: new Date(Date.now() + 10_000) },
      );
      try {
        const responses = stream[Symbol.asyncIterator]() as AsyncIterator<WatchResponse>;
        const first = await responses.next();
        check(!first.done && first.value.kind?.$case === "started", "first response is not `started`");
        const put = await sk.api.blackboard.putEntry(
          PutEntryRequest.fromPartial({
            board,
            key: "plan/step-3",
            writerAgentId: agent,
            value: { kind: { $case: "json", json: { status: "done" } } },
          }),
        );
        const revision = put.header?.revision ?? -1n;
        for (;;) {
          const next = await responses.next();
          if (next.done) throw new StepFailed("watch ended without the event");
          const kind = next.value.kind;
          if (kind?.$case !== "events") continue;
          for (const ev of kind.events.events) {
            if (ev.entry?.key !== "plan/step-3") continue;
            check(ev.type === BlackboardEventType.BLACKBOARD_EVENT_TYPE_PUT, `event type ${ev.type}`);
            check(ev.revision === revision, `event revision ${ev.revision} != put ${revision}`);
            return `revision=${revision} resume_revision=${next.value.resumeRevision}`;
          }
        }
      } finally {
        stream.cancel();
      }
    });

    await report.run("message_send_receive", "message", async () => {
      const sent = await sk.api.messages.sendMessage(
        SendMessageRequest.fromPartial({
          fromAgent: sender,
          toAgent: receiver,
          type: "conformance.ping",
          payload: { contentType: "text/plain", data: Buffer.from("ping") },
        }),
      );
      check(sent.messageId !== "", "no message_id");
      const pulled = await sk.api.messages.pullMessages(
        PullMessagesRequest.fromPartial({ agentId: receiver, maxMessages: 1, waitTimeout: { seconds: 5, nanos: 0 } }),
      );
      check(pulled.deliveries.length === 1, `${pulled.deliveries.length} deliveries`);
      const delivery = pulled.deliveries[0];
      check(delivery.message?.messageId === sent.messageId, "another message delivered");
      check(Buffer.from(delivery.message?.payload?.data ?? []).toString() === "ping", "payload differs");
      const acked = await sk.api.messages.ackMessages(
        AckMessagesRequest.fromPartial({ receiptHandles: [delivery.receiptHandle] }),
      );
      check(acked.results[0]?.status === ReceiptStatus.RECEIPT_STATUS_OK, `ack status ${acked.results[0]?.status}`);
      return `message_id=${sent.messageId}`;
    });

    await report.run("watch_resume", "blackboard", async () => {
      // The Watch helper: a watch sees two puts; a third is written while no
      // watch is open; a new watch from the first one's resumeRevision starts
      // with it (nothing missed, nothing repeated).
      const resumeBoard = `${board}-resume`;
      const put = async (key: string) =>
        (
          await sk.api.blackboard.putEntry(
            PutEntryRequest.fromPartial({
              board: resumeBoard,
              key,
              writerAgentId: agent,
              value: { kind: { $case: "json", json: { task: key } } },
            }),
          )
        ).header?.revision ?? -1n;
      const first = sk.watch(resumeBoard, { prefix: "task/", timeoutMs: 20_000 });
      const responses = first.responses();
      const started = await responses.next();
      check(!started.done && started.value.kind?.$case === "started", "no started response");
      const puts = [await put("task/1"), await put("task/2")];
      const seen: bigint[] = [];
      for await (const response of responses) {
        if (response.kind?.$case === "events") seen.push(...response.kind.events.events.map((e) => e.revision));
        if (seen.length >= 2) break;
      }
      check(seen.join(",") === puts.join(","), `events ${seen.join(",")}, want ${puts.join(",")}`);
      const resumeAt = first.resumeRevision;
      check(resumeAt > seen[seen.length - 1], `resume_revision ${resumeAt} <= ${seen[seen.length - 1]}`);
      const third = await put("task/3");
      let next = "";
      for await (const event of sk.watch(resumeBoard, { prefix: "task/", startRevision: resumeAt, timeoutMs: 20_000 })) {
        next = `${event.entry?.key}@${event.revision}`;
        break;
      }
      check(next === `task/3@${third}`, `resumed at ${next}, want task/3@${third}`);
      return `resume_revision=${resumeAt} next=${third}`;
    });

    await report.run("inbox_consumer", "message", async () => {
      // The inbox consumer: three jobs; job-1 fails (throws) on its first
      // delivery, so it is nacked and handled again; all three are acked.
      const inbox = `${receiver}-inbox`;
      const jobs = ["job-0", "job-1", "job-2"];
      for (const job of jobs) {
        await sk.api.messages.sendMessage(
          SendMessageRequest.fromPartial({
            fromAgent: sender,
            toAgent: inbox,
            type: "conformance.job",
            payload: { contentType: "text/plain", data: Buffer.from(job) },
          }),
        );
      }
      const handled: string[] = [];
      const consumer = sk.consume(
        inbox,
        (delivery) => {
          const job = Buffer.from(delivery.message?.payload?.data ?? []).toString();
          handled.push(`${job}#${delivery.deliveryCount}`);
          if (job === "job-1" && delivery.deliveryCount === 1) throw new Error("job-1 fails on its first delivery");
        },
        { visibilityTimeoutMs: 10_000, nackDelayMs: 100 },
      );
      try {
        const deadline = Date.now() + 20_000;
        while (consumer.stats.acked < jobs.length && Date.now() < deadline) {
          await new Promise((done) => setTimeout(done, 20));
        }
      } finally {
        await consumer.stop();
      }
      const names = [...new Set(handled.map((h) => h.split("#")[0]))].sort();
      check(names.join(",") === jobs.join(","), `handled ${handled.join(",")}`);
      check(handled.includes("job-1#2"), `job-1 not redelivered: ${handled.join(",")}`);
      const { acked, nacked } = consumer.stats;
      check(acked === 3 && nacked === 1, `acked ${acked}, nacked ${nacked}`);
      return `messages=${jobs.length} handled=${handled.length} acked=${acked} nacked=${nacked}`;
    });
  } finally {
    sk.close();
  }
  return report.finish();
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
