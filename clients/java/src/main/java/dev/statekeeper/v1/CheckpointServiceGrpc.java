package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * CheckpointService keeps two kinds of execution state.
 * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
 * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
 * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
 * is a thin adapter over this service:
 * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
 *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
 *   (execution_id, namespace, checkpoint_id).
 * * Order: within an execution, checkpoints are ordered by `create_time`,
 *   ties broken by the server-assigned `sequence` (save order). "Latest" and
 *   "newest first" use that order, never the lexical order of ids, because
 *   client-chosen ids need not sort by time.
 * * Channel values are stored once: each channel of a checkpoint names a
 *   version; the value of (execution, namespace, channel, version) is sent
 *   once, with the first checkpoint that has that version, and stored by
 *   content hash. Later checkpoints name the version only.
 * * Pending writes are the outputs of tasks that ran against a checkpoint but
 *   have not yet produced the next one.
 * Workflows: a DAG of steps executed by workers that claim ready steps under
 * a lease, with retries and backoff; a step whose worker dies is claimed by
 * another worker once its lease expires.
 * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
 * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class CheckpointServiceGrpc {

  private CheckpointServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.CheckpointService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.SaveCheckpointRequest,
      dev.statekeeper.v1.SaveCheckpointResponse> getSaveCheckpointMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SaveCheckpoint",
      requestType = dev.statekeeper.v1.SaveCheckpointRequest.class,
      responseType = dev.statekeeper.v1.SaveCheckpointResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.SaveCheckpointRequest,
      dev.statekeeper.v1.SaveCheckpointResponse> getSaveCheckpointMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.SaveCheckpointRequest, dev.statekeeper.v1.SaveCheckpointResponse> getSaveCheckpointMethod;
    if ((getSaveCheckpointMethod = CheckpointServiceGrpc.getSaveCheckpointMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getSaveCheckpointMethod = CheckpointServiceGrpc.getSaveCheckpointMethod) == null) {
          CheckpointServiceGrpc.getSaveCheckpointMethod = getSaveCheckpointMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.SaveCheckpointRequest, dev.statekeeper.v1.SaveCheckpointResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SaveCheckpoint"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SaveCheckpointRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SaveCheckpointResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("SaveCheckpoint"))
              .build();
        }
      }
    }
    return getSaveCheckpointMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetCheckpointRequest,
      dev.statekeeper.v1.GetCheckpointResponse> getGetCheckpointMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetCheckpoint",
      requestType = dev.statekeeper.v1.GetCheckpointRequest.class,
      responseType = dev.statekeeper.v1.GetCheckpointResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetCheckpointRequest,
      dev.statekeeper.v1.GetCheckpointResponse> getGetCheckpointMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetCheckpointRequest, dev.statekeeper.v1.GetCheckpointResponse> getGetCheckpointMethod;
    if ((getGetCheckpointMethod = CheckpointServiceGrpc.getGetCheckpointMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getGetCheckpointMethod = CheckpointServiceGrpc.getGetCheckpointMethod) == null) {
          CheckpointServiceGrpc.getGetCheckpointMethod = getGetCheckpointMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetCheckpointRequest, dev.statekeeper.v1.GetCheckpointResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetCheckpoint"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetCheckpointRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetCheckpointResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("GetCheckpoint"))
              .build();
        }
      }
    }
    return getGetCheckpointMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListCheckpointsRequest,
      dev.statekeeper.v1.ListCheckpointsResponse> getListCheckpointsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListCheckpoints",
      requestType = dev.statekeeper.v1.ListCheckpointsRequest.class,
      responseType = dev.statekeeper.v1.ListCheckpointsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListCheckpointsRequest,
      dev.statekeeper.v1.ListCheckpointsResponse> getListCheckpointsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListCheckpointsRequest, dev.statekeeper.v1.ListCheckpointsResponse> getListCheckpointsMethod;
    if ((getListCheckpointsMethod = CheckpointServiceGrpc.getListCheckpointsMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getListCheckpointsMethod = CheckpointServiceGrpc.getListCheckpointsMethod) == null) {
          CheckpointServiceGrpc.getListCheckpointsMethod = getListCheckpointsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListCheckpointsRequest, dev.statekeeper.v1.ListCheckpointsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListCheckpoints"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListCheckpointsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListCheckpointsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("ListCheckpoints"))
              .build();
        }
      }
    }
    return getListCheckpointsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.PutWritesRequest,
      dev.statekeeper.v1.PutWritesResponse> getPutWritesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PutWrites",
      requestType = dev.statekeeper.v1.PutWritesRequest.class,
      responseType = dev.statekeeper.v1.PutWritesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.PutWritesRequest,
      dev.statekeeper.v1.PutWritesResponse> getPutWritesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.PutWritesRequest, dev.statekeeper.v1.PutWritesResponse> getPutWritesMethod;
    if ((getPutWritesMethod = CheckpointServiceGrpc.getPutWritesMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getPutWritesMethod = CheckpointServiceGrpc.getPutWritesMethod) == null) {
          CheckpointServiceGrpc.getPutWritesMethod = getPutWritesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.PutWritesRequest, dev.statekeeper.v1.PutWritesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PutWrites"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PutWritesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PutWritesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("PutWrites"))
              .build();
        }
      }
    }
    return getPutWritesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetChannelValuesRequest,
      dev.statekeeper.v1.GetChannelValuesResponse> getGetChannelValuesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetChannelValues",
      requestType = dev.statekeeper.v1.GetChannelValuesRequest.class,
      responseType = dev.statekeeper.v1.GetChannelValuesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetChannelValuesRequest,
      dev.statekeeper.v1.GetChannelValuesResponse> getGetChannelValuesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetChannelValuesRequest, dev.statekeeper.v1.GetChannelValuesResponse> getGetChannelValuesMethod;
    if ((getGetChannelValuesMethod = CheckpointServiceGrpc.getGetChannelValuesMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getGetChannelValuesMethod = CheckpointServiceGrpc.getGetChannelValuesMethod) == null) {
          CheckpointServiceGrpc.getGetChannelValuesMethod = getGetChannelValuesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetChannelValuesRequest, dev.statekeeper.v1.GetChannelValuesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetChannelValues"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetChannelValuesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetChannelValuesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("GetChannelValues"))
              .build();
        }
      }
    }
    return getGetChannelValuesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteExecutionRequest,
      dev.statekeeper.v1.DeleteExecutionResponse> getDeleteExecutionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteExecution",
      requestType = dev.statekeeper.v1.DeleteExecutionRequest.class,
      responseType = dev.statekeeper.v1.DeleteExecutionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteExecutionRequest,
      dev.statekeeper.v1.DeleteExecutionResponse> getDeleteExecutionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteExecutionRequest, dev.statekeeper.v1.DeleteExecutionResponse> getDeleteExecutionMethod;
    if ((getDeleteExecutionMethod = CheckpointServiceGrpc.getDeleteExecutionMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getDeleteExecutionMethod = CheckpointServiceGrpc.getDeleteExecutionMethod) == null) {
          CheckpointServiceGrpc.getDeleteExecutionMethod = getDeleteExecutionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeleteExecutionRequest, dev.statekeeper.v1.DeleteExecutionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteExecution"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteExecutionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteExecutionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("DeleteExecution"))
              .build();
        }
      }
    }
    return getDeleteExecutionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteRunsRequest,
      dev.statekeeper.v1.DeleteRunsResponse> getDeleteRunsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteRuns",
      requestType = dev.statekeeper.v1.DeleteRunsRequest.class,
      responseType = dev.statekeeper.v1.DeleteRunsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteRunsRequest,
      dev.statekeeper.v1.DeleteRunsResponse> getDeleteRunsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteRunsRequest, dev.statekeeper.v1.DeleteRunsResponse> getDeleteRunsMethod;
    if ((getDeleteRunsMethod = CheckpointServiceGrpc.getDeleteRunsMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getDeleteRunsMethod = CheckpointServiceGrpc.getDeleteRunsMethod) == null) {
          CheckpointServiceGrpc.getDeleteRunsMethod = getDeleteRunsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeleteRunsRequest, dev.statekeeper.v1.DeleteRunsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteRuns"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteRunsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteRunsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("DeleteRuns"))
              .build();
        }
      }
    }
    return getDeleteRunsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CopyExecutionRequest,
      dev.statekeeper.v1.CopyExecutionResponse> getCopyExecutionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CopyExecution",
      requestType = dev.statekeeper.v1.CopyExecutionRequest.class,
      responseType = dev.statekeeper.v1.CopyExecutionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CopyExecutionRequest,
      dev.statekeeper.v1.CopyExecutionResponse> getCopyExecutionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CopyExecutionRequest, dev.statekeeper.v1.CopyExecutionResponse> getCopyExecutionMethod;
    if ((getCopyExecutionMethod = CheckpointServiceGrpc.getCopyExecutionMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getCopyExecutionMethod = CheckpointServiceGrpc.getCopyExecutionMethod) == null) {
          CheckpointServiceGrpc.getCopyExecutionMethod = getCopyExecutionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CopyExecutionRequest, dev.statekeeper.v1.CopyExecutionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CopyExecution"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CopyExecutionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CopyExecutionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("CopyExecution"))
              .build();
        }
      }
    }
    return getCopyExecutionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.PruneCheckpointsRequest,
      dev.statekeeper.v1.PruneCheckpointsResponse> getPruneCheckpointsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PruneCheckpoints",
      requestType = dev.statekeeper.v1.PruneCheckpointsRequest.class,
      responseType = dev.statekeeper.v1.PruneCheckpointsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.PruneCheckpointsRequest,
      dev.statekeeper.v1.PruneCheckpointsResponse> getPruneCheckpointsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.PruneCheckpointsRequest, dev.statekeeper.v1.PruneCheckpointsResponse> getPruneCheckpointsMethod;
    if ((getPruneCheckpointsMethod = CheckpointServiceGrpc.getPruneCheckpointsMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getPruneCheckpointsMethod = CheckpointServiceGrpc.getPruneCheckpointsMethod) == null) {
          CheckpointServiceGrpc.getPruneCheckpointsMethod = getPruneCheckpointsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.PruneCheckpointsRequest, dev.statekeeper.v1.PruneCheckpointsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PruneCheckpoints"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PruneCheckpointsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.PruneCheckpointsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("PruneCheckpoints"))
              .build();
        }
      }
    }
    return getPruneCheckpointsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimExecutionRequest,
      dev.statekeeper.v1.ClaimExecutionResponse> getClaimExecutionMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClaimExecution",
      requestType = dev.statekeeper.v1.ClaimExecutionRequest.class,
      responseType = dev.statekeeper.v1.ClaimExecutionResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimExecutionRequest,
      dev.statekeeper.v1.ClaimExecutionResponse> getClaimExecutionMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimExecutionRequest, dev.statekeeper.v1.ClaimExecutionResponse> getClaimExecutionMethod;
    if ((getClaimExecutionMethod = CheckpointServiceGrpc.getClaimExecutionMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getClaimExecutionMethod = CheckpointServiceGrpc.getClaimExecutionMethod) == null) {
          CheckpointServiceGrpc.getClaimExecutionMethod = getClaimExecutionMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ClaimExecutionRequest, dev.statekeeper.v1.ClaimExecutionResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClaimExecution"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ClaimExecutionRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ClaimExecutionResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("ClaimExecution"))
              .build();
        }
      }
    }
    return getClaimExecutionMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.StartWorkflowRequest,
      dev.statekeeper.v1.StartWorkflowResponse> getStartWorkflowMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StartWorkflow",
      requestType = dev.statekeeper.v1.StartWorkflowRequest.class,
      responseType = dev.statekeeper.v1.StartWorkflowResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.StartWorkflowRequest,
      dev.statekeeper.v1.StartWorkflowResponse> getStartWorkflowMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.StartWorkflowRequest, dev.statekeeper.v1.StartWorkflowResponse> getStartWorkflowMethod;
    if ((getStartWorkflowMethod = CheckpointServiceGrpc.getStartWorkflowMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getStartWorkflowMethod = CheckpointServiceGrpc.getStartWorkflowMethod) == null) {
          CheckpointServiceGrpc.getStartWorkflowMethod = getStartWorkflowMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.StartWorkflowRequest, dev.statekeeper.v1.StartWorkflowResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StartWorkflow"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.StartWorkflowRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.StartWorkflowResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("StartWorkflow"))
              .build();
        }
      }
    }
    return getStartWorkflowMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetWorkflowRequest,
      dev.statekeeper.v1.GetWorkflowResponse> getGetWorkflowMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetWorkflow",
      requestType = dev.statekeeper.v1.GetWorkflowRequest.class,
      responseType = dev.statekeeper.v1.GetWorkflowResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetWorkflowRequest,
      dev.statekeeper.v1.GetWorkflowResponse> getGetWorkflowMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetWorkflowRequest, dev.statekeeper.v1.GetWorkflowResponse> getGetWorkflowMethod;
    if ((getGetWorkflowMethod = CheckpointServiceGrpc.getGetWorkflowMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getGetWorkflowMethod = CheckpointServiceGrpc.getGetWorkflowMethod) == null) {
          CheckpointServiceGrpc.getGetWorkflowMethod = getGetWorkflowMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetWorkflowRequest, dev.statekeeper.v1.GetWorkflowResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetWorkflow"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetWorkflowRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetWorkflowResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("GetWorkflow"))
              .build();
        }
      }
    }
    return getGetWorkflowMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListWorkflowsRequest,
      dev.statekeeper.v1.ListWorkflowsResponse> getListWorkflowsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListWorkflows",
      requestType = dev.statekeeper.v1.ListWorkflowsRequest.class,
      responseType = dev.statekeeper.v1.ListWorkflowsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListWorkflowsRequest,
      dev.statekeeper.v1.ListWorkflowsResponse> getListWorkflowsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListWorkflowsRequest, dev.statekeeper.v1.ListWorkflowsResponse> getListWorkflowsMethod;
    if ((getListWorkflowsMethod = CheckpointServiceGrpc.getListWorkflowsMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getListWorkflowsMethod = CheckpointServiceGrpc.getListWorkflowsMethod) == null) {
          CheckpointServiceGrpc.getListWorkflowsMethod = getListWorkflowsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListWorkflowsRequest, dev.statekeeper.v1.ListWorkflowsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListWorkflows"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListWorkflowsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListWorkflowsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("ListWorkflows"))
              .build();
        }
      }
    }
    return getListWorkflowsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimStepsRequest,
      dev.statekeeper.v1.ClaimStepsResponse> getClaimStepsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ClaimSteps",
      requestType = dev.statekeeper.v1.ClaimStepsRequest.class,
      responseType = dev.statekeeper.v1.ClaimStepsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimStepsRequest,
      dev.statekeeper.v1.ClaimStepsResponse> getClaimStepsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ClaimStepsRequest, dev.statekeeper.v1.ClaimStepsResponse> getClaimStepsMethod;
    if ((getClaimStepsMethod = CheckpointServiceGrpc.getClaimStepsMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getClaimStepsMethod = CheckpointServiceGrpc.getClaimStepsMethod) == null) {
          CheckpointServiceGrpc.getClaimStepsMethod = getClaimStepsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ClaimStepsRequest, dev.statekeeper.v1.ClaimStepsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ClaimSteps"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ClaimStepsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ClaimStepsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("ClaimSteps"))
              .build();
        }
      }
    }
    return getClaimStepsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CompleteStepRequest,
      dev.statekeeper.v1.CompleteStepResponse> getCompleteStepMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CompleteStep",
      requestType = dev.statekeeper.v1.CompleteStepRequest.class,
      responseType = dev.statekeeper.v1.CompleteStepResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CompleteStepRequest,
      dev.statekeeper.v1.CompleteStepResponse> getCompleteStepMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CompleteStepRequest, dev.statekeeper.v1.CompleteStepResponse> getCompleteStepMethod;
    if ((getCompleteStepMethod = CheckpointServiceGrpc.getCompleteStepMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getCompleteStepMethod = CheckpointServiceGrpc.getCompleteStepMethod) == null) {
          CheckpointServiceGrpc.getCompleteStepMethod = getCompleteStepMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CompleteStepRequest, dev.statekeeper.v1.CompleteStepResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CompleteStep"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompleteStepRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CompleteStepResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("CompleteStep"))
              .build();
        }
      }
    }
    return getCompleteStepMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.FailStepRequest,
      dev.statekeeper.v1.FailStepResponse> getFailStepMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "FailStep",
      requestType = dev.statekeeper.v1.FailStepRequest.class,
      responseType = dev.statekeeper.v1.FailStepResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.FailStepRequest,
      dev.statekeeper.v1.FailStepResponse> getFailStepMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.FailStepRequest, dev.statekeeper.v1.FailStepResponse> getFailStepMethod;
    if ((getFailStepMethod = CheckpointServiceGrpc.getFailStepMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getFailStepMethod = CheckpointServiceGrpc.getFailStepMethod) == null) {
          CheckpointServiceGrpc.getFailStepMethod = getFailStepMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.FailStepRequest, dev.statekeeper.v1.FailStepResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "FailStep"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.FailStepRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.FailStepResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("FailStep"))
              .build();
        }
      }
    }
    return getFailStepMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.SkipStepRequest,
      dev.statekeeper.v1.SkipStepResponse> getSkipStepMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "SkipStep",
      requestType = dev.statekeeper.v1.SkipStepRequest.class,
      responseType = dev.statekeeper.v1.SkipStepResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.SkipStepRequest,
      dev.statekeeper.v1.SkipStepResponse> getSkipStepMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.SkipStepRequest, dev.statekeeper.v1.SkipStepResponse> getSkipStepMethod;
    if ((getSkipStepMethod = CheckpointServiceGrpc.getSkipStepMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getSkipStepMethod = CheckpointServiceGrpc.getSkipStepMethod) == null) {
          CheckpointServiceGrpc.getSkipStepMethod = getSkipStepMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.SkipStepRequest, dev.statekeeper.v1.SkipStepResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "SkipStep"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SkipStepRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.SkipStepResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("SkipStep"))
              .build();
        }
      }
    }
    return getSkipStepMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RenewStepLeaseRequest,
      dev.statekeeper.v1.RenewStepLeaseResponse> getRenewStepLeaseMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RenewStepLease",
      requestType = dev.statekeeper.v1.RenewStepLeaseRequest.class,
      responseType = dev.statekeeper.v1.RenewStepLeaseResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RenewStepLeaseRequest,
      dev.statekeeper.v1.RenewStepLeaseResponse> getRenewStepLeaseMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RenewStepLeaseRequest, dev.statekeeper.v1.RenewStepLeaseResponse> getRenewStepLeaseMethod;
    if ((getRenewStepLeaseMethod = CheckpointServiceGrpc.getRenewStepLeaseMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getRenewStepLeaseMethod = CheckpointServiceGrpc.getRenewStepLeaseMethod) == null) {
          CheckpointServiceGrpc.getRenewStepLeaseMethod = getRenewStepLeaseMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RenewStepLeaseRequest, dev.statekeeper.v1.RenewStepLeaseResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RenewStepLease"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RenewStepLeaseRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RenewStepLeaseResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("RenewStepLease"))
              .build();
        }
      }
    }
    return getRenewStepLeaseMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.CancelWorkflowRequest,
      dev.statekeeper.v1.CancelWorkflowResponse> getCancelWorkflowMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "CancelWorkflow",
      requestType = dev.statekeeper.v1.CancelWorkflowRequest.class,
      responseType = dev.statekeeper.v1.CancelWorkflowResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.CancelWorkflowRequest,
      dev.statekeeper.v1.CancelWorkflowResponse> getCancelWorkflowMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.CancelWorkflowRequest, dev.statekeeper.v1.CancelWorkflowResponse> getCancelWorkflowMethod;
    if ((getCancelWorkflowMethod = CheckpointServiceGrpc.getCancelWorkflowMethod) == null) {
      synchronized (CheckpointServiceGrpc.class) {
        if ((getCancelWorkflowMethod = CheckpointServiceGrpc.getCancelWorkflowMethod) == null) {
          CheckpointServiceGrpc.getCancelWorkflowMethod = getCancelWorkflowMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.CancelWorkflowRequest, dev.statekeeper.v1.CancelWorkflowResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "CancelWorkflow"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CancelWorkflowRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.CancelWorkflowResponse.getDefaultInstance()))
              .setSchemaDescriptor(new CheckpointServiceMethodDescriptorSupplier("CancelWorkflow"))
              .build();
        }
      }
    }
    return getCancelWorkflowMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static CheckpointServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceStub>() {
        @java.lang.Override
        public CheckpointServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CheckpointServiceStub(channel, callOptions);
        }
      };
    return CheckpointServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static CheckpointServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceBlockingV2Stub>() {
        @java.lang.Override
        public CheckpointServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CheckpointServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return CheckpointServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static CheckpointServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceBlockingStub>() {
        @java.lang.Override
        public CheckpointServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CheckpointServiceBlockingStub(channel, callOptions);
        }
      };
    return CheckpointServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static CheckpointServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<CheckpointServiceFutureStub>() {
        @java.lang.Override
        public CheckpointServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new CheckpointServiceFutureStub(channel, callOptions);
        }
      };
    return CheckpointServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Saves a checkpoint. Saving an existing (execution_id, namespace,
     * checkpoint_id) again replaces its content (a safe retry) and keeps its
     * `sequence` and pending writes.
     * `checkpoint_id` is assigned by the server when unset (server ids sort
     * lexically in save order). The parent need not exist (it may have been
     * pruned), but it must not be a checkpoint removed by DeleteExecution or
     * DeleteRuns: a late write from a worker that still holds a deleted
     * checkpoint must not bring the execution back.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty, a
     * channel has no version, or a channel names both a value and a
     * `content_hash`; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHECKPOINT_DELETED" if `parent_checkpoint_id`
     * names a deleted checkpoint; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "OWNERSHIP_SUPERSEDED" and
     * metadata["current_epoch"] if `ownership_epoch` is set and lower than the
     * execution's current epoch; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHANNEL_VALUE_MISSING" and metadata["channel"]
     * if a channel gives neither value nor hash and no value is stored for its
     * (channel, version), or names an unknown `content_hash`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the checkpoint is over the
     * configured size limit.
     * </pre>
     */
    default void saveCheckpoint(dev.statekeeper.v1.SaveCheckpointRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SaveCheckpointResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSaveCheckpointMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns one checkpoint with its pending writes: the one named by
     * `checkpoint_id`, or the latest of the namespace when it is unset.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty;
     * NOT_FOUND (NOT_FOUND) if the named checkpoint does not exist, or the
     * namespace has no checkpoint at all.
     * </pre>
     */
    default void getCheckpoint(dev.statekeeper.v1.GetCheckpointRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetCheckpointResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetCheckpointMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists checkpoints newest first (see the order above), with their pending
     * writes. An execution with no checkpoints gives an empty list, not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters,
     * `before_checkpoint_id` is set without `execution_id`, or it matches
     * checkpoints in several namespaces and `namespace` is unset; NOT_FOUND
     * (NOT_FOUND) if `before_checkpoint_id` names no checkpoint.
     * </pre>
     */
    default void listCheckpoints(dev.statekeeper.v1.ListCheckpointsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListCheckpointsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListCheckpointsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Stores the pending writes of one task against a checkpoint.
     * Idempotent per (checkpoint, task_id, index): for index &gt;= 0 the first
     * write wins and a repeat is ignored (counted in `duplicate_count`); for
     * index &lt; 0 (LangGraph's special channels: error, interrupt, resume,
     * scheduled) a repeat replaces the stored write.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id`,
     * `checkpoint_id` or `task_id` is empty, `writes` is empty, or two writes
     * share an index; NOT_FOUND (NOT_FOUND) if the checkpoint does not exist;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "CHECKPOINT_DELETED" if it was removed by DeleteExecution or DeleteRuns;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "OWNERSHIP_SUPERSEDED" if `ownership_epoch` is stale; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if the writes are over the size limit.
     * </pre>
     */
    default void putWrites(dev.statekeeper.v1.PutWritesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutWritesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutWritesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns stored channel values by content hash, for clients that read
     * checkpoints with `omit_channel_values`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `content_hashes` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it has more entries than the
     * configured batch limit. Unknown hashes are reported in `missing_hashes`,
     * not as an error.
     * </pre>
     */
    default void getChannelValues(dev.statekeeper.v1.GetChannelValuesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetChannelValuesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetChannelValuesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes every checkpoint, pending write and channel value of an
     * execution, in every namespace. Final: the deleted checkpoint ids are
     * remembered, and a later SaveCheckpoint whose parent is one of them or a
     * later PutWrites against one of them fails with FAILED_PRECONDITION
     * (CHECKPOINT_DELETED). A new checkpoint without a parent may start the
     * execution afresh. Deleting an execution that has no checkpoints succeeds
     * with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    default void deleteExecution(dev.statekeeper.v1.DeleteExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteExecutionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteExecutionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes the checkpoints (and their pending writes) created by the given
     * runs, in every execution and namespace; remembered as for
     * DeleteExecution. An empty list or unknown run ids succeed with zero
     * counts.
     * Errors: RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `run_ids` has more entries
     * than the configured batch limit.
     * </pre>
     */
    default void deleteRuns(dev.statekeeper.v1.DeleteRunsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteRunsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteRunsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Copies (forks) an execution to a new execution id: every checkpoint in
     * every namespace, with the same ids, order, metadata, channel values (by
     * reference) and pending writes. The source is unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty or both are
     * equal; NOT_FOUND (NOT_FOUND) if the source has no checkpoints or
     * `until_checkpoint_id` names none; ALREADY_EXISTS (ALREADY_EXISTS) if the
     * target already has checkpoints.
     * </pre>
     */
    default void copyExecution(dev.statekeeper.v1.CopyExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CopyExecutionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCopyExecutionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes old checkpoints, keeping the newest `keep_last` of every
     * (execution, namespace), with their pending writes and every channel value
     * they reference. A kept checkpoint's `parent_checkpoint_id` may then name
     * a pruned checkpoint. Unlike DeleteExecution, pruning is not final: pruned
     * ids may be used as parents. An empty `execution_ids` with
     * `all_executions` unset, or unknown ids, succeed with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `keep_last` is negative or
     * both `execution_ids` and `all_executions` are set.
     * </pre>
     */
    default void pruneCheckpoints(dev.statekeeper.v1.PruneCheckpointsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PruneCheckpointsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPruneCheckpointsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Claims write ownership of an execution, superseding any current owner,
     * and returns a new ownership epoch (strictly greater than any before).
     * Writes (SaveCheckpoint, PutWrites) that carry an older epoch fail with
     * FAILED_PRECONDITION (OWNERSHIP_SUPERSEDED) and store nothing; writes
     * without an epoch are not fenced. The execution need not exist yet.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    default void claimExecution(dev.statekeeper.v1.ClaimExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimExecutionResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClaimExecutionMethod(), responseObserver);
    }

    /**
     * <pre>
     * Starts a workflow: validates the step graph and makes the steps without
     * dependencies ready.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `steps` is empty, a step id is
     * empty or repeated, `depends_on` names an unknown step or forms a cycle,
     * `max_retries` is negative, or the backoff is inconsistent (multiplier
     * below 1, maximum below initial); ALREADY_EXISTS (ALREADY_EXISTS) if
     * `workflow_id` is taken; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are
     * more steps, or bigger inputs, than configured.
     * </pre>
     */
    default void startWorkflow(dev.statekeeper.v1.StartWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.StartWorkflowResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStartWorkflowMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns a workflow with the state of every step.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist.
     * </pre>
     */
    default void getWorkflow(dev.statekeeper.v1.GetWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetWorkflowResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetWorkflowMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists workflows, newest `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    default void listWorkflows(dev.statekeeper.v1.ListWorkflowsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListWorkflowsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListWorkflowsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Claims up to `max_steps` ready steps for a worker. A step is ready when it
     * is PENDING and all its dependencies are SUCCESS or SKIPPED, or RETRYING
     * and its `next_retry_time` has passed, or RUNNING and its lease has
     * expired (the previous worker is presumed dead; that attempt counts as a
     * retryable failure). Claiming makes the step RUNNING, increments its
     * `attempt`, and grants a lease. Two concurrent claims never receive the
     * same step. Returns an empty list when nothing is ready within
     * `wait_timeout`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `worker_id` is empty or a
     * count or duration is negative; NOT_FOUND (NOT_FOUND) if `workflow_id` is
     * set and does not exist.
     * </pre>
     */
    default void claimSteps(dev.statekeeper.v1.ClaimStepsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimStepsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getClaimStepsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Records the success of a claimed step and its outputs, making its
     * dependents ready when their other dependencies are done. Idempotent: a
     * repeat with the same lease returns the step with `already_completed` set
     * and never records a second result.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "LEASE_MISMATCH" if
     * `lease_id` is not the step's current lease (another worker holds it, or
     * it finished under another lease), "LEASE_EXPIRED" if the lease has
     * expired, or "WORKFLOW_FINISHED" if the workflow was cancelled or failed.
     * </pre>
     */
    default void completeStep(dev.statekeeper.v1.CompleteStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompleteStepResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCompleteStepMethod(), responseObserver);
    }

    /**
     * <pre>
     * Records the failure of a claimed step. If the failure is retryable and
     * attempts remain (`attempt` &lt;= `max_retries`), the step becomes RETRYING
     * with `next_retry_time` from the backoff policy; otherwise it becomes
     * FAILED, the workflow becomes FAILED, and its PENDING and RETRYING steps
     * become CANCELLED. Idempotent per lease like CompleteStep.
     * Errors: as CompleteStep.
     * </pre>
     */
    default void failStep(dev.statekeeper.v1.FailStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.FailStepResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getFailStepMethod(), responseObserver);
    }

    /**
     * <pre>
     * Marks a step SKIPPED; SKIPPED satisfies its dependents like SUCCESS, with
     * no outputs. A PENDING or RETRYING step can be skipped without a lease; a
     * RUNNING step only with its current lease. Skipping a SKIPPED step is a
     * no-op.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "STEP_FINISHED" if the
     * step is SUCCESS, FAILED or CANCELLED, "LEASE_MISMATCH" if it is RUNNING
     * and `lease_id` is not its lease, or "WORKFLOW_FINISHED".
     * </pre>
     */
    default void skipStep(dev.statekeeper.v1.SkipStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SkipStepResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getSkipStepMethod(), responseObserver);
    }

    /**
     * <pre>
     * Extends the lease of a claimed step (a worker heartbeat).
     * Errors: as CompleteStep; a worker that gets FAILED_PRECONDITION must stop
     * working on the step, because another worker may own it.
     * </pre>
     */
    default void renewStepLease(dev.statekeeper.v1.RenewStepLeaseRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RenewStepLeaseResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRenewStepLeaseMethod(), responseObserver);
    }

    /**
     * <pre>
     * Cancels a workflow: every step not yet SUCCESS, FAILED or SKIPPED becomes
     * CANCELLED and running leases stop being valid. Cancelling a cancelled
     * workflow returns it unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist; ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "WORKFLOW_FINISHED" if
     * it already ended in SUCCESS or FAILED.
     * </pre>
     */
    default void cancelWorkflow(dev.statekeeper.v1.CancelWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CancelWorkflowResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getCancelWorkflowMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service CheckpointService.
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static abstract class CheckpointServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return CheckpointServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service CheckpointService.
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class CheckpointServiceStub
      extends io.grpc.stub.AbstractAsyncStub<CheckpointServiceStub> {
    private CheckpointServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CheckpointServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CheckpointServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a checkpoint. Saving an existing (execution_id, namespace,
     * checkpoint_id) again replaces its content (a safe retry) and keeps its
     * `sequence` and pending writes.
     * `checkpoint_id` is assigned by the server when unset (server ids sort
     * lexically in save order). The parent need not exist (it may have been
     * pruned), but it must not be a checkpoint removed by DeleteExecution or
     * DeleteRuns: a late write from a worker that still holds a deleted
     * checkpoint must not bring the execution back.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty, a
     * channel has no version, or a channel names both a value and a
     * `content_hash`; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHECKPOINT_DELETED" if `parent_checkpoint_id`
     * names a deleted checkpoint; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "OWNERSHIP_SUPERSEDED" and
     * metadata["current_epoch"] if `ownership_epoch` is set and lower than the
     * execution's current epoch; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHANNEL_VALUE_MISSING" and metadata["channel"]
     * if a channel gives neither value nor hash and no value is stored for its
     * (channel, version), or names an unknown `content_hash`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the checkpoint is over the
     * configured size limit.
     * </pre>
     */
    public void saveCheckpoint(dev.statekeeper.v1.SaveCheckpointRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SaveCheckpointResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSaveCheckpointMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns one checkpoint with its pending writes: the one named by
     * `checkpoint_id`, or the latest of the namespace when it is unset.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty;
     * NOT_FOUND (NOT_FOUND) if the named checkpoint does not exist, or the
     * namespace has no checkpoint at all.
     * </pre>
     */
    public void getCheckpoint(dev.statekeeper.v1.GetCheckpointRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetCheckpointResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetCheckpointMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists checkpoints newest first (see the order above), with their pending
     * writes. An execution with no checkpoints gives an empty list, not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters,
     * `before_checkpoint_id` is set without `execution_id`, or it matches
     * checkpoints in several namespaces and `namespace` is unset; NOT_FOUND
     * (NOT_FOUND) if `before_checkpoint_id` names no checkpoint.
     * </pre>
     */
    public void listCheckpoints(dev.statekeeper.v1.ListCheckpointsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListCheckpointsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListCheckpointsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Stores the pending writes of one task against a checkpoint.
     * Idempotent per (checkpoint, task_id, index): for index &gt;= 0 the first
     * write wins and a repeat is ignored (counted in `duplicate_count`); for
     * index &lt; 0 (LangGraph's special channels: error, interrupt, resume,
     * scheduled) a repeat replaces the stored write.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id`,
     * `checkpoint_id` or `task_id` is empty, `writes` is empty, or two writes
     * share an index; NOT_FOUND (NOT_FOUND) if the checkpoint does not exist;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "CHECKPOINT_DELETED" if it was removed by DeleteExecution or DeleteRuns;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "OWNERSHIP_SUPERSEDED" if `ownership_epoch` is stale; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if the writes are over the size limit.
     * </pre>
     */
    public void putWrites(dev.statekeeper.v1.PutWritesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutWritesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutWritesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns stored channel values by content hash, for clients that read
     * checkpoints with `omit_channel_values`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `content_hashes` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it has more entries than the
     * configured batch limit. Unknown hashes are reported in `missing_hashes`,
     * not as an error.
     * </pre>
     */
    public void getChannelValues(dev.statekeeper.v1.GetChannelValuesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetChannelValuesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetChannelValuesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes every checkpoint, pending write and channel value of an
     * execution, in every namespace. Final: the deleted checkpoint ids are
     * remembered, and a later SaveCheckpoint whose parent is one of them or a
     * later PutWrites against one of them fails with FAILED_PRECONDITION
     * (CHECKPOINT_DELETED). A new checkpoint without a parent may start the
     * execution afresh. Deleting an execution that has no checkpoints succeeds
     * with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public void deleteExecution(dev.statekeeper.v1.DeleteExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteExecutionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteExecutionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes the checkpoints (and their pending writes) created by the given
     * runs, in every execution and namespace; remembered as for
     * DeleteExecution. An empty list or unknown run ids succeed with zero
     * counts.
     * Errors: RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `run_ids` has more entries
     * than the configured batch limit.
     * </pre>
     */
    public void deleteRuns(dev.statekeeper.v1.DeleteRunsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteRunsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteRunsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Copies (forks) an execution to a new execution id: every checkpoint in
     * every namespace, with the same ids, order, metadata, channel values (by
     * reference) and pending writes. The source is unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty or both are
     * equal; NOT_FOUND (NOT_FOUND) if the source has no checkpoints or
     * `until_checkpoint_id` names none; ALREADY_EXISTS (ALREADY_EXISTS) if the
     * target already has checkpoints.
     * </pre>
     */
    public void copyExecution(dev.statekeeper.v1.CopyExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CopyExecutionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCopyExecutionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes old checkpoints, keeping the newest `keep_last` of every
     * (execution, namespace), with their pending writes and every channel value
     * they reference. A kept checkpoint's `parent_checkpoint_id` may then name
     * a pruned checkpoint. Unlike DeleteExecution, pruning is not final: pruned
     * ids may be used as parents. An empty `execution_ids` with
     * `all_executions` unset, or unknown ids, succeed with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `keep_last` is negative or
     * both `execution_ids` and `all_executions` are set.
     * </pre>
     */
    public void pruneCheckpoints(dev.statekeeper.v1.PruneCheckpointsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.PruneCheckpointsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPruneCheckpointsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Claims write ownership of an execution, superseding any current owner,
     * and returns a new ownership epoch (strictly greater than any before).
     * Writes (SaveCheckpoint, PutWrites) that carry an older epoch fail with
     * FAILED_PRECONDITION (OWNERSHIP_SUPERSEDED) and store nothing; writes
     * without an epoch are not fenced. The execution need not exist yet.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public void claimExecution(dev.statekeeper.v1.ClaimExecutionRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimExecutionResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClaimExecutionMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Starts a workflow: validates the step graph and makes the steps without
     * dependencies ready.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `steps` is empty, a step id is
     * empty or repeated, `depends_on` names an unknown step or forms a cycle,
     * `max_retries` is negative, or the backoff is inconsistent (multiplier
     * below 1, maximum below initial); ALREADY_EXISTS (ALREADY_EXISTS) if
     * `workflow_id` is taken; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are
     * more steps, or bigger inputs, than configured.
     * </pre>
     */
    public void startWorkflow(dev.statekeeper.v1.StartWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.StartWorkflowResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getStartWorkflowMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns a workflow with the state of every step.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist.
     * </pre>
     */
    public void getWorkflow(dev.statekeeper.v1.GetWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetWorkflowResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetWorkflowMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists workflows, newest `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public void listWorkflows(dev.statekeeper.v1.ListWorkflowsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListWorkflowsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListWorkflowsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Claims up to `max_steps` ready steps for a worker. A step is ready when it
     * is PENDING and all its dependencies are SUCCESS or SKIPPED, or RETRYING
     * and its `next_retry_time` has passed, or RUNNING and its lease has
     * expired (the previous worker is presumed dead; that attempt counts as a
     * retryable failure). Claiming makes the step RUNNING, increments its
     * `attempt`, and grants a lease. Two concurrent claims never receive the
     * same step. Returns an empty list when nothing is ready within
     * `wait_timeout`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `worker_id` is empty or a
     * count or duration is negative; NOT_FOUND (NOT_FOUND) if `workflow_id` is
     * set and does not exist.
     * </pre>
     */
    public void claimSteps(dev.statekeeper.v1.ClaimStepsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimStepsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getClaimStepsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Records the success of a claimed step and its outputs, making its
     * dependents ready when their other dependencies are done. Idempotent: a
     * repeat with the same lease returns the step with `already_completed` set
     * and never records a second result.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "LEASE_MISMATCH" if
     * `lease_id` is not the step's current lease (another worker holds it, or
     * it finished under another lease), "LEASE_EXPIRED" if the lease has
     * expired, or "WORKFLOW_FINISHED" if the workflow was cancelled or failed.
     * </pre>
     */
    public void completeStep(dev.statekeeper.v1.CompleteStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompleteStepResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCompleteStepMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Records the failure of a claimed step. If the failure is retryable and
     * attempts remain (`attempt` &lt;= `max_retries`), the step becomes RETRYING
     * with `next_retry_time` from the backoff policy; otherwise it becomes
     * FAILED, the workflow becomes FAILED, and its PENDING and RETRYING steps
     * become CANCELLED. Idempotent per lease like CompleteStep.
     * Errors: as CompleteStep.
     * </pre>
     */
    public void failStep(dev.statekeeper.v1.FailStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.FailStepResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getFailStepMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Marks a step SKIPPED; SKIPPED satisfies its dependents like SUCCESS, with
     * no outputs. A PENDING or RETRYING step can be skipped without a lease; a
     * RUNNING step only with its current lease. Skipping a SKIPPED step is a
     * no-op.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "STEP_FINISHED" if the
     * step is SUCCESS, FAILED or CANCELLED, "LEASE_MISMATCH" if it is RUNNING
     * and `lease_id` is not its lease, or "WORKFLOW_FINISHED".
     * </pre>
     */
    public void skipStep(dev.statekeeper.v1.SkipStepRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.SkipStepResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getSkipStepMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Extends the lease of a claimed step (a worker heartbeat).
     * Errors: as CompleteStep; a worker that gets FAILED_PRECONDITION must stop
     * working on the step, because another worker may own it.
     * </pre>
     */
    public void renewStepLease(dev.statekeeper.v1.RenewStepLeaseRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RenewStepLeaseResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRenewStepLeaseMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Cancels a workflow: every step not yet SUCCESS, FAILED or SKIPPED becomes
     * CANCELLED and running leases stop being valid. Cancelling a cancelled
     * workflow returns it unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist; ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "WORKFLOW_FINISHED" if
     * it already ended in SUCCESS or FAILED.
     * </pre>
     */
    public void cancelWorkflow(dev.statekeeper.v1.CancelWorkflowRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.CancelWorkflowResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getCancelWorkflowMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service CheckpointService.
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class CheckpointServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<CheckpointServiceBlockingV2Stub> {
    private CheckpointServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CheckpointServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CheckpointServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a checkpoint. Saving an existing (execution_id, namespace,
     * checkpoint_id) again replaces its content (a safe retry) and keeps its
     * `sequence` and pending writes.
     * `checkpoint_id` is assigned by the server when unset (server ids sort
     * lexically in save order). The parent need not exist (it may have been
     * pruned), but it must not be a checkpoint removed by DeleteExecution or
     * DeleteRuns: a late write from a worker that still holds a deleted
     * checkpoint must not bring the execution back.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty, a
     * channel has no version, or a channel names both a value and a
     * `content_hash`; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHECKPOINT_DELETED" if `parent_checkpoint_id`
     * names a deleted checkpoint; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "OWNERSHIP_SUPERSEDED" and
     * metadata["current_epoch"] if `ownership_epoch` is set and lower than the
     * execution's current epoch; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHANNEL_VALUE_MISSING" and metadata["channel"]
     * if a channel gives neither value nor hash and no value is stored for its
     * (channel, version), or names an unknown `content_hash`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the checkpoint is over the
     * configured size limit.
     * </pre>
     */
    public dev.statekeeper.v1.SaveCheckpointResponse saveCheckpoint(dev.statekeeper.v1.SaveCheckpointRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSaveCheckpointMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one checkpoint with its pending writes: the one named by
     * `checkpoint_id`, or the latest of the namespace when it is unset.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty;
     * NOT_FOUND (NOT_FOUND) if the named checkpoint does not exist, or the
     * namespace has no checkpoint at all.
     * </pre>
     */
    public dev.statekeeper.v1.GetCheckpointResponse getCheckpoint(dev.statekeeper.v1.GetCheckpointRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetCheckpointMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists checkpoints newest first (see the order above), with their pending
     * writes. An execution with no checkpoints gives an empty list, not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters,
     * `before_checkpoint_id` is set without `execution_id`, or it matches
     * checkpoints in several namespaces and `namespace` is unset; NOT_FOUND
     * (NOT_FOUND) if `before_checkpoint_id` names no checkpoint.
     * </pre>
     */
    public dev.statekeeper.v1.ListCheckpointsResponse listCheckpoints(dev.statekeeper.v1.ListCheckpointsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListCheckpointsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stores the pending writes of one task against a checkpoint.
     * Idempotent per (checkpoint, task_id, index): for index &gt;= 0 the first
     * write wins and a repeat is ignored (counted in `duplicate_count`); for
     * index &lt; 0 (LangGraph's special channels: error, interrupt, resume,
     * scheduled) a repeat replaces the stored write.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id`,
     * `checkpoint_id` or `task_id` is empty, `writes` is empty, or two writes
     * share an index; NOT_FOUND (NOT_FOUND) if the checkpoint does not exist;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "CHECKPOINT_DELETED" if it was removed by DeleteExecution or DeleteRuns;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "OWNERSHIP_SUPERSEDED" if `ownership_epoch` is stale; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if the writes are over the size limit.
     * </pre>
     */
    public dev.statekeeper.v1.PutWritesResponse putWrites(dev.statekeeper.v1.PutWritesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPutWritesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns stored channel values by content hash, for clients that read
     * checkpoints with `omit_channel_values`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `content_hashes` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it has more entries than the
     * configured batch limit. Unknown hashes are reported in `missing_hashes`,
     * not as an error.
     * </pre>
     */
    public dev.statekeeper.v1.GetChannelValuesResponse getChannelValues(dev.statekeeper.v1.GetChannelValuesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetChannelValuesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every checkpoint, pending write and channel value of an
     * execution, in every namespace. Final: the deleted checkpoint ids are
     * remembered, and a later SaveCheckpoint whose parent is one of them or a
     * later PutWrites against one of them fails with FAILED_PRECONDITION
     * (CHECKPOINT_DELETED). A new checkpoint without a parent may start the
     * execution afresh. Deleting an execution that has no checkpoints succeeds
     * with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteExecutionResponse deleteExecution(dev.statekeeper.v1.DeleteExecutionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the checkpoints (and their pending writes) created by the given
     * runs, in every execution and namespace; remembered as for
     * DeleteExecution. An empty list or unknown run ids succeed with zero
     * counts.
     * Errors: RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `run_ids` has more entries
     * than the configured batch limit.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteRunsResponse deleteRuns(dev.statekeeper.v1.DeleteRunsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteRunsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Copies (forks) an execution to a new execution id: every checkpoint in
     * every namespace, with the same ids, order, metadata, channel values (by
     * reference) and pending writes. The source is unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty or both are
     * equal; NOT_FOUND (NOT_FOUND) if the source has no checkpoints or
     * `until_checkpoint_id` names none; ALREADY_EXISTS (ALREADY_EXISTS) if the
     * target already has checkpoints.
     * </pre>
     */
    public dev.statekeeper.v1.CopyExecutionResponse copyExecution(dev.statekeeper.v1.CopyExecutionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCopyExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes old checkpoints, keeping the newest `keep_last` of every
     * (execution, namespace), with their pending writes and every channel value
     * they reference. A kept checkpoint's `parent_checkpoint_id` may then name
     * a pruned checkpoint. Unlike DeleteExecution, pruning is not final: pruned
     * ids may be used as parents. An empty `execution_ids` with
     * `all_executions` unset, or unknown ids, succeed with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `keep_last` is negative or
     * both `execution_ids` and `all_executions` are set.
     * </pre>
     */
    public dev.statekeeper.v1.PruneCheckpointsResponse pruneCheckpoints(dev.statekeeper.v1.PruneCheckpointsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPruneCheckpointsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Claims write ownership of an execution, superseding any current owner,
     * and returns a new ownership epoch (strictly greater than any before).
     * Writes (SaveCheckpoint, PutWrites) that carry an older epoch fail with
     * FAILED_PRECONDITION (OWNERSHIP_SUPERSEDED) and store nothing; writes
     * without an epoch are not fenced. The execution need not exist yet.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.ClaimExecutionResponse claimExecution(dev.statekeeper.v1.ClaimExecutionRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClaimExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Starts a workflow: validates the step graph and makes the steps without
     * dependencies ready.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `steps` is empty, a step id is
     * empty or repeated, `depends_on` names an unknown step or forms a cycle,
     * `max_retries` is negative, or the backoff is inconsistent (multiplier
     * below 1, maximum below initial); ALREADY_EXISTS (ALREADY_EXISTS) if
     * `workflow_id` is taken; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are
     * more steps, or bigger inputs, than configured.
     * </pre>
     */
    public dev.statekeeper.v1.StartWorkflowResponse startWorkflow(dev.statekeeper.v1.StartWorkflowRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getStartWorkflowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a workflow with the state of every step.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist.
     * </pre>
     */
    public dev.statekeeper.v1.GetWorkflowResponse getWorkflow(dev.statekeeper.v1.GetWorkflowRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetWorkflowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists workflows, newest `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListWorkflowsResponse listWorkflows(dev.statekeeper.v1.ListWorkflowsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListWorkflowsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Claims up to `max_steps` ready steps for a worker. A step is ready when it
     * is PENDING and all its dependencies are SUCCESS or SKIPPED, or RETRYING
     * and its `next_retry_time` has passed, or RUNNING and its lease has
     * expired (the previous worker is presumed dead; that attempt counts as a
     * retryable failure). Claiming makes the step RUNNING, increments its
     * `attempt`, and grants a lease. Two concurrent claims never receive the
     * same step. Returns an empty list when nothing is ready within
     * `wait_timeout`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `worker_id` is empty or a
     * count or duration is negative; NOT_FOUND (NOT_FOUND) if `workflow_id` is
     * set and does not exist.
     * </pre>
     */
    public dev.statekeeper.v1.ClaimStepsResponse claimSteps(dev.statekeeper.v1.ClaimStepsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getClaimStepsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Records the success of a claimed step and its outputs, making its
     * dependents ready when their other dependencies are done. Idempotent: a
     * repeat with the same lease returns the step with `already_completed` set
     * and never records a second result.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "LEASE_MISMATCH" if
     * `lease_id` is not the step's current lease (another worker holds it, or
     * it finished under another lease), "LEASE_EXPIRED" if the lease has
     * expired, or "WORKFLOW_FINISHED" if the workflow was cancelled or failed.
     * </pre>
     */
    public dev.statekeeper.v1.CompleteStepResponse completeStep(dev.statekeeper.v1.CompleteStepRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCompleteStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Records the failure of a claimed step. If the failure is retryable and
     * attempts remain (`attempt` &lt;= `max_retries`), the step becomes RETRYING
     * with `next_retry_time` from the backoff policy; otherwise it becomes
     * FAILED, the workflow becomes FAILED, and its PENDING and RETRYING steps
     * become CANCELLED. Idempotent per lease like CompleteStep.
     * Errors: as CompleteStep.
     * </pre>
     */
    public dev.statekeeper.v1.FailStepResponse failStep(dev.statekeeper.v1.FailStepRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getFailStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a step SKIPPED; SKIPPED satisfies its dependents like SUCCESS, with
     * no outputs. A PENDING or RETRYING step can be skipped without a lease; a
     * RUNNING step only with its current lease. Skipping a SKIPPED step is a
     * no-op.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "STEP_FINISHED" if the
     * step is SUCCESS, FAILED or CANCELLED, "LEASE_MISMATCH" if it is RUNNING
     * and `lease_id` is not its lease, or "WORKFLOW_FINISHED".
     * </pre>
     */
    public dev.statekeeper.v1.SkipStepResponse skipStep(dev.statekeeper.v1.SkipStepRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getSkipStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extends the lease of a claimed step (a worker heartbeat).
     * Errors: as CompleteStep; a worker that gets FAILED_PRECONDITION must stop
     * working on the step, because another worker may own it.
     * </pre>
     */
    public dev.statekeeper.v1.RenewStepLeaseResponse renewStepLease(dev.statekeeper.v1.RenewStepLeaseRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRenewStepLeaseMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancels a workflow: every step not yet SUCCESS, FAILED or SKIPPED becomes
     * CANCELLED and running leases stop being valid. Cancelling a cancelled
     * workflow returns it unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist; ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "WORKFLOW_FINISHED" if
     * it already ended in SUCCESS or FAILED.
     * </pre>
     */
    public dev.statekeeper.v1.CancelWorkflowResponse cancelWorkflow(dev.statekeeper.v1.CancelWorkflowRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getCancelWorkflowMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service CheckpointService.
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class CheckpointServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<CheckpointServiceBlockingStub> {
    private CheckpointServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CheckpointServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CheckpointServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a checkpoint. Saving an existing (execution_id, namespace,
     * checkpoint_id) again replaces its content (a safe retry) and keeps its
     * `sequence` and pending writes.
     * `checkpoint_id` is assigned by the server when unset (server ids sort
     * lexically in save order). The parent need not exist (it may have been
     * pruned), but it must not be a checkpoint removed by DeleteExecution or
     * DeleteRuns: a late write from a worker that still holds a deleted
     * checkpoint must not bring the execution back.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty, a
     * channel has no version, or a channel names both a value and a
     * `content_hash`; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHECKPOINT_DELETED" if `parent_checkpoint_id`
     * names a deleted checkpoint; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "OWNERSHIP_SUPERSEDED" and
     * metadata["current_epoch"] if `ownership_epoch` is set and lower than the
     * execution's current epoch; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHANNEL_VALUE_MISSING" and metadata["channel"]
     * if a channel gives neither value nor hash and no value is stored for its
     * (channel, version), or names an unknown `content_hash`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the checkpoint is over the
     * configured size limit.
     * </pre>
     */
    public dev.statekeeper.v1.SaveCheckpointResponse saveCheckpoint(dev.statekeeper.v1.SaveCheckpointRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSaveCheckpointMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one checkpoint with its pending writes: the one named by
     * `checkpoint_id`, or the latest of the namespace when it is unset.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty;
     * NOT_FOUND (NOT_FOUND) if the named checkpoint does not exist, or the
     * namespace has no checkpoint at all.
     * </pre>
     */
    public dev.statekeeper.v1.GetCheckpointResponse getCheckpoint(dev.statekeeper.v1.GetCheckpointRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetCheckpointMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists checkpoints newest first (see the order above), with their pending
     * writes. An execution with no checkpoints gives an empty list, not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters,
     * `before_checkpoint_id` is set without `execution_id`, or it matches
     * checkpoints in several namespaces and `namespace` is unset; NOT_FOUND
     * (NOT_FOUND) if `before_checkpoint_id` names no checkpoint.
     * </pre>
     */
    public dev.statekeeper.v1.ListCheckpointsResponse listCheckpoints(dev.statekeeper.v1.ListCheckpointsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListCheckpointsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Stores the pending writes of one task against a checkpoint.
     * Idempotent per (checkpoint, task_id, index): for index &gt;= 0 the first
     * write wins and a repeat is ignored (counted in `duplicate_count`); for
     * index &lt; 0 (LangGraph's special channels: error, interrupt, resume,
     * scheduled) a repeat replaces the stored write.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id`,
     * `checkpoint_id` or `task_id` is empty, `writes` is empty, or two writes
     * share an index; NOT_FOUND (NOT_FOUND) if the checkpoint does not exist;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "CHECKPOINT_DELETED" if it was removed by DeleteExecution or DeleteRuns;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "OWNERSHIP_SUPERSEDED" if `ownership_epoch` is stale; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if the writes are over the size limit.
     * </pre>
     */
    public dev.statekeeper.v1.PutWritesResponse putWrites(dev.statekeeper.v1.PutWritesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutWritesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns stored channel values by content hash, for clients that read
     * checkpoints with `omit_channel_values`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `content_hashes` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it has more entries than the
     * configured batch limit. Unknown hashes are reported in `missing_hashes`,
     * not as an error.
     * </pre>
     */
    public dev.statekeeper.v1.GetChannelValuesResponse getChannelValues(dev.statekeeper.v1.GetChannelValuesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetChannelValuesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes every checkpoint, pending write and channel value of an
     * execution, in every namespace. Final: the deleted checkpoint ids are
     * remembered, and a later SaveCheckpoint whose parent is one of them or a
     * later PutWrites against one of them fails with FAILED_PRECONDITION
     * (CHECKPOINT_DELETED). A new checkpoint without a parent may start the
     * execution afresh. Deleting an execution that has no checkpoints succeeds
     * with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteExecutionResponse deleteExecution(dev.statekeeper.v1.DeleteExecutionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes the checkpoints (and their pending writes) created by the given
     * runs, in every execution and namespace; remembered as for
     * DeleteExecution. An empty list or unknown run ids succeed with zero
     * counts.
     * Errors: RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `run_ids` has more entries
     * than the configured batch limit.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteRunsResponse deleteRuns(dev.statekeeper.v1.DeleteRunsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteRunsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Copies (forks) an execution to a new execution id: every checkpoint in
     * every namespace, with the same ids, order, metadata, channel values (by
     * reference) and pending writes. The source is unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty or both are
     * equal; NOT_FOUND (NOT_FOUND) if the source has no checkpoints or
     * `until_checkpoint_id` names none; ALREADY_EXISTS (ALREADY_EXISTS) if the
     * target already has checkpoints.
     * </pre>
     */
    public dev.statekeeper.v1.CopyExecutionResponse copyExecution(dev.statekeeper.v1.CopyExecutionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCopyExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes old checkpoints, keeping the newest `keep_last` of every
     * (execution, namespace), with their pending writes and every channel value
     * they reference. A kept checkpoint's `parent_checkpoint_id` may then name
     * a pruned checkpoint. Unlike DeleteExecution, pruning is not final: pruned
     * ids may be used as parents. An empty `execution_ids` with
     * `all_executions` unset, or unknown ids, succeed with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `keep_last` is negative or
     * both `execution_ids` and `all_executions` are set.
     * </pre>
     */
    public dev.statekeeper.v1.PruneCheckpointsResponse pruneCheckpoints(dev.statekeeper.v1.PruneCheckpointsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPruneCheckpointsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Claims write ownership of an execution, superseding any current owner,
     * and returns a new ownership epoch (strictly greater than any before).
     * Writes (SaveCheckpoint, PutWrites) that carry an older epoch fail with
     * FAILED_PRECONDITION (OWNERSHIP_SUPERSEDED) and store nothing; writes
     * without an epoch are not fenced. The execution need not exist yet.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.ClaimExecutionResponse claimExecution(dev.statekeeper.v1.ClaimExecutionRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClaimExecutionMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Starts a workflow: validates the step graph and makes the steps without
     * dependencies ready.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `steps` is empty, a step id is
     * empty or repeated, `depends_on` names an unknown step or forms a cycle,
     * `max_retries` is negative, or the backoff is inconsistent (multiplier
     * below 1, maximum below initial); ALREADY_EXISTS (ALREADY_EXISTS) if
     * `workflow_id` is taken; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are
     * more steps, or bigger inputs, than configured.
     * </pre>
     */
    public dev.statekeeper.v1.StartWorkflowResponse startWorkflow(dev.statekeeper.v1.StartWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getStartWorkflowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns a workflow with the state of every step.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist.
     * </pre>
     */
    public dev.statekeeper.v1.GetWorkflowResponse getWorkflow(dev.statekeeper.v1.GetWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetWorkflowMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists workflows, newest `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListWorkflowsResponse listWorkflows(dev.statekeeper.v1.ListWorkflowsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListWorkflowsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Claims up to `max_steps` ready steps for a worker. A step is ready when it
     * is PENDING and all its dependencies are SUCCESS or SKIPPED, or RETRYING
     * and its `next_retry_time` has passed, or RUNNING and its lease has
     * expired (the previous worker is presumed dead; that attempt counts as a
     * retryable failure). Claiming makes the step RUNNING, increments its
     * `attempt`, and grants a lease. Two concurrent claims never receive the
     * same step. Returns an empty list when nothing is ready within
     * `wait_timeout`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `worker_id` is empty or a
     * count or duration is negative; NOT_FOUND (NOT_FOUND) if `workflow_id` is
     * set and does not exist.
     * </pre>
     */
    public dev.statekeeper.v1.ClaimStepsResponse claimSteps(dev.statekeeper.v1.ClaimStepsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getClaimStepsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Records the success of a claimed step and its outputs, making its
     * dependents ready when their other dependencies are done. Idempotent: a
     * repeat with the same lease returns the step with `already_completed` set
     * and never records a second result.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "LEASE_MISMATCH" if
     * `lease_id` is not the step's current lease (another worker holds it, or
     * it finished under another lease), "LEASE_EXPIRED" if the lease has
     * expired, or "WORKFLOW_FINISHED" if the workflow was cancelled or failed.
     * </pre>
     */
    public dev.statekeeper.v1.CompleteStepResponse completeStep(dev.statekeeper.v1.CompleteStepRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCompleteStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Records the failure of a claimed step. If the failure is retryable and
     * attempts remain (`attempt` &lt;= `max_retries`), the step becomes RETRYING
     * with `next_retry_time` from the backoff policy; otherwise it becomes
     * FAILED, the workflow becomes FAILED, and its PENDING and RETRYING steps
     * become CANCELLED. Idempotent per lease like CompleteStep.
     * Errors: as CompleteStep.
     * </pre>
     */
    public dev.statekeeper.v1.FailStepResponse failStep(dev.statekeeper.v1.FailStepRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getFailStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a step SKIPPED; SKIPPED satisfies its dependents like SUCCESS, with
     * no outputs. A PENDING or RETRYING step can be skipped without a lease; a
     * RUNNING step only with its current lease. Skipping a SKIPPED step is a
     * no-op.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "STEP_FINISHED" if the
     * step is SUCCESS, FAILED or CANCELLED, "LEASE_MISMATCH" if it is RUNNING
     * and `lease_id` is not its lease, or "WORKFLOW_FINISHED".
     * </pre>
     */
    public dev.statekeeper.v1.SkipStepResponse skipStep(dev.statekeeper.v1.SkipStepRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getSkipStepMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extends the lease of a claimed step (a worker heartbeat).
     * Errors: as CompleteStep; a worker that gets FAILED_PRECONDITION must stop
     * working on the step, because another worker may own it.
     * </pre>
     */
    public dev.statekeeper.v1.RenewStepLeaseResponse renewStepLease(dev.statekeeper.v1.RenewStepLeaseRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRenewStepLeaseMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Cancels a workflow: every step not yet SUCCESS, FAILED or SKIPPED becomes
     * CANCELLED and running leases stop being valid. Cancelling a cancelled
     * workflow returns it unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist; ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "WORKFLOW_FINISHED" if
     * it already ended in SUCCESS or FAILED.
     * </pre>
     */
    public dev.statekeeper.v1.CancelWorkflowResponse cancelWorkflow(dev.statekeeper.v1.CancelWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getCancelWorkflowMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service CheckpointService.
   * <pre>
   * CheckpointService keeps two kinds of execution state.
   * Checkpoints: snapshots of a graph-shaped agent execution, shaped so that a
   * LangGraph `BaseCheckpointSaver` (put, put_writes, get_tuple, list,
   * delete_thread, copy_thread, delete_for_runs, prune, and write ownership)
   * is a thin adapter over this service:
   * * An execution (LangGraph thread) holds checkpoints in namespaces (LangGraph
   *   checkpoint_ns; "" is the root namespace). A checkpoint is addressed by
   *   (execution_id, namespace, checkpoint_id).
   * * Order: within an execution, checkpoints are ordered by `create_time`,
   *   ties broken by the server-assigned `sequence` (save order). "Latest" and
   *   "newest first" use that order, never the lexical order of ids, because
   *   client-chosen ids need not sort by time.
   * * Channel values are stored once: each channel of a checkpoint names a
   *   version; the value of (execution, namespace, channel, version) is sent
   *   once, with the first checkpoint that has that version, and stored by
   *   content hash. Later checkpoints name the version only.
   * * Pending writes are the outputs of tasks that ran against a checkpoint but
   *   have not yet produced the next one.
   * Workflows: a DAG of steps executed by workers that claim ready steps under
   * a lease, with retries and backoff; a step whose worker dies is claimed by
   * another worker once its lease expires.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class CheckpointServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<CheckpointServiceFutureStub> {
    private CheckpointServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected CheckpointServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new CheckpointServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Saves a checkpoint. Saving an existing (execution_id, namespace,
     * checkpoint_id) again replaces its content (a safe retry) and keeps its
     * `sequence` and pending writes.
     * `checkpoint_id` is assigned by the server when unset (server ids sort
     * lexically in save order). The parent need not exist (it may have been
     * pruned), but it must not be a checkpoint removed by DeleteExecution or
     * DeleteRuns: a late write from a worker that still holds a deleted
     * checkpoint must not bring the execution back.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty, a
     * channel has no version, or a channel names both a value and a
     * `content_hash`; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHECKPOINT_DELETED" if `parent_checkpoint_id`
     * names a deleted checkpoint; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "OWNERSHIP_SUPERSEDED" and
     * metadata["current_epoch"] if `ownership_epoch` is set and lower than the
     * execution's current epoch; FAILED_PRECONDITION (FAILED_PRECONDITION) with
     * metadata["condition"] = "CHANNEL_VALUE_MISSING" and metadata["channel"]
     * if a channel gives neither value nor hash and no value is stored for its
     * (channel, version), or names an unknown `content_hash`;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the checkpoint is over the
     * configured size limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.SaveCheckpointResponse> saveCheckpoint(
        dev.statekeeper.v1.SaveCheckpointRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSaveCheckpointMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns one checkpoint with its pending writes: the one named by
     * `checkpoint_id`, or the latest of the namespace when it is unset.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty;
     * NOT_FOUND (NOT_FOUND) if the named checkpoint does not exist, or the
     * namespace has no checkpoint at all.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetCheckpointResponse> getCheckpoint(
        dev.statekeeper.v1.GetCheckpointRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetCheckpointMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists checkpoints newest first (see the order above), with their pending
     * writes. An execution with no checkpoints gives an empty list, not an
     * error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters,
     * `before_checkpoint_id` is set without `execution_id`, or it matches
     * checkpoints in several namespaces and `namespace` is unset; NOT_FOUND
     * (NOT_FOUND) if `before_checkpoint_id` names no checkpoint.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListCheckpointsResponse> listCheckpoints(
        dev.statekeeper.v1.ListCheckpointsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListCheckpointsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Stores the pending writes of one task against a checkpoint.
     * Idempotent per (checkpoint, task_id, index): for index &gt;= 0 the first
     * write wins and a repeat is ignored (counted in `duplicate_count`); for
     * index &lt; 0 (LangGraph's special channels: error, interrupt, resume,
     * scheduled) a repeat replaces the stored write.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id`,
     * `checkpoint_id` or `task_id` is empty, `writes` is empty, or two writes
     * share an index; NOT_FOUND (NOT_FOUND) if the checkpoint does not exist;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "CHECKPOINT_DELETED" if it was removed by DeleteExecution or DeleteRuns;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "OWNERSHIP_SUPERSEDED" if `ownership_epoch` is stale; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if the writes are over the size limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.PutWritesResponse> putWrites(
        dev.statekeeper.v1.PutWritesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutWritesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns stored channel values by content hash, for clients that read
     * checkpoints with `omit_channel_values`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `content_hashes` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if it has more entries than the
     * configured batch limit. Unknown hashes are reported in `missing_hashes`,
     * not as an error.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetChannelValuesResponse> getChannelValues(
        dev.statekeeper.v1.GetChannelValuesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetChannelValuesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes every checkpoint, pending write and channel value of an
     * execution, in every namespace. Final: the deleted checkpoint ids are
     * remembered, and a later SaveCheckpoint whose parent is one of them or a
     * later PutWrites against one of them fails with FAILED_PRECONDITION
     * (CHECKPOINT_DELETED). A new checkpoint without a parent may start the
     * execution afresh. Deleting an execution that has no checkpoints succeeds
     * with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeleteExecutionResponse> deleteExecution(
        dev.statekeeper.v1.DeleteExecutionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteExecutionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes the checkpoints (and their pending writes) created by the given
     * runs, in every execution and namespace; remembered as for
     * DeleteExecution. An empty list or unknown run ids succeed with zero
     * counts.
     * Errors: RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `run_ids` has more entries
     * than the configured batch limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeleteRunsResponse> deleteRuns(
        dev.statekeeper.v1.DeleteRunsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteRunsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Copies (forks) an execution to a new execution id: every checkpoint in
     * every namespace, with the same ids, order, metadata, channel values (by
     * reference) and pending writes. The source is unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty or both are
     * equal; NOT_FOUND (NOT_FOUND) if the source has no checkpoints or
     * `until_checkpoint_id` names none; ALREADY_EXISTS (ALREADY_EXISTS) if the
     * target already has checkpoints.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CopyExecutionResponse> copyExecution(
        dev.statekeeper.v1.CopyExecutionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCopyExecutionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes old checkpoints, keeping the newest `keep_last` of every
     * (execution, namespace), with their pending writes and every channel value
     * they reference. A kept checkpoint's `parent_checkpoint_id` may then name
     * a pruned checkpoint. Unlike DeleteExecution, pruning is not final: pruned
     * ids may be used as parents. An empty `execution_ids` with
     * `all_executions` unset, or unknown ids, succeed with zero counts.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `keep_last` is negative or
     * both `execution_ids` and `all_executions` are set.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.PruneCheckpointsResponse> pruneCheckpoints(
        dev.statekeeper.v1.PruneCheckpointsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPruneCheckpointsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Claims write ownership of an execution, superseding any current owner,
     * and returns a new ownership epoch (strictly greater than any before).
     * Writes (SaveCheckpoint, PutWrites) that carry an older epoch fail with
     * FAILED_PRECONDITION (OWNERSHIP_SUPERSEDED) and store nothing; writes
     * without an epoch are not fenced. The execution need not exist yet.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `execution_id` is empty.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ClaimExecutionResponse> claimExecution(
        dev.statekeeper.v1.ClaimExecutionRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClaimExecutionMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Starts a workflow: validates the step graph and makes the steps without
     * dependencies ready.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `steps` is empty, a step id is
     * empty or repeated, `depends_on` names an unknown step or forms a cycle,
     * `max_retries` is negative, or the backoff is inconsistent (multiplier
     * below 1, maximum below initial); ALREADY_EXISTS (ALREADY_EXISTS) if
     * `workflow_id` is taken; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if there are
     * more steps, or bigger inputs, than configured.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.StartWorkflowResponse> startWorkflow(
        dev.statekeeper.v1.StartWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getStartWorkflowMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns a workflow with the state of every step.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetWorkflowResponse> getWorkflow(
        dev.statekeeper.v1.GetWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetWorkflowMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists workflows, newest `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListWorkflowsResponse> listWorkflows(
        dev.statekeeper.v1.ListWorkflowsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListWorkflowsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Claims up to `max_steps` ready steps for a worker. A step is ready when it
     * is PENDING and all its dependencies are SUCCESS or SKIPPED, or RETRYING
     * and its `next_retry_time` has passed, or RUNNING and its lease has
     * expired (the previous worker is presumed dead; that attempt counts as a
     * retryable failure). Claiming makes the step RUNNING, increments its
     * `attempt`, and grants a lease. Two concurrent claims never receive the
     * same step. Returns an empty list when nothing is ready within
     * `wait_timeout`.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `worker_id` is empty or a
     * count or duration is negative; NOT_FOUND (NOT_FOUND) if `workflow_id` is
     * set and does not exist.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ClaimStepsResponse> claimSteps(
        dev.statekeeper.v1.ClaimStepsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getClaimStepsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Records the success of a claimed step and its outputs, making its
     * dependents ready when their other dependencies are done. Idempotent: a
     * repeat with the same lease returns the step with `already_completed` set
     * and never records a second result.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "LEASE_MISMATCH" if
     * `lease_id` is not the step's current lease (another worker holds it, or
     * it finished under another lease), "LEASE_EXPIRED" if the lease has
     * expired, or "WORKFLOW_FINISHED" if the workflow was cancelled or failed.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CompleteStepResponse> completeStep(
        dev.statekeeper.v1.CompleteStepRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCompleteStepMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Records the failure of a claimed step. If the failure is retryable and
     * attempts remain (`attempt` &lt;= `max_retries`), the step becomes RETRYING
     * with `next_retry_time` from the backoff policy; otherwise it becomes
     * FAILED, the workflow becomes FAILED, and its PENDING and RETRYING steps
     * become CANCELLED. Idempotent per lease like CompleteStep.
     * Errors: as CompleteStep.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.FailStepResponse> failStep(
        dev.statekeeper.v1.FailStepRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getFailStepMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Marks a step SKIPPED; SKIPPED satisfies its dependents like SUCCESS, with
     * no outputs. A PENDING or RETRYING step can be skipped without a lease; a
     * RUNNING step only with its current lease. Skipping a SKIPPED step is a
     * no-op.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if an id is empty; NOT_FOUND
     * (NOT_FOUND) if the workflow or step does not exist; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "STEP_FINISHED" if the
     * step is SUCCESS, FAILED or CANCELLED, "LEASE_MISMATCH" if it is RUNNING
     * and `lease_id` is not its lease, or "WORKFLOW_FINISHED".
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.SkipStepResponse> skipStep(
        dev.statekeeper.v1.SkipStepRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getSkipStepMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Extends the lease of a claimed step (a worker heartbeat).
     * Errors: as CompleteStep; a worker that gets FAILED_PRECONDITION must stop
     * working on the step, because another worker may own it.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RenewStepLeaseResponse> renewStepLease(
        dev.statekeeper.v1.RenewStepLeaseRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRenewStepLeaseMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Cancels a workflow: every step not yet SUCCESS, FAILED or SKIPPED becomes
     * CANCELLED and running leases stop being valid. Cancelling a cancelled
     * workflow returns it unchanged.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `workflow_id` is empty;
     * NOT_FOUND (NOT_FOUND) if it does not exist; ABORTED (ETAG_MISMATCH) if
     * `expected_etag` is set and stale; FAILED_PRECONDITION
     * (FAILED_PRECONDITION) with metadata["condition"] = "WORKFLOW_FINISHED" if
     * it already ended in SUCCESS or FAILED.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.CancelWorkflowResponse> cancelWorkflow(
        dev.statekeeper.v1.CancelWorkflowRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getCancelWorkflowMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_SAVE_CHECKPOINT = 0;
  private static final int METHODID_GET_CHECKPOINT = 1;
  private static final int METHODID_LIST_CHECKPOINTS = 2;
  private static final int METHODID_PUT_WRITES = 3;
  private static final int METHODID_GET_CHANNEL_VALUES = 4;
  private static final int METHODID_DELETE_EXECUTION = 5;
  private static final int METHODID_DELETE_RUNS = 6;
  private static final int METHODID_COPY_EXECUTION = 7;
  private static final int METHODID_PRUNE_CHECKPOINTS = 8;
  private static final int METHODID_CLAIM_EXECUTION = 9;
  private static final int METHODID_START_WORKFLOW = 10;
  private static final int METHODID_GET_WORKFLOW = 11;
  private static final int METHODID_LIST_WORKFLOWS = 12;
  private static final int METHODID_CLAIM_STEPS = 13;
  private static final int METHODID_COMPLETE_STEP = 14;
  private static final int METHODID_FAIL_STEP = 15;
  private static final int METHODID_SKIP_STEP = 16;
  private static final int METHODID_RENEW_STEP_LEASE = 17;
  private static final int METHODID_CANCEL_WORKFLOW = 18;

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
        case METHODID_SAVE_CHECKPOINT:
          serviceImpl.saveCheckpoint((dev.statekeeper.v1.SaveCheckpointRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.SaveCheckpointResponse>) responseObserver);
          break;
        case METHODID_GET_CHECKPOINT:
          serviceImpl.getCheckpoint((dev.statekeeper.v1.GetCheckpointRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetCheckpointResponse>) responseObserver);
          break;
        case METHODID_LIST_CHECKPOINTS:
          serviceImpl.listCheckpoints((dev.statekeeper.v1.ListCheckpointsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListCheckpointsResponse>) responseObserver);
          break;
        case METHODID_PUT_WRITES:
          serviceImpl.putWrites((dev.statekeeper.v1.PutWritesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.PutWritesResponse>) responseObserver);
          break;
        case METHODID_GET_CHANNEL_VALUES:
          serviceImpl.getChannelValues((dev.statekeeper.v1.GetChannelValuesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetChannelValuesResponse>) responseObserver);
          break;
        case METHODID_DELETE_EXECUTION:
          serviceImpl.deleteExecution((dev.statekeeper.v1.DeleteExecutionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteExecutionResponse>) responseObserver);
          break;
        case METHODID_DELETE_RUNS:
          serviceImpl.deleteRuns((dev.statekeeper.v1.DeleteRunsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteRunsResponse>) responseObserver);
          break;
        case METHODID_COPY_EXECUTION:
          serviceImpl.copyExecution((dev.statekeeper.v1.CopyExecutionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CopyExecutionResponse>) responseObserver);
          break;
        case METHODID_PRUNE_CHECKPOINTS:
          serviceImpl.pruneCheckpoints((dev.statekeeper.v1.PruneCheckpointsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.PruneCheckpointsResponse>) responseObserver);
          break;
        case METHODID_CLAIM_EXECUTION:
          serviceImpl.claimExecution((dev.statekeeper.v1.ClaimExecutionRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimExecutionResponse>) responseObserver);
          break;
        case METHODID_START_WORKFLOW:
          serviceImpl.startWorkflow((dev.statekeeper.v1.StartWorkflowRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.StartWorkflowResponse>) responseObserver);
          break;
        case METHODID_GET_WORKFLOW:
          serviceImpl.getWorkflow((dev.statekeeper.v1.GetWorkflowRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetWorkflowResponse>) responseObserver);
          break;
        case METHODID_LIST_WORKFLOWS:
          serviceImpl.listWorkflows((dev.statekeeper.v1.ListWorkflowsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListWorkflowsResponse>) responseObserver);
          break;
        case METHODID_CLAIM_STEPS:
          serviceImpl.claimSteps((dev.statekeeper.v1.ClaimStepsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ClaimStepsResponse>) responseObserver);
          break;
        case METHODID_COMPLETE_STEP:
          serviceImpl.completeStep((dev.statekeeper.v1.CompleteStepRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CompleteStepResponse>) responseObserver);
          break;
        case METHODID_FAIL_STEP:
          serviceImpl.failStep((dev.statekeeper.v1.FailStepRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.FailStepResponse>) responseObserver);
          break;
        case METHODID_SKIP_STEP:
          serviceImpl.skipStep((dev.statekeeper.v1.SkipStepRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.SkipStepResponse>) responseObserver);
          break;
        case METHODID_RENEW_STEP_LEASE:
          serviceImpl.renewStepLease((dev.statekeeper.v1.RenewStepLeaseRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RenewStepLeaseResponse>) responseObserver);
          break;
        case METHODID_CANCEL_WORKFLOW:
          serviceImpl.cancelWorkflow((dev.statekeeper.v1.CancelWorkflowRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.CancelWorkflowResponse>) responseObserver);
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
          getSaveCheckpointMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.SaveCheckpointRequest,
              dev.statekeeper.v1.SaveCheckpointResponse>(
                service, METHODID_SAVE_CHECKPOINT)))
        .addMethod(
          getGetCheckpointMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetCheckpointRequest,
              dev.statekeeper.v1.GetCheckpointResponse>(
                service, METHODID_GET_CHECKPOINT)))
        .addMethod(
          getListCheckpointsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListCheckpointsRequest,
              dev.statekeeper.v1.ListCheckpointsResponse>(
                service, METHODID_LIST_CHECKPOINTS)))
        .addMethod(
          getPutWritesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.PutWritesRequest,
              dev.statekeeper.v1.PutWritesResponse>(
                service, METHODID_PUT_WRITES)))
        .addMethod(
          getGetChannelValuesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetChannelValuesRequest,
              dev.statekeeper.v1.GetChannelValuesResponse>(
                service, METHODID_GET_CHANNEL_VALUES)))
        .addMethod(
          getDeleteExecutionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeleteExecutionRequest,
              dev.statekeeper.v1.DeleteExecutionResponse>(
                service, METHODID_DELETE_EXECUTION)))
        .addMethod(
          getDeleteRunsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeleteRunsRequest,
              dev.statekeeper.v1.DeleteRunsResponse>(
                service, METHODID_DELETE_RUNS)))
        .addMethod(
          getCopyExecutionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CopyExecutionRequest,
              dev.statekeeper.v1.CopyExecutionResponse>(
                service, METHODID_COPY_EXECUTION)))
        .addMethod(
          getPruneCheckpointsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.PruneCheckpointsRequest,
              dev.statekeeper.v1.PruneCheckpointsResponse>(
                service, METHODID_PRUNE_CHECKPOINTS)))
        .addMethod(
          getClaimExecutionMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ClaimExecutionRequest,
              dev.statekeeper.v1.ClaimExecutionResponse>(
                service, METHODID_CLAIM_EXECUTION)))
        .addMethod(
          getStartWorkflowMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.StartWorkflowRequest,
              dev.statekeeper.v1.StartWorkflowResponse>(
                service, METHODID_START_WORKFLOW)))
        .addMethod(
          getGetWorkflowMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetWorkflowRequest,
              dev.statekeeper.v1.GetWorkflowResponse>(
                service, METHODID_GET_WORKFLOW)))
        .addMethod(
          getListWorkflowsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListWorkflowsRequest,
              dev.statekeeper.v1.ListWorkflowsResponse>(
                service, METHODID_LIST_WORKFLOWS)))
        .addMethod(
          getClaimStepsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ClaimStepsRequest,
              dev.statekeeper.v1.ClaimStepsResponse>(
                service, METHODID_CLAIM_STEPS)))
        .addMethod(
          getCompleteStepMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CompleteStepRequest,
              dev.statekeeper.v1.CompleteStepResponse>(
                service, METHODID_COMPLETE_STEP)))
        .addMethod(
          getFailStepMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.FailStepRequest,
              dev.statekeeper.v1.FailStepResponse>(
                service, METHODID_FAIL_STEP)))
        .addMethod(
          getSkipStepMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.SkipStepRequest,
              dev.statekeeper.v1.SkipStepResponse>(
                service, METHODID_SKIP_STEP)))
        .addMethod(
          getRenewStepLeaseMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RenewStepLeaseRequest,
              dev.statekeeper.v1.RenewStepLeaseResponse>(
                service, METHODID_RENEW_STEP_LEASE)))
        .addMethod(
          getCancelWorkflowMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.CancelWorkflowRequest,
              dev.statekeeper.v1.CancelWorkflowResponse>(
                service, METHODID_CANCEL_WORKFLOW)))
        .build();
  }

  private static abstract class CheckpointServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    CheckpointServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.CheckpointProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("CheckpointService");
    }
  }

  private static final class CheckpointServiceFileDescriptorSupplier
      extends CheckpointServiceBaseDescriptorSupplier {
    CheckpointServiceFileDescriptorSupplier() {}
  }

  private static final class CheckpointServiceMethodDescriptorSupplier
      extends CheckpointServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    CheckpointServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (CheckpointServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new CheckpointServiceFileDescriptorSupplier())
              .addMethod(getSaveCheckpointMethod())
              .addMethod(getGetCheckpointMethod())
              .addMethod(getListCheckpointsMethod())
              .addMethod(getPutWritesMethod())
              .addMethod(getGetChannelValuesMethod())
              .addMethod(getDeleteExecutionMethod())
              .addMethod(getDeleteRunsMethod())
              .addMethod(getCopyExecutionMethod())
              .addMethod(getPruneCheckpointsMethod())
              .addMethod(getClaimExecutionMethod())
              .addMethod(getStartWorkflowMethod())
              .addMethod(getGetWorkflowMethod())
              .addMethod(getListWorkflowsMethod())
              .addMethod(getClaimStepsMethod())
              .addMethod(getCompleteStepMethod())
              .addMethod(getFailStepMethod())
              .addMethod(getSkipStepMethod())
              .addMethod(getRenewStepLeaseMethod())
              .addMethod(getCancelWorkflowMethod())
              .build();
        }
      }
    }
    return result;
  }
}
