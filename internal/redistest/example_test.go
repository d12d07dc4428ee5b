package redistest_test

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/redistest"
)

// In a test, Start(t, n) gives n fresh nodes torn down when the test ends.
// Outside tests, a Detached plays the test's part.
func ExampleDetached() {
	d := redistest.NewDetached("example")
	err := d.Run(func() {
		nodes := redistest.Start(d, 1)
		reply, err := nodes[0].Do("PING")
		fmt.Println(reply, err)
	})
	if err != nil {
		fmt.Println("no Redis:", err)
	}
}
