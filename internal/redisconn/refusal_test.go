package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/redisconn"
)

func TestRefusal(t *testing.T) {
	sentinel := errors.New("the cluster is down")
	refusal := &redisconn.Refusal{Err: fmt.Errorf("GET: %w", sentinel)}
	for _, tc := range []struct {
		name        string
		err         error
		refusal     bool // IsRefusal(err)
		after       bool // IsRefusal(AfterWrite(err))
		afterCtxErr bool // errors.Is(AfterWrite(err), context.DeadlineExceeded)
	}{
		{"nil", nil, false, false, false},
		{"another error", sentinel, false, false, false},
		{"a refusal", refusal, true, false, false},
		{"a wrapped refusal", fmt.Errorf("SET NX EX: %w", refusal), true, false, false},
		{"a refusal past the deadline", fmt.Errorf("%w: %w", context.DeadlineExceeded, refusal), true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.refusal, redisconn.IsRefusal(tc.err), "IsRefusal")
			after := redisconn.AfterWrite(tc.err)
			assert.Equal(t, tc.after, redisconn.IsRefusal(after), "IsRefusal(AfterWrite)")
			assert.Equal(t, tc.afterCtxErr, errors.Is(after, context.DeadlineExceeded), "AfterWrite keeps the ctx's error")
			if tc.err == nil {
				assert.NoError(t, after)
				return
			}
			assert.Equal(t, tc.err.Error(), after.Error(), "AfterWrite keeps the message")
			assert.Equal(t, errors.Is(tc.err, sentinel), errors.Is(after, sentinel), "AfterWrite keeps the sentinel")
		})
	}
}
