package dev.statekeeper.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import dev.statekeeper.v1.AdminServiceGrpc;
import dev.statekeeper.v1.BlackboardServiceGrpc;
import dev.statekeeper.v1.CheckpointServiceGrpc;
import dev.statekeeper.v1.ItemServiceGrpc;
import dev.statekeeper.v1.MemoryServiceGrpc;
import dev.statekeeper.v1.MessageServiceGrpc;
import dev.statekeeper.v1.SessionServiceGrpc;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptors;
import io.grpc.Channel;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.MetadataUtils;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * One channel to a statekeeper server with the caller's credentials on every call, a blocking
 * stub per service, and the helpers that do the hard parts: {@link #watch} (a blackboard Watch
 * that resumes across disconnects and restarts) and {@link #consume} (an inbox consumer with
 * ack/nack, visibility extension and backoff).
 *
 * <pre>{@code
 * try (StatekeeperClient sk = StatekeeperClient.builder("127.0.0.1:50051").apiKey("sk-dev").build()) {
 *   Session s = sk.sessions().createSession(CreateSessionRequest.newBuilder()
 *       .setSession(Session.newBuilder().setUserId("u1")).build()).getSession();
 * }
 * }</pre>
 *
 * <p>Every unary call gets a default deadline ({@link #DEFAULT_TIMEOUT_MS} unless the builder says
 * otherwise) when the stub has none. A call that fails with UNAVAILABLE is retried with
 * exponential backoff ({@link RetryPolicy}) only when repeating it is safe: reads, and mutations
 * that carry an idempotency key ({@code request_id}), which the client fills with a random UUID
 * when the request has none, so that every attempt carries the same key (see {@link CallPolicy}).
 * Nothing else is retried. Failures are gRPC {@link StatusRuntimeException}s; {@link
 * StatekeeperException#from} (or {@link #call}) turns one into the typed exception with the
 * ErrorInfo reason as the generated {@code ErrorReason} enum.
 */
public final class StatekeeperClient implements AutoCloseable {
  /** Default deadline of unary calls, in milliseconds. */
  public static final long DEFAULT_TIMEOUT_MS = 30_000;

  private static final Metadata.Key<String> API_KEY =
      Metadata.Key.of("x-api-key", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final ManagedChannel channel;
  private final Channel authed;
  private final long timeoutMs;

  private StatekeeperClient(ManagedChannel channel, Metadata auth, long timeoutMs) {
    this.channel = channel;
    this.authed =
        ClientInterceptors.intercept(
            channel,
            CallPolicy.interceptor(timeoutMs),
            MetadataUtils.newAttachHeadersInterceptor(auth));
    this.timeoutMs = timeoutMs;
  }

  /** Options of a client; every setter returns this. */
  public static final class Builder {
    private final String target;
    private String apiKey;
    private String bearerToken;
    private TlsOptions tls;
    private ChannelCredentials credentials;
    private long timeoutMs = DEFAULT_TIMEOUT_MS;
    private RetryPolicy retry = RetryPolicy.DEFAULT;

    private Builder(String target) {
      this.target = target;
    }

    /** Send {@code x-api-key: key} on every call (null or empty: none). */
    public Builder apiKey(String key) {
      this.apiKey = key;
      return this;
    }

    /** Send {@code authorization: Bearer token} on every call instead of an API key. */
    public Builder bearerToken(String token) {
      this.bearerToken = token;
      return this;
    }

    /** Connect over TLS (mTLS with a client certificate); null: plaintext. */
    public Builder tls(TlsOptions tls) {
      this.tls = tls;
      return this;
    }

    /** Channel credentials of your own (instead of {@link #tls}). */
    public Builder credentials(ChannelCredentials credentials) {
      this.credentials = credentials;
      return this;
    }

    /** Default deadline of unary calls without one (0: none). */
    public Builder timeout(Duration timeout) {
      this.timeoutMs = timeout.toMillis();
      return this;
    }

    /** Retry of UNAVAILABLE on the safe methods ({@link RetryPolicy#NONE}: none). */
    public Builder retry(RetryPolicy retry) {
      this.retry = retry;
      return this;
    }

    /** Opens the channel (lazily: nothing is dialled before the first call). */
    public StatekeeperClient build() {
      if (apiKey != null && !apiKey.isEmpty() && bearerToken != null && !bearerToken.isEmpty()) {
        throw new IllegalArgumentException("pass an API key or a bearer token, not both");
      }
      if (tls != null && credentials != null) {
        throw new IllegalArgumentException("pass tls or credentials, not both");
      }
      Metadata auth = new Metadata();
      if (apiKey != null && !apiKey.isEmpty()) {
        auth.put(API_KEY, apiKey);
      } else if (bearerToken != null && !bearerToken.isEmpty()) {
        auth.put(AUTHORIZATION, "Bearer " + bearerToken);
      }
      ChannelCredentials creds =
          tls != null
              ? tls.credentials()
              : credentials != null ? credentials : InsecureChannelCredentials.create();
      return new StatekeeperClient(
          StatekeeperClient.build(target, creds, tls == null ? null : tls.serverName(), retry),
          auth,
          timeoutMs);
    }
  }

  /** A client of {@code target} ("host:port"); plaintext, no credentials until set. */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /**
   * A client from the environment: STATEKEEPER_ADDR (default 127.0.0.1:50051),
   * STATEKEEPER_API_KEY, and the TLS options of {@link TlsOptions#fromEnv()}.
   */
  public static StatekeeperClient fromEnv() {
    String addr = System.getenv("STATEKEEPER_ADDR");
    return builder(addr == null || addr.isEmpty() ? "127.0.0.1:50051" : addr)
        .apiKey(System.getenv("STATEKEEPER_API_KEY"))
        .tls(TlsOptions.fromEnv())
        .build();
  }

  /** Connects in plaintext to {@code target} ("host:port"), sending {@code apiKey} as x-api-key. */
  public static StatekeeperClient connect(String target, String apiKey) {
    return builder(target).apiKey(apiKey).build();
  }

  /** Connects with explicit channel credentials (e.g. TLS) and default deadline. */
  public static StatekeeperClient connect(
      String target, String apiKey, ChannelCredentials credentials, long timeoutMs) {
    return builder(target)
        .apiKey(apiKey)
        .credentials(credentials)
        .timeout(Duration.ofMillis(timeoutMs))
        .build();
  }

  /**
   * Connects over TLS ({@link TlsOptions}: root CA, client certificate and key for mTLS, server
   * name override); {@code apiKey} may be null when the server maps the client certificate to a
   * tenant.
   */
  public static StatekeeperClient connect(
      String target, String apiKey, TlsOptions tls, long timeoutMs) {
    return builder(target).apiKey(apiKey).tls(tls).timeout(Duration.ofMillis(timeoutMs)).build();
  }

  /** Connects sending {@code authorization: Bearer <token>} instead of an API key. */
  public static StatekeeperClient connectWithBearer(
      String target, String token, ChannelCredentials credentials) {
    return builder(target).bearerToken(token).credentials(credentials).build();
  }

  private static ManagedChannel build(
      String target, ChannelCredentials credentials, String serverName, RetryPolicy retry) {
    ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(target, credentials);
    if (retry.maxAttempts() > 1) {
      builder.defaultServiceConfig(CallPolicy.serviceConfig(retry)).enableRetry();
    } else {
      builder.disableRetry();
    }
    if (serverName != null && !serverName.isEmpty()) {
      // The authority is the name the server's certificate is verified for (and the SNI).
      builder.overrideAuthority(serverName);
    }
    return builder.build();
  }

  /**
   * Runs one call and turns its failure into a {@link StatekeeperException}: {@code
   * sk.call(() -> sk.blackboard().putEntry(request))}.
   */
  public <T> T call(Supplier<T> call) {
    try {
      return call.get();
    } catch (StatusRuntimeException e) {
      throw StatekeeperException.from(e);
    }
  }

  /** A blackboard Watch that resumes across disconnects and restarts (see {@link Watch}). */
  public Watch watch(WatchOptions options) {
    return new Watch(this, options);
  }

  /**
   * Starts consuming an inbox: {@code handler} runs on each delivery and its {@link
   * InboxConsumer.Outcome} acks or nacks it (see {@link InboxConsumer}). Close the consumer to
   * stop it.
   */
  public InboxConsumer consume(InboxConsumer.Options options, InboxConsumer.Handler handler) {
    return new InboxConsumer(this, options, handler);
  }

  /**
   * Makes the next call dial at once instead of waiting out the channel's reconnect backoff (the
   * helpers call it before resuming after a disconnect).
   */
  public void resetConnectBackoff() {
    channel.resetConnectBackoff();
  }

  /**
   * The channel with the credentials, default deadline and idempotency-key interceptors, for
   * stubs of your own (e.g. async or future stubs).
   */
  public Channel channel() {
    return authed;
  }

  /** The default deadline of unary calls, in milliseconds (0: none). */
  public long defaultTimeoutMs() {
    return timeoutMs;
  }

  // The blocking stubs below are cheap; unary calls made through them get the default deadline
  // unless the stub has one (withDeadlineAfter), and the retry of CallPolicy.

  public SessionServiceGrpc.SessionServiceBlockingStub sessions() {
    return SessionServiceGrpc.newBlockingStub(authed);
  }

  public MemoryServiceGrpc.MemoryServiceBlockingStub memory() {
    return MemoryServiceGrpc.newBlockingStub(authed);
  }

  public CheckpointServiceGrpc.CheckpointServiceBlockingStub checkpoints() {
    return CheckpointServiceGrpc.newBlockingStub(authed);
  }

  public BlackboardServiceGrpc.BlackboardServiceBlockingStub blackboard() {
    return BlackboardServiceGrpc.newBlockingStub(authed);
  }

  /** An async blackboard stub (streaming calls get no default deadline). */
  public BlackboardServiceGrpc.BlackboardServiceStub blackboardAsync() {
    return BlackboardServiceGrpc.newStub(authed);
  }

  public MessageServiceGrpc.MessageServiceBlockingStub messages() {
    return MessageServiceGrpc.newBlockingStub(authed);
  }

  public ItemServiceGrpc.ItemServiceBlockingStub items() {
    return ItemServiceGrpc.newBlockingStub(authed);
  }

  public AdminServiceGrpc.AdminServiceBlockingStub admin() {
    return AdminServiceGrpc.newBlockingStub(authed);
  }

  public HealthGrpc.HealthBlockingStub health() {
    return HealthGrpc.newBlockingStub(authed);
  }

  /** The google.rpc.ErrorInfo the server attached to a failed call (AIP-193), if any. */
  public static Optional<ErrorInfo> errorInfo(Throwable error) {
    com.google.rpc.Status status = StatusProto.fromThrowable(error);
    if (status == null) {
      return Optional.empty();
    }
    for (com.google.protobuf.Any detail : status.getDetailsList()) {
      if (detail.is(ErrorInfo.class)) {
        try {
          return Optional.of(detail.unpack(ErrorInfo.class));
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /** True if the call failed with UNIMPLEMENTED: the server does not serve that method. */
  public static boolean isUnimplemented(Throwable error) {
    return error instanceof StatusRuntimeException
        && ((StatusRuntimeException) error).getStatus().getCode() == Status.Code.UNIMPLEMENTED;
  }

  @Override
  public void close() {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
