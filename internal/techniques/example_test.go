package techniques_test

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/techniques"
)

func ExampleAll() {
	for _, t := range techniques.All() {
		fmt.Println(t.Name, t.Nodes)
	}
	// Output:
	// setnx_expire 1
	// getset_timestamp/method1 1
	// getset_timestamp/method2 1
	// getset_timestamp 1
	// watch_multi 1
	// set_nx_ex 1
	// lua_release 1
	// redlock 5
}
