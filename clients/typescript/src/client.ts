/* eslint-disable @typescript-eslint/no-explicit-any */
// A layer over the generated @grpc/grpc-js clients: one object holding a
// client per statekeeper.v1 service, the API key on every call, a promise API
// for unary calls with a default deadline, retries of UNAVAILABLE that are
// safe (reads, and mutations carrying an idempotency key that the client
// fills in), typed errors (errors.ts), the standard health check, the
// resuming blackboard Watch (watch.ts) and the inbox consumer (inbox.ts).
import { readFileSync } from "node:fs";

import { BinaryReader, BinaryWriter } from "@bufbuild/protobuf/wire";
import {
  CallOptions,
  ChannelCredentials,
  ChannelOptions,
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

import { StatekeeperError, toStatekeeperError } from "./errors";
import { AdminServiceClient } from "./gen/statekeeper/v1/admin";
import { BlackboardServiceClient } from "./gen/statekeeper/v1/blackboard";
import { CheckpointServiceClient } from "./gen/statekeeper/v1/checkpoint";
import { ItemServiceClient } from "./gen/statekeeper/v1/items";
import { MemoryServiceClient } from "./gen/statekeeper/v1/memory";
import { MessageServiceClient } from "./gen/statekeeper/v1/message";
import { SessionServiceClient } from "./gen/statekeeper/v1/session";
import { ConsumeOptions, DeliveryHandler, InboxConsumer } from "./inbox";
import {
  backoffMs,
  DEFAULT_RETRY,
  methodSafety,
  MethodSafety,
  NO_RETRY,
  RETRYABLE_CODES,
  retryPolicy,
  RetryPolicy,
  sleep,
  withRequestId,
} from "./retry";
import { Watch, WatchOptions } from "./watch";

export { errorInfo, isUnimplemented } from "./errors";
export type { ErrorInfo } from "./errors";

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
  /** Default deadline of unary calls, in milliseconds; default 30 s ({@link DEFAULT_TIMEOUT_MS}). */
  timeoutMs?: number;
  /**
   * Retries of UNAVAILABLE with exponential backoff, within each call's
   * deadline: `true` (default: {@link DEFAULT_RETRY}), `false` (never), or a
   * partial {@link RetryPolicy}. Only calls that are safe to repeat are
   * retried: reads, mutations whose request has a `requestId` (filled with a
   * random key when empty, the same on every attempt), and calls made with
   * `{ idempotent: true }`.
   */
  retry?: boolean | Partial<RetryPolicy>;
  /** Extra grpc-js channel options (they override the client's defaults). */
  channelOptions?: ChannelOptions;
  /** Called before each retry of a unary call (logging, metrics). */
  onRetry?: (event: RetryEvent) => void;
}

/** What {@link ConnectOptions.onRetry} is told. */
export interface RetryEvent {
  /** "statekeeper.v1.SessionService/AppendMessages". */
  method: string;
  /** The attempt that failed (1 = the first call). */
  attempt: number;
  /** Its error. */
  error: StatekeeperError;
  /** The request sent (with the `requestId` the client filled in, if any). */
  request: unknown;
  /** The pause before the next attempt (ms). */
  backoffMs: number;
}

/** Deadline of a unary call when neither the client nor the call sets one. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Channel defaults: reconnect to a restarted server within a second or two
 * (grpc-js would otherwise back off up to 120 s between connection attempts).
 */
const CHANNEL_DEFAULTS: ChannelOptions = {
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 2_000,
};

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
  /** Deadline in milliseconds, retries included; default: the client's `timeoutMs`. */
  timeoutMs?: number;
  /** Extra metadata for this call (the credentials are added anyway). */
  metadata?: Metadata;
  /**
   * The caller vouches that repeating this call is harmless (e.g. AckMessages,
   * ExtendVisibility): UNAVAILABLE is retried even though it is a mutation
   * without an idempotency key.
   */
  idempotent?: boolean;
  /** The retry policy of this call (partial: the rest from the client's). */
  retry?: Partial<RetryPolicy>;
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
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

interface MethodDefinition {
  path: string;
  responseStream: boolean;
  requestDeserialize: (bytes: Buffer) => unknown;
}

/** What the promise API needs to know about one unary method. */
interface MethodInfo extends MethodSafety {
  /** "statekeeper.v1.SessionService/GetSession". */
  fullName: string;
}

