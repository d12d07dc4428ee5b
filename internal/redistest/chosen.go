package redistest

// Backend returns the name of the backend ("docker" or "process") that
// Start would run t's nodes on, without starting any, so that a test whose
// nodes need the host's files (certificates, say) can skip before Start
// instead of after a node failed to read them. When no backend can run
// Redis it calls t.Fatalf saying why, as Start does.
func Backend(t TB) string {
	t.Helper()
	be, err := chooseBackend(t.Name(), t.TempDir)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return be.name()
}
