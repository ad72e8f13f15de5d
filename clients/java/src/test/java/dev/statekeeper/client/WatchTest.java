package dev.statekeeper.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.statekeeper.v1.BlackboardEntry;
import dev.statekeeper.v1.BlackboardEvent;
import dev.statekeeper.v1.BlackboardValue;
import dev.statekeeper.v1.CompactBlackboardRequest;
import dev.statekeeper.v1.ErrorReason;
import dev.statekeeper.v1.ListEntriesRequest;
import dev.statekeeper.v1.PutEntryRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The resuming Watch against a real server, killed (-9) and restarted under it. */
// A safety net only: every wait in the tests is bounded (and scaled by the load) already.
@Timeout(value = 30, unit = TimeUnit.MINUTES)
class WatchTest {
  private static final int RESTARTS = 3;

  private static BlackboardValue value(long i) {
    return BlackboardValue.newBuilder()
        .setJson(Struct.newBuilder().putFields("i", Value.newBuilder().setNumberValue(i).build()))
        .build();
  }

  /** Waits (bounded, scaled by the machine's load) until {@code condition} holds. */
  static void await(String what, Duration base, BooleanSupplier condition) throws Exception {
    long deadline = System.nanoTime() + ServerProcess.scaled(base).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  /** Puts one key, retrying UNAVAILABLE (the server is being restarted) for a bounded time. */
  private static long put(StatekeeperClient sk, String board, String key, long i) throws Exception {
    long deadline = System.nanoTime() + ServerProcess.scaled(Duration.ofSeconds(120)).toNanos();
    while (true) {
      try {
        return sk.blackboard()
            .putEntry(
                PutEntryRequest.newBuilder().setBoard(board).setKey(key).setValue(value(i)).build())
            .getHeader()
            .getRevision();
      } catch (StatusRuntimeException e) {
        // The server is being killed or restarted: no answer, a refused or a broken connection.
        StatekeeperException typed = StatekeeperException.from(e);
        boolean transient_ = typed.isRetryable() || typed.code() == Status.Code.DEADLINE_EXCEEDED;
        if (!transient_ || System.nanoTime() > deadline) {
          throw typed;
        }
        Thread.sleep(50);
        sk.resetConnectBackoff();
      }
    }
  }

  private static long currentRevision(StatekeeperClient sk, String board) {
    return sk.blackboard()
        .listEntries(ListEntriesRequest.newBuilder().setBoard(board).setKeysOnly(true).build())
        .getHeader()
        .getRevision();
  }

  @Test
  void resumesAcrossServerKillsWithoutMissingOrRepeatingAnEvent() throws Exception {
    String board = "resume";
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient writerClient = server.client();
        StatekeeperClient watchClient = server.client()) {
      List<Long> seen = new CopyOnWriteArrayList<>();
      List<Long> written = new CopyOnWriteArrayList<>();
      List<StatekeeperException> reconnectCauses = new CopyOnWriteArrayList<>();
      List<Long> progress = new CopyOnWriteArrayList<>();
      // Every revision of this (fresh) store is a put on this board: watching from revision 1,
      // the events must carry exactly the revisions 1, 2, 3, ... in order.
      Watch watch =
          watchClient.watch(
              WatchOptions.board(board)
                  .startRevision(1)
                  .progressEvery(Duration.ofSeconds(1))
                  .backoff(
                      new RetryPolicy(5, Duration.ofMillis(50), Duration.ofMillis(500), 2, 0.2))
                  .reconnectFor(ServerProcess.scaled(Duration.ofSeconds(180)))
                  .listener(
                      new Watch.Listener() {
                        @Override
                        public void onProgress(long revision) {
                          progress.add(revision);
                        }

                        @Override
                        public void onReconnect(
                            StatekeeperException cause, long resumeRevision, int attempt) {
                          reconnectCauses.add(cause);
                        }
                      }));
      Future<?> reader =
          threads.submit(
              () -> {
                for (BlackboardEvent event : watch) {
                  seen.add(event.getRevision());
                }
                return null;
              });
      AtomicBoolean stop = new AtomicBoolean();
      AtomicInteger puts = new AtomicInteger();
      Future<?> writer =
          threads.submit(
              () -> {
                for (long i = 0; !stop.get(); i++) {
                  written.add(put(writerClient, board, "k/" + (i % 25), i));
                  puts.incrementAndGet();
                  Thread.sleep(5);
                }
                return null;
              });
      try {
        await("first events", Duration.ofSeconds(60), () -> seen.size() >= 20);
        for (int r = 0; r < RESTARTS; r++) {
          int before = puts.get();
          server.kill();
          Thread.sleep(200);
          server.start();
          await(
              "puts after restart " + (r + 1),
              Duration.ofSeconds(120),
              () -> puts.get() >= before + 20 || writer.isDone());
          int seenBefore = seen.size();
          await(
              "events after restart " + (r + 1),
              Duration.ofSeconds(120),
              () -> seen.size() >= seenBefore + 10 || reader.isDone());
          if (reader.isDone()) {
            reader.get(); // throws what ended the watch
            fail("the watch ended");
          }
        }
        stop.set(true);
        writer.get(ServerProcess.scaled(Duration.ofSeconds(120)).toSeconds(), TimeUnit.SECONDS);
        long last = currentRevision(writerClient, board);
        await(
            "the watch to reach revision " + last,
            Duration.ofSeconds(120),
            () -> !seen.isEmpty() && seen.get(seen.size() - 1) >= last || reader.isDone());
        // Quiet board: progress notifications arrive and are resume points.
        int progressBefore = progress.size();
        await("a progress notification", Duration.ofSeconds(60), () -> progress.size() > progressBefore);
        assertTrue(progress.get(progress.size() - 1) >= last);
        assertEquals(progress.get(progress.size() - 1) + 1, watch.resumeRevision());
      } finally {
        stop.set(true);
        watch.close();
        threads.shutdown();
        assertTrue(threads.awaitTermination(60, TimeUnit.SECONDS), "threads did not stop");
      }
      assertNull(reader.get(), "the watch ended cleanly on close");

      long last = currentRevision(writerClient, board);
      List<Long> expected = new ArrayList<>();
      for (long rev = 1; rev <= last; rev++) {
        expected.add(rev);
      }
      assertEquals(expected, seen, "every revision once, in order");
      assertTrue(seen.containsAll(written), "every acknowledged put was seen");
      assertTrue(
          watch.reconnects() >= RESTARTS,
          "reconnects " + watch.reconnects() + " causes " + reconnectCauses);
      assertTrue(watch.streamsOpened() >= RESTARTS + 1);
      for (StatekeeperException cause : reconnectCauses) {
        if (cause != null) {
          assertEquals(Status.Code.UNAVAILABLE, cause.code(), cause.toString());
        }
      }
    }
  }

