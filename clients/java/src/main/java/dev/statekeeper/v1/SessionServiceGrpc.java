package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * SessionService keeps agent sessions: their status and variables, the full
 * message history, the working window that is sent to a model, and a version
 * history of every change.
 * Every mutation (create, update, append, compact, rollback) creates a new
 * session version; `Session.version` is that number and `Session.etag` is
 * derived from it. Mutations accept an `expected_etag` for optimistic
 * concurrency (see common.proto).
 * A session whose `expire_time` has passed is invisible at once: every RPC
 * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
 * omits it. A background sweeper deletes expired sessions later.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class SessionServiceGrpc {

  private SessionServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.SessionService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CreateSessionRequest,
      dev.statekeeper.v1.CreateSessionResponse> getCreateSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CreateSession",
      requestType = dev.statekeeper.v1.CreateSessionRequest.class,
      responseType = dev.statekeeper.v1.CreateSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CreateSessionRequest,
      dev.statekeeper.v1.CreateSessionResponse> getCreateSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CreateSessionRequest, dev.statekeeper.v1.CreateSessionResponse> getCreateSessionMethod;
    if ((getCreateSessionMethod = SessionServiceGrpc.getCreateSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getCreateSessionMethod = SessionServiceGrpc.getCreateSessionMethod) == null) {
          SessionServiceGrpc.getCreateSessionMethod = getCreateSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CreateSessionRequest, dev.statekeeper.v1.CreateSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CreateSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CreateSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CreateSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("CreateSession"))
              .build();
        }
      }
    }
    return getCreateSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionRequest,
      dev.statekeeper.v1.GetSessionResponse> getGetSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSession",
      requestType = dev.statekeeper.v1.GetSessionRequest.class,
      responseType = dev.statekeeper.v1.GetSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionRequest,
      dev.statekeeper.v1.GetSessionResponse> getGetSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionRequest, dev.statekeeper.v1.GetSessionResponse> getGetSessionMethod;
    if ((getGetSessionMethod = SessionServiceGrpc.getGetSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetSessionMethod = SessionServiceGrpc.getGetSessionMethod) == null) {
          SessionServiceGrpc.getGetSessionMethod = getGetSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetSessionRequest, dev.statekeeper.v1.GetSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetSession"))
              .build();
        }
      }
    }
    return getGetSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionsRequest,
      dev.statekeeper.v1.ListSessionsResponse> getListSessionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessions",
      requestType = dev.statekeeper.v1.ListSessionsRequest.class,
      responseType = dev.statekeeper.v1.ListSessionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionsRequest,
      dev.statekeeper.v1.ListSessionsResponse> getListSessionsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionsRequest, dev.statekeeper.v1.ListSessionsResponse> getListSessionsMethod;
    if ((getListSessionsMethod = SessionServiceGrpc.getListSessionsMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getListSessionsMethod = SessionServiceGrpc.getListSessionsMethod) == null) {
          SessionServiceGrpc.getListSessionsMethod = getListSessionsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListSessionsRequest, dev.statekeeper.v1.ListSessionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListSessionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListSessionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("ListSessions"))
              .build();
        }
      }
    }
    return getListSessionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.UpdateSessionRequest,
      dev.statekeeper.v1.UpdateSessionResponse> getUpdateSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "UpdateSession",
      requestType = dev.statekeeper.v1.UpdateSessionRequest.class,
      responseType = dev.statekeeper.v1.UpdateSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.UpdateSessionRequest,
      dev.statekeeper.v1.UpdateSessionResponse> getUpdateSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.UpdateSessionRequest, dev.statekeeper.v1.UpdateSessionResponse> getUpdateSessionMethod;
    if ((getUpdateSessionMethod = SessionServiceGrpc.getUpdateSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getUpdateSessionMethod = SessionServiceGrpc.getUpdateSessionMethod) == null) {
          SessionServiceGrpc.getUpdateSessionMethod = getUpdateSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.UpdateSessionRequest, dev.statekeeper.v1.UpdateSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "UpdateSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.UpdateSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.UpdateSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("UpdateSession"))
              .build();
        }
      }
    }
    return getUpdateSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteSessionRequest,
      dev.statekeeper.v1.DeleteSessionResponse> getDeleteSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteSession",
      requestType = dev.statekeeper.v1.DeleteSessionRequest.class,
      responseType = dev.statekeeper.v1.DeleteSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteSessionRequest,
      dev.statekeeper.v1.DeleteSessionResponse> getDeleteSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteSessionRequest, dev.statekeeper.v1.DeleteSessionResponse> getDeleteSessionMethod;
    if ((getDeleteSessionMethod = SessionServiceGrpc.getDeleteSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getDeleteSessionMethod = SessionServiceGrpc.getDeleteSessionMethod) == null) {
          SessionServiceGrpc.getDeleteSessionMethod = getDeleteSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeleteSessionRequest, dev.statekeeper.v1.DeleteSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("DeleteSession"))
              .build();
        }
      }
    }
    return getDeleteSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.AppendMessagesRequest,
      dev.statekeeper.v1.AppendMessagesResponse> getAppendMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AppendMessages",
      requestType = dev.statekeeper.v1.AppendMessagesRequest.class,
      responseType = dev.statekeeper.v1.AppendMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.AppendMessagesRequest,
      dev.statekeeper.v1.AppendMessagesResponse> getAppendMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.AppendMessagesRequest, dev.statekeeper.v1.AppendMessagesResponse> getAppendMessagesMethod;
    if ((getAppendMessagesMethod = SessionServiceGrpc.getAppendMessagesMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getAppendMessagesMethod = SessionServiceGrpc.getAppendMessagesMethod) == null) {
          SessionServiceGrpc.getAppendMessagesMethod = getAppendMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.AppendMessagesRequest, dev.statekeeper.v1.AppendMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AppendMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AppendMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AppendMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("AppendMessages"))
              .build();
        }
      }
    }
    return getAppendMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListMessagesRequest,
      dev.statekeeper.v1.ListMessagesResponse> getListMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListMessages",
      requestType = dev.statekeeper.v1.ListMessagesRequest.class,
      responseType = dev.statekeeper.v1.ListMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListMessagesRequest,
      dev.statekeeper.v1.ListMessagesResponse> getListMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListMessagesRequest, dev.statekeeper.v1.ListMessagesResponse> getListMessagesMethod;
    if ((getListMessagesMethod = SessionServiceGrpc.getListMessagesMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getListMessagesMethod = SessionServiceGrpc.getListMessagesMethod) == null) {
          SessionServiceGrpc.getListMessagesMethod = getListMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListMessagesRequest, dev.statekeeper.v1.ListMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("ListMessages"))
              .build();
        }
      }
    }
    return getListMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetContextWindowRequest,
      dev.statekeeper.v1.GetContextWindowResponse> getGetContextWindowMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetContextWindow",
      requestType = dev.statekeeper.v1.GetContextWindowRequest.class,
      responseType = dev.statekeeper.v1.GetContextWindowResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetContextWindowRequest,
      dev.statekeeper.v1.GetContextWindowResponse> getGetContextWindowMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetContextWindowRequest, dev.statekeeper.v1.GetContextWindowResponse> getGetContextWindowMethod;
    if ((getGetContextWindowMethod = SessionServiceGrpc.getGetContextWindowMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetContextWindowMethod = SessionServiceGrpc.getGetContextWindowMethod) == null) {
          SessionServiceGrpc.getGetContextWindowMethod = getGetContextWindowMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetContextWindowRequest, dev.statekeeper.v1.GetContextWindowResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetContextWindow"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetContextWindowRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetContextWindowResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetContextWindow"))
              .build();
        }
      }
    }
    return getGetContextWindowMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactSessionRequest,
      dev.statekeeper.v1.CompactSessionResponse> getCompactSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CompactSession",
      requestType = dev.statekeeper.v1.CompactSessionRequest.class,
      responseType = dev.statekeeper.v1.CompactSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactSessionRequest,
      dev.statekeeper.v1.CompactSessionResponse> getCompactSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CompactSessionRequest, dev.statekeeper.v1.CompactSessionResponse> getCompactSessionMethod;
    if ((getCompactSessionMethod = SessionServiceGrpc.getCompactSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getCompactSessionMethod = SessionServiceGrpc.getCompactSessionMethod) == null) {
          SessionServiceGrpc.getCompactSessionMethod = getCompactSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CompactSessionRequest, dev.statekeeper.v1.CompactSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CompactSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompactSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompactSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("CompactSession"))
              .build();
        }
      }
    }
    return getCompactSessionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionVersionsRequest,
      dev.statekeeper.v1.ListSessionVersionsResponse> getListSessionVersionsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListSessionVersions",
      requestType = dev.statekeeper.v1.ListSessionVersionsRequest.class,
      responseType = dev.statekeeper.v1.ListSessionVersionsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionVersionsRequest,
      dev.statekeeper.v1.ListSessionVersionsResponse> getListSessionVersionsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListSessionVersionsRequest, dev.statekeeper.v1.ListSessionVersionsResponse> getListSessionVersionsMethod;
    if ((getListSessionVersionsMethod = SessionServiceGrpc.getListSessionVersionsMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getListSessionVersionsMethod = SessionServiceGrpc.getListSessionVersionsMethod) == null) {
          SessionServiceGrpc.getListSessionVersionsMethod = getListSessionVersionsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListSessionVersionsRequest, dev.statekeeper.v1.ListSessionVersionsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListSessionVersions"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListSessionVersionsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListSessionVersionsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("ListSessionVersions"))
              .build();
        }
      }
    }
    return getListSessionVersionsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionVersionRequest,
      dev.statekeeper.v1.GetSessionVersionResponse> getGetSessionVersionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetSessionVersion",
      requestType = dev.statekeeper.v1.GetSessionVersionRequest.class,
      responseType = dev.statekeeper.v1.GetSessionVersionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionVersionRequest,
      dev.statekeeper.v1.GetSessionVersionResponse> getGetSessionVersionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetSessionVersionRequest, dev.statekeeper.v1.GetSessionVersionResponse> getGetSessionVersionMethod;
    if ((getGetSessionVersionMethod = SessionServiceGrpc.getGetSessionVersionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getGetSessionVersionMethod = SessionServiceGrpc.getGetSessionVersionMethod) == null) {
          SessionServiceGrpc.getGetSessionVersionMethod = getGetSessionVersionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetSessionVersionRequest, dev.statekeeper.v1.GetSessionVersionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetSessionVersion"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetSessionVersionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetSessionVersionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("GetSessionVersion"))
              .build();
        }
      }
    }
    return getGetSessionVersionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RollbackSessionRequest,
      dev.statekeeper.v1.RollbackSessionResponse> getRollbackSessionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RollbackSession",
      requestType = dev.statekeeper.v1.RollbackSessionRequest.class,
      responseType = dev.statekeeper.v1.RollbackSessionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RollbackSessionRequest,
      dev.statekeeper.v1.RollbackSessionResponse> getRollbackSessionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RollbackSessionRequest, dev.statekeeper.v1.RollbackSessionResponse> getRollbackSessionMethod;
    if ((getRollbackSessionMethod = SessionServiceGrpc.getRollbackSessionMethod) == null) {
      synchronized (SessionServiceGrpc.class) {
        if ((getRollbackSessionMethod = SessionServiceGrpc.getRollbackSessionMethod) == null) {
          SessionServiceGrpc.getRollbackSessionMethod = getRollbackSessionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RollbackSessionRequest, dev.statekeeper.v1.RollbackSessionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RollbackSession"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RollbackSessionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RollbackSessionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new SessionServiceMethodDescriptorSupplier("RollbackSession"))
              .build();
        }
      }
    }
    return getRollbackSessionMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static SessionServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceStub>() {
        @java.lang.Override
        public SessionServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceStub(channel, callOptions);
        }
      };
    return SessionServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static SessionServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingV2Stub>() {
        @java.lang.Override
        public SessionServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return SessionServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static SessionServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceBlockingStub>() {
        @java.lang.Override
        public SessionServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceBlockingStub(channel, callOptions);
        }
      };
    return SessionServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static SessionServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<SessionServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<SessionServiceFutureStub>() {
        @java.lang.Override
        public SessionServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new SessionServiceFutureStub(channel, callOptions);
        }
      };
    return SessionServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Creates a session.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a malformed `session_id`, a
     * missing `session.user_id`, an unknown status or a negative TTL;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) for oversized variables or metadata;
     * ALREADY_EXISTS if `session_id` is taken in the caller's tenant (even by an
     * expired session that has not been swept yet).
     * </pre>
     */
    default void createSession(dev.statekeeper.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCreateSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns a session without its messages.
     * Errors: INVALID_ARGUMENT for an empty or malformed `session_id`;
     * NOT_FOUND (NOT_FOUND) if it does not exist in the caller's tenant;
     * NOT_FOUND (SESSION_EXPIRED) if its TTL has passed.
     * </pre>
     */
    default void getSession(dev.statekeeper.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the caller's sessions, newest first, optionally filtered by user,
     * agent and status. Expired sessions are never listed.
     * Errors: INVALID_ARGUMENT for a negative `page_size`, a malformed
     * `page_token` or one issued for different filters.
     * </pre>
     */
    default void listSessions(dev.statekeeper.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Updates the fields of a session named by `update_mask`.
     * Updatable paths: `agent_id`, `status`, `context_variables`,
     * `active_tools`, `pending_tool_calls`, `metadata`, `ttl` (restarts the TTL
     * from now; a zero TTL removes the expiry). `session_id`, `user_id` and the
     * output-only fields cannot be updated. An empty mask updates every
     * updatable field that is set (non-default) in `session`; the path `*`
     * replaces every updatable field.
     * Errors: INVALID_ARGUMENT for an unknown or immutable mask path;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale.
     * </pre>
     */
    default void updateSession(dev.statekeeper.v1.UpdateSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.UpdateSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getUpdateSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes a session, its messages and its versions.
     * Errors: NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH)
     * if `expected_etag` is set and stale.
     * </pre>
     */
    default void deleteSession(dev.statekeeper.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Appends messages to the end of the session's history, atomically (all or
     * none) as one new version. The token count of each message is computed
     * once, here, and stored.
     * Retrying with the same `request_id` returns the original result without
     * appending again, so a client that lost the reply can retry safely.
     * Errors: INVALID_ARGUMENT for an unknown role, empty content with no tool
     * calls, a TOOL message without `tool_call_id`, a tool call without id or
     * name, or a `request_id` reused for a different session; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) for too many messages in one call or an oversized
     * message; NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    default void appendMessages(dev.statekeeper.v1.AppendMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AppendMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAppendMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the full message history of a session in append order, including
     * messages that compaction replaced in the working window. Messages undone
     * by a rollback are listed only when `include_rolled_back` is set.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    default void listMessages(dev.statekeeper.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the newest part of the working window that fits a token budget.
     * Accounting: `token_budget` is the model's context size. The server first
     * sets aside `reserved_output_tokens`, the system prompt and the tools
     * schema, then walks the working window from the newest message backwards
     * and keeps messages while they fit. An assistant message with tool calls
     * and the TOOL messages answering it are kept or dropped together, never
     * split. The part that does not fit is summarized (see `summary`) and the
     * summary is counted inside the budget. The response's `accounting` adds up
     * to exactly what is returned, so `accounting.total_tokens` never exceeds
     * `token_budget - reserved_output_tokens`.
     * Token counts use tiktoken's cl100k_base and the OpenAI chat framing:
     * a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if
     * name is set), plus for each tool call tokens(id) + tokens(name) +
     * tokens(arguments) + 3, plus tokens(tool_call_id) for a TOOL message. The
     * system prompt and the summary each cost what a SYSTEM message with that
     * content costs; the tools schema costs tokens(tools_json); every window
     * adds 3 tokens that prime the reply.
     * Errors: INVALID_ARGUMENT for a non-positive `token_budget`, a negative
     * reserve, or malformed `tools_json`; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) if the reserve, the system prompt, the tools and
     * the reply priming alone exceed the budget; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    default void getContextWindow(dev.statekeeper.v1.GetContextWindowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetContextWindowResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetContextWindowMethod(), responseObserver);
    }

    /**
     * <pre>
     * Compacts the working window: every message older than the newest
     * `keep_recent_messages` is replaced in the window by one summary, and the
     * originals stay in the history (ListMessages). The cut never splits a tool
     * call from its results. Compacting a window that is already short enough is
     * a no-op that creates no version.
     * Errors: INVALID_ARGUMENT for a negative `keep_recent_messages`;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    default void compactSession(dev.statekeeper.v1.CompactSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompactSessionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the versions of a session, newest first.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    default void listSessionVersions(dev.statekeeper.v1.ListSessionVersionsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionVersionsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListSessionVersionsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the session as it was at one version.
     * Errors: INVALID_ARGUMENT for a non-positive `version`; NOT_FOUND if the
     * session or that version does not exist; NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    default void getSessionVersion(dev.statekeeper.v1.GetSessionVersionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionVersionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetSessionVersionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Rolls a session back to an earlier version. The rollback is itself a new
     * version whose `parent_version` is the target: the session's fields, its
     * compaction state and its working window become what they were at the
     * target. Messages appended after the target leave the window and are kept
     * in the history, marked as rolled back.
     * Errors: INVALID_ARGUMENT for a non-positive `target_version`; NOT_FOUND if
     * the target version does not exist; NOT_FOUND (SESSION_EXPIRED);
     * ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    default void rollbackSession(dev.statekeeper.v1.RollbackSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RollbackSessionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRollbackSessionMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service SessionService.
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public static abstract class SessionServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return SessionServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service SessionService.
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public static final class SessionServiceStub
      extends io.grpc.stub.AbstractAsyncStub<SessionServiceStub> {
    private SessionServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates a session.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a malformed `session_id`, a
     * missing `session.user_id`, an unknown status or a negative TTL;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) for oversized variables or metadata;
     * ALREADY_EXISTS if `session_id` is taken in the caller's tenant (even by an
     * expired session that has not been swept yet).
     * </pre>
     */
    public void createSession(dev.statekeeper.v1.CreateSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CreateSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns a session without its messages.
     * Errors: INVALID_ARGUMENT for an empty or malformed `session_id`;
     * NOT_FOUND (NOT_FOUND) if it does not exist in the caller's tenant;
     * NOT_FOUND (SESSION_EXPIRED) if its TTL has passed.
     * </pre>
     */
    public void getSession(dev.statekeeper.v1.GetSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the caller's sessions, newest first, optionally filtered by user,
     * agent and status. Expired sessions are never listed.
     * Errors: INVALID_ARGUMENT for a negative `page_size`, a malformed
     * `page_token` or one issued for different filters.
     * </pre>
     */
    public void listSessions(dev.statekeeper.v1.ListSessionsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Updates the fields of a session named by `update_mask`.
     * Updatable paths: `agent_id`, `status`, `context_variables`,
     * `active_tools`, `pending_tool_calls`, `metadata`, `ttl` (restarts the TTL
     * from now; a zero TTL removes the expiry). `session_id`, `user_id` and the
     * output-only fields cannot be updated. An empty mask updates every
     * updatable field that is set (non-default) in `session`; the path `*`
     * replaces every updatable field.
     * Errors: INVALID_ARGUMENT for an unknown or immutable mask path;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale.
     * </pre>
     */
    public void updateSession(dev.statekeeper.v1.UpdateSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.UpdateSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getUpdateSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes a session, its messages and its versions.
     * Errors: NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH)
     * if `expected_etag` is set and stale.
     * </pre>
     */
    public void deleteSession(dev.statekeeper.v1.DeleteSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Appends messages to the end of the session's history, atomically (all or
     * none) as one new version. The token count of each message is computed
     * once, here, and stored.
     * Retrying with the same `request_id` returns the original result without
     * appending again, so a client that lost the reply can retry safely.
     * Errors: INVALID_ARGUMENT for an unknown role, empty content with no tool
     * calls, a TOOL message without `tool_call_id`, a tool call without id or
     * name, or a `request_id` reused for a different session; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) for too many messages in one call or an oversized
     * message; NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public void appendMessages(dev.statekeeper.v1.AppendMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AppendMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAppendMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the full message history of a session in append order, including
     * messages that compaction replaced in the working window. Messages undone
     * by a rollback are listed only when `include_rolled_back` is set.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public void listMessages(dev.statekeeper.v1.ListMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the newest part of the working window that fits a token budget.
     * Accounting: `token_budget` is the model's context size. The server first
     * sets aside `reserved_output_tokens`, the system prompt and the tools
     * schema, then walks the working window from the newest message backwards
     * and keeps messages while they fit. An assistant message with tool calls
     * and the TOOL messages answering it are kept or dropped together, never
     * split. The part that does not fit is summarized (see `summary`) and the
     * summary is counted inside the budget. The response's `accounting` adds up
     * to exactly what is returned, so `accounting.total_tokens` never exceeds
     * `token_budget - reserved_output_tokens`.
     * Token counts use tiktoken's cl100k_base and the OpenAI chat framing:
     * a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if
     * name is set), plus for each tool call tokens(id) + tokens(name) +
     * tokens(arguments) + 3, plus tokens(tool_call_id) for a TOOL message. The
     * system prompt and the summary each cost what a SYSTEM message with that
     * content costs; the tools schema costs tokens(tools_json); every window
     * adds 3 tokens that prime the reply.
     * Errors: INVALID_ARGUMENT for a non-positive `token_budget`, a negative
     * reserve, or malformed `tools_json`; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) if the reserve, the system prompt, the tools and
     * the reply priming alone exceed the budget; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public void getContextWindow(dev.statekeeper.v1.GetContextWindowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetContextWindowResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetContextWindowMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Compacts the working window: every message older than the newest
     * `keep_recent_messages` is replaced in the window by one summary, and the
     * originals stay in the history (ListMessages). The cut never splits a tool
     * call from its results. Compacting a window that is already short enough is
     * a no-op that creates no version.
     * Errors: INVALID_ARGUMENT for a negative `keep_recent_messages`;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public void compactSession(dev.statekeeper.v1.CompactSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompactSessionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the versions of a session, newest first.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public void listSessionVersions(dev.statekeeper.v1.ListSessionVersionsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionVersionsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListSessionVersionsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the session as it was at one version.
     * Errors: INVALID_ARGUMENT for a non-positive `version`; NOT_FOUND if the
     * session or that version does not exist; NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public void getSessionVersion(dev.statekeeper.v1.GetSessionVersionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionVersionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetSessionVersionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Rolls a session back to an earlier version. The rollback is itself a new
     * version whose `parent_version` is the target: the session's fields, its
     * compaction state and its working window become what they were at the
     * target. Messages appended after the target leave the window and are kept
     * in the history, marked as rolled back.
     * Errors: INVALID_ARGUMENT for a non-positive `target_version`; NOT_FOUND if
     * the target version does not exist; NOT_FOUND (SESSION_EXPIRED);
     * ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public void rollbackSession(dev.statekeeper.v1.RollbackSessionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RollbackSessionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRollbackSessionMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service SessionService.
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public static final class SessionServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<SessionServiceBlockingV2Stub> {
    private SessionServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates a session.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a malformed `session_id`, a
     * missing `session.user_id`, an unknown status or a negative TTL;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) for oversized variables or metadata;
     * ALREADY_EXISTS if `session_id` is taken in the caller's tenant (even by an
     * expired session that has not been swept yet).
     * </pre>
     */
    public dev.statekeeper.v1.CreateSessionResponse createSession(dev.statekeeper.v1.CreateSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a session without its messages.
     * Errors: INVALID_ARGUMENT for an empty or malformed `session_id`;
     * NOT_FOUND (NOT_FOUND) if it does not exist in the caller's tenant;
     * NOT_FOUND (SESSION_EXPIRED) if its TTL has passed.
     * </pre>
     */
    public dev.statekeeper.v1.GetSessionResponse getSession(dev.statekeeper.v1.GetSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the caller's sessions, newest first, optionally filtered by user,
     * agent and status. Expired sessions are never listed.
     * Errors: INVALID_ARGUMENT for a negative `page_size`, a malformed
     * `page_token` or one issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListSessionsResponse listSessions(dev.statekeeper.v1.ListSessionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Updates the fields of a session named by `update_mask`.
     * Updatable paths: `agent_id`, `status`, `context_variables`,
     * `active_tools`, `pending_tool_calls`, `metadata`, `ttl` (restarts the TTL
     * from now; a zero TTL removes the expiry). `session_id`, `user_id` and the
     * output-only fields cannot be updated. An empty mask updates every
     * updatable field that is set (non-default) in `session`; the path `*`
     * replaces every updatable field.
     * Errors: INVALID_ARGUMENT for an unknown or immutable mask path;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale.
     * </pre>
     */
    public dev.statekeeper.v1.UpdateSessionResponse updateSession(dev.statekeeper.v1.UpdateSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getUpdateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a session, its messages and its versions.
     * Errors: NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH)
     * if `expected_etag` is set and stale.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteSessionResponse deleteSession(dev.statekeeper.v1.DeleteSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Appends messages to the end of the session's history, atomically (all or
     * none) as one new version. The token count of each message is computed
     * once, here, and stored.
     * Retrying with the same `request_id` returns the original result without
     * appending again, so a client that lost the reply can retry safely.
     * Errors: INVALID_ARGUMENT for an unknown role, empty content with no tool
     * calls, a TOOL message without `tool_call_id`, a tool call without id or
     * name, or a `request_id` reused for a different session; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) for too many messages in one call or an oversized
     * message; NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.AppendMessagesResponse appendMessages(dev.statekeeper.v1.AppendMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAppendMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the full message history of a session in append order, including
     * messages that compaction replaced in the working window. Messages undone
     * by a rollback are listed only when `include_rolled_back` is set.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.ListMessagesResponse listMessages(dev.statekeeper.v1.ListMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest part of the working window that fits a token budget.
     * Accounting: `token_budget` is the model's context size. The server first
     * sets aside `reserved_output_tokens`, the system prompt and the tools
     * schema, then walks the working window from the newest message backwards
     * and keeps messages while they fit. An assistant message with tool calls
     * and the TOOL messages answering it are kept or dropped together, never
     * split. The part that does not fit is summarized (see `summary`) and the
     * summary is counted inside the budget. The response's `accounting` adds up
     * to exactly what is returned, so `accounting.total_tokens` never exceeds
     * `token_budget - reserved_output_tokens`.
     * Token counts use tiktoken's cl100k_base and the OpenAI chat framing:
     * a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if
     * name is set), plus for each tool call tokens(id) + tokens(name) +
     * tokens(arguments) + 3, plus tokens(tool_call_id) for a TOOL message. The
     * system prompt and the summary each cost what a SYSTEM message with that
     * content costs; the tools schema costs tokens(tools_json); every window
     * adds 3 tokens that prime the reply.
     * Errors: INVALID_ARGUMENT for a non-positive `token_budget`, a negative
     * reserve, or malformed `tools_json`; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) if the reserve, the system prompt, the tools and
     * the reply priming alone exceed the budget; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.GetContextWindowResponse getContextWindow(dev.statekeeper.v1.GetContextWindowRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetContextWindowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compacts the working window: every message older than the newest
     * `keep_recent_messages` is replaced in the window by one summary, and the
     * originals stay in the history (ListMessages). The cut never splits a tool
     * call from its results. Compacting a window that is already short enough is
     * a no-op that creates no version.
     * Errors: INVALID_ARGUMENT for a negative `keep_recent_messages`;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.CompactSessionResponse compactSession(dev.statekeeper.v1.CompactSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompactSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the versions of a session, newest first.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.ListSessionVersionsResponse listSessionVersions(dev.statekeeper.v1.ListSessionVersionsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListSessionVersionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the session as it was at one version.
     * Errors: INVALID_ARGUMENT for a non-positive `version`; NOT_FOUND if the
     * session or that version does not exist; NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.GetSessionVersionResponse getSessionVersion(dev.statekeeper.v1.GetSessionVersionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetSessionVersionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rolls a session back to an earlier version. The rollback is itself a new
     * version whose `parent_version` is the target: the session's fields, its
     * compaction state and its working window become what they were at the
     * target. Messages appended after the target leave the window and are kept
     * in the history, marked as rolled back.
     * Errors: INVALID_ARGUMENT for a non-positive `target_version`; NOT_FOUND if
     * the target version does not exist; NOT_FOUND (SESSION_EXPIRED);
     * ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.RollbackSessionResponse rollbackSession(dev.statekeeper.v1.RollbackSessionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRollbackSessionMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service SessionService.
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public static final class SessionServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<SessionServiceBlockingStub> {
    private SessionServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates a session.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a malformed `session_id`, a
     * missing `session.user_id`, an unknown status or a negative TTL;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) for oversized variables or metadata;
     * ALREADY_EXISTS if `session_id` is taken in the caller's tenant (even by an
     * expired session that has not been swept yet).
     * </pre>
     */
    public dev.statekeeper.v1.CreateSessionResponse createSession(dev.statekeeper.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCreateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a session without its messages.
     * Errors: INVALID_ARGUMENT for an empty or malformed `session_id`;
     * NOT_FOUND (NOT_FOUND) if it does not exist in the caller's tenant;
     * NOT_FOUND (SESSION_EXPIRED) if its TTL has passed.
     * </pre>
     */
    public dev.statekeeper.v1.GetSessionResponse getSession(dev.statekeeper.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the caller's sessions, newest first, optionally filtered by user,
     * agent and status. Expired sessions are never listed.
     * Errors: INVALID_ARGUMENT for a negative `page_size`, a malformed
     * `page_token` or one issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListSessionsResponse listSessions(dev.statekeeper.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Updates the fields of a session named by `update_mask`.
     * Updatable paths: `agent_id`, `status`, `context_variables`,
     * `active_tools`, `pending_tool_calls`, `metadata`, `ttl` (restarts the TTL
     * from now; a zero TTL removes the expiry). `session_id`, `user_id` and the
     * output-only fields cannot be updated. An empty mask updates every
     * updatable field that is set (non-default) in `session`; the path `*`
     * replaces every updatable field.
     * Errors: INVALID_ARGUMENT for an unknown or immutable mask path;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale.
     * </pre>
     */
    public dev.statekeeper.v1.UpdateSessionResponse updateSession(dev.statekeeper.v1.UpdateSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getUpdateSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes a session, its messages and its versions.
     * Errors: NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH)
     * if `expected_etag` is set and stale.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteSessionResponse deleteSession(dev.statekeeper.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Appends messages to the end of the session's history, atomically (all or
     * none) as one new version. The token count of each message is computed
     * once, here, and stored.
     * Retrying with the same `request_id` returns the original result without
     * appending again, so a client that lost the reply can retry safely.
     * Errors: INVALID_ARGUMENT for an unknown role, empty content with no tool
     * calls, a TOOL message without `tool_call_id`, a tool call without id or
     * name, or a `request_id` reused for a different session; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) for too many messages in one call or an oversized
     * message; NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.AppendMessagesResponse appendMessages(dev.statekeeper.v1.AppendMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAppendMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the full message history of a session in append order, including
     * messages that compaction replaced in the working window. Messages undone
     * by a rollback are listed only when `include_rolled_back` is set.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.ListMessagesResponse listMessages(dev.statekeeper.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the newest part of the working window that fits a token budget.
     * Accounting: `token_budget` is the model's context size. The server first
     * sets aside `reserved_output_tokens`, the system prompt and the tools
     * schema, then walks the working window from the newest message backwards
     * and keeps messages while they fit. An assistant message with tool calls
     * and the TOOL messages answering it are kept or dropped together, never
     * split. The part that does not fit is summarized (see `summary`) and the
     * summary is counted inside the budget. The response's `accounting` adds up
     * to exactly what is returned, so `accounting.total_tokens` never exceeds
     * `token_budget - reserved_output_tokens`.
     * Token counts use tiktoken's cl100k_base and the OpenAI chat framing:
     * a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if
     * name is set), plus for each tool call tokens(id) + tokens(name) +
     * tokens(arguments) + 3, plus tokens(tool_call_id) for a TOOL message. The
     * system prompt and the summary each cost what a SYSTEM message with that
     * content costs; the tools schema costs tokens(tools_json); every window
     * adds 3 tokens that prime the reply.
     * Errors: INVALID_ARGUMENT for a non-positive `token_budget`, a negative
     * reserve, or malformed `tools_json`; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) if the reserve, the system prompt, the tools and
     * the reply priming alone exceed the budget; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.GetContextWindowResponse getContextWindow(dev.statekeeper.v1.GetContextWindowRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetContextWindowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Compacts the working window: every message older than the newest
     * `keep_recent_messages` is replaced in the window by one summary, and the
     * originals stay in the history (ListMessages). The cut never splits a tool
     * call from its results. Compacting a window that is already short enough is
     * a no-op that creates no version.
     * Errors: INVALID_ARGUMENT for a negative `keep_recent_messages`;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.CompactSessionResponse compactSession(dev.statekeeper.v1.CompactSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompactSessionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the versions of a session, newest first.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.ListSessionVersionsResponse listSessionVersions(dev.statekeeper.v1.ListSessionVersionsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListSessionVersionsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the session as it was at one version.
     * Errors: INVALID_ARGUMENT for a non-positive `version`; NOT_FOUND if the
     * session or that version does not exist; NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public dev.statekeeper.v1.GetSessionVersionResponse getSessionVersion(dev.statekeeper.v1.GetSessionVersionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetSessionVersionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rolls a session back to an earlier version. The rollback is itself a new
     * version whose `parent_version` is the target: the session's fields, its
     * compaction state and its working window become what they were at the
     * target. Messages appended after the target leave the window and are kept
     * in the history, marked as rolled back.
     * Errors: INVALID_ARGUMENT for a non-positive `target_version`; NOT_FOUND if
     * the target version does not exist; NOT_FOUND (SESSION_EXPIRED);
     * ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public dev.statekeeper.v1.RollbackSessionResponse rollbackSession(dev.statekeeper.v1.RollbackSessionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRollbackSessionMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service SessionService.
   * <pre>
   * SessionService keeps agent sessions: their status and variables, the full
   * message history, the working window that is sent to a model, and a version
   * history of every change.
   * Every mutation (create, update, append, compact, rollback) creates a new
   * session version; `Session.version` is that number and `Session.etag` is
   * derived from it. Mutations accept an `expected_etag` for optimistic
   * concurrency (see common.proto).
   * A session whose `expire_time` has passed is invisible at once: every RPC
   * that addresses it answers NOT_FOUND with reason SESSION_EXPIRED, and List
   * omits it. A background sweeper deletes expired sessions later.
   * </pre>
   */
  public static final class SessionServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<SessionServiceFutureStub> {
    private SessionServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected SessionServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new SessionServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Creates a session.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a malformed `session_id`, a
     * missing `session.user_id`, an unknown status or a negative TTL;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) for oversized variables or metadata;
     * ALREADY_EXISTS if `session_id` is taken in the caller's tenant (even by an
     * expired session that has not been swept yet).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CreateSessionResponse> createSession(
        dev.statekeeper.v1.CreateSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCreateSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns a session without its messages.
     * Errors: INVALID_ARGUMENT for an empty or malformed `session_id`;
     * NOT_FOUND (NOT_FOUND) if it does not exist in the caller's tenant;
     * NOT_FOUND (SESSION_EXPIRED) if its TTL has passed.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetSessionResponse> getSession(
        dev.statekeeper.v1.GetSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the caller's sessions, newest first, optionally filtered by user,
     * agent and status. Expired sessions are never listed.
     * Errors: INVALID_ARGUMENT for a negative `page_size`, a malformed
     * `page_token` or one issued for different filters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListSessionsResponse> listSessions(
        dev.statekeeper.v1.ListSessionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Updates the fields of a session named by `update_mask`.
     * Updatable paths: `agent_id`, `status`, `context_variables`,
     * `active_tools`, `pending_tool_calls`, `metadata`, `ttl` (restarts the TTL
     * from now; a zero TTL removes the expiry). `session_id`, `user_id` and the
     * output-only fields cannot be updated. An empty mask updates every
     * updatable field that is set (non-default) in `session`; the path `*`
     * replaces every updatable field.
     * Errors: INVALID_ARGUMENT for an unknown or immutable mask path;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.UpdateSessionResponse> updateSession(
        dev.statekeeper.v1.UpdateSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getUpdateSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes a session, its messages and its versions.
     * Errors: NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH)
     * if `expected_etag` is set and stale.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeleteSessionResponse> deleteSession(
        dev.statekeeper.v1.DeleteSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Appends messages to the end of the session's history, atomically (all or
     * none) as one new version. The token count of each message is computed
     * once, here, and stored.
     * Retrying with the same `request_id` returns the original result without
     * appending again, so a client that lost the reply can retry safely.
     * Errors: INVALID_ARGUMENT for an unknown role, empty content with no tool
     * calls, a TOOL message without `tool_call_id`, a tool call without id or
     * name, or a `request_id` reused for a different session; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) for too many messages in one call or an oversized
     * message; NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.AppendMessagesResponse> appendMessages(
        dev.statekeeper.v1.AppendMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAppendMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the full message history of a session in append order, including
     * messages that compaction replaced in the working window. Messages undone
     * by a rollback are listed only when `include_rolled_back` is set.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListMessagesResponse> listMessages(
        dev.statekeeper.v1.ListMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the newest part of the working window that fits a token budget.
     * Accounting: `token_budget` is the model's context size. The server first
     * sets aside `reserved_output_tokens`, the system prompt and the tools
     * schema, then walks the working window from the newest message backwards
     * and keeps messages while they fit. An assistant message with tool calls
     * and the TOOL messages answering it are kept or dropped together, never
     * split. The part that does not fit is summarized (see `summary`) and the
     * summary is counted inside the budget. The response's `accounting` adds up
     * to exactly what is returned, so `accounting.total_tokens` never exceeds
     * `token_budget - reserved_output_tokens`.
     * Token counts use tiktoken's cl100k_base and the OpenAI chat framing:
     * a message costs 3 + tokens(role) + tokens(content) + tokens(name) (+1 if
     * name is set), plus for each tool call tokens(id) + tokens(name) +
     * tokens(arguments) + 3, plus tokens(tool_call_id) for a TOOL message. The
     * system prompt and the summary each cost what a SYSTEM message with that
     * content costs; the tools schema costs tokens(tools_json); every window
     * adds 3 tokens that prime the reply.
     * Errors: INVALID_ARGUMENT for a non-positive `token_budget`, a negative
     * reserve, or malformed `tools_json`; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) if the reserve, the system prompt, the tools and
     * the reply priming alone exceed the budget; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetContextWindowResponse> getContextWindow(
        dev.statekeeper.v1.GetContextWindowRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetContextWindowMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Compacts the working window: every message older than the newest
     * `keep_recent_messages` is replaced in the window by one summary, and the
     * originals stay in the history (ListMessages). The cut never splits a tool
     * call from its results. Compacting a window that is already short enough is
     * a no-op that creates no version.
     * Errors: INVALID_ARGUMENT for a negative `keep_recent_messages`;
     * NOT_FOUND / NOT_FOUND (SESSION_EXPIRED); ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CompactSessionResponse> compactSession(
        dev.statekeeper.v1.CompactSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompactSessionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the versions of a session, newest first.
     * Errors: INVALID_ARGUMENT for paging errors; NOT_FOUND /
     * NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListSessionVersionsResponse> listSessionVersions(
        dev.statekeeper.v1.ListSessionVersionsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListSessionVersionsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the session as it was at one version.
     * Errors: INVALID_ARGUMENT for a non-positive `version`; NOT_FOUND if the
     * session or that version does not exist; NOT_FOUND (SESSION_EXPIRED).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetSessionVersionResponse> getSessionVersion(
        dev.statekeeper.v1.GetSessionVersionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetSessionVersionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Rolls a session back to an earlier version. The rollback is itself a new
     * version whose `parent_version` is the target: the session's fields, its
     * compaction state and its working window become what they were at the
     * target. Messages appended after the target leave the window and are kept
     * in the history, marked as rolled back.
     * Errors: INVALID_ARGUMENT for a non-positive `target_version`; NOT_FOUND if
     * the target version does not exist; NOT_FOUND (SESSION_EXPIRED);
     * ABORTED (ETAG_MISMATCH).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RollbackSessionResponse> rollbackSession(
        dev.statekeeper.v1.RollbackSessionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRollbackSessionMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_CREATE_SESSION = 0;
  private static final int METHODID_GET_SESSION = 1;
  private static final int METHODID_LIST_SESSIONS = 2;
  private static final int METHODID_UPDATE_SESSION = 3;
  private static final int METHODID_DELETE_SESSION = 4;
  private static final int METHODID_APPEND_MESSAGES = 5;
  private static final int METHODID_LIST_MESSAGES = 6;
  private static final int METHODID_GET_CONTEXT_WINDOW = 7;
  private static final int METHODID_COMPACT_SESSION = 8;
  private static final int METHODID_LIST_SESSION_VERSIONS = 9;
  private static final int METHODID_GET_SESSION_VERSION = 10;
  private static final int METHODID_ROLLBACK_SESSION = 11;

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
        case METHODID_CREATE_SESSION:
          serviceImpl.createSession((dev.statekeeper.v1.CreateSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CreateSessionResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION:
          serviceImpl.getSession((dev.statekeeper.v1.GetSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSIONS:
          serviceImpl.listSessions((dev.statekeeper.v1.ListSessionsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionsResponse>) responseObserver);
          break;
        case METHODID_UPDATE_SESSION:
          serviceImpl.updateSession((dev.statekeeper.v1.UpdateSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.UpdateSessionResponse>) responseObserver);
          break;
        case METHODID_DELETE_SESSION:
          serviceImpl.deleteSession((dev.statekeeper.v1.DeleteSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteSessionResponse>) responseObserver);
          break;
        case METHODID_APPEND_MESSAGES:
          serviceImpl.appendMessages((dev.statekeeper.v1.AppendMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.AppendMessagesResponse>) responseObserver);
          break;
        case METHODID_LIST_MESSAGES:
          serviceImpl.listMessages((dev.statekeeper.v1.ListMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListMessagesResponse>) responseObserver);
          break;
        case METHODID_GET_CONTEXT_WINDOW:
          serviceImpl.getContextWindow((dev.statekeeper.v1.GetContextWindowRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetContextWindowResponse>) responseObserver);
          break;
        case METHODID_COMPACT_SESSION:
          serviceImpl.compactSession((dev.statekeeper.v1.CompactSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompactSessionResponse>) responseObserver);
          break;
        case METHODID_LIST_SESSION_VERSIONS:
          serviceImpl.listSessionVersions((dev.statekeeper.v1.ListSessionVersionsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListSessionVersionsResponse>) responseObserver);
          break;
        case METHODID_GET_SESSION_VERSION:
          serviceImpl.getSessionVersion((dev.statekeeper.v1.GetSessionVersionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetSessionVersionResponse>) responseObserver);
          break;
        case METHODID_ROLLBACK_SESSION:
          serviceImpl.rollbackSession((dev.statekeeper.v1.RollbackSessionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RollbackSessionResponse>) responseObserver);
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
          getCreateSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CreateSessionRequest,
              dev.statekeeper.v1.CreateSessionResponse>(
                service, METHODID_CREATE_SESSION)))
        .addMethod(
          getGetSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetSessionRequest,
              dev.statekeeper.v1.GetSessionResponse>(
                service, METHODID_GET_SESSION)))
        .addMethod(
          getListSessionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListSessionsRequest,
              dev.statekeeper.v1.ListSessionsResponse>(
                service, METHODID_LIST_SESSIONS)))
        .addMethod(
          getUpdateSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.UpdateSessionRequest,
              dev.statekeeper.v1.UpdateSessionResponse>(
                service, METHODID_UPDATE_SESSION)))
        .addMethod(
          getDeleteSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeleteSessionRequest,
              dev.statekeeper.v1.DeleteSessionResponse>(
                service, METHODID_DELETE_SESSION)))
        .addMethod(
          getAppendMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.AppendMessagesRequest,
              dev.statekeeper.v1.AppendMessagesResponse>(
                service, METHODID_APPEND_MESSAGES)))
        .addMethod(
          getListMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListMessagesRequest,
              dev.statekeeper.v1.ListMessagesResponse>(
                service, METHODID_LIST_MESSAGES)))
        .addMethod(
          getGetContextWindowMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetContextWindowRequest,
              dev.statekeeper.v1.GetContextWindowResponse>(
                service, METHODID_GET_CONTEXT_WINDOW)))
        .addMethod(
          getCompactSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CompactSessionRequest,
              dev.statekeeper.v1.CompactSessionResponse>(
                service, METHODID_COMPACT_SESSION)))
        .addMethod(
          getListSessionVersionsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListSessionVersionsRequest,
              dev.statekeeper.v1.ListSessionVersionsResponse>(
                service, METHODID_LIST_SESSION_VERSIONS)))
        .addMethod(
          getGetSessionVersionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetSessionVersionRequest,
              dev.statekeeper.v1.GetSessionVersionResponse>(
                service, METHODID_GET_SESSION_VERSION)))
        .addMethod(
          getRollbackSessionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RollbackSessionRequest,
              dev.statekeeper.v1.RollbackSessionResponse>(
                service, METHODID_ROLLBACK_SESSION)))
        .build();
  }

  private static abstract class SessionServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    SessionServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.SessionProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("SessionService");
    }
  }

  private static final class SessionServiceFileDescriptorSupplier
      extends SessionServiceBaseDescriptorSupplier {
    SessionServiceFileDescriptorSupplier() {}
  }

  private static final class SessionServiceMethodDescriptorSupplier
      extends SessionServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    SessionServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (SessionServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new SessionServiceFileDescriptorSupplier())
              .addMethod(getCreateSessionMethod())
              .addMethod(getGetSessionMethod())
              .addMethod(getListSessionsMethod())
              .addMethod(getUpdateSessionMethod())
              .addMethod(getDeleteSessionMethod())
              .addMethod(getAppendMessagesMethod())
              .addMethod(getListMessagesMethod())
              .addMethod(getGetContextWindowMethod())
              .addMethod(getCompactSessionMethod())
              .addMethod(getListSessionVersionsMethod())
              .addMethod(getGetSessionVersionMethod())
              .addMethod(getRollbackSessionMethod())
              .build();
        }
      }
    }
    return result;
  }
}
