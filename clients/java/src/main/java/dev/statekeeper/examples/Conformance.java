package dev.statekeeper.examples;

import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.statekeeper.client.InboxConsumer;
import dev.statekeeper.client.StatekeeperClient;
import dev.statekeeper.client.StatekeeperException;
import dev.statekeeper.client.TlsOptions;
import dev.statekeeper.client.Watch;
import dev.statekeeper.client.WatchOptions;
import dev.statekeeper.v1.AckMessagesRequest;
import dev.statekeeper.v1.AckMessagesResponse;
import dev.statekeeper.v1.AppendMessagesRequest;
import dev.statekeeper.v1.AppendMessagesResponse;
import dev.statekeeper.v1.BlackboardEvent;
import dev.statekeeper.v1.BlackboardEventType;
import dev.statekeeper.v1.BlackboardValue;
import dev.statekeeper.v1.Checkpoint;
import dev.statekeeper.v1.CreateSessionRequest;
import dev.statekeeper.v1.Delivery;
import dev.statekeeper.v1.ErrorReason;
import dev.statekeeper.v1.GetCheckpointRequest;
import dev.statekeeper.v1.GetCheckpointResponse;
import dev.statekeeper.v1.GetContextWindowRequest;
import dev.statekeeper.v1.GetContextWindowResponse;
import dev.statekeeper.v1.Payload;
import dev.statekeeper.v1.PullMessagesRequest;
import dev.statekeeper.v1.PullMessagesResponse;
import dev.statekeeper.v1.PutEntryRequest;
import dev.statekeeper.v1.PutEntryResponse;
import dev.statekeeper.v1.RecallRequest;
import dev.statekeeper.v1.RecallResponse;
import dev.statekeeper.v1.RecallResult;
import dev.statekeeper.v1.ReceiptStatus;
import dev.statekeeper.v1.RecordEpisodeRequest;
import dev.statekeeper.v1.RecordEpisodeStatus;
import dev.statekeeper.v1.RecordEpisodesRequest;
import dev.statekeeper.v1.RecordEpisodesResponse;
import dev.statekeeper.v1.RecordEpisodesResult;
import dev.statekeeper.v1.Role;
import dev.statekeeper.v1.SaveCheckpointRequest;
import dev.statekeeper.v1.SaveCheckpointResponse;
import dev.statekeeper.v1.SendMessageRequest;
import dev.statekeeper.v1.SendMessageResponse;
import dev.statekeeper.v1.Session;
import dev.statekeeper.v1.SessionMessage;
import dev.statekeeper.v1.ToolCall;
import dev.statekeeper.v1.WatchRequest;
import dev.statekeeper.v1.WatchResponse;
import io.grpc.Context;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The statekeeper conformance scenario, Java edition (see clients/CONFORMANCE.md).
 *
 * <p>Environment: STATEKEEPER_ADDR, STATEKEEPER_API_KEY, STATEKEEPER_REQUIRE (comma separated
 * services, or "all", whose UNIMPLEMENTED answer fails the step instead of skipping it). Exits 1
 * if a step failed.
 */
public final class Conformance {
  private static final String LANGUAGE = "java";
  private static final int BUDGET = 4096;
  private static final int RESERVE = 256;
  private static final ByteString STATE =
      ByteString.copyFromUtf8("{\"step\":1,\"plan\":[\"fetch\",\"summarize\"]}");

  interface Step {
    String run() throws Exception;
  }

  static final class StepFailed extends Exception {
    StepFailed(String message) {
      super(message);
    }
  }

  static void check(boolean condition, String message) throws StepFailed {
    if (!condition) {
      throw new StepFailed(message);
    }
  }

  private final Set<String> required;
  private int passed;
  private int failed;
  private int skipped;

  private Conformance(Set<String> required) {
    this.required = required;
  }

  private void run(String step, String service, Step body) {
    long start = System.nanoTime();
    try {
      String note = body.run();
      passed++;
      System.out.printf("  [PASS] %s (%d ms) %s%n", step, millisSince(start), note);
    } catch (Exception error) {
      if (StatekeeperClient.isUnimplemented(error)
          && !required.contains(service)
          && !required.contains("all")) {
        skipped++;
        String capability =
            StatekeeperClient.errorInfo(error)
                .map(info -> info.getMetadataOrDefault("capability", error.getMessage()))
                .orElse(error.getMessage());
        System.out.printf(
            "  [SKIP] %s: %s service answers UNIMPLEMENTED (%s)%n", step, service, capability);
      } else {
        failed++;
        System.out.printf("  [FAIL] %s (%d ms): %s%n", step, millisSince(start), error);
      }
    }
    System.out.flush();
  }

