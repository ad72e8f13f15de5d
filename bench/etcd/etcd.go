package main

import (
	"context"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

type etcdSystem struct{ cli *clientv3.Client }

func newEtcd(addr string) (*etcdSystem, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 10 * time.Second})
	if err != nil {
		return nil, err
	}
	return &etcdSystem{cli}, nil
}

func (e *etcdSystem) Name() string { return "etcd" }
func (e *etcdSystem) Close()       { _ = e.cli.Close() }

func (e *etcdSystem) Put(ctx context.Context, _ int, key string, value []byte) (int64, error) {
	resp, err := e.cli.Put(ctx, key, string(value))
	if err != nil {
		return 0, err
	}
	return resp.Header.Revision, nil
}

func (e *etcdSystem) Get(ctx context.Context, key string) error {
	resp, err := e.cli.Get(ctx, key)
	if err == nil && len(resp.Kvs) != 1 {
		err = fmt.Errorf("get %s: %d keys", key, len(resp.Kvs))
	}
	return err
}

func (e *etcdSystem) CAS(ctx context.Context, key string, value []byte, expected int64) (int64, error) {
	resp, err := e.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(key), "=", expected)).
		Then(clientv3.OpPut(key, string(value))).
		Commit()
	if err != nil {
		return 0, err
	}
	if !resp.Succeeded {
		return 0, fmt.Errorf("cas on %s at %d refused", key, expected)
	}
	return resp.Header.Revision, nil
}

func (e *etcdSystem) Watch(ctx context.Context, prefix string, ready chan<- struct{}, onEvent func(string)) error {
	ch := e.cli.Watch(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	started := false
	for resp := range ch {
		if err := resp.Err(); err != nil {
			return err
		}
		if resp.Created && !started {
			started = true
			close(ready)
		}
		for _, ev := range resp.Events {
			onEvent(string(ev.Kv.Key))
		}
	}
	return ctx.Err()
}
