/* eslint-disable @typescript-eslint/no-explicit-any */
// A thin layer over the generated @grpc/grpc-js clients: one object holding a
// client per statekeeper.v1 service, the API key on every call, a default
// deadline, gRPC's own retry of UNAVAILABLE (service config), a promise
// wrapper for unary calls, the standard health check, and the server's
// google.rpc.ErrorInfo decoded from failed calls.
import { readFileSync } from "node:fs";

import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import {
  CallOptions,
  ChannelCredentials,
  Client,
  ClientUnaryCall,
  credentials as grpcCredentials,
  InterceptingCall,
  Interceptor,
  makeGenericClientConstructor,
  Metadata,
  ServiceError,
  status,
} from "@grpc/grpc-js";

import { AdminServiceClient } from "./gen/statekeeper/v1/admin";
import { BlackboardServiceClient } from "./gen/statekeeper/v1/blackboard";
import { CheckpointServiceClient } from "./gen/statekeeper/v1/checkpoint";
import { ItemServiceClient } from "./gen/statekeeper/v1/items";
import { MemoryServiceClient } from "./gen/statekeeper/v1/memory";
import { MessageServiceClient } from "./gen/statekeeper/v1/message";
import { SessionServiceClient } from "./gen/statekeeper/v1/session";

/** Options of {@link StatekeeperClient}. */
export interface ConnectOptions {
  /** Sent as `x-api-key` on every call. */
  apiKey?: string;
  /** Sent as `authorization: Bearer <token>` on every call. */
  bearerToken?: string;
  /** Channel credentials; default plaintext (loopback, tests). */
  credentials?: ChannelCredentials;
  /** Connect over TLS with these options (instead of `credentials`). */
  tls?: TlsOptions;
  /** Deadline of unary calls made with {@link StatekeeperClient.call}; default 30 s. */
  timeoutMs?: number;
  /** Retry UNAVAILABLE with exponential backoff (gRPC service config); default true. */
  retry?: boolean;
}

/**
 * How to reach a server that serves TLS; the same options as every other
 * statekeeper client. Each PEM is a file path or a Buffer of PEM bytes.
 */
export interface TlsOptions {
  /** The CA certificate(s) that signed the server's certificate; default the system's roots. */
  rootCa?: string | Buffer;
  /** This client's certificate, sent when the server requires one (mTLS); with `clientKey`. */
  clientCert?: string | Buffer;
  /** The key of `clientCert`. */
  clientKey?: string | Buffer;
  /** Verify the server's certificate for this name instead of the address's host. */
  serverName?: string;
}

/**
 * TLS options from STATEKEEPER_TLS_ROOT_CA, STATEKEEPER_TLS_CLIENT_CERT, STATEKEEPER_TLS_CLIENT_KEY
 * and STATEKEEPER_TLS_SERVER_NAME; undefined when none is set.
 */
export function tlsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): TlsOptions | undefined {
  const options: TlsOptions = {
    rootCa: env.STATEKEEPER_TLS_ROOT_CA || undefined,
    clientCert: env.STATEKEEPER_TLS_CLIENT_CERT || undefined,
    clientKey: env.STATEKEEPER_TLS_CLIENT_KEY || undefined,
    serverName: env.STATEKEEPER_TLS_SERVER_NAME || undefined,
  };
  return Object.values(options).some((value) => value !== undefined) ? options : undefined;
}

function pem(value: string | Buffer | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === "string" ? readFileSync(value) : value;
}

/** grpc-js credentials (createSsl) of {@link TlsOptions}. */
export function tlsCredentials(options: TlsOptions): ChannelCredentials {
  if ((options.clientCert === undefined) !== (options.clientKey === undefined)) {
    throw new Error("TlsOptions: clientCert and clientKey go together");
  }
  return grpcCredentials.createSsl(
    pem(options.rootCa),
    pem(options.clientKey),
    pem(options.clientCert),
  );
}

const SERVICES = [
  "statekeeper.v1.SessionService",
  "statekeeper.v1.MemoryService",
  "statekeeper.v1.CheckpointService",
  "statekeeper.v1.BlackboardService",
  "statekeeper.v1.MessageService",
  "statekeeper.v1.ItemService",
  "statekeeper.v1.AdminService",
  "grpc.health.v1.Health",
];

/** Retries UNAVAILABLE (only) for every statekeeper.v1 method. */
export const RETRY_SERVICE_CONFIG = JSON.stringify({
  methodConfig: [
    {
      name: SERVICES.map((service) => ({ service })),
      retryPolicy: {
        maxAttempts: 5,
        initialBackoff: "0.1s",
        maxBackoff: "5s",
        backoffMultiplier: 2,
        retryableStatusCodes: ["UNAVAILABLE"],
      },
    },
  ],
});

