package fencing_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/fencing"
	"github.com/lockzoo/lockzoo/internal/locktest"
	"github.com/lockzoo/lockzoo/internal/redistest"
	"github.com/lockzoo/lockzoo/strategy"
)

func TestWrite(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	ctx := context.Background()
	res, err := fencing.NewResource(node.Pool(), "resource")
	if err != nil {
		t.Fatalf("NewResource() = %v, want nil", err)
	}
	steps := []struct {
		token   uint64
		value   string
		wantErr error
		want    string // value stored afterwards
	}{
		{0, "zero", nil, "zero"},
		{5, "five", nil, "five"},
		{5, "five again", nil, "five again"}, // the same holder may write twice
		{4, "stale", fencing.ErrStaleToken, "five again"},
		{0, "unfenced", fencing.ErrStaleToken, "five again"},
		{9, "nine", nil, "nine"},
	}
	for _, s := range steps {
		err := res.Write(ctx, s.token, s.value)
		if !errors.Is(err, s.wantErr) || (s.wantErr == nil && err != nil) {
			t.Errorf("Write(%d, %q) = %v, want %v", s.token, s.value, err, s.wantErr)
		}
		got, _, err := res.Read(ctx)
		if err != nil || got != s.want {
			t.Errorf("Read() after Write(%d) = %q, %v; want %q", s.token, got, err, s.want)
		}
	}
	if _, token, _ := res.Read(ctx); token != 9 {
		t.Errorf("Read() token = %d, want 9", token)
	}
}

func TestInvalid(t *testing.T) {
	if _, err := fencing.NewResource(nil, "k"); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("NewResource(nil) = %v, want %v", err, strategy.ErrInvalidConfig)
	}
	if _, err := fencing.NewResource(&redis.Pool{}, ""); !errors.Is(err, strategy.ErrInvalidConfig) {
		t.Errorf("NewResource(\"\") = %v, want %v", err, strategy.ErrInvalidConfig)
	}
}

func TestRedisDown(t *testing.T) {
	locktest.NoLeaks(t)
	node := redistest.Start(t, 1)[0]
	res, err := fencing.NewResource(node.Pool(), "resource")
	if err != nil {
		t.Fatalf("NewResource() = %v, want nil", err)
	}
	node.Kill()
	if err := res.Write(context.Background(), 1, "x"); err == nil || errors.Is(err, fencing.ErrStaleToken) {
		t.Errorf("Write() on a killed node = %v, want a Redis failure", err)
	}
}
