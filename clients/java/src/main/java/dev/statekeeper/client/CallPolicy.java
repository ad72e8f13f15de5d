package dev.statekeeper.client;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import dev.statekeeper.v1.AdminServiceGrpc;
import dev.statekeeper.v1.BlackboardServiceGrpc;
import dev.statekeeper.v1.CheckpointServiceGrpc;
import dev.statekeeper.v1.ItemServiceGrpc;
import dev.statekeeper.v1.MemoryServiceGrpc;
import dev.statekeeper.v1.MessageServiceGrpc;
import dev.statekeeper.v1.SessionServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.ServiceDescriptor;
import io.grpc.health.v1.HealthGrpc;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * What the client does to every call: a default deadline, an idempotency key on the mutations
 * that take one, and a retry of UNAVAILABLE only where repeating the call is safe.
 *
 * <p>Which methods are safe is derived from the generated service descriptors, not listed per
 * method: a unary method is retried if its request has a {@code request_id} string field (AIP-155;
 * the client fills it with a random UUID when it is empty, so every attempt of one call carries
 * the same key and the server applies the change once), or if it only reads (its name starts with
 * Get, List, Search, Recall, Query or Check), or if the contract makes a repeat harmless
 * (AckMessages, NackMessages and ExtendVisibility report a repeat per receipt instead of applying
 * it twice). Every other mutation (PutEntry, SaveCheckpoint, ...) is sent once: an UNAVAILABLE
 * answer may come after the server applied it, and the caller knows whether to repeat it.
 * Streaming methods are not retried here (the {@link Watch} and {@link InboxConsumer} resume
 * them).
 */
public final class CallPolicy {
  private CallPolicy() {}

  /** The name of the AIP-155 idempotency field of the statekeeper.v1 requests. */
  public static final String IDEMPOTENCY_FIELD = "request_id";

  private static final List<String> READ_PREFIXES =
      List.of("Get", "List", "Search", "Recall", "Query", "Check");

  private static final Set<String> REPEAT_HARMLESS =
      Set.of("AckMessages", "NackMessages", "ExtendVisibility");

  /** The statekeeper.v1 services (and grpc.health.v1), from the generated code. */
  public static List<ServiceDescriptor> services() {
    return List.of(
        SessionServiceGrpc.getServiceDescriptor(),
        MemoryServiceGrpc.getServiceDescriptor(),
        CheckpointServiceGrpc.getServiceDescriptor(),
        BlackboardServiceGrpc.getServiceDescriptor(),
        MessageServiceGrpc.getServiceDescriptor(),
        ItemServiceGrpc.getServiceDescriptor(),
        AdminServiceGrpc.getServiceDescriptor(),
        HealthGrpc.getServiceDescriptor());
  }

  /** The request message's {@code request_id} field, or null if the method takes none. */
  static FieldDescriptor idempotencyField(MethodDescriptor<?, ?> method) {
    if (!(method.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> pm)
        || !(pm.getMessagePrototype() instanceof Message prototype)) {
      return null;
    }
    FieldDescriptor field = prototype.getDescriptorForType().findFieldByName(IDEMPOTENCY_FIELD);
    return field != null
            && field.getJavaType() == FieldDescriptor.JavaType.STRING
            && !field.isRepeated()
        ? field
        : null;
  }

  /** True if a call of {@code method} that failed with UNAVAILABLE may be made again. */
  public static boolean isRetryable(MethodDescriptor<?, ?> method) {
    if (method.getType() != MethodDescriptor.MethodType.UNARY) {
      return false;
    }
    String name = method.getBareMethodName();
    if (name == null) {
      return false;
    }
    if (idempotencyField(method) != null || REPEAT_HARMLESS.contains(name)) {
      return true;
    }
    for (String prefix : READ_PREFIXES) {
      if (name.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /** The retried methods, "service/method". */
  public static List<String> retryableMethods() {
    List<String> names = new ArrayList<>();
    for (ServiceDescriptor service : services()) {
      for (MethodDescriptor<?, ?> method : service.getMethods()) {
        if (isRetryable(method)) {
          names.add(method.getFullMethodName());
        }
      }
    }
    return names;
  }

  /** The gRPC service config: a retry policy on UNAVAILABLE for the {@link #retryableMethods}. */
  static Map<String, Object> serviceConfig(RetryPolicy retry) {
    List<Object> names = new ArrayList<>();
    for (String full : retryableMethods()) {
      int slash = full.indexOf('/');
      names.add(Map.of("service", full.substring(0, slash), "method", full.substring(slash + 1)));
    }
    Map<String, Object> policy = new LinkedHashMap<>();
    policy.put("maxAttempts", (double) Math.max(2, retry.maxAttempts()));
    policy.put("initialBackoff", seconds(retry.initialBackoff().toNanos()));
    policy.put("maxBackoff", seconds(Math.max(1, retry.maxBackoff().toNanos())));
    policy.put("backoffMultiplier", retry.multiplier());
    policy.put("retryableStatusCodes", List.of("UNAVAILABLE"));
    return Map.of("methodConfig", List.of(Map.of("name", names, "retryPolicy", policy)));
  }

  private static String seconds(long nanos) {
    return String.format(java.util.Locale.ROOT, "%.9fs", Math.max(1, nanos) / 1e9);
  }

  /** The interceptor: default deadline on unary calls without one, and the idempotency key. */
  static ClientInterceptor interceptor(long defaultTimeoutMs) {
    return new ClientInterceptor() {
      @Override
      public <Q, R> ClientCall<Q, R> interceptCall(
          MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
        CallOptions effective = options;
        if (defaultTimeoutMs > 0
            && options.getDeadline() == null
            && method.getType() == MethodDescriptor.MethodType.UNARY) {
          effective = options.withDeadlineAfter(defaultTimeoutMs, TimeUnit.MILLISECONDS);
        }
        FieldDescriptor field = idempotencyField(method);
        ClientCall<Q, R> call = next.newCall(method, effective);
        if (field == null) {
          return call;
        }
        return new SimpleForwardingClientCall<>(call) {
          @Override
          @SuppressWarnings("unchecked")
          public void sendMessage(Q message) {
            super.sendMessage((Q) withRequestId((Message) message, field));
          }
        };
      }
    };
  }

  /** {@code request} with its idempotency field set to a random UUID if it is empty. */
  static Message withRequestId(Message request, FieldDescriptor field) {
    Object current = request.getField(field);
    if (current instanceof String s && !s.isEmpty()) {
      return request;
    }
    return request.toBuilder().setField(field, UUID.randomUUID().toString()).build();
  }
}
