package lockerr_test

import (
	"errors"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/lockerr"
	"github.com/lockzoo/lockzoo/strategy"
)

// The layer facing the caller names lockzoo and the technique once; the
// sentinel's own "lockzoo: " is dropped, and errors.Is still finds it.
func ExampleOp() {
	err := lockerr.Op("redlock", "unlock", "k", fmt.Errorf("%w: lease already released", strategy.ErrNotHeld))
	fmt.Println(err)
	fmt.Println(errors.Is(err, strategy.ErrNotHeld))
	// Output:
	// lockzoo: redlock: unlock "k": lock not held: lease already released
	// true
}

// Several nodes' failures on one line.
func ExampleJoined() {
	down := errors.New("connection refused")
	err := fmt.Errorf("no quorum: %w", lockerr.Joined{fmt.Errorf("node 0: %w", down), errors.New("node 2: timeout")})
	fmt.Println(err)
	fmt.Println(errors.Is(err, down))
	// Output:
	// no quorum: node 0: connection refused; node 2: timeout
	// true
}
