// Command agent is a tiny example agent: it keeps its conversation in a
// statekeeper session, asks for a context window that fits its model, answers
// (here: a canned echo instead of a model call) and announces progress on the
// team blackboard.
//
//	STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev go run ./examples/agent
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

func main() {
	addr := os.Getenv("STATEKEEPER_ADDR")
	if addr == "" {
		addr = "127.0.0.1:50051"
	}
	c, err := statekeeper.Dial(addr, statekeeper.WithAPIKey(os.Getenv("STATEKEEPER_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	created, err := c.Sessions.CreateSession(ctx, &sk.CreateSessionRequest{
		Session: &sk.Session{UserId: "alice", AgentId: "example-agent-go"},
	})
	if err != nil {
		log.Fatalf("create session: %v", err)
	}
	id := created.Session.SessionId

	for _, question := range []string{"Hello!", "What can you remember?"} {
		if _, err := c.Sessions.AppendMessages(ctx, &sk.AppendMessagesRequest{
			SessionId: id, Messages: []*sk.SessionMessage{{Role: sk.Role_ROLE_USER, Content: question}},
		}); err != nil {
			log.Fatalf("append: %v", err)
		}
		window, err := c.Sessions.GetContextWindow(ctx, &sk.GetContextWindowRequest{
			SessionId: id, TokenBudget: 8192, ReservedOutputTokens: 1024,
			SystemPrompt: "You are a helpful agent.",
		})
		if err != nil {
			log.Fatalf("context window: %v", err)
		}
		// A real agent sends window.Messages to its model here.
		answer := fmt.Sprintf("(echo) %s [%d messages, %d tokens in context]",
			question, len(window.Messages), window.Accounting.GetTotalTokens())
		if _, err := c.Sessions.AppendMessages(ctx, &sk.AppendMessagesRequest{
			SessionId: id, Messages: []*sk.SessionMessage{{Role: sk.Role_ROLE_ASSISTANT, Content: answer}},
		}); err != nil {
			log.Fatalf("append: %v", err)
		}
		fmt.Println("agent:", answer)
	}

	status, _ := structpb.NewStruct(map[string]any{"session": id, "state": "done"})
	_, err = c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
		Board: "team", Key: "agents/example-agent-go", WriterAgentId: "example-agent-go",
		Value: &sk.BlackboardValue{Kind: &sk.BlackboardValue_Json{Json: status}},
	})
	switch {
	case statekeeper.IsUnimplemented(err):
		fmt.Println("blackboard not available on this server yet:", err)
	case err != nil:
		log.Fatalf("blackboard: %v", err)
	default:
		fmt.Println("announced on the blackboard")
	}
}
