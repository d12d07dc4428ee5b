package redisinfo

import "strings"

// Fields returns the fields of an INFO reply (or of any text in its
// "field:value" form, such as CLUSTER INFO's), by name. Lines without a
// colon and section headers are left out; a value keeps everything after
// the first colon.
func Fields(info string) map[string]string {
	fields := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			fields[k] = v
		}
	}
	return fields
}