/** An interceptor that adds fixed metadata entries to every call. */
export function metadataInterceptor(entries: Record<string, string>): Interceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        for (const [key, value] of Object.entries(entries)) {
          metadata.set(key, value);
        }
        next(metadata, listener);
      },
    });
}

// grpc.health.v1.Health/Check, encoded by hand (two one-field messages).
const HealthClient = makeGenericClientConstructor(
  {
    Check: {
      path: "/grpc.health.v1.Health/Check",
      requestStream: false,
      responseStream: false,
      requestSerialize: (req: { service: string }) => {
        const w = new BinaryWriter();
        if (req.service) w.uint32(10).string(req.service);
        return Buffer.from(w.finish());
      },
      requestDeserialize: () => ({ service: "" }),
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (buf: Buffer) => {
        const r = new BinaryReader(buf);
        let code = 0;
        while (r.pos < r.len) {
          const tag = r.uint32();
          if (tag >>> 3 === 1) code = r.int32();
          else r.skip(tag & 7);
        }
        return { status: code };
      },
    },
  },
  "Health",
);

const HEALTH_STATUS = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** Per-call options of the promise API. */
export interface UnaryOptions {
  /** Deadline in milliseconds; default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Extra metadata for this call (the credentials are added anyway). */
  metadata?: Metadata;
}

type FullUnary = (
  request: any,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: any) => void,
) => ClientUnaryCall;

type UnaryKeys<C> = {
  [K in keyof C]: C[K] extends FullUnary ? K : never;
}[keyof C];

/**
 * The unary methods of a generated grpc-js client as promise-returning
 * functions: `await sk.api.sessions.createSession(request, { timeoutMs: 5000 })`.
 */
export type Promised<C> = {
  [K in UnaryKeys<C>]: C[K] extends (
    request: infer Req,
    metadata: Metadata,
    options: Partial<CallOptions>,
    callback: (error: ServiceError | null, response: infer Res) => void,
  ) => ClientUnaryCall
    ? (request: Req, options?: UnaryOptions) => Promise<Res>
    : never;
};

function promised<C extends Client>(client: C, defaultTimeoutMs: () => number): Promised<C> {
  return new Proxy({} as Promised<C>, {
    get(_target, name) {
      const method = (client as unknown as Record<string | symbol, unknown>)[name];
      if (typeof method !== "function") return undefined;
      return (request: unknown, options: UnaryOptions = {}) =>
        new Promise((resolve, reject) => {
          const deadline = new Date(Date.now() + (options.timeoutMs ?? defaultTimeoutMs()));
          (method as FullUnary).call(
            client,
            request,
            options.metadata ?? new Metadata(),
            { deadline },
            (error: ServiceError | null, response: unknown) => (error ? reject(error) : resolve(response)),
          );
        });
    },
  });
}

/** One client per statekeeper.v1 service, sharing address and credentials. */
export class StatekeeperClient {
  /**
   * Promise API over the same clients: every unary method returns a promise and
   * gets the client's default deadline (or `{ timeoutMs }`).
   */
  readonly api: {
    sessions: Promised<SessionServiceClient>;
    memory: Promised<MemoryServiceClient>;
    checkpoints: Promised<CheckpointServiceClient>;
    blackboard: Promised<BlackboardServiceClient>;
    messages: Promised<MessageServiceClient>;
    items: Promised<ItemServiceClient>;
    admin: Promised<AdminServiceClient>;
  };
  readonly sessions: SessionServiceClient;
  readonly memory: MemoryServiceClient;
  readonly checkpoints: CheckpointServiceClient;
  readonly blackboard: BlackboardServiceClient;
  readonly messages: MessageServiceClient;
  readonly items: ItemServiceClient;
  readonly admin: AdminServiceClient;
  readonly timeoutMs: number;
  private readonly health: Client;

