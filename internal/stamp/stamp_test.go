package stamp

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExpiryAt(t *testing.T) {
	now := time.UnixMilli(1_000).Add(300 * time.Microsecond)
	got, validity := ExpiryAt(now, 10*time.Millisecond)
	if got != 1_010 || validity != 9700*time.Microsecond {
		t.Errorf("ExpiryAt = %d, %v; want 1010, 9.7ms (truncated to the ms)", got, validity)
	}
	if got, _ := ExpiryAt(now, 0); got != 1_001 {
		t.Errorf("ExpiryAt(ttl 0) = %d, want 1001 (at least 1 ms)", got)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Stamp
		ok   bool
	}{
		{"1764581234567", 1764581234567, true},
		{"0", 0, true},
		{"-1", 0, false},
		{"x", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		if got, ok := Parse(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if s := Stamp(42); s.String() != "42" {
		t.Errorf("String() = %q, want 42", s.String())
	}
}

func TestPassed(t *testing.T) {
	now := time.UnixMilli(1_000)
	if Stamp(999).Passed(now) != true || Stamp(1_000).Passed(now) != false {
		t.Errorf("Passed: 999 at 1000 should have passed, 1000 at 1000 not")
	}
}

func TestNotTimestamp(t *testing.T) {
	sentinel := errors.New("not a timestamp")
	err := NotTimestamp(sentinel, "lock:k", strings.Repeat("v", 100))
	if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), `"lock:k"`) || !strings.Contains(err.Error(), strings.Repeat("v", 64)+"...") || strings.Contains(err.Error(), strings.Repeat("v", 65)) {
		t.Errorf("NotTimestamp = %v; want it to wrap the sentinel, name the key and quote 64 bytes of the value", err)
	}
}
