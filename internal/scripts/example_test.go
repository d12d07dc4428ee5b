package scripts_test

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/scripts"
)

// Scripts run with EVALSHA by their SHA-1 (redigo falls back to EVAL on
// NOSCRIPT); each takes one key.
func ExampleCompareDelete() {
	s := scripts.CompareDelete()
	fmt.Println(len(s.Hash()))
	// Output: 40
}