function methodInfos(client: Client): Map<string, MethodInfo> {
  const service = (client.constructor as unknown as { service?: Record<string, MethodDefinition> }).service ?? {};
  const infos = new Map<string, MethodInfo>();
  for (const [key, def] of Object.entries(service)) {
    if (def.responseStream) continue;
    const fullName = def.path.replace(/^\//, "");
    const name = fullName.slice(fullName.lastIndexOf("/") + 1);
    infos.set(key, { fullName, ...methodSafety(name, def.requestDeserialize) });
  }
  return infos;
}

function promised<C extends Client>(owner: StatekeeperClient, client: C): Promised<C> {
  const infos = methodInfos(client);
  return new Proxy({} as Promised<C>, {
    get(_target, name) {
      const method = (client as unknown as Record<string | symbol, unknown>)[name];
      const info = typeof name === "string" ? infos.get(name) : undefined;
      if (typeof method !== "function" || info === undefined) return undefined;
      return (request: unknown, options: UnaryOptions = {}) =>
        owner.invoke(client, method as FullUnary, request, info, options);
    },
  });
}

function unaryAttempt(
  client: Client,
  method: FullUnary,
  request: unknown,
  metadata: Metadata,
  deadline: number,
  signal?: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new StatekeeperError(status.CANCELLED, "the call was aborted before it started"));
      return;
    }
    const call = method.call(client, request, metadata, { deadline: new Date(deadline) }, (error, response) => {
      signal?.removeEventListener("abort", onAbort);
      if (error) reject(error);
      else resolve(response);
    });
    const onAbort = () => call.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** One client per statekeeper.v1 service, sharing address and credentials. */
export class StatekeeperClient {
  /**
   * Promise API over the same clients: every unary method returns a promise,
   * gets the client's default deadline (or `{ timeoutMs }`), is retried on
   * UNAVAILABLE when that is safe, and rejects with a {@link StatekeeperError}
   * (one of the `ReasonErrors` classes when the server sent a reason).
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
  /** The raw generated clients (callbacks, streams): credentials, no deadline, no retries, grpc-js errors. */
  readonly sessions: SessionServiceClient;
  readonly memory: MemoryServiceClient;
  readonly checkpoints: CheckpointServiceClient;
  readonly blackboard: BlackboardServiceClient;
  readonly messages: MessageServiceClient;
  readonly items: ItemServiceClient;
  readonly admin: AdminServiceClient;
  /** Default deadline of unary calls, in milliseconds. */
  readonly timeoutMs: number;
  /** The retry policy of unary calls. */
  readonly retry: Readonly<RetryPolicy>;
  private readonly health: Client;
  private readonly onRetry: ((event: RetryEvent) => void) | undefined;

  constructor(address: string, options: ConnectOptions = {}) {
    if (options.apiKey && options.bearerToken) {
      throw new Error("pass apiKey or bearerToken, not both");
    }
    const auth: Record<string, string> = {};
    if (options.apiKey) auth["x-api-key"] = options.apiKey;
    if (options.bearerToken) auth["authorization"] = `Bearer ${options.bearerToken}`;
    const clientOptions: Record<string, unknown> = {
      ...CHANNEL_DEFAULTS,
      interceptors: Object.keys(auth).length ? [metadataInterceptor(auth)] : [],
    };
    if (options.tls && options.credentials) {
      throw new Error("pass tls or credentials, not both");
    }
    if (options.tls?.serverName) {
      // Verified against this name, and sent as SNI, instead of the address's host.
      clientOptions["grpc.ssl_target_name_override"] = options.tls.serverName;
    }
    Object.assign(clientOptions, options.channelOptions ?? {});
    const creds = options.tls
      ? tlsCredentials(options.tls)
      : (options.credentials ?? grpcCredentials.createInsecure());
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.onRetry = options.onRetry;
    this.retry = Object.freeze(
      options.retry === false
        ? NO_RETRY
        : options.retry === true || options.retry === undefined
          ? DEFAULT_RETRY
          : retryPolicy(options.retry),
    );
    this.sessions = new SessionServiceClient(address, creds, clientOptions);
    this.memory = new MemoryServiceClient(address, creds, clientOptions);
    this.checkpoints = new CheckpointServiceClient(address, creds, clientOptions);
    this.blackboard = new BlackboardServiceClient(address, creds, clientOptions);
    this.messages = new MessageServiceClient(address, creds, clientOptions);
    this.items = new ItemServiceClient(address, creds, clientOptions);
    this.admin = new AdminServiceClient(address, creds, clientOptions);
    this.health = new HealthClient(address, creds, clientOptions);
    this.api = {
      sessions: promised(this, this.sessions),
      memory: promised(this, this.memory),
      checkpoints: promised(this, this.checkpoints),
      blackboard: promised(this, this.blackboard),
      messages: promised(this, this.messages),
      items: promised(this, this.items),
      admin: promised(this, this.admin),
    };
  }

