package article_test

import (
	"fmt"
	"time"

	"github.com/lockzoo/lockzoo/internal/article"
)

// CeilSeconds is how the articles' int(math.ceil(lock_timeout)) turns a
// TTL into EX seconds: rounded up, and at least 1.
func ExampleCeilSeconds() {
	fmt.Println(article.CeilSeconds(1500*time.Millisecond), article.CeilSeconds(time.Millisecond), article.CeilSeconds(2*time.Second))
	// Output: 2 1 2
}

// CeilMillis rounds a TTL up to whole milliseconds, so that a key never
// expires before a lease's Deadline.
func ExampleCeilMillis() {
	fmt.Println(article.CeilMillis(1500*time.Microsecond), article.CeilMillis(time.Second))
	// Output: 2 1000
}