  constructor(address: string, options: ConnectOptions = {}) {
    const auth: Record<string, string> = {};
    if (options.apiKey) auth["x-api-key"] = options.apiKey;
    if (options.bearerToken) auth["authorization"] = `Bearer ${options.bearerToken}`;
    const clientOptions: Record<string, unknown> = {
      interceptors: Object.keys(auth).length ? [metadataInterceptor(auth)] : [],
    };
    if (options.retry !== false) {
      clientOptions["grpc.service_config"] = RETRY_SERVICE_CONFIG;
      clientOptions["grpc.enable_retries"] = 1;
    }
    if (options.tls && options.credentials) {
      throw new Error("pass tls or credentials, not both");
    }
    if (options.tls?.serverName) {
      // Verified against this name, and sent as SNI, instead of the address's host.
      clientOptions["grpc.ssl_target_name_override"] = options.tls.serverName;
    }
    const creds = options.tls
      ? tlsCredentials(options.tls)
      : (options.credentials ?? grpcCredentials.createInsecure());
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.sessions = new SessionServiceClient(address, creds, clientOptions);
    this.memory = new MemoryServiceClient(address, creds, clientOptions);
    this.checkpoints = new CheckpointServiceClient(address, creds, clientOptions);
    this.blackboard = new BlackboardServiceClient(address, creds, clientOptions);
    this.messages = new MessageServiceClient(address, creds, clientOptions);
    this.items = new ItemServiceClient(address, creds, clientOptions);
    this.admin = new AdminServiceClient(address, creds, clientOptions);
    this.health = new HealthClient(address, creds, clientOptions);
    const timeout = () => this.timeoutMs;
    this.api = {
      sessions: promised(this.sessions, timeout),
      memory: promised(this.memory, timeout),
      checkpoints: promised(this.checkpoints, timeout),
      blackboard: promised(this.blackboard, timeout),
      messages: promised(this.messages, timeout),
      items: promised(this.items, timeout),
      admin: promised(this.admin, timeout),
    };
  }

  /**
   * Calls a unary method and returns a promise of its response, with the
   * client's default deadline unless `timeoutMs` is given:
   *
   *     const { session } = await sk.call(sk.sessions, sk.sessions.createSession, { session: ... });
   */
  call<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, timeoutMs?: number): Promise<Res> {
    const deadline = new Date(Date.now() + (timeoutMs ?? this.timeoutMs));
    return new Promise((resolve, reject) => {
      method.call(client, request, new Metadata(), { deadline }, (error, response) =>
        error ? reject(error) : resolve(response),
      );
    });
  }

  /** The serving status of `service` ("" = the whole server), e.g. "SERVING". */
  healthCheck(service = "", timeoutMs?: number): Promise<string> {
    const check = (this.health as unknown as Record<string, UnaryMethod<{ service: string }, { status: number }>>)[
      "Check"
    ];
    return this.call(this.health, check, { service }, timeoutMs).then(
      (res) => HEALTH_STATUS[res.status] ?? String(res.status),
    );
  }

  /** Resolves when the connection is ready (rejects after `timeoutMs`). */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) =>
      this.sessions.waitForReady(new Date(Date.now() + timeoutMs), (err) => (err ? reject(err) : resolve())),
    );
  }

  close(): void {
    for (const c of [
      this.sessions,
      this.memory,
      this.checkpoints,
      this.blackboard,
      this.messages,
      this.items,
      this.admin,
      this.health,
    ]) {
      c.close();
    }
  }
}

/** google.rpc.ErrorInfo, as the server attaches it to failed calls (AIP-193). */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    if (field === 1) info.reason = r.string();
    else if (field === 2) info.domain = r.string();
    else if (field === 3) {
      const entry = new BinaryReader(r.bytes());
      let key = "";
      let value = "";
      while (entry.pos < entry.len) {
        const t = entry.uint32();
        if (t >>> 3 === 1) key = entry.string();
        else if (t >>> 3 === 2) value = entry.string();
        else entry.skip(t & 7);
      }
      info.metadata[key] = value;
    } else r.skip(tag & 7);
  }
  return info;
}

/** The ErrorInfo of a failed call, or undefined. */
export function errorInfo(error: unknown): ErrorInfo | undefined {
  const md = (error as ServiceError | undefined)?.metadata;
  if (!md || typeof md.get !== "function") return undefined;
  for (const raw of md.get("grpc-status-details-bin")) {
    const r = new BinaryReader(raw as Buffer);
    while (r.pos < r.len) {
      const tag = r.uint32();
      if (tag >>> 3 !== 3) {
        r.skip(tag & 7);
        continue;
      }
      const any = new BinaryReader(r.bytes());
      let typeUrl = "";
      let value: Uint8Array = new Uint8Array();
      while (any.pos < any.len) {
        const t = any.uint32();
        if (t >>> 3 === 1) typeUrl = any.string();
        else if (t >>> 3 === 2) value = any.bytes();
        else any.skip(t & 7);
      }
      if (typeUrl === ERROR_INFO_TYPE) return decodeErrorInfo(value);
    }
  }
  return undefined;
}

/** True if the call failed with UNIMPLEMENTED (the server does not serve that method, e.g. an older server). */
export function isUnimplemented(error: unknown): boolean {
  return (error as ServiceError | undefined)?.code === status.UNIMPLEMENTED;
}
