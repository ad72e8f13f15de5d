package statekeeper_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// attempts counts the calls that reach the transport, per method (the
// client's own interceptor runs first, so each retry is one more call here).
type attempts struct {
	mu sync.Mutex
	n  map[string]int
}

func (a *attempts) option() statekeeper.Option {
	a.n = map[string]int{}
	return statekeeper.WithDialOptions(grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			a.mu.Lock()
			a.n[method]++
			a.mu.Unlock()
			return invoker(ctx, method, req, reply, cc, opts...)
		}))
}

func (a *attempts) of(method string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n[method]
}

var fastRetry = statekeeper.RetryPolicy{MaxAttempts: 5, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}

// Against a stopped server: reads and receipt operations are retried,
// mutations without an idempotency key are not (unless marked Idempotent).
func TestOnlySafeCallsAreRetried(t *testing.T) {
	srv := startServer(t)
	var count attempts
	c := srv.dial(t, statekeeper.WithRetryPolicy(fastRetry), count.option())
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	srv.kill()

	_, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{Board: "b", Key: "k", Value: jsonValue(nil)})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("PutEntry on a stopped server: %v", err)
	}
	if n := count.of("/statekeeper.v1.BlackboardService/PutEntry"); n != 1 {
		t.Errorf("PutEntry (no idempotency key) attempted %d times", n)
	}
	_, err = c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{Board: "b", Key: "k", Value: jsonValue(nil)},
		statekeeper.Idempotent())
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("PutEntry on a stopped server: %v", err)
	}
	if n := count.of("/statekeeper.v1.BlackboardService/PutEntry"); n != 1+fastRetry.MaxAttempts {
		t.Errorf("PutEntry marked Idempotent: %d attempts in all, want 1 + %d", n, fastRetry.MaxAttempts)
	}
	_, err = c.Blackboard.GetEntry(ctx, &sk.GetEntryRequest{Board: "b", Key: "k"})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("GetEntry on a stopped server: %v", err)
	}
	if n := count.of("/statekeeper.v1.BlackboardService/GetEntry"); n != fastRetry.MaxAttempts {
		t.Errorf("GetEntry attempted %d times, want %d", n, fastRetry.MaxAttempts)
	}
	_, err = c.Messages.AckMessages(ctx, &sk.AckMessagesRequest{ReceiptHandles: []string{"x"}})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("AckMessages on a stopped server: %v", err)
	}
	if n := count.of("/statekeeper.v1.MessageService/AckMessages"); n != fastRetry.MaxAttempts {
		t.Errorf("AckMessages attempted %d times, want %d", n, fastRetry.MaxAttempts)
	}
}

// A mutation with an idempotency key is retried across a server restart: the
// client sets request_id once, and the message is stored once.
func TestKeyedMutationIsRetriedAcrossARestart(t *testing.T) {
	srv := startServer(t)
	var count attempts
	c := srv.dial(t, count.option(),
		statekeeper.WithTimeout(scaled(2*time.Minute)),
		statekeeper.WithRetryPolicy(statekeeper.RetryPolicy{
			MaxAttempts: 1000, InitialBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond,
		}))
	ctx, cancel := context.WithTimeout(context.Background(), scaled(3*time.Minute))
	defer cancel()
	srv.kill()

	type result struct {
		resp *sk.SendMessageResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Messages.SendMessage(ctx, &sk.SendMessageRequest{ToAgent: "inbox", Type: "t"})
		done <- result{resp, err}
	}()
	const method = "/statekeeper.v1.MessageService/SendMessage"
	waitFor(ctx, t, "a failed SendMessage attempt", func() bool { return count.of(method) >= 2 })
	srv.start()
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("SendMessage did not return")
	}
	if r.err != nil {
		t.Fatalf("SendMessage after the restart: %v", r.err)
	}
	pulled, err := c.Messages.PullMessages(ctx, &sk.PullMessagesRequest{AgentId: "inbox", MaxMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(pulled.GetDeliveries()) != 1 {
		t.Fatalf("%d messages stored, want 1", len(pulled.GetDeliveries()))
	}
	m := pulled.GetDeliveries()[0].GetMessage()
	if m.GetMessageId() != r.resp.GetMessageId() || len(m.GetRequestId()) != 32 {
		t.Fatalf("stored %v, sent %v", m, r.resp)
	}
}

// A call without a deadline of its own gets the client's default one: the
// server bounds a long-poll by the call deadline, so a one-hour wait returns
// (empty) instead of hanging.
func TestDefaultDeadline(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t, statekeeper.WithTimeout(time.Second))
	type result struct {
		resp *sk.PullMessagesResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Messages.PullMessages(context.Background(), &sk.PullMessagesRequest{
			AgentId: "nobody", WaitTimeout: durationpb.New(time.Hour),
		})
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		if code := status.Code(r.err); (code != codes.OK && code != codes.DeadlineExceeded) || len(r.resp.GetDeliveries()) != 0 {
			t.Fatalf("a one-hour pull under a one-second default deadline: %v, %v", r.resp, r.err)
		}
	case <-time.After(scaled(time.Minute)):
		t.Fatal("a one-hour pull without a deadline of its own did not end: no default deadline")
	}
	// RequestReply waits for a reply until the call deadline: DEADLINE_EXCEEDED.
	_, err := c.Messages.RequestReply(context.Background(), &sk.RequestReplyRequest{
		FromAgent: "asker", ToAgent: "nobody", Timeout: durationpb.New(time.Hour),
	})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a request nobody answers, under a one-second default deadline: %v", err)
	}
}

func TestServerErrorsAreTyped(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	put, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{Board: "b", Key: "k", Value: jsonValue(nil)})
	if err != nil {
		t.Fatal(err)
	}
	create := int64(0)
	_, err = c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
		Board: "b", Key: "k", Value: jsonValue(nil), ExpectedModRevision: &create,
	})
	var e *statekeeper.Error
	if !errors.Is(err, statekeeper.ErrRevisionMismatch) || !errors.As(err, &e) {
		t.Fatalf("create of an existing key: %v", err)
	}
	if e.Code != codes.FailedPrecondition || e.Metadata["current_revision"] == "" ||
		e.Reason != sk.ErrorReason_ERROR_REASON_REVISION_MISMATCH {
		t.Fatalf("error %+v (put at %d)", e, put.GetHeader().GetRevision())
	}
	_, err = c.Sessions.GetSession(ctx, &sk.GetSessionRequest{SessionId: "no-such-session"})
	if !errors.Is(err, statekeeper.ErrNotFound) || status.Code(err) != codes.NotFound {
		t.Fatalf("unknown session: %v", err)
	}
	_, err = c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{Board: "b", Value: jsonValue(nil)})
	if !errors.Is(err, statekeeper.ErrInvalidField) || statekeeper.AsError(err).Metadata["field"] != "key" {
		t.Fatalf("put without a key: %v", err)
	}
}
