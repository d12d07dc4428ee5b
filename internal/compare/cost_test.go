package compare

import "testing"

// TestMainThreadMicros: the main thread's user and system time count, in
// µs; a server that reports no main thread (before Redis 6.2) counts the
// process's; a reply without either is an error.
func TestMainThreadMicros(t *testing.T) {
	tests := []struct {
		name    string
		info    string
		want    int64
		wantErr bool
	}{
		{"main thread", "# CPU\r\nused_cpu_sys:9.5\r\nused_cpu_user:9.5\r\nused_cpu_sys_main_thread:1.25\r\nused_cpu_user_main_thread:2.5\r\n", 3750000, false},
		{"no main thread", "# CPU\r\nused_cpu_sys:0.000100\r\nused_cpu_user:0.000020\r\n", 120, false},
		{"no cpu fields", "# CPU\r\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mainThreadMicros(tt.info)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("mainThreadMicros() = %d, %v; want %d, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
