// @statekeeper/client: the generated statekeeper.v1 messages and @grpc/grpc-js
// clients, one namespace per proto file, plus StatekeeperClient.
export * from "./client";
export * as admin from "./gen/statekeeper/v1/admin";
export * as blackboard from "./gen/statekeeper/v1/blackboard";
export * as checkpoint from "./gen/statekeeper/v1/checkpoint";
export * as common from "./gen/statekeeper/v1/common";
export * as memory from "./gen/statekeeper/v1/memory";
export * as message from "./gen/statekeeper/v1/message";
export * as session from "./gen/statekeeper/v1/session";
