package redistest

// TB is the part of testing.TB the harness uses; *testing.T and *testing.B
// satisfy it. Code outside tests (the lockcompare command, the suite's
// Evaluate) supplies its own implementation: Fatalf must stop the calling
// goroutine (runtime.Goexit, as testing does) after recording the failure,
// and Cleanup functions must run, last registered first, when the run ends.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}
