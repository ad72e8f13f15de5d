package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * AdminService is for operators: it reads the audit trail.
 * Every mutation of durable state (creating, updating, appending to,
 * compacting, rolling back or deleting a session, and the sweeper deleting an
 * expired one) leaves exactly one audit record, written in the same
 * transaction as the change: a change that is stored has its record, and a
 * change that failed has none. Reads are not audited.
 * A caller sees only the audit records of its own tenant. Operators with
 * access to the database can read every tenant with `statekeeper audit list`.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class AdminServiceGrpc {

  private AdminServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.AdminService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListAuditRecordsRequest,
      dev.statekeeper.v1.ListAuditRecordsResponse> getListAuditRecordsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListAuditRecords",
      requestType = dev.statekeeper.v1.ListAuditRecordsRequest.class,
      responseType = dev.statekeeper.v1.ListAuditRecordsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListAuditRecordsRequest,
      dev.statekeeper.v1.ListAuditRecordsResponse> getListAuditRecordsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListAuditRecordsRequest, dev.statekeeper.v1.ListAuditRecordsResponse> getListAuditRecordsMethod;
    if ((getListAuditRecordsMethod = AdminServiceGrpc.getListAuditRecordsMethod) == null) {
      synchronized (AdminServiceGrpc.class) {
        if ((getListAuditRecordsMethod = AdminServiceGrpc.getListAuditRecordsMethod) == null) {
          AdminServiceGrpc.getListAuditRecordsMethod = getListAuditRecordsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListAuditRecordsRequest, dev.statekeeper.v1.ListAuditRecordsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListAuditRecords"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListAuditRecordsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListAuditRecordsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AdminServiceMethodDescriptorSupplier("ListAuditRecords"))
              .build();
        }
      }
    }
    return getListAuditRecordsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static AdminServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AdminServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AdminServiceStub>() {
        @java.lang.Override
        public AdminServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AdminServiceStub(channel, callOptions);
        }
      };
    return AdminServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static AdminServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AdminServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AdminServiceBlockingV2Stub>() {
        @java.lang.Override
        public AdminServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AdminServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return AdminServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static AdminServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AdminServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AdminServiceBlockingStub>() {
        @java.lang.Override
        public AdminServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AdminServiceBlockingStub(channel, callOptions);
        }
      };
    return AdminServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static AdminServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AdminServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AdminServiceFutureStub>() {
        @java.lang.Override
        public AdminServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AdminServiceFutureStub(channel, callOptions);
        }
      };
    return AdminServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Lists the caller's audit records, newest first, optionally filtered.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a negative `page_size`, a
     * malformed `page_token` or one issued for different filters, a malformed
     * `entity_id`, or an `end_time` not after `start_time`; UNAVAILABLE
     * (STORAGE_UNAVAILABLE) if the durable store cannot be reached.
     * </pre>
     */
    default void listAuditRecords(dev.statekeeper.v1.ListAuditRecordsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListAuditRecordsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListAuditRecordsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service AdminService.
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public static abstract class AdminServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return AdminServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service AdminService.
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public static final class AdminServiceStub
      extends io.grpc.stub.AbstractAsyncStub<AdminServiceStub> {
    private AdminServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AdminServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AdminServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the caller's audit records, newest first, optionally filtered.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a negative `page_size`, a
     * malformed `page_token` or one issued for different filters, a malformed
     * `entity_id`, or an `end_time` not after `start_time`; UNAVAILABLE
     * (STORAGE_UNAVAILABLE) if the durable store cannot be reached.
     * </pre>
     */
    public void listAuditRecords(dev.statekeeper.v1.ListAuditRecordsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListAuditRecordsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListAuditRecordsMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service AdminService.
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public static final class AdminServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<AdminServiceBlockingV2Stub> {
    private AdminServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AdminServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AdminServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the caller's audit records, newest first, optionally filtered.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a negative `page_size`, a
     * malformed `page_token` or one issued for different filters, a malformed
     * `entity_id`, or an `end_time` not after `start_time`; UNAVAILABLE
     * (STORAGE_UNAVAILABLE) if the durable store cannot be reached.
     * </pre>
     */
    public dev.statekeeper.v1.ListAuditRecordsResponse listAuditRecords(dev.statekeeper.v1.ListAuditRecordsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListAuditRecordsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service AdminService.
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public static final class AdminServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<AdminServiceBlockingStub> {
    private AdminServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AdminServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AdminServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the caller's audit records, newest first, optionally filtered.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a negative `page_size`, a
     * malformed `page_token` or one issued for different filters, a malformed
     * `entity_id`, or an `end_time` not after `start_time`; UNAVAILABLE
     * (STORAGE_UNAVAILABLE) if the durable store cannot be reached.
     * </pre>
     */
    public dev.statekeeper.v1.ListAuditRecordsResponse listAuditRecords(dev.statekeeper.v1.ListAuditRecordsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListAuditRecordsMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service AdminService.
   * <pre>
   * AdminService is for operators: it reads the audit trail.
   * Every mutation of durable state (creating, updating, appending to,
   * compacting, rolling back or deleting a session, and the sweeper deleting an
   * expired one) leaves exactly one audit record, written in the same
   * transaction as the change: a change that is stored has its record, and a
   * change that failed has none. Reads are not audited.
   * A caller sees only the audit records of its own tenant. Operators with
   * access to the database can read every tenant with `statekeeper audit list`.
   * </pre>
   */
  public static final class AdminServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<AdminServiceFutureStub> {
    private AdminServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AdminServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AdminServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Lists the caller's audit records, newest first, optionally filtered.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) for a negative `page_size`, a
     * malformed `page_token` or one issued for different filters, a malformed
     * `entity_id`, or an `end_time` not after `start_time`; UNAVAILABLE
     * (STORAGE_UNAVAILABLE) if the durable store cannot be reached.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListAuditRecordsResponse> listAuditRecords(
        dev.statekeeper.v1.ListAuditRecordsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListAuditRecordsMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_LIST_AUDIT_RECORDS = 0;

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
        case METHODID_LIST_AUDIT_RECORDS:
          serviceImpl.listAuditRecords((dev.statekeeper.v1.ListAuditRecordsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListAuditRecordsResponse>) responseObserver);
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
          getListAuditRecordsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListAuditRecordsRequest,
              dev.statekeeper.v1.ListAuditRecordsResponse>(
                service, METHODID_LIST_AUDIT_RECORDS)))
        .build();
  }

  private static abstract class AdminServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    AdminServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.AdminProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("AdminService");
    }
  }

  private static final class AdminServiceFileDescriptorSupplier
      extends AdminServiceBaseDescriptorSupplier {
    AdminServiceFileDescriptorSupplier() {}
  }

  private static final class AdminServiceMethodDescriptorSupplier
      extends AdminServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    AdminServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (AdminServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new AdminServiceFileDescriptorSupplier())
              .addMethod(getListAuditRecordsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