  @Test
  void aSlowConsumerCancellationIsSurfacedAndResumed() throws Exception {
    // A watcher may lag 4 responses behind; the test stops reading while ~5 MB of puts go by
    // (more than the HTTP/2 window), so the server cancels the stream with SLOW_CONSUMER.
    try (ServerProcess server = ServerProcess.launch("--limit", "blackboard.watch_buffer_responses=4");
        StatekeeperClient sk = server.client()) {
      String board = "slow";
      String big = "x".repeat(16 * 1024);
      List<StatekeeperException> causes = new CopyOnWriteArrayList<>();
      long first = put(sk, board, "k/start", 0);
      try (Watch watch =
          sk.watch(
              WatchOptions.board(board)
                  .startRevision(first)
                  .listener(
                      new Watch.Listener() {
                        @Override
                        public void onReconnect(
                            StatekeeperException cause, long resumeRevision, int attempt) {
                          causes.add(cause);
                        }
                      }))) {
        var events = watch.iterator();
        assertEquals(first, events.next().getRevision());
        long last = first;
        for (int i = 1; i <= 300; i++) {
          last =
              sk.blackboard()
                  .putEntry(
                      PutEntryRequest.newBuilder()
                          .setBoard(board)
                          .setKey("k/" + (i % 10))
                          .setValue(
                              BlackboardValue.newBuilder()
                                  .setJson(
                                      Struct.newBuilder()
                                          .putFields(
                                              "pad", Value.newBuilder().setStringValue(big).build())))
                          .build())
                  .getHeader()
                  .getRevision();
        }
        List<Long> seen = new ArrayList<>();
        seen.add(first);
        while (seen.get(seen.size() - 1) < last) {
          seen.add(events.next().getRevision());
        }
        List<Long> expected = new ArrayList<>();
        for (long rev = first; rev <= last; rev++) {
          expected.add(rev);
        }
        assertEquals(expected, seen, "every revision once, in order, across the cancellation");
        assertTrue(!causes.isEmpty(), "the stream was not cancelled");
        StatekeeperException cause = causes.get(0);
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, cause.code(), String.valueOf(cause));
        assertEquals(ErrorReason.ERROR_REASON_SLOW_CONSUMER, cause.reason());
      }
    }
  }

  @Test
  void compactedHistoryIsReListedThenWatched() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String board = "compacted";
      long rev = 0;
      for (int i = 0; i < 10; i++) {
        rev = put(sk, board, "k/" + (i % 4), i);
      }
      sk.blackboard()
          .compactBlackboard(CompactBlackboardRequest.newBuilder().setRevision(rev - 2).build());

      // Without a handler: the typed error, with the oldest revision still available.
      try (Watch strict = sk.watch(WatchOptions.board(board).startRevision(2))) {
        StatekeeperException e =
            assertThrows(StatekeeperException.class, () -> strict.iterator().hasNext());
        assertEquals(Status.Code.OUT_OF_RANGE, e.code());
        assertEquals(ErrorReason.ERROR_REASON_REVISION_COMPACTED, e.reason());
        assertEquals(rev - 2, e.metadataLong("oldest_revision").orElseThrow());
      }

      // With one: the listing at R, then the events from R + 1.
      List<Watch.Relisting> relistings = Collections.synchronizedList(new ArrayList<>());
      long finalRev = rev;
      try (Watch watch =
          sk.watch(WatchOptions.board(board).prefix("k/").startRevision(2).onCompacted(relistings::add))) {
        ExecutorService thread = Executors.newSingleThreadExecutor();
        try {
          Future<BlackboardEvent> first = thread.submit(() -> watch.iterator().next());
          await("the re-listing", Duration.ofSeconds(60), () -> !relistings.isEmpty());
          Watch.Relisting listing = relistings.get(0);
          assertEquals(finalRev, listing.revision());
          assertEquals(finalRev + 1, listing.startRevision());
          assertEquals(
              List.of("k/0", "k/1", "k/2", "k/3"),
              listing.entries().stream().map(BlackboardEntry::getKey).toList());
          long next = put(sk, board, "k/new", 99);
          BlackboardEvent event =
              first.get(ServerProcess.scaled(Duration.ofSeconds(60)).toSeconds(), TimeUnit.SECONDS);
          assertEquals(next, event.getRevision());
          assertEquals(finalRev + 1, next);
          assertEquals("k/new", event.getEntry().getKey());
          assertEquals(next + 1, watch.resumeRevision());
        } finally {
          watch.close();
          thread.shutdownNow();
        }
      }
    }
  }

  @Test
  void initialSnapshotThenEvents() throws Exception {
    try (ServerProcess server = ServerProcess.launch();
        StatekeeperClient sk = server.client()) {
      String board = "snap";
      long rev = 0;
      for (int i = 0; i < 3; i++) {
        rev = put(sk, board, "s/" + i, i);
      }
      try (Watch watch = sk.watch(WatchOptions.board(board).initialSnapshot(true))) {
        var responses = watch.responses();
        List<String> kinds = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        while (true) {
          var r = responses.next();
          kinds.add(r.getKindCase().name());
          r.getSnapshotChunk().getEntriesList().forEach(e -> keys.add(e.getKey()));
          if (r.hasSnapshotEnd()) {
            assertEquals(rev, r.getSnapshotEnd().getRevision());
            break;
          }
        }
        assertEquals("STARTED", kinds.get(0));
        assertEquals(List.of("s/0", "s/1", "s/2"), keys);
        assertEquals(rev + 1, watch.resumeRevision());
        long next = put(sk, board, "s/3", 3);
        BlackboardEvent event = watch.iterator().next();
        assertEquals(next, event.getRevision());
      }
    }
  }
}
