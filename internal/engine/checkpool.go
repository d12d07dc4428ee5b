package engine

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/redisconn"
	"github.com/lockzoo/lockzoo/strategy"
)

// CheckPool returns an error wrapping strategy.ErrInvalidConfig when pool is
// nil. name is the field or argument to name in the message.
func CheckPool(pool strategy.Pool, name string) error {
	if redisconn.IsNil(pool) {
		return fmt.Errorf("%w: %s is nil", strategy.ErrInvalidConfig, name)
	}
	return nil
}
