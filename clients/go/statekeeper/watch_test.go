package statekeeper_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// jsonValue is a JSON blackboard value (m holds JSON-compatible values only).
func jsonValue(m map[string]any) *sk.BlackboardValue {
	v, err := structpb.NewStruct(m)
	if err != nil {
		panic(err)
	}
	return &sk.BlackboardValue{Kind: &sk.BlackboardValue_Json{Json: v}}
}

// eventLog collects what a Watcher delivers, for assertions from the test.
type eventLog struct {
	mu        sync.Mutex
	revisions []int64
	keys      map[string]int
	changed   chan struct{}
}

func newEventLog() *eventLog {
	return &eventLog{keys: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (l *eventLog) add(ev *sk.BlackboardEvent) {
	l.mu.Lock()
	l.revisions = append(l.revisions, ev.GetRevision())
	l.keys[ev.GetEntry().GetKey()]++
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

func (l *eventLog) snapshot() ([]int64, map[string]int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make(map[string]int, len(l.keys))
	for k, v := range l.keys {
		keys[k] = v
	}
	return append([]int64(nil), l.revisions...), keys
}

// waitFor polls cond until it holds or ctx ends (then the test fails).
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestWatchResumesAcrossServerRestarts kills the server (SIGKILL) and starts
// it again several times while a writer puts keys and a Watcher reads the
// board: every revision is delivered exactly once, in order, none missed.
func TestWatchResumesAcrossServerRestarts(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t, statekeeper.WithTimeout(scaled(10*time.Second)))
	ctx, cancel := context.WithTimeout(context.Background(), scaled(4*time.Minute))
	defer cancel()
	const board, writes, restarts = "restarts", 80, 4

	var reconnects, slow atomic.Int64
	var progress atomic.Int64
	log := newEventLog()
	var w *statekeeper.Watcher
	w = c.Watch(ctx, board, statekeeper.WatchOptions{
		Prefix:           "k/",
		StartRevision:    1,
		ProgressInterval: 200 * time.Millisecond,
		Backoff:          statekeeper.RetryPolicy{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		ReconnectTimeout: scaled(2 * time.Minute),
		OnReconnect: func(err error, attempt int, pause time.Duration) {
			reconnects.Add(1)
			if errors.Is(err, statekeeper.ErrSlowConsumer) {
				slow.Add(1)
			}
		},
		OnProgress: func(revision int64) { progress.Store(revision) },
	})
	defer w.Close()
	watchDone := make(chan error, 1)
	go func() {
		for ev, err := range w.Events() {
			if err != nil {
				watchDone <- err
				return
			}
			log.add(ev)
		}
		watchDone <- nil
	}()

	// The writer retries a put that failed while the server was down; a put
	// applied whose reply was lost is applied again: one more revision, which
	// the watch must deliver like any other.
	var lastWrite atomic.Int64
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; i < writes && ctx.Err() == nil; i++ {
			for ctx.Err() == nil {
				wctx, wcancel := context.WithTimeout(ctx, scaled(5*time.Second))
				_, err := c.Blackboard.PutEntry(wctx, &sk.PutEntryRequest{
					Board: board, Key: fmt.Sprintf("k/%03d", i), Value: jsonValue(map[string]any{"i": i}),
				})
				wcancel()
				if err == nil {
					lastWrite.Store(int64(i + 1))
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	for r := 1; r <= restarts; r++ {
		target := int64(r * writes / (restarts + 1))
		waitFor(ctx, t, fmt.Sprintf("%d writes before restart %d", target, r), func() bool {
			return lastWrite.Load() >= target
		})
		// Each kill cuts a live stream: the watch has delivered a put made on
		// the current server run.
		var probe int64
		waitFor(ctx, t, "a probe put", func() bool {
			resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
				Board: board, Key: fmt.Sprintf("k/probe-%d", r), Value: jsonValue(nil),
			})
			probe = resp.GetHeader().GetRevision()
			return err == nil
		})
		waitFor(ctx, t, fmt.Sprintf("the watch to deliver revision %d before restart %d", probe, r), func() bool {
			revs, _ := log.snapshot()
			return len(revs) > 0 && revs[len(revs)-1] >= probe
		})
		srv.restart()
	}
	select {
	case <-writerDone:
	case <-ctx.Done():
		t.Fatal("writer did not finish")
	}
	if lastWrite.Load() != writes {
		t.Fatalf("writer stopped after %d of %d writes", lastWrite.Load(), writes)
	}
	var final int64
	waitFor(ctx, t, "the board's revision", func() bool {
		resp, err := c.Blackboard.ListEntries(ctx, &sk.ListEntriesRequest{Board: board, KeysOnly: true})
		if err != nil {
			return false
		}
		final = resp.GetHeader().GetRevision()
		return true
	})
	waitFor(ctx, t, fmt.Sprintf("the watch to reach revision %d", final), func() bool {
		revs, _ := log.snapshot()
		return len(revs) > 0 && revs[len(revs)-1] >= final
	})
	// The board is quiet now: progress notifications bookmark the end.
	waitFor(ctx, t, "a progress notification at the last revision", func() bool {
		return progress.Load() >= final
	})
	w.Close()
	if err := <-watchDone; err != nil {
		t.Fatalf("watch ended with %v", err)
	}

	revs, keys := log.snapshot()
	if int64(len(revs)) != final {
		t.Errorf("%d events for revisions 1..%d", len(revs), final)
	}
	for i, rev := range revs {
		if rev != int64(i+1) {
			t.Fatalf("event %d has revision %d, want %d (missed, repeated or out of order): %v", i, rev, i+1, revs)
		}
	}
	for i := range writes {
		if key := fmt.Sprintf("k/%03d", i); keys[key] == 0 {
			t.Errorf("no event for %s", key)
		}
	}
	if got := w.ResumeRevision(); got != final+1 {
		t.Errorf("ResumeRevision %d, want %d", got, final+1)
	}
	if w.StreamsOpened() < restarts+1 || reconnects.Load() < restarts {
		t.Errorf("%d streams opened, %d reconnects for %d restarts", w.StreamsOpened(), reconnects.Load(), restarts)
	}
	if !errors.Is(w.Err(), context.Canceled) {
		t.Errorf("Err() after Close = %v", w.Err())
	}
	t.Logf("%d revisions, %d streams, %d reconnects (%d slow consumer), %d server runs",
		final, w.StreamsOpened(), reconnects.Load(), slow.Load(), srv.runs)
}

// TestWatchResumeRevisionContinuesWithoutRepeat: a second Watch from the
// first one's ResumeRevision starts exactly after what the first delivered.
func TestWatchResumeRevisionContinuesWithoutRepeat(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	put := func(key string) int64 {
		resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
			Board: "b", Key: key, Value: jsonValue(map[string]any{"k": key}),
		})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetHeader().GetRevision()
	}
	first := put("a/1")
	put("a/2")
	w := c.Watch(ctx, "b", statekeeper.WatchOptions{Prefix: "a/", StartRevision: first})
	next, stop := iterPull(w)
	for want := first; want < first+2; want++ {
		ev, err := next()
		if err != nil || ev.GetRevision() != want {
			t.Fatalf("event %v, %v; want revision %d", ev, err, want)
		}
	}
	stop()
	resume := w.ResumeRevision()
	if resume != first+2 {
		t.Fatalf("ResumeRevision %d, want %d", resume, first+2)
	}
	third := put("a/3")
	w2 := c.Watch(ctx, "b", statekeeper.WatchOptions{Prefix: "a/", StartRevision: resume})
	defer w2.Close()
	next2, stop2 := iterPull(w2)
	defer stop2()
	ev, err := next2()
	if err != nil || ev.GetRevision() != third || ev.GetEntry().GetKey() != "a/3" {
		t.Fatalf("first event of the resumed watch %v, %v; want a/3 at %d", ev, err, third)
	}
}

// iterPull reads a Watcher's events one at a time (a response may carry
// several revisions).
func iterPull(w *statekeeper.Watcher) (func() (*sk.BlackboardEvent, error), func()) {
	var pending []*sk.BlackboardEvent
	return func() (*sk.BlackboardEvent, error) {
		for len(pending) == 0 {
			resp, err := w.Recv()
			if err != nil {
				return nil, err
			}
			pending = resp.GetEvents().GetEvents()
		}
		ev := pending[0]
		pending = pending[1:]
		return ev, nil
	}, w.Close
}

// TestWatchCompactedRelistsThenWatches: a watch from a compacted revision
// ends with ErrRevisionCompacted, or with OnCompacted re-lists the board and
// continues after the listing.
func TestWatchCompactedRelistsThenWatches(t *testing.T) {
	srv := startServer(t)
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(time.Minute))
	defer cancel()
	var last int64
	for i := range 5 {
		resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
			Board: "c", Key: fmt.Sprintf("x/%d", i), Value: jsonValue(map[string]any{"i": i}),
		})
		if err != nil {
			t.Fatal(err)
		}
		last = resp.GetHeader().GetRevision()
	}
	if _, err := c.Blackboard.CompactBlackboard(ctx, &sk.CompactBlackboardRequest{Revision: last}); err != nil {
		t.Fatal(err)
	}

	plain := c.Watch(ctx, "c", statekeeper.WatchOptions{StartRevision: 1})
	var err error
	for err == nil {
		_, err = plain.Recv()
	}
	var e *statekeeper.Error
	if !errors.Is(err, statekeeper.ErrRevisionCompacted) || !errors.As(err, &e) ||
		e.Code != codes.OutOfRange || e.Metadata["oldest_revision"] == "" {
		t.Fatalf("watch from a compacted revision ended with %#v", err)
	}

	var relisted *statekeeper.Relisting
	w := c.Watch(ctx, "c", statekeeper.WatchOptions{
		StartRevision: 1,
		OnCompacted: func(_ context.Context, r *statekeeper.Relisting) error {
			relisted = r
			return nil
		},
	})
	defer w.Close()
	// The first message is the `started` of the stream after the relisting.
	if first, err := w.Recv(); err != nil || first.GetStarted() == nil {
		t.Fatalf("first message with OnCompacted: %v, %v", first, err)
	}
	next, stop := iterPull(w)
	defer stop()
	resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{Board: "c", Key: "x/new", Value: jsonValue(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := next()
	if err != nil {
		t.Fatalf("watch with OnCompacted: %v", err)
	}
	if relisted == nil || len(relisted.Entries) != 5 || relisted.Revision < last ||
		!errors.Is(relisted.Cause, statekeeper.ErrRevisionCompacted) {
		t.Fatalf("relisting %+v", relisted)
	}
	if ev.GetRevision() != resp.GetHeader().GetRevision() || ev.GetEntry().GetKey() != "x/new" {
		t.Fatalf("first event after the relisting %v, want x/new at %d", ev, resp.GetHeader().GetRevision())
	}
}

// TestWatchSlowConsumer: a reader that falls more than the server's buffer
// behind gets SLOW_CONSUMER: surfaced as ErrSlowConsumer with
// StopOnSlowConsumer, else reported to OnReconnect and resumed without a gap.
func TestWatchSlowConsumer(t *testing.T) {
	srv := startServer(t, "--limit", "blackboard.watch_buffer_responses=2")
	c := srv.dial(t)
	ctx, cancel := context.WithTimeout(context.Background(), scaled(2*time.Minute))
	defer cancel()
	big := strings.Repeat("x", 64<<10)
	var last int64
	// Writes more than the transport's flow-control windows hold while the
	// watch is not read, so that the server's buffer overflows.
	flood := func(board string) {
		for i := range 60 {
			resp, err := c.Blackboard.PutEntry(ctx, &sk.PutEntryRequest{
				Board: board, Key: fmt.Sprintf("k/%02d", i), Value: jsonValue(map[string]any{"pad": big}),
			})
			if err != nil {
				t.Fatal(err)
			}
			last = resp.GetHeader().GetRevision()
		}
	}

	stopping := c.Watch(ctx, "s1", statekeeper.WatchOptions{StartRevision: 1, StopOnSlowConsumer: true})
	defer stopping.Close()
	if first, err := stopping.Recv(); err != nil || first.GetStarted() == nil {
		t.Fatalf("first message %v, %v", first, err)
	}
	flood("s1")
	var err error
	for err == nil {
		_, err = stopping.Recv()
	}
	if !errors.Is(err, statekeeper.ErrSlowConsumer) || statekeeper.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a watch that fell behind ended with %v, want SLOW_CONSUMER", err)
	}

	var slow atomic.Int64
	w := c.Watch(ctx, "s2", statekeeper.WatchOptions{
		StartRevision: last + 1,
		OnReconnect: func(err error, _ int, _ time.Duration) {
			if errors.Is(err, statekeeper.ErrSlowConsumer) {
				slow.Add(1)
			}
		},
	})
	defer w.Close()
	if first, err := w.Recv(); err != nil || first.GetStarted() == nil {
		t.Fatalf("first message %v, %v", first, err)
	}
	start := last + 1
	flood("s2")
	next, stop := iterPull(w)
	defer stop()
	for want := start; want <= last; want++ {
		ev, err := next()
		if err != nil {
			t.Fatalf("resuming watch: %v", err)
		}
		if ev.GetRevision() != want {
			t.Fatalf("event at revision %d, want %d (missed or repeated)", ev.GetRevision(), want)
		}
	}
	if slow.Load() == 0 {
		t.Fatal("no SLOW_CONSUMER reported to OnReconnect")
	}
}
