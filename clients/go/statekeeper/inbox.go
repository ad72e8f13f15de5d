package statekeeper

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// Handler handles one delivery of an inbox message. Returning nil acks the
// message (it is removed for good); an error nacks it (it is delivered again,
// after ConsumerOptions.NackDelay); DeadLetter(err) nacks it to the
// dead-letter list at once. Delivery is at least once: a handler must
// tolerate a message it has already seen (d.DeliveryCount > 1).
type Handler func(ctx context.Context, d *sk.Delivery) error

type deadLetterError struct{ err error }

func (e deadLetterError) Error() string {
	if e.err == nil {
		return "dead letter"
	}
	return "dead letter: " + e.err.Error()
}
func (e deadLetterError) Unwrap() error { return e.err }

// DeadLetter wraps a handler's error so that the message goes to the inbox's
// dead-letter list instead of being redelivered (a poison message); the
// error's text is recorded as the reason.
func DeadLetter(err error) error { return deadLetterError{err: err} }

// Settlement reports how a delivery was settled after its handler ran.
type Settlement struct {
	Delivery *sk.Delivery
	// HandlerErr is what the handler returned (nil: the message was acked).
	HandlerErr error
	// Acked is true for an ack, false for a nack; DeadLettered for a nack to
	// the dead-letter list.
	Acked, DeadLettered bool
	// Status is the server's outcome for the receipt: OK, ALREADY_ACKED,
	// EXPIRED (the visibility timeout had passed: the message is or will be
	// delivered again), NOT_FOUND or DEAD_LETTERED. UNSPECIFIED when Err is
	// set.
	Status sk.ReceiptStatus
	// Err is the error of the ack/nack call itself, after retries.
	Err error
}

// ConsumerOptions tune Consume. Zero values take the defaults.
type ConsumerOptions struct {
	// MaxInFlight bounds the unsettled deliveries the server sends (0: the
	// server's default, 10). Deliveries waiting for a free handler keep their
	// visibility extended like those being handled.
	MaxInFlight int32
	// VisibilityTimeout is how long a delivery stays invisible to other
	// receivers (default 30 s); it is extended from its receipt until it is
	// settled (while it waits for a handler and while the handler runs).
	VisibilityTimeout time.Duration
	// ExtendEvery is how often the visibility of the deliveries held (waiting
	// or being handled) is extended by VisibilityTimeout (default
	// VisibilityTimeout / 3). A delivery whose visibility would end within
	// ExtendEvery when its handler starts is extended first; one the server
	// reports stale (EXPIRED, NOT_FOUND) is not handled (it is delivered
	// again).
	ExtendEvery time.Duration
	// Types receives only messages of these types (empty: all).
	Types []string
	// Concurrency is the number of handlers running at once (default 1:
	// messages are handled one at a time, in delivery order).
	Concurrency int
	// NackDelay is the pause before a nacked message is delivered again the
	// first time; it doubles with each further delivery (d.DeliveryCount),
	// up to MaxNackDelay, so that a failing handler does not burn the
	// inbox's max_deliveries at once. 0: 1 s; negative: no pause.
	NackDelay time.Duration
	// MaxNackDelay caps the growing nack delay (default 1 min).
	MaxNackDelay time.Duration
	// Backoff is the pause between reconnects of the receive stream (zero:
	// the client's policy; MaxAttempts is not used, see MaxReconnects).
	Backoff RetryPolicy
	// ReconnectTimeout bounds the time spent reconnecting since the receive
	// stream last worked (delivered a message, or stayed open for
	// StreamGrace): after it Consume returns the last error. 0: no bound (a
	// worker waits for its server until ctx ends).
	ReconnectTimeout time.Duration
	// StreamGrace is how long a receive stream must stay open to count as
	// working although it delivered nothing (an idle inbox): it resets the
	// reconnect backoff and ReconnectTimeout (default 1 s).
	StreamGrace time.Duration
	// OnReconnect is called before each reconnect with the error that broke
	// the stream (UNAVAILABLE, SLOW_CONSUMER, an end of stream).
	OnReconnect func(err error, attempt int, pause time.Duration)
	// SettleTimeout is how long an ack or nack is retried while the server
	// is unavailable (default 30 s).
	SettleTimeout time.Duration
	// OnSettled is called after each ack or nack (from handler goroutines).
	OnSettled func(Settlement)
	// OnExtendError is called when a visibility extension fails or reports
	// the receipt stale (the message may then be delivered again while its
	// handler still runs, or it is not handled if its handler had not
	// started).
	OnExtendError func(d *sk.Delivery, err error)
}

