package chaos_test

import (
	"testing"

	"github.com/lockzoo/lockzoo/internal/locktest"
)

func TestMain(m *testing.M) {
	locktest.VerifyTestMain(m)
}
