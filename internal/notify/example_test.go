package notify_test

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/lockzoo/lockzoo/internal/notify"
	"github.com/lockzoo/lockzoo/strategy"
)

// A Hub wakes listeners when a release notice arrives; a timer must still
// bound every wait, since a notice can be lost.
func ExampleHub() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "127.0.0.1:6379") }}
	defer pool.Close()
	woken := make(chan string, 1)
	hub := notify.NewHub([]strategy.Pool{pool}, func(channel, data string) {
		select {
		case woken <- channel:
		default:
		}
	})
	confirmed := hub.Subscribe("lock:k:notice")
	defer hub.Unsubscribe("lock:k:notice") // the last one ends the Hub's goroutine
	select {
	case <-confirmed:
	case <-time.After(50 * time.Millisecond): // go on without it: the timer covers us
	}
	select {
	case ch := <-woken:
		fmt.Println("released:", ch)
	case <-time.After(4 * time.Millisecond):
		fmt.Println("timer: try again")
	}
}
