// Command conformance runs the statekeeper conformance scenario (see
// clients/CONFORMANCE.md) against a live server.
//
//	STATEKEEPER_ADDR=127.0.0.1:50051 STATEKEEPER_API_KEY=sk-dev go run ./cmd/conformance
//
// A step whose service answers UNIMPLEMENTED is skipped, unless the service
// is named in STATEKEEPER_REQUIRE (comma separated, or "all"). Exits 1 if a
// step failed.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

const (
	language = "go"
	budget   = 4096
	reserve  = 256
)

var state = []byte(`{"step":1,"plan":["fetch","summarize"]}`)

type report struct {
	required                map[string]bool
	passed, failed, skipped int
	start                   time.Time
}

func (r *report) run(step, service string, body func(ctx context.Context) (string, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	start := time.Now()
	note, err := body(ctx)
	ms := time.Since(start).Milliseconds()
	switch {
	case err == nil:
		r.passed++
		fmt.Printf("  [PASS] %s (%d ms) %s\n", step, ms, note)
	case statekeeper.IsUnimplemented(err) && !r.required[service] && !r.required["all"]:
		r.skipped++
		capability := err.Error()
		if info := statekeeper.ErrorInfo(err); info != nil && info.Metadata["capability"] != "" {
			capability = info.Metadata["capability"]
		}
		fmt.Printf("  [SKIP] %s: %s service answers UNIMPLEMENTED (%s)\n", step, service, capability)
	default:
		r.failed++
		fmt.Printf("  [FAIL] %s (%d ms): %v\n", step, ms, err)
	}
}

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func conversation() []*sk.SessionMessage {
	return []*sk.SessionMessage{
		{Role: sk.Role_ROLE_USER, Content: "What is the weather in Paris?"},
		{Role: sk.Role_ROLE_ASSISTANT, ToolCalls: []*sk.ToolCall{
			{Id: "call-1", Name: "get_weather", Arguments: `{"city":"Paris"}`},
		}},
		{Role: sk.Role_ROLE_TOOL, ToolCallId: "call-1", Content: `{"temp_c":21}`},
		{Role: sk.Role_ROLE_ASSISTANT, Content: "It is 21 degrees in Paris."},
	}
}

func main() {
	addr := env("STATEKEEPER_ADDR", "127.0.0.1:50051")
	apiKey := os.Getenv("STATEKEEPER_API_KEY")
	r := &report{required: map[string]bool{}, start: time.Now()}
	for _, s := range strings.Split(os.Getenv("STATEKEEPER_REQUIRE"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			r.required[s] = true
		}
	}
	run := language + "-" + randomHex()
	user, agent := "conf-user-"+run, "conf-agent-"+run
	execution, board := "conf-exec-"+run, "conf-board-"+run
	sender, receiver := "conf-sender-"+run, "conf-receiver-"+run
	sessionID := ""

	fmt.Printf("conformance %s against %s\n", language, addr)
	var c *statekeeper.Client
	r.run("connect", "connect", func(ctx context.Context) (string, error) {
		var err error
		dialOptions := []statekeeper.Option{statekeeper.WithAPIKey(apiKey)}
		if t := statekeeper.TLSOptionsFromEnv(); t != nil {
			dialOptions = append(dialOptions, statekeeper.WithTLSOptions(*t))
		}
		c, err = statekeeper.Dial(addr, dialOptions...)
		if err != nil {
			return "", err
		}
		c.Conn.Connect()
		return "addr=" + addr, nil
	})
	if r.failed > 0 {
		finish(r)
	}
	defer c.Close()

	r.run("health", "health", func(ctx context.Context) (string, error) {
		resp, err := c.Health.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return "", err
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			return "", fmt.Errorf("health status %v", resp.Status)
		}
		return resp.Status.String(), nil
	})

	r.run("create_session", "session", func(ctx context.Context) (string, error) {
		resp, err := c.Sessions.CreateSession(ctx, &sk.CreateSessionRequest{
			Session: &sk.Session{UserId: user, AgentId: agent},
		})
		if err != nil {
			return "", err
		}
		if resp.Session.GetSessionId() == "" || resp.Session.GetVersion() != 1 {
			return "", fmt.Errorf("unexpected session %v", resp.Session)
		}
		sessionID = resp.Session.SessionId
		return "session_id=" + sessionID, nil
	})

	r.run("append_messages", "session", func(ctx context.Context) (string, error) {
		if sessionID == "" {
			return "", fmt.Errorf("no session (create_session failed)")
		}
		resp, err := c.Sessions.AppendMessages(ctx, &sk.AppendMessagesRequest{
			SessionId: sessionID, Messages: conversation(), RequestId: "append-" + run,
		})
		if err != nil {
			return "", err
		}
		if len(resp.Messages) != 4 || resp.Session.GetMessageCount() != 4 {
			return "", fmt.Errorf("%d messages appended, message_count %d", len(resp.Messages), resp.Session.GetMessageCount())
		}
		return fmt.Sprintf("version=%d", resp.Session.GetVersion()), nil
	})

	r.run("context_window", "session", func(ctx context.Context) (string, error) {
		if sessionID == "" {
			return "", fmt.Errorf("no session (create_session failed)")
		}
		resp, err := c.Sessions.GetContextWindow(ctx, &sk.GetContextWindowRequest{
			SessionId: sessionID, TokenBudget: budget, ReservedOutputTokens: reserve,
			SystemPrompt: "You are a conformance test agent.",
		})
		if err != nil {
			return "", err
		}
		total := resp.Accounting.GetTotalTokens()
		if total > budget-reserve {
			return "", fmt.Errorf("total_tokens %d > budget %d - reserve %d", total, budget, reserve)
		}
		if len(resp.Messages) != 4 {
			return "", fmt.Errorf("%d messages in window", len(resp.Messages))
		}
		return fmt.Sprintf("total_tokens=%d messages=%d", total, len(resp.Messages)), nil
	})

	r.run("episode_record_recall", "memory", func(ctx context.Context) (string, error) {
		importance := float32(0.9)
		teal := &sk.RecordEpisodeRequest{
			UserId: user, SessionId: sessionID,
			UserMessage:       "My favourite colour is teal.",
			AssistantResponse: "Noted: your favourite colour is teal.",
			Importance:        &importance,
		}
		// One RecordEpisodes call: the episode, then the same interaction again.
		rec, err := c.Memory.RecordEpisodes(ctx, &sk.RecordEpisodesRequest{
			Episodes: []*sk.RecordEpisodeRequest{teal, teal},
		})
		if err != nil {
			return "", err
		}
		if n := len(rec.Results); n != 2 {
			return "", fmt.Errorf("%d results for 2 episodes", n)
		}
		first, second := rec.Results[0], rec.Results[1]
		if first.Status != sk.RecordEpisodeStatus_RECORD_EPISODE_STATUS_CREATED {
			return "", fmt.Errorf("first item: status %v", first.Status)
		}
		id := first.Result.GetEpisode().GetId()
		if id == "" {
			return "", fmt.Errorf("no episode id")
		}
		if second.Status != sk.RecordEpisodeStatus_RECORD_EPISODE_STATUS_DUPLICATE ||
			second.Result.GetDuplicateOf() != id {
			return "", fmt.Errorf("second item: status %v, duplicate_of %q", second.Status,
				second.Result.GetDuplicateOf())
		}
		got, err := c.Memory.Recall(ctx, &sk.RecallRequest{
			UserId: user, Query: &sk.RecallRequest_QueryText{QueryText: "favourite colour"}, TopK: 5,
		})
		if err != nil {
			return "", err
		}
		for _, res := range got.Results {
			if res.Episode.GetId() == id {
				return "episode_id=" + id, nil
			}
		}
		return "", fmt.Errorf("episode %s not recalled", id)
	})

	r.run("checkpoint_save_get", "checkpoint", func(ctx context.Context) (string, error) {
		saved, err := c.Checkpoints.SaveCheckpoint(ctx, &sk.SaveCheckpointRequest{
			Checkpoint: &sk.Checkpoint{
				ExecutionId: execution, Step: 1, StepName: "plan",
				State: &sk.Payload{ContentType: "application/json", SchemaVersion: 1, Data: state},
			},
		})
		if err != nil {
			return "", err
		}
		got, err := c.Checkpoints.GetCheckpoint(ctx, &sk.GetCheckpointRequest{ExecutionId: execution})
		if err != nil {
			return "", err
		}
		if got.Checkpoint.GetCheckpointId() != saved.CheckpointId {
			return "", fmt.Errorf("latest is %s, saved %s", got.Checkpoint.GetCheckpointId(), saved.CheckpointId)
		}
		if string(got.Checkpoint.GetState().GetData()) != string(state) {
			return "", fmt.Errorf("state differs")
		}
		return "checkpoint_id=" + saved.CheckpointId, nil
	})

	r.run("blackboard_watch", "blackboard", func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := c.Blackboard.Watch(ctx, &sk.WatchRequest{
			Board: board, Selector: &sk.WatchRequest_Prefix{Prefix: "plan/"},
		})
		if err != nil {
			return "", err
		}
		first, err := stream.Recv()
		if err != nil {
			return "", err
		}
		if first.GetStarted() == nil {
			return "", fmt.Errorf("first response is not `started`: %v", first)
		}
		value, _ := structpb.NewStruct(map[string]any{"status": "done"})
		put, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
			Board: board, Key: "plan/step-3", WriterAgentId: agent,
			Value: &sk.BlackboardValue{Kind: &sk.BlackboardValue_Json{Json: value}},
		})
		if err != nil {
			return "", err
		}
		revision := put.Header.GetRevision()
		for {
			resp, err := stream.Recv()
			if err != nil {
				return "", fmt.Errorf("watch ended without the event: %w", err)
			}
			for _, ev := range resp.GetEvents().GetEvents() {
				if ev.GetEntry().GetKey() != "plan/step-3" {
					continue
				}
				if ev.Type != sk.BlackboardEventType_BLACKBOARD_EVENT_TYPE_PUT || ev.Revision != revision {
					return "", fmt.Errorf("event %v, put revision %d", ev, revision)
				}
				return fmt.Sprintf("revision=%d resume_revision=%d", revision, resp.ResumeRevision), nil
			}
		}
	})

	r.run("message_send_receive", "message", func(ctx context.Context) (string, error) {
		sent, err := c.Messages.SendMessage(ctx, &sk.SendMessageRequest{
			FromAgent: sender, ToAgent: receiver, Type: "conformance.ping",
			Payload: &sk.Payload{ContentType: "text/plain", Data: []byte("ping")},
		})
		if err != nil {
			return "", err
		}
		pulled, err := c.Messages.PullMessages(ctx, &sk.PullMessagesRequest{
			AgentId: receiver, MaxMessages: 1, WaitTimeout: durationpb.New(5 * time.Second),
		})
		if err != nil {
			return "", err
		}
		if len(pulled.Deliveries) != 1 || pulled.Deliveries[0].Message.GetMessageId() != sent.MessageId {
			return "", fmt.Errorf("expected message %s, got %v", sent.MessageId, pulled.Deliveries)
		}
		if string(pulled.Deliveries[0].Message.GetPayload().GetData()) != "ping" {
			return "", fmt.Errorf("payload differs")
		}
		acked, err := c.Messages.AckMessages(ctx, &sk.AckMessagesRequest{
			ReceiptHandles: []string{pulled.Deliveries[0].ReceiptHandle},
		})
		if err != nil {
			return "", err
		}
		if len(acked.Results) != 1 || acked.Results[0].Status != sk.ReceiptStatus_RECEIPT_STATUS_OK {
			return "", fmt.Errorf("ack results %v", acked.Results)
		}
		return "message_id=" + sent.MessageId, nil
	})

	r.run("watch_resume", "blackboard", func(ctx context.Context) (string, error) {
		return watchResume(ctx, c, board+"-resume", agent)
	})

	r.run("inbox_consumer", "message", func(ctx context.Context) (string, error) {
		return inboxConsumer(ctx, c, receiver+"-consumer", sender)
	})

	finish(r)
}

