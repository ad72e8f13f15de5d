// Typed errors. Every failed call made through the promise API (`sk.api.*`),
// the Watch helper and the inbox consumer rejects with a StatekeeperError: the
// gRPC status (`code`, `details`, `metadata`, as a grpc-js ServiceError) plus
// the server's AIP-193 google.rpc.ErrorInfo (`reason`, `domain`,
// `errorMetadata`).
//
// The reasons are not listed here: the `Reason` type and the `ReasonErrors`
// classes are derived from the generated `ErrorReason` enum
// (proto/statekeeper/v1/common.proto), so a reason added to the proto is a new
// class after `npm run build`.
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { Metadata, ServiceError, status } from "@grpc/grpc-js";

import { ErrorReason } from "./gen/statekeeper/v1/common";

/** The `domain` of every ErrorInfo the statekeeper server sends. */
export const ERROR_DOMAIN = "statekeeper.dev";

const REASON_PREFIX = "ERROR_REASON_";

type ReasonEnumName = Exclude<keyof typeof ErrorReason, "ERROR_REASON_UNSPECIFIED" | "UNRECOGNIZED">;

/**
 * An ErrorInfo reason as it travels on the wire: the `ErrorReason` value name
 * without its `ERROR_REASON_` prefix, e.g. "ETAG_MISMATCH".
 */
export type Reason = ReasonEnumName extends `ERROR_REASON_${infer R}` ? R : never;

/** Every reason of the generated enum, in enum order. */
export const REASONS: readonly Reason[] = Object.keys(ErrorReason)
  .filter((name) => name.startsWith(REASON_PREFIX) && name !== "ERROR_REASON_UNSPECIFIED")
  .map((name) => name.slice(REASON_PREFIX.length) as Reason);

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

/** The ErrorInfo of a failed call (a grpc-js ServiceError or a StatekeeperError), or undefined. */
export function errorInfo(error: unknown): ErrorInfo | undefined {
  if (error instanceof StatekeeperError) return error.info;
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

/**
 * A failed statekeeper call. It has the fields of a grpc-js `ServiceError`
 * (`code`, `details`, `metadata`), so code written against grpc-js keeps
 * working, and the server's ErrorInfo: `reason` (a {@link Reason}, "" when
 * the server sent none, e.g. a transport failure), `reasonEnum` (the generated
 * enum value), `domain` and `errorMetadata`.
 *
 * Switch on it:
 *
 *     } catch (err) {
 *       if (err instanceof ReasonErrors.ETAG_MISMATCH) ...      // a class per reason
 *       if (isStatekeeperError(err)) switch (err.reason) { case "NOT_FOUND": ... }
 *     }
 */
export class StatekeeperError extends Error implements ServiceError {
  /** The canonical gRPC status code. */
  readonly code: status;
  /** The status message. */
  readonly details: string;
  /** The trailers of the failed call. */
  readonly metadata: Metadata;
  /** The ErrorInfo reason, or "" when the server attached none. */
  readonly reason: Reason | "";
  /** `reason` as the generated enum value (ERROR_REASON_UNSPECIFIED when none). */
  readonly reasonEnum: ErrorReason;
  /** The ErrorInfo domain ("statekeeper.dev"), or "". */
  readonly domain: string;
  /** The ErrorInfo metadata, e.g. `{ field: "session_id" }` or `{ oldest_revision: "42" }`. */
  readonly errorMetadata: Readonly<Record<string, string>>;
  /** The full method name, e.g. "statekeeper.v1.SessionService/GetSession", when known. */
  readonly method: string;
  /** The decoded ErrorInfo, or undefined. */
  readonly info: ErrorInfo | undefined;

  constructor(code: status, details: string, options: { metadata?: Metadata; info?: ErrorInfo; method?: string; cause?: unknown } = {}) {
    const info = options.info;
    const reason = info && isReason(info.reason) ? info.reason : "";
    const where = options.method ? `${options.method}: ` : "";
    super(`${where}${status[code] ?? code}${reason ? ` [${reason}]` : ""}: ${details}`, { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = details;
    this.metadata = options.metadata ?? new Metadata();
    this.info = info;
    this.reason = reason;
    this.reasonEnum = reason
      ? (ErrorReason[`${REASON_PREFIX}${reason}` as keyof typeof ErrorReason] as ErrorReason)
      : ErrorReason.ERROR_REASON_UNSPECIFIED;
    this.domain = info?.domain ?? "";
    this.errorMetadata = { ...(info?.metadata ?? {}) };
    this.method = options.method ?? "";
  }

  /** The canonical code's name, e.g. "ABORTED". */
  get codeName(): string {
    return status[this.code] ?? String(this.code);
  }
}

/** A StatekeeperError whose reason is `R` (what `ReasonErrors[R]` constructs). */
export type ReasonError<R extends Reason> = StatekeeperError & { readonly reason: R };

/** The class of one reason's errors: `err instanceof ReasonErrors.ETAG_MISMATCH`. */
export type ReasonErrorClass<R extends Reason> = {
  new (code: status, details: string, options?: { metadata?: Metadata; info?: ErrorInfo; method?: string; cause?: unknown }): ReasonError<R>;
  readonly reason: R;
  readonly prototype: ReasonError<R>;
};

function className(reason: string): string {
  return (
    reason
      .toLowerCase()
      .split("_")
      .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
      .join("") + "Error"
  );
}

/**
 * One StatekeeperError subclass per ErrorReason of the proto, keyed by reason
 * and named after it (ETAG_MISMATCH -> class EtagMismatchError), built from the
 * generated enum when this module loads.
 */
export const ReasonErrors: { readonly [R in Reason]: ReasonErrorClass<R> } = Object.freeze(
  Object.fromEntries(
    REASONS.map((reason) => {
      const cls = {
        [className(reason)]: class extends StatekeeperError {
          static readonly reason = reason;
        },
      }[className(reason)];
      return [reason, cls];
    }),
  ),
) as unknown as { readonly [R in Reason]: ReasonErrorClass<R> };

/** True if `value` is a reason of the generated enum. */
export function isReason(value: string): value is Reason {
  return (REASONS as readonly string[]).includes(value);
}

/** True if `error` is a StatekeeperError (optionally: with this reason). */
export function isStatekeeperError<R extends Reason>(error: unknown, reason?: R): error is ReasonError<R> {
  return error instanceof StatekeeperError && (reason === undefined || error.reason === reason);
}

/**
 * The StatekeeperError of a failed call: a grpc-js ServiceError becomes an
 * instance of its reason's class (or of StatekeeperError when it has none);
 * a StatekeeperError is returned as is; anything else becomes UNKNOWN.
 */
export function toStatekeeperError(error: unknown, method = ""): StatekeeperError {
  if (error instanceof StatekeeperError) return error;
  const service = error as Partial<ServiceError> | undefined;
  if (service && typeof service.code === "number") {
    const info = errorInfo(error);
    const options = { metadata: service.metadata, info, method, cause: error };
    const details = service.details ?? service.message ?? "";
    if (info && isReason(info.reason)) {
      return new ReasonErrors[info.reason](service.code, details, options);
    }
    return new StatekeeperError(service.code, details, options);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new StatekeeperError(status.UNKNOWN, message, { method, cause: error });
}

/** True if the call failed with UNIMPLEMENTED (the server does not serve that method, e.g. an older server). */
export function isUnimplemented(error: unknown): boolean {
  return (error as ServiceError | undefined)?.code === status.UNIMPLEMENTED;
}
