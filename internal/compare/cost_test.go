package compare

import "testing"

// TestSumMicros: the usec of every command counts, but for the
// measurement's own INFO and CONFIG calls.
func TestSumMicros(t *testing.T) {
	tests := []struct {
		name string
		info string
		want int64
	}{
		{"empty", "# Commandstats\r\n", 0},
		{"two commands", "# Commandstats\r\ncmdstat_set:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\ncmdstat_evalsha:calls=10,usec=44,usec_per_call=4.40\r\n", 69},
		{"own calls left out", "cmdstat_info:calls=2,usec=100,usec_per_call=50\r\ncmdstat_config:calls=1,usec=7\r\ncmdstat_del:calls=1,usec=3\r\n", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sumMicros(tt.info); got != tt.want {
				t.Errorf("sumMicros() = %d, want %d", got, tt.want)
			}
		})
	}
}
