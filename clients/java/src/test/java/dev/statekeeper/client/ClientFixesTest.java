package dev.statekeeper.client;

import static dev.statekeeper.client.WatchTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.statekeeper.v1.BlackboardEvent;
import dev.statekeeper.v1.BlackboardValue;
import dev.statekeeper.v1.Delivery;
import dev.statekeeper.v1.Payload;
import dev.statekeeper.v1.ReceiptStatus;
import dev.statekeeper.v1.SendMessageRequest;
import dev.statekeeper.v1.TxnOp;
import dev.statekeeper.v1.TxnPut;
import dev.statekeeper.v1.TxnRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Regression tests of the client review (issue 17), against a real server. */
// A safety net only: every wait in the tests is bounded (and scaled by the load) already.
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class ClientFixesTest {

  private static String send(StatekeeperClient sk, String inbox, int i) {
    return sk.messages()
        .sendMessage(
            SendMessageRequest.newBuilder()
                .setFromAgent("producer")
                .setToAgent(inbox)
                .setType("task")
                .setPayload(Payload.newBuilder().setData(ByteString.copyFromUtf8(Integer.toString(i))))
                .build())
        .getMessageId();
  }

  private static final RetryPolicy FAST =
      new RetryPolicy(5, Duration.ofMillis(50), Duration.ofMillis(300), 2, 0.2);

  /** What the consumer settled, by message id: the statuses of its acks. */
  static class Settled implements InboxConsumer.Listener {
    final Map<String, List<ReceiptStatus>> acks = new ConcurrentHashMap<>();
    final Map<String, List<Integer>> handled = new ConcurrentHashMap<>();

    void handled(Delivery d) {
      handled
          .computeIfAbsent(d.getMessage().getMessageId(), k -> new CopyOnWriteArrayList<>())
          .add(d.getDeliveryCount());
    }

    @Override
    public void onSettled(Delivery d, InboxConsumer.Outcome outcome, ReceiptStatus status) {
      if (outcome.kind() == InboxConsumer.Outcome.Kind.ACK) {
        acks.computeIfAbsent(d.getMessage().getMessageId(), k -> new CopyOnWriteArrayList<>())
            .add(status);
      }
    }
  }

  /**
   * A transaction's events share one revision and come in one response: the resume revision
   * checkpointed after the first of them must not skip the others.
   */
  @Test
  void resumeRevisionStaysWithinATransactionsRevision() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      TxnRequest.Builder txn = TxnRequest.newBuilder().setBoard("tx");
      for (String key : List.of("t/1", "t/2", "t/3")) {
        BlackboardValue value =
            BlackboardValue.newBuilder()
                .setJson(Struct.newBuilder().putFields("k", Value.newBuilder().setStringValue(key).build()))
                .build();
        txn.addSuccess(TxnOp.newBuilder().setPutEntry(TxnPut.newBuilder().setKey(key).setValue(value)));
      }
      long rev = sk.blackboard().txn(txn.build()).getHeader().getRevision();
      List<Long> checkpoints = new ArrayList<>();
      try (Watch watch = sk.watch(WatchOptions.board("tx").prefix("t/").startRevision(rev))) {
        Iterator<BlackboardEvent> events = watch.iterator();
        for (int i = 0; i < 3; i++) {
          assertEquals(rev, events.next().getRevision());
          checkpoints.add(watch.resumeRevision());
        }
      }
      assertTrue(
          checkpoints.get(0) <= rev && checkpoints.get(1) <= rev && checkpoints.get(2) == rev + 1,
          "resume revisions after each event of revision " + rev + ": " + checkpoints);
      try (Watch again = sk.watch(WatchOptions.board("tx").prefix("t/").startRevision(checkpoints.get(0)))) {
        Set<String> keys = new HashSet<>();
        Iterator<BlackboardEvent> events = again.iterator();
        while (!(keys.contains("t/2") && keys.contains("t/3"))) {
          keys.add(events.next().getEntry().getKey());
        }
      }
    }
  }

  /**
   * A handler that throws an Error, and a listener that throws, still leave the delivery nacked
   * (delivered again, then acked) and no longer held.
   */
  @Test
  void aHandlerErrorOrAThrowingListenerStillSettles() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String id = send(sk, "erroring", 1);
      Settled settled =
          new Settled() {
            @Override
            public void onHandlerError(Delivery d, Exception error, Duration delay) {
              throw new IllegalStateException("listener fails too");
            }
          };
      try (InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options("erroring")
                  .visibilityTimeout(Duration.ofSeconds(2))
                  .nackBackoff(Duration.ofMillis(100), Duration.ofMillis(100))
                  .backoff(FAST)
                  .listener(settled),
              delivery -> {
                settled.handled(delivery);
                if (delivery.getDeliveryCount() == 1) {
                  throw new AssertionError("handler bug");
                }
                return InboxConsumer.Outcome.ack();
              })) {
        await("the redelivery acked", Duration.ofSeconds(60), () -> settled.acks.containsKey(id));
        await("nothing held", Duration.ofSeconds(30), () -> consumer.held() == 0);
        assertNull(consumer.failure());
      }
      assertEquals(List.of(1, 2), settled.handled.get(id));
      assertEquals(List.of(ReceiptStatus.RECEIPT_STATUS_OK), settled.acks.get(id));
    }
  }

  /**
   * More held deliveries than the server takes receipt handles in one call (100): all keep their
   * leases while their handlers outlast the visibility timeout; each is handled once and acked.
   */
  @Test
  void moreThanAHundredHeldDeliveriesKeepTheirLeases() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      int total = 110;
      List<String> ids = new ArrayList<>();
      for (int i = 0; i < total; i++) {
        ids.add(send(sk, "many", i));
      }
      Duration visibility = Duration.ofSeconds(2);
      Settled settled = new Settled();
      try (InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options("many")
                  .concurrency(total)
                  .visibilityTimeout(visibility)
                  .backoff(FAST)
                  .listener(settled),
              delivery -> {
                settled.handled(delivery);
                // Every handler outlasts the visibility timeout, all at once.
                await("every message handed out", Duration.ofSeconds(120), () -> settled.handled.size() == total);
                Thread.sleep(2 * visibility.toMillis());
                return InboxConsumer.Outcome.ack();
              })) {
        await("every message acked", Duration.ofSeconds(180), () -> settled.acks.size() == total);
        assertNull(consumer.failure());
      }
      for (String id : ids) {
        assertEquals(List.of(1), settled.handled.get(id), "deliveries of " + id);
        assertEquals(List.of(ReceiptStatus.RECEIPT_STATUS_OK), settled.acks.get(id), "acks of " + id);
      }
    }
  }

  /**
   * An idle consumer (the server sends nothing on an idle inbox) survives a restart, then another
   * one long after: the reconnect budget counts from the second break, not from the first.
   */
  @Test
  void anIdleConsumerSurvivesRestartsFarApart() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      long began = System.nanoTime();
      server.kill();
      server.start();
      // The budget covers a restart on this machine, and the idle time between restarts
      // exceeds it.
      Duration budget = Duration.ofNanos(3 * (System.nanoTime() - began)).plusSeconds(2);
      Settled settled = new Settled();
      try (InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options("idle").backoff(FAST).reconnectFor(budget).listener(settled),
              delivery -> InboxConsumer.Outcome.ack())) {
        String first = send(sk, "idle", 1);
        await("the first message acked", Duration.ofSeconds(60), () -> settled.acks.containsKey(first));
        server.kill();
        server.start();
        await("a reconnect", Duration.ofSeconds(60), () -> consumer.reconnects() > 0);
        Thread.sleep(budget.toMillis() + 1000); // idle: nothing delivered on the new stream
        server.kill();
        server.start();
        String second = send(sk, "idle", 2);
        await(
            "the second message acked",
            Duration.ofSeconds(60),
            () -> settled.acks.containsKey(second) || !consumer.isRunning());
        assertNull(consumer.failure());
        assertTrue(consumer.isRunning());
      }
    }
  }
}
