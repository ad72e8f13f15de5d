package statekeeper_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// TestWatchResumeRevisionWithinATransaction: the events of a transaction
// share a revision and arrive in one response; ResumeRevision checkpointed
// after the first of them must not skip the others (a Watch from it delivers
// them all), and after the last it continues past the revision.
func TestWatchResumeRevisionWithinATransaction(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	var ops []*sk.TxnOp
	for _, k := range []string{"t/1", "t/2", "t/3"} {
		ops = append(ops, &sk.TxnOp{Op: &sk.TxnOp_PutEntry{PutEntry: &sk.TxnPut{Key: k, Value: jsonValue(map[string]any{"k": k})}}})
	}
	txn, err := c.Blackboard.Txn(ctx, &sk.TxnRequest{Board: "tx", Success: ops})
	if err != nil {
		t.Fatal(err)
	}
	rev := txn.GetHeader().GetRevision()
	w := c.Watch(ctx, "tx", statekeeper.WatchOptions{Prefix: "t/", StartRevision: rev})
	defer w.Close()
	var checkpoints []int64
	for ev, err := range w.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetRevision() != rev {
			t.Fatalf("event at revision %d, want %d", ev.GetRevision(), rev)
		}
		checkpoints = append(checkpoints, w.ResumeRevision())
		if len(checkpoints) == 3 {
			break
		}
	}
	if checkpoints[0] > rev || checkpoints[1] > rev || checkpoints[2] != rev+1 {
		t.Fatalf("ResumeRevision after each event of revision %d: %v, want <= %d until the last, then %d",
			rev, checkpoints, rev, rev+1)
	}
	// A watch from the checkpoint after the first event delivers the other two.
	w2 := c.Watch(ctx, "tx", statekeeper.WatchOptions{Prefix: "t/", StartRevision: checkpoints[0]})
	defer w2.Close()
	seen := map[string]bool{}
	for ev, err := range w2.Events() {
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.GetEntry().GetKey()] = true
		if seen["t/2"] && seen["t/3"] {
			break
		}
	}
}

// TestWatchRelistSurvivesUnavailable: a re-list after a compaction that
// fails UNAVAILABLE (a server restart outlasting the unary retries) backs off
// and lists again instead of ending the watch.
func TestWatchRelistSurvivesUnavailable(t *testing.T) {
	srv := startServer(t)
	var lists atomic.Int32
	// The first two ListEntries calls fail as during a restart.
	failLists := statekeeper.WithDialOptions(grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if method == sk.BlackboardService_ListEntries_FullMethodName && lists.Add(1) <= 2 {
				return status.Error(codes.Unavailable, "server restarting")
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}))
	c := srv.dial(t, failLists, statekeeper.WithRetryPolicy(statekeeper.RetryPolicy{
		MaxAttempts: 1, InitialBackoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
	}))
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	var last int64
	for i := range 3 {
		resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
			Board: "r", Key: fmt.Sprintf("x/%d", i), Value: jsonValue(map[string]any{"i": i}),
		})
		if err != nil {
			t.Fatal(err)
		}
		last = resp.GetHeader().GetRevision()
	}
	if _, err := c.Blackboard.CompactBlackboard(ctx, &sk.CompactBlackboardRequest{Revision: last}); err != nil {
		t.Fatal(err)
	}
	var relisted *statekeeper.Relisting
	var reconnects atomic.Int32
	w := c.Watch(ctx, "r", statekeeper.WatchOptions{
		StartRevision: 1,
		OnCompacted: func(_ context.Context, r *statekeeper.Relisting) error {
			relisted = r
			return nil
		},
		OnReconnect: func(err error, attempt int, _ time.Duration) {
			t.Logf("reconnect %d after %v", attempt, err)
			reconnects.Add(1)
		},
	})
	defer w.Close()
	if first, err := w.Recv(); err != nil || first.GetStarted() == nil {
		t.Fatalf("first message after the relisting: %v, %v", first, err)
	}
	if relisted == nil || len(relisted.Entries) != 3 {
		t.Fatalf("relisting %+v", relisted)
	}
	if n := lists.Load(); n < 3 || reconnects.Load() < 2 {
		t.Fatalf("%d ListEntries calls, %d reconnects: want the two failed ones retried", n, reconnects.Load())
	}
}

