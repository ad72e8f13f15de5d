package statekeeper

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// WatchOptions say what a Watch delivers and how it recovers.
type WatchOptions struct {
	// Prefix or Pattern (a glob) selects the keys; both empty: every key.
	Prefix  string
	Pattern string
	// StartRevision is the first revision delivered (0: changes after now).
	StartRevision int64
	// InitialSnapshot sends the matching entries first (snapshot_begin,
	// snapshot_chunk..., snapshot_end). A stream broken inside the snapshot
	// starts again with a new snapshot.
	InitialSnapshot bool
	// PrevValue makes events carry the entry as it was before the change.
	PrevValue bool
	// ProgressInterval asks for a progress notification when nothing was
	// sent for that long (0: none). Progress moves ResumeRevision on a quiet
	// board.
	ProgressInterval time.Duration
	// EventTypes delivers only these kinds (empty: all).
	EventTypes []sk.BlackboardEventType

	// Backoff is the pause between reconnects (zero: the client's policy;
	// its MaxAttempts is not used, see MaxReconnects).
	Backoff RetryPolicy
	// ReconnectTimeout bounds the time spent reconnecting without a working
	// stream (one that delivered a message): after it the watch ends with the
	// last error. 0: DefaultReconnectTimeout (60 s); negative: no bound (until
	// the context ends).
	ReconnectTimeout time.Duration
	// OnReconnect is called before each reconnect with the error that broke
	// the stream (UNAVAILABLE, an end of stream, or RESOURCE_EXHAUSTED
	// SLOW_CONSUMER: errors.Is(err, ErrSlowConsumer)), the number of this
	// reconnect in a row and the pause before it.
	OnReconnect func(err error, attempt int, pause time.Duration)
	// StopOnSlowConsumer ends the watch with the SLOW_CONSUMER error instead
	// of resuming (the default resumes: the server's guarantee is that
	// resuming from ResumeRevision repeats and misses nothing).
	StopOnSlowConsumer bool
	// OnProgress is called with the revision of each progress notification.
	OnProgress func(revision int64)
	// OnCompacted handles OUT_OF_RANGE (REVISION_COMPACTED): the revisions
	// to replay are gone, so the watch lists the matching keys (all pages, at
	// one revision), hands the listing to OnCompacted, and continues from
	// Relisting.Revision + 1, missing nothing after the listing. An error
	// from OnCompacted ends the watch with it. Nil: the watch ends with the
	// OUT_OF_RANGE error (errors.Is(err, ErrRevisionCompacted)); do the same
	// by hand with Client.ListAllEntries and a new Watch from its revision + 1.
	OnCompacted func(ctx context.Context, relisting *Relisting) error
}

// DefaultReconnectTimeout is how long a Watch reconnects without a working
// stream before it gives up, unless WatchOptions.ReconnectTimeout says
// otherwise.
const DefaultReconnectTimeout = 60 * time.Second

// Relisting is the state of the board after a compaction cut a watch off.
type Relisting struct {
	// Entries are the matching entries at Revision, by key.
	Entries []*sk.BlackboardEntry
	// Revision is the listing's revision; the watch continues after it.
	Revision int64
	// OldestRevision is the oldest revision still available.
	OldestRevision int64
	// Cause is the OUT_OF_RANGE error that ended the stream.
	Cause error
}

// Watcher is a blackboard Watch that resumes where it stopped: every
// response carries a resume revision, and when the stream breaks (server
// restart, lost connection, a switch to another replica, SLOW_CONSUMER) the
// Watcher opens a new stream from it after a backoff, so that no event is
// missed or repeated. Read it with Recv (every stream message) or Events
// (the events only). Not safe for concurrent readers.
type Watcher struct {
	client *Client
	board  string
	opts   WatchOptions
	ctx    context.Context
	cancel context.CancelFunc

	stream       sk.BlackboardService_WatchClient
	streamCancel context.CancelFunc
	failures     int
	brokenSince  time.Time
	pause        time.Duration

	mu              sync.Mutex
	resume          int64
	snapshotPending bool
	streams         int
	err             error

	// pending are the events of the last response that Events has not
	// yielded yet, and pendingResume that response's resume point.
	pending       []*sk.BlackboardEvent
	pendingResume int64
}

// Watch starts a resuming watch of board. It ends when ctx is done, Close is
// called, or on an error it cannot resume from (returned by Recv).
//
//	w := c.Watch(ctx, "team-1", statekeeper.WatchOptions{Prefix: "plan/", StartRevision: 1})
//	defer w.Close()
//	for ev, err := range w.Events() {
//		if err != nil { return err }
//		fmt.Println(ev.Type, ev.Entry.Key, ev.Revision)
//	}
func (c *Client) Watch(ctx context.Context, board string, opts WatchOptions) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	if opts.Backoff == (RetryPolicy{}) {
		opts.Backoff = c.retry
	}
	if opts.ReconnectTimeout == 0 {
		opts.ReconnectTimeout = DefaultReconnectTimeout
	}
	return &Watcher{
		client: c, board: board, opts: opts, ctx: ctx, cancel: cancel,
		resume: opts.StartRevision, snapshotPending: opts.InitialSnapshot,
	}
}