// maxReceiptHandles is the server's limit of receipt handles per call.
const maxReceiptHandles = 100

func (o ConsumerOptions) withDefaults(c *Client) ConsumerOptions {
	if o.VisibilityTimeout <= 0 {
		o.VisibilityTimeout = 30 * time.Second
	}
	if o.ExtendEvery <= 0 {
		o.ExtendEvery = o.VisibilityTimeout / 3
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 30 * time.Second
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	if o.NackDelay == 0 {
		o.NackDelay = time.Second
	}
	if o.MaxNackDelay <= 0 {
		o.MaxNackDelay = time.Minute
	}
	if o.StreamGrace <= 0 {
		o.StreamGrace = time.Second
	}
	if o.Backoff == (RetryPolicy{}) {
		o.Backoff = c.retry
	}
	return o
}

// nackDelay is the pause before the redelivery of a nacked delivery:
// NackDelay doubled with each delivery after the first, up to MaxNackDelay.
func (o ConsumerOptions) nackDelay(deliveryCount int32) time.Duration {
	if o.NackDelay <= 0 {
		return 0
	}
	d := o.NackDelay
	for i := int32(1); i < deliveryCount && d < o.MaxNackDelay; i++ {
		d *= 2
	}
	return min(d, o.MaxNackDelay)
}

// lease is a delivery received and not yet settled, with its visibility
// deadline as last extended.
type lease struct {
	d        *sk.Delivery
	deadline time.Time
}

// consumer is the state of one Consume call.
type consumer struct {
	c       *Client
	opts    ConsumerOptions
	handler Handler

	mu   sync.Mutex
	held map[string]*lease // by receipt handle
}

// Consume receives the inbox of agentID and runs handler for each delivery:
// nil acks, an error nacks (DeadLetter(err): to the dead-letter list), and the
// delivery's visibility is extended from its receipt until it is settled. The
// receive stream is reopened with backoff when it breaks (server restart,
// UNAVAILABLE, SLOW_CONSUMER); acks and nacks are retried while the receipt
// is valid. Consume returns nil when ctx is done (after the running handlers
// have finished and the deliveries not yet handled were given back), or the
// error it cannot recover from (e.g. INVALID_ARGUMENT, UNAUTHENTICATED).
//
//	err := c.Consume(ctx, "worker-1", func(ctx context.Context, d *sk.Delivery) error {
//		return process(d.Message)
//	}, statekeeper.ConsumerOptions{})
func (c *Client) Consume(ctx context.Context, agentID string, handler Handler, opts ConsumerOptions) error {
	opts = opts.withDefaults(c)
	k := &consumer{c: c, opts: opts, handler: handler, held: map[string]*lease{}}
	buffer := int(opts.MaxInFlight)
	if buffer <= 0 {
		buffer = 10
	}
	deliveries := make(chan *sk.Delivery, 2*buffer)
	var workers sync.WaitGroup
	for range opts.Concurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for d := range deliveries {
				if ctx.Err() != nil {
					k.giveBack(d)
					continue
				}
				k.handle(ctx, d)
			}
		}()
	}
	extendCtx, stopExtending := context.WithCancel(context.Background())
	extended := make(chan struct{})
	go func() {
		defer close(extended)
		k.extendLoop(extendCtx)
	}()
	err := k.receiveLoop(ctx, agentID, deliveries)
	close(deliveries)
	workers.Wait()
	stopExtending()
	<-extended
	return err
}

