package dev.statekeeper.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Duration;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.statekeeper.v1.BlackboardServiceGrpc;
import dev.statekeeper.v1.BlackboardValue;
import dev.statekeeper.v1.CheckpointServiceGrpc;
import dev.statekeeper.v1.Delivery;
import dev.statekeeper.v1.ErrorReason;
import dev.statekeeper.v1.GetEntryRequest;
import dev.statekeeper.v1.MessageServiceGrpc;
import dev.statekeeper.v1.Payload;
import dev.statekeeper.v1.PullMessagesRequest;
import dev.statekeeper.v1.PutEntryRequest;
import dev.statekeeper.v1.RequestReplyRequest;
import dev.statekeeper.v1.SendMessageRequest;
import dev.statekeeper.v1.SendMessageResponse;
import dev.statekeeper.v1.SessionServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientStreamTracer;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client layer against a real server: typed errors, idempotency keys, deadlines, retries. */
// A safety net only: every wait in the tests is bounded (and scaled by the load) already.
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ClientLayerTest {
  private static ServerProcess server;
  private static StatekeeperClient sk;

  @BeforeAll
  static void startServer() throws Exception {
    server = ServerProcess.launch();
    sk = server.client();
  }

  @AfterAll
  static void stopServer() {
    if (sk != null) {
      sk.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static BlackboardValue json(String field, String value) {
    return BlackboardValue.newBuilder()
        .setJson(
            Struct.newBuilder()
                .putFields(field, Value.newBuilder().setStringValue(value).build()))
        .build();
  }

  @Test
  void everyGeneratedReasonMapsBothWays() {
    Set<ErrorReason> seen = EnumSet.noneOf(ErrorReason.class);
    for (ErrorReason reason : ErrorReason.values()) {
      if (reason == ErrorReason.UNRECOGNIZED) {
        continue;
      }
      String wire = StatekeeperException.wireName(reason);
      assertFalse(wire.startsWith("ERROR_REASON_"), wire);
      assertEquals(reason, StatekeeperException.reasonOf(wire));
      seen.add(reason);
    }
    assertTrue(seen.contains(ErrorReason.ERROR_REASON_SLOW_CONSUMER));
    assertEquals(ErrorReason.ERROR_REASON_UNSPECIFIED, StatekeeperException.reasonOf(""));
    assertEquals(ErrorReason.UNRECOGNIZED, StatekeeperException.reasonOf("NO_SUCH_REASON"));
  }

  @Test
  void failedCompareAndSwapIsATypedRevisionMismatch() {
    long rev =
        sk.blackboard()
            .putEntry(
                PutEntryRequest.newBuilder()
                    .setBoard("errors")
                    .setKey("k")
                    .setValue(json("v", "1"))
                    .build())
            .getHeader()
            .getRevision();
    StatekeeperException e =
        assertThrows(
            StatekeeperException.class,
            () ->
                sk.call(
                    () ->
                        sk.blackboard()
                            .putEntry(
                                PutEntryRequest.newBuilder()
                                    .setBoard("errors")
                                    .setKey("k")
                                    .setValue(json("v", "2"))
                                    .setExpectedModRevision(rev + 1000)
                                    .build())));
    assertEquals(Status.Code.FAILED_PRECONDITION, e.code());
    assertEquals(ErrorReason.ERROR_REASON_REVISION_MISMATCH, e.reason());
    assertEquals("REVISION_MISMATCH", e.reasonName());
    assertEquals(StatekeeperException.DOMAIN, e.domain());
    assertEquals(rev, e.metadataLong("current_revision").orElseThrow());
    assertTrue(e.getMessage().contains("REVISION_MISMATCH"), e.getMessage());
  }

  @Test
  void invalidFieldAndBadCredentialsAreTyped() {
    StatekeeperException invalid =
        assertThrows(
            StatekeeperException.class,
            () ->
                sk.call(
                    () ->
                        sk.blackboard()
                            .getEntry(GetEntryRequest.newBuilder().setBoard("errors").build())));
    assertEquals(ErrorReason.ERROR_REASON_INVALID_FIELD, invalid.reason());
    assertEquals("key", invalid.metadata("field").orElseThrow());

    try (StatekeeperClient stranger =
        StatekeeperClient.builder(server.target()).apiKey("not-a-key").build()) {
      StatekeeperException denied =
          assertThrows(
              StatekeeperException.class,
              () ->
                  stranger.call(
                      () ->
                          stranger
                              .blackboard()
                              .getEntry(
                                  GetEntryRequest.newBuilder().setBoard("b").setKey("k").build())));
      assertEquals(Status.Code.UNAUTHENTICATED, denied.code());
      assertEquals(ErrorReason.ERROR_REASON_UNAUTHENTICATED, denied.reason());
    }
  }

  @Test
  void retriesAreDerivedFromTheContract() {
    assertTrue(CallPolicy.isRetryable(BlackboardServiceGrpc.getGetEntryMethod()));
    assertTrue(CallPolicy.isRetryable(BlackboardServiceGrpc.getListEntriesMethod()));
    assertTrue(CallPolicy.isRetryable(MessageServiceGrpc.getSendMessageMethod()));
    assertTrue(CallPolicy.isRetryable(MessageServiceGrpc.getSendReplyMethod()));
    assertTrue(CallPolicy.isRetryable(MessageServiceGrpc.getAckMessagesMethod()));
    assertTrue(CallPolicy.isRetryable(SessionServiceGrpc.getAppendMessagesMethod()));
    assertFalse(CallPolicy.isRetryable(BlackboardServiceGrpc.getPutEntryMethod()));
    assertFalse(CallPolicy.isRetryable(BlackboardServiceGrpc.getTxnMethod()));
    assertFalse(CallPolicy.isRetryable(CheckpointServiceGrpc.getSaveCheckpointMethod()));
    assertFalse(CallPolicy.isRetryable(BlackboardServiceGrpc.getWatchMethod()));
    assertFalse(CallPolicy.isRetryable(MessageServiceGrpc.getReceiveMessagesMethod()));
    // Every method with a request_id field is retried, and gets its key filled.
    for (io.grpc.ServiceDescriptor service : CallPolicy.services()) {
      for (MethodDescriptor<?, ?> method : service.getMethods()) {
        if (CallPolicy.idempotencyField(method) != null
            && method.getType() == MethodDescriptor.MethodType.UNARY) {
          assertTrue(CallPolicy.isRetryable(method), method.getFullMethodName());
        }
      }
    }
  }

  /** Counts the attempts (streams) of the calls made through a stub. */
  private static ClientInterceptor countAttempts(AtomicInteger attempts) {
    ClientStreamTracer.Factory factory =
        new ClientStreamTracer.Factory() {
          @Override
          public ClientStreamTracer newClientStreamTracer(
              ClientStreamTracer.StreamInfo info, Metadata headers) {
            attempts.incrementAndGet();
            return new ClientStreamTracer() {};
          }
        };
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        return next.newCall(method, options.withStreamTracerFactory(factory));
      }
    };
  }

  @Test
  void unavailableIsRetriedOnlyWhereSafe() throws Exception {
    // A port nobody listens on: every attempt fails with UNAVAILABLE.
    int port;
    try (java.net.ServerSocket s =
        new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    RetryPolicy policy =
        new RetryPolicy(4, java.time.Duration.ofMillis(10), java.time.Duration.ofMillis(50), 2, 0);
    try (StatekeeperClient down =
        StatekeeperClient.builder("127.0.0.1:" + port).apiKey("k").retry(policy).build()) {
      AtomicInteger reads = new AtomicInteger();
      StatekeeperException read =
          assertThrows(
              StatekeeperException.class,
              () ->
                  down.call(
                      () ->
                          down.blackboard()
                              .withInterceptors(countAttempts(reads))
                              .getEntry(
                                  GetEntryRequest.newBuilder().setBoard("b").setKey("k").build())));
      assertEquals(Status.Code.UNAVAILABLE, read.code());
      assertEquals(4, reads.get(), "a read is attempted maxAttempts times");

      AtomicInteger puts = new AtomicInteger();
      StatekeeperException put =
          assertThrows(
              StatekeeperException.class,
              () ->
                  down.call(
                      () ->
                          down.blackboard()
                              .withInterceptors(countAttempts(puts))
                              .putEntry(
                                  PutEntryRequest.newBuilder()
                                      .setBoard("b")
                                      .setKey("k")
                                      .setValue(json("v", "1"))
                                      .build())));
      assertEquals(Status.Code.UNAVAILABLE, put.code());
      assertEquals(1, puts.get(), "a mutation without an idempotency key is sent once");

      AtomicInteger sends = new AtomicInteger();
      assertThrows(
          StatekeeperException.class,
          () ->
              down.call(
                  () ->
                      down.messages()
                          .withInterceptors(countAttempts(sends))
                          .sendMessage(SendMessageRequest.newBuilder().setToAgent("x").build())));
      assertEquals(4, sends.get(), "a keyed mutation is retried");
    }
  }

  @Test
  void mutationsGetAnIdempotencyKeyThatDeduplicates() {
    String inbox = "idem-" + System.nanoTime();
    SendMessageRequest request =
        SendMessageRequest.newBuilder()
            .setFromAgent("tester")
            .setToAgent(inbox)
            .setPayload(Payload.newBuilder().setData(ByteString.copyFromUtf8("once")))
            .build();
    SendMessageResponse first = sk.messages().sendMessage(request);
    assertFalse(first.getDuplicate());
    List<Delivery> got =
        sk.messages()
            .pullMessages(
                PullMessagesRequest.newBuilder()
                    .setAgentId(inbox)
                    .setMaxMessages(10)
                    .setWaitTimeout(Duration.newBuilder().setSeconds(5))
                    .build())
            .getDeliveriesList();
    assertEquals(1, got.size());
    String key = got.get(0).getMessage().getRequestId();
    assertFalse(key.isEmpty(), "the client filled request_id");
    // What a retry of that call sends: the same key, which the server deduplicates.
    SendMessageResponse again =
        sk.messages().sendMessage(request.toBuilder().setRequestId(key).build());
    assertTrue(again.getDuplicate());
    assertEquals(first.getMessageId(), again.getMessageId());
    // Two calls (not retries) get two keys.
    Set<String> ids = new HashSet<>();
    ids.add(sk.messages().sendMessage(request).getMessageId());
    ids.add(sk.messages().sendMessage(request).getMessageId());
    assertEquals(2, ids.size());
  }

  @Test
  void unaryCallsHaveADefaultDeadline() {
    try (StatekeeperClient shortDeadline =
        StatekeeperClient.builder(server.target())
            .apiKey(ServerProcess.API_KEY)
            .timeout(java.time.Duration.ofSeconds(2))
            .build()) {
      long start = System.nanoTime();
      StatekeeperException e =
          assertThrows(
              StatekeeperException.class,
              () ->
                  shortDeadline.call(
                      () ->
                          shortDeadline
                              .messages()
                              .requestReply(
                                  RequestReplyRequest.newBuilder()
                                      .setFromAgent("asker-" + System.nanoTime())
                                      .setToAgent("nobody-answers")
                                      .setTimeout(Duration.newBuilder().setSeconds(300))
                                      .build())));
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
      // The 2 s client deadline ended it, not the 300 s reply timeout.
      long seconds = java.time.Duration.ofNanos(System.nanoTime() - start).toSeconds();
      assertTrue(seconds < 150, "took " + seconds + " s");
    }
  }

  @Test
  void unimplementedIsItsOwnType() {
    StatekeeperException e =
        StatekeeperException.from(
            Status.UNIMPLEMENTED.withDescription("no such service").asRuntimeException());
    ServiceNotImplementedException typed = assertInstanceOf(ServiceNotImplementedException.class, e);
    assertEquals("no such service", typed.capability());
    assertTrue(StatekeeperClient.isUnimplemented(typed));
  }
}
