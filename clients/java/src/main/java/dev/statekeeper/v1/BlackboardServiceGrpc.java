package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * BlackboardService is a shared key/value space through which agents
 * coordinate, with the semantics of etcd's KV and Watch APIs.
 * Data model:
 * * A tenant has any number of boards (named by a string; a board exists as
 *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
 *   without NUL, up to the configured length) mapped to values.
 * * Revisions: the tenant has one store revision, a counter shared by all its
 *   boards. Every mutation (put, delete, expiry, or a whole transaction)
 *   increments it by one, and every change it made carries that revision.
 *   Revisions are never reused and never go back. Every response carries the
 *   current revision in its `header`.
 * * Each entry records `create_revision` (revision of its creation),
 *   `mod_revision` (revision of its last change) and `version` (number of
 *   puts since creation, 1 for a new key; a deleted key starts again at 1).
 * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
 *   is invisible to every read. The server then removes it as a mutation of
 *   its own, with an EXPIRE event, normally within a second; any write to an
 *   expired key is applied after that removal, so it sees the key absent.
 * * History: the server keeps past revisions for reads at a revision and for
 *   watches, back to the oldest revision not compacted (`oldest_revision` in
 *   every header). It compacts automatically after the configured retention;
 *   Compact forces it.
 * Patterns: a `prefix` matches keys that start with it (the empty prefix
 * matches every key of the board). A glob `pattern` matches whole keys: `*`
 * matches any run of characters except "/", `**` any run including "/", `?`
 * one character except "/", `[abc]` and `[a-z]` one character of the class,
 * and a backslash escapes the next character.
 * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
 * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class BlackboardServiceGrpc {

  private BlackboardServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.BlackboardService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.PutEntryRequest,
      dev.statekeeper.v1.PutEntryResponse> getPutEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PutEntry",
      requestType = dev.statekeeper.v1.PutEntryRequest.class,
      responseType = dev.statekeeper.v1.PutEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.PutEntryRequest,
      dev.statekeeper.v1.PutEntryResponse> getPutEntryMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.PutEntryRequest, dev.statekeeper.v1.PutEntryResponse> getPutEntryMethod;
    if ((getPutEntryMethod = BlackboardServiceGrpc.getPutEntryMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getPutEntryMethod = BlackboardServiceGrpc.getPutEntryMethod) == null) {
          BlackboardServiceGrpc.getPutEntryMethod = getPutEntryMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.PutEntryRequest, dev.statekeeper.v1.PutEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PutEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PutEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PutEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("PutEntry"))
              .build();
        }
      }
    }
    return getPutEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEntryRequest,
      dev.statekeeper.v1.GetEntryResponse> getGetEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetEntry",
      requestType = dev.statekeeper.v1.GetEntryRequest.class,
      responseType = dev.statekeeper.v1.GetEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEntryRequest,
      dev.statekeeper.v1.GetEntryResponse> getGetEntryMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEntryRequest, dev.statekeeper.v1.GetEntryResponse> getGetEntryMethod;
    if ((getGetEntryMethod = BlackboardServiceGrpc.getGetEntryMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getGetEntryMethod = BlackboardServiceGrpc.getGetEntryMethod) == null) {
          BlackboardServiceGrpc.getGetEntryMethod = getGetEntryMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetEntryRequest, dev.statekeeper.v1.GetEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("GetEntry"))
              .build();
        }
      }
    }
    return getGetEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEntryRequest,
      dev.statekeeper.v1.DeleteEntryResponse> getDeleteEntryMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteEntry",
      requestType = dev.statekeeper.v1.DeleteEntryRequest.class,
      responseType = dev.statekeeper.v1.DeleteEntryResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEntryRequest,
      dev.statekeeper.v1.DeleteEntryResponse> getDeleteEntryMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEntryRequest, dev.statekeeper.v1.DeleteEntryResponse> getDeleteEntryMethod;
    if ((getDeleteEntryMethod = BlackboardServiceGrpc.getDeleteEntryMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getDeleteEntryMethod = BlackboardServiceGrpc.getDeleteEntryMethod) == null) {
          BlackboardServiceGrpc.getDeleteEntryMethod = getDeleteEntryMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeleteEntryRequest, dev.statekeeper.v1.DeleteEntryResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteEntry"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteEntryRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteEntryResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("DeleteEntry"))
              .build();
        }
      }
    }
    return getDeleteEntryMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEntriesRequest,
      dev.statekeeper.v1.ListEntriesResponse> getListEntriesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListEntries",
      requestType = dev.statekeeper.v1.ListEntriesRequest.class,
      responseType = dev.statekeeper.v1.ListEntriesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEntriesRequest,
      dev.statekeeper.v1.ListEntriesResponse> getListEntriesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEntriesRequest, dev.statekeeper.v1.ListEntriesResponse> getListEntriesMethod;
    if ((getListEntriesMethod = BlackboardServiceGrpc.getListEntriesMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getListEntriesMethod = BlackboardServiceGrpc.getListEntriesMethod) == null) {
          BlackboardServiceGrpc.getListEntriesMethod = getListEntriesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListEntriesRequest, dev.statekeeper.v1.ListEntriesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListEntries"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListEntriesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListEntriesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("ListEntries"))
              .build();
        }
      }
    }
    return getListEntriesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.TxnRequest,
      dev.statekeeper.v1.TxnResponse> getTxnMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Txn",
      requestType = dev.statekeeper.v1.TxnRequest.class,
      responseType = dev.statekeeper.v1.TxnResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.TxnRequest,
      dev.statekeeper.v1.TxnResponse> getTxnMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.TxnRequest, dev.statekeeper.v1.TxnResponse> getTxnMethod;
    if ((getTxnMethod = BlackboardServiceGrpc.getTxnMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getTxnMethod = BlackboardServiceGrpc.getTxnMethod) == null) {
          BlackboardServiceGrpc.getTxnMethod = getTxnMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.TxnRequest, dev.statekeeper.v1.TxnResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Txn"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.TxnRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.TxnResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("Txn"))
              .build();
        }
      }
    }
    return getTxnMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.WatchRequest,
      dev.statekeeper.v1.WatchResponse> getWatchMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Watch",
      requestType = dev.statekeeper.v1.WatchRequest.class,
      responseType = dev.statekeeper.v1.WatchResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.WatchRequest,
      dev.statekeeper.v1.WatchResponse> getWatchMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.WatchRequest, dev.statekeeper.v1.WatchResponse> getWatchMethod;
    if ((getWatchMethod = BlackboardServiceGrpc.getWatchMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getWatchMethod = BlackboardServiceGrpc.getWatchMethod) == null) {
          BlackboardServiceGrpc.getWatchMethod = getWatchMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.WatchRequest, dev.statekeeper.v1.WatchResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Watch"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.WatchRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.WatchResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("Watch"))
              .build();
        }
      }
    }
    return getWatchMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactBlackboardRequest,
      dev.statekeeper.v1.CompactBlackboardResponse> getCompactBlackboardMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CompactBlackboard",
      requestType = dev.statekeeper.v1.CompactBlackboardRequest.class,
      responseType = dev.statekeeper.v1.CompactBlackboardResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactBlackboardRequest,
      dev.statekeeper.v1.CompactBlackboardResponse> getCompactBlackboardMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactBlackboardRequest, dev.statekeeper.v1.CompactBlackboardResponse> getCompactBlackboardMethod;
    if ((getCompactBlackboardMethod = BlackboardServiceGrpc.getCompactBlackboardMethod) == null) {
      synchronized (BlackboardServiceGrpc.class) {
        if ((getCompactBlackboardMethod = BlackboardServiceGrpc.getCompactBlackboardMethod) == null) {
          BlackboardServiceGrpc.getCompactBlackboardMethod = getCompactBlackboardMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CompactBlackboardRequest, dev.statekeeper.v1.CompactBlackboardResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CompactBlackboard"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompactBlackboardRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompactBlackboardResponse.getDefaultInstance()))
              .setSchemaDescriptor(new BlackboardServiceMethodDescriptorSupplier("CompactBlackboard"))
              .build();
        }
      }
    }
    return getCompactBlackboardMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static BlackboardServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceStub>() {
        @java.lang.Override
        public BlackboardServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new BlackboardServiceStub(channel, callOptions);
        }
      };
    return BlackboardServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static BlackboardServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceBlockingV2Stub>() {
        @java.lang.Override
        public BlackboardServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new BlackboardServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return BlackboardServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static BlackboardServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceBlockingStub>() {
        @java.lang.Override
        public BlackboardServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new BlackboardServiceBlockingStub(channel, callOptions);
        }
      };
    return BlackboardServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static BlackboardServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<BlackboardServiceFutureStub>() {
        @java.lang.Override
        public BlackboardServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new BlackboardServiceFutureStub(channel, callOptions);
        }
      };
    return BlackboardServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Writes one key. With `expected_mod_revision` set, the write is a
     * compare-and-swap: 0 means "only if the key does not exist" (create), N &gt; 0
     * means "only if the key exists and its mod_revision is N". Without it, the
     * write is unconditional.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty or
     * malformed, `value` is unset, `ttl` is not positive, `ttl` and `keep_ttl`
     * are both set, or `expected_mod_revision` is negative; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the compare-and-swap fails, with
     * metadata["current_revision"] the key's current mod_revision (0 if it does
     * not exist); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the key, the value or
     * the TTL is over its configured limit, or the tenant is over its key
     * quota.
     * </pre>
     */
    default void putEntry(dev.statekeeper.v1.PutEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Reads one key, at the current revision or at a past one. A missing key is
     * not an error: `found` is false, and the header says at which revision it
     * was missing, so that a Watch from `header.revision + 1` misses nothing.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `revision` is negative or above the current revision (with
     * metadata["current_revision"]); OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` has been compacted, with metadata["oldest_revision"].
     * </pre>
     */
    default void getEntry(dev.statekeeper.v1.GetEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes one key. Deleting a missing key without a condition succeeds with
     * `deleted` false and creates no revision. With `expected_mod_revision` N &gt;
     * 0, the key must exist with mod_revision N.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `expected_mod_revision` is set and not positive; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the condition fails, with
     * metadata["current_revision"] the key's mod_revision (0 if missing).
     * </pre>
     */
    default void deleteEntry(dev.statekeeper.v1.DeleteEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEntryResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteEntryMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the keys of a board matching a prefix or a glob pattern, in
     * ascending byte order of key, all pages at one revision: the first page
     * fixes the revision (the requested one, or the current one), and the page
     * token carries it. Use `header.revision + 1` as the start revision of a
     * Watch to continue from the listing without a gap.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, `pattern`
     * is malformed, `page_size` or `revision` is negative, `revision` is above
     * the current revision, or `page_token` is malformed or was issued for
     * different parameters; OUT_OF_RANGE (REVISION_COMPACTED) if the revision
     * has been compacted (also between pages), with metadata["oldest_revision"].
     * </pre>
     */
    default void listEntries(dev.statekeeper.v1.ListEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEntriesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListEntriesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Runs a transaction on one board: if every compare holds, the `success`
     * operations run, else the `failure` operations; in order, atomically, and
     * with every change made under one new revision (no revision is created if
     * the chosen branch changes nothing). A get inside the transaction sees
     * the changes of earlier operations of the same branch. Compares on a
     * missing key see mod_revision, create_revision and version 0, `exists`
     * false, and no value (every value compare is false).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, a compare
     * or operation is malformed (no target, no key, ordering compare on
     * `exists`, GREATER or LESS on a Struct value), or one branch changes the
     * same key twice; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are more
     * compares or operations than configured, or a value is too big.
     * </pre>
     */
    default void txn(dev.statekeeper.v1.TxnRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.TxnResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getTxnMethod(), responseObserver);
    }

    /**
     * <pre>
     * Streams the changes of one board's matching keys, from a start revision.
     * The stream begins with a `started` response. If `initial_snapshot` is
     * set, it then sends `snapshot_begin`, the matching entries as of revision
     * R in `snapshot_chunk` responses (by key), and `snapshot_end`, where R is
     * `start_revision - 1`, or the current revision when `start_revision` is
     * 0. Then (or at once, without a snapshot) it sends `events` for every
     * matching change with a revision &gt;= `start_revision` (&gt; R with a
     * snapshot; the revisions after "now" when `start_revision` is 0), and
     * `progress` responses when nothing was sent for
     * `progress_notify_interval`.
     * Guarantees:
     * * Ordered: events come in ascending revision order; the events of one
     *   revision come in the order of the operations that made them.
     * * Unique: a stream never delivers the same event twice, and resuming
     *   from `resume_revision` repeats none.
     * * Atomic: all matching events of one revision (one transaction) are in
     *   the same response; a response may hold several revisions.
     * * Bookmarkable: `progress.revision` says that every matching event at or
     *   below it has been delivered, so it is a valid resume point even when
     *   the board is quiet.
     * * Reliable: the stream never skips a matching event. When it cannot
     *   deliver one (history compacted, subscriber too slow), it ends with an
     *   error instead of a gap.
     * * Resumable: every response carries `resume_revision`; a new Watch with
     *   `start_revision = resume_revision` continues exactly where the old
     *   stream stopped, on any server replica.
     * A start revision above the current revision is valid: the stream waits
     * for it.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `board` is empty, `pattern` is malformed, or a number
     * or duration is negative; OUT_OF_RANGE (REVISION_COMPACTED) if the
     * revisions to replay (or the snapshot revision) have been compacted, at
     * the start or later while a lagging stream catches up, with
     * metadata["oldest_revision"] (start again with `initial_snapshot`);
     * RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the subscriber fell more than the
     * configured buffer behind, with metadata["resume_revision"];
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the tenant has too many open
     * watches; UNAVAILABLE (STORAGE_UNAVAILABLE) if the server shuts down or
     * loses its event feed (resume from the last `resume_revision`).
     * </pre>
     */
    default void watch(dev.statekeeper.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getWatchMethod(), responseObserver);
    }

    /**
     * <pre>
     * Compacts the history: revisions below `revision` are discarded, so that
     * reads and watches at them fail with REVISION_COMPACTED afterwards. The
     * current value of every key is kept. Administrative.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `revision` is not positive or
     * is above the current revision; OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` is at or below the oldest revision already available, with
     * metadata["oldest_revision"].
     * </pre>
     */
    default void compactBlackboard(dev.statekeeper.v1.CompactBlackboardRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactBlackboardResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompactBlackboardMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service BlackboardService.
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static abstract class BlackboardServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return BlackboardServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service BlackboardService.
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class BlackboardServiceStub
      extends io.grpc.stub.AbstractAsyncStub<BlackboardServiceStub> {
    private BlackboardServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected BlackboardServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new BlackboardServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Writes one key. With `expected_mod_revision` set, the write is a
     * compare-and-swap: 0 means "only if the key does not exist" (create), N &gt; 0
     * means "only if the key exists and its mod_revision is N". Without it, the
     * write is unconditional.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty or
     * malformed, `value` is unset, `ttl` is not positive, `ttl` and `keep_ttl`
     * are both set, or `expected_mod_revision` is negative; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the compare-and-swap fails, with
     * metadata["current_revision"] the key's current mod_revision (0 if it does
     * not exist); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the key, the value or
     * the TTL is over its configured limit, or the tenant is over its key
     * quota.
     * </pre>
     */
    public void putEntry(dev.statekeeper.v1.PutEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Reads one key, at the current revision or at a past one. A missing key is
     * not an error: `found` is false, and the header says at which revision it
     * was missing, so that a Watch from `header.revision + 1` misses nothing.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `revision` is negative or above the current revision (with
     * metadata["current_revision"]); OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` has been compacted, with metadata["oldest_revision"].
     * </pre>
     */
    public void getEntry(dev.statekeeper.v1.GetEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes one key. Deleting a missing key without a condition succeeds with
     * `deleted` false and creates no revision. With `expected_mod_revision` N &gt;
     * 0, the key must exist with mod_revision N.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `expected_mod_revision` is set and not positive; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the condition fails, with
     * metadata["current_revision"] the key's mod_revision (0 if missing).
     * </pre>
     */
    public void deleteEntry(dev.statekeeper.v1.DeleteEntryRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEntryResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteEntryMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the keys of a board matching a prefix or a glob pattern, in
     * ascending byte order of key, all pages at one revision: the first page
     * fixes the revision (the requested one, or the current one), and the page
     * token carries it. Use `header.revision + 1` as the start revision of a
     * Watch to continue from the listing without a gap.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, `pattern`
     * is malformed, `page_size` or `revision` is negative, `revision` is above
     * the current revision, or `page_token` is malformed or was issued for
     * different parameters; OUT_OF_RANGE (REVISION_COMPACTED) if the revision
     * has been compacted (also between pages), with metadata["oldest_revision"].
     * </pre>
     */
    public void listEntries(dev.statekeeper.v1.ListEntriesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEntriesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListEntriesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Runs a transaction on one board: if every compare holds, the `success`
     * operations run, else the `failure` operations; in order, atomically, and
     * with every change made under one new revision (no revision is created if
     * the chosen branch changes nothing). A get inside the transaction sees
     * the changes of earlier operations of the same branch. Compares on a
     * missing key see mod_revision, create_revision and version 0, `exists`
     * false, and no value (every value compare is false).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, a compare
     * or operation is malformed (no target, no key, ordering compare on
     * `exists`, GREATER or LESS on a Struct value), or one branch changes the
     * same key twice; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are more
     * compares or operations than configured, or a value is too big.
     * </pre>
     */
    public void txn(dev.statekeeper.v1.TxnRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.TxnResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getTxnMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Streams the changes of one board's matching keys, from a start revision.
     * The stream begins with a `started` response. If `initial_snapshot` is
     * set, it then sends `snapshot_begin`, the matching entries as of revision
     * R in `snapshot_chunk` responses (by key), and `snapshot_end`, where R is
     * `start_revision - 1`, or the current revision when `start_revision` is
     * 0. Then (or at once, without a snapshot) it sends `events` for every
     * matching change with a revision &gt;= `start_revision` (&gt; R with a
     * snapshot; the revisions after "now" when `start_revision` is 0), and
     * `progress` responses when nothing was sent for
     * `progress_notify_interval`.
     * Guarantees:
     * * Ordered: events come in ascending revision order; the events of one
     *   revision come in the order of the operations that made them.
     * * Unique: a stream never delivers the same event twice, and resuming
     *   from `resume_revision` repeats none.
     * * Atomic: all matching events of one revision (one transaction) are in
     *   the same response; a response may hold several revisions.
     * * Bookmarkable: `progress.revision` says that every matching event at or
     *   below it has been delivered, so it is a valid resume point even when
     *   the board is quiet.
     * * Reliable: the stream never skips a matching event. When it cannot
     *   deliver one (history compacted, subscriber too slow), it ends with an
     *   error instead of a gap.
     * * Resumable: every response carries `resume_revision`; a new Watch with
     *   `start_revision = resume_revision` continues exactly where the old
     *   stream stopped, on any server replica.
     * A start revision above the current revision is valid: the stream waits
     * for it.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `board` is empty, `pattern` is malformed, or a number
     * or duration is negative; OUT_OF_RANGE (REVISION_COMPACTED) if the
     * revisions to replay (or the snapshot revision) have been compacted, at
     * the start or later while a lagging stream catches up, with
     * metadata["oldest_revision"] (start again with `initial_snapshot`);
     * RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the subscriber fell more than the
     * configured buffer behind, with metadata["resume_revision"];
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the tenant has too many open
     * watches; UNAVAILABLE (STORAGE_UNAVAILABLE) if the server shuts down or
     * loses its event feed (resume from the last `resume_revision`).
     * </pre>
     */
    public void watch(dev.statekeeper.v1.WatchRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.WatchResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getWatchMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Compacts the history: revisions below `revision` are discarded, so that
     * reads and watches at them fail with REVISION_COMPACTED afterwards. The
     * current value of every key is kept. Administrative.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `revision` is not positive or
     * is above the current revision; OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` is at or below the oldest revision already available, with
     * metadata["oldest_revision"].
     * </pre>
     */
    public void compactBlackboard(dev.statekeeper.v1.CompactBlackboardRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactBlackboardResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompactBlackboardMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service BlackboardService.
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class BlackboardServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<BlackboardServiceBlockingV2Stub> {
    private BlackboardServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected BlackboardServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new BlackboardServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Writes one key. With `expected_mod_revision` set, the write is a
     * compare-and-swap: 0 means "only if the key does not exist" (create), N &gt; 0
     * means "only if the key exists and its mod_revision is N". Without it, the
     * write is unconditional.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty or
     * malformed, `value` is unset, `ttl` is not positive, `ttl` and `keep_ttl`
     * are both set, or `expected_mod_revision` is negative; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the compare-and-swap fails, with
     * metadata["current_revision"] the key's current mod_revision (0 if it does
     * not exist); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the key, the value or
     * the TTL is over its configured limit, or the tenant is over its key
     * quota.
     * </pre>
     */
    public dev.statekeeper.v1.PutEntryResponse putEntry(dev.statekeeper.v1.PutEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPutEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reads one key, at the current revision or at a past one. A missing key is
     * not an error: `found` is false, and the header says at which revision it
     * was missing, so that a Watch from `header.revision + 1` misses nothing.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `revision` is negative or above the current revision (with
     * metadata["current_revision"]); OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` has been compacted, with metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.GetEntryResponse getEntry(dev.statekeeper.v1.GetEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one key. Deleting a missing key without a condition succeeds with
     * `deleted` false and creates no revision. With `expected_mod_revision` N &gt;
     * 0, the key must exist with mod_revision N.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `expected_mod_revision` is set and not positive; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the condition fails, with
     * metadata["current_revision"] the key's mod_revision (0 if missing).
     * </pre>
     */
    public dev.statekeeper.v1.DeleteEntryResponse deleteEntry(dev.statekeeper.v1.DeleteEntryRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the keys of a board matching a prefix or a glob pattern, in
     * ascending byte order of key, all pages at one revision: the first page
     * fixes the revision (the requested one, or the current one), and the page
     * token carries it. Use `header.revision + 1` as the start revision of a
     * Watch to continue from the listing without a gap.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, `pattern`
     * is malformed, `page_size` or `revision` is negative, `revision` is above
     * the current revision, or `page_token` is malformed or was issued for
     * different parameters; OUT_OF_RANGE (REVISION_COMPACTED) if the revision
     * has been compacted (also between pages), with metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.ListEntriesResponse listEntries(dev.statekeeper.v1.ListEntriesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs a transaction on one board: if every compare holds, the `success`
     * operations run, else the `failure` operations; in order, atomically, and
     * with every change made under one new revision (no revision is created if
     * the chosen branch changes nothing). A get inside the transaction sees
     * the changes of earlier operations of the same branch. Compares on a
     * missing key see mod_revision, create_revision and version 0, `exists`
     * false, and no value (every value compare is false).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, a compare
     * or operation is malformed (no target, no key, ordering compare on
     * `exists`, GREATER or LESS on a Struct value), or one branch changes the
     * same key twice; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are more
     * compares or operations than configured, or a value is too big.
     * </pre>
     */
    public dev.statekeeper.v1.TxnResponse txn(dev.statekeeper.v1.TxnRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getTxnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams the changes of one board's matching keys, from a start revision.
     * The stream begins with a `started` response. If `initial_snapshot` is
     * set, it then sends `snapshot_begin`, the matching entries as of revision
     * R in `snapshot_chunk` responses (by key), and `snapshot_end`, where R is
     * `start_revision - 1`, or the current revision when `start_revision` is
     * 0. Then (or at once, without a snapshot) it sends `events` for every
     * matching change with a revision &gt;= `start_revision` (&gt; R with a
     * snapshot; the revisions after "now" when `start_revision` is 0), and
     * `progress` responses when nothing was sent for
     * `progress_notify_interval`.
     * Guarantees:
     * * Ordered: events come in ascending revision order; the events of one
     *   revision come in the order of the operations that made them.
     * * Unique: a stream never delivers the same event twice, and resuming
     *   from `resume_revision` repeats none.
     * * Atomic: all matching events of one revision (one transaction) are in
     *   the same response; a response may hold several revisions.
     * * Bookmarkable: `progress.revision` says that every matching event at or
     *   below it has been delivered, so it is a valid resume point even when
     *   the board is quiet.
     * * Reliable: the stream never skips a matching event. When it cannot
     *   deliver one (history compacted, subscriber too slow), it ends with an
     *   error instead of a gap.
     * * Resumable: every response carries `resume_revision`; a new Watch with
     *   `start_revision = resume_revision` continues exactly where the old
     *   stream stopped, on any server replica.
     * A start revision above the current revision is valid: the stream waits
     * for it.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `board` is empty, `pattern` is malformed, or a number
     * or duration is negative; OUT_OF_RANGE (REVISION_COMPACTED) if the
     * revisions to replay (or the snapshot revision) have been compacted, at
     * the start or later while a lagging stream catches up, with
     * metadata["oldest_revision"] (start again with `initial_snapshot`);
     * RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the subscriber fell more than the
     * configured buffer behind, with metadata["resume_revision"];
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the tenant has too many open
     * watches; UNAVAILABLE (STORAGE_UNAVAILABLE) if the server shuts down or
     * loses its event feed (resume from the last `resume_revision`).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.statekeeper.v1.WatchResponse>
        watch(dev.statekeeper.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compacts the history: revisions below `revision` are discarded, so that
     * reads and watches at them fail with REVISION_COMPACTED afterwards. The
     * current value of every key is kept. Administrative.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `revision` is not positive or
     * is above the current revision; OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` is at or below the oldest revision already available, with
     * metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.CompactBlackboardResponse compactBlackboard(dev.statekeeper.v1.CompactBlackboardRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompactBlackboardMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service BlackboardService.
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class BlackboardServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<BlackboardServiceBlockingStub> {
    private BlackboardServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected BlackboardServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new BlackboardServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Writes one key. With `expected_mod_revision` set, the write is a
     * compare-and-swap: 0 means "only if the key does not exist" (create), N &gt; 0
     * means "only if the key exists and its mod_revision is N". Without it, the
     * write is unconditional.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty or
     * malformed, `value` is unset, `ttl` is not positive, `ttl` and `keep_ttl`
     * are both set, or `expected_mod_revision` is negative; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the compare-and-swap fails, with
     * metadata["current_revision"] the key's current mod_revision (0 if it does
     * not exist); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the key, the value or
     * the TTL is over its configured limit, or the tenant is over its key
     * quota.
     * </pre>
     */
    public dev.statekeeper.v1.PutEntryResponse putEntry(dev.statekeeper.v1.PutEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Reads one key, at the current revision or at a past one. A missing key is
     * not an error: `found` is false, and the header says at which revision it
     * was missing, so that a Watch from `header.revision + 1` misses nothing.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `revision` is negative or above the current revision (with
     * metadata["current_revision"]); OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` has been compacted, with metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.GetEntryResponse getEntry(dev.statekeeper.v1.GetEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one key. Deleting a missing key without a condition succeeds with
     * `deleted` false and creates no revision. With `expected_mod_revision` N &gt;
     * 0, the key must exist with mod_revision N.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `expected_mod_revision` is set and not positive; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the condition fails, with
     * metadata["current_revision"] the key's mod_revision (0 if missing).
     * </pre>
     */
    public dev.statekeeper.v1.DeleteEntryResponse deleteEntry(dev.statekeeper.v1.DeleteEntryRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteEntryMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the keys of a board matching a prefix or a glob pattern, in
     * ascending byte order of key, all pages at one revision: the first page
     * fixes the revision (the requested one, or the current one), and the page
     * token carries it. Use `header.revision + 1` as the start revision of a
     * Watch to continue from the listing without a gap.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, `pattern`
     * is malformed, `page_size` or `revision` is negative, `revision` is above
     * the current revision, or `page_token` is malformed or was issued for
     * different parameters; OUT_OF_RANGE (REVISION_COMPACTED) if the revision
     * has been compacted (also between pages), with metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.ListEntriesResponse listEntries(dev.statekeeper.v1.ListEntriesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListEntriesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs a transaction on one board: if every compare holds, the `success`
     * operations run, else the `failure` operations; in order, atomically, and
     * with every change made under one new revision (no revision is created if
     * the chosen branch changes nothing). A get inside the transaction sees
     * the changes of earlier operations of the same branch. Compares on a
     * missing key see mod_revision, create_revision and version 0, `exists`
     * false, and no value (every value compare is false).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, a compare
     * or operation is malformed (no target, no key, ordering compare on
     * `exists`, GREATER or LESS on a Struct value), or one branch changes the
     * same key twice; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are more
     * compares or operations than configured, or a value is too big.
     * </pre>
     */
    public dev.statekeeper.v1.TxnResponse txn(dev.statekeeper.v1.TxnRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getTxnMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams the changes of one board's matching keys, from a start revision.
     * The stream begins with a `started` response. If `initial_snapshot` is
     * set, it then sends `snapshot_begin`, the matching entries as of revision
     * R in `snapshot_chunk` responses (by key), and `snapshot_end`, where R is
     * `start_revision - 1`, or the current revision when `start_revision` is
     * 0. Then (or at once, without a snapshot) it sends `events` for every
     * matching change with a revision &gt;= `start_revision` (&gt; R with a
     * snapshot; the revisions after "now" when `start_revision` is 0), and
     * `progress` responses when nothing was sent for
     * `progress_notify_interval`.
     * Guarantees:
     * * Ordered: events come in ascending revision order; the events of one
     *   revision come in the order of the operations that made them.
     * * Unique: a stream never delivers the same event twice, and resuming
     *   from `resume_revision` repeats none.
     * * Atomic: all matching events of one revision (one transaction) are in
     *   the same response; a response may hold several revisions.
     * * Bookmarkable: `progress.revision` says that every matching event at or
     *   below it has been delivered, so it is a valid resume point even when
     *   the board is quiet.
     * * Reliable: the stream never skips a matching event. When it cannot
     *   deliver one (history compacted, subscriber too slow), it ends with an
     *   error instead of a gap.
     * * Resumable: every response carries `resume_revision`; a new Watch with
     *   `start_revision = resume_revision` continues exactly where the old
     *   stream stopped, on any server replica.
     * A start revision above the current revision is valid: the stream waits
     * for it.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `board` is empty, `pattern` is malformed, or a number
     * or duration is negative; OUT_OF_RANGE (REVISION_COMPACTED) if the
     * revisions to replay (or the snapshot revision) have been compacted, at
     * the start or later while a lagging stream catches up, with
     * metadata["oldest_revision"] (start again with `initial_snapshot`);
     * RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the subscriber fell more than the
     * configured buffer behind, with metadata["resume_revision"];
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the tenant has too many open
     * watches; UNAVAILABLE (STORAGE_UNAVAILABLE) if the server shuts down or
     * loses its event feed (resume from the last `resume_revision`).
     * </pre>
     */
    public java.util.Iterator<dev.statekeeper.v1.WatchResponse> watch(
        dev.statekeeper.v1.WatchRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getWatchMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compacts the history: revisions below `revision` are discarded, so that
     * reads and watches at them fail with REVISION_COMPACTED afterwards. The
     * current value of every key is kept. Administrative.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `revision` is not positive or
     * is above the current revision; OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` is at or below the oldest revision already available, with
     * metadata["oldest_revision"].
     * </pre>
     */
    public dev.statekeeper.v1.CompactBlackboardResponse compactBlackboard(dev.statekeeper.v1.CompactBlackboardRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompactBlackboardMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service BlackboardService.
   * <pre>
   * BlackboardService is a shared key/value space through which agents
   * coordinate, with the semantics of etcd's KV and Watch APIs.
   * Data model:
   * * A tenant has any number of boards (named by a string; a board exists as
   *   long as it holds a key). A board holds keys (non-empty UTF-8 strings
   *   without NUL, up to the configured length) mapped to values.
   * * Revisions: the tenant has one store revision, a counter shared by all its
   *   boards. Every mutation (put, delete, expiry, or a whole transaction)
   *   increments it by one, and every change it made carries that revision.
   *   Revisions are never reused and never go back. Every response carries the
   *   current revision in its `header`.
   * * Each entry records `create_revision` (revision of its creation),
   *   `mod_revision` (revision of its last change) and `version` (number of
   *   puts since creation, 1 for a new key; a deleted key starts again at 1).
   * * TTL: a key put with a TTL expires at `expire_time`. From that instant it
   *   is invisible to every read. The server then removes it as a mutation of
   *   its own, with an EXPIRE event, normally within a second; any write to an
   *   expired key is applied after that removal, so it sees the key absent.
   * * History: the server keeps past revisions for reads at a revision and for
   *   watches, back to the oldest revision not compacted (`oldest_revision` in
   *   every header). It compacts automatically after the configured retention;
   *   Compact forces it.
   * Patterns: a `prefix` matches keys that start with it (the empty prefix
   * matches every key of the board). A glob `pattern` matches whole keys: `*`
   * matches any run of characters except "/", `**` any run including "/", `?`
   * one character except "/", `[abc]` and `[a-z]` one character of the class,
   * and a backslash escapes the next character.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class BlackboardServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<BlackboardServiceFutureStub> {
    private BlackboardServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected BlackboardServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new BlackboardServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Writes one key. With `expected_mod_revision` set, the write is a
     * compare-and-swap: 0 means "only if the key does not exist" (create), N &gt; 0
     * means "only if the key exists and its mod_revision is N". Without it, the
     * write is unconditional.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty or
     * malformed, `value` is unset, `ttl` is not positive, `ttl` and `keep_ttl`
     * are both set, or `expected_mod_revision` is negative; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the compare-and-swap fails, with
     * metadata["current_revision"] the key's current mod_revision (0 if it does
     * not exist); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the key, the value or
     * the TTL is over its configured limit, or the tenant is over its key
     * quota.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.PutEntryResponse> putEntry(
        dev.statekeeper.v1.PutEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Reads one key, at the current revision or at a past one. A missing key is
     * not an error: `found` is false, and the header says at which revision it
     * was missing, so that a Watch from `header.revision + 1` misses nothing.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `revision` is negative or above the current revision (with
     * metadata["current_revision"]); OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` has been compacted, with metadata["oldest_revision"].
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetEntryResponse> getEntry(
        dev.statekeeper.v1.GetEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes one key. Deleting a missing key without a condition succeeds with
     * `deleted` false and creates no revision. With `expected_mod_revision` N &gt;
     * 0, the key must exist with mod_revision N.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` or `key` is empty, or
     * `expected_mod_revision` is set and not positive; FAILED_PRECONDITION
     * (REVISION_MISMATCH) if the condition fails, with
     * metadata["current_revision"] the key's mod_revision (0 if missing).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeleteEntryResponse> deleteEntry(
        dev.statekeeper.v1.DeleteEntryRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteEntryMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the keys of a board matching a prefix or a glob pattern, in
     * ascending byte order of key, all pages at one revision: the first page
     * fixes the revision (the requested one, or the current one), and the page
     * token carries it. Use `header.revision + 1` as the start revision of a
     * Watch to continue from the listing without a gap.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, `pattern`
     * is malformed, `page_size` or `revision` is negative, `revision` is above
     * the current revision, or `page_token` is malformed or was issued for
     * different parameters; OUT_OF_RANGE (REVISION_COMPACTED) if the revision
     * has been compacted (also between pages), with metadata["oldest_revision"].
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListEntriesResponse> listEntries(
        dev.statekeeper.v1.ListEntriesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListEntriesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Runs a transaction on one board: if every compare holds, the `success`
     * operations run, else the `failure` operations; in order, atomically, and
     * with every change made under one new revision (no revision is created if
     * the chosen branch changes nothing). A get inside the transaction sees
     * the changes of earlier operations of the same branch. Compares on a
     * missing key see mod_revision, create_revision and version 0, `exists`
     * false, and no value (every value compare is false).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `board` is empty, a compare
     * or operation is malformed (no target, no key, ordering compare on
     * `exists`, GREATER or LESS on a Struct value), or one branch changes the
     * same key twice; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are more
     * compares or operations than configured, or a value is too big.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.TxnResponse> txn(
        dev.statekeeper.v1.TxnRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getTxnMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Compacts the history: revisions below `revision` are discarded, so that
     * reads and watches at them fail with REVISION_COMPACTED afterwards. The
     * current value of every key is kept. Administrative.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `revision` is not positive or
     * is above the current revision; OUT_OF_RANGE (REVISION_COMPACTED) if
     * `revision` is at or below the oldest revision already available, with
     * metadata["oldest_revision"].
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CompactBlackboardResponse> compactBlackboard(
        dev.statekeeper.v1.CompactBlackboardRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompactBlackboardMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_PUT_ENTRY = 0;
  private static final int METHODID_GET_ENTRY = 1;
  private static final int METHODID_DELETE_ENTRY = 2;
  private static final int METHODID_LIST_ENTRIES = 3;
  private static final int METHODID_TXN = 4;
  private static final int METHODID_WATCH = 5;
  private static final int METHODID_COMPACT_BLACKBOARD = 6;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_PUT_ENTRY:
          serviceImpl.putEntry((dev.statekeeper.v1.PutEntryRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutEntryResponse>) responseObserver);
          break;
        case METHODID_GET_ENTRY:
          serviceImpl.getEntry((dev.statekeeper.v1.GetEntryRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEntryResponse>) responseObserver);
          break;
        case METHODID_DELETE_ENTRY:
          serviceImpl.deleteEntry((dev.statekeeper.v1.DeleteEntryRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEntryResponse>) responseObserver);
          break;
        case METHODID_LIST_ENTRIES:
          serviceImpl.listEntries((dev.statekeeper.v1.ListEntriesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEntriesResponse>) responseObserver);
          break;
        case METHODID_TXN:
          serviceImpl.txn((dev.statekeeper.v1.TxnRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.TxnResponse>) responseObserver);
          break;
        case METHODID_WATCH:
          serviceImpl.watch((dev.statekeeper.v1.WatchRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.WatchResponse>) responseObserver);
          break;
        case METHODID_COMPACT_BLACKBOARD:
          serviceImpl.compactBlackboard((dev.statekeeper.v1.CompactBlackboardRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactBlackboardResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getPutEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.PutEntryRequest,
              dev.statekeeper.v1.PutEntryResponse>(
                service, METHODID_PUT_ENTRY)))
        .addMethod(
          getGetEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetEntryRequest,
              dev.statekeeper.v1.GetEntryResponse>(
                service, METHODID_GET_ENTRY)))
        .addMethod(
          getDeleteEntryMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeleteEntryRequest,
              dev.statekeeper.v1.DeleteEntryResponse>(
                service, METHODID_DELETE_ENTRY)))
        .addMethod(
          getListEntriesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListEntriesRequest,
              dev.statekeeper.v1.ListEntriesResponse>(
                service, METHODID_LIST_ENTRIES)))
        .addMethod(
          getTxnMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.TxnRequest,
              dev.statekeeper.v1.TxnResponse>(
                service, METHODID_TXN)))
        .addMethod(
          getWatchMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.statekeeper.v1.WatchRequest,
              dev.statekeeper.v1.WatchResponse>(
                service, METHODID_WATCH)))
        .addMethod(
          getCompactBlackboardMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CompactBlackboardRequest,
              dev.statekeeper.v1.CompactBlackboardResponse>(
                service, METHODID_COMPACT_BLACKBOARD)))
        .build();
  }

  private static abstract class BlackboardServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    BlackboardServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.BlackboardProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("BlackboardService");
    }
  }

  private static final class BlackboardServiceFileDescriptorSupplier
      extends BlackboardServiceBaseDescriptorSupplier {
    BlackboardServiceFileDescriptorSupplier() {}
  }

  private static final class BlackboardServiceMethodDescriptorSupplier
      extends BlackboardServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    BlackboardServiceMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (BlackboardServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new BlackboardServiceFileDescriptorSupplier())
              .addMethod(getPutEntryMethod())
              .addMethod(getGetEntryMethod())
              .addMethod(getDeleteEntryMethod())
              .addMethod(getListEntriesMethod())
              .addMethod(getTxnMethod())
              .addMethod(getWatchMethod())
              .addMethod(getCompactBlackboardMethod())
              .build();
        }
      }
    }
    return result;
  }
}
