package statekeeper_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// inboxLog records handler runs and settlements by message id.
type inboxLog struct {
	mu       sync.Mutex
	handled  map[string][]int32 // delivery counts of each handler run
	acked    map[string]bool    // acked with OK or ALREADY_ACKED
	nacked   map[string]int
	settleEr []error
	t        *testing.T
}

func newInboxLog() *inboxLog {
	return &inboxLog{handled: map[string][]int32{}, acked: map[string]bool{}, nacked: map[string]int{}}
}

func (l *inboxLog) handle(d *sk.Delivery) {
	if l.t != nil {
		l.t.Logf("handling %s (delivery %d)", d.GetMessage().GetMessageId(), d.GetDeliveryCount())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	id := d.GetMessage().GetMessageId()
	l.handled[id] = append(l.handled[id], d.GetDeliveryCount())
}

func (l *inboxLog) settled(s statekeeper.Settlement) {
	if l.t != nil {
		l.t.Logf("settled %s: acked %v status %v err %v", s.Delivery.GetMessage().GetMessageId(), s.Acked, s.Status, s.Err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	id := s.Delivery.GetMessage().GetMessageId()
	if s.Err != nil {
		l.settleEr = append(l.settleEr, s.Err)
	}
	ok := s.Status == sk.ReceiptStatus_RECEIPT_STATUS_OK || s.Status == sk.ReceiptStatus_RECEIPT_STATUS_ALREADY_ACKED
	switch {
	case s.Acked && s.Err == nil && ok:
		l.acked[id] = true
	case !s.Acked:
		l.nacked[id]++ // settled or not (a nack lost to the restart is redelivered after the visibility timeout)
	}
}

func (l *inboxLog) ackedCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// send stores a message, retrying (with the same request_id, so at most one
// is stored) until the server takes it.
func send(ctx context.Context, t *testing.T, c *statekeeper.Client, to string, i int, headers map[string]string) string {
	t.Helper()
	var id string
	waitFor(ctx, t, fmt.Sprintf("message %d sent", i), func() bool {
		resp, err := c.Messages.SendMessage(ctx, &sk.SendMessageRequest{
			FromAgent: "test", ToAgent: to, Type: "job",
			Payload: &sk.Payload{ContentType: "text/plain", Data: []byte(fmt.Sprint(i))},
			Headers: headers, RequestId: fmt.Sprintf("%s-%d", to, i),
		})
		id = resp.GetMessageId()
		return err == nil
	})
	return id
}

// assertInboxEmpty checks that nothing is left to deliver once every
// visibility timeout has passed.
func assertInboxEmpty(ctx context.Context, t *testing.T, c *statekeeper.Client, agent string, visibility time.Duration) {
	t.Helper()
	resp, err := c.Messages.PullMessages(ctx, &sk.PullMessagesRequest{
		AgentId: agent, MaxMessages: 10, WaitTimeout: durationpb.New(visibility + 2*time.Second),
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetDeliveries()); n != 0 {
		t.Fatalf("%d messages left in %s after every message was acked: %v", n, agent, resp.GetDeliveries())
	}
}

// TestConsumerAcksEveryMessageAcrossARestart: a consumer handles and acks
// every message although the server is killed (SIGKILL) and restarted in the
// middle; a nacked message is delivered again and then acked.
func TestConsumerAcksEveryMessageAcrossARestart(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t, statekeeper.WithTimeout(scaled(10*time.Second)))
	ctx, cancel := context.WithTimeout(context.Background(), scaled(3*time.Minute))
	defer cancel()
	const agent, total = "worker", 30
	const visibility = 3 * time.Second

	ids := map[string]bool{}
	failFirst := map[string]bool{}
	for i := range total {
		headers := map[string]string{}
		if i%5 == 0 {
			headers["fail-first"] = "1"
		}
		id := send(ctx, t, c, agent, i, headers)
		ids[id] = true
		if headers["fail-first"] != "" {
			failFirst[id] = true
		}
	}

	log := newInboxLog()
	log.t = t
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, agent, func(ctx context.Context, d *sk.Delivery) error {
			log.handle(d)
			// The first run of its handler fails (usually delivery 1; a later one
			// when the lease of delivery 1 lapsed during the restart, as the
			// consumer does not handle a delivery whose receipt went stale).
			log.mu.Lock()
			firstRun := len(log.handled[d.GetMessage().GetMessageId()]) == 1
			log.mu.Unlock()
			if d.GetMessage().GetHeaders()["fail-first"] != "" && firstRun {
				return errors.New("first attempt fails")
			}
			select {
			case <-time.After(50 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, statekeeper.ConsumerOptions{
			MaxInFlight:       4,
			VisibilityTimeout: visibility,
			Backoff:           statekeeper.RetryPolicy{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
			OnSettled:         log.settled,
			OnReconnect: func(err error, attempt int, _ time.Duration) {
				t.Logf("consumer reconnect %d after %v", attempt, err)
			},
		})
	}()

	waitFor(ctx, t, "a third of the messages acked", func() bool {
		select {
		case err := <-consumed:
			t.Fatalf("Consume returned %v", err)
		default:
		}
		return log.ackedCount() >= total/3
	})
	srv.restart()
	// Sent after the restart: the consumer's new stream gets them.
	for i := total; i < total+5; i++ {
		ids[send(ctx, t, c, agent, i, nil)] = true
	}
	for log.ackedCount() < len(ids) {
		select {
		case err := <-consumed:
			t.Fatalf("Consume returned %v before every message was acked", err)
		case <-ctx.Done():
			log.mu.Lock()
			t.Fatalf("timed out: %d of %d messages acked, %d handled; settle errors: %v",
				len(log.acked), len(ids), len(log.handled), log.settleEr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	stop()
	select {
	case err := <-consumed:
		if err != nil {
			t.Fatalf("Consume returned %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Consume did not return after its context was cancelled")
	}

	log.mu.Lock()
	for id := range ids {
		if !log.acked[id] {
			t.Errorf("message %s not acked", id)
		}
		if len(log.handled[id]) == 0 {
			t.Errorf("message %s never handled", id)
		}
	}
	for id := range log.acked {
		if !ids[id] {
			t.Errorf("acked an unknown message %s", id)
		}
	}
	for id := range failFirst {
		runs := log.handled[id]
		if len(runs) < 2 || runs[len(runs)-1] <= runs[0] {
			t.Errorf("nacked message %s: handler runs with delivery counts %v, want a redelivery", id, runs)
		}
		if log.nacked[id] < 1 {
			t.Errorf("message %s was not nacked", id)
		}
	}
	log.mu.Unlock()
	assertInboxEmpty(ctx, t, c, agent, visibility)
}

// TestConsumerExtendsVisibilityWhileHandling: a handler that runs for longer
// than the visibility timeout keeps its delivery (no second delivery while it
// runs), and its ack is accepted.
func TestConsumerExtendsVisibilityWhileHandling(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(2*time.Minute))
	defer cancel()
	const visibility = 2 * time.Second
	id := send(ctx, t, c, "slow", 1, nil)

	log := newInboxLog()
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, "slow", func(ctx context.Context, d *sk.Delivery) error {
			log.handle(d)
			select {
			case <-time.After(3 * visibility):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, statekeeper.ConsumerOptions{
			VisibilityTimeout: visibility,
			Concurrency:       2, // a redelivery would be handled at once
			OnSettled:         log.settled,
			OnExtendError: func(d *sk.Delivery, err error) {
				t.Errorf("extension failed: %v", err)
			},
		})
	}()
	waitFor(ctx, t, "the slow message acked", func() bool { return log.ackedCount() == 1 })
	stop()
	if err := <-consumed; err != nil {
		t.Fatalf("Consume returned %v", err)
	}
	log.mu.Lock()
	runs := log.handled[id]
	log.mu.Unlock()
	if len(runs) != 1 || runs[0] != 1 {
		t.Fatalf("handler runs with delivery counts %v, want one run", runs)
	}
	assertInboxEmpty(ctx, t, c, "slow", visibility)
}

// TestConsumerDeadLetters: DeadLetter(err) moves the message to the
// dead-letter list at once, with the error as its reason.
func TestConsumerDeadLetters(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	id := send(ctx, t, c, "poison", 1, nil)

	settled := make(chan statekeeper.Settlement, 1)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, "poison", func(context.Context, *sk.Delivery) error {
			return statekeeper.DeadLetter(errors.New("cannot parse"))
		}, statekeeper.ConsumerOptions{OnSettled: func(s statekeeper.Settlement) { settled <- s }})
	}()
	var s statekeeper.Settlement
	select {
	case s = <-settled:
	case <-ctx.Done():
		t.Fatal("no settlement")
	}
	stop()
	if err := <-consumed; err != nil {
		t.Fatalf("Consume returned %v", err)
	}
	if s.Acked || !s.DeadLettered || s.Err != nil || s.Status != sk.ReceiptStatus_RECEIPT_STATUS_DEAD_LETTERED {
		t.Fatalf("settlement %+v", s)
	}
	dead, err := c.Messages.ListDeadLetters(ctx, &sk.ListDeadLettersRequest{AgentId: "poison"})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead.GetDeadLetters()) != 1 || dead.GetDeadLetters()[0].GetMessage().GetMessageId() != id {
		t.Fatalf("dead letters %v, want message %s", dead.GetDeadLetters(), id)
	}
}