// ResumeRevision is the start revision that continues this watch right after
// the last message received (a new Watch from it repeats nothing). While
// Events yields the events of one response, it does not pass the revision of
// the event last yielded until every event of that revision was yielded (a
// transaction's events share a revision): checkpointed after any event, it
// may repeat events of that revision but never misses one.
func (w *Watcher) ResumeRevision() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.resume
}

// StreamsOpened counts the streams opened so far (1 + reconnects).
func (w *Watcher) StreamsOpened() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.streams
}

// Err is the error that ended the watch (nil while it runs; the context's
// error when it ended by cancellation or Close).
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Close ends the watch; a Recv in progress returns.
func (w *Watcher) Close() { w.cancel() }

func (w *Watcher) request() *sk.WatchRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	req := &sk.WatchRequest{
		Board:           w.board,
		StartRevision:   w.resume,
		InitialSnapshot: w.snapshotPending,
		PrevValue:       w.opts.PrevValue,
		EventTypes:      w.opts.EventTypes,
	}
	switch {
	case w.opts.Prefix != "":
		req.Selector = &sk.WatchRequest_Prefix{Prefix: w.opts.Prefix}
	case w.opts.Pattern != "":
		req.Selector = &sk.WatchRequest_Pattern{Pattern: w.opts.Pattern}
	}
	if w.opts.ProgressInterval > 0 {
		req.ProgressNotifyInterval = durationpb.New(w.opts.ProgressInterval)
	}
	return req
}

func (w *Watcher) observe(resp *sk.WatchResponse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if resp.GetSnapshotEnd() != nil {
		w.snapshotPending = false
	}
	if w.snapshotPending {
		// A snapshot cannot be resumed half way: a broken stream starts
		// again with a new snapshot from the original start revision.
		return
	}
	if resp.GetResumeRevision() > 0 {
		w.resume = resp.GetResumeRevision()
	} else if s := resp.GetStarted(); s != nil && s.GetStartRevision() > 0 {
		w.resume = s.GetStartRevision()
	}
}

func (w *Watcher) end(err error) error {
	w.closeStream()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
	return w.err
}

func (w *Watcher) closeStream() {
	if w.streamCancel != nil {
		w.streamCancel()
	}
	w.stream, w.streamCancel = nil, nil
}

// resumable says whether a broken stream is reopened.
func (w *Watcher) resumable(err error) bool {
	if errors.Is(err, io.EOF) {
		return true // the server ended the stream without a status
	}
	switch Code(err) {
	case codes.Unavailable:
		return true
	case codes.ResourceExhausted:
		return errors.Is(err, ErrSlowConsumer) && !w.opts.StopOnSlowConsumer
	}
	return false
}

// Recv returns the next message of the watch (started, snapshot, events,
// progress), reconnecting as needed. After the watch ended it keeps
// returning the error that ended it.
func (w *Watcher) Recv() (*sk.WatchResponse, error) {
	if err := w.Err(); err != nil {
		return nil, err
	}
	for {
		if w.ctx.Err() != nil {
			return nil, w.end(w.ctx.Err())
		}
		if w.stream == nil {
			if !sleep(w.ctx, w.pause) {
				return nil, w.end(w.ctx.Err())
			}
			w.pause = 0
			sctx, scancel := context.WithCancel(w.ctx)
			stream, err := w.client.Blackboard.Watch(sctx, w.request())
			if err != nil {
				scancel()
				if err := w.broken(err); err != nil {
					return nil, err
				}
				continue
			}
			w.stream, w.streamCancel = stream, scancel
			w.mu.Lock()
			w.streams++
			w.mu.Unlock()
		}
		resp, err := w.stream.Recv()
		if err == nil {
			w.failures = 0
			w.brokenSince = time.Time{}
			w.observe(resp)
			if p := resp.GetProgress(); p != nil && w.opts.OnProgress != nil {
				w.opts.OnProgress(p.GetRevision())
			}
			return resp, nil
		}
		w.closeStream()
		if err := w.broken(err); err != nil {
			return nil, err
		}
	}
}

// broken decides what follows a stream error: nil to reconnect (after
// w.pause), else the error that ends the watch.
func (w *Watcher) broken(err error) error {
	if w.ctx.Err() != nil {
		return w.end(w.ctx.Err())
	}
	if errors.Is(err, ErrRevisionCompacted) || Code(err) == codes.OutOfRange {
		if w.opts.OnCompacted == nil {
			return w.end(err)
		}
		return w.relist(err)
	}
	if !w.resumable(err) {
		return w.end(err)
	}
	return w.backoff(err)
}

