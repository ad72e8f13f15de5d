package statekeeper

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/statekeeper/statekeeper/clients/go/internal/reasons"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

func statusWithReason(t *testing.T, code codes.Code, reason string, md map[string]string) error {
	t.Helper()
	st, err := status.New(code, "boom").WithDetails(&errdetails.ErrorInfo{
		Reason: reason, Domain: ErrorDomain, Metadata: md,
	})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// Every value of the generated enum has a sentinel, matched by the error of a
// status carrying its wire name and by no other sentinel.
func TestEverySentinelMatchesItsReasonOnly(t *testing.T) {
	values := Reasons()
	if len(values) != len(sk.ErrorReason_name)-1 {
		t.Fatalf("%d sentinels for %d enum values (UNSPECIFIED excluded)", len(values), len(sk.ErrorReason_name)-1)
	}
	for _, r := range values {
		sentinel := ReasonErr(r)
		if sentinel == nil {
			t.Fatalf("no sentinel for %v", r)
		}
		wire := sentinel.(*ReasonError).Name()
		if "ERROR_REASON_"+wire != r.String() {
			t.Errorf("sentinel of %v is named %q", r, wire)
		}
		err := wrapError(statusWithReason(t, codes.Aborted, wire, nil), "/m")
		if !errors.Is(err, sentinel) {
			t.Errorf("%v does not match its sentinel %v", err, sentinel)
		}
		wrapped := fmt.Errorf("context: %w", err)
		if !errors.Is(wrapped, sentinel) {
			t.Errorf("a wrapped %v does not match its sentinel", err)
		}
		for _, other := range values {
			if other != r && errors.Is(err, ReasonErr(other)) {
				t.Errorf("%v matches the sentinel of %v", err, other)
			}
		}
	}
	if ReasonErr(sk.ErrorReason_ERROR_REASON_UNSPECIFIED) != nil {
		t.Error("UNSPECIFIED has a sentinel")
	}
}

func TestErrorKeepsStatusAndErrorInfo(t *testing.T) {
	raw := statusWithReason(t, codes.FailedPrecondition, "REVISION_MISMATCH", map[string]string{"current_revision": "7"})
	err := wrapError(raw, "/statekeeper.v1.BlackboardService/PutEntry")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is not an *Error", err)
	}
	if e.Code != codes.FailedPrecondition || e.Reason != sk.ErrorReason_ERROR_REASON_REVISION_MISMATCH ||
		e.ReasonName != "REVISION_MISMATCH" || e.Domain != ErrorDomain || e.Metadata["current_revision"] != "7" {
		t.Fatalf("error %+v", e)
	}
	if status.Code(err) != codes.FailedPrecondition || Code(err) != codes.FailedPrecondition {
		t.Errorf("status.Code = %v", status.Code(err))
	}
	if info := ErrorInfo(err); info == nil || info.Reason != "REVISION_MISMATCH" {
		t.Errorf("ErrorInfo = %v", info)
	}
	if !errors.Is(err, ErrRevisionMismatch) || errors.Is(err, ErrEtagMismatch) {
		t.Error("sentinels")
	}
	if want := "statekeeper: /statekeeper.v1.BlackboardService/PutEntry: FailedPrecondition [REVISION_MISMATCH]: boom"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
	// A reason newer than this client: no enum value, still matched by name.
	newer := AsError(statusWithReason(t, codes.Internal, "SOMETHING_NEW", nil))
	if newer.Reason != sk.ErrorReason_ERROR_REASON_UNSPECIFIED || newer.ReasonName != "SOMETHING_NEW" {
		t.Errorf("unknown reason %+v", newer)
	}
	if AsError(errors.New("plain")) != nil || AsError(nil) != nil {
		t.Error("AsError of an error without status")
	}
}

// errors_gen.go is what internal/generrors writes from the current enum.
func TestGeneratedSentinelsAreCurrent(t *testing.T) {
	current, err := os.ReadFile("errors_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(current, reasons.Source()) {
		t.Fatal("errors_gen.go is stale: run `go generate ./...` in clients/go")
	}
	if ErrEtagMismatch != ReasonErr(sk.ErrorReason_ERROR_REASON_ETAG_MISMATCH) {
		t.Error("ErrEtagMismatch is not the ETAG_MISMATCH sentinel")
	}
}

func TestBackoffGrowsAndIsCapped(t *testing.T) {
	p := RetryPolicy{InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, Multiplier: 2, Jitter: 0.2}
	for retry, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 10: time.Second} {
		for range 50 {
			got := p.Backoff(retry)
			if got < want*8/10 || got > want*12/10 {
				t.Fatalf("Backoff(%d) = %s, want %s +/- 20%%", retry, got, want)
			}
		}
	}
}

func TestRequestIDIsSetOnceAndOnlyWhereDefined(t *testing.T) {
	req := &sk.SendMessageRequest{ToAgent: "a"}
	got, keyed := withRequestID(req)
	if !keyed || got.(*sk.SendMessageRequest).GetRequestId() == "" {
		t.Fatalf("SendMessage request_id not set: %v", got)
	}
	if req.GetRequestId() != "" {
		t.Error("the caller's request was modified")
	}
	again, _ := withRequestID(got)
	if again.(*sk.SendMessageRequest).GetRequestId() != got.(*sk.SendMessageRequest).GetRequestId() {
		t.Error("a set request_id was replaced")
	}
	if _, keyed := withRequestID(&sk.PutEntryRequest{}); keyed {
		t.Error("PutEntry has no request_id")
	}
	for _, tc := range []struct {
		method string
		keyed  bool
		safe   bool
	}{
		{"/statekeeper.v1.BlackboardService/GetEntry", false, true},
		{"/statekeeper.v1.BlackboardService/ListEntries", false, true},
		{"/statekeeper.v1.MessageService/AckMessages", false, true},
		{"/statekeeper.v1.BlackboardService/PutEntry", false, false},
		{"/statekeeper.v1.SessionService/CreateSession", false, false},
		{"/statekeeper.v1.SessionService/AppendMessages", true, true},
	} {
		if got := retrySafe(tc.method, tc.keyed, nil); got != tc.safe {
			t.Errorf("retrySafe(%s) = %v", tc.method, got)
		}
	}
	if !retrySafe("/statekeeper.v1.BlackboardService/PutEntry", false, []grpc.CallOption{Idempotent()}) {
		t.Error("Idempotent() not honoured")
	}
}
