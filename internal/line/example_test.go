package line_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/line"
)

// The attempt number is a field of the attempt; its owner token is
// written in one place.
func ExampleAttempt_SetTry() {
	a := line.Attempt{Key: "lock:{k}", Waiter: "w"}
	a.SetTry(3)
	fmt.Println(a.Token, a.Try, a.TokenNamesWaiter())
	a.SetPass(1) // the attempt a local Unlock makes for the waiter
	fmt.Println(a.Token, a.Try, a.Pass, a.TokenNamesWaiter())
	// Output:
	// w.3 3 true
	// w.p1 0 1 true
}

// released is a technique without a line in Redis: its release is all
// the line asks of it.
type released struct{}

func (released) Release(context.Context, line.Held) error { return nil }

// A Lock call joins its Locker's local line for the key; the head is told
// to try at once, the next one when the head leaves.
func ExampleLine_Join() {
	l, err := line.New(released{}, line.Config{TTL: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	ctx := context.Background()
	first := l.Join(line.Attempt{Key: "lock:{k}", Waiter: "a", Waits: true})
	second := l.Join(line.Attempt{Key: "lock:{k}", Waiter: "b", Waits: true})
	var atFirst, atSecond line.Place // what each call knows of its place in Redis
	_, _, try := atFirst.Heard(first, <-first.Events())
	fmt.Println("a tries:", try, first.Try().Token, "waiting:", l.Waiting("lock:{k}"))
	l.Leave(ctx, first, &atFirst)
	_, _, try = atSecond.Heard(second, <-second.Events())
	fmt.Println("b tries:", try, second.Try().Token, "waiting:", l.Waiting("lock:{k}"))
	l.Leave(ctx, second, &atSecond)
	// Output:
	// a tries: true a.1 waiting: 2
	// b tries: true b.1 waiting: 1
}
