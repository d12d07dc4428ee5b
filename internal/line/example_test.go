package line_test

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/line"
)

// The attempt number is a field of the attempt; its owner token is
// written in one place.
func ExampleAttempt_SetTry() {
	a := line.Attempt{Key: "lock:{k}", Waiter: "w"}
	a.SetTry(3)
	fmt.Println(a.Token, a.Try, a.TokenNamesWaiter())
	a.SetPass(1) // the attempt a local Unlock makes for the waiter
	fmt.Println(a.Token, a.Try, a.Pass)
	try, pass, ok := line.ParseToken("w.3", "w")
	fmt.Println(try, pass, ok)
	// Output:
	// w.3 3 true
	// w.p1 0 1
	// 3 0 true
}
