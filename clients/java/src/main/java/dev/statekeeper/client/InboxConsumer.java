package dev.statekeeper.client;

import dev.statekeeper.v1.AckMessagesRequest;
import dev.statekeeper.v1.Delivery;
import dev.statekeeper.v1.ErrorReason;
import dev.statekeeper.v1.ExtendVisibilityRequest;
import dev.statekeeper.v1.MessageServiceGrpc;
import dev.statekeeper.v1.NackMessagesRequest;
import dev.statekeeper.v1.ReceiptResult;
import dev.statekeeper.v1.ReceiptStatus;
import dev.statekeeper.v1.ReceiveMessagesRequest;
import dev.statekeeper.v1.ReceiveMessagesResponse;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Consumes an agent's inbox: receives deliveries (MessageService.ReceiveMessages), runs the
 * handler on each, and acks or nacks it by what the handler returned.
 *
 * <pre>{@code
 * try (InboxConsumer inbox = sk.consume(InboxConsumer.options("agent-b"), delivery -> {
 *   process(delivery.getMessage());
 *   return InboxConsumer.Outcome.ack();         // or nack(delay), deadLetter(reason)
 * })) {
 *   inbox.awaitTermination();                    // or do other work; close() stops it
 * }
 * }</pre>
 *
 * <ul>
 *   <li>At most {@code concurrency} handlers run at once (the stream's max_in_flight), each on a
 *       worker thread of the consumer.
 *   <li>While a delivery is held (received, not yet acked or nacked) its visibility timeout is
 *       extended (ExtendVisibility) every third of it, so a slow handler keeps its message.
 *   <li>A handler that throws nacks the delivery with a backoff that grows with the message's
 *       delivery count (the server dead-letters it after its maximum deliveries).
 *   <li>A stream that breaks with UNAVAILABLE (server restart) or SLOW_CONSUMER is opened again
 *       after an exponential backoff; acks, nacks and extensions that meet UNAVAILABLE are
 *       retried (they are harmless to repeat). Nothing is lost: a delivery whose ack did not
 *       reach the server is delivered again after its visibility timeout, so handlers must
 *       tolerate a redelivery (at-least-once).
 *   <li>Any other stream error stops the consumer: {@link #awaitTermination} throws it.
 * </ul>
 */
public final class InboxConsumer implements AutoCloseable {

  /** What to do with a delivery once the handler returned. */
  public record Outcome(Kind kind, Duration delay, String reason) {
    /** The three outcomes. */
    public enum Kind {
      ACK,
      NACK,
      DEAD_LETTER
    }

    /** Done: remove the message for good. */
    public static Outcome ack() {
      return new Outcome(Kind.ACK, Duration.ZERO, "");
    }

    /** Give it back: deliverable again at once. */
    public static Outcome nack() {
      return new Outcome(Kind.NACK, Duration.ZERO, "");
    }

    /** Give it back: deliverable again after {@code delay}. */
    public static Outcome nack(Duration delay) {
      return new Outcome(Kind.NACK, delay, "");
    }

    /** A poison message: to the inbox's dead-letter list at once, with {@code reason}. */
    public static Outcome deadLetter(String reason) {
      return new Outcome(Kind.DEAD_LETTER, Duration.ZERO, reason);
    }
  }

  /** Handles one delivery; throwing nacks it with a backoff. */
  @FunctionalInterface
  public interface Handler {
    Outcome handle(Delivery delivery) throws Exception;
  }

  /** Hooks, called on the consumer's threads; every method has a no-op default. */
  public interface Listener {
    /** The delivery was settled: {@code status} is the server's answer to the ack or nack. */
    default void onSettled(Delivery delivery, Outcome outcome, ReceiptStatus status) {}

    /**
     * The handler threw; the delivery is nacked with {@code delay}. An {@code Error} (such as an
     * AssertionError) arrives wrapped in an {@link java.util.concurrent.ExecutionException}. What
     * a listener method throws is ignored: the delivery is settled all the same.
     */
    default void onHandlerError(Delivery delivery, Exception error, Duration delay) {}

    /** The stream broke ({@code cause}: UNAVAILABLE or SLOW_CONSUMER); a new one follows. */
    default void onReconnect(StatekeeperException cause, int attempt) {}
  }

  /** Options of a consumer; every setter returns this. */
  public static final class Options {
    final String agentId;
    final List<String> types = new ArrayList<>();
    int concurrency = 1;
    Duration visibilityTimeout = Duration.ofSeconds(30);
    RetryPolicy backoff = RetryPolicy.DEFAULT;
    Duration reconnectFor = Duration.ofMinutes(2);
    Duration nackBackoff = Duration.ofSeconds(1);
    Duration maxNackBackoff = Duration.ofMinutes(1);
    Listener listener = new Listener() {};

    Options(String agentId) {
      if (agentId == null || agentId.isEmpty()) {
        throw new IllegalArgumentException("agentId must not be empty");
      }
      this.agentId = agentId;
    }

    /** Only messages of these types (others stay for other receivers). */
    public Options types(String... types) {
      this.types.addAll(List.of(types));
      return this;
    }

    /** Handlers running at once, and deliveries outstanding on the stream (default 1). */
    public Options concurrency(int concurrency) {
      if (concurrency < 1) {
        throw new IllegalArgumentException("concurrency must be >= 1");
      }
      this.concurrency = concurrency;
      return this;
    }

    /** The visibility timeout asked for each delivery, extended while held (default 30 s). */
    public Options visibilityTimeout(Duration timeout) {
      if (timeout.compareTo(Duration.ofSeconds(1)) < 0) {
        throw new IllegalArgumentException("visibilityTimeout must be >= 1 s");
      }
      this.visibilityTimeout = timeout;
      return this;
    }

    /** Backoff between stream reconnects and settle retries. */
    public Options backoff(RetryPolicy backoff) {
      this.backoff = backoff;
      return this;
    }

    /**
     * How long the consumer keeps reconnecting while no stream works (default 2 minutes), counted
     * from the first failure since a stream last worked (delivered, or stayed open for a second:
     * an idle inbox sends nothing).
     */
    public Options reconnectFor(Duration budget) {
      this.reconnectFor = budget;
      return this;
    }

    /**
     * The nack delay after a handler error: {@code initial * 2^(delivery_count - 1)}, at most
     * {@code max} (default 1 s, 1 minute).
     */
    public Options nackBackoff(Duration initial, Duration max) {
      this.nackBackoff = initial;
      this.maxNackBackoff = max;
      return this;
    }

    /** Hooks for settles, handler errors and reconnects. */
    public Options listener(Listener listener) {
      this.listener = listener;
      return this;
    }
  }

  /** Options for the inbox of {@code agentId}. */
  public static Options options(String agentId) {
    return new Options(agentId);
  }

  /** The server's limit of receipt handles per call. */
  static final int MAX_RECEIPT_HANDLES = 100;

  /**
   * How long a receive stream must stay open to count as working though it delivered nothing.
   */
  static final Duration STREAM_GRACE = Duration.ofSeconds(1);

  private final StatekeeperClient client;
  private final Options options;
  private final Handler handler;
  private final Map<String, Delivery> held = new ConcurrentHashMap<>();
  private final Semaphore slots;
  private final ExecutorService workers;
  private final ScheduledExecutorService leases;
  private final Thread reader;
  private final AtomicReference<StatekeeperException> failure = new AtomicReference<>();
  private final AtomicInteger reconnects = new AtomicInteger();
  private final Object lock = new Object();
  private volatile boolean closed;
  private Context.CancellableContext context;

  InboxConsumer(StatekeeperClient client, Options options, Handler handler) {
    this.client = client;
    this.options = options;
    this.handler = handler;
    this.slots = new Semaphore(options.concurrency);
    AtomicInteger n = new AtomicInteger();
    this.workers =
        Executors.newFixedThreadPool(
            options.concurrency,
            r -> daemon(r, "statekeeper-inbox-" + options.agentId + "-" + n.incrementAndGet()));
    this.leases =
        Executors.newSingleThreadScheduledExecutor(
            r -> daemon(r, "statekeeper-inbox-lease-" + options.agentId));
    long every = Math.max(200, options.visibilityTimeout.toMillis() / 3);
    leases.scheduleWithFixedDelay(this::extendHeld, every, every, TimeUnit.MILLISECONDS);
    this.reader = daemon(this::receiveLoop, "statekeeper-inbox-reader-" + options.agentId);
    reader.start();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  /** Deliveries received and not yet settled. */
  public int held() {
    return held.size();
  }

  /** Stream reconnects so far. */
  public int reconnects() {
    return reconnects.get();
  }

  private void receiveLoop() {
    int failures = 0;
    long failingSince = 0;
    while (!closed) {
      StatekeeperException last = null;
      long opened = 0;
      boolean delivered = false;
      try {
        Iterator<ReceiveMessagesResponse> stream = open();
        if (stream == null) {
          break;
        }
        opened = System.nanoTime();
        while (stream.hasNext()) {
          ReceiveMessagesResponse response = stream.next();
          delivered = true;
          failures = 0;
          for (Delivery delivery : response.getDeliveriesList()) {
            dispatch(delivery);
          }
        }
      } catch (StatusRuntimeException raw) {
        if (closed) {
          break;
        }
        StatekeeperException error = StatekeeperException.from(raw);
        if (!(error.isRetryable() || error.is(ErrorReason.ERROR_REASON_SLOW_CONSUMER))) {
          failure.compareAndSet(null, error);
          break;
        }
        last = error;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      } catch (RuntimeException | Error unexpected) {
        if (!closed) {
          failure.compareAndSet(null, StatekeeperException.from(unexpected));
        }
        break;
      } finally {
        cancelStream();
      }
      if (closed) {
        break;
      }
      long now = System.nanoTime();
      // The server sends nothing on an idle inbox: a stream that stayed open for STREAM_GRACE
      // worked all the same, and the run of failures (and the reconnect budget) starts anew.
      if (delivered || (opened != 0 && now - opened >= STREAM_GRACE.toNanos())) {
        failures = 0;
      }
      failures++;
      if (failures == 1) {
        failingSince = now;
      } else if (now - failingSince > options.reconnectFor.toNanos()) {
        failure.compareAndSet(
            null,
            last != null
                ? last
                : StatekeeperException.from(
                    Status.UNAVAILABLE.withDescription("ReceiveMessages kept ending").asRuntimeException()));
        break;
      }
      reconnects.incrementAndGet();
      options.listener.onReconnect(last, failures);
      sleep(options.backoff.backoff(failures));
      client.resetConnectBackoff();
    }
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
  }

  private Iterator<ReceiveMessagesResponse> open() {
    synchronized (lock) {
      if (closed) {
        return null;
      }
      context = Context.current().withCancellation();
      MessageServiceGrpc.MessageServiceBlockingStub stub =
          MessageServiceGrpc.newBlockingStub(client.channel());
      ReceiveMessagesRequest request =
          ReceiveMessagesRequest.newBuilder()
              .setAgentId(options.agentId)
              .setMaxInFlight(options.concurrency)
              .setVisibilityTimeout(proto(options.visibilityTimeout))
              .addAllTypes(options.types)
              .build();
      Context previous = context.attach();
      try {
        return stub.receiveMessages(request);
      } finally {
        context.detach(previous);
      }
    }
  }

  private void cancelStream() {
    synchronized (lock) {
      if (context != null) {
        context.cancel(null);
        context = null;
      }
    }
  }

  private void dispatch(Delivery delivery) throws InterruptedException {
    // The server sends no more than max_in_flight unsettled deliveries on a stream; deliveries
    // of an earlier stream still being handled also take a slot, so wait for one.
    held.put(delivery.getReceiptHandle(), delivery);
    slots.acquire();
    try {
      workers.execute(
          () -> {
            try {
              handle(delivery);
            } finally {
              slots.release();
            }
          });
    } catch (RuntimeException rejected) { // closed meanwhile: leave it to its visibility timeout
      slots.release();
      held.remove(delivery.getReceiptHandle());
    }
  }

  private void handle(Delivery delivery) {
    // Whatever the handler or a listener throws (an Error too), the delivery is settled and no
    // longer held: a held receipt would be extended for ever, never settled nor redelivered.
    try {
      Outcome outcome;
      try {
        outcome = handler.handle(delivery);
        if (outcome == null) {
          outcome = Outcome.ack();
        }
      } catch (Throwable thrown) {
        Duration delay = nackDelay(delivery.getDeliveryCount());
        Exception error =
            thrown instanceof Exception e
                ? e
                : new java.util.concurrent.ExecutionException("handler threw " + thrown, thrown);
        try {
          options.listener.onHandlerError(delivery, error, delay);
        } catch (Throwable ignored) {
          // A listener's failure changes nothing: the delivery is nacked.
        }
        outcome = Outcome.nack(delay);
      }
      ReceiptStatus status = settle(delivery, outcome);
      try {
        options.listener.onSettled(delivery, outcome, status);
      } catch (Throwable ignored) {
        // Settled all the same.
      }
    } finally {
      held.remove(delivery.getReceiptHandle());
    }
  }

  private Duration nackDelay(int deliveryCount) {
    long initial = options.nackBackoff.toMillis();
    long delay = initial << Math.min(20, Math.max(0, deliveryCount - 1));
    return Duration.ofMillis(Math.min(options.maxNackBackoff.toMillis(), delay));
  }

  /** Acks or nacks, retrying UNAVAILABLE until the reconnect budget is spent. */
  private ReceiptStatus settle(Delivery delivery, Outcome outcome) {
    long start = System.nanoTime();
    for (int attempt = 1; ; attempt++) {
      try {
        List<ReceiptResult> results;
        if (outcome.kind() == Outcome.Kind.ACK) {
          results =
              client
                  .messages()
                  .ackMessages(
                      AckMessagesRequest.newBuilder()
                          .addReceiptHandles(delivery.getReceiptHandle())
                          .build())
                  .getResultsList();
        } else {
          results =
              client
                  .messages()
                  .nackMessages(
                      NackMessagesRequest.newBuilder()
                          .addReceiptHandles(delivery.getReceiptHandle())
                          .setDelay(proto(outcome.delay()))
                          .setDeadLetter(outcome.kind() == Outcome.Kind.DEAD_LETTER)
                          .setReason(outcome.reason())
                          .build())
                  .getResultsList();
        }
        return results.isEmpty() ? ReceiptStatus.RECEIPT_STATUS_UNSPECIFIED : results.get(0).getStatus();
      } catch (StatusRuntimeException raw) {
        StatekeeperException error = StatekeeperException.from(raw);
        boolean retry =
            error.isRetryable()
                && System.nanoTime() - start < options.reconnectFor.toNanos()
                && !(closed && attempt > 3);
        if (!retry) {
          // Not settled: the message comes back after its visibility timeout.
          return ReceiptStatus.RECEIPT_STATUS_UNSPECIFIED;
        }
        sleep(options.backoff.backoff(attempt));
        client.resetConnectBackoff();
      }
    }
  }

  private void extendHeld() {
    if (held.isEmpty()) {
      return;
    }
    List<String> handles = new ArrayList<>(held.keySet());
    // At most MAX_RECEIPT_HANDLES per call (the server's limit: a larger call extends nothing).
    for (int from = 0; from < handles.size(); from += MAX_RECEIPT_HANDLES) {
      List<String> batch = handles.subList(from, Math.min(handles.size(), from + MAX_RECEIPT_HANDLES));
      try {
        List<ReceiptResult> results =
            client
                .messages()
                .extendVisibility(
                    ExtendVisibilityRequest.newBuilder()
                        .addAllReceiptHandles(batch)
                        .setVisibilityTimeout(proto(options.visibilityTimeout))
                        .build())
                .getResultsList();
        for (ReceiptResult result : results) {
          ReceiptStatus status = result.getStatus();
          if (status != ReceiptStatus.RECEIPT_STATUS_OK) {
            // Stale (EXPIRED, NOT_FOUND, settled meanwhile): extending it again is pointless; the
            // message is or will be delivered again, and the handler's settle reports the status.
            held.remove(result.getReceiptHandle());
          }
        }
      } catch (StatusRuntimeException e) {
        // The next round tries again; a delivery that expired meanwhile is redelivered.
      } catch (RuntimeException unexpected) {
        // Never let the scheduled task die: the next round tries again.
      }
    }
  }

  private void sleep(Duration duration) {
    synchronized (lock) {
      long end = System.nanoTime() + duration.toNanos();
      try {
        for (long left = duration.toMillis(); !closed && left > 0; ) {
          lock.wait(left);
          left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static com.google.protobuf.Duration proto(Duration d) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(d.getSeconds())
        .setNanos(d.getNano())
        .build();
  }

  /** The error that stopped the consumer, or null (still running, or closed by the caller). */
  public StatekeeperException failure() {
    return failure.get();
  }

  /** True until {@link #close} or an error stops the consumer. */
  public boolean isRunning() {
    return !closed;
  }

  /**
   * Blocks until the consumer stops; throws the error that stopped it, if any.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void awaitTermination() throws InterruptedException {
    synchronized (lock) {
      while (!closed) {
        lock.wait();
      }
    }
    reader.join();
    StatekeeperException error = failure.get();
    if (error != null) {
      throw error;
    }
  }

  /**
   * Stops receiving, lets the running handlers finish and settle (up to the visibility timeout),
   * and stops the consumer's threads. Deliveries not handled are redelivered by the server after
   * their visibility timeout.
   */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    cancelStream();
    try {
      reader.join(TimeUnit.SECONDS.toMillis(10));
      workers.shutdown();
      if (!workers.awaitTermination(options.visibilityTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
        workers.shutdownNow();
      }
    } catch (InterruptedException e) {
      workers.shutdownNow();
      Thread.currentThread().interrupt();
    } finally {
      leases.shutdownNow();
    }
  }
}
