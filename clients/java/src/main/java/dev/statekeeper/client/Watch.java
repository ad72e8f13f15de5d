package dev.statekeeper.client;

import dev.statekeeper.v1.BlackboardEntry;
import dev.statekeeper.v1.BlackboardEvent;
import dev.statekeeper.v1.BlackboardServiceGrpc;
import dev.statekeeper.v1.ErrorReason;
import dev.statekeeper.v1.ListEntriesRequest;
import dev.statekeeper.v1.ListEntriesResponse;
import dev.statekeeper.v1.WatchResponse;
import io.grpc.Context;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;

/**
 * A blackboard Watch that resumes where it stopped.
 *
 * <pre>{@code
 * try (Watch watch = sk.watch(WatchOptions.board("team-1").prefix("plan/"))) {
 *   for (BlackboardEvent event : watch) {      // in revision order, none missed or repeated
 *     System.out.println(event.getType() + " " + event.getEntry().getKey());
 *   }
 * }
 * }</pre>
 *
 * <p>Every Watch response carries a {@code resume_revision}: a new Watch from it continues exactly
 * after that response, on any replica (blackboard.proto). The watch keeps it (also from progress
 * notifications and the end of an initial snapshot), and when the stream breaks with UNAVAILABLE
 * (server restart, lost connection; see {@link StatekeeperException#isRetryable}) or
 * RESOURCE_EXHAUSTED with reason SLOW_CONSUMER, it tells
 * {@link Listener#onReconnect} and opens a new stream from it after an exponential backoff,
 * resetting the channel's connect backoff so that a restarted server is reached at once. It gives
 * up, throwing the last error, when no stream worked for {@link WatchOptions#reconnectFor}.
 *
 * <p>OUT_OF_RANGE (REVISION_COMPACTED: the history to replay is gone) either throws, or, with
 * {@link WatchOptions#onCompacted}, does the documented re-list-then-watch: it lists the matching
 * keys at the current revision R, hands them and R to the handler ({@link Relisting}) and goes on
 * with the events from R + 1. A snapshot interrupted half way is taken again from the start.
 * Every other error ends the iteration as a {@link StatekeeperException} (UNIMPLEMENTED as {@link
 * ServiceNotImplementedException}).
 *
 * <p>One thread iterates; {@link #close} may be called from any thread and ends the iteration.
 */
public final class Watch implements Iterable<BlackboardEvent>, AutoCloseable {

  /**
   * The listing that replaces the compacted history: the matching entries at {@code revision};
   * the watch continues with the events from {@link #startRevision()}.
   *
   * @param entries the matching entries, by key
   * @param revision the revision of the listing
   * @param cause the OUT_OF_RANGE error that made the watch re-list
   */
  public record Relisting(List<BlackboardEntry> entries, long revision, StatekeeperException cause) {
    /** The revision the watch continues at: {@code revision + 1}. */
    public long startRevision() {
      return revision + 1;
    }
  }

  /** Hooks called on the iterating thread; every method has a no-op default. */
  public interface Listener {
    /** A stream was established ({@code started}), delivering events from {@code revision}. */
    default void onStarted(long revision) {}

    /** A progress notification: every matching event at or below {@code revision} was delivered. */
    default void onProgress(long revision) {}

    /**
     * A stream broke and the watch will open a new one from {@code resumeRevision} after a
     * backoff; {@code cause} is UNAVAILABLE or SLOW_CONSUMER (see {@link
     * StatekeeperException#reason()}), or null if the stream ended without an error.
     */
    default void onReconnect(StatekeeperException cause, long resumeRevision, int attempt) {}
  }

  private final StatekeeperClient client;
  private final WatchOptions options;
  private final ArrayDeque<BlackboardEvent> pending = new ArrayDeque<>();
  // The resume revision of the response whose events are pending.
  private long pendingResume;
  private long resumeRevision;
  private boolean snapshotPending;
  private StatekeeperException compacted;
  private long progressRevision;
  private int streamsOpened;
  private int reconnects;
  private volatile boolean closed;
  private Context.CancellableContext context;
  private Iterator<WatchResponse> stream;

