// Package redisinfo reads the text Redis's INFO command replies with: one
// "field:value" line per field, "# Section" headers between them.
//
//	import "github.com/lockzoo/lockzoo/internal/redisinfo"
//
// It is the one parser of that text for the test harness
// (internal/redistest, internal/locktest), lockcompare's measurements
// (internal/compare) and lockcompare check (internal/check).
package redisinfo
