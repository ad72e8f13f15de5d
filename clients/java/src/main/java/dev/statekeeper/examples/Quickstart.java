package dev.statekeeper.examples;

import dev.statekeeper.client.*;
import dev.statekeeper.v1.BlackboardEvent;

/** The example at the top of the README, kept compiling: watch a board, consume an inbox. */
public final class Quickstart {
  private Quickstart() {}

  public static void main(String[] args) throws Exception {
    try (StatekeeperClient sk = StatekeeperClient.builder("127.0.0.1:50051").apiKey("sk-dev").build();
         InboxConsumer inbox = sk.consume(InboxConsumer.options("agent-b"), delivery -> {
           System.out.println("task " + delivery.getMessage().getType());
           return InboxConsumer.Outcome.ack();                 // or nack(delay), deadLetter(why)
         });
         Watch watch = sk.watch(WatchOptions.board("team-1").prefix("plan/"))) {
      for (BlackboardEvent event : watch) {                     // resumes across restarts
        System.out.println(event.getType() + " " + event.getEntry().getKey() + " @" + event.getRevision());
      }
    }
  }
}
