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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One channel to a statekeeper server with the caller's API key on every call, and a blocking stub
 * per service.
 *
 * <pre>{@code
 * try (StatekeeperClient sk = StatekeeperClient.connect("127.0.0.1:50051", "sk-dev")) {
 *   Session s = sk.sessions().createSession(CreateSessionRequest.newBuilder()
 *       .setSession(Session.newBuilder().setUserId("u1")).build()).getSession();
 * }
 * }</pre>
 *
 * <p>Each stub returned carries a default deadline ({@link #DEFAULT_TIMEOUT_MS}); unary calls that
 * fail with UNAVAILABLE are retried with exponential backoff by gRPC itself (service config retry
 * policy); nothing else is retried.
 */
public final class StatekeeperClient implements AutoCloseable {
  /** Deadline of calls made through the stubs of this class, in milliseconds. */
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
    this.authed = ClientInterceptors.intercept(channel, MetadataUtils.newAttachHeadersInterceptor(auth));
    this.timeoutMs = timeoutMs;
  }

  /** Connects in plaintext to {@code target} ("host:port"), sending {@code apiKey} as x-api-key. */
  public static StatekeeperClient connect(String target, String apiKey) {
    return connect(target, apiKey, InsecureChannelCredentials.create(), DEFAULT_TIMEOUT_MS);
  }

  /** Connects with explicit channel credentials (e.g. TLS) and default deadline. */
  public static StatekeeperClient connect(
      String target, String apiKey, ChannelCredentials credentials, long timeoutMs) {
    Metadata auth = new Metadata();
    if (apiKey != null && !apiKey.isEmpty()) {
      auth.put(API_KEY, apiKey);
    }
    return new StatekeeperClient(build(target, credentials, null), auth, timeoutMs);
  }

  /**
   * Connects over TLS ({@link TlsOptions}: root CA, client certificate and key for mTLS, server
   * name override); {@code apiKey} may be null when the server maps the client certificate to a
   * tenant.
   */
  public static StatekeeperClient connect(
      String target, String apiKey, TlsOptions tls, long timeoutMs) {
    Metadata auth = new Metadata();
    if (apiKey != null && !apiKey.isEmpty()) {
      auth.put(API_KEY, apiKey);
    }
    return new StatekeeperClient(
        build(target, tls.credentials(), tls.serverName()), auth, timeoutMs);
  }

  /** Connects sending {@code authorization: Bearer <token>} instead of an API key. */
  public static StatekeeperClient connectWithBearer(
      String target, String token, ChannelCredentials credentials) {
    Metadata auth = new Metadata();
    auth.put(AUTHORIZATION, "Bearer " + token);
    return new StatekeeperClient(build(target, credentials, null), auth, DEFAULT_TIMEOUT_MS);
  }

  private static ManagedChannel build(
      String target, ChannelCredentials credentials, String serverName) {
    Map<String, Object> retryPolicy =
        Map.of(
            "maxAttempts", 5.0,
            "initialBackoff", "0.1s",
            "maxBackoff", "5s",
            "backoffMultiplier", 2.0,
            "retryableStatusCodes", List.of("UNAVAILABLE"));
    List<Object> names =
        List.of(
            Map.of("service", "statekeeper.v1.SessionService"),
            Map.of("service", "statekeeper.v1.MemoryService"),
            Map.of("service", "statekeeper.v1.CheckpointService"),
            Map.of("service", "statekeeper.v1.BlackboardService"),
            Map.of("service", "statekeeper.v1.MessageService"),
            Map.of("service", "statekeeper.v1.ItemService"),
            Map.of("service", "statekeeper.v1.AdminService"),
            Map.of("service", "grpc.health.v1.Health"));
    Map<String, Object> serviceConfig =
        Map.of("methodConfig", List.of(Map.of("name", names, "retryPolicy", retryPolicy)));
    ManagedChannelBuilder<?> builder =
        Grpc.newChannelBuilder(target, credentials)
            .defaultServiceConfig(serviceConfig)
            .enableRetry();
    if (serverName != null && !serverName.isEmpty()) {
      // The authority is the name the server's certificate is verified for (and the SNI).
      builder.overrideAuthority(serverName);
    }
    return builder.build();
  }

  /** The channel with the credentials interceptor, for stubs of your own (e.g. async stubs). */
  public Channel channel() {
    return authed;
  }

  public SessionServiceGrpc.SessionServiceBlockingStub sessions() {
    return SessionServiceGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public MemoryServiceGrpc.MemoryServiceBlockingStub memory() {
    return MemoryServiceGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public CheckpointServiceGrpc.CheckpointServiceBlockingStub checkpoints() {
    return CheckpointServiceGrpc.newBlockingStub(authed)
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public BlackboardServiceGrpc.BlackboardServiceBlockingStub blackboard() {
    return BlackboardServiceGrpc.newBlockingStub(authed)
        .withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** An async blackboard stub without deadline, for long-lived Watch streams. */
  public BlackboardServiceGrpc.BlackboardServiceStub blackboardAsync() {
    return BlackboardServiceGrpc.newStub(authed);
  }

  public MessageServiceGrpc.MessageServiceBlockingStub messages() {
    return MessageServiceGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public ItemServiceGrpc.ItemServiceBlockingStub items() {
    return ItemServiceGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public AdminServiceGrpc.AdminServiceBlockingStub admin() {
    return AdminServiceGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
  }

  public HealthGrpc.HealthBlockingStub health() {
    return HealthGrpc.newBlockingStub(authed).withDeadlineAfter(timeoutMs, TimeUnit.MILLISECONDS);
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
