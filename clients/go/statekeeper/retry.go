package statekeeper

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"math"
	mrand "math/rand/v2"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// DefaultTimeout is the deadline a unary call gets when its context has none.
const DefaultTimeout = 30 * time.Second

// RetryPolicy is the exponential backoff of retries and reconnects: retry n
// (1-based) waits min(MaxBackoff, InitialBackoff * Multiplier^(n-1)), spread
// by +/- Jitter (a fraction). A unary call makes at most MaxAttempts attempts,
// all within its deadline. Zero fields take DefaultRetryPolicy's values.
type RetryPolicy struct {
	MaxAttempts    int
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	Multiplier     float64
	Jitter         float64
}

// DefaultRetryPolicy: 5 attempts, 100 ms doubling up to 5 s, +/- 20 %.
var DefaultRetryPolicy = RetryPolicy{
	MaxAttempts:    5,
	InitialBackoff: 100 * time.Millisecond,
	MaxBackoff:     5 * time.Second,
	Multiplier:     2,
	Jitter:         0.2,
}

// NoRetry makes one attempt only.
var NoRetry = RetryPolicy{MaxAttempts: 1}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy
	if p.MaxAttempts > 0 {
		d.MaxAttempts = p.MaxAttempts
	}
	if p.InitialBackoff > 0 {
		d.InitialBackoff = p.InitialBackoff
	}
	if p.MaxBackoff > 0 {
		d.MaxBackoff = p.MaxBackoff
	}
	if p.Multiplier >= 1 {
		d.Multiplier = p.Multiplier
	}
	if p.Jitter > 0 && p.Jitter < 1 {
		d.Jitter = p.Jitter
	}
	return d
}

// Backoff is the pause before retry number retry (1-based).
func (p RetryPolicy) Backoff(retry int) time.Duration {
	p = p.withDefaults()
	if retry < 1 {
		retry = 1
	}
	base := float64(p.InitialBackoff) * math.Pow(p.Multiplier, float64(retry-1))
	base = math.Min(base, float64(p.MaxBackoff))
	if p.Jitter > 0 {
		base *= 1 + p.Jitter*(2*mrand.Float64()-1)
	}
	return time.Duration(math.Max(0, base))
}

// sleep waits d or until ctx is done (false then).
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// idempotentOption marks a call as safe to repeat.
type idempotentOption struct{ grpc.EmptyCallOption }

// Idempotent is a call option saying that the call may be repeated after
// UNAVAILABLE although the client would not retry it on its own (a mutation
// without a request_id that you know to be idempotent, such as an
// unconditional PutEntry of the same value).
func Idempotent() grpc.CallOption { return idempotentOption{} }

// readOnlyPrefixes are the verbs of the methods that change nothing; those
// are retried after UNAVAILABLE.
var readOnlyPrefixes = []string{"Get", "List", "Search", "Query", "Recall", "Check", "Watch"}

// repeatableMethods change state, but doing it twice is by contract the same
// as once (a receipt acked twice reports ALREADY_ACKED; a nack or an extension
// of a stale receipt reports EXPIRED and changes nothing).
var repeatableMethods = map[string]bool{
	"/statekeeper.v1.MessageService/AckMessages":      true,
	"/statekeeper.v1.MessageService/NackMessages":     true,
	"/statekeeper.v1.MessageService/ExtendVisibility": true,
}

// IdempotencyField is the request field (AIP-155) that makes a mutation safe
// to retry: a retry with the same value changes nothing again.
const IdempotencyField = "request_id"

// NewRequestID returns a random idempotency key (32 hex digits).
func NewRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// withRequestID returns req with its request_id filled (a copy when the
// client had to set it) and whether req has such a field.
func withRequestID(req any) (any, bool) {
	m, ok := req.(proto.Message)
	if !ok {
		return req, false
	}
	r := m.ProtoReflect()
	field := r.Descriptor().Fields().ByName(IdempotencyField)
	if field == nil || field.Kind() != protoreflect.StringKind || field.IsList() {
		return req, false
	}
	if r.Get(field).String() != "" {
		return req, true
	}
	c := proto.Clone(m)
	c.ProtoReflect().Set(field, protoreflect.ValueOfString(NewRequestID()))
	return c, true
}

// retrySafe says whether a call may be repeated after UNAVAILABLE: a read, a
// repeatable receipt operation, a mutation carrying an idempotency key, or a
// call marked Idempotent().
func retrySafe(method string, keyed bool, opts []grpc.CallOption) bool {
	if keyed || repeatableMethods[method] {
		return true
	}
	for _, o := range opts {
		if _, ok := o.(idempotentOption); ok {
			return true
		}
	}
	name := method[strings.LastIndex(method, "/")+1:]
	for _, p := range readOnlyPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// callPolicy is what the interceptors apply to every call.
type callPolicy struct {
	timeout time.Duration
	retry   RetryPolicy
}

func (p callPolicy) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption,
) error {
	if _, ok := ctx.Deadline(); !ok && p.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.timeout)
		defer cancel()
	}
	req, keyed := withRequestID(req)
	safe := retrySafe(method, keyed, opts)
	retry := p.retry.withDefaults()
	for attempt := 1; ; attempt++ {
		err := invoker(ctx, method, req, reply, cc, opts...)
		if err == nil {
			return nil
		}
		if !safe || Code(err) != codes.Unavailable || attempt >= retry.MaxAttempts {
			return wrapError(err, method)
		}
		pause := retry.Backoff(attempt)
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= pause {
			return wrapError(err, method)
		}
		if !sleep(ctx, pause) {
			return wrapError(err, method)
		}
	}
}

func (p callPolicy) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption,
) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, wrapError(err, method)
	}
	return &errorStream{ClientStream: s, method: method}, nil
}

// errorStream turns the errors of a stream into *Error.
type errorStream struct {
	grpc.ClientStream
	method string
}

func (s *errorStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return wrapError(err, s.method)
}

func (s *errorStream) SendMsg(m any) error {
	err := s.ClientStream.SendMsg(m)
	if err == nil || errors.Is(err, io.EOF) {
		return err
	}
	return wrapError(err, s.method)
}
