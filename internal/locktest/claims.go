package locktest

import (
	"errors"
	"testing"

	"github.com/lockzoo/lockzoo/strategy"
)

// What some techniques lack, beyond what strategy.Properties can say. The
// conformance checks that need these behaviours skip, or check the
// technique's documented answer instead; each technique's own tests show
// the flaw.

// The names of article 004's stepping stones to getset_timestamp.
const (
	method1 = "getset_timestamp/method1"
	method2 = "getset_timestamp/method2"
)

// takesBack reports whether a technique takes back an attempt whose
// outcome is unknown. getset_timestamp and its stepping stones cannot:
// their release checks no owner, so it could delete another holder's lock
// (a weakness their packages document and their own tests show).
func takesBack(p strategy.Properties) bool {
	return p.Name != "getset_timestamp" && p.Name != method1 && p.Name != method2
}

// lostReplyTest names the test of a technique that cannot take back an
// attempt (takesBack false) which shows what a lost acquire reply does to
// it instead: method 1's lock is held for good, getset_timestamp's and
// method 2's until the lost attempt's stored time passes
// (LostReplyHeldUntilStored).
func lostReplyTest(p strategy.Properties) string {
	if p.Name == method1 {
		return "getset_timestamp/method1 TestLostReplyKeepsLockForever"
	}
	return p.Name + " TestLostReplyHeldUntilStored"
}

// expires reports whether a lock whose holder died ends by itself. Method
// 1's key has no expiry: it stays until some client deletes it.
func expires(p strategy.Properties) bool { return p.Name != method1 }

// extends reports whether a technique implements Extend; the stepping
// stones return strategy.ErrUnsupported, as their articles have none.
func extends(p strategy.Properties) bool { return p.Name != method1 && p.Name != method2 }

// lateUnlockSafe reports whether an Unlock that comes after the lock
// expired and changed hands leaves the new holder's lock alone (by an
// owner check, or getset_timestamp's clock check). The stepping stones'
// release is a plain DEL.
func lateUnlockSafe(p strategy.Properties) bool { return p.Name != method1 && p.Name != method2 }

// checkExtendUnsupported fails the test unless err, what Extend returned
// on a technique without Extend, wraps strategy.ErrUnsupported.
func checkExtendUnsupported(t testing.TB, call string, err error) {
	t.Helper()
	if !errors.Is(err, strategy.ErrUnsupported) {
		t.Errorf("%s = %v, want %v (the technique has no Extend)", call, err, strategy.ErrUnsupported)
	}
}