func (k *consumer) receiveLoop(ctx context.Context, agentID string, out chan<- *sk.Delivery) error {
	opts := k.opts
	req := &sk.ReceiveMessagesRequest{
		AgentId:           agentID,
		MaxInFlight:       opts.MaxInFlight,
		VisibilityTimeout: durationpb.New(opts.VisibilityTimeout),
		Types:             opts.Types,
	}
	failures := 0
	var brokenSince time.Time
	for {
		worked, err := k.receiveStream(ctx, req, out)
		if worked {
			// The run of failures is over: a later break starts a new one.
			failures, brokenSince = 0, time.Time{}
		}
		if ctx.Err() != nil {
			return nil
		}
		resumable := errors.Is(err, io.EOF) || Code(err) == codes.Unavailable ||
			errors.Is(err, ErrSlowConsumer)
		if !resumable {
			return err
		}
		failures++
		if brokenSince.IsZero() {
			brokenSince = time.Now()
		}
		pause := opts.Backoff.Backoff(failures)
		if opts.ReconnectTimeout > 0 && time.Since(brokenSince)+pause > opts.ReconnectTimeout {
			return err
		}
		if opts.OnReconnect != nil {
			opts.OnReconnect(err, failures, pause)
		}
		if !sleep(ctx, pause) {
			return nil
		}
	}
}

// receiveStream reads one stream until it breaks. worked says whether the
// stream worked: it delivered, or stayed open for StreamGrace (the server
// sends nothing on an idle inbox).
func (k *consumer) receiveStream(ctx context.Context, req *sk.ReceiveMessagesRequest, out chan<- *sk.Delivery) (worked bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := k.c.Messages.ReceiveMessages(sctx, req)
	if err != nil {
		return false, err
	}
	opened := time.Now()
	defer func() {
		if time.Since(opened) >= k.opts.StreamGrace {
			worked = true
		}
	}()
	for {
		resp, err := stream.Recv()
		if err != nil {
			return worked, err
		}
		worked = true
		for _, d := range resp.GetDeliveries() {
			k.hold(d)
			select {
			case out <- d:
			case <-ctx.Done():
				k.giveBack(d)
			}
		}
	}
}

func (k *consumer) hold(d *sk.Delivery) {
	l := &lease{d: d, deadline: time.Now().Add(k.opts.VisibilityTimeout)}
	if v := d.GetVisibilityDeadline(); v != nil && v.IsValid() {
		l.deadline = v.AsTime()
	}
	k.mu.Lock()
	k.held[d.GetReceiptHandle()] = l
	k.mu.Unlock()
}

// release forgets a delivery (settled, given back or stale); it returns its
// lease, nil if it was no longer held.
func (k *consumer) release(d *sk.Delivery) *lease {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.held[d.GetReceiptHandle()]
	delete(k.held, d.GetReceiptHandle())
	return l
}

// deadline is the visibility deadline of a held delivery (ok false: not
// held any more, its receipt is stale).
func (k *consumer) deadline(d *sk.Delivery) (time.Time, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.held[d.GetReceiptHandle()]
	if !ok {
		return time.Time{}, false
	}
	return l.deadline, true
}

// handle runs the handler of a held delivery, then settles it. A delivery
// whose visibility would end soon is extended first; one whose receipt is
// stale (its visibility ended while it waited: the server delivers it again)
// is not handled.
func (k *consumer) handle(ctx context.Context, d *sk.Delivery) {
	deadline, ok := k.deadline(d)
	if ok && time.Until(deadline) < k.opts.ExtendEvery {
		k.extend(ctx, []*sk.Delivery{d})
		deadline, ok = k.deadline(d)
		ok = ok && time.Now().Before(deadline)
	}
	if !ok {
		k.release(d)
		return
	}
	err := k.handler(ctx, d)
	k.settle(d, err)
}

// extendLoop extends the visibility of every held delivery every
// ExtendEvery until ctx ends.
func (k *consumer) extendLoop(ctx context.Context) {
	ticker := time.NewTicker(k.opts.ExtendEvery)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		k.mu.Lock()
		ds := make([]*sk.Delivery, 0, len(k.held))
		for _, l := range k.held {
			ds = append(ds, l.d)
		}
		k.mu.Unlock()
		k.extend(ctx, ds)
	}
}