// watchResume uses the Watch helper: a watch from a put's revision delivers
// it, and a second watch from the first one's ResumeRevision delivers the
// next put first (nothing repeated, nothing missed).
func watchResume(ctx context.Context, c *statekeeper.Client, board, agent string) (string, error) {
	put := func(key string) (int64, error) {
		value, _ := structpb.NewStruct(map[string]any{"key": key})
		resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
			Board: board, Key: key, WriterAgentId: agent,
			Value: &sk.BlackboardValue{Kind: &sk.BlackboardValue_Json{Json: value}},
		})
		return resp.GetHeader().GetRevision(), err
	}
	nextEvent := func(w *statekeeper.Watcher) (*sk.BlackboardEvent, error) {
		for ev, err := range w.Events() {
			return ev, err
		}
		return nil, fmt.Errorf("watch ended: %v", w.Err())
	}
	first, err := put("plan/a")
	if err != nil {
		return "", err
	}
	w := c.Watch(ctx, board, statekeeper.WatchOptions{Prefix: "plan/", StartRevision: first})
	ev, err := nextEvent(w)
	w.Close()
	if err != nil {
		return "", err
	}
	if ev.GetRevision() != first || ev.GetEntry().GetKey() != "plan/a" {
		return "", fmt.Errorf("first event %v, want plan/a at %d", ev, first)
	}
	resume := w.ResumeRevision()
	if resume != first+1 {
		return "", fmt.Errorf("resume revision %d after revision %d", resume, first)
	}
	second, err := put("plan/b")
	if err != nil {
		return "", err
	}
	w2 := c.Watch(ctx, board, statekeeper.WatchOptions{Prefix: "plan/", StartRevision: resume})
	defer w2.Close()
	ev, err = nextEvent(w2)
	if err != nil {
		return "", err
	}
	if ev.GetRevision() != second || ev.GetEntry().GetKey() != "plan/b" {
		return "", fmt.Errorf("resumed watch began with %v, want plan/b at %d", ev, second)
	}
	return fmt.Sprintf("revisions=%d,%d resume_revision=%d", first, second, resume), nil
}

