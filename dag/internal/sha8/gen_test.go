package sha8

import (
	"testing"

	"github.com/witan-dev/witan/dag/internal/gentest"
)

// The committed kernels are exactly what gen.go writes.
func TestGeneratedAssembly(t *testing.T) { gentest.Check(t, "gen.go", "sha8_amd64.s") }
