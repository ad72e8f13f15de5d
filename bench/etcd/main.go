// Command etcdbench drives etcd and statekeeper blackboards through the same
// workloads and prints statekeeper/etcd ratios. bench/versus_etcd.py starts
// the servers and runs it (`make bench-etcd`); run it by hand as
//
//	go run . -etcd 127.0.0.1:2379 -target embedded=127.0.0.1:50051 \
//	    -target production=127.0.0.1:50061,127.0.0.1:50062
//
// A target with two addresses is two replicas of one store: writers are
// spread over both, and watchers watch through the second while the
// publisher writes through the first (every event crosses replicas).
//
// Rounds are interleaved: each round runs every workload on every system
// one after the other, so load from the rest of the machine falls on all
// of them alike. Every loop is bounded by an operation count or a deadline.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
)

// system is one store under test, seen through the operations the
// workloads need.
type system interface {
	Name() string
	// Writer returns a client for writer i (spread over replicas).
	Put(ctx context.Context, writer int, key string, value []byte) (int64, error)
	Get(ctx context.Context, key string) error
	// CAS puts key if its last modification is expectedRev; returns the new one.
	CAS(ctx context.Context, key string, value []byte, expectedRev int64) (int64, error)
	// Watch starts a watcher of prefix (through the watch replica) and calls
	// onEvent for every event key it receives, until ctx ends; ready is
	// closed once the watch is established.
	Watch(ctx context.Context, prefix string, ready chan<- struct{}, onEvent func(key string)) error
	Close()
}

type targets []string

func (t *targets) String() string     { return strings.Join(*t, " ") }
func (t *targets) Set(v string) error { *t = append(*t, v); return nil }

type config struct {
	rounds        int
	seqOps        int
	writers       int
	writerOps     int
	publications  int
	watcherCounts []int
	valueSize     int
}

func main() {
	var tg targets
	etcdAddr := flag.String("etcd", "", "etcd client address host:port")
	flag.Var(&tg, "target", "statekeeper system NAME=ADDR[,ADDR2] (repeatable)")
	apiKey := flag.String("api-key", "", "statekeeper API key (none: single tenant)")
	floorAddr := flag.String("floor", "", "address of bench/grpc_floor.py: the gRPC floor (Put, Get and CAS only)")
	cfg := config{}
	flag.IntVar(&cfg.rounds, "rounds", 3, "interleaved rounds")
	flag.IntVar(&cfg.seqOps, "seq-ops", 300, "sequential operations per workload per round")
	flag.IntVar(&cfg.writers, "writers", 32, "concurrent writers")
	flag.IntVar(&cfg.writerOps, "writer-ops", 60, "puts per concurrent writer per round")
	flag.IntVar(&cfg.publications, "publications", 40, "watch publications per watcher count per round")
	flag.IntVar(&cfg.valueSize, "value-size", 100, "value size in bytes")
	watchers := flag.String("watchers", "1,10,100", "watcher counts")
	flag.Parse()
	for _, part := range strings.Split(*watchers, ",") {
		var n int
		if _, err := fmt.Sscan(part, &n); err != nil || n <= 0 {
			fail("bad -watchers %q", *watchers)
		}
		cfg.watcherCounts = append(cfg.watcherCounts, n)
	}
	if *etcdAddr == "" || len(tg) == 0 {
		fail("need -etcd and at least one -target")
	}
	systems := []system{}
	es, err := newEtcd(*etcdAddr)
	if err != nil {
		fail("etcd: %v", err)
	}
	systems = append(systems, es)
	for _, spec := range tg {
		name, addrs, ok := strings.Cut(spec, "=")
		if !ok {
			fail("bad -target %q (want NAME=ADDR[,ADDR2])", spec)
		}
		s, err := newStatekeeper(name, strings.Split(addrs, ","), *apiKey)
		if err != nil {
			fail("%s: %v", name, err)
		}
		systems = append(systems, s)
	}
	if *floorAddr != "" {
		s, err := newStatekeeper(floorName, []string{*floorAddr}, "")
		if err != nil {
			fail("%s: %v", floorName, err)
		}
		systems = append(systems, s)
	}
	defer func() {
		for _, s := range systems {
			s.Close()
		}
	}()
	results := run(systems, cfg)
	report(systems, results, cfg)
}

// floorName is the system of -floor: a server that answers PutEntry and
// GetEntry at once with a canned response, through the same Python gRPC
// stack (grpcio's asyncio server) as statekeeper, so its column is what no
// statekeeper process can beat on this machine.
const floorName = "grpc-floor"

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "etcdbench: "+format+"\n", args...)
	os.Exit(2)
}

