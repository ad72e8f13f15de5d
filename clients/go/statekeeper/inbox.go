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
	// server's default, 10).
	MaxInFlight int32
	// VisibilityTimeout is how long a delivery stays invisible to other
	// receivers (default 30 s); it is extended while the handler runs.
	VisibilityTimeout time.Duration
	// ExtendEvery is how often the visibility of a delivery being handled is
	// extended by VisibilityTimeout (default VisibilityTimeout / 3).
	ExtendEvery time.Duration
	// Types receives only messages of these types (empty: all).
	Types []string
	// Concurrency is the number of handlers running at once (default 1:
	// messages are handled one at a time, in delivery order).
	Concurrency int
	// NackDelay is the pause before a nacked message is delivered again
	// (0: at once).
	NackDelay time.Duration
	// Backoff is the pause between reconnects of the receive stream (zero:
	// the client's policy; MaxAttempts is not used, see MaxReconnects).
	Backoff RetryPolicy
	// ReconnectTimeout bounds the time spent reconnecting since the last
	// stream that delivered a message: after it Consume returns the last
	// error. 0: no bound (a worker waits for its server until ctx ends).
	ReconnectTimeout time.Duration
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
	// handler still runs).
	OnExtendError func(d *sk.Delivery, err error)
}

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
	if o.Backoff == (RetryPolicy{}) {
		o.Backoff = c.retry
	}
	return o
}

// Consume receives the inbox of agentID and runs handler for each delivery:
// nil acks, an error nacks (DeadLetter(err): to the dead-letter list), and the
// delivery's visibility is extended while the handler runs. The receive
// stream is reopened with backoff when it breaks (server restart,
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
					c.giveBack(d)
					continue
				}
				c.handle(ctx, d, handler, opts)
			}
		}()
	}
	err := c.receiveLoop(ctx, agentID, deliveries, opts)
	close(deliveries)
	workers.Wait()
	return err
}

func (c *Client) receiveLoop(ctx context.Context, agentID string, out chan<- *sk.Delivery, opts ConsumerOptions) error {
	req := &sk.ReceiveMessagesRequest{
		AgentId:           agentID,
		MaxInFlight:       opts.MaxInFlight,
		VisibilityTimeout: durationpb.New(opts.VisibilityTimeout),
		Types:             opts.Types,
	}
	failures := 0
	var brokenSince time.Time
	for {
		err := c.receiveStream(ctx, req, out, &failures)
		if failures == 0 {
			brokenSince = time.Time{}
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

// receiveStream reads one stream until it breaks; deliveries reset failures.
func (c *Client) receiveStream(ctx context.Context, req *sk.ReceiveMessagesRequest, out chan<- *sk.Delivery, failures *int) error {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.Messages.ReceiveMessages(sctx, req)
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		*failures = 0
		for _, d := range resp.GetDeliveries() {
			select {
			case out <- d:
			case <-ctx.Done():
				c.giveBack(d)
			}
		}
	}
}

// handle runs the handler with the delivery's visibility extended, then
// settles it.
func (c *Client) handle(ctx context.Context, d *sk.Delivery, handler Handler, opts ConsumerOptions) {
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var extender sync.WaitGroup
	extender.Add(1)
	go func() {
		defer extender.Done()
		c.extendWhile(hctx, done, d, opts)
	}()
	err := handler(hctx, d)
	close(done)
	cancel()
	extender.Wait()
	c.settle(d, err, opts)
}

func (c *Client) extendWhile(ctx context.Context, done <-chan struct{}, d *sk.Delivery, opts ConsumerOptions) {
	ticker := time.NewTicker(opts.ExtendEvery)
	defer ticker.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		cctx, cancel := context.WithTimeout(ctx, opts.ExtendEvery)
		resp, err := c.Messages.ExtendVisibility(cctx, &sk.ExtendVisibilityRequest{
			ReceiptHandles:    []string{d.GetReceiptHandle()},
			VisibilityTimeout: durationpb.New(opts.VisibilityTimeout),
		})
		cancel()
		if err == nil && len(resp.GetResults()) == 1 {
			if r := resp.GetResults()[0]; r.GetStatus() == sk.ReceiptStatus_RECEIPT_STATUS_OK {
				d.VisibilityDeadline = r.GetNextVisibleTime()
				continue
			} else {
				err = &receiptError{status: r.GetStatus()}
			}
		}
		if err != nil && opts.OnExtendError != nil && ctx.Err() == nil {
			opts.OnExtendError(d, err)
		}
	}
}

type receiptError struct{ status sk.ReceiptStatus }

func (e *receiptError) Error() string { return "statekeeper: receipt " + e.status.String() }

// settle acks or nacks a handled delivery, retrying UNAVAILABLE (a server
// restart) for SettleTimeout, or until the receipt's visibility deadline if
// that is later.
func (c *Client) settle(d *sk.Delivery, handlerErr error, opts ConsumerOptions) {
	s := Settlement{Delivery: d, HandlerErr: handlerErr, Acked: handlerErr == nil}
	var dl deadLetterError
	s.DeadLettered = errors.As(handlerErr, &dl)
	// An answer is wanted even after the receipt's visibility deadline: an
	// ack whose reply was lost to a restart answers ALREADY_ACKED when
	// repeated, and a late one EXPIRED (the message comes again).
	deadline := time.Now().Add(opts.SettleTimeout)
	if v := d.GetVisibilityDeadline(); v != nil && v.IsValid() && v.AsTime().After(deadline) {
		deadline = v.AsTime()
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	handles := []string{d.GetReceiptHandle()}
	for attempt := 1; ; attempt++ {
		var results []*sk.ReceiptResult
		var err error
		if s.Acked {
			var resp *sk.AckMessagesResponse
			resp, err = c.Messages.AckMessages(ctx, &sk.AckMessagesRequest{ReceiptHandles: handles})
			results = resp.GetResults()
		} else {
			req := &sk.NackMessagesRequest{ReceiptHandles: handles, DeadLetter: s.DeadLettered}
			if opts.NackDelay > 0 {
				req.Delay = durationpb.New(opts.NackDelay)
			}
			if s.DeadLettered {
				req.Reason = handlerErr.Error()
			}
			var resp *sk.NackMessagesResponse
			resp, err = c.Messages.NackMessages(ctx, req)
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
func (c *Client) giveBack(d *sk.Delivery) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.Messages.NackMessages(ctx, &sk.NackMessagesRequest{ReceiptHandles: []string{d.GetReceiptHandle()}})
}
