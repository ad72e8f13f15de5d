// @statekeeper/client: the generated statekeeper.v1 messages and @grpc/grpc-js
// clients, one namespace per proto file, plus StatekeeperClient and its
// helpers: typed errors, retries, the resuming Watch and the inbox consumer.
export * from "./client";
export {
  ERROR_DOMAIN,
  isReason,
  isStatekeeperError,
  REASONS,
  ReasonErrors,
  StatekeeperError,
  toStatekeeperError,
} from "./errors";
export type { Reason, ReasonError, ReasonErrorClass } from "./errors";
export { InboxConsumer, nack, STREAM_WORKING_AFTER_MS } from "./inbox";
export type { ConsumeOptions, ConsumerStats, DeliveryHandler, Nack } from "./inbox";
export { backoffMs, DEFAULT_RETRY, NO_RETRY, RETRYABLE_CODES, retryPolicy } from "./retry";
export type { RetryPolicy } from "./retry";
export { oldestRevision, relist, Watch } from "./watch";
export type { Relisting, Selector, WatchOptions } from "./watch";
export { ErrorReason } from "./gen/statekeeper/v1/common";
export * as admin from "./gen/statekeeper/v1/admin";
export * as blackboard from "./gen/statekeeper/v1/blackboard";
export * as checkpoint from "./gen/statekeeper/v1/checkpoint";
export * as common from "./gen/statekeeper/v1/common";
export * as items from "./gen/statekeeper/v1/items";
export * as memory from "./gen/statekeeper/v1/memory";
export * as message from "./gen/statekeeper/v1/message";
export * as session from "./gen/statekeeper/v1/session";