// results[system][metric] holds latency samples; throughput is kept as
// operations and busy seconds so rounds add up.
type measures struct {
	samples map[string][]time.Duration
	ops     map[string]int
	elapsed map[string]time.Duration
}

func newMeasures() *measures {
	return &measures{map[string][]time.Duration{}, map[string]int{}, map[string]time.Duration{}}
}

func run(systems []system, cfg config) map[string]*measures {
	results := map[string]*measures{}
	for _, s := range systems {
		results[s.Name()] = newMeasures()
	}
	value := make([]byte, cfg.valueSize)
	for i := range value {
		value[i] = 'x'
	}
	for round := 0; round < cfg.rounds; round++ {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", round+1, cfg.rounds)
		// Within a round, every workload runs on every system before the
		// next workload, so the systems share the same moment of the machine.
		for _, s := range systems {
			must(s.Name(), sequential(s, results[s.Name()], round, cfg, value))
		}
		for _, s := range systems {
			must(s.Name(), concurrent(s, results[s.Name()], round, cfg, value))
		}
		for _, n := range cfg.watcherCounts {
			for _, s := range systems {
				if s.Name() == floorName {
					continue // it keeps nothing to watch
				}
				must(s.Name(), watch(s, results[s.Name()], round, n, cfg, value))
			}
		}
	}
	return results
}

func must(name string, err error) {
	if err != nil {
		fail("%s: %v", name, err)
	}
}

func timed(f func() error) (time.Duration, error) {
	start := time.Now()
	err := f()
	return time.Since(start), err
}

func sequential(s system, m *measures, round int, cfg config, value []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	key := fmt.Sprintf("bench/seq/%d", round)
	for i := 0; i < cfg.seqOps; i++ {
		d, err := timed(func() error { _, err := s.Put(ctx, 0, key, value); return err })
		if err != nil {
			return fmt.Errorf("put: %w", err)
		}
		m.samples["put"] = append(m.samples["put"], d)
	}
	for i := 0; i < cfg.seqOps; i++ {
		d, err := timed(func() error { return s.Get(ctx, key) })
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		m.samples["get"] = append(m.samples["get"], d)
	}
	rev, err := s.Put(ctx, 0, key+"/cas", value)
	if err != nil {
		return err
	}
	for i := 0; i < cfg.seqOps; i++ {
		d, err := timed(func() error {
			next, err := s.CAS(ctx, key+"/cas", value, rev)
			rev = next
			return err
		})
		if err != nil {
			return fmt.Errorf("cas: %w", err)
		}
		m.samples["cas"] = append(m.samples["cas"], d)
	}
	return nil
}

// concurrent runs cfg.writers writers, each putting its own keys
// cfg.writerOps times, all started together.
func concurrent(s system, m *measures, round int, cfg config, value []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	latencies := make([]time.Duration, 0, cfg.writers*cfg.writerOps)
	start := time.Now()
	for w := 0; w < cfg.writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([]time.Duration, 0, cfg.writerOps)
			for i := 0; i < cfg.writerOps; i++ {
				key := fmt.Sprintf("bench/conc/%d/%d/%d", round, w, i%8)
				d, err := timed(func() error { _, err := s.Put(ctx, w, key, value); return err })
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				local = append(local, d)
			}
			mu.Lock()
			latencies = append(latencies, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return fmt.Errorf("concurrent put: %w", firstErr)
	}
	m.samples["cput"] = append(m.samples["cput"], latencies...)
	m.ops["cput"] += len(latencies)
	m.elapsed["cput"] += elapsed
	return nil
}

// watch starts n watchers, then publishes one put at a time and times from
// the Put call to each watcher's receipt of that event.
func watch(s system, m *measures, round, n int, cfg config, value []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	prefix := fmt.Sprintf("bench/watch/%d/%d/", round, n)
	type receipt struct {
		key string
		at  time.Time
	}
	received := make(chan receipt, n*4)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		ready := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Watch(ctx, prefix, ready, func(key string) {
				select {
				case received <- receipt{key, time.Now()}:
				case <-ctx.Done():
				}
			})
			if err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
		select {
		case <-ready:
		case err := <-errs:
			cancel()
			return fmt.Errorf("watch: %w", err)
		case <-time.After(30 * time.Second):
			cancel()
			return fmt.Errorf("watch %d not established in 30 s", i)
		}
	}
	defer func() { cancel(); wg.Wait() }()
	for p := 0; p < cfg.publications; p++ {
		key := fmt.Sprintf("%s%d", prefix, p)
		start := time.Now()
		if _, err := s.Put(ctx, 0, key, value); err != nil {
			return fmt.Errorf("watch put: %w", err)
		}
		for got := 0; got < n; {
			select {
			case r := <-received:
				if r.key != key {
					return fmt.Errorf("watcher got %q, expected %q", r.key, key)
				}
				m.samples[fmt.Sprintf("watch%d", n)] = append(m.samples[fmt.Sprintf("watch%d", n)], r.at.Sub(start))
				// The first and the last receiver of each put: the commit and
				// dispatch cost, and the spread of the per-watcher writes.
				if got == 0 {
					m.samples[fmt.Sprintf("first%d", n)] = append(m.samples[fmt.Sprintf("first%d", n)], r.at.Sub(start))
				}
				if got == n-1 {
					m.samples[fmt.Sprintf("last%d", n)] = append(m.samples[fmt.Sprintf("last%d", n)], r.at.Sub(start))
				}
				got++
			case err := <-errs:
				return fmt.Errorf("watch: %w", err)
			case <-time.After(30 * time.Second):
				return fmt.Errorf("publication %d: %d of %d watchers got it in 30 s", p, got, n)
			}
		}
	}
	return nil
}

