// Package fault marks the narrow windows inside lockzoo's techniques where
// races happen, so that tests can stop a client in one of them
// deterministically.
//
//	import "github.com/lockzoo/lockzoo/internal/fault"
//
// A technique calls At(ctx, point) at each named point. A test installs a
// Hook in the context it passes to TryLock, Lock, Unlock or Extend (With);
// the hook can block the client there until the test lets it go (Gate), or
// make it stop as if its process died (Crash). With no hook installed, At is
// one context lookup and returns nil.
package fault