// extend extends the visibility of deliveries (in calls of at most
// maxReceiptHandles), records the new deadlines, and forgets the receipts
// the server reports stale.
func (k *consumer) extend(ctx context.Context, ds []*sk.Delivery) {
	for len(ds) > 0 {
		batch := ds[:min(len(ds), maxReceiptHandles)]
		ds = ds[len(batch):]
		handles := make([]string, len(batch))
		for i, d := range batch {
			handles[i] = d.GetReceiptHandle()
		}
		cctx, cancel := context.WithTimeout(ctx, k.opts.ExtendEvery)
		resp, err := k.c.Messages.ExtendVisibility(cctx, &sk.ExtendVisibilityRequest{
			ReceiptHandles:    handles,
			VisibilityTimeout: durationpb.New(k.opts.VisibilityTimeout),
		})
		cancel()
		if err != nil {
			if ctx.Err() == nil && k.opts.OnExtendError != nil {
				for _, d := range batch {
					k.opts.OnExtendError(d, err)
				}
			}
			continue
		}
		byHandle := make(map[string]*sk.ReceiptResult, len(resp.GetResults()))
		for _, r := range resp.GetResults() {
			byHandle[r.GetReceiptHandle()] = r
		}
		for i, d := range batch {
			r := byHandle[d.GetReceiptHandle()]
			if r == nil && len(resp.GetResults()) == len(batch) {
				r = resp.GetResults()[i]
			}
			if r.GetStatus() == sk.ReceiptStatus_RECEIPT_STATUS_OK {
				if v := r.GetNextVisibleTime(); v != nil && v.IsValid() {
					k.mu.Lock()
					if l := k.held[d.GetReceiptHandle()]; l != nil {
						l.deadline = v.AsTime()
					}
					k.mu.Unlock()
				}
				continue
			}
			if r == nil {
				continue // no answer for it: the next round tries again
			}
			if k.release(d) != nil && k.opts.OnExtendError != nil {
				k.opts.OnExtendError(d, &receiptError{status: r.GetStatus()})
			}
		}
	}
}

type receiptError struct{ status sk.ReceiptStatus }

func (e *receiptError) Error() string { return "statekeeper: receipt " + e.status.String() }

// settle acks or nacks a handled delivery, retrying UNAVAILABLE (a server
// restart) for SettleTimeout, or until the receipt's visibility deadline (as
// last extended) if that is later.
func (k *consumer) settle(d *sk.Delivery, handlerErr error) {
	opts := k.opts
	s := Settlement{Delivery: d, HandlerErr: handlerErr, Acked: handlerErr == nil}
	var dl deadLetterError
	s.DeadLettered = errors.As(handlerErr, &dl)
	// An answer is wanted even after the receipt's visibility deadline: an
	// ack whose reply was lost to a restart answers ALREADY_ACKED when
	// repeated, and a late one EXPIRED (the message comes again).
	deadline := time.Now().Add(opts.SettleTimeout)
	if held, ok := k.deadline(d); ok && held.After(deadline) {
		deadline = held
	}
	defer k.release(d)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	handles := []string{d.GetReceiptHandle()}
	for attempt := 1; ; attempt++ {
		var results []*sk.ReceiptResult
		var err error
		if s.Acked {
			var resp *sk.AckMessagesResponse
			resp, err = k.c.Messages.AckMessages(ctx, &sk.AckMessagesRequest{ReceiptHandles: handles})
			results = resp.GetResults()
		} else {
			req := &sk.NackMessagesRequest{ReceiptHandles: handles, DeadLetter: s.DeadLettered}
			if delay := opts.nackDelay(d.GetDeliveryCount()); delay > 0 && !s.DeadLettered {
				req.Delay = durationpb.New(delay)
			}
			if s.DeadLettered {
				req.Reason = handlerErr.Error()
			}
			var resp *sk.NackMessagesResponse
			resp, err = k.c.Messages.NackMessages(ctx, req)
			results = resp.GetResults()
		}
		if err == nil {
			if len(results) == 1 {
				s.Status = results[0].GetStatus()
			}
			break
		}
		if Code(err) != codes.Unavailable || !sleep(ctx, opts.Backoff.Backoff(attempt)) {
			s.Err = err
			break
		}
	}
	if opts.OnSettled != nil {
		opts.OnSettled(s)
	}
}

// giveBack nacks a delivery that will not be handled (the consumer stops),
// so that it is delivered again at once rather than after its visibility
// timeout.
func (k *consumer) giveBack(d *sk.Delivery) {
	defer k.release(d)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = k.c.Messages.NackMessages(ctx, &sk.NackMessagesRequest{ReceiptHandles: []string{d.GetReceiptHandle()}})
}
