package bench_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lockzoo/lockzoo/internal/bench"
)

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond // 100 ms down to 1 ms
	}
	tests := []struct {
		name string
		ds   []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one value", []time.Duration{7}, 0.99, 7},
		{"median of 100", hundred, 0.50, 50 * time.Millisecond},
		{"p99 of 100", hundred, 0.99, 99 * time.Millisecond},
		{"max of 100", hundred, 1, 100 * time.Millisecond},
		{"q 0 is the minimum", hundred, 0, time.Millisecond},
		{"q below 0 is the minimum", hundred, -1, time.Millisecond},
		{"q above 1 is the maximum", hundred, 2, 100 * time.Millisecond},
		{"nearest rank rounds up", []time.Duration{1, 2, 3}, 0.5, 2},
		{"p99 of 3 is the maximum", []time.Duration{3, 1, 2}, 0.99, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := slices.Clone(tt.ds)
			if got := bench.Percentile(tt.ds, tt.q); got != tt.want {
				t.Errorf("Percentile(%d values, %v) = %v, want %v", len(tt.ds), tt.q, got, tt.want)
			}
			if !slices.Equal(tt.ds, before) {
				t.Errorf("Percentile modified its input")
			}
		})
	}
}
