package dev.statekeeper.client;

import static dev.statekeeper.client.WatchTest.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.statekeeper.v1.Delivery;
import dev.statekeeper.v1.ListDeadLettersRequest;
import dev.statekeeper.v1.Payload;
import dev.statekeeper.v1.PullMessagesRequest;
import dev.statekeeper.v1.ReceiptStatus;
import dev.statekeeper.v1.SendMessageRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The inbox consumer against a real server: ack, nack, redelivery, extension, restarts. */
// A safety net only: every wait in the tests is bounded (and scaled by the load) already.
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class InboxConsumerTest {

  private static List<String> send(StatekeeperClient sk, String inbox, int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(
          sk.messages()
              .sendMessage(
                  SendMessageRequest.newBuilder()
                      .setFromAgent("producer")
                      .setToAgent(inbox)
                      .setType("task")
                      .setPayload(
                          Payload.newBuilder().setData(ByteString.copyFromUtf8(Integer.toString(i))))
                      .build())
              .getMessageId());
    }
    return ids;
  }

  /** Deliveries still waiting in the inbox after every visibility timeout passed. */
  private static int leftOver(StatekeeperClient sk, String inbox, Duration visibility) {
    return sk.messages()
        .withDeadlineAfter(visibility.toSeconds() + 60, java.util.concurrent.TimeUnit.SECONDS)
        .pullMessages(
            PullMessagesRequest.newBuilder()
                .setAgentId(inbox)
                .setMaxMessages(100)
                .setWaitTimeout(
                    com.google.protobuf.Duration.newBuilder().setSeconds(visibility.toSeconds() + 2))
                .build())
        .getDeliveriesCount();
  }

  /** Records what the consumer did. */
  static final class Record implements InboxConsumer.Listener {
    final Map<String, List<Integer>> handled = new ConcurrentHashMap<>();
    final Set<String> acked = ConcurrentHashMap.newKeySet();
    final List<String> handlerErrors = new CopyOnWriteArrayList<>();

    void handled(Delivery d) {
      handled
          .computeIfAbsent(d.getMessage().getMessageId(), k -> new CopyOnWriteArrayList<>())
          .add(d.getDeliveryCount());
    }

    @Override
    public void onSettled(Delivery d, InboxConsumer.Outcome outcome, ReceiptStatus status) {
      if (outcome.kind() == InboxConsumer.Outcome.Kind.ACK
          && (status == ReceiptStatus.RECEIPT_STATUS_OK
              || status == ReceiptStatus.RECEIPT_STATUS_ALREADY_ACKED)) {
        acked.add(d.getMessage().getMessageId());
      }
    }

    @Override
    public void onHandlerError(Delivery d, Exception error, Duration delay) {
      handlerErrors.add(d.getMessage().getMessageId());
    }
  }

  @Test
  void everyMessageIsHandledAndAckedAcrossServerKills() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String inbox = "worker";
      int total = 60;
      List<String> ids = send(sk, inbox, total);
      Duration visibility = ServerProcess.scaled(Duration.ofSeconds(3));
      Record record = new Record();
      InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options(inbox)
                  .concurrency(3)
                  .visibilityTimeout(visibility)
                  .backoff(new RetryPolicy(5, Duration.ofMillis(50), Duration.ofMillis(500), 2, 0.2))
                  .reconnectFor(ServerProcess.scaled(Duration.ofSeconds(180)))
                  .listener(record),
              delivery -> {
                record.handled(delivery);
                Thread.sleep(20);
                return InboxConsumer.Outcome.ack();
              });
      try {
        for (int r = 1; r <= 3; r++) {
          int target = r * total / 4;
          await(
              "handled " + target,
              Duration.ofSeconds(120),
              () -> record.acked.size() >= target || !consumer.isRunning());
          assertNull(consumer.failure());
          server.kill();
          Thread.sleep(200);
          server.start();
        }
        await(
            "every message acked",
            Duration.ofSeconds(180),
            () -> record.acked.size() == total || !consumer.isRunning());
        assertNull(consumer.failure());
        assertTrue(consumer.reconnects() >= 3, "reconnects " + consumer.reconnects());
      } finally {
        consumer.close();
      }
      assertEquals(Set.copyOf(ids), record.handled.keySet(), "every message handled");
      assertEquals(Set.copyOf(ids), record.acked, "every message acked");
      assertEquals(0, leftOver(sk, inbox, visibility), "nothing left to deliver");
      assertEquals(
          0,
          sk.messages()
              .listDeadLetters(ListDeadLettersRequest.newBuilder().setAgentId(inbox).build())
              .getDeadLettersCount());
    }
  }

  @Test
  void nackedAndFailedMessagesAreRedelivered() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String inbox = "picky";
      List<String> ids = send(sk, inbox, 6);
      Record record = new Record();
      try (InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options(inbox)
                  .concurrency(2)
                  .nackBackoff(Duration.ofMillis(100), Duration.ofSeconds(1))
                  .listener(record),
              delivery -> {
                record.handled(delivery);
                int index = ids.indexOf(delivery.getMessage().getMessageId());
                if (delivery.getDeliveryCount() == 1 && index % 3 == 0) {
                  return InboxConsumer.Outcome.nack();
                }
                if (delivery.getDeliveryCount() == 1 && index % 3 == 1) {
                  throw new IllegalStateException("handler failure");
                }
                return InboxConsumer.Outcome.ack();
              })) {
        await("every message acked", Duration.ofSeconds(60), () -> record.acked.size() == 6);
      }
      for (int i = 0; i < ids.size(); i++) {
        List<Integer> counts = record.handled.get(ids.get(i));
        if (i % 3 == 2) {
          assertEquals(List.of(1), counts, "message " + i);
        } else {
          assertEquals(List.of(1, 2), counts, "message " + i + " redelivered");
        }
      }
      assertEquals(Set.of(ids.get(1), ids.get(4)), Set.copyOf(record.handlerErrors));
    }
  }

  @Test
  void aSlowHandlerKeepsItsMessage() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String inbox = "slow";
      String id = send(sk, inbox, 1).get(0);
      Duration visibility = ServerProcess.scaled(Duration.ofSeconds(3));
      Record record = new Record();
      AtomicBoolean release = new AtomicBoolean();
      try (InboxConsumer consumer =
          sk.consume(
              InboxConsumer.options(inbox).visibilityTimeout(visibility).listener(record),
              delivery -> {
                record.handled(delivery);
                while (!release.get()) {
                  Thread.sleep(20);
                }
                return InboxConsumer.Outcome.ack();
              })) {
        await("the delivery", Duration.ofSeconds(60), () -> record.handled.containsKey(id));
        // Three visibility timeouts later the message is still invisible to other receivers:
        // the consumer extends it while the handler runs.
        long until = System.nanoTime() + visibility.multipliedBy(3).toNanos();
        while (System.nanoTime() < until) {
          assertEquals(
              0,
              sk.messages()
                  .pullMessages(PullMessagesRequest.newBuilder().setAgentId(inbox).build())
                  .getDeliveriesCount(),
              "the held message was delivered to another receiver");
          Thread.sleep(250);
        }
        release.set(true);
        await("the ack", Duration.ofSeconds(60), () -> record.acked.contains(id));
      }
      assertEquals(List.of(1), record.handled.get(id));
    }
  }
}
