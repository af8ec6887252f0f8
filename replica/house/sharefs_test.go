package house

import (
	"bytes"
	"regexp"
	"testing"

	"pgregory.net/rapid"
)

// shaRefs finds exactly what the regexp it replaced found, in bodies made
// of fragments that come close to a reference and miss it.
func TestShaRefsMatchesRegexp(t *testing.T) {
	re := regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	hex := "0123456789abcdef"
	rapid.Check(t, func(rt *rapid.T) {
		var b bytes.Buffer
		for range rapid.IntRange(0, 12).Draw(rt, "parts") {
			switch rapid.IntRange(0, 4).Draw(rt, "kind") {
			case 0:
				b.WriteString("sha256:")
			case 1:
				for range rapid.IntRange(0, 70).Draw(rt, "hexlen") {
					b.WriteByte(hex[rapid.IntRange(0, 15).Draw(rt, "h")])
				}
			case 2:
				b.WriteString(rapid.SampledFrom([]string{`"`, "sha256", ":", "A", "sha256:sha256:", " "}).Draw(rt, "junk"))
			default:
				b.WriteString("sha256:" + string(bytes.Repeat([]byte{hex[rapid.IntRange(0, 15).Draw(rt, "d")]}, 64)))
			}
		}
		want, got := re.FindAll(b.Bytes(), -1), shaRefs(b.Bytes())
		if len(want) != len(got) {
			rt.Fatalf("%q: regexp %q, shaRefs %q", b.Bytes(), want, got)
		}
		for i := range want {
			if !bytes.Equal(want[i], got[i]) {
				rt.Fatalf("%q: regexp %q, shaRefs %q", b.Bytes(), want, got)
			}
		}
	})
}
