package fault_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lockzoo/lockzoo/internal/fault"
)

// A technique marks a race window with fault.At; a test stops a client
// there with a Gate, does what it needs while the client waits, then lets
// it go.
func ExampleGate() {
	gate := fault.NewGate("demo/release:after-get")
	done := make(chan error)
	go func() {
		ctx := fault.With(context.Background(), gate.Hook)
		done <- fault.At(ctx, "demo/release:after-get") // inside the technique
	}()
	<-gate.Reached()
	fmt.Println("client stopped in the window")
	gate.Open()
	fmt.Println("client went on:", <-done)
	// Output:
	// client stopped in the window
	// client went on: <nil>
}

// Crash makes a client "die" at a point: the technique returns at once,
// leaving Redis as it was there.
func ExampleCrash() {
	ctx := fault.With(context.Background(), fault.Crash("demo/acquire:after-setnx"))
	err := fault.At(ctx, "demo/acquire:after-setnx")
	fmt.Println(errors.Is(err, fault.ErrCrashed))
	// Output: true
}
