package dev.statekeeper.examples;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.statekeeper.client.StatekeeperClient;
import dev.statekeeper.v1.AppendMessagesRequest;
import dev.statekeeper.v1.BlackboardValue;
import dev.statekeeper.v1.CreateSessionRequest;
import dev.statekeeper.v1.GetContextWindowRequest;
import dev.statekeeper.v1.GetContextWindowResponse;
import dev.statekeeper.v1.PutEntryRequest;
import dev.statekeeper.v1.Role;
import dev.statekeeper.v1.Session;
import dev.statekeeper.v1.SessionMessage;

/**
 * A tiny example agent: it keeps its conversation in a statekeeper session, asks for a context
 * window that fits its model, answers (a canned echo instead of a model call) and announces
 * progress on the team blackboard.
 *
 * <pre>
 * STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev \
 *   java -cp target/classes:$(cat target/classpath.txt) dev.statekeeper.examples.ExampleAgent
 * </pre>
 */
public final class ExampleAgent {
  private ExampleAgent() {}

  public static void main(String[] args) {
    // STATEKEEPER_ADDR, STATEKEEPER_API_KEY and the STATEKEEPER_TLS_* options.
    try (StatekeeperClient sk = StatekeeperClient.fromEnv()) {
      String sessionId =
          sk.sessions()
              .createSession(
                  CreateSessionRequest.newBuilder()
                      .setSession(Session.newBuilder().setUserId("alice").setAgentId("example-agent-java"))
                      .build())
              .getSession()
              .getSessionId();
      for (String question : new String[] {"Hello!", "What can you remember?"}) {
        sk.sessions()
            .appendMessages(
                AppendMessagesRequest.newBuilder()
                    .setSessionId(sessionId)
                    .addMessages(SessionMessage.newBuilder().setRole(Role.ROLE_USER).setContent(question))
                    .build());
        GetContextWindowResponse window =
            sk.sessions()
                .getContextWindow(
                    GetContextWindowRequest.newBuilder()
                        .setSessionId(sessionId)
                        .setTokenBudget(8192)
                        .setReservedOutputTokens(1024)
                        .setSystemPrompt("You are a helpful agent.")
                        .build());
        // A real agent sends window.getMessagesList() to its model here.
        String answer =
            String.format(
                "(echo) %s [%d messages, %d tokens in context]",
                question, window.getMessagesCount(), window.getAccounting().getTotalTokens());
        sk.sessions()
            .appendMessages(
                AppendMessagesRequest.newBuilder()
                    .setSessionId(sessionId)
                    .addMessages(SessionMessage.newBuilder().setRole(Role.ROLE_ASSISTANT).setContent(answer))
                    .build());
        System.out.println("agent: " + answer);
      }
      Struct status =
          Struct.newBuilder()
              .putFields("session", Value.newBuilder().setStringValue(sessionId).build())
              .putFields("state", Value.newBuilder().setStringValue("done").build())
              .build();
      try {
        sk.blackboard()
            .putEntry(
                PutEntryRequest.newBuilder()
                    .setBoard("team")
                    .setKey("agents/example-agent-java")
                    .setWriterAgentId("example-agent-java")
                    .setValue(BlackboardValue.newBuilder().setJson(status))
                    .build());
        System.out.println("announced on the blackboard");
      } catch (RuntimeException e) {
        if (!StatekeeperClient.isUnimplemented(e)) {
          throw e;
        }
        System.out.println("blackboard not available on this server yet: " + e.getMessage());
      }
    }
  }
}