  Watch(StatekeeperClient client, WatchOptions options) {
    this.client = client;
    this.options = options;
    this.resumeRevision = options.startRevision;
    this.snapshotPending = options.initialSnapshot;
  }

  /**
   * The revision a new Watch would start at to continue this one (0: "now", nothing seen yet).
   * While the event iterator hands out the events of one response, it does not pass the revision
   * of the event last handed out until every event of that revision was (a checkpoint may repeat
   * events of one revision, never miss one).
   */
  public synchronized long resumeRevision() {
    return resumeRevision;
  }

  /** The revision of the last progress notification (0 if none). */
  public synchronized long progressRevision() {
    return progressRevision;
  }

  /** Streams opened so far: 1 + the reconnects. */
  public synchronized int streamsOpened() {
    return streamsOpened;
  }

  /** Reconnects so far. */
  public synchronized int reconnects() {
    return reconnects;
  }

  /**
   * The next stream message (started, snapshot markers and chunks, events, progress), resuming
   * across broken streams; null once the watch is closed.
   *
   * @throws StatekeeperException when the watch cannot go on (see the class comment)
   */
  public WatchResponse nextResponse() {
    int failures = 0;
    long failingSince = 0;
    StatekeeperException last = null;
    while (!closed) {
      try {
        if (compacted != null) {
          relist(compacted);
          compacted = null;
          continue;
        }
        Iterator<WatchResponse> current = stream();
        if (current == null) {
          return null;
        }
        if (current.hasNext()) {
          WatchResponse response = current.next();
          observe(response);
          return response;
        }
        last = null; // ended without an error: resume all the same
      } catch (StatusRuntimeException raw) {
        if (closed) {
          return null;
        }
        StatekeeperException error = StatekeeperException.from(raw);
        dropStream();
        if (error.code() == Status.Code.OUT_OF_RANGE
            && error.is(ErrorReason.ERROR_REASON_REVISION_COMPACTED)
            && options.onCompacted != null) {
          compacted = error;
          continue;
        }
        if (!resumable(error)) {
          throw error;
        }
        last = error;
      }
      dropStream();
      if (closed) {
        return null;
      }
      failures++;
      long now = System.nanoTime();
      if (failures == 1) {
        failingSince = now;
      } else if (now - failingSince > options.reconnectFor.toNanos()) {
        if (last != null) {
          throw last;
        }
        throw StatekeeperException.from(
            Status.UNAVAILABLE.withDescription("Watch streams kept ending").asRuntimeException());
      }
      long resumeAt;
      synchronized (this) {
        reconnects++;
        resumeAt = resumeRevision;
      }
      options.listener.onReconnect(last, resumeAt, failures);
      pause(options.backoff.backoff(failures).toMillis());
      client.resetConnectBackoff();
    }
    return null;
  }

  private static boolean resumable(StatekeeperException error) {
    return error.isRetryable()
        || (error.code() == Status.Code.RESOURCE_EXHAUSTED
            && error.is(ErrorReason.ERROR_REASON_SLOW_CONSUMER));
  }

  private synchronized Iterator<WatchResponse> stream() {
    if (closed) {
      return null;
    }
    if (stream == null) {
      context = Context.current().withCancellation();
      BlackboardServiceGrpc.BlackboardServiceBlockingStub stub =
          BlackboardServiceGrpc.newBlockingStub(client.channel());
      Context previous = context.attach();
      try {
        stream = stub.watch(options.request(resumeRevision, snapshotPending));
      } finally {
        context.detach(previous);
      }
      streamsOpened++;
    }
    return stream;
  }

  private synchronized void dropStream() {
    if (context != null) {
      context.cancel(null);
    }
    context = null;
    stream = null;
  }

