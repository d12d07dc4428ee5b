package lockerr_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/lockzoo/lockzoo/internal/lockerr"
)

// TestJoined: the messages on one line, separated by "; ", and errors.Is
// finds each error.
func TestJoined(t *testing.T) {
	a := errors.New("a")
	tests := []struct {
		name string
		errs lockerr.Joined
		want string
	}{
		{name: "one", errs: lockerr.Joined{a}, want: "a"},
		{name: "two", errs: lockerr.Joined{a, context.DeadlineExceeded}, want: "a; context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.errs.Error())
			for _, err := range tt.errs {
				assert.ErrorIs(t, tt.errs, err)
			}
		})
	}
}
