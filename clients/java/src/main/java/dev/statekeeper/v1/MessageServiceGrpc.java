package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * MessageService is a message bus between agents: each agent id of a tenant
 * has an inbox.
 * Delivery is at-least-once with explicit acknowledgement:
 * * A delivered message is invisible to other receivers of the same inbox for
 *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
 *   passing, makes it deliverable again. Every delivery gets a new receipt
 *   handle; only the latest receipt of a message is valid.
 * * Each delivery increments the message's delivery count. A message that
 *   would be delivered more than the configured maximum number of times (or
 *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
 * * Several receivers of one inbox compete: each delivery goes to one of
 *   them.
 * * Order: messages are delivered roughly in the order they became visible
 *   (send time plus delay); a redelivered message may overtake newer ones.
 * * Duplicates: a send with an `idempotency_key` already used for the same
 *   recipient within the configured deduplication window stores nothing and
 *   returns the first message's id. Receivers must still tolerate
 *   redelivery.
 * * Expiry: a message whose `expire_time` passes before it is acknowledged is
 *   dropped (it is not dead-lettered).
 * Request-reply: RequestReply sends a request and waits for the first message
 * to the requester carrying the request's correlation id; SendReply (or
 * SendMessage with that correlation id) answers it.
 * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
 * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class MessageServiceGrpc {

  private MessageServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.MessageService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.SendMessageRequest,
      dev.statekeeper.v1.SendMessageResponse> getSendMessageMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendMessage",
      requestType = dev.statekeeper.v1.SendMessageRequest.class,
      responseType = dev.statekeeper.v1.SendMessageResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.SendMessageRequest,
      dev.statekeeper.v1.SendMessageResponse> getSendMessageMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.SendMessageRequest, dev.statekeeper.v1.SendMessageResponse> getSendMessageMethod;
    if ((getSendMessageMethod = MessageServiceGrpc.getSendMessageMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getSendMessageMethod = MessageServiceGrpc.getSendMessageMethod) == null) {
          MessageServiceGrpc.getSendMessageMethod = getSendMessageMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.SendMessageRequest, dev.statekeeper.v1.SendMessageResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendMessage"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SendMessageRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SendMessageResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("SendMessage"))
              .build();
        }
      }
    }
    return getSendMessageMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ReceiveMessagesRequest,
      dev.statekeeper.v1.ReceiveMessagesResponse> getReceiveMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ReceiveMessages",
      requestType = dev.statekeeper.v1.ReceiveMessagesRequest.class,
      responseType = dev.statekeeper.v1.ReceiveMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ReceiveMessagesRequest,
      dev.statekeeper.v1.ReceiveMessagesResponse> getReceiveMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ReceiveMessagesRequest, dev.statekeeper.v1.ReceiveMessagesResponse> getReceiveMessagesMethod;
    if ((getReceiveMessagesMethod = MessageServiceGrpc.getReceiveMessagesMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getReceiveMessagesMethod = MessageServiceGrpc.getReceiveMessagesMethod) == null) {
          MessageServiceGrpc.getReceiveMessagesMethod = getReceiveMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ReceiveMessagesRequest, dev.statekeeper.v1.ReceiveMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ReceiveMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ReceiveMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ReceiveMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ReceiveMessages"))
              .build();
        }
      }
    }
    return getReceiveMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.PullMessagesRequest,
      dev.statekeeper.v1.PullMessagesResponse> getPullMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PullMessages",
      requestType = dev.statekeeper.v1.PullMessagesRequest.class,
      responseType = dev.statekeeper.v1.PullMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.PullMessagesRequest,
      dev.statekeeper.v1.PullMessagesResponse> getPullMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.PullMessagesRequest, dev.statekeeper.v1.PullMessagesResponse> getPullMessagesMethod;
    if ((getPullMessagesMethod = MessageServiceGrpc.getPullMessagesMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getPullMessagesMethod = MessageServiceGrpc.getPullMessagesMethod) == null) {
          MessageServiceGrpc.getPullMessagesMethod = getPullMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.PullMessagesRequest, dev.statekeeper.v1.PullMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PullMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PullMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PullMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("PullMessages"))
              .build();
        }
      }
    }
    return getPullMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.AckMessagesRequest,
      dev.statekeeper.v1.AckMessagesResponse> getAckMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AckMessages",
      requestType = dev.statekeeper.v1.AckMessagesRequest.class,
      responseType = dev.statekeeper.v1.AckMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.AckMessagesRequest,
      dev.statekeeper.v1.AckMessagesResponse> getAckMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.AckMessagesRequest, dev.statekeeper.v1.AckMessagesResponse> getAckMessagesMethod;
    if ((getAckMessagesMethod = MessageServiceGrpc.getAckMessagesMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getAckMessagesMethod = MessageServiceGrpc.getAckMessagesMethod) == null) {
          MessageServiceGrpc.getAckMessagesMethod = getAckMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.AckMessagesRequest, dev.statekeeper.v1.AckMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AckMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AckMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AckMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("AckMessages"))
              .build();
        }
      }
    }
    return getAckMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.NackMessagesRequest,
      dev.statekeeper.v1.NackMessagesResponse> getNackMessagesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "NackMessages",
      requestType = dev.statekeeper.v1.NackMessagesRequest.class,
      responseType = dev.statekeeper.v1.NackMessagesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.NackMessagesRequest,
      dev.statekeeper.v1.NackMessagesResponse> getNackMessagesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.NackMessagesRequest, dev.statekeeper.v1.NackMessagesResponse> getNackMessagesMethod;
    if ((getNackMessagesMethod = MessageServiceGrpc.getNackMessagesMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getNackMessagesMethod = MessageServiceGrpc.getNackMessagesMethod) == null) {
          MessageServiceGrpc.getNackMessagesMethod = getNackMessagesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.NackMessagesRequest, dev.statekeeper.v1.NackMessagesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "NackMessages"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.NackMessagesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.NackMessagesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("NackMessages"))
              .build();
        }
      }
    }
    return getNackMessagesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtendVisibilityRequest,
      dev.statekeeper.v1.ExtendVisibilityResponse> getExtendVisibilityMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ExtendVisibility",
      requestType = dev.statekeeper.v1.ExtendVisibilityRequest.class,
      responseType = dev.statekeeper.v1.ExtendVisibilityResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtendVisibilityRequest,
      dev.statekeeper.v1.ExtendVisibilityResponse> getExtendVisibilityMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtendVisibilityRequest, dev.statekeeper.v1.ExtendVisibilityResponse> getExtendVisibilityMethod;
    if ((getExtendVisibilityMethod = MessageServiceGrpc.getExtendVisibilityMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getExtendVisibilityMethod = MessageServiceGrpc.getExtendVisibilityMethod) == null) {
          MessageServiceGrpc.getExtendVisibilityMethod = getExtendVisibilityMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ExtendVisibilityRequest, dev.statekeeper.v1.ExtendVisibilityResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ExtendVisibility"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ExtendVisibilityRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ExtendVisibilityResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ExtendVisibility"))
              .build();
        }
      }
    }
    return getExtendVisibilityMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RequestReplyRequest,
      dev.statekeeper.v1.RequestReplyResponse> getRequestReplyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RequestReply",
      requestType = dev.statekeeper.v1.RequestReplyRequest.class,
      responseType = dev.statekeeper.v1.RequestReplyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RequestReplyRequest,
      dev.statekeeper.v1.RequestReplyResponse> getRequestReplyMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RequestReplyRequest, dev.statekeeper.v1.RequestReplyResponse> getRequestReplyMethod;
    if ((getRequestReplyMethod = MessageServiceGrpc.getRequestReplyMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getRequestReplyMethod = MessageServiceGrpc.getRequestReplyMethod) == null) {
          MessageServiceGrpc.getRequestReplyMethod = getRequestReplyMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RequestReplyRequest, dev.statekeeper.v1.RequestReplyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RequestReply"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RequestReplyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RequestReplyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("RequestReply"))
              .build();
        }
      }
    }
    return getRequestReplyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.SendReplyRequest,
      dev.statekeeper.v1.SendReplyResponse> getSendReplyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SendReply",
      requestType = dev.statekeeper.v1.SendReplyRequest.class,
      responseType = dev.statekeeper.v1.SendReplyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.SendReplyRequest,
      dev.statekeeper.v1.SendReplyResponse> getSendReplyMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.SendReplyRequest, dev.statekeeper.v1.SendReplyResponse> getSendReplyMethod;
    if ((getSendReplyMethod = MessageServiceGrpc.getSendReplyMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getSendReplyMethod = MessageServiceGrpc.getSendReplyMethod) == null) {
          MessageServiceGrpc.getSendReplyMethod = getSendReplyMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.SendReplyRequest, dev.statekeeper.v1.SendReplyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SendReply"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SendReplyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SendReplyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("SendReply"))
              .build();
        }
      }
    }
    return getSendReplyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListDeadLettersRequest,
      dev.statekeeper.v1.ListDeadLettersResponse> getListDeadLettersMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListDeadLetters",
      requestType = dev.statekeeper.v1.ListDeadLettersRequest.class,
      responseType = dev.statekeeper.v1.ListDeadLettersResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListDeadLettersRequest,
      dev.statekeeper.v1.ListDeadLettersResponse> getListDeadLettersMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListDeadLettersRequest, dev.statekeeper.v1.ListDeadLettersResponse> getListDeadLettersMethod;
    if ((getListDeadLettersMethod = MessageServiceGrpc.getListDeadLettersMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getListDeadLettersMethod = MessageServiceGrpc.getListDeadLettersMethod) == null) {
          MessageServiceGrpc.getListDeadLettersMethod = getListDeadLettersMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListDeadLettersRequest, dev.statekeeper.v1.ListDeadLettersResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListDeadLetters"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListDeadLettersRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListDeadLettersResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("ListDeadLetters"))
              .build();
        }
      }
    }
    return getListDeadLettersMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RedriveDeadLettersRequest,
      dev.statekeeper.v1.RedriveDeadLettersResponse> getRedriveDeadLettersMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RedriveDeadLetters",
      requestType = dev.statekeeper.v1.RedriveDeadLettersRequest.class,
      responseType = dev.statekeeper.v1.RedriveDeadLettersResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RedriveDeadLettersRequest,
      dev.statekeeper.v1.RedriveDeadLettersResponse> getRedriveDeadLettersMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RedriveDeadLettersRequest, dev.statekeeper.v1.RedriveDeadLettersResponse> getRedriveDeadLettersMethod;
    if ((getRedriveDeadLettersMethod = MessageServiceGrpc.getRedriveDeadLettersMethod) == null) {
      synchronized (MessageServiceGrpc.class) {
        if ((getRedriveDeadLettersMethod = MessageServiceGrpc.getRedriveDeadLettersMethod) == null) {
          MessageServiceGrpc.getRedriveDeadLettersMethod = getRedriveDeadLettersMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RedriveDeadLettersRequest, dev.statekeeper.v1.RedriveDeadLettersResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RedriveDeadLetters"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RedriveDeadLettersRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RedriveDeadLettersResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MessageServiceMethodDescriptorSupplier("RedriveDeadLetters"))
              .build();
        }
      }
    }
    return getRedriveDeadLettersMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MessageServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceStub>() {
        @java.lang.Override
        public MessageServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceStub(channel, callOptions);
        }
      };
    return MessageServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static MessageServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingV2Stub>() {
        @java.lang.Override
        public MessageServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return MessageServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MessageServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceBlockingStub>() {
        @java.lang.Override
        public MessageServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceBlockingStub(channel, callOptions);
        }
      };
    return MessageServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MessageServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MessageServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MessageServiceFutureStub>() {
        @java.lang.Override
        public MessageServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MessageServiceFutureStub(channel, callOptions);
        }
      };
    return MessageServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Sends a message to an agent's inbox. If a RequestReply call of the
     * recipient is waiting for this message's correlation id, the message is
     * handed to that call instead of the inbox.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `to_agent` is empty, or `ttl`
     * or `delay` is negative, or `delay` is not shorter than `ttl`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the payload, headers, TTL or delay
     * are over their configured limits, or the inbox is full.
     * </pre>
     */
    default void sendMessage(dev.statekeeper.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendMessageMethod(), responseObserver);
    }

    /**
     * <pre>
     * Streams messages from an inbox as they become deliverable, keeping at
     * most `max_in_flight` unacknowledged deliveries outstanding on this
     * stream: the server sends more only as earlier ones are acked, nacked or
     * time out. The stream stays open until the client cancels it or its
     * deadline passes. Messages delivered on a stream that ends stay in flight
     * until their visibility timeout passes.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `agent_id` is empty or a count or duration is
     * negative; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the inbox has too many
     * open receivers; RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the client does not
     * read the stream (its unread deliveries are redelivered after their
     * visibility timeout); UNAVAILABLE (STORAGE_UNAVAILABLE) if the server
     * shuts down (reconnect; nothing is lost).
     * </pre>
     */
    default void receiveMessages(dev.statekeeper.v1.ReceiveMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ReceiveMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getReceiveMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Receives up to `max_messages` deliveries in one unary call, for clients
     * that cannot stream. With `wait_timeout`, waits (long poll) until at least
     * one message is deliverable or the wait ends; an empty result is not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty or a count
     * or duration is negative.
     * </pre>
     */
    default void pullMessages(dev.statekeeper.v1.PullMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PullMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPullMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Acknowledges deliveries: each message is removed from its inbox for
     * good. Per-receipt outcomes are reported, never as an error of the call;
     * acknowledging twice is harmless (ALREADY_ACKED).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `receipt_handles` is empty or
     * holds an empty handle; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it holds
     * more handles than the configured batch limit.
     * </pre>
     */
    default void ackMessages(dev.statekeeper.v1.AckMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AckMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAckMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Gives deliveries back: each message becomes deliverable again after
     * `delay`, or goes to the dead-letter list at once with `dead_letter`, or
     * when it has reached its maximum number of deliveries.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if `delay`
     * is negative.
     * </pre>
     */
    default void nackMessages(dev.statekeeper.v1.NackMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.NackMessagesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getNackMessagesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Extends (or shortens) the visibility timeout of deliveries, for a receiver
     * that needs more time. The new deadline is now + `visibility_timeout`.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if
     * `visibility_timeout` is unset or negative; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if it is above the configured maximum.
     * </pre>
     */
    default void extendVisibility(dev.statekeeper.v1.ExtendVisibilityRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtendVisibilityResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExtendVisibilityMethod(), responseObserver);
    }

    /**
     * <pre>
     * Sends a request and waits for its reply: the first message addressed to
     * `from_agent` whose correlation id is the request's. The reply is
     * returned here and not put in the requester's inbox; a reply arriving
     * after the wait ended goes to the inbox like any message. The request
     * expires (unless `ttl` says otherwise) when the wait ends, so a responder
     * never receives a request nobody waits for.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `from_agent` or `to_agent` is
     * empty, or `timeout` is negative; ALREADY_EXISTS (ALREADY_EXISTS) if
     * `from_agent` already waits on `correlation_id`; DEADLINE_EXCEEDED
     * (REPLY_TIMEOUT) if no reply came within `timeout` (or the call deadline,
     * whichever is first), with metadata["message_id"] the request's id;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    default void requestReply(dev.statekeeper.v1.RequestReplyRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RequestReplyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRequestReplyMethod(), responseObserver);
    }

    /**
     * <pre>
     * Answers a message: sends a message to the original's `reply_to` (or its
     * sender) with the original's correlation id (or its message id when it
     * had none) and `in_reply_to` set. Replying twice with the same
     * `idempotency_key` is deduplicated as in SendMessage.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `request_message_id` is
     * empty; NOT_FOUND (NOT_FOUND) if the original message is unknown (it may
     * have been acknowledged and then forgotten after the configured
     * retention); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    default void sendReply(dev.statekeeper.v1.SendReplyRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendReplyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSendReplyMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the dead letters of an inbox, oldest first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty,
     * `page_size` is negative, or `page_token` is malformed or was issued for
     * different parameters.
     * </pre>
     */
    default void listDeadLetters(dev.statekeeper.v1.ListDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListDeadLettersResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListDeadLettersMethod(), responseObserver);
    }

    /**
     * <pre>
     * Moves dead letters back to their inbox, deliverable at once with a
     * delivery count of 0.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty.
     * Unknown message ids are reported in `not_found_message_ids`, not as an
     * error.
     * </pre>
     */
    default void redriveDeadLetters(dev.statekeeper.v1.RedriveDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RedriveDeadLettersResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRedriveDeadLettersMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service MessageService.
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static abstract class MessageServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return MessageServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service MessageService.
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MessageServiceStub
      extends io.grpc.stub.AbstractAsyncStub<MessageServiceStub> {
    private MessageServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a message to an agent's inbox. If a RequestReply call of the
     * recipient is waiting for this message's correlation id, the message is
     * handed to that call instead of the inbox.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `to_agent` is empty, or `ttl`
     * or `delay` is negative, or `delay` is not shorter than `ttl`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the payload, headers, TTL or delay
     * are over their configured limits, or the inbox is full.
     * </pre>
     */
    public void sendMessage(dev.statekeeper.v1.SendMessageRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendMessageResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Streams messages from an inbox as they become deliverable, keeping at
     * most `max_in_flight` unacknowledged deliveries outstanding on this
     * stream: the server sends more only as earlier ones are acked, nacked or
     * time out. The stream stays open until the client cancels it or its
     * deadline passes. Messages delivered on a stream that ends stay in flight
     * until their visibility timeout passes.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `agent_id` is empty or a count or duration is
     * negative; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the inbox has too many
     * open receivers; RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the client does not
     * read the stream (its unread deliveries are redelivered after their
     * visibility timeout); UNAVAILABLE (STORAGE_UNAVAILABLE) if the server
     * shuts down (reconnect; nothing is lost).
     * </pre>
     */
    public void receiveMessages(dev.statekeeper.v1.ReceiveMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ReceiveMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncServerStreamingCall(
          getChannel().newCall(getReceiveMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Receives up to `max_messages` deliveries in one unary call, for clients
     * that cannot stream. With `wait_timeout`, waits (long poll) until at least
     * one message is deliverable or the wait ends; an empty result is not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty or a count
     * or duration is negative.
     * </pre>
     */
    public void pullMessages(dev.statekeeper.v1.PullMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PullMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPullMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Acknowledges deliveries: each message is removed from its inbox for
     * good. Per-receipt outcomes are reported, never as an error of the call;
     * acknowledging twice is harmless (ALREADY_ACKED).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `receipt_handles` is empty or
     * holds an empty handle; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it holds
     * more handles than the configured batch limit.
     * </pre>
     */
    public void ackMessages(dev.statekeeper.v1.AckMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AckMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAckMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Gives deliveries back: each message becomes deliverable again after
     * `delay`, or goes to the dead-letter list at once with `dead_letter`, or
     * when it has reached its maximum number of deliveries.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if `delay`
     * is negative.
     * </pre>
     */
    public void nackMessages(dev.statekeeper.v1.NackMessagesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.NackMessagesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getNackMessagesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Extends (or shortens) the visibility timeout of deliveries, for a receiver
     * that needs more time. The new deadline is now + `visibility_timeout`.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if
     * `visibility_timeout` is unset or negative; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if it is above the configured maximum.
     * </pre>
     */
    public void extendVisibility(dev.statekeeper.v1.ExtendVisibilityRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtendVisibilityResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getExtendVisibilityMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Sends a request and waits for its reply: the first message addressed to
     * `from_agent` whose correlation id is the request's. The reply is
     * returned here and not put in the requester's inbox; a reply arriving
     * after the wait ended goes to the inbox like any message. The request
     * expires (unless `ttl` says otherwise) when the wait ends, so a responder
     * never receives a request nobody waits for.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `from_agent` or `to_agent` is
     * empty, or `timeout` is negative; ALREADY_EXISTS (ALREADY_EXISTS) if
     * `from_agent` already waits on `correlation_id`; DEADLINE_EXCEEDED
     * (REPLY_TIMEOUT) if no reply came within `timeout` (or the call deadline,
     * whichever is first), with metadata["message_id"] the request's id;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public void requestReply(dev.statekeeper.v1.RequestReplyRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RequestReplyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRequestReplyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Answers a message: sends a message to the original's `reply_to` (or its
     * sender) with the original's correlation id (or its message id when it
     * had none) and `in_reply_to` set. Replying twice with the same
     * `idempotency_key` is deduplicated as in SendMessage.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `request_message_id` is
     * empty; NOT_FOUND (NOT_FOUND) if the original message is unknown (it may
     * have been acknowledged and then forgotten after the configured
     * retention); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public void sendReply(dev.statekeeper.v1.SendReplyRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendReplyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSendReplyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the dead letters of an inbox, oldest first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty,
     * `page_size` is negative, or `page_token` is malformed or was issued for
     * different parameters.
     * </pre>
     */
    public void listDeadLetters(dev.statekeeper.v1.ListDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListDeadLettersResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListDeadLettersMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Moves dead letters back to their inbox, deliverable at once with a
     * delivery count of 0.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty.
     * Unknown message ids are reported in `not_found_message_ids`, not as an
     * error.
     * </pre>
     */
    public void redriveDeadLetters(dev.statekeeper.v1.RedriveDeadLettersRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RedriveDeadLettersResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRedriveDeadLettersMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service MessageService.
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MessageServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<MessageServiceBlockingV2Stub> {
    private MessageServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a message to an agent's inbox. If a RequestReply call of the
     * recipient is waiting for this message's correlation id, the message is
     * handed to that call instead of the inbox.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `to_agent` is empty, or `ttl`
     * or `delay` is negative, or `delay` is not shorter than `ttl`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the payload, headers, TTL or delay
     * are over their configured limits, or the inbox is full.
     * </pre>
     */
    public dev.statekeeper.v1.SendMessageResponse sendMessage(dev.statekeeper.v1.SendMessageRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams messages from an inbox as they become deliverable, keeping at
     * most `max_in_flight` unacknowledged deliveries outstanding on this
     * stream: the server sends more only as earlier ones are acked, nacked or
     * time out. The stream stays open until the client cancels it or its
     * deadline passes. Messages delivered on a stream that ends stay in flight
     * until their visibility timeout passes.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `agent_id` is empty or a count or duration is
     * negative; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the inbox has too many
     * open receivers; RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the client does not
     * read the stream (its unread deliveries are redelivered after their
     * visibility timeout); UNAVAILABLE (STORAGE_UNAVAILABLE) if the server
     * shuts down (reconnect; nothing is lost).
     * </pre>
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<?, dev.statekeeper.v1.ReceiveMessagesResponse>
        receiveMessages(dev.statekeeper.v1.ReceiveMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingV2ServerStreamingCall(
          getChannel(), getReceiveMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Receives up to `max_messages` deliveries in one unary call, for clients
     * that cannot stream. With `wait_timeout`, waits (long poll) until at least
     * one message is deliverable or the wait ends; an empty result is not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty or a count
     * or duration is negative.
     * </pre>
     */
    public dev.statekeeper.v1.PullMessagesResponse pullMessages(dev.statekeeper.v1.PullMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPullMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Acknowledges deliveries: each message is removed from its inbox for
     * good. Per-receipt outcomes are reported, never as an error of the call;
     * acknowledging twice is harmless (ALREADY_ACKED).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `receipt_handles` is empty or
     * holds an empty handle; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it holds
     * more handles than the configured batch limit.
     * </pre>
     */
    public dev.statekeeper.v1.AckMessagesResponse ackMessages(dev.statekeeper.v1.AckMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAckMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Gives deliveries back: each message becomes deliverable again after
     * `delay`, or goes to the dead-letter list at once with `dead_letter`, or
     * when it has reached its maximum number of deliveries.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if `delay`
     * is negative.
     * </pre>
     */
    public dev.statekeeper.v1.NackMessagesResponse nackMessages(dev.statekeeper.v1.NackMessagesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getNackMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extends (or shortens) the visibility timeout of deliveries, for a receiver
     * that needs more time. The new deadline is now + `visibility_timeout`.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if
     * `visibility_timeout` is unset or negative; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if it is above the configured maximum.
     * </pre>
     */
    public dev.statekeeper.v1.ExtendVisibilityResponse extendVisibility(dev.statekeeper.v1.ExtendVisibilityRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getExtendVisibilityMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends a request and waits for its reply: the first message addressed to
     * `from_agent` whose correlation id is the request's. The reply is
     * returned here and not put in the requester's inbox; a reply arriving
     * after the wait ended goes to the inbox like any message. The request
     * expires (unless `ttl` says otherwise) when the wait ends, so a responder
     * never receives a request nobody waits for.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `from_agent` or `to_agent` is
     * empty, or `timeout` is negative; ALREADY_EXISTS (ALREADY_EXISTS) if
     * `from_agent` already waits on `correlation_id`; DEADLINE_EXCEEDED
     * (REPLY_TIMEOUT) if no reply came within `timeout` (or the call deadline,
     * whichever is first), with metadata["message_id"] the request's id;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public dev.statekeeper.v1.RequestReplyResponse requestReply(dev.statekeeper.v1.RequestReplyRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRequestReplyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Answers a message: sends a message to the original's `reply_to` (or its
     * sender) with the original's correlation id (or its message id when it
     * had none) and `in_reply_to` set. Replying twice with the same
     * `idempotency_key` is deduplicated as in SendMessage.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `request_message_id` is
     * empty; NOT_FOUND (NOT_FOUND) if the original message is unknown (it may
     * have been acknowledged and then forgotten after the configured
     * retention); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public dev.statekeeper.v1.SendReplyResponse sendReply(dev.statekeeper.v1.SendReplyRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSendReplyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the dead letters of an inbox, oldest first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty,
     * `page_size` is negative, or `page_token` is malformed or was issued for
     * different parameters.
     * </pre>
     */
    public dev.statekeeper.v1.ListDeadLettersResponse listDeadLetters(dev.statekeeper.v1.ListDeadLettersRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListDeadLettersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Moves dead letters back to their inbox, deliverable at once with a
     * delivery count of 0.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty.
     * Unknown message ids are reported in `not_found_message_ids`, not as an
     * error.
     * </pre>
     */
    public dev.statekeeper.v1.RedriveDeadLettersResponse redriveDeadLetters(dev.statekeeper.v1.RedriveDeadLettersRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRedriveDeadLettersMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service MessageService.
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MessageServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<MessageServiceBlockingStub> {
    private MessageServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a message to an agent's inbox. If a RequestReply call of the
     * recipient is waiting for this message's correlation id, the message is
     * handed to that call instead of the inbox.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `to_agent` is empty, or `ttl`
     * or `delay` is negative, or `delay` is not shorter than `ttl`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the payload, headers, TTL or delay
     * are over their configured limits, or the inbox is full.
     * </pre>
     */
    public dev.statekeeper.v1.SendMessageResponse sendMessage(dev.statekeeper.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendMessageMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Streams messages from an inbox as they become deliverable, keeping at
     * most `max_in_flight` unacknowledged deliveries outstanding on this
     * stream: the server sends more only as earlier ones are acked, nacked or
     * time out. The stream stays open until the client cancels it or its
     * deadline passes. Messages delivered on a stream that ends stay in flight
     * until their visibility timeout passes.
     * Errors (as the status that ends the stream): INVALID_ARGUMENT
     * (INVALID_FIELD) if `agent_id` is empty or a count or duration is
     * negative; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the inbox has too many
     * open receivers; RESOURCE_EXHAUSTED (SLOW_CONSUMER) if the client does not
     * read the stream (its unread deliveries are redelivered after their
     * visibility timeout); UNAVAILABLE (STORAGE_UNAVAILABLE) if the server
     * shuts down (reconnect; nothing is lost).
     * </pre>
     */
    public java.util.Iterator<dev.statekeeper.v1.ReceiveMessagesResponse> receiveMessages(
        dev.statekeeper.v1.ReceiveMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingServerStreamingCall(
          getChannel(), getReceiveMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Receives up to `max_messages` deliveries in one unary call, for clients
     * that cannot stream. With `wait_timeout`, waits (long poll) until at least
     * one message is deliverable or the wait ends; an empty result is not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty or a count
     * or duration is negative.
     * </pre>
     */
    public dev.statekeeper.v1.PullMessagesResponse pullMessages(dev.statekeeper.v1.PullMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPullMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Acknowledges deliveries: each message is removed from its inbox for
     * good. Per-receipt outcomes are reported, never as an error of the call;
     * acknowledging twice is harmless (ALREADY_ACKED).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `receipt_handles` is empty or
     * holds an empty handle; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it holds
     * more handles than the configured batch limit.
     * </pre>
     */
    public dev.statekeeper.v1.AckMessagesResponse ackMessages(dev.statekeeper.v1.AckMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAckMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Gives deliveries back: each message becomes deliverable again after
     * `delay`, or goes to the dead-letter list at once with `dead_letter`, or
     * when it has reached its maximum number of deliveries.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if `delay`
     * is negative.
     * </pre>
     */
    public dev.statekeeper.v1.NackMessagesResponse nackMessages(dev.statekeeper.v1.NackMessagesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getNackMessagesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extends (or shortens) the visibility timeout of deliveries, for a receiver
     * that needs more time. The new deadline is now + `visibility_timeout`.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if
     * `visibility_timeout` is unset or negative; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if it is above the configured maximum.
     * </pre>
     */
    public dev.statekeeper.v1.ExtendVisibilityResponse extendVisibility(dev.statekeeper.v1.ExtendVisibilityRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getExtendVisibilityMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Sends a request and waits for its reply: the first message addressed to
     * `from_agent` whose correlation id is the request's. The reply is
     * returned here and not put in the requester's inbox; a reply arriving
     * after the wait ended goes to the inbox like any message. The request
     * expires (unless `ttl` says otherwise) when the wait ends, so a responder
     * never receives a request nobody waits for.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `from_agent` or `to_agent` is
     * empty, or `timeout` is negative; ALREADY_EXISTS (ALREADY_EXISTS) if
     * `from_agent` already waits on `correlation_id`; DEADLINE_EXCEEDED
     * (REPLY_TIMEOUT) if no reply came within `timeout` (or the call deadline,
     * whichever is first), with metadata["message_id"] the request's id;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public dev.statekeeper.v1.RequestReplyResponse requestReply(dev.statekeeper.v1.RequestReplyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRequestReplyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Answers a message: sends a message to the original's `reply_to` (or its
     * sender) with the original's correlation id (or its message id when it
     * had none) and `in_reply_to` set. Replying twice with the same
     * `idempotency_key` is deduplicated as in SendMessage.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `request_message_id` is
     * empty; NOT_FOUND (NOT_FOUND) if the original message is unknown (it may
     * have been acknowledged and then forgotten after the configured
     * retention); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public dev.statekeeper.v1.SendReplyResponse sendReply(dev.statekeeper.v1.SendReplyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSendReplyMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the dead letters of an inbox, oldest first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty,
     * `page_size` is negative, or `page_token` is malformed or was issued for
     * different parameters.
     * </pre>
     */
    public dev.statekeeper.v1.ListDeadLettersResponse listDeadLetters(dev.statekeeper.v1.ListDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListDeadLettersMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Moves dead letters back to their inbox, deliverable at once with a
     * delivery count of 0.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty.
     * Unknown message ids are reported in `not_found_message_ids`, not as an
     * error.
     * </pre>
     */
    public dev.statekeeper.v1.RedriveDeadLettersResponse redriveDeadLetters(dev.statekeeper.v1.RedriveDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRedriveDeadLettersMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service MessageService.
   * <pre>
   * MessageService is a message bus between agents: each agent id of a tenant
   * has an inbox.
   * Delivery is at-least-once with explicit acknowledgement:
   * * A delivered message is invisible to other receivers of the same inbox for
   *   its visibility timeout. Ack removes it; Nack, or the visibility timeout
   *   passing, makes it deliverable again. Every delivery gets a new receipt
   *   handle; only the latest receipt of a message is valid.
   * * Each delivery increments the message's delivery count. A message that
   *   would be delivered more than the configured maximum number of times (or
   *   its own `max_deliveries`) goes to the inbox's dead-letter list instead.
   * * Several receivers of one inbox compete: each delivery goes to one of
   *   them.
   * * Order: messages are delivered roughly in the order they became visible
   *   (send time plus delay); a redelivered message may overtake newer ones.
   * * Duplicates: a send with an `idempotency_key` already used for the same
   *   recipient within the configured deduplication window stores nothing and
   *   returns the first message's id. Receivers must still tolerate
   *   redelivery.
   * * Expiry: a message whose `expire_time` passes before it is acknowledged is
   *   dropped (it is not dead-lettered).
   * Request-reply: RequestReply sends a request and waits for the first message
   * to the requester carrying the request's correlation id; SendReply (or
   * SendMessage with that correlation id) answers it.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MessageServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<MessageServiceFutureStub> {
    private MessageServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MessageServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MessageServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Sends a message to an agent's inbox. If a RequestReply call of the
     * recipient is waiting for this message's correlation id, the message is
     * handed to that call instead of the inbox.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `to_agent` is empty, or `ttl`
     * or `delay` is negative, or `delay` is not shorter than `ttl`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the payload, headers, TTL or delay
     * are over their configured limits, or the inbox is full.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.SendMessageResponse> sendMessage(
        dev.statekeeper.v1.SendMessageRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendMessageMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Receives up to `max_messages` deliveries in one unary call, for clients
     * that cannot stream. With `wait_timeout`, waits (long poll) until at least
     * one message is deliverable or the wait ends; an empty result is not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty or a count
     * or duration is negative.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.PullMessagesResponse> pullMessages(
        dev.statekeeper.v1.PullMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPullMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Acknowledges deliveries: each message is removed from its inbox for
     * good. Per-receipt outcomes are reported, never as an error of the call;
     * acknowledging twice is harmless (ALREADY_ACKED).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `receipt_handles` is empty or
     * holds an empty handle; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it holds
     * more handles than the configured batch limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.AckMessagesResponse> ackMessages(
        dev.statekeeper.v1.AckMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAckMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Gives deliveries back: each message becomes deliverable again after
     * `delay`, or goes to the dead-letter list at once with `dead_letter`, or
     * when it has reached its maximum number of deliveries.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if `delay`
     * is negative.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.NackMessagesResponse> nackMessages(
        dev.statekeeper.v1.NackMessagesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getNackMessagesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Extends (or shortens) the visibility timeout of deliveries, for a receiver
     * that needs more time. The new deadline is now + `visibility_timeout`.
     * Errors: as AckMessages, and INVALID_ARGUMENT (INVALID_FIELD) if
     * `visibility_timeout` is unset or negative; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if it is above the configured maximum.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ExtendVisibilityResponse> extendVisibility(
        dev.statekeeper.v1.ExtendVisibilityRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getExtendVisibilityMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Sends a request and waits for its reply: the first message addressed to
     * `from_agent` whose correlation id is the request's. The reply is
     * returned here and not put in the requester's inbox; a reply arriving
     * after the wait ended goes to the inbox like any message. The request
     * expires (unless `ttl` says otherwise) when the wait ends, so a responder
     * never receives a request nobody waits for.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `from_agent` or `to_agent` is
     * empty, or `timeout` is negative; ALREADY_EXISTS (ALREADY_EXISTS) if
     * `from_agent` already waits on `correlation_id`; DEADLINE_EXCEEDED
     * (REPLY_TIMEOUT) if no reply came within `timeout` (or the call deadline,
     * whichever is first), with metadata["message_id"] the request's id;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RequestReplyResponse> requestReply(
        dev.statekeeper.v1.RequestReplyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRequestReplyMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Answers a message: sends a message to the original's `reply_to` (or its
     * sender) with the original's correlation id (or its message id when it
     * had none) and `in_reply_to` set. Replying twice with the same
     * `idempotency_key` is deduplicated as in SendMessage.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `request_message_id` is
     * empty; NOT_FOUND (NOT_FOUND) if the original message is unknown (it may
     * have been acknowledged and then forgotten after the configured
     * retention); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) as SendMessage.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.SendReplyResponse> sendReply(
        dev.statekeeper.v1.SendReplyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSendReplyMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the dead letters of an inbox, oldest first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty,
     * `page_size` is negative, or `page_token` is malformed or was issued for
     * different parameters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListDeadLettersResponse> listDeadLetters(
        dev.statekeeper.v1.ListDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListDeadLettersMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Moves dead letters back to their inbox, deliverable at once with a
     * delivery count of 0.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `agent_id` is empty.
     * Unknown message ids are reported in `not_found_message_ids`, not as an
     * error.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RedriveDeadLettersResponse> redriveDeadLetters(
        dev.statekeeper.v1.RedriveDeadLettersRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRedriveDeadLettersMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SEND_MESSAGE = 0;
  private static final int METHODID_RECEIVE_MESSAGES = 1;
  private static final int METHODID_PULL_MESSAGES = 2;
  private static final int METHODID_ACK_MESSAGES = 3;
  private static final int METHODID_NACK_MESSAGES = 4;
  private static final int METHODID_EXTEND_VISIBILITY = 5;
  private static final int METHODID_REQUEST_REPLY = 6;
  private static final int METHODID_SEND_REPLY = 7;
  private static final int METHODID_LIST_DEAD_LETTERS = 8;
  private static final int METHODID_REDRIVE_DEAD_LETTERS = 9;

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
        case METHODID_SEND_MESSAGE:
          serviceImpl.sendMessage((dev.statekeeper.v1.SendMessageRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendMessageResponse>) responseObserver);
          break;
        case METHODID_RECEIVE_MESSAGES:
          serviceImpl.receiveMessages((dev.statekeeper.v1.ReceiveMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ReceiveMessagesResponse>) responseObserver);
          break;
        case METHODID_PULL_MESSAGES:
          serviceImpl.pullMessages((dev.statekeeper.v1.PullMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.PullMessagesResponse>) responseObserver);
          break;
        case METHODID_ACK_MESSAGES:
          serviceImpl.ackMessages((dev.statekeeper.v1.AckMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.AckMessagesResponse>) responseObserver);
          break;
        case METHODID_NACK_MESSAGES:
          serviceImpl.nackMessages((dev.statekeeper.v1.NackMessagesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.NackMessagesResponse>) responseObserver);
          break;
        case METHODID_EXTEND_VISIBILITY:
          serviceImpl.extendVisibility((dev.statekeeper.v1.ExtendVisibilityRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtendVisibilityResponse>) responseObserver);
          break;
        case METHODID_REQUEST_REPLY:
          serviceImpl.requestReply((dev.statekeeper.v1.RequestReplyRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RequestReplyResponse>) responseObserver);
          break;
        case METHODID_SEND_REPLY:
          serviceImpl.sendReply((dev.statekeeper.v1.SendReplyRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.SendReplyResponse>) responseObserver);
          break;
        case METHODID_LIST_DEAD_LETTERS:
          serviceImpl.listDeadLetters((dev.statekeeper.v1.ListDeadLettersRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListDeadLettersResponse>) responseObserver);
          break;
        case METHODID_REDRIVE_DEAD_LETTERS:
          serviceImpl.redriveDeadLetters((dev.statekeeper.v1.RedriveDeadLettersRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RedriveDeadLettersResponse>) responseObserver);
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
          getSendMessageMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.SendMessageRequest,
              dev.statekeeper.v1.SendMessageResponse>(
                service, METHODID_SEND_MESSAGE)))
        .addMethod(
          getReceiveMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncServerStreamingCall(
            new MethodHandlers<
              dev.statekeeper.v1.ReceiveMessagesRequest,
              dev.statekeeper.v1.ReceiveMessagesResponse>(
                service, METHODID_RECEIVE_MESSAGES)))
        .addMethod(
          getPullMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.PullMessagesRequest,
              dev.statekeeper.v1.PullMessagesResponse>(
                service, METHODID_PULL_MESSAGES)))
        .addMethod(
          getAckMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.AckMessagesRequest,
              dev.statekeeper.v1.AckMessagesResponse>(
                service, METHODID_ACK_MESSAGES)))
        .addMethod(
          getNackMessagesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.NackMessagesRequest,
              dev.statekeeper.v1.NackMessagesResponse>(
                service, METHODID_NACK_MESSAGES)))
        .addMethod(
          getExtendVisibilityMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ExtendVisibilityRequest,
              dev.statekeeper.v1.ExtendVisibilityResponse>(
                service, METHODID_EXTEND_VISIBILITY)))
        .addMethod(
          getRequestReplyMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RequestReplyRequest,
              dev.statekeeper.v1.RequestReplyResponse>(
                service, METHODID_REQUEST_REPLY)))
        .addMethod(
          getSendReplyMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.SendReplyRequest,
              dev.statekeeper.v1.SendReplyResponse>(
                service, METHODID_SEND_REPLY)))
        .addMethod(
          getListDeadLettersMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListDeadLettersRequest,
              dev.statekeeper.v1.ListDeadLettersResponse>(
                service, METHODID_LIST_DEAD_LETTERS)))
        .addMethod(
          getRedriveDeadLettersMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RedriveDeadLettersRequest,
              dev.statekeeper.v1.RedriveDeadLettersResponse>(
                service, METHODID_REDRIVE_DEAD_LETTERS)))
        .build();
  }

  private static abstract class MessageServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MessageServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.MessageProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MessageService");
    }
  }

  private static final class MessageServiceFileDescriptorSupplier
      extends MessageServiceBaseDescriptorSupplier {
    MessageServiceFileDescriptorSupplier() {}
  }

  private static final class MessageServiceMethodDescriptorSupplier
      extends MessageServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    MessageServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (MessageServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MessageServiceFileDescriptorSupplier())
              .addMethod(getSendMessageMethod())
              .addMethod(getReceiveMessagesMethod())
              .addMethod(getPullMessagesMethod())
              .addMethod(getAckMessagesMethod())
              .addMethod(getNackMessagesMethod())
              .addMethod(getExtendVisibilityMethod())
              .addMethod(getRequestReplyMethod())
              .addMethod(getSendReplyMethod())
              .addMethod(getListDeadLettersMethod())
              .addMethod(getRedriveDeadLettersMethod())
              .build();
        }
      }
    }
    return result;
  }
}