  private void observe(WatchResponse response) {
    long progress = 0;
    long started = -1;
    synchronized (this) {
      switch (response.getKindCase()) {
        case SNAPSHOT_END -> snapshotPending = false;
        case PROGRESS -> {
          progressRevision = response.getProgress().getRevision();
          progress = progressRevision;
        }
        case STARTED -> started = response.getStarted().getStartRevision();
        default -> {}
      }
      // A snapshot cannot be resumed half way: a broken stream takes it again from the start.
      if (!snapshotPending) {
        if (response.getResumeRevision() > 0) {
          resumeRevision = response.getResumeRevision();
        } else if (started > 0) {
          resumeRevision = started;
        }
      }
    }
    if (started >= 0) {
      options.listener.onStarted(started);
    }
    if (progress > 0) {
      options.listener.onProgress(progress);
    }
  }

  /** Re-list then watch: the matching keys at the current revision R, then events from R + 1. */
  private void relist(StatekeeperException cause) {
    List<BlackboardEntry> entries = new ArrayList<>();
    String token = "";
    long revision;
    do {
      ListEntriesRequest.Builder request =
          ListEntriesRequest.newBuilder().setBoard(options.board).setPageToken(token);
      if (options.prefix != null) {
        request.setPrefix(options.prefix);
      } else if (options.pattern != null) {
        request.setPattern(options.pattern);
      }
      ListEntriesResponse page = client.blackboard().listEntries(request.build());
      entries.addAll(page.getEntriesList());
      revision = page.getHeader().getRevision();
      token = page.getNextPageToken();
    } while (!token.isEmpty());
    options.onCompacted.accept(new Relisting(List.copyOf(entries), revision, cause));
    synchronized (this) {
      resumeRevision = revision + 1;
      snapshotPending = false;
    }
  }

  private synchronized void pause(long millis) {
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    try {
      for (long left = millis; !closed && left > 0; ) {
        wait(left);
        left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closed = true;
    }
  }

  /** Every stream message, resuming across broken streams (see {@link #nextResponse}). */
  public Iterator<WatchResponse> responses() {
    return new Iterator<>() {
      private WatchResponse next;

      @Override
      public boolean hasNext() {
        if (next == null) {
          next = nextResponse();
        }
        return next != null;
      }

      @Override
      public WatchResponse next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        WatchResponse r = next;
        next = null;
        return r;
      }
    };
  }

  /** The events, in revision order, resuming across broken streams; ends when closed. */
  @Override
  public Iterator<BlackboardEvent> iterator() {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        while (pending.isEmpty()) {
          WatchResponse response = nextResponse();
          if (response == null) {
            return false;
          }
          if (response.getEvents().getEventsCount() > 0) {
            synchronized (Watch.this) {
              pendingResume = resumeRevision;
            }
          }
          pending.addAll(response.getEvents().getEventsList());
        }
        return true;
      }

      @Override
      public BlackboardEvent next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        BlackboardEvent event = pending.poll();
        yielding(event);
        return event;
      }
    };
  }

  /**
   * Sets the resume revision for the moment {@code event}, polled from {@link #pending}, is handed
   * out: its revision while events of the same revision follow (a transaction's events share one),
   * past it otherwise, and the response's resume point after its last event. A checkpoint taken
   * after any event may repeat events of that revision but never misses one.
   */
  private synchronized void yielding(BlackboardEvent event) {
    if (snapshotPending) {
      return;
    }
    BlackboardEvent following = pending.peek();
    if (following == null) {
      resumeRevision = pendingResume;
    } else if (following.getRevision() == event.getRevision()) {
      resumeRevision = event.getRevision();
    } else {
      resumeRevision = event.getRevision() + 1;
    }
  }

  /** Ends the watch; an iteration in progress (on another thread) stops. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      notifyAll();
    }
    dropStream();
  }
}
