package method2_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
)

// TestLostReplyHeldUntilStored: method 2 cannot take back an attempt whose
// reply is lost (its DEL checks no owner), so the lost attempt's time holds
// the key, for nobody, until it passes; the conformance suite's lost-reply
// checks skip and point here.
func TestLostReplyHeldUntilStored(t *testing.T) {
	locktest.LostReplyHeldUntilStored(t, factory)
}