// inboxConsumer uses the inbox consumer: three messages, the second failing
// its first delivery (nacked, delivered again), all acked in the end.
func inboxConsumer(ctx context.Context, c *statekeeper.Client, inbox, sender string) (string, error) {
	ids := map[string]bool{}
	for i := range 3 {
		headers := map[string]string{}
		if i == 1 {
			headers["fail-first"] = "1"
		}
		sent, err := c.Messages.SendMessage(ctx, &sk.SendMessageRequest{
			FromAgent: sender, ToAgent: inbox, Type: "conformance.job", Headers: headers,
			Payload: &sk.Payload{ContentType: "text/plain", Data: []byte(fmt.Sprint(i))},
		})
		if err != nil {
			return "", err
		}
		ids[sent.MessageId] = true
	}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	acked, redelivered := map[string]bool{}, 0
	var settleErr error
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, inbox, func(_ context.Context, d *sk.Delivery) error {
			if d.GetMessage().GetHeaders()["fail-first"] != "" && d.GetDeliveryCount() == 1 {
				return fmt.Errorf("first delivery fails")
			}
			return nil
		}, statekeeper.ConsumerOptions{OnSettled: func(s statekeeper.Settlement) {
			mu.Lock()
			defer mu.Unlock()
			if s.Err != nil {
				settleErr = s.Err
				return
			}
			if s.Acked && s.Status == sk.ReceiptStatus_RECEIPT_STATUS_OK {
				acked[s.Delivery.GetMessage().GetMessageId()] = true
				if s.Delivery.GetDeliveryCount() > 1 {
					redelivered++
				}
			}
			if len(acked) == len(ids) {
				stop()
			}
		}})
	}()
	select {
	case err := <-consumed:
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			return "", err
		}
		if settleErr != nil {
			return "", settleErr
		}
		for id := range ids {
			if !acked[id] {
				return "", fmt.Errorf("message %s not acked", id)
			}
		}
		if redelivered != 1 {
			return "", fmt.Errorf("%d redelivered messages acked, want 1 (the nacked one)", redelivered)
		}
		return fmt.Sprintf("acked=%d redelivered=%d", len(acked), redelivered), nil
	case <-ctx.Done():
		stop()
		<-consumed
		mu.Lock()
		defer mu.Unlock()
		return "", fmt.Errorf("%d of %d messages acked before the step's deadline", len(acked), len(ids))
	}
}

func finish(r *report) {
	fmt.Printf("conformance %s: %d passed, %d failed, %d skipped (%d ms)\n",
		language, r.passed, r.failed, r.skipped, time.Since(r.start).Milliseconds())
	if r.failed > 0 {
		os.Exit(1)
	}
	os.Exit(0)
}
