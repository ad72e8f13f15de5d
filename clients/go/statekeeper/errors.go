package statekeeper

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/statekeeper/statekeeper/clients/go/internal/reasons"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

//go:generate go run ../internal/generrors -out errors_gen.go

// ErrorDomain is the `domain` of every ErrorInfo the statekeeper server sends.
const ErrorDomain = "statekeeper.dev"

// ReasonError is the sentinel error of one ErrorReason: every failed call the
// server answers with that reason matches it with errors.Is.
//
//	if errors.Is(err, statekeeper.ErrEtagMismatch) { /* reload, retry */ }
//
// The sentinels are made from the generated statekeeperv1.ErrorReason enum
// (one per value); ReasonErr returns the one of a reason, and errors_gen.go
// names each (ErrEtagMismatch, ErrRevisionCompacted, ...).
type ReasonError struct {
	reason sk.ErrorReason
	name   string // the wire name, e.g. "ETAG_MISMATCH"
}

// Reason is the enum value.
func (e *ReasonError) Reason() sk.ErrorReason { return e.reason }

// Name is the reason as it travels in ErrorInfo.reason, e.g. "ETAG_MISMATCH".
func (e *ReasonError) Name() string { return e.name }

func (e *ReasonError) Error() string { return "statekeeper: " + e.name }

// sentinels holds one ReasonError per value of the generated enum, by value
// and by wire name.
var sentinels, sentinelsByName = buildSentinels()

func buildSentinels() (map[sk.ErrorReason]*ReasonError, map[string]*ReasonError) {
	all := reasons.All()
	byValue := make(map[sk.ErrorReason]*ReasonError, len(all))
	byName := make(map[string]*ReasonError, len(all))
	for _, r := range all {
		sentinel := &ReasonError{reason: sk.ErrorReason(r.Value), name: r.WireName}
		byValue[sentinel.reason] = sentinel
		byName[sentinel.name] = sentinel
	}
	return byValue, byName
}

// ReasonErr is the sentinel of reason (nil for ERROR_REASON_UNSPECIFIED or a
// value this client does not know).
func ReasonErr(reason sk.ErrorReason) error {
	if s, ok := sentinels[reason]; ok {
		return s
	}
	return nil
}

// Reasons lists every reason that has a sentinel, in enum order.
func Reasons() []sk.ErrorReason {
	out := make([]sk.ErrorReason, 0, len(sentinels))
	for r := range sentinels {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// ParseReason turns an ErrorInfo.reason ("ETAG_MISMATCH") into the enum value
// (ERROR_REASON_UNSPECIFIED when unknown, e.g. from a newer server).
func ParseReason(name string) sk.ErrorReason {
	if s, ok := sentinelsByName[name]; ok {
		return s.reason
	}
	return sk.ErrorReason_ERROR_REASON_UNSPECIFIED
}

// Error is a failed call: the gRPC status plus the server's AIP-193
// ErrorInfo. Calls made through a Client return it (as error); it keeps
// status.Code(err), status.FromError and ErrorInfo(err) working, and matches
// the sentinel of its reason with errors.Is:
//
//	var e *statekeeper.Error
//	if errors.As(err, &e) && e.Reason == sk.ErrorReason_ERROR_REASON_REVISION_MISMATCH {
//		current := e.Metadata["current_revision"]
//	}
type Error struct {
	// Code is the canonical status code.
	Code codes.Code
	// Message is the status message.
	Message string
	// Reason is the ErrorInfo reason as the enum (UNSPECIFIED if there was
	// no ErrorInfo or the reason is unknown to this client).
	Reason sk.ErrorReason
	// ReasonName is ErrorInfo.reason as received, e.g. "ETAG_MISMATCH".
	ReasonName string
	// Domain is ErrorInfo.domain ("statekeeper.dev").
	Domain string
	// Metadata is ErrorInfo.metadata, e.g. {"field": "session_id"}.
	Metadata map[string]string
	// Method is the full gRPC method, e.g. "/statekeeper.v1.BlackboardService/PutEntry".
	Method string

	status *status.Status
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("statekeeper: ")
	if e.Method != "" {
		b.WriteString(e.Method)
		b.WriteString(": ")
	}
	b.WriteString(e.Code.String())
	if e.ReasonName != "" {
		fmt.Fprintf(&b, " [%s]", e.ReasonName)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// GRPCStatus is the status the server sent (status.FromError uses it).
func (e *Error) GRPCStatus() *status.Status { return e.status }

// Is matches the sentinel of the error's reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*ReasonError)
	if !ok {
		return false
	}
	if e.Reason != sk.ErrorReason_ERROR_REASON_UNSPECIFIED {
		return t.reason == e.Reason
	}
	return e.ReasonName != "" && t.name == e.ReasonName
}

// AsError returns err as an *Error: err itself (or the *Error it wraps), or a
// new one made from its gRPC status; nil when err is nil or carries no gRPC
// status (a context error of the caller, for example).
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	return fromStatus(st, "")
}

func fromStatus(st *status.Status, method string) *Error {
	e := &Error{Code: st.Code(), Message: st.Message(), Method: method, status: st}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			e.ReasonName = info.GetReason()
			e.Domain = info.GetDomain()
			e.Metadata = info.GetMetadata()
			e.Reason = ParseReason(e.ReasonName)
			break
		}
	}
	return e
}

// wrapError turns an error of a call into an *Error (errors without a gRPC
// status, such as io.EOF or the caller's context errors, are returned as they
// are).
func wrapError(err error, method string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	return fromStatus(st, method)
}

// Code is the gRPC status code of err (codes.OK for nil, codes.Unknown for an
// error without a status).
func Code(err error) codes.Code { return status.Code(err) }
