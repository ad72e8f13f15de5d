package statekeeper_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
)

// scaled stretches a timeout by STATEKEEPER_TEST_TIMEOUT_SCALE (default 1)
// for slow machines. Timeouts only bound how long a broken test hangs; no
// test asserts how fast anything is.
func scaled(d time.Duration) time.Duration {
	if f, err := strconv.ParseFloat(os.Getenv("STATEKEEPER_TEST_TIMEOUT_SCALE"), 64); err == nil && f > 0 {
		return time.Duration(float64(d) * f)
	}
	return d
}

// serverBin is the statekeeper executable: $STATEKEEPER_BIN, else the
// repository's .venv/bin/statekeeper.
func serverBin(t *testing.T) string {
	if bin := os.Getenv("STATEKEEPER_BIN"); bin != "" {
		return bin
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, ".venv", "bin", "statekeeper")
}

// server is a real statekeeper process on a fixed port and data directory,
// which a test can kill (SIGKILL) and start again.
type server struct {
	t       *testing.T
	bin     string
	addr    string
	dataDir string
	args    []string // more serve flags

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	log    *syncBuffer
	runs   int
}

// syncBuffer is a bytes.Buffer the process and the test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServer starts a server for t; it is killed when t ends, pass or fail.
// Under `go test -short` the test is skipped (these tests run a server).
func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a statekeeper server (not run with -short)")
	}
	bin := serverBin(t)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("statekeeper server executable %s: %v (set STATEKEEPER_BIN, or run "+
			"`make install` at the repository root)", bin, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	s := &server{t: t, bin: bin, addr: addr, dataDir: t.TempDir(), args: args}
	t.Cleanup(s.kill)
	s.start()
	return s
}

// start runs the server and waits until it answers health checks SERVING.
func (s *server) start() {
	s.t.Helper()
	args := append([]string{"serve", "--listen", s.addr, "--data-dir", s.dataDir,
		"--log-level", "WARNING", "--log-format", "text"}, s.args...)
	cmd := exec.Command(s.bin, args...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	// Its own process group (kill reaches anything it starts), and SIGKILL
	// if the test binary dies before its cleanups run (a go test timeout).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start %s: %v", s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited, s.log = cmd, exited, log
	s.runs++
	s.mu.Unlock()

	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	wait := scaled(90 * time.Second)
	deadline := time.Now().Add(wait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true))
		cancel()
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return
		}
		select {
		case <-exited:
			s.t.Fatalf("server exited while starting (%v):\n%s", cmd.ProcessState, log.String())
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("server on %s not SERVING after %s (last: %v):\n%s", s.addr, wait, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill sends SIGKILL to the server's process group and reaps it.
func (s *server) kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd, s.exited = nil, nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// restart kills the server and starts it again on the same port and data.
func (s *server) restart() {
	s.t.Helper()
	s.kill()
	s.start()
}

func (s *server) dial(t *testing.T, opts ...statekeeper.Option) *statekeeper.Client {
	t.Helper()
	c, err := statekeeper.Dial(s.addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func (s *server) String() string { return fmt.Sprintf("server %s (run %d)", s.addr, s.runs) }