  /** @internal The promise API's call: deadline, safe retries, typed error. */
  async invoke(
    client: Client,
    method: FullUnary,
    request: unknown,
    info: MethodInfo,
    options: UnaryOptions = {},
  ): Promise<any> {
    const policy = options.retry ? retryPolicy({ ...this.retry, ...options.retry }) : this.retry;
    const retriable = info.readOnly || info.idempotencyKey || options.idempotent === true;
    if (info.idempotencyKey && policy.maxAttempts > 1) {
      // The same key on every attempt: a retry after a lost reply is not applied twice.
      request = withRequestId(request);
    }
    const deadline = Date.now() + (options.timeoutMs ?? this.timeoutMs);
    for (let attempt = 1; ; attempt++) {
      const metadata = options.metadata ? options.metadata.clone() : new Metadata();
      try {
        return await unaryAttempt(client, method, request, metadata, deadline, options.signal);
      } catch (error) {
        const code = (error as ServiceError).code;
        const pause = backoffMs(policy, attempt);
        if (
          !retriable ||
          !RETRYABLE_CODES.has(code) ||
          attempt >= policy.maxAttempts ||
          options.signal?.aborted ||
          deadline - Date.now() <= pause
        ) {
          throw toStatekeeperError(error, info.fullName);
        }
        this.onRetry?.({
          method: info.fullName,
          attempt,
          error: toStatekeeperError(error, info.fullName),
          request,
          backoffMs: pause,
        });
        try {
          await sleep(pause, options.signal);
        } catch {
          throw toStatekeeperError(error, info.fullName);
        }
      }
    }
  }

  /**
   * Calls a unary method of one of the raw clients and returns a promise of
   * its response, with the client's default deadline unless `timeoutMs` is
   * given (no retries: prefer `sk.api`):
   *
   *     const { session } = await sk.call(sk.sessions, sk.sessions.createSession, { session: ... });
   */
  call<Req, Res>(client: Client, method: UnaryMethod<Req, Res>, request: Req, timeoutMs?: number): Promise<Res> {
    const deadline = new Date(Date.now() + (timeoutMs ?? this.timeoutMs));
    return new Promise((resolve, reject) => {
      method.call(client, request, new Metadata(), { deadline }, (error, response) =>
        error ? reject(toStatekeeperError(error)) : resolve(response),
      );
    });
  }

  /** The serving status of `service` ("" = the whole server), e.g. "SERVING". Retried on UNAVAILABLE. */
  async healthCheck(service = "", timeoutMs?: number): Promise<string> {
    const check = (this.health as unknown as Record<string, FullUnary>)["Check"];
    const info: MethodInfo = { fullName: "grpc.health.v1.Health/Check", readOnly: true, idempotencyKey: false };
    const res = (await this.invoke(this.health, check, { service }, info, { timeoutMs })) as { status: number };
    return HEALTH_STATUS[res.status] ?? String(res.status);
  }

  /** Resolves when the connection is ready (rejects after `timeoutMs`). */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) =>
      this.sessions.waitForReady(new Date(Date.now() + timeoutMs), (err) => (err ? reject(err) : resolve())),
    );
  }

  /**
   * A blackboard Watch that resumes by itself after a disconnect or a server
   * restart (see {@link Watch}):
   *
   *     for await (const event of sk.watch("team-1", { prefix: "plan/" })) { ... }
   */
  watch(board: string, options: WatchOptions = {}): Watch {
    return new Watch(this, board, options);
  }

  /**
   * Consumes the inbox of `agentId`: every delivery is passed to `handler`;
   * returning acks it, throwing (or returning `nack()`) gives it back (see
   * {@link InboxConsumer}). Runs until `stop()` (or `options.signal`).
   */
  consume(agentId: string, handler: DeliveryHandler, options: ConsumeOptions = {}): InboxConsumer {
    return new InboxConsumer(this, agentId, handler, options);
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
