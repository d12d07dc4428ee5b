package redisinfo_test

import (
	"fmt"

	"github.com/lockzoo/lockzoo/internal/redisinfo"
)

func ExampleFields() {
	f := redisinfo.Fields("# Replication\r\nrole:master\r\nconnected_slaves:1\r\n")
	fmt.Println(f["role"], f["connected_slaves"])
	// Output: master 1
}