// backoff counts a failure to reconnect after: nil to reconnect after
// w.pause, or the error that ends the watch when ReconnectTimeout is spent.
func (w *Watcher) backoff(err error) error {
	w.failures++
	if w.brokenSince.IsZero() {
		w.brokenSince = time.Now()
	}
	w.pause = w.opts.Backoff.Backoff(w.failures)
	if w.opts.ReconnectTimeout > 0 && time.Since(w.brokenSince)+w.pause > w.opts.ReconnectTimeout {
		return w.end(err)
	}
	if w.opts.OnReconnect != nil {
		w.opts.OnReconnect(err, w.failures, w.pause)
	}
	return nil
}

// relist lists the board after a compaction and continues after the listing.
func (w *Watcher) relist(cause error) error {
	req := &sk.ListEntriesRequest{Board: w.board}
	switch {
	case w.opts.Prefix != "":
		req.Selector = &sk.ListEntriesRequest_Prefix{Prefix: w.opts.Prefix}
	case w.opts.Pattern != "":
		req.Selector = &sk.ListEntriesRequest_Pattern{Pattern: w.opts.Pattern}
	}
	entries, header, err := w.client.ListAllEntries(w.ctx, req)
	if err != nil {
		if w.ctx.Err() != nil {
			return w.end(w.ctx.Err())
		}
		// A server restart (UNAVAILABLE after the unary retries) or a
		// compaction between the pages: like a broken stream, back off and
		// reopen the watch, which is cut off again and lists again.
		if w.resumable(err) || errors.Is(err, ErrRevisionCompacted) || Code(err) == codes.OutOfRange {
			return w.backoff(err)
		}
		return w.end(err)
	}
	relisting := &Relisting{
		Entries: entries, Revision: header.GetRevision(),
		OldestRevision: header.GetOldestRevision(), Cause: cause,
	}
	if err := w.opts.OnCompacted(w.ctx, relisting); err != nil {
		return w.end(err)
	}
	w.mu.Lock()
	w.resume = relisting.Revision + 1
	w.snapshotPending = false
	w.mu.Unlock()
	w.failures, w.pause, w.brokenSince = 0, 0, time.Time{}
	return nil
}

// Events yields the events of the watch in revision order, each once. The
// iteration ends without an error when the watch's context is done or Close
// is called, and with (nil, err) on an error the watch cannot resume from.
func (w *Watcher) Events() iter.Seq2[*sk.BlackboardEvent, error] {
	return func(yield func(*sk.BlackboardEvent, error) bool) {
		for {
			for len(w.pending) > 0 {
				ev := w.pending[0]
				w.pending = w.pending[1:]
				w.yielding(ev)
				if !yield(ev, nil) {
					return
				}
			}
			resp, err := w.Recv()
			if err != nil {
				if w.ctx.Err() == nil || !errors.Is(err, w.ctx.Err()) {
					yield(nil, err)
				}
				return
			}
			w.pending = resp.GetEvents().GetEvents()
			if len(w.pending) > 0 {
				w.mu.Lock()
				w.pendingResume = w.resume
				w.mu.Unlock()
			}
		}
	}
}

// yielding sets the resume revision for the moment ev, the next event of
// w.pending's response, is yielded: ev's revision while events of that
// revision follow, else past it (the response's resume point after its last
// event).
func (w *Watcher) yielding(ev *sk.BlackboardEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snapshotPending {
		return
	}
	switch {
	case len(w.pending) == 0:
		w.resume = w.pendingResume
	case w.pending[0].GetRevision() == ev.GetRevision():
		w.resume = ev.GetRevision()
	default:
		w.resume = ev.GetRevision() + 1
	}
}

// ListAllEntries lists every page of a ListEntries request (all at the revision of
// the first page) and returns the entries and the first page's header; a
// Watch from header.Revision + 1 continues the listing without a gap.
func (c *Client) ListAllEntries(ctx context.Context, req *sk.ListEntriesRequest) ([]*sk.BlackboardEntry, *sk.BlackboardHeader, error) {
	var entries []*sk.BlackboardEntry
	var header *sk.BlackboardHeader
	page := proto.Clone(req).(*sk.ListEntriesRequest)
	for {
		resp, err := c.Blackboard.ListEntries(ctx, page)
		if err != nil {
			return nil, nil, err
		}
		if header == nil {
			header = resp.GetHeader()
		}
		entries = append(entries, resp.GetEntries()...)
		if resp.GetNextPageToken() == "" {
			return entries, header, nil
		}
		page.PageToken = resp.GetNextPageToken()
	}
}
