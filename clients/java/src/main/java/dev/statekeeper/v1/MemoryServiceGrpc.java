package dev.statekeeper.v1;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * MemoryService keeps the long-term memory of agents, in two layers on top of
 * the working memory that SessionService already holds:
 * * Episodic memory: one record per interaction (user message, assistant
 *   response, a one-line summary, an embedding, an importance in [0, 1] and
 *   string metadata), recalled by vector similarity combined with recency and
 *   importance. Each (tenant, user) has its own vector index, which is derived
 *   state: it is rebuilt from the durable store whenever needed.
 * * Semantic memory: knowledge triples (subject, predicate, object) with
 *   provenance, a confidence and a validity interval. A newer fact that
 *   contradicts an older one on a single-valued predicate invalidates the
 *   older fact; facts are never deleted by contradiction.
 * Scoping: every episode and fact belongs to the caller's tenant and to a
 * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
 * knowledge graph; reads for a user see that user's facts plus the
 * tenant-wide ones, and contradiction only ever happens within one scope.
 * Models: summaries and fact extraction use the configured LLM endpoint and
 * fall back to a deterministic offline implementation when none is
 * configured; embeddings come from the client or the configured embedder.
 * When neither an embedder nor a client vector is available, recall falls
 * back to lexical ranking and says so in its response.
 * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
 * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class MemoryServiceGrpc {

  private MemoryServiceGrpc() {}

  public static final java.lang.String SERVICE_NAME = "statekeeper.v1.MemoryService";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RecordEpisodeRequest,
      dev.statekeeper.v1.RecordEpisodeResponse> getRecordEpisodeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RecordEpisode",
      requestType = dev.statekeeper.v1.RecordEpisodeRequest.class,
      responseType = dev.statekeeper.v1.RecordEpisodeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RecordEpisodeRequest,
      dev.statekeeper.v1.RecordEpisodeResponse> getRecordEpisodeMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RecordEpisodeRequest, dev.statekeeper.v1.RecordEpisodeResponse> getRecordEpisodeMethod;
    if ((getRecordEpisodeMethod = MemoryServiceGrpc.getRecordEpisodeMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRecordEpisodeMethod = MemoryServiceGrpc.getRecordEpisodeMethod) == null) {
          MemoryServiceGrpc.getRecordEpisodeMethod = getRecordEpisodeMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RecordEpisodeRequest, dev.statekeeper.v1.RecordEpisodeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RecordEpisode"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RecordEpisodeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RecordEpisodeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("RecordEpisode"))
              .build();
        }
      }
    }
    return getRecordEpisodeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEpisodeRequest,
      dev.statekeeper.v1.GetEpisodeResponse> getGetEpisodeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetEpisode",
      requestType = dev.statekeeper.v1.GetEpisodeRequest.class,
      responseType = dev.statekeeper.v1.GetEpisodeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEpisodeRequest,
      dev.statekeeper.v1.GetEpisodeResponse> getGetEpisodeMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetEpisodeRequest, dev.statekeeper.v1.GetEpisodeResponse> getGetEpisodeMethod;
    if ((getGetEpisodeMethod = MemoryServiceGrpc.getGetEpisodeMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetEpisodeMethod = MemoryServiceGrpc.getGetEpisodeMethod) == null) {
          MemoryServiceGrpc.getGetEpisodeMethod = getGetEpisodeMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetEpisodeRequest, dev.statekeeper.v1.GetEpisodeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetEpisode"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetEpisodeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetEpisodeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetEpisode"))
              .build();
        }
      }
    }
    return getGetEpisodeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEpisodesRequest,
      dev.statekeeper.v1.ListEpisodesResponse> getListEpisodesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListEpisodes",
      requestType = dev.statekeeper.v1.ListEpisodesRequest.class,
      responseType = dev.statekeeper.v1.ListEpisodesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEpisodesRequest,
      dev.statekeeper.v1.ListEpisodesResponse> getListEpisodesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListEpisodesRequest, dev.statekeeper.v1.ListEpisodesResponse> getListEpisodesMethod;
    if ((getListEpisodesMethod = MemoryServiceGrpc.getListEpisodesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListEpisodesMethod = MemoryServiceGrpc.getListEpisodesMethod) == null) {
          MemoryServiceGrpc.getListEpisodesMethod = getListEpisodesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListEpisodesRequest, dev.statekeeper.v1.ListEpisodesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListEpisodes"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListEpisodesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListEpisodesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListEpisodes"))
              .build();
        }
      }
    }
    return getListEpisodesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEpisodeRequest,
      dev.statekeeper.v1.DeleteEpisodeResponse> getDeleteEpisodeMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeleteEpisode",
      requestType = dev.statekeeper.v1.DeleteEpisodeRequest.class,
      responseType = dev.statekeeper.v1.DeleteEpisodeResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEpisodeRequest,
      dev.statekeeper.v1.DeleteEpisodeResponse> getDeleteEpisodeMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeleteEpisodeRequest, dev.statekeeper.v1.DeleteEpisodeResponse> getDeleteEpisodeMethod;
    if ((getDeleteEpisodeMethod = MemoryServiceGrpc.getDeleteEpisodeMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeleteEpisodeMethod = MemoryServiceGrpc.getDeleteEpisodeMethod) == null) {
          MemoryServiceGrpc.getDeleteEpisodeMethod = getDeleteEpisodeMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeleteEpisodeRequest, dev.statekeeper.v1.DeleteEpisodeResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeleteEpisode"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteEpisodeRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeleteEpisodeResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeleteEpisode"))
              .build();
        }
      }
    }
    return getDeleteEpisodeMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RecallRequest,
      dev.statekeeper.v1.RecallResponse> getRecallMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Recall",
      requestType = dev.statekeeper.v1.RecallRequest.class,
      responseType = dev.statekeeper.v1.RecallResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RecallRequest,
      dev.statekeeper.v1.RecallResponse> getRecallMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RecallRequest, dev.statekeeper.v1.RecallResponse> getRecallMethod;
    if ((getRecallMethod = MemoryServiceGrpc.getRecallMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRecallMethod = MemoryServiceGrpc.getRecallMethod) == null) {
          MemoryServiceGrpc.getRecallMethod = getRecallMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RecallRequest, dev.statekeeper.v1.RecallResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Recall"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RecallRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RecallResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("Recall"))
              .build();
        }
      }
    }
    return getRecallMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.AddFactsRequest,
      dev.statekeeper.v1.AddFactsResponse> getAddFactsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "AddFacts",
      requestType = dev.statekeeper.v1.AddFactsRequest.class,
      responseType = dev.statekeeper.v1.AddFactsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.AddFactsRequest,
      dev.statekeeper.v1.AddFactsResponse> getAddFactsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.AddFactsRequest, dev.statekeeper.v1.AddFactsResponse> getAddFactsMethod;
    if ((getAddFactsMethod = MemoryServiceGrpc.getAddFactsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getAddFactsMethod = MemoryServiceGrpc.getAddFactsMethod) == null) {
          MemoryServiceGrpc.getAddFactsMethod = getAddFactsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.AddFactsRequest, dev.statekeeper.v1.AddFactsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "AddFacts"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AddFactsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.AddFactsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("AddFacts"))
              .build();
        }
      }
    }
    return getAddFactsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtractFactsRequest,
      dev.statekeeper.v1.ExtractFactsResponse> getExtractFactsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ExtractFacts",
      requestType = dev.statekeeper.v1.ExtractFactsRequest.class,
      responseType = dev.statekeeper.v1.ExtractFactsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtractFactsRequest,
      dev.statekeeper.v1.ExtractFactsResponse> getExtractFactsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ExtractFactsRequest, dev.statekeeper.v1.ExtractFactsResponse> getExtractFactsMethod;
    if ((getExtractFactsMethod = MemoryServiceGrpc.getExtractFactsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getExtractFactsMethod = MemoryServiceGrpc.getExtractFactsMethod) == null) {
          MemoryServiceGrpc.getExtractFactsMethod = getExtractFactsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ExtractFactsRequest, dev.statekeeper.v1.ExtractFactsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ExtractFacts"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ExtractFactsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ExtractFactsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ExtractFacts"))
              .build();
        }
      }
    }
    return getExtractFactsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetFactRequest,
      dev.statekeeper.v1.GetFactResponse> getGetFactMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetFact",
      requestType = dev.statekeeper.v1.GetFactRequest.class,
      responseType = dev.statekeeper.v1.GetFactResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetFactRequest,
      dev.statekeeper.v1.GetFactResponse> getGetFactMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetFactRequest, dev.statekeeper.v1.GetFactResponse> getGetFactMethod;
    if ((getGetFactMethod = MemoryServiceGrpc.getGetFactMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetFactMethod = MemoryServiceGrpc.getGetFactMethod) == null) {
          MemoryServiceGrpc.getGetFactMethod = getGetFactMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetFactRequest, dev.statekeeper.v1.GetFactResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetFact"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetFactRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetFactResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetFact"))
              .build();
        }
      }
    }
    return getGetFactMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListFactsRequest,
      dev.statekeeper.v1.ListFactsResponse> getListFactsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListFacts",
      requestType = dev.statekeeper.v1.ListFactsRequest.class,
      responseType = dev.statekeeper.v1.ListFactsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListFactsRequest,
      dev.statekeeper.v1.ListFactsResponse> getListFactsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListFactsRequest, dev.statekeeper.v1.ListFactsResponse> getListFactsMethod;
    if ((getListFactsMethod = MemoryServiceGrpc.getListFactsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListFactsMethod = MemoryServiceGrpc.getListFactsMethod) == null) {
          MemoryServiceGrpc.getListFactsMethod = getListFactsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListFactsRequest, dev.statekeeper.v1.ListFactsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListFacts"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListFactsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListFactsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListFacts"))
              .build();
        }
      }
    }
    return getListFactsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.QueryEntityRequest,
      dev.statekeeper.v1.QueryEntityResponse> getQueryEntityMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "QueryEntity",
      requestType = dev.statekeeper.v1.QueryEntityRequest.class,
      responseType = dev.statekeeper.v1.QueryEntityResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.QueryEntityRequest,
      dev.statekeeper.v1.QueryEntityResponse> getQueryEntityMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.QueryEntityRequest, dev.statekeeper.v1.QueryEntityResponse> getQueryEntityMethod;
    if ((getQueryEntityMethod = MemoryServiceGrpc.getQueryEntityMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getQueryEntityMethod = MemoryServiceGrpc.getQueryEntityMethod) == null) {
          MemoryServiceGrpc.getQueryEntityMethod = getQueryEntityMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.QueryEntityRequest, dev.statekeeper.v1.QueryEntityResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "QueryEntity"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.QueryEntityRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.QueryEntityResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("QueryEntity"))
              .build();
        }
      }
    }
    return getQueryEntityMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.InvalidateFactRequest,
      dev.statekeeper.v1.InvalidateFactResponse> getInvalidateFactMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "InvalidateFact",
      requestType = dev.statekeeper.v1.InvalidateFactRequest.class,
      responseType = dev.statekeeper.v1.InvalidateFactResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.InvalidateFactRequest,
      dev.statekeeper.v1.InvalidateFactResponse> getInvalidateFactMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.InvalidateFactRequest, dev.statekeeper.v1.InvalidateFactResponse> getInvalidateFactMethod;
    if ((getInvalidateFactMethod = MemoryServiceGrpc.getInvalidateFactMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getInvalidateFactMethod = MemoryServiceGrpc.getInvalidateFactMethod) == null) {
          MemoryServiceGrpc.getInvalidateFactMethod = getInvalidateFactMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.InvalidateFactRequest, dev.statekeeper.v1.InvalidateFactResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "InvalidateFact"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.InvalidateFactRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.InvalidateFactResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("InvalidateFact"))
              .build();
        }
      }
    }
    return getInvalidateFactMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.DeclarePredicateRequest,
      dev.statekeeper.v1.DeclarePredicateResponse> getDeclarePredicateMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "DeclarePredicate",
      requestType = dev.statekeeper.v1.DeclarePredicateRequest.class,
      responseType = dev.statekeeper.v1.DeclarePredicateResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.DeclarePredicateRequest,
      dev.statekeeper.v1.DeclarePredicateResponse> getDeclarePredicateMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.DeclarePredicateRequest, dev.statekeeper.v1.DeclarePredicateResponse> getDeclarePredicateMethod;
    if ((getDeclarePredicateMethod = MemoryServiceGrpc.getDeclarePredicateMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getDeclarePredicateMethod = MemoryServiceGrpc.getDeclarePredicateMethod) == null) {
          MemoryServiceGrpc.getDeclarePredicateMethod = getDeclarePredicateMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.DeclarePredicateRequest, dev.statekeeper.v1.DeclarePredicateResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "DeclarePredicate"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeclarePredicateRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.DeclarePredicateResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("DeclarePredicate"))
              .build();
        }
      }
    }
    return getDeclarePredicateMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.ListPredicatesRequest,
      dev.statekeeper.v1.ListPredicatesResponse> getListPredicatesMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "ListPredicates",
      requestType = dev.statekeeper.v1.ListPredicatesRequest.class,
      responseType = dev.statekeeper.v1.ListPredicatesResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.ListPredicatesRequest,
      dev.statekeeper.v1.ListPredicatesResponse> getListPredicatesMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.ListPredicatesRequest, dev.statekeeper.v1.ListPredicatesResponse> getListPredicatesMethod;
    if ((getListPredicatesMethod = MemoryServiceGrpc.getListPredicatesMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getListPredicatesMethod = MemoryServiceGrpc.getListPredicatesMethod) == null) {
          MemoryServiceGrpc.getListPredicatesMethod = getListPredicatesMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.ListPredicatesRequest, dev.statekeeper.v1.ListPredicatesResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "ListPredicates"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListPredicatesRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.ListPredicatesResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("ListPredicates"))
              .build();
        }
      }
    }
    return getListPredicatesMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.BuildContextRequest,
      dev.statekeeper.v1.BuildContextResponse> getBuildContextMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "BuildContext",
      requestType = dev.statekeeper.v1.BuildContextRequest.class,
      responseType = dev.statekeeper.v1.BuildContextResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.BuildContextRequest,
      dev.statekeeper.v1.BuildContextResponse> getBuildContextMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.BuildContextRequest, dev.statekeeper.v1.BuildContextResponse> getBuildContextMethod;
    if ((getBuildContextMethod = MemoryServiceGrpc.getBuildContextMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getBuildContextMethod = MemoryServiceGrpc.getBuildContextMethod) == null) {
          MemoryServiceGrpc.getBuildContextMethod = getBuildContextMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.BuildContextRequest, dev.statekeeper.v1.BuildContextResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "BuildContext"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.BuildContextRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.BuildContextResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("BuildContext"))
              .build();
        }
      }
    }
    return getBuildContextMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RunForgettingRequest,
      dev.statekeeper.v1.RunForgettingResponse> getRunForgettingMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunForgetting",
      requestType = dev.statekeeper.v1.RunForgettingRequest.class,
      responseType = dev.statekeeper.v1.RunForgettingResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RunForgettingRequest,
      dev.statekeeper.v1.RunForgettingResponse> getRunForgettingMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RunForgettingRequest, dev.statekeeper.v1.RunForgettingResponse> getRunForgettingMethod;
    if ((getRunForgettingMethod = MemoryServiceGrpc.getRunForgettingMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRunForgettingMethod = MemoryServiceGrpc.getRunForgettingMethod) == null) {
          MemoryServiceGrpc.getRunForgettingMethod = getRunForgettingMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RunForgettingRequest, dev.statekeeper.v1.RunForgettingResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunForgetting"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RunForgettingRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RunForgettingResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("RunForgetting"))
              .build();
        }
      }
    }
    return getRunForgettingMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RunConsolidationRequest,
      dev.statekeeper.v1.RunConsolidationResponse> getRunConsolidationMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RunConsolidation",
      requestType = dev.statekeeper.v1.RunConsolidationRequest.class,
      responseType = dev.statekeeper.v1.RunConsolidationResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RunConsolidationRequest,
      dev.statekeeper.v1.RunConsolidationResponse> getRunConsolidationMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RunConsolidationRequest, dev.statekeeper.v1.RunConsolidationResponse> getRunConsolidationMethod;
    if ((getRunConsolidationMethod = MemoryServiceGrpc.getRunConsolidationMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRunConsolidationMethod = MemoryServiceGrpc.getRunConsolidationMethod) == null) {
          MemoryServiceGrpc.getRunConsolidationMethod = getRunConsolidationMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RunConsolidationRequest, dev.statekeeper.v1.RunConsolidationResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RunConsolidation"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RunConsolidationRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RunConsolidationResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("RunConsolidation"))
              .build();
        }
      }
    }
    return getRunConsolidationMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.GetIndexStatsRequest,
      dev.statekeeper.v1.GetIndexStatsResponse> getGetIndexStatsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "GetIndexStats",
      requestType = dev.statekeeper.v1.GetIndexStatsRequest.class,
      responseType = dev.statekeeper.v1.GetIndexStatsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.GetIndexStatsRequest,
      dev.statekeeper.v1.GetIndexStatsResponse> getGetIndexStatsMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.GetIndexStatsRequest, dev.statekeeper.v1.GetIndexStatsResponse> getGetIndexStatsMethod;
    if ((getGetIndexStatsMethod = MemoryServiceGrpc.getGetIndexStatsMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getGetIndexStatsMethod = MemoryServiceGrpc.getGetIndexStatsMethod) == null) {
          MemoryServiceGrpc.getGetIndexStatsMethod = getGetIndexStatsMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.GetIndexStatsRequest, dev.statekeeper.v1.GetIndexStatsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "GetIndexStats"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetIndexStatsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.GetIndexStatsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("GetIndexStats"))
              .build();
        }
      }
    }
    return getGetIndexStatsMethod;
  }

  private static volatile io.grpc.MethodDescriptor<dev.statekeeper.v1.RebuildIndexRequest,
      dev.statekeeper.v1.RebuildIndexResponse> getRebuildIndexMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "RebuildIndex",
      requestType = dev.statekeeper.v1.RebuildIndexRequest.class,
      responseType = dev.statekeeper.v1.RebuildIndexResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<dev.statekeeper.v1.RebuildIndexRequest,
      dev.statekeeper.v1.RebuildIndexResponse> getRebuildIndexMethod() {
    io.grpc.MethodDescriptor<dev.statekeeper.v1.RebuildIndexRequest, dev.statekeeper.v1.RebuildIndexResponse> getRebuildIndexMethod;
    if ((getRebuildIndexMethod = MemoryServiceGrpc.getRebuildIndexMethod) == null) {
      synchronized (MemoryServiceGrpc.class) {
        if ((getRebuildIndexMethod = MemoryServiceGrpc.getRebuildIndexMethod) == null) {
          MemoryServiceGrpc.getRebuildIndexMethod = getRebuildIndexMethod =
              io.grpc.MethodDescriptor.<dev.statekeeper.v1.RebuildIndexRequest, dev.statekeeper.v1.RebuildIndexResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "RebuildIndex"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RebuildIndexRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  dev.statekeeper.v1.RebuildIndexResponse.getDefaultInstance()))
              .setSchemaDescriptor(new MemoryServiceMethodDescriptorSupplier("RebuildIndex"))
              .build();
        }
      }
    }
    return getRebuildIndexMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static MemoryServiceStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceStub>() {
        @java.lang.Override
        public MemoryServiceStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceStub(channel, callOptions);
        }
      };
    return MemoryServiceStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static MemoryServiceBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingV2Stub>() {
        @java.lang.Override
        public MemoryServiceBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingV2Stub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static MemoryServiceBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceBlockingStub>() {
        @java.lang.Override
        public MemoryServiceBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceBlockingStub(channel, callOptions);
        }
      };
    return MemoryServiceBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static MemoryServiceFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<MemoryServiceFutureStub>() {
        @java.lang.Override
        public MemoryServiceFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new MemoryServiceFutureStub(channel, callOptions);
        }
      };
    return MemoryServiceFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public interface AsyncService {

    /**
     * <pre>
     * Records one interaction as an episode.
     * Deduplication runs before anything is stored, within the episode's
     * user: first an exact match on the normalised (user_message,
     * assistant_response) hash, then, when the new episode has an embedding, a
     * near-duplicate search whose cosine similarity threshold is server
     * configuration (overridable with `near_duplicate_threshold`). A duplicate
     * stores nothing and leaves the existing episode unchanged; the response
     * then carries the existing episode with `duplicate` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, both
     * `user_message` and `assistant_response` are empty, `importance` or
     * `near_duplicate_threshold` is outside [0, 1], or `embedding` holds a
     * non-finite value; INVALID_ARGUMENT (DIMENSION_MISMATCH) if `embedding`
     * does not have the dimension of the user's index; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if a text, the metadata or the embedding is over its
     * configured limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if an embedding is needed and the
     * configured embedder cannot be reached (the LLM summarizer never fails the
     * call: it falls back to the offline summary).
     * </pre>
     */
    default void recordEpisode(dev.statekeeper.v1.RecordEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecordEpisodeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRecordEpisodeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns one episode.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no episode with that id exists in the caller's
     * tenant (including one removed by DeleteEpisode or RunForgetting).
     * </pre>
     */
    default void getEpisode(dev.statekeeper.v1.GetEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEpisodeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetEpisodeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists episodes, newest `occur_time` first, ties broken by id.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters, or
     * `filter.start_time` is after `filter.end_time`.
     * </pre>
     */
    default void listEpisodes(dev.statekeeper.v1.ListEpisodesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEpisodesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListEpisodesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Deletes one episode from the durable store and (as a tombstone until the
     * next rebuild) from the user's vector index. Facts consolidated from it
     * stay.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such episode exists.
     * </pre>
     */
    default void deleteEpisode(dev.statekeeper.v1.DeleteEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEpisodeResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteEpisodeMethod(), responseObserver);
    }

    /**
     * <pre>
     * Recalls the episodes of one user most relevant to a query.
     * Each candidate gets three partial scores in [0, 1]: similarity (cosine
     * similarity of normalised vectors clamped at 0, or a normalised lexical
     * score in LEXICAL ranking), recency (0.5 ^ (age / recency_half_life), age
     * measured from `occur_time` to now) and importance (the episode's
     * importance). The combined score is their weighted mean with the
     * configured or overridden weights. Results are ordered by combined score,
     * descending, ties broken by newer `occur_time`, and cut at `top_k` after
     * dropping those under `min_score`.
     * Ranking is VECTOR when `query_vector` is given or when `query_text` is
     * given and an embedder is configured; it is LEXICAL when `query_text` is
     * given and no embedder is configured. In VECTOR ranking, episodes stored
     * without an embedding are not candidates.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, no query
     * is set, `top_k` or `min_score` is negative, a weight is negative, all
     * weights are zero, or `recency_half_life` is not positive;
     * INVALID_ARGUMENT (DIMENSION_MISMATCH) if `query_vector` does not have the
     * dimension of the user's index; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the
     * query is over its size limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if the configured embedder cannot be
     * reached.
     * </pre>
     */
    default void recall(dev.statekeeper.v1.RecallRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecallResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRecallMethod(), responseObserver);
    }

    /**
     * <pre>
     * Adds knowledge triples, in order, as one atomic batch: either every fact
     * is applied or none is.
     * For each input, in order:
     * 1. Deduplication: if a currently valid fact with the same scope, subject,
     *    predicate and object exists, nothing new is stored; the existing fact
     *    keeps its id, its confidence becomes the larger of the two, and the
     *    outcome is DEDUPLICATED.
     * 2. Otherwise the fact is stored (outcome CREATED), and if its predicate is
     *    declared single-valued (see DeclarePredicate), every currently valid
     *    fact with the same scope, subject and predicate but a different object
     *    is invalidated: its `invalidate_time` is set, its `invalidated_by` names
     *    the new fact, and its `valid_to` is lowered to the new fact's
     *    `valid_from` if it was later or unset. Invalidated facts stay readable.
     * A later input of the same batch sees the effects of earlier ones.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `facts` is empty or an input
     * has an empty subject, predicate or object, a confidence outside [0, 1],
     * or `valid_to` not after `valid_from` (metadata["field"] names the input,
     * e.g. "facts[2].object"); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the batch
     * or a text is over its configured limit.
     * </pre>
     */
    default void addFacts(dev.statekeeper.v1.AddFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AddFactsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getAddFactsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Extracts knowledge triples from text (or from a stored episode) with the
     * configured LLM endpoint, or with the deterministic offline extractor when
     * none is configured or it cannot be reached, and stores them exactly as
     * AddFacts would unless `dry_run` is set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if no input is set or the text
     * is empty; NOT_FOUND (NOT_FOUND) if `episode_id` names no episode;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the text is over its size limit.
     * </pre>
     */
    default void extractFacts(dev.statekeeper.v1.ExtractFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtractFactsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExtractFactsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns one fact, valid or invalidated.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such fact exists.
     * </pre>
     */
    default void getFact(dev.statekeeper.v1.GetFactRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetFactResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetFactMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists facts matching exact subject, predicate and object filters, newest
     * `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    default void listFacts(dev.statekeeper.v1.ListFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListFactsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListFactsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the neighbourhood of an entity in the knowledge graph: every fact
     * reachable from the entity by following facts in either direction
     * (subject to object or object to subject) up to `depth` hops, and the
     * entities those facts connect. Entities are the subject and object strings
     * of facts, compared after trimming and case folding.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `entity` is empty or `depth`
     * is outside [0, 3]. An entity with no facts is not an error: the response
     * holds just that entity and no facts.
     * </pre>
     */
    default void queryEntity(dev.statekeeper.v1.QueryEntityRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.QueryEntityResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getQueryEntityMethod(), responseObserver);
    }

    /**
     * <pre>
     * Marks a fact as no longer valid without deleting it. Idempotent: a fact
     * that is already invalidated is returned unchanged with
     * `already_invalidated` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty or
     * `valid_to` is before the fact's `valid_from`; NOT_FOUND (NOT_FOUND) if no
     * such fact exists.
     * </pre>
     */
    default void invalidateFact(dev.statekeeper.v1.InvalidateFactRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.InvalidateFactResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getInvalidateFactMethod(), responseObserver);
    }

    /**
     * <pre>
     * Declares (creates or replaces) a predicate of the tenant, in particular
     * whether it is single-valued. Predicates that were never declared are
     * multi-valued. Declaring a predicate single-valued does not invalidate
     * facts that already contradict each other; it applies to facts added
     * afterwards.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `name` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `name` or `description` is over
     * its length limit.
     * </pre>
     */
    default void declarePredicate(dev.statekeeper.v1.DeclarePredicateRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeclarePredicateResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeclarePredicateMethod(), responseObserver);
    }

    /**
     * <pre>
     * Lists the declared predicates of the tenant, ordered by name.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed.
     * </pre>
     */
    default void listPredicates(dev.statekeeper.v1.ListPredicatesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListPredicatesResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getListPredicatesMethod(), responseObserver);
    }

    /**
     * <pre>
     * Builds one context for a model call from all three memory layers, within
     * a token budget.
     * The budget available to memory is `token_budget - reserved_output_tokens`
     * minus the tokens of the markdown scaffolding (headings). It is filled in
     * this order, and an entry that does not fit is left out whole, never cut:
     * 1. The working window of `session_id`: its newest messages, newest first,
     *    up to `max_working_tokens`, keeping tool-call pairs intact (the same
     *    selection as SessionService.GetContextWindow).
     * 2. Facts relevant to `message` (facts whose subject or object is an
     *    entity named in `message`, and their depth-1 neighbours), valid now,
     *    by confidence then recency, up to `max_facts`.
     * 3. Episodes recalled for `message` (as Recall with `message` as
     *    `query_text`), by combined score, up to `max_episodes`.
     * Token counts use the configured tokenizer (tiktoken).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, a count
     * or budget is negative, or `reserved_output_tokens` is not below
     * `token_budget`; NOT_FOUND (NOT_FOUND) if `session_id` names no session;
     * NOT_FOUND (SESSION_EXPIRED) if that session has expired;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `message` is over its size limit.
     * </pre>
     */
    default void buildContext(dev.statekeeper.v1.BuildContextRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.BuildContextResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getBuildContextMethod(), responseObserver);
    }

    /**
     * <pre>
     * Runs forgetting now (it also runs on a server schedule): each episode's
     * importance decays with age as importance * exp(-decay_rate * age_days),
     * age measured from `occur_time`, and episodes whose decayed importance is
     * under the threshold are deleted, as by DeleteEpisode. Facts are never
     * forgotten. With `dry_run`, nothing changes and the report says what would
     * have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `decay_rate` is negative or
     * `threshold` is outside [0, 1]; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "RUN_IN_PROGRESS" if a forgetting run over
     * an overlapping scope is in progress.
     * </pre>
     */
    default void runForgetting(dev.statekeeper.v1.RunForgettingRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunForgettingResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRunForgettingMethod(), responseObserver);
    }

    /**
     * <pre>
     * Runs consolidation now (it also runs on a server schedule): clusters of
     * at least `min_cluster_size` similar episodes of one user that were not
     * consolidated before become semantic facts (extracted by the LLM endpoint
     * or the offline fallback, then stored as by AddFacts, scoped to that
     * user), and the importance of their episodes is multiplied by the
     * demotion factor. With `dry_run`, nothing changes and the report says what
     * would have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `similarity_threshold` or
     * `demotion_factor` is outside [0, 1] or `min_cluster_size` is below 2;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a consolidation run over an overlapping scope is in
     * progress.
     * </pre>
     */
    default void runConsolidation(dev.statekeeper.v1.RunConsolidationRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunConsolidationResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRunConsolidationMethod(), responseObserver);
    }

    /**
     * <pre>
     * Returns the state of one user's vector index. A user without episodes
     * has an index in state ABSENT; that is not an error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty.
     * </pre>
     */
    default void getIndexStats(dev.statekeeper.v1.GetIndexStatsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetIndexStatsResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetIndexStatsMethod(), responseObserver);
    }

    /**
     * <pre>
     * Rebuilds one user's vector index from the durable store, dropping its
     * tombstones, and returns its state afterwards. Recall keeps working on the
     * old index until the new one is swapped in.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a rebuild of that index is already running.
     * </pre>
     */
    default void rebuildIndex(dev.statekeeper.v1.RebuildIndexRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RebuildIndexResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRebuildIndexMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service MemoryService.
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static abstract class MemoryServiceImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return MemoryServiceGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service MemoryService.
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MemoryServiceStub
      extends io.grpc.stub.AbstractAsyncStub<MemoryServiceStub> {
    private MemoryServiceStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceStub(channel, callOptions);
    }

    /**
     * <pre>
     * Records one interaction as an episode.
     * Deduplication runs before anything is stored, within the episode's
     * user: first an exact match on the normalised (user_message,
     * assistant_response) hash, then, when the new episode has an embedding, a
     * near-duplicate search whose cosine similarity threshold is server
     * configuration (overridable with `near_duplicate_threshold`). A duplicate
     * stores nothing and leaves the existing episode unchanged; the response
     * then carries the existing episode with `duplicate` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, both
     * `user_message` and `assistant_response` are empty, `importance` or
     * `near_duplicate_threshold` is outside [0, 1], or `embedding` holds a
     * non-finite value; INVALID_ARGUMENT (DIMENSION_MISMATCH) if `embedding`
     * does not have the dimension of the user's index; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if a text, the metadata or the embedding is over its
     * configured limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if an embedding is needed and the
     * configured embedder cannot be reached (the LLM summarizer never fails the
     * call: it falls back to the offline summary).
     * </pre>
     */
    public void recordEpisode(dev.statekeeper.v1.RecordEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecordEpisodeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRecordEpisodeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns one episode.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no episode with that id exists in the caller's
     * tenant (including one removed by DeleteEpisode or RunForgetting).
     * </pre>
     */
    public void getEpisode(dev.statekeeper.v1.GetEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEpisodeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetEpisodeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists episodes, newest `occur_time` first, ties broken by id.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters, or
     * `filter.start_time` is after `filter.end_time`.
     * </pre>
     */
    public void listEpisodes(dev.statekeeper.v1.ListEpisodesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEpisodesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListEpisodesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Deletes one episode from the durable store and (as a tombstone until the
     * next rebuild) from the user's vector index. Facts consolidated from it
     * stay.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such episode exists.
     * </pre>
     */
    public void deleteEpisode(dev.statekeeper.v1.DeleteEpisodeRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEpisodeResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteEpisodeMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Recalls the episodes of one user most relevant to a query.
     * Each candidate gets three partial scores in [0, 1]: similarity (cosine
     * similarity of normalised vectors clamped at 0, or a normalised lexical
     * score in LEXICAL ranking), recency (0.5 ^ (age / recency_half_life), age
     * measured from `occur_time` to now) and importance (the episode's
     * importance). The combined score is their weighted mean with the
     * configured or overridden weights. Results are ordered by combined score,
     * descending, ties broken by newer `occur_time`, and cut at `top_k` after
     * dropping those under `min_score`.
     * Ranking is VECTOR when `query_vector` is given or when `query_text` is
     * given and an embedder is configured; it is LEXICAL when `query_text` is
     * given and no embedder is configured. In VECTOR ranking, episodes stored
     * without an embedding are not candidates.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, no query
     * is set, `top_k` or `min_score` is negative, a weight is negative, all
     * weights are zero, or `recency_half_life` is not positive;
     * INVALID_ARGUMENT (DIMENSION_MISMATCH) if `query_vector` does not have the
     * dimension of the user's index; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the
     * query is over its size limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if the configured embedder cannot be
     * reached.
     * </pre>
     */
    public void recall(dev.statekeeper.v1.RecallRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecallResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRecallMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Adds knowledge triples, in order, as one atomic batch: either every fact
     * is applied or none is.
     * For each input, in order:
     * 1. Deduplication: if a currently valid fact with the same scope, subject,
     *    predicate and object exists, nothing new is stored; the existing fact
     *    keeps its id, its confidence becomes the larger of the two, and the
     *    outcome is DEDUPLICATED.
     * 2. Otherwise the fact is stored (outcome CREATED), and if its predicate is
     *    declared single-valued (see DeclarePredicate), every currently valid
     *    fact with the same scope, subject and predicate but a different object
     *    is invalidated: its `invalidate_time` is set, its `invalidated_by` names
     *    the new fact, and its `valid_to` is lowered to the new fact's
     *    `valid_from` if it was later or unset. Invalidated facts stay readable.
     * A later input of the same batch sees the effects of earlier ones.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `facts` is empty or an input
     * has an empty subject, predicate or object, a confidence outside [0, 1],
     * or `valid_to` not after `valid_from` (metadata["field"] names the input,
     * e.g. "facts[2].object"); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the batch
     * or a text is over its configured limit.
     * </pre>
     */
    public void addFacts(dev.statekeeper.v1.AddFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.AddFactsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getAddFactsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Extracts knowledge triples from text (or from a stored episode) with the
     * configured LLM endpoint, or with the deterministic offline extractor when
     * none is configured or it cannot be reached, and stores them exactly as
     * AddFacts would unless `dry_run` is set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if no input is set or the text
     * is empty; NOT_FOUND (NOT_FOUND) if `episode_id` names no episode;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the text is over its size limit.
     * </pre>
     */
    public void extractFacts(dev.statekeeper.v1.ExtractFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtractFactsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getExtractFactsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns one fact, valid or invalidated.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such fact exists.
     * </pre>
     */
    public void getFact(dev.statekeeper.v1.GetFactRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetFactResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetFactMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists facts matching exact subject, predicate and object filters, newest
     * `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public void listFacts(dev.statekeeper.v1.ListFactsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListFactsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListFactsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the neighbourhood of an entity in the knowledge graph: every fact
     * reachable from the entity by following facts in either direction
     * (subject to object or object to subject) up to `depth` hops, and the
     * entities those facts connect. Entities are the subject and object strings
     * of facts, compared after trimming and case folding.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `entity` is empty or `depth`
     * is outside [0, 3]. An entity with no facts is not an error: the response
     * holds just that entity and no facts.
     * </pre>
     */
    public void queryEntity(dev.statekeeper.v1.QueryEntityRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.QueryEntityResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getQueryEntityMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Marks a fact as no longer valid without deleting it. Idempotent: a fact
     * that is already invalidated is returned unchanged with
     * `already_invalidated` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty or
     * `valid_to` is before the fact's `valid_from`; NOT_FOUND (NOT_FOUND) if no
     * such fact exists.
     * </pre>
     */
    public void invalidateFact(dev.statekeeper.v1.InvalidateFactRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.InvalidateFactResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getInvalidateFactMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Declares (creates or replaces) a predicate of the tenant, in particular
     * whether it is single-valued. Predicates that were never declared are
     * multi-valued. Declaring a predicate single-valued does not invalidate
     * facts that already contradict each other; it applies to facts added
     * afterwards.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `name` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `name` or `description` is over
     * its length limit.
     * </pre>
     */
    public void declarePredicate(dev.statekeeper.v1.DeclarePredicateRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeclarePredicateResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeclarePredicateMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Lists the declared predicates of the tenant, ordered by name.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed.
     * </pre>
     */
    public void listPredicates(dev.statekeeper.v1.ListPredicatesRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListPredicatesResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getListPredicatesMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Builds one context for a model call from all three memory layers, within
     * a token budget.
     * The budget available to memory is `token_budget - reserved_output_tokens`
     * minus the tokens of the markdown scaffolding (headings). It is filled in
     * this order, and an entry that does not fit is left out whole, never cut:
     * 1. The working window of `session_id`: its newest messages, newest first,
     *    up to `max_working_tokens`, keeping tool-call pairs intact (the same
     *    selection as SessionService.GetContextWindow).
     * 2. Facts relevant to `message` (facts whose subject or object is an
     *    entity named in `message`, and their depth-1 neighbours), valid now,
     *    by confidence then recency, up to `max_facts`.
     * 3. Episodes recalled for `message` (as Recall with `message` as
     *    `query_text`), by combined score, up to `max_episodes`.
     * Token counts use the configured tokenizer (tiktoken).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, a count
     * or budget is negative, or `reserved_output_tokens` is not below
     * `token_budget`; NOT_FOUND (NOT_FOUND) if `session_id` names no session;
     * NOT_FOUND (SESSION_EXPIRED) if that session has expired;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `message` is over its size limit.
     * </pre>
     */
    public void buildContext(dev.statekeeper.v1.BuildContextRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.BuildContextResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getBuildContextMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Runs forgetting now (it also runs on a server schedule): each episode's
     * importance decays with age as importance * exp(-decay_rate * age_days),
     * age measured from `occur_time`, and episodes whose decayed importance is
     * under the threshold are deleted, as by DeleteEpisode. Facts are never
     * forgotten. With `dry_run`, nothing changes and the report says what would
     * have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `decay_rate` is negative or
     * `threshold` is outside [0, 1]; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "RUN_IN_PROGRESS" if a forgetting run over
     * an overlapping scope is in progress.
     * </pre>
     */
    public void runForgetting(dev.statekeeper.v1.RunForgettingRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunForgettingResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRunForgettingMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Runs consolidation now (it also runs on a server schedule): clusters of
     * at least `min_cluster_size` similar episodes of one user that were not
     * consolidated before become semantic facts (extracted by the LLM endpoint
     * or the offline fallback, then stored as by AddFacts, scoped to that
     * user), and the importance of their episodes is multiplied by the
     * demotion factor. With `dry_run`, nothing changes and the report says what
     * would have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `similarity_threshold` or
     * `demotion_factor` is outside [0, 1] or `min_cluster_size` is below 2;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a consolidation run over an overlapping scope is in
     * progress.
     * </pre>
     */
    public void runConsolidation(dev.statekeeper.v1.RunConsolidationRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunConsolidationResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRunConsolidationMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Returns the state of one user's vector index. A user without episodes
     * has an index in state ABSENT; that is not an error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty.
     * </pre>
     */
    public void getIndexStats(dev.statekeeper.v1.GetIndexStatsRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetIndexStatsResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetIndexStatsMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     * <pre>
     * Rebuilds one user's vector index from the durable store, dropping its
     * tombstones, and returns its state afterwards. Recall keeps working on the
     * old index until the new one is swapped in.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a rebuild of that index is already running.
     * </pre>
     */
    public void rebuildIndex(dev.statekeeper.v1.RebuildIndexRequest request,
        io.grpc.stub.StreamObserver<dev.statekeeper.v1.RebuildIndexResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRebuildIndexMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service MemoryService.
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MemoryServiceBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingV2Stub> {
    private MemoryServiceBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingV2Stub(channel, callOptions);
    }

    /**
     * <pre>
     * Records one interaction as an episode.
     * Deduplication runs before anything is stored, within the episode's
     * user: first an exact match on the normalised (user_message,
     * assistant_response) hash, then, when the new episode has an embedding, a
     * near-duplicate search whose cosine similarity threshold is server
     * configuration (overridable with `near_duplicate_threshold`). A duplicate
     * stores nothing and leaves the existing episode unchanged; the response
     * then carries the existing episode with `duplicate` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, both
     * `user_message` and `assistant_response` are empty, `importance` or
     * `near_duplicate_threshold` is outside [0, 1], or `embedding` holds a
     * non-finite value; INVALID_ARGUMENT (DIMENSION_MISMATCH) if `embedding`
     * does not have the dimension of the user's index; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if a text, the metadata or the embedding is over its
     * configured limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if an embedding is needed and the
     * configured embedder cannot be reached (the LLM summarizer never fails the
     * call: it falls back to the offline summary).
     * </pre>
     */
    public dev.statekeeper.v1.RecordEpisodeResponse recordEpisode(dev.statekeeper.v1.RecordEpisodeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRecordEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one episode.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no episode with that id exists in the caller's
     * tenant (including one removed by DeleteEpisode or RunForgetting).
     * </pre>
     */
    public dev.statekeeper.v1.GetEpisodeResponse getEpisode(dev.statekeeper.v1.GetEpisodeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists episodes, newest `occur_time` first, ties broken by id.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters, or
     * `filter.start_time` is after `filter.end_time`.
     * </pre>
     */
    public dev.statekeeper.v1.ListEpisodesResponse listEpisodes(dev.statekeeper.v1.ListEpisodesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListEpisodesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one episode from the durable store and (as a tombstone until the
     * next rebuild) from the user's vector index. Facts consolidated from it
     * stay.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such episode exists.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteEpisodeResponse deleteEpisode(dev.statekeeper.v1.DeleteEpisodeRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Recalls the episodes of one user most relevant to a query.
     * Each candidate gets three partial scores in [0, 1]: similarity (cosine
     * similarity of normalised vectors clamped at 0, or a normalised lexical
     * score in LEXICAL ranking), recency (0.5 ^ (age / recency_half_life), age
     * measured from `occur_time` to now) and importance (the episode's
     * importance). The combined score is their weighted mean with the
     * configured or overridden weights. Results are ordered by combined score,
     * descending, ties broken by newer `occur_time`, and cut at `top_k` after
     * dropping those under `min_score`.
     * Ranking is VECTOR when `query_vector` is given or when `query_text` is
     * given and an embedder is configured; it is LEXICAL when `query_text` is
     * given and no embedder is configured. In VECTOR ranking, episodes stored
     * without an embedding are not candidates.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, no query
     * is set, `top_k` or `min_score` is negative, a weight is negative, all
     * weights are zero, or `recency_half_life` is not positive;
     * INVALID_ARGUMENT (DIMENSION_MISMATCH) if `query_vector` does not have the
     * dimension of the user's index; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the
     * query is over its size limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if the configured embedder cannot be
     * reached.
     * </pre>
     */
    public dev.statekeeper.v1.RecallResponse recall(dev.statekeeper.v1.RecallRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRecallMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Adds knowledge triples, in order, as one atomic batch: either every fact
     * is applied or none is.
     * For each input, in order:
     * 1. Deduplication: if a currently valid fact with the same scope, subject,
     *    predicate and object exists, nothing new is stored; the existing fact
     *    keeps its id, its confidence becomes the larger of the two, and the
     *    outcome is DEDUPLICATED.
     * 2. Otherwise the fact is stored (outcome CREATED), and if its predicate is
     *    declared single-valued (see DeclarePredicate), every currently valid
     *    fact with the same scope, subject and predicate but a different object
     *    is invalidated: its `invalidate_time` is set, its `invalidated_by` names
     *    the new fact, and its `valid_to` is lowered to the new fact's
     *    `valid_from` if it was later or unset. Invalidated facts stay readable.
     * A later input of the same batch sees the effects of earlier ones.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `facts` is empty or an input
     * has an empty subject, predicate or object, a confidence outside [0, 1],
     * or `valid_to` not after `valid_from` (metadata["field"] names the input,
     * e.g. "facts[2].object"); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the batch
     * or a text is over its configured limit.
     * </pre>
     */
    public dev.statekeeper.v1.AddFactsResponse addFacts(dev.statekeeper.v1.AddFactsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getAddFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extracts knowledge triples from text (or from a stored episode) with the
     * configured LLM endpoint, or with the deterministic offline extractor when
     * none is configured or it cannot be reached, and stores them exactly as
     * AddFacts would unless `dry_run` is set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if no input is set or the text
     * is empty; NOT_FOUND (NOT_FOUND) if `episode_id` names no episode;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the text is over its size limit.
     * </pre>
     */
    public dev.statekeeper.v1.ExtractFactsResponse extractFacts(dev.statekeeper.v1.ExtractFactsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getExtractFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one fact, valid or invalidated.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such fact exists.
     * </pre>
     */
    public dev.statekeeper.v1.GetFactResponse getFact(dev.statekeeper.v1.GetFactRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetFactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists facts matching exact subject, predicate and object filters, newest
     * `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListFactsResponse listFacts(dev.statekeeper.v1.ListFactsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the neighbourhood of an entity in the knowledge graph: every fact
     * reachable from the entity by following facts in either direction
     * (subject to object or object to subject) up to `depth` hops, and the
     * entities those facts connect. Entities are the subject and object strings
     * of facts, compared after trimming and case folding.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `entity` is empty or `depth`
     * is outside [0, 3]. An entity with no facts is not an error: the response
     * holds just that entity and no facts.
     * </pre>
     */
    public dev.statekeeper.v1.QueryEntityResponse queryEntity(dev.statekeeper.v1.QueryEntityRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getQueryEntityMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a fact as no longer valid without deleting it. Idempotent: a fact
     * that is already invalidated is returned unchanged with
     * `already_invalidated` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty or
     * `valid_to` is before the fact's `valid_from`; NOT_FOUND (NOT_FOUND) if no
     * such fact exists.
     * </pre>
     */
    public dev.statekeeper.v1.InvalidateFactResponse invalidateFact(dev.statekeeper.v1.InvalidateFactRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getInvalidateFactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Declares (creates or replaces) a predicate of the tenant, in particular
     * whether it is single-valued. Predicates that were never declared are
     * multi-valued. Declaring a predicate single-valued does not invalidate
     * facts that already contradict each other; it applies to facts added
     * afterwards.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `name` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `name` or `description` is over
     * its length limit.
     * </pre>
     */
    public dev.statekeeper.v1.DeclarePredicateResponse declarePredicate(dev.statekeeper.v1.DeclarePredicateRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeclarePredicateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the declared predicates of the tenant, ordered by name.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed.
     * </pre>
     */
    public dev.statekeeper.v1.ListPredicatesResponse listPredicates(dev.statekeeper.v1.ListPredicatesRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getListPredicatesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Builds one context for a model call from all three memory layers, within
     * a token budget.
     * The budget available to memory is `token_budget - reserved_output_tokens`
     * minus the tokens of the markdown scaffolding (headings). It is filled in
     * this order, and an entry that does not fit is left out whole, never cut:
     * 1. The working window of `session_id`: its newest messages, newest first,
     *    up to `max_working_tokens`, keeping tool-call pairs intact (the same
     *    selection as SessionService.GetContextWindow).
     * 2. Facts relevant to `message` (facts whose subject or object is an
     *    entity named in `message`, and their depth-1 neighbours), valid now,
     *    by confidence then recency, up to `max_facts`.
     * 3. Episodes recalled for `message` (as Recall with `message` as
     *    `query_text`), by combined score, up to `max_episodes`.
     * Token counts use the configured tokenizer (tiktoken).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, a count
     * or budget is negative, or `reserved_output_tokens` is not below
     * `token_budget`; NOT_FOUND (NOT_FOUND) if `session_id` names no session;
     * NOT_FOUND (SESSION_EXPIRED) if that session has expired;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `message` is over its size limit.
     * </pre>
     */
    public dev.statekeeper.v1.BuildContextResponse buildContext(dev.statekeeper.v1.BuildContextRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getBuildContextMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs forgetting now (it also runs on a server schedule): each episode's
     * importance decays with age as importance * exp(-decay_rate * age_days),
     * age measured from `occur_time`, and episodes whose decayed importance is
     * under the threshold are deleted, as by DeleteEpisode. Facts are never
     * forgotten. With `dry_run`, nothing changes and the report says what would
     * have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `decay_rate` is negative or
     * `threshold` is outside [0, 1]; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "RUN_IN_PROGRESS" if a forgetting run over
     * an overlapping scope is in progress.
     * </pre>
     */
    public dev.statekeeper.v1.RunForgettingResponse runForgetting(dev.statekeeper.v1.RunForgettingRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRunForgettingMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs consolidation now (it also runs on a server schedule): clusters of
     * at least `min_cluster_size` similar episodes of one user that were not
     * consolidated before become semantic facts (extracted by the LLM endpoint
     * or the offline fallback, then stored as by AddFacts, scoped to that
     * user), and the importance of their episodes is multiplied by the
     * demotion factor. With `dry_run`, nothing changes and the report says what
     * would have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `similarity_threshold` or
     * `demotion_factor` is outside [0, 1] or `min_cluster_size` is below 2;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a consolidation run over an overlapping scope is in
     * progress.
     * </pre>
     */
    public dev.statekeeper.v1.RunConsolidationResponse runConsolidation(dev.statekeeper.v1.RunConsolidationRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRunConsolidationMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the state of one user's vector index. A user without episodes
     * has an index in state ABSENT; that is not an error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.GetIndexStatsResponse getIndexStats(dev.statekeeper.v1.GetIndexStatsRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetIndexStatsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rebuilds one user's vector index from the durable store, dropping its
     * tombstones, and returns its state afterwards. Recall keeps working on the
     * old index until the new one is swapped in.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a rebuild of that index is already running.
     * </pre>
     */
    public dev.statekeeper.v1.RebuildIndexResponse rebuildIndex(dev.statekeeper.v1.RebuildIndexRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRebuildIndexMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service MemoryService.
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MemoryServiceBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<MemoryServiceBlockingStub> {
    private MemoryServiceBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceBlockingStub(channel, callOptions);
    }

    /**
     * <pre>
     * Records one interaction as an episode.
     * Deduplication runs before anything is stored, within the episode's
     * user: first an exact match on the normalised (user_message,
     * assistant_response) hash, then, when the new episode has an embedding, a
     * near-duplicate search whose cosine similarity threshold is server
     * configuration (overridable with `near_duplicate_threshold`). A duplicate
     * stores nothing and leaves the existing episode unchanged; the response
     * then carries the existing episode with `duplicate` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, both
     * `user_message` and `assistant_response` are empty, `importance` or
     * `near_duplicate_threshold` is outside [0, 1], or `embedding` holds a
     * non-finite value; INVALID_ARGUMENT (DIMENSION_MISMATCH) if `embedding`
     * does not have the dimension of the user's index; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if a text, the metadata or the embedding is over its
     * configured limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if an embedding is needed and the
     * configured embedder cannot be reached (the LLM summarizer never fails the
     * call: it falls back to the offline summary).
     * </pre>
     */
    public dev.statekeeper.v1.RecordEpisodeResponse recordEpisode(dev.statekeeper.v1.RecordEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRecordEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one episode.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no episode with that id exists in the caller's
     * tenant (including one removed by DeleteEpisode or RunForgetting).
     * </pre>
     */
    public dev.statekeeper.v1.GetEpisodeResponse getEpisode(dev.statekeeper.v1.GetEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists episodes, newest `occur_time` first, ties broken by id.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters, or
     * `filter.start_time` is after `filter.end_time`.
     * </pre>
     */
    public dev.statekeeper.v1.ListEpisodesResponse listEpisodes(dev.statekeeper.v1.ListEpisodesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListEpisodesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Deletes one episode from the durable store and (as a tombstone until the
     * next rebuild) from the user's vector index. Facts consolidated from it
     * stay.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such episode exists.
     * </pre>
     */
    public dev.statekeeper.v1.DeleteEpisodeResponse deleteEpisode(dev.statekeeper.v1.DeleteEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteEpisodeMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Recalls the episodes of one user most relevant to a query.
     * Each candidate gets three partial scores in [0, 1]: similarity (cosine
     * similarity of normalised vectors clamped at 0, or a normalised lexical
     * score in LEXICAL ranking), recency (0.5 ^ (age / recency_half_life), age
     * measured from `occur_time` to now) and importance (the episode's
     * importance). The combined score is their weighted mean with the
     * configured or overridden weights. Results are ordered by combined score,
     * descending, ties broken by newer `occur_time`, and cut at `top_k` after
     * dropping those under `min_score`.
     * Ranking is VECTOR when `query_vector` is given or when `query_text` is
     * given and an embedder is configured; it is LEXICAL when `query_text` is
     * given and no embedder is configured. In VECTOR ranking, episodes stored
     * without an embedding are not candidates.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, no query
     * is set, `top_k` or `min_score` is negative, a weight is negative, all
     * weights are zero, or `recency_half_life` is not positive;
     * INVALID_ARGUMENT (DIMENSION_MISMATCH) if `query_vector` does not have the
     * dimension of the user's index; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the
     * query is over its size limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if the configured embedder cannot be
     * reached.
     * </pre>
     */
    public dev.statekeeper.v1.RecallResponse recall(dev.statekeeper.v1.RecallRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRecallMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Adds knowledge triples, in order, as one atomic batch: either every fact
     * is applied or none is.
     * For each input, in order:
     * 1. Deduplication: if a currently valid fact with the same scope, subject,
     *    predicate and object exists, nothing new is stored; the existing fact
     *    keeps its id, its confidence becomes the larger of the two, and the
     *    outcome is DEDUPLICATED.
     * 2. Otherwise the fact is stored (outcome CREATED), and if its predicate is
     *    declared single-valued (see DeclarePredicate), every currently valid
     *    fact with the same scope, subject and predicate but a different object
     *    is invalidated: its `invalidate_time` is set, its `invalidated_by` names
     *    the new fact, and its `valid_to` is lowered to the new fact's
     *    `valid_from` if it was later or unset. Invalidated facts stay readable.
     * A later input of the same batch sees the effects of earlier ones.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `facts` is empty or an input
     * has an empty subject, predicate or object, a confidence outside [0, 1],
     * or `valid_to` not after `valid_from` (metadata["field"] names the input,
     * e.g. "facts[2].object"); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the batch
     * or a text is over its configured limit.
     * </pre>
     */
    public dev.statekeeper.v1.AddFactsResponse addFacts(dev.statekeeper.v1.AddFactsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getAddFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Extracts knowledge triples from text (or from a stored episode) with the
     * configured LLM endpoint, or with the deterministic offline extractor when
     * none is configured or it cannot be reached, and stores them exactly as
     * AddFacts would unless `dry_run` is set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if no input is set or the text
     * is empty; NOT_FOUND (NOT_FOUND) if `episode_id` names no episode;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the text is over its size limit.
     * </pre>
     */
    public dev.statekeeper.v1.ExtractFactsResponse extractFacts(dev.statekeeper.v1.ExtractFactsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getExtractFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns one fact, valid or invalidated.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such fact exists.
     * </pre>
     */
    public dev.statekeeper.v1.GetFactResponse getFact(dev.statekeeper.v1.GetFactRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetFactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists facts matching exact subject, predicate and object filters, newest
     * `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public dev.statekeeper.v1.ListFactsResponse listFacts(dev.statekeeper.v1.ListFactsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListFactsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the neighbourhood of an entity in the knowledge graph: every fact
     * reachable from the entity by following facts in either direction
     * (subject to object or object to subject) up to `depth` hops, and the
     * entities those facts connect. Entities are the subject and object strings
     * of facts, compared after trimming and case folding.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `entity` is empty or `depth`
     * is outside [0, 3]. An entity with no facts is not an error: the response
     * holds just that entity and no facts.
     * </pre>
     */
    public dev.statekeeper.v1.QueryEntityResponse queryEntity(dev.statekeeper.v1.QueryEntityRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getQueryEntityMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Marks a fact as no longer valid without deleting it. Idempotent: a fact
     * that is already invalidated is returned unchanged with
     * `already_invalidated` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty or
     * `valid_to` is before the fact's `valid_from`; NOT_FOUND (NOT_FOUND) if no
     * such fact exists.
     * </pre>
     */
    public dev.statekeeper.v1.InvalidateFactResponse invalidateFact(dev.statekeeper.v1.InvalidateFactRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getInvalidateFactMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Declares (creates or replaces) a predicate of the tenant, in particular
     * whether it is single-valued. Predicates that were never declared are
     * multi-valued. Declaring a predicate single-valued does not invalidate
     * facts that already contradict each other; it applies to facts added
     * afterwards.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `name` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `name` or `description` is over
     * its length limit.
     * </pre>
     */
    public dev.statekeeper.v1.DeclarePredicateResponse declarePredicate(dev.statekeeper.v1.DeclarePredicateRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeclarePredicateMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Lists the declared predicates of the tenant, ordered by name.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed.
     * </pre>
     */
    public dev.statekeeper.v1.ListPredicatesResponse listPredicates(dev.statekeeper.v1.ListPredicatesRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getListPredicatesMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Builds one context for a model call from all three memory layers, within
     * a token budget.
     * The budget available to memory is `token_budget - reserved_output_tokens`
     * minus the tokens of the markdown scaffolding (headings). It is filled in
     * this order, and an entry that does not fit is left out whole, never cut:
     * 1. The working window of `session_id`: its newest messages, newest first,
     *    up to `max_working_tokens`, keeping tool-call pairs intact (the same
     *    selection as SessionService.GetContextWindow).
     * 2. Facts relevant to `message` (facts whose subject or object is an
     *    entity named in `message`, and their depth-1 neighbours), valid now,
     *    by confidence then recency, up to `max_facts`.
     * 3. Episodes recalled for `message` (as Recall with `message` as
     *    `query_text`), by combined score, up to `max_episodes`.
     * Token counts use the configured tokenizer (tiktoken).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, a count
     * or budget is negative, or `reserved_output_tokens` is not below
     * `token_budget`; NOT_FOUND (NOT_FOUND) if `session_id` names no session;
     * NOT_FOUND (SESSION_EXPIRED) if that session has expired;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `message` is over its size limit.
     * </pre>
     */
    public dev.statekeeper.v1.BuildContextResponse buildContext(dev.statekeeper.v1.BuildContextRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getBuildContextMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs forgetting now (it also runs on a server schedule): each episode's
     * importance decays with age as importance * exp(-decay_rate * age_days),
     * age measured from `occur_time`, and episodes whose decayed importance is
     * under the threshold are deleted, as by DeleteEpisode. Facts are never
     * forgotten. With `dry_run`, nothing changes and the report says what would
     * have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `decay_rate` is negative or
     * `threshold` is outside [0, 1]; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "RUN_IN_PROGRESS" if a forgetting run over
     * an overlapping scope is in progress.
     * </pre>
     */
    public dev.statekeeper.v1.RunForgettingResponse runForgetting(dev.statekeeper.v1.RunForgettingRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRunForgettingMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Runs consolidation now (it also runs on a server schedule): clusters of
     * at least `min_cluster_size` similar episodes of one user that were not
     * consolidated before become semantic facts (extracted by the LLM endpoint
     * or the offline fallback, then stored as by AddFacts, scoped to that
     * user), and the importance of their episodes is multiplied by the
     * demotion factor. With `dry_run`, nothing changes and the report says what
     * would have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `similarity_threshold` or
     * `demotion_factor` is outside [0, 1] or `min_cluster_size` is below 2;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a consolidation run over an overlapping scope is in
     * progress.
     * </pre>
     */
    public dev.statekeeper.v1.RunConsolidationResponse runConsolidation(dev.statekeeper.v1.RunConsolidationRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRunConsolidationMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Returns the state of one user's vector index. A user without episodes
     * has an index in state ABSENT; that is not an error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty.
     * </pre>
     */
    public dev.statekeeper.v1.GetIndexStatsResponse getIndexStats(dev.statekeeper.v1.GetIndexStatsRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetIndexStatsMethod(), getCallOptions(), request);
    }

    /**
     * <pre>
     * Rebuilds one user's vector index from the durable store, dropping its
     * tombstones, and returns its state afterwards. Recall keeps working on the
     * old index until the new one is swapped in.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a rebuild of that index is already running.
     * </pre>
     */
    public dev.statekeeper.v1.RebuildIndexResponse rebuildIndex(dev.statekeeper.v1.RebuildIndexRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRebuildIndexMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service MemoryService.
   * <pre>
   * MemoryService keeps the long-term memory of agents, in two layers on top of
   * the working memory that SessionService already holds:
   * * Episodic memory: one record per interaction (user message, assistant
   *   response, a one-line summary, an embedding, an importance in [0, 1] and
   *   string metadata), recalled by vector similarity combined with recency and
   *   importance. Each (tenant, user) has its own vector index, which is derived
   *   state: it is rebuilt from the durable store whenever needed.
   * * Semantic memory: knowledge triples (subject, predicate, object) with
   *   provenance, a confidence and a validity interval. A newer fact that
   *   contradicts an older one on a single-valued predicate invalidates the
   *   older fact; facts are never deleted by contradiction.
   * Scoping: every episode and fact belongs to the caller's tenant and to a
   * `user_id`. Facts may also use the empty `user_id`, which is the tenant-wide
   * knowledge graph; reads for a user see that user's facts plus the
   * tenant-wide ones, and contradiction only ever happens within one scope.
   * Models: summaries and fact extraction use the configured LLM endpoint and
   * fall back to a deterministic offline implementation when none is
   * configured; embeddings come from the client or the configured embedder.
   * When neither an embedder nor a client vector is available, recall falls
   * back to lexical ranking and says so in its response.
   * All RPCs may also fail with UNAUTHENTICATED (UNAUTHENTICATED) and
   * UNAVAILABLE (STORAGE_UNAVAILABLE), as described in common.proto.
   * </pre>
   */
  public static final class MemoryServiceFutureStub
      extends io.grpc.stub.AbstractFutureStub<MemoryServiceFutureStub> {
    private MemoryServiceFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected MemoryServiceFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new MemoryServiceFutureStub(channel, callOptions);
    }

    /**
     * <pre>
     * Records one interaction as an episode.
     * Deduplication runs before anything is stored, within the episode's
     * user: first an exact match on the normalised (user_message,
     * assistant_response) hash, then, when the new episode has an embedding, a
     * near-duplicate search whose cosine similarity threshold is server
     * configuration (overridable with `near_duplicate_threshold`). A duplicate
     * stores nothing and leaves the existing episode unchanged; the response
     * then carries the existing episode with `duplicate` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, both
     * `user_message` and `assistant_response` are empty, `importance` or
     * `near_duplicate_threshold` is outside [0, 1], or `embedding` holds a
     * non-finite value; INVALID_ARGUMENT (DIMENSION_MISMATCH) if `embedding`
     * does not have the dimension of the user's index; RESOURCE_EXHAUSTED
     * (LIMIT_EXCEEDED) if a text, the metadata or the embedding is over its
     * configured limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if an embedding is needed and the
     * configured embedder cannot be reached (the LLM summarizer never fails the
     * call: it falls back to the offline summary).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RecordEpisodeResponse> recordEpisode(
        dev.statekeeper.v1.RecordEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRecordEpisodeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns one episode.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no episode with that id exists in the caller's
     * tenant (including one removed by DeleteEpisode or RunForgetting).
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetEpisodeResponse> getEpisode(
        dev.statekeeper.v1.GetEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetEpisodeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists episodes, newest `occur_time` first, ties broken by id.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative,
     * `page_token` is malformed or was issued for different filters, or
     * `filter.start_time` is after `filter.end_time`.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListEpisodesResponse> listEpisodes(
        dev.statekeeper.v1.ListEpisodesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListEpisodesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Deletes one episode from the durable store and (as a tombstone until the
     * next rebuild) from the user's vector index. Facts consolidated from it
     * stay.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `episode_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such episode exists.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeleteEpisodeResponse> deleteEpisode(
        dev.statekeeper.v1.DeleteEpisodeRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteEpisodeMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Recalls the episodes of one user most relevant to a query.
     * Each candidate gets three partial scores in [0, 1]: similarity (cosine
     * similarity of normalised vectors clamped at 0, or a normalised lexical
     * score in LEXICAL ranking), recency (0.5 ^ (age / recency_half_life), age
     * measured from `occur_time` to now) and importance (the episode's
     * importance). The combined score is their weighted mean with the
     * configured or overridden weights. Results are ordered by combined score,
     * descending, ties broken by newer `occur_time`, and cut at `top_k` after
     * dropping those under `min_score`.
     * Ranking is VECTOR when `query_vector` is given or when `query_text` is
     * given and an embedder is configured; it is LEXICAL when `query_text` is
     * given and no embedder is configured. In VECTOR ranking, episodes stored
     * without an embedding are not candidates.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, no query
     * is set, `top_k` or `min_score` is negative, a weight is negative, all
     * weights are zero, or `recency_half_life` is not positive;
     * INVALID_ARGUMENT (DIMENSION_MISMATCH) if `query_vector` does not have the
     * dimension of the user's index; RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the
     * query is over its size limit; UNAVAILABLE (STORAGE_UNAVAILABLE) with
     * metadata["dependency"] = "embedder" if the configured embedder cannot be
     * reached.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RecallResponse> recall(
        dev.statekeeper.v1.RecallRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRecallMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Adds knowledge triples, in order, as one atomic batch: either every fact
     * is applied or none is.
     * For each input, in order:
     * 1. Deduplication: if a currently valid fact with the same scope, subject,
     *    predicate and object exists, nothing new is stored; the existing fact
     *    keeps its id, its confidence becomes the larger of the two, and the
     *    outcome is DEDUPLICATED.
     * 2. Otherwise the fact is stored (outcome CREATED), and if its predicate is
     *    declared single-valued (see DeclarePredicate), every currently valid
     *    fact with the same scope, subject and predicate but a different object
     *    is invalidated: its `invalidate_time` is set, its `invalidated_by` names
     *    the new fact, and its `valid_to` is lowered to the new fact's
     *    `valid_from` if it was later or unset. Invalidated facts stay readable.
     * A later input of the same batch sees the effects of earlier ones.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `facts` is empty or an input
     * has an empty subject, predicate or object, a confidence outside [0, 1],
     * or `valid_to` not after `valid_from` (metadata["field"] names the input,
     * e.g. "facts[2].object"); RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the batch
     * or a text is over its configured limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.AddFactsResponse> addFacts(
        dev.statekeeper.v1.AddFactsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getAddFactsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Extracts knowledge triples from text (or from a stored episode) with the
     * configured LLM endpoint, or with the deterministic offline extractor when
     * none is configured or it cannot be reached, and stores them exactly as
     * AddFacts would unless `dry_run` is set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if no input is set or the text
     * is empty; NOT_FOUND (NOT_FOUND) if `episode_id` names no episode;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if the text is over its size limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ExtractFactsResponse> extractFacts(
        dev.statekeeper.v1.ExtractFactsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getExtractFactsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns one fact, valid or invalidated.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty;
     * NOT_FOUND (NOT_FOUND) if no such fact exists.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetFactResponse> getFact(
        dev.statekeeper.v1.GetFactRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetFactMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists facts matching exact subject, predicate and object filters, newest
     * `create_time` first.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed or was issued for different filters.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListFactsResponse> listFacts(
        dev.statekeeper.v1.ListFactsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListFactsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the neighbourhood of an entity in the knowledge graph: every fact
     * reachable from the entity by following facts in either direction
     * (subject to object or object to subject) up to `depth` hops, and the
     * entities those facts connect. Entities are the subject and object strings
     * of facts, compared after trimming and case folding.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `entity` is empty or `depth`
     * is outside [0, 3]. An entity with no facts is not an error: the response
     * holds just that entity and no facts.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.QueryEntityResponse> queryEntity(
        dev.statekeeper.v1.QueryEntityRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getQueryEntityMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Marks a fact as no longer valid without deleting it. Idempotent: a fact
     * that is already invalidated is returned unchanged with
     * `already_invalidated` set.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `fact_id` is empty or
     * `valid_to` is before the fact's `valid_from`; NOT_FOUND (NOT_FOUND) if no
     * such fact exists.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.InvalidateFactResponse> invalidateFact(
        dev.statekeeper.v1.InvalidateFactRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getInvalidateFactMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Declares (creates or replaces) a predicate of the tenant, in particular
     * whether it is single-valued. Predicates that were never declared are
     * multi-valued. Declaring a predicate single-valued does not invalidate
     * facts that already contradict each other; it applies to facts added
     * afterwards.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `name` is empty;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `name` or `description` is over
     * its length limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.DeclarePredicateResponse> declarePredicate(
        dev.statekeeper.v1.DeclarePredicateRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeclarePredicateMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Lists the declared predicates of the tenant, ordered by name.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `page_size` is negative or
     * `page_token` is malformed.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.ListPredicatesResponse> listPredicates(
        dev.statekeeper.v1.ListPredicatesRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getListPredicatesMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Builds one context for a model call from all three memory layers, within
     * a token budget.
     * The budget available to memory is `token_budget - reserved_output_tokens`
     * minus the tokens of the markdown scaffolding (headings). It is filled in
     * this order, and an entry that does not fit is left out whole, never cut:
     * 1. The working window of `session_id`: its newest messages, newest first,
     *    up to `max_working_tokens`, keeping tool-call pairs intact (the same
     *    selection as SessionService.GetContextWindow).
     * 2. Facts relevant to `message` (facts whose subject or object is an
     *    entity named in `message`, and their depth-1 neighbours), valid now,
     *    by confidence then recency, up to `max_facts`.
     * 3. Episodes recalled for `message` (as Recall with `message` as
     *    `query_text`), by combined score, up to `max_episodes`.
     * Token counts use the configured tokenizer (tiktoken).
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty, a count
     * or budget is negative, or `reserved_output_tokens` is not below
     * `token_budget`; NOT_FOUND (NOT_FOUND) if `session_id` names no session;
     * NOT_FOUND (SESSION_EXPIRED) if that session has expired;
     * RESOURCE_EXHAUSTED (LIMIT_EXCEEDED) if `message` is over its size limit.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.BuildContextResponse> buildContext(
        dev.statekeeper.v1.BuildContextRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getBuildContextMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Runs forgetting now (it also runs on a server schedule): each episode's
     * importance decays with age as importance * exp(-decay_rate * age_days),
     * age measured from `occur_time`, and episodes whose decayed importance is
     * under the threshold are deleted, as by DeleteEpisode. Facts are never
     * forgotten. With `dry_run`, nothing changes and the report says what would
     * have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `decay_rate` is negative or
     * `threshold` is outside [0, 1]; FAILED_PRECONDITION (FAILED_PRECONDITION)
     * with metadata["condition"] = "RUN_IN_PROGRESS" if a forgetting run over
     * an overlapping scope is in progress.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RunForgettingResponse> runForgetting(
        dev.statekeeper.v1.RunForgettingRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRunForgettingMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Runs consolidation now (it also runs on a server schedule): clusters of
     * at least `min_cluster_size` similar episodes of one user that were not
     * consolidated before become semantic facts (extracted by the LLM endpoint
     * or the offline fallback, then stored as by AddFacts, scoped to that
     * user), and the importance of their episodes is multiplied by the
     * demotion factor. With `dry_run`, nothing changes and the report says what
     * would have been done.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `similarity_threshold` or
     * `demotion_factor` is outside [0, 1] or `min_cluster_size` is below 2;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a consolidation run over an overlapping scope is in
     * progress.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RunConsolidationResponse> runConsolidation(
        dev.statekeeper.v1.RunConsolidationRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRunConsolidationMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Returns the state of one user's vector index. A user without episodes
     * has an index in state ABSENT; that is not an error.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.GetIndexStatsResponse> getIndexStats(
        dev.statekeeper.v1.GetIndexStatsRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetIndexStatsMethod(), getCallOptions()), request);
    }

    /**
     * <pre>
     * Rebuilds one user's vector index from the durable store, dropping its
     * tombstones, and returns its state afterwards. Recall keeps working on the
     * old index until the new one is swapped in.
     * Errors: INVALID_ARGUMENT (INVALID_FIELD) if `user_id` is empty;
     * FAILED_PRECONDITION (FAILED_PRECONDITION) with metadata["condition"] =
     * "RUN_IN_PROGRESS" if a rebuild of that index is already running.
     * </pre>
     */
    public com.google.common.util.concurrent.ListenableFuture<dev.statekeeper.v1.RebuildIndexResponse> rebuildIndex(
        dev.statekeeper.v1.RebuildIndexRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRebuildIndexMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_RECORD_EPISODE = 0;
  private static final int METHODID_GET_EPISODE = 1;
  private static final int METHODID_LIST_EPISODES = 2;
  private static final int METHODID_DELETE_EPISODE = 3;
  private static final int METHODID_RECALL = 4;
  private static final int METHODID_ADD_FACTS = 5;
  private static final int METHODID_EXTRACT_FACTS = 6;
  private static final int METHODID_GET_FACT = 7;
  private static final int METHODID_LIST_FACTS = 8;
  private static final int METHODID_QUERY_ENTITY = 9;
  private static final int METHODID_INVALIDATE_FACT = 10;
  private static final int METHODID_DECLARE_PREDICATE = 11;
  private static final int METHODID_LIST_PREDICATES = 12;
  private static final int METHODID_BUILD_CONTEXT = 13;
  private static final int METHODID_RUN_FORGETTING = 14;
  private static final int METHODID_RUN_CONSOLIDATION = 15;
  private static final int METHODID_GET_INDEX_STATS = 16;
  private static final int METHODID_REBUILD_INDEX = 17;

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
        case METHODID_RECORD_EPISODE:
          serviceImpl.recordEpisode((dev.statekeeper.v1.RecordEpisodeRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecordEpisodeResponse>) responseObserver);
          break;
        case METHODID_GET_EPISODE:
          serviceImpl.getEpisode((dev.statekeeper.v1.GetEpisodeRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetEpisodeResponse>) responseObserver);
          break;
        case METHODID_LIST_EPISODES:
          serviceImpl.listEpisodes((dev.statekeeper.v1.ListEpisodesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListEpisodesResponse>) responseObserver);
          break;
        case METHODID_DELETE_EPISODE:
          serviceImpl.deleteEpisode((dev.statekeeper.v1.DeleteEpisodeRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeleteEpisodeResponse>) responseObserver);
          break;
        case METHODID_RECALL:
          serviceImpl.recall((dev.statekeeper.v1.RecallRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RecallResponse>) responseObserver);
          break;
        case METHODID_ADD_FACTS:
          serviceImpl.addFacts((dev.statekeeper.v1.AddFactsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.AddFactsResponse>) responseObserver);
          break;
        case METHODID_EXTRACT_FACTS:
          serviceImpl.extractFacts((dev.statekeeper.v1.ExtractFactsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ExtractFactsResponse>) responseObserver);
          break;
        case METHODID_GET_FACT:
          serviceImpl.getFact((dev.statekeeper.v1.GetFactRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetFactResponse>) responseObserver);
          break;
        case METHODID_LIST_FACTS:
          serviceImpl.listFacts((dev.statekeeper.v1.ListFactsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListFactsResponse>) responseObserver);
          break;
        case METHODID_QUERY_ENTITY:
          serviceImpl.queryEntity((dev.statekeeper.v1.QueryEntityRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.QueryEntityResponse>) responseObserver);
          break;
        case METHODID_INVALIDATE_FACT:
          serviceImpl.invalidateFact((dev.statekeeper.v1.InvalidateFactRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.InvalidateFactResponse>) responseObserver);
          break;
        case METHODID_DECLARE_PREDICATE:
          serviceImpl.declarePredicate((dev.statekeeper.v1.DeclarePredicateRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.DeclarePredicateResponse>) responseObserver);
          break;
        case METHODID_LIST_PREDICATES:
          serviceImpl.listPredicates((dev.statekeeper.v1.ListPredicatesRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.ListPredicatesResponse>) responseObserver);
          break;
        case METHODID_BUILD_CONTEXT:
          serviceImpl.buildContext((dev.statekeeper.v1.BuildContextRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.BuildContextResponse>) responseObserver);
          break;
        case METHODID_RUN_FORGETTING:
          serviceImpl.runForgetting((dev.statekeeper.v1.RunForgettingRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunForgettingResponse>) responseObserver);
          break;
        case METHODID_RUN_CONSOLIDATION:
          serviceImpl.runConsolidation((dev.statekeeper.v1.RunConsolidationRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RunConsolidationResponse>) responseObserver);
          break;
        case METHODID_GET_INDEX_STATS:
          serviceImpl.getIndexStats((dev.statekeeper.v1.GetIndexStatsRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.GetIndexStatsResponse>) responseObserver);
          break;
        case METHODID_REBUILD_INDEX:
          serviceImpl.rebuildIndex((dev.statekeeper.v1.RebuildIndexRequest) request,
              (io.grpc.stub.StreamObserver<dev.statekeeper.v1.RebuildIndexResponse>) responseObserver);
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
          getRecordEpisodeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RecordEpisodeRequest,
              dev.statekeeper.v1.RecordEpisodeResponse>(
                service, METHODID_RECORD_EPISODE)))
        .addMethod(
          getGetEpisodeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetEpisodeRequest,
              dev.statekeeper.v1.GetEpisodeResponse>(
                service, METHODID_GET_EPISODE)))
        .addMethod(
          getListEpisodesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListEpisodesRequest,
              dev.statekeeper.v1.ListEpisodesResponse>(
                service, METHODID_LIST_EPISODES)))
        .addMethod(
          getDeleteEpisodeMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeleteEpisodeRequest,
              dev.statekeeper.v1.DeleteEpisodeResponse>(
                service, METHODID_DELETE_EPISODE)))
        .addMethod(
          getRecallMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RecallRequest,
              dev.statekeeper.v1.RecallResponse>(
                service, METHODID_RECALL)))
        .addMethod(
          getAddFactsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.AddFactsRequest,
              dev.statekeeper.v1.AddFactsResponse>(
                service, METHODID_ADD_FACTS)))
        .addMethod(
          getExtractFactsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ExtractFactsRequest,
              dev.statekeeper.v1.ExtractFactsResponse>(
                service, METHODID_EXTRACT_FACTS)))
        .addMethod(
          getGetFactMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetFactRequest,
              dev.statekeeper.v1.GetFactResponse>(
                service, METHODID_GET_FACT)))
        .addMethod(
          getListFactsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListFactsRequest,
              dev.statekeeper.v1.ListFactsResponse>(
                service, METHODID_LIST_FACTS)))
        .addMethod(
          getQueryEntityMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.QueryEntityRequest,
              dev.statekeeper.v1.QueryEntityResponse>(
                service, METHODID_QUERY_ENTITY)))
        .addMethod(
          getInvalidateFactMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.InvalidateFactRequest,
              dev.statekeeper.v1.InvalidateFactResponse>(
                service, METHODID_INVALIDATE_FACT)))
        .addMethod(
          getDeclarePredicateMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.DeclarePredicateRequest,
              dev.statekeeper.v1.DeclarePredicateResponse>(
                service, METHODID_DECLARE_PREDICATE)))
        .addMethod(
          getListPredicatesMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.ListPredicatesRequest,
              dev.statekeeper.v1.ListPredicatesResponse>(
                service, METHODID_LIST_PREDICATES)))
        .addMethod(
          getBuildContextMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.BuildContextRequest,
              dev.statekeeper.v1.BuildContextResponse>(
                service, METHODID_BUILD_CONTEXT)))
        .addMethod(
          getRunForgettingMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RunForgettingRequest,
              dev.statekeeper.v1.RunForgettingResponse>(
                service, METHODID_RUN_FORGETTING)))
        .addMethod(
          getRunConsolidationMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RunConsolidationRequest,
              dev.statekeeper.v1.RunConsolidationResponse>(
                service, METHODID_RUN_CONSOLIDATION)))
        .addMethod(
          getGetIndexStatsMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.GetIndexStatsRequest,
              dev.statekeeper.v1.GetIndexStatsResponse>(
                service, METHODID_GET_INDEX_STATS)))
        .addMethod(
          getRebuildIndexMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              dev.statekeeper.v1.RebuildIndexRequest,
              dev.statekeeper.v1.RebuildIndexResponse>(
                service, METHODID_REBUILD_INDEX)))
        .build();
  }

  private static abstract class MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    MemoryServiceBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return dev.statekeeper.v1.MemoryProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("MemoryService");
    }
  }

  private static final class MemoryServiceFileDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier {
    MemoryServiceFileDescriptorSupplier() {}
  }

  private static final class MemoryServiceMethodDescriptorSupplier
      extends MemoryServiceBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    MemoryServiceMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (MemoryServiceGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new MemoryServiceFileDescriptorSupplier())
              .addMethod(getRecordEpisodeMethod())
              .addMethod(getGetEpisodeMethod())
              .addMethod(getListEpisodesMethod())
              .addMethod(getDeleteEpisodeMethod())
              .addMethod(getRecallMethod())
              .addMethod(getAddFactsMethod())
              .addMethod(getExtractFactsMethod())
              .addMethod(getGetFactMethod())
              .addMethod(getListFactsMethod())
              .addMethod(getQueryEntityMethod())
              .addMethod(getInvalidateFactMethod())
              .addMethod(getDeclarePredicateMethod())
              .addMethod(getListPredicatesMethod())
              .addMethod(getBuildContextMethod())
              .addMethod(getRunForgettingMethod())
              .addMethod(getRunConsolidationMethod())
              .addMethod(getGetIndexStatsMethod())
              .addMethod(getRebuildIndexMethod())
              .build();
        }
      }
    }
    return result;
  }
}
