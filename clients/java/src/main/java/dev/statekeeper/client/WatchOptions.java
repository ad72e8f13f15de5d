package dev.statekeeper.client;

import dev.statekeeper.v1.BlackboardEventType;
import dev.statekeeper.v1.WatchRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a {@link Watch} watches and how it resumes. Every setter returns this.
 *
 * <pre>{@code
 * WatchOptions.board("team-1").prefix("plan/").startRevision(listing.revision() + 1)
 *     .progressEvery(Duration.ofSeconds(5))
 *     .onCompacted(relisting -> rebuild(relisting.entries(), relisting.revision()));
 * }</pre>
 */
public final class WatchOptions {
  final String board;
  String prefix;
  String pattern;
  long startRevision;
  boolean initialSnapshot;
  boolean prevValue;
  Duration progressEvery;
  final List<BlackboardEventType> eventTypes = new ArrayList<>();
  Consumer<Watch.Relisting> onCompacted;
  Watch.Listener listener = new Watch.Listener() {};
  RetryPolicy backoff = RetryPolicy.DEFAULT;
  Duration reconnectFor = Duration.ofMinutes(2);

  private WatchOptions(String board) {
    if (board == null || board.isEmpty()) {
      throw new IllegalArgumentException("board must not be empty");
    }
    this.board = board;
  }

  /** Watch every key of {@code board} (narrow it with {@link #prefix} or {@link #pattern}). */
  public static WatchOptions board(String board) {
    return new WatchOptions(board);
  }

  /** Only keys starting with {@code prefix}. */
  public WatchOptions prefix(String prefix) {
    if (pattern != null) {
      throw new IllegalArgumentException("pass prefix or pattern, not both");
    }
    this.prefix = prefix;
    return this;
  }

  /** Only keys matching the glob {@code pattern} (see blackboard.proto). */
  public WatchOptions pattern(String pattern) {
    if (prefix != null) {
      throw new IllegalArgumentException("pass prefix or pattern, not both");
    }
    this.pattern = pattern;
    return this;
  }

  /**
   * The first revision to deliver; 0 (the default): the changes after the current revision. To
   * continue from a listing or read, pass its {@code header.revision + 1}.
   */
  public WatchOptions startRevision(long revision) {
    if (revision < 0) {
      throw new IllegalArgumentException("startRevision must be >= 0");
    }
    this.startRevision = revision;
    return this;
  }

  /** Send the matching entries first, between snapshot markers (see {@link Watch#responses}). */
  public WatchOptions initialSnapshot(boolean initialSnapshot) {
    this.initialSnapshot = initialSnapshot;
    return this;
  }

  /** Events carry the entry as it was before the change. */
  public WatchOptions prevValue(boolean prevValue) {
    this.prevValue = prevValue;
    return this;
  }

  /**
   * Ask the server for a progress notification when nothing was sent for this long; the watch
   * reports it to {@link Watch.Listener#onProgress} and keeps it as its resume point.
   */
  public WatchOptions progressEvery(Duration interval) {
    this.progressEvery = interval;
    return this;
  }

  /** Only events of these kinds. */
  public WatchOptions eventTypes(BlackboardEventType... types) {
    this.eventTypes.addAll(List.of(types));
    return this;
  }

  /**
   * What to do when the history to replay was compacted (OUT_OF_RANGE, REVISION_COMPACTED): the
   * watch lists the matching keys at the current revision R (all pages, one revision), gives them
   * and R to {@code handler}, then continues with the events from R + 1. Without a handler (the
   * default) the watch ends by throwing the {@link StatekeeperException} (reason
   * ERROR_REASON_REVISION_COMPACTED, metadata "oldest_revision").
   */
  public WatchOptions onCompacted(Consumer<Watch.Relisting> handler) {
    this.onCompacted = handler;
    return this;
  }

  /** Hooks for progress notifications and reconnects. */
  public WatchOptions listener(Watch.Listener listener) {
    this.listener = listener;
    return this;
  }

  /** Backoff between reconnects (its maxAttempts is not used: see {@link #reconnectFor}). */
  public WatchOptions backoff(RetryPolicy backoff) {
    this.backoff = backoff;
    return this;
  }

  /**
   * How long the watch keeps reconnecting while no stream works (default 2 minutes); then it
   * throws the last error. Any response received resets the clock.
   */
  public WatchOptions reconnectFor(Duration budget) {
    this.reconnectFor = budget;
    return this;
  }

  WatchRequest request(long start, boolean snapshot) {
    WatchRequest.Builder b =
        WatchRequest.newBuilder()
            .setBoard(board)
            .setStartRevision(start)
            .setInitialSnapshot(snapshot)
            .setPrevValue(prevValue)
            .addAllEventTypes(eventTypes);
    if (prefix != null) {
      b.setPrefix(prefix);
    } else if (pattern != null) {
      b.setPattern(pattern);
    }
    if (progressEvery != null) {
      b.setProgressNotifyInterval(
          com.google.protobuf.Duration.newBuilder()
              .setSeconds(progressEvery.getSeconds())
              .setNanos(progressEvery.getNano()));
    }
    return b.build();
  }
}