// TestConsumerExtendsQueuedDeliveries: with more deliveries in flight than
// handlers, those waiting for a handler longer than the visibility timeout
// keep their lease: each message is handled once, on its first delivery, and
// acked OK.
func TestConsumerExtendsQueuedDeliveries(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(2*time.Minute))
	defer cancel()
	const agent, total = "queued", 6
	const visibility = 2 * time.Second
	ids := map[string]bool{}
	for i := range total {
		ids[send(ctx, t, c, agent, i, nil)] = true
	}
	log := newInboxLog()
	log.t = t
	var statuses sync.Map
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, agent, func(ctx context.Context, d *sk.Delivery) error {
			log.handle(d)
			select {
			case <-time.After(visibility / 2):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, statekeeper.ConsumerOptions{
			MaxInFlight:       total,
			Concurrency:       1,
			VisibilityTimeout: visibility,
			OnSettled: func(s statekeeper.Settlement) {
				statuses.Store(s.Delivery.GetMessage().GetMessageId(), s.Status)
				log.settled(s)
			},
		})
	}()
	waitFor(ctx, t, "every message acked", func() bool {
		n := 0
		statuses.Range(func(any, any) bool { n++; return true })
		return n >= total
	})
	stop()
	if err := <-consumed; err != nil {
		t.Fatalf("Consume returned %v", err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for id := range ids {
		if runs := log.handled[id]; len(runs) != 1 || runs[0] != 1 {
			t.Errorf("message %s: handler runs with delivery counts %v, want one run of delivery 1", id, runs)
		}
		if s, _ := statuses.Load(id); s != sk.ReceiptStatus_RECEIPT_STATUS_OK {
			t.Errorf("message %s settled %v, want OK", id, s)
		}
	}
}

// TestConsumerNackDelayGrows: the nack delay doubles with the delivery count,
// so a failing handler does not burn max_deliveries at once.
func TestConsumerNackDelayGrows(t *testing.T) {
	srv := startServer(t)
	var mu sync.Mutex
	var delays []time.Duration
	record := statekeeper.WithDialOptions(grpc.WithChainUnaryInterceptor(
		func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if r, ok := req.(*sk.NackMessagesRequest); ok {
				mu.Lock()
				delays = append(delays, r.GetDelay().AsDuration())
				mu.Unlock()
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}))
	c := srv.dial(t, record)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	send(ctx, t, c, "failing", 1, nil)
	acked := make(chan int32, 1)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, "failing", func(_ context.Context, d *sk.Delivery) error {
			if d.GetDeliveryCount() <= 3 {
				return errors.New("fails")
			}
			return nil
		}, statekeeper.ConsumerOptions{
			NackDelay: 200 * time.Millisecond,
			OnSettled: func(s statekeeper.Settlement) {
				if s.Acked {
					acked <- s.Delivery.GetDeliveryCount()
				}
			},
		})
	}()
	select {
	case n := <-acked:
		if n != 4 {
			t.Fatalf("acked delivery %d, want 4", n)
		}
	case <-ctx.Done():
		t.Fatal("the message was never acked")
	}
	stop()
	if err := <-consumed; err != nil {
		t.Fatalf("Consume returned %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}
	if fmt.Sprint(delays) != fmt.Sprint(want) {
		t.Fatalf("nack delays %v, want %v", delays, want)
	}
}

// TestConsumerReconnectTimeoutCountsFromTheBreak: an idle consumer (the
// server sends nothing on an idle inbox) survives a restart, then another
// one long after: the ReconnectTimeout counts from the second break, not
// from the first.
func TestConsumerReconnectTimeoutCountsFromTheBreak(t *testing.T) {
	srv := startServer(t)
	began := time.Now()
	srv.restart()
	restart := time.Since(began) // how long a restart takes on this machine
	budget := 3*restart + 2*time.Second
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(3*time.Minute)+4*budget)
	defer cancel()
	var reconnects atomic.Int32
	acked := make(chan string, 4)
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	consumed := make(chan error, 1)
	go func() {
		consumed <- c.Consume(cctx, "idle", func(context.Context, *sk.Delivery) error { return nil },
			statekeeper.ConsumerOptions{
				ReconnectTimeout: budget,
				Backoff:          statekeeper.RetryPolicy{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 300 * time.Millisecond},
				OnReconnect: func(err error, attempt int, _ time.Duration) {
					t.Logf("reconnect %d after %v", attempt, err)
					reconnects.Add(1)
				},
				OnSettled: func(s statekeeper.Settlement) { acked <- s.Delivery.GetMessage().GetMessageId() },
			})
	}()
	waitAcked := func(i int) {
		id := send(ctx, t, c, "idle", i, nil)
		select {
		case got := <-acked:
			if got != id {
				t.Fatalf("acked %s, want %s", got, id)
			}
		case err := <-consumed:
			t.Fatalf("Consume returned %v", err)
		case <-ctx.Done():
			t.Fatalf("message %d never acked", i)
		}
	}
	waitAcked(1)
	srv.restart()
	waitFor(ctx, t, "a reconnect", func() bool { return reconnects.Load() > 0 })
	time.Sleep(budget + time.Second) // idle: no delivery on the new stream
	srv.restart()
	waitAcked(2)
	stop()
	if err := <-consumed; err != nil {
		t.Fatalf("Consume returned %v", err)
	}
}
