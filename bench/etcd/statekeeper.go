package main

import (
	"context"
	"fmt"

	"github.com/statekeeper/statekeeper/clients/go/statekeeper"
	sk "github.com/statekeeper/statekeeper/clients/go/statekeeperv1"
)

const board = "bench"

// statekeeperSystem is one blackboard behind one or more replicas.
type statekeeperSystem struct {
	name     string
	replicas []*statekeeper.Client
}

func newStatekeeper(name string, addrs []string, apiKey string) (*statekeeperSystem, error) {
	s := &statekeeperSystem{name: name}
	for _, addr := range addrs {
		opts := []statekeeper.Option{}
		if apiKey != "" {
			opts = append(opts, statekeeper.WithAPIKey(apiKey))
		}
		c, err := statekeeper.Dial(addr, opts...)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.replicas = append(s.replicas, c)
	}
	return s, nil
}

func (s *statekeeperSystem) Name() string { return s.name }

func (s *statekeeperSystem) Close() {
	for _, c := range s.replicas {
		_ = c.Close()
	}
}

func (s *statekeeperSystem) writer(i int) sk.BlackboardServiceClient {
	return s.replicas[i%len(s.replicas)].Blackboard
}

// watcher is the last replica: with two, events cross from the writer's.
func (s *statekeeperSystem) watcher() sk.BlackboardServiceClient {
	return s.replicas[len(s.replicas)-1].Blackboard
}

func payload(value []byte) *sk.BlackboardValue {
	return &sk.BlackboardValue{Kind: &sk.BlackboardValue_Payload{Payload: &sk.Payload{Data: value}}}
}

func (s *statekeeperSystem) Put(ctx context.Context, w int, key string, value []byte) (int64, error) {
	resp, err := s.writer(w).PutEntry(ctx, &sk.PutEntryRequest{Board: board, Key: key, Value: payload(value)})
	if err != nil {
		return 0, err
	}
	return resp.GetEntry().GetModRevision(), nil
}

func (s *statekeeperSystem) Get(ctx context.Context, key string) error {
	resp, err := s.writer(0).GetEntry(ctx, &sk.GetEntryRequest{Board: board, Key: key})
	if err == nil && resp.GetEntry() == nil {
		err = fmt.Errorf("get %s: absent", key)
	}
	return err
}

func (s *statekeeperSystem) CAS(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	resp, err := s.writer(0).PutEntry(ctx, &sk.PutEntryRequest{
		Board: board, Key: key, Value: payload(value), ExpectedModRevision: &expected,
	})
	if err != nil {
		return 0, err
	}
	return resp.GetEntry().GetModRevision(), nil
}

func (s *statekeeperSystem) Watch(ctx context.Context, prefix string, ready chan<- struct{}, onEvent func(string)) error {
	stream, err := s.watcher().Watch(ctx, &sk.WatchRequest{
		Board: board, Selector: &sk.WatchRequest_Prefix{Prefix: prefix},
	})
	if err != nil {
		return err
	}
	started := false
	for {
		resp, err := stream.Recv()
		if err != nil {
			return err
		}
		if resp.GetStarted() != nil && !started {
			started = true
			close(ready)
		}
		for _, ev := range resp.GetEvents().GetEvents() {
			onEvent(ev.GetEntry().GetKey())
		}
	}
}
