package lockerr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

func TestErrorRenders(t *testing.T) {
	luaErr := errors.New("ERR lockzoo: fencing counter lock:{k}:fence holds 7 (script: acquire)")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no op", lockerr.New("lua_release", fmt.Errorf("%w: pool is nil", strategy.ErrInvalidConfig)),
			"lockzoo: lua_release: invalid config: pool is nil"},
		{"op and key", lockerr.Op("redlock", "unlock", "k", fmt.Errorf("%w: lease already released", strategy.ErrNotHeld)),
			`lockzoo: redlock: unlock "k": lock not held: lease already released`},
		{"key quoted", lockerr.Op("set_nx_ex", "lock", `a "b"`, strategy.ErrClosed),
			`lockzoo: set_nx_ex: lock "a \"b\"": locker closed`},
		{"two sentinels and a last failure", lockerr.Op("lua_release", "lock", "k",
			fmt.Errorf("%w: %w (last failure: %w)", strategy.ErrNotAcquired, context.DeadlineExceeded, fmt.Errorf("acquire: %w", luaErr))),
			`lockzoo: lua_release: lock "k": lock not acquired: context deadline exceeded (last failure: acquire: ERR fencing counter lock:{k}:fence holds 7 (script: acquire))`},
		{"joined errors", lockerr.Op("redlock", "lock", "k", errors.Join(strategy.ErrNotAcquired, strategy.ErrClosed)),
			"lockzoo: redlock: lock \"k\": lock not acquired\nlocker closed"},
		{"wrapped error of the same technique", lockerr.Op("lua_release", "run", "k",
			fmt.Errorf("lock lost: %w", lockerr.Op("lua_release", "extend", "k", strategy.ErrNotHeld))),
			`lockzoo: lua_release: run "k": lock lost: extend "k": lock not held`},
		{"prefix inside a word is kept", lockerr.Op("watch_multi", "lock", "app-lockzoo: x", errors.New(`GET "app-lockzoo: x": down`)),
			`lockzoo: watch_multi: lock "app-lockzoo: x": GET "app-lockzoo: x": down`},
		{"nil cause", lockerr.New("fencing", nil), "lockzoo: fencing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.err.Error())
		})
	}
}

func TestErrorUnwraps(t *testing.T) {
	inner := lockerr.Op("lua_release", "extend", "k", strategy.ErrNotHeld)
	err := lockerr.Op("lua_release", "lock", "k",
		fmt.Errorf("%w: %w (last failure: %w)", strategy.ErrNotAcquired, context.Canceled, inner))
	for _, want := range []error{strategy.ErrNotAcquired, context.Canceled, strategy.ErrNotHeld, inner} {
		assert.ErrorIs(t, err, want)
	}
	assert.NotErrorIs(t, err, strategy.ErrClosed)
	var le *lockerr.Error
	if assert.ErrorAs(t, err, &le) {
		assert.Equal(t, "lock", le.Op, "the outermost *Error's Op")
	}
}
