package dev.statekeeper.client;

import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.rpc.ErrorInfo;
import dev.statekeeper.v1.ErrorReason;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import java.util.Map;
import java.util.Optional;

/**
 * A failed statekeeper call, with the server's AIP-193 {@code google.rpc.ErrorInfo} turned into
 * the generated {@link ErrorReason} enum so that callers can {@code switch} on it:
 *
 * <pre>{@code
 * try {
 *   sk.call(() -> sk.blackboard().putEntry(request));
 * } catch (StatekeeperException e) {
 *   switch (e.reason()) {
 *     case ERROR_REASON_REVISION_MISMATCH -> reread(e.metadata("current_revision"));
 *     case ERROR_REASON_LIMIT_EXCEEDED -> shrink();
 *     default -> throw e;
 *   }
 * }
 * }</pre>
 *
 * <p>The mapping is derived from the generated enum (the wire reason is the value name without
 * the {@code ERROR_REASON_} prefix, see common.proto), so a reason added to the proto is known
 * here after a rebuild. A reason this build does not know is {@link ErrorReason#UNRECOGNIZED}
 * ({@link #reasonName()} keeps the string); no ErrorInfo at all is {@link
 * ErrorReason#ERROR_REASON_UNSPECIFIED}.
 *
 * <p>It is a {@link StatusRuntimeException}, so code that catches that keeps working. UNIMPLEMENTED
 * is the subclass {@link ServiceNotImplementedException}.
 */
public class StatekeeperException extends StatusRuntimeException {
  private static final long serialVersionUID = 1L;

  /** The {@code domain} of every ErrorInfo the statekeeper server sends. */
  public static final String DOMAIN = "statekeeper.dev";

  /** The prefix of the generated enum's value names that the wire reason goes without. */
  public static final String REASON_PREFIX = "ERROR_REASON_";

  private final ErrorReason reason;
  private final String reasonName;
  private final String domain;
  private final Map<String, String> metadata;

  StatekeeperException(Status status, Metadata trailers, ErrorInfo info) {
    super(status, trailers);
    this.reasonName = info == null ? "" : info.getReason();
    this.reason = reasonOf(reasonName);
    this.domain = info == null ? "" : info.getDomain();
    this.metadata = info == null ? Map.of() : Map.copyOf(info.getMetadataMap());
  }

  /**
   * The typed exception for any failure of a call: {@code error} itself if it already is one, a
   * {@link StatusRuntimeException} or {@link StatusException} (possibly as a cause) with its
   * ErrorInfo decoded, or UNKNOWN for anything else.
   */
  public static StatekeeperException from(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause()) {
      if (t instanceof StatekeeperException se) {
        return se;
      }
      if (t instanceof StatusRuntimeException sre) {
        return of(sre.getStatus(), sre.getTrailers(), t);
      }
      if (t instanceof StatusException se) {
        return of(se.getStatus(), se.getTrailers(), t);
      }
    }
    return of(Status.UNKNOWN.withDescription(String.valueOf(error)).withCause(error), null, error);
  }

  private static StatekeeperException of(Status status, Metadata trailers, Throwable original) {
    ErrorInfo info = StatekeeperClient.errorInfo(original).orElse(null);
    Status withCause = status.getCause() == null ? status.withCause(original) : status;
    if (status.getCode() == Status.Code.UNIMPLEMENTED) {
      return new ServiceNotImplementedException(withCause, trailers, info);
    }
    return new StatekeeperException(withCause, trailers, info);
  }

  /**
   * The generated enum value of a wire reason ("ETAG_MISMATCH"): looked up in the enum's
   * descriptor, so every value of the proto is known. Empty: UNSPECIFIED; unknown: UNRECOGNIZED.
   */
  public static ErrorReason reasonOf(String wireReason) {
    if (wireReason == null || wireReason.isEmpty()) {
      return ErrorReason.ERROR_REASON_UNSPECIFIED;
    }
    EnumValueDescriptor value =
        ErrorReason.getDescriptor().findValueByName(REASON_PREFIX + wireReason);
    return value == null ? ErrorReason.UNRECOGNIZED : ErrorReason.valueOf(value);
  }

  /** The wire form of a reason (the value name without {@code ERROR_REASON_}). */
  public static String wireName(ErrorReason reason) {
    if (reason == ErrorReason.UNRECOGNIZED) {
      throw new IllegalArgumentException("UNRECOGNIZED has no wire name");
    }
    return reason.getValueDescriptor().getName().substring(REASON_PREFIX.length());
  }

  /** The canonical status code. */
  public Status.Code code() {
    return getStatus().getCode();
  }

  /** The ErrorInfo reason as the generated enum (see the class comment). */
  public ErrorReason reason() {
    return reason;
  }

  /** The ErrorInfo reason as sent, e.g. "ETAG_MISMATCH"; empty without ErrorInfo. */
  public String reasonName() {
    return reasonName;
  }

  /** The ErrorInfo domain ({@link #DOMAIN} for the statekeeper server); empty without one. */
  public String domain() {
    return domain;
  }

  /** The ErrorInfo metadata, e.g. {"field": "session_id"} or {"current_revision": "12"}. */
  public Map<String, String> metadata() {
    return metadata;
  }

  /** One ErrorInfo metadata entry. */
  public Optional<String> metadata(String key) {
    return Optional.ofNullable(metadata.get(key));
  }

  /** A metadata entry that holds a number (e.g. "current_revision", "oldest_revision"). */
  public Optional<Long> metadataLong(String key) {
    try {
      return metadata(key).map(Long::parseLong);
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  /** True if the server sent this reason. */
  public boolean is(ErrorReason expected) {
    return reason == expected;
  }

  /**
   * True if the server was not reached or the connection broke: UNAVAILABLE, or UNKNOWN caused by
   * a closed connection (grpc-java reports a write on a connection the server's end closed as
   * UNKNOWN "channel closed"). A read, or a mutation with its idempotency key, may be made again.
   */
  public boolean isRetryable() {
    if (code() == Status.Code.UNAVAILABLE) {
      return true;
    }
    if (code() != Status.Code.UNKNOWN) {
      return false;
    }
    for (Throwable t = getStatus().getCause(); t != null; t = t.getCause()) {
      if (t instanceof java.io.IOException) { // ClosedChannelException is one
        return true;
      }
      if (t == t.getCause()) {
        break;
      }
    }
    return false;
  }

  @Override
  public String getMessage() {
    String base = super.getMessage();
    return reasonName.isEmpty() ? base : base + " [" + reasonName + "]";
  }
}