func percentile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	index := int(float64(len(sorted)) * q)
	if index >= len(sorted) {
		index = len(sorted) - 1
	}
	return sorted[index]
}

func micros(d time.Duration) string { return fmt.Sprintf("%.0f us", float64(d)/1e3) }

func report(systems []system, results map[string]*measures, cfg config) {
	base := systems[0].Name()
	fmt.Printf("\nblackboard vs etcd: %d interleaved rounds, %d-byte values, GOMAXPROCS=%d\n",
		cfg.rounds, cfg.valueSize, runtime.GOMAXPROCS(0))
	fmt.Printf("(ratio = system / %s; lower is better for latency, higher for throughput)\n", base)
	header := fmt.Sprintf("%-34s", "metric")
	for _, s := range systems {
		header += fmt.Sprintf(" %14s", s.Name())
		if s.Name() != base {
			header += fmt.Sprintf(" %7s", "ratio")
		}
	}
	fmt.Println(header)
	latency := func(label, metric string, q float64) {
		line := fmt.Sprintf("%-34s", label)
		ref := percentile(results[base].samples[metric], q)
		for _, s := range systems {
			samples := results[s.Name()].samples[metric]
			if len(samples) == 0 { // the floor's watch rows
				line += fmt.Sprintf(" %14s %7s", "-", "")
				continue
			}
			v := percentile(samples, q)
			line += fmt.Sprintf(" %14s", micros(v))
			if s.Name() != base {
				line += fmt.Sprintf(" %6.2fx", float64(v)/float64(ref))
			}
		}
		fmt.Println(line)
	}
	latency("sequential Put p50", "put", 0.5)
	latency("sequential Put p99", "put", 0.99)
	latency("sequential Get p50", "get", 0.5)
	latency("sequential Get p99", "get", 0.99)
	latency("sequential CAS p50", "cas", 0.5)
	latency("sequential CAS p99", "cas", 0.99)
	line := fmt.Sprintf("%-34s", fmt.Sprintf("%d-writer Put ops/s", cfg.writers))
	ref := throughput(results[base])
	for _, s := range systems {
		v := throughput(results[s.Name()])
		line += fmt.Sprintf(" %14.0f", v)
		if s.Name() != base {
			line += fmt.Sprintf(" %6.2fx", v/ref)
		}
	}
	fmt.Println(line)
	latency(fmt.Sprintf("%d-writer Put p99", cfg.writers), "cput", 0.99)
	// One sequential writer's rate, to see what concurrency buys.
	line = fmt.Sprintf("%-34s", "concurrent / 1 sequential writer")
	for _, s := range systems {
		seq := percentile(results[s.Name()].samples["put"], 0.5)
		v := throughput(results[s.Name()]) * seq.Seconds()
		line += fmt.Sprintf(" %13.1fx", v)
		if s.Name() != base {
			line += fmt.Sprintf(" %7s", "")
		}
	}
	fmt.Println(line)
	for _, n := range cfg.watcherCounts {
		latency(fmt.Sprintf("Watch put->receive p50, %d w", n), fmt.Sprintf("watch%d", n), 0.5)
		if n > 1 {
			latency(fmt.Sprintf("  first receiver p50, %d w", n), fmt.Sprintf("first%d", n), 0.5)
			latency(fmt.Sprintf("  last receiver p50, %d w", n), fmt.Sprintf("last%d", n), 0.5)
		}
		latency(fmt.Sprintf("Watch put->receive p99, %d w", n), fmt.Sprintf("watch%d", n), 0.99)
	}
}

func throughput(m *measures) float64 {
	if m.elapsed["cput"] == 0 {
		return 0
	}
	return float64(m.ops["cput"]) / m.elapsed["cput"].Seconds()
}