  private static long millisSince(long startNanos) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  private static List<SessionMessage> conversation() {
    return List.of(
        SessionMessage.newBuilder().setRole(Role.ROLE_USER).setContent("What is the weather in Paris?").build(),
        SessionMessage.newBuilder()
            .setRole(Role.ROLE_ASSISTANT)
            .addToolCalls(
                ToolCall.newBuilder()
                    .setId("call-1")
                    .setName("get_weather")
                    .setArguments("{\"city\":\"Paris\"}"))
            .build(),
        SessionMessage.newBuilder()
            .setRole(Role.ROLE_TOOL)
            .setToolCallId("call-1")
            .setContent("{\"temp_c\":21}")
            .build(),
        SessionMessage.newBuilder()
            .setRole(Role.ROLE_ASSISTANT)
            .setContent("It is 21 degrees in Paris.")
            .build());
  }

  public static void main(String[] args) {
    String addr = env("STATEKEEPER_ADDR", "127.0.0.1:50051");
    String apiKey = env("STATEKEEPER_API_KEY", "");
    Set<String> required = new HashSet<>();
    for (String s : env("STATEKEEPER_REQUIRE", "").split(",")) {
      if (!s.isBlank()) {
        required.add(s.trim());
      }
    }
    long start = System.nanoTime();
    Conformance r = new Conformance(required);
    byte[] random = new byte[4];
    new SecureRandom().nextBytes(random);
    String run = LANGUAGE + "-" + HexFormat.of().formatHex(random);
    String user = "conf-user-" + run;
    String agent = "conf-agent-" + run;
    String execution = "conf-exec-" + run;
    String board = "conf-board-" + run;
    String sender = "conf-sender-" + run;
    String receiver = "conf-receiver-" + run;
    String[] sessionId = {""};

    System.out.printf("conformance %s against %s%n", LANGUAGE, addr);
    StatekeeperClient[] holder = new StatekeeperClient[1];
    r.run(
        "connect",
        "connect",
        () -> {
          TlsOptions tls = TlsOptions.fromEnv();
          holder[0] =
              tls == null
                  ? StatekeeperClient.connect(
                      addr, apiKey, io.grpc.InsecureChannelCredentials.create(), 10_000)
                  : StatekeeperClient.connect(addr, apiKey, tls, 10_000);
          return "addr=" + addr;
        });
    if (r.failed > 0) {
      finish(r, start);
    }
    try (StatekeeperClient sk = holder[0]) {
      r.run(
          "health",
          "health",
          () -> {
            HealthCheckResponse res = sk.health().check(HealthCheckRequest.getDefaultInstance());
            check(res.getStatus() == HealthCheckResponse.ServingStatus.SERVING, "status " + res.getStatus());
            return res.getStatus().name();
          });

      r.run(
          "create_session",
          "session",
          () -> {
            Session s =
                sk.sessions()
                    .createSession(
                        CreateSessionRequest.newBuilder()
                            .setSession(Session.newBuilder().setUserId(user).setAgentId(agent))
                            .build())
                    .getSession();
            check(!s.getSessionId().isEmpty(), "no session_id");
            check(s.getVersion() == 1, "version " + s.getVersion());
            sessionId[0] = s.getSessionId();
            return "session_id=" + sessionId[0];
          });

      r.run(
          "append_messages",
          "session",
          () -> {
            check(!sessionId[0].isEmpty(), "no session (create_session failed)");
            AppendMessagesResponse res =
                sk.sessions()
                    .appendMessages(
                        AppendMessagesRequest.newBuilder()
                            .setSessionId(sessionId[0])
                            .addAllMessages(conversation())
                            .setRequestId("append-" + run)
                            .build());
            check(res.getMessagesCount() == 4, res.getMessagesCount() + " messages appended");
            check(res.getSession().getMessageCount() == 4, "message_count " + res.getSession().getMessageCount());
            return "version=" + res.getSession().getVersion();
          });

      r.run(
          "context_window",
          "session",
          () -> {
            check(!sessionId[0].isEmpty(), "no session (create_session failed)");
            GetContextWindowResponse res =
                sk.sessions()
                    .getContextWindow(
                        GetContextWindowRequest.newBuilder()
                            .setSessionId(sessionId[0])
                            .setTokenBudget(BUDGET)
                            .setReservedOutputTokens(RESERVE)
                            .setSystemPrompt("You are a conformance test agent.")
                            .build());
            int total = res.getAccounting().getTotalTokens();
            check(total <= BUDGET - RESERVE, "total_tokens " + total + " > budget - reserve");
            check(res.getMessagesCount() == 4, res.getMessagesCount() + " messages in window");
            return "total_tokens=" + total + " messages=" + res.getMessagesCount();
          });

      r.run(
          "episode_record_recall",
          "memory",
          () -> {
            RecordEpisodeRequest teal =
                RecordEpisodeRequest.newBuilder()
                    .setUserId(user)
                    .setSessionId(sessionId[0])
                    .setUserMessage("My favourite colour is teal.")
                    .setAssistantResponse("Noted: your favourite colour is teal.")
                    .setImportance(0.9f)
                    .build();
            // One RecordEpisodes call: the episode, then the same interaction again.
            RecordEpisodesResponse rec =
                sk.memory()
                    .recordEpisodes(
                        RecordEpisodesRequest.newBuilder()
                            .addEpisodes(teal)
                            .addEpisodes(teal)
                            .build());
            check(
                rec.getResultsCount() == 2,
                rec.getResultsCount() + " results for 2 episodes");
            RecordEpisodesResult first = rec.getResults(0);
            RecordEpisodesResult second = rec.getResults(1);
            check(
                first.getStatus() == RecordEpisodeStatus.RECORD_EPISODE_STATUS_CREATED,
                "first item: status " + first.getStatus());
            String id = first.getResult().getEpisode().getId();
            check(!id.isEmpty(), "no episode id");
            check(
                second.getStatus() == RecordEpisodeStatus.RECORD_EPISODE_STATUS_DUPLICATE
                    && second.getResult().getDuplicateOf().equals(id),
                "second item: status "
                    + second.getStatus()
                    + ", duplicate_of "
                    + second.getResult().getDuplicateOf());
            RecallResponse got =
                sk.memory()
                    .recall(
                        RecallRequest.newBuilder()
                            .setUserId(user)
                            .setQueryText("favourite colour")
                            .setTopK(5)
                            .build());
            boolean found = false;
            for (RecallResult result : got.getResultsList()) {
              found |= result.getEpisode().getId().equals(id);
            }
            check(found, "episode " + id + " not recalled");
            return "episode_id=" + id;
          });

      r.run(
          "checkpoint_save_get",
          "checkpoint",
          () -> {
            SaveCheckpointResponse saved =
                sk.checkpoints()
                    .saveCheckpoint(
                        SaveCheckpointRequest.newBuilder()
                            .setCheckpoint(
                                Checkpoint.newBuilder()
                                    .setExecutionId(execution)
                                    .setStep(1)
                                    .setStepName("plan")
                                    .setState(
                                        Payload.newBuilder()
                                            .setContentType("application/json")
                                            .setSchemaVersion(1)
                                            .setData(STATE)))
                            .build());
            check(!saved.getCheckpointId().isEmpty(), "no checkpoint_id");
            GetCheckpointResponse got =
                sk.checkpoints()
                    .getCheckpoint(GetCheckpointRequest.newBuilder().setExecutionId(execution).build());
            check(
                got.getCheckpoint().getCheckpointId().equals(saved.getCheckpointId()),
                "latest is " + got.getCheckpoint().getCheckpointId());
            check(got.getCheckpoint().getState().getData().equals(STATE), "state differs");
            return "checkpoint_id=" + saved.getCheckpointId();
          });

      r.run(
          "blackboard_watch",
          "blackboard",
          () -> {
            Context.CancellableContext ctx = Context.current().withCancellation();
            try {
              return ctx.call(
                  () -> {
                    Iterator<WatchResponse> stream =
                        sk.blackboard()
                            .withDeadlineAfter(10, TimeUnit.SECONDS)
                            .watch(WatchRequest.newBuilder().setBoard(board).setPrefix("plan/").build());
                    WatchResponse first = stream.next();
                    check(first.hasStarted(), "first response is not `started`: " + first.getKindCase());
                    Struct status =
                        Struct.newBuilder()
                            .putFields("status", Value.newBuilder().setStringValue("done").build())
                            .build();
                    PutEntryResponse put =
                        sk.blackboard()
                            .putEntry(
                                PutEntryRequest.newBuilder()
                                    .setBoard(board)
                                    .setKey("plan/step-3")
                                    .setWriterAgentId(agent)
                                    .setValue(BlackboardValue.newBuilder().setJson(status))
                                    .build());
                    long revision = put.getHeader().getRevision();
                    while (stream.hasNext()) {
                      WatchResponse res = stream.next();
                      for (BlackboardEvent ev : res.getEvents().getEventsList()) {
                        if (!ev.getEntry().getKey().equals("plan/step-3")) {
                          continue;
                        }
                        check(ev.getType() == BlackboardEventType.BLACKBOARD_EVENT_TYPE_PUT, "event type " + ev.getType());
                        check(ev.getRevision() == revision, "event revision " + ev.getRevision() + " != put " + revision);
                        return "revision=" + revision + " resume_revision=" + res.getResumeRevision();
                      }
                    }
                    throw new StepFailed("watch ended without the event");
                  });
            } finally {
              ctx.cancel(null);
            }
          });

      r.run(
          "message_send_receive",
          "message",
          () -> {
            SendMessageResponse sent =
                sk.messages()
                    .sendMessage(
                        SendMessageRequest.newBuilder()
                            .setFromAgent(sender)
                            .setToAgent(receiver)
                            .setType("conformance.ping")
                            .setPayload(
                                Payload.newBuilder()
                                    .setContentType("text/plain")
                                    .setData(ByteString.copyFromUtf8("ping")))
                            .build());
            check(!sent.getMessageId().isEmpty(), "no message_id");
            PullMessagesResponse pulled =
                sk.messages()
                    .pullMessages(
                        PullMessagesRequest.newBuilder()
                            .setAgentId(receiver)
                            .setMaxMessages(1)
                            .setWaitTimeout(Duration.newBuilder().setSeconds(5))
                            .build());
            check(pulled.getDeliveriesCount() == 1, pulled.getDeliveriesCount() + " deliveries");
            Delivery delivery = pulled.getDeliveries(0);
            check(delivery.getMessage().getMessageId().equals(sent.getMessageId()), "another message delivered");
            check(
                delivery.getMessage().getPayload().getData().toString(StandardCharsets.UTF_8).equals("ping"),
                "payload differs");
            AckMessagesResponse acked =
                sk.messages()
                    .ackMessages(
                        AckMessagesRequest.newBuilder()
                            .addReceiptHandles(delivery.getReceiptHandle())
                            .build());
            check(
                acked.getResultsCount() == 1
                    && acked.getResults(0).getStatus() == ReceiptStatus.RECEIPT_STATUS_OK,
                "ack results " + acked.getResultsList());
            return "message_id=" + sent.getMessageId();
          });

      r.run(
          "typed_errors",
          "blackboard",
          () -> {
            long rev = put(sk, board, "cas/key", agent);
            try {
              sk.call(
                  () ->
                      sk.blackboard()
                          .putEntry(
                              PutEntryRequest.newBuilder()
                                  .setBoard(board)
                                  .setKey("cas/key")
                                  .setValue(json("status", "late"))
                                  .setExpectedModRevision(rev + 1000)
                                  .build()));
            } catch (StatekeeperException e) {
              check(
                  e.is(ErrorReason.ERROR_REASON_REVISION_MISMATCH),
                  "reason " + e.reason() + " (" + e.getMessage() + ")");
              long current = e.metadataLong("current_revision").orElse(-1L);
              check(current == rev, "current_revision " + current + " != " + rev);
              return "reason=" + e.reasonName() + " current_revision=" + current;
            }
            throw new StepFailed("a failed compare-and-swap succeeded");
          });

      r.run(
          "watch_resume",
          "blackboard",
          () -> {
            // Three puts, watched from the first one's revision with the resuming helper; then
            // two more, watched by a new helper from where the first one stopped: each revision
            // exactly once, in order.
            List<Long> revisions = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
              revisions.add(put(sk, board, "resume/" + i, agent));
            }
            List<Long> first = watchUntil(sk, board, revisions.get(0), 3);
            check(first.subList(0, 3).equals(revisions), "first watch saw " + first + ", wrote " + revisions);
            long resumeAt = first.get(first.size() - 1);
            List<Long> more = new ArrayList<>();
            for (int i = 3; i < 5; i++) {
              more.add(put(sk, board, "resume/" + i, agent));
            }
            List<Long> second = watchUntil(sk, board, resumeAt, 2);
            check(
                second.subList(0, 2).equals(more), "resumed watch saw " + second + ", wrote " + more);
            check(
                second.get(2) == more.get(1) + 1,
                "resume_revision " + second.get(2) + " after revision " + more.get(1));
            return "revisions=" + revisions + " then " + more;
          });

      r.run(
          "inbox_consumer",
          "message",
          () -> {
            String inbox = "conf-inbox-" + run;
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
              ids.add(
                  sk.messages()
                      .sendMessage(
                          SendMessageRequest.newBuilder()
                              .setFromAgent(sender)
                              .setToAgent(inbox)
                              .setType("conformance.task")
                              .setPayload(
                                  Payload.newBuilder()
                                      .setContentType("text/plain")
                                      .setData(ByteString.copyFromUtf8("task-" + i)))
                              .build())
                      .getMessageId());
            }
            Map<String, List<Integer>> handled = new ConcurrentHashMap<>();
            Set<String> acked = ConcurrentHashMap.newKeySet();
            try (InboxConsumer consumer =
                sk.consume(
                    InboxConsumer.options(inbox)
                        .listener(
                            new InboxConsumer.Listener() {
                              @Override
                              public void onSettled(
                                  Delivery d, InboxConsumer.Outcome outcome, ReceiptStatus status) {
                                if (outcome.kind() == InboxConsumer.Outcome.Kind.ACK
                                    && status == ReceiptStatus.RECEIPT_STATUS_OK) {
                                  acked.add(d.getMessage().getMessageId());
                                }
                              }
                            }),
                    delivery -> {
                      String id = delivery.getMessage().getMessageId();
                      handled.computeIfAbsent(id, k -> new CopyOnWriteArrayList<>())
                          .add(delivery.getDeliveryCount());
                      // The first message is given back once: it must come again.
                      return id.equals(ids.get(0)) && delivery.getDeliveryCount() == 1
                          ? InboxConsumer.Outcome.nack()
                          : InboxConsumer.Outcome.ack();
                    })) {
              long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
              while (acked.size() < ids.size() && consumer.isRunning() && System.nanoTime() < deadline) {
                Thread.sleep(20);
              }
              if (consumer.failure() != null) {
                throw consumer.failure();
              }
            }
            check(acked.equals(Set.copyOf(ids)), "acked " + acked.size() + " of " + ids.size());
            check(
                handled.get(ids.get(0)).equals(List.of(1, 2)),
                "nacked message deliveries " + handled.get(ids.get(0)));
            return "acked=" + acked.size() + " redelivered_after_nack=1";
          });
    }
    finish(r, start);
  }

  private static BlackboardValue json(String field, String value) {
    return BlackboardValue.newBuilder()
        .setJson(
            Struct.newBuilder()
                .putFields(field, Value.newBuilder().setStringValue(value).build()))
        .build();
  }

  private static long put(StatekeeperClient sk, String board, String key, String agent) {
    return sk.blackboard()
        .putEntry(
            PutEntryRequest.newBuilder()
                .setBoard(board)
                .setKey(key)
                .setWriterAgentId(agent)
                .setValue(json("key", key))
                .build())
        .getHeader()
        .getRevision();
  }

  /**
   * Runs the resuming Watch helper on "resume/" keys from {@code startRevision} until it has
   * seen {@code count} events (at most 20 s), closes it, and returns the event revisions
   * followed by the helper's resume revision.
   */
  private static List<Long> watchUntil(
      StatekeeperClient sk, String board, long startRevision, int count) throws StepFailed {
    List<Long> seen = new ArrayList<>();
    ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    try (Watch watch =
        sk.watch(WatchOptions.board(board).prefix("resume/").startRevision(startRevision))) {
      timer.schedule(watch::close, 20, TimeUnit.SECONDS);
      for (BlackboardEvent event : watch) {
        seen.add(event.getRevision());
        if (seen.size() == count) {
          break;
        }
      }
      check(seen.size() == count, "the watch saw " + seen + " within 20 s");
      seen.add(watch.resumeRevision());
      return seen;
    } finally {
      timer.shutdownNow();
    }
  }

  private static void finish(Conformance r, long start) {
    System.out.printf(
        "conformance %s: %d passed, %d failed, %d skipped (%d ms)%n",
        LANGUAGE, r.passed, r.failed, r.skipped, millisSince(start));
    System.out.flush();
    System.exit(r.failed == 0 ? 0 : 1);
  }
}
