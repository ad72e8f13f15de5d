// Package statekeeper connects to a statekeeper server: one gRPC connection
// carrying the caller's API key, with a stub for each service of
// statekeeper.v1 and the standard health service.
//
//	c, err := statekeeper.Dial("127.0.0.1:50051", statekeeper.WithAPIKey("sk-dev"))
//	if err != nil { ... }
//	defer c.Close()
//	resp, err := c.Sessions.CreateSession(ctx, &statekeeperv1.CreateSessionRequest{
//		Session: &statekeeperv1.Session{UserId: "u1"},
//	})
//
// Every unary call gets a deadline (DefaultTimeout, WithTimeout) when its
// context has none, and is retried with exponential backoff (RetryPolicy)
// when it fails with UNAVAILABLE, if it is safe to repeat: reads, receipt
// operations (ack, nack, extend), and mutations that carry an idempotency key
// (`request_id`, which the client fills with a random key when it is empty,
// so that a retry after a lost reply does not apply a change twice). Nothing
// else is retried. A failed call returns an *Error carrying the server's
// ErrorInfo reason, which matches the sentinels (ErrEtagMismatch, ...) with
// errors.Is.
//
// Helpers on top of the stubs: Client.Watch (a blackboard Watch that resumes
// across disconnects and restarts) and Client.Consume (an inbox consumer with
// ack/nack and visibility extension).
package statekeeper

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

// Client holds one connection and the stubs of every service.
type Client struct {
	retry       RetryPolicy
	Conn        *grpc.ClientConn
	Sessions    sk.SessionServiceClient
	Memory      sk.MemoryServiceClient
	Checkpoints sk.CheckpointServiceClient
	Blackboard  sk.BlackboardServiceClient
	Messages    sk.MessageServiceClient
	Items       sk.ItemServiceClient
	Admin       sk.AdminServiceClient
	Health      healthpb.HealthClient
}

type options struct {
	timeout     time.Duration
	retry       RetryPolicy
	creds       credentials.TransportCredentials
	metadata    map[string]string
	dialOptions []grpc.DialOption
	err         error // an option that could not be applied
}

// Option configures Dial.
type Option func(*options)

// WithAPIKey sends key in the `x-api-key` metadata of every call.
func WithAPIKey(key string) Option {
	return func(o *options) { o.metadata["x-api-key"] = key }
}

// WithBearerToken sends `authorization: Bearer <token>` on every call.
func WithBearerToken(token string) Option {
	return func(o *options) { o.metadata["authorization"] = "Bearer " + token }
}

// WithTLS connects over TLS (default: plaintext, for loopback and tests);
// WithTLSOptions builds the configuration from a CA, a client certificate
// and a server name.
func WithTLS(config *tls.Config) Option {
	return func(o *options) { o.creds = credentials.NewTLS(config) }
}

// WithTimeout sets the deadline of unary calls whose context has none
// (default DefaultTimeout, 30 s; 0: none). Streams get no default deadline.
func WithTimeout(d time.Duration) Option {
	return func(o *options) { o.timeout = d }
}

// WithRetryPolicy sets the backoff of UNAVAILABLE retries (default
// DefaultRetryPolicy; NoRetry turns retries off). It is also the default
// backoff of Watch and Consume reconnects.
func WithRetryPolicy(p RetryPolicy) Option {
	return func(o *options) { o.retry = p.withDefaults() }
}

// WithDialOptions adds grpc dial options (interceptors, keepalive, ...).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.dialOptions = append(o.dialOptions, opts...) }
}

// metadataCreds attaches fixed metadata to every call.
type metadataCreds struct {
	md     map[string]string
	secure bool
}

func (m metadataCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return m.md, nil
}

func (m metadataCreds) RequireTransportSecurity() bool { return m.secure }

// Dial creates a client for target ("host:port"). The connection is made
// lazily, on the first call.
func Dial(target string, opts ...Option) (*Client, error) {
	o := &options{
		timeout:  DefaultTimeout,
		retry:    DefaultRetryPolicy,
		creds:    insecure.NewCredentials(),
		metadata: map[string]string{},
	}
	for _, opt := range opts {
		opt(o)
	}
	if o.err != nil {
		return nil, o.err
	}
	policy := callPolicy{timeout: o.timeout, retry: o.retry}
	dial := []grpc.DialOption{
		grpc.WithTransportCredentials(o.creds),
		grpc.WithChainUnaryInterceptor(policy.unary),
		grpc.WithChainStreamInterceptor(policy.stream),
	}
	if len(o.metadata) > 0 {
		secure := o.creds.Info().SecurityProtocol != "insecure"
		dial = append(dial, grpc.WithPerRPCCredentials(metadataCreds{md: o.metadata, secure: secure}))
	}
	dial = append(dial, o.dialOptions...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("statekeeper: dial %s: %w", target, err)
	}
	return &Client{
		retry:       o.retry,
		Conn:        conn,
		Sessions:    sk.NewSessionServiceClient(conn),
		Memory:      sk.NewMemoryServiceClient(conn),
		Checkpoints: sk.NewCheckpointServiceClient(conn),
		Blackboard:  sk.NewBlackboardServiceClient(conn),
		Messages:    sk.NewMessageServiceClient(conn),
		Items:       sk.NewItemServiceClient(conn),
		Admin:       sk.NewAdminServiceClient(conn),
		Health:      healthpb.NewHealthClient(conn),
	}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.Conn.Close() }

// ErrorInfo returns the google.rpc.ErrorInfo the server attached to err (its
// Reason is e.g. "ETAG_MISMATCH"), or nil.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// IsUnimplemented reports whether err is UNIMPLEMENTED: the server does not
// serve that method (for example a server older than this client's contract).
func IsUnimplemented(err error) bool {
	var st interface{ GRPCStatus() *status.Status }
	if errors.As(err, &st) {
		return st.GRPCStatus().Code() == codes.Unimplemented
	}
	return status.Code(err) == codes.Unimplemented
}
