package dag

import "testing"

// sigCut on hand-made canonical objects, including the places an envelope
// never puts "sig" (first, only member), which the cut must still get
// right.
func TestSigCut(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a":1,"sig":"x","ts":"y"}`, `{"a":1,"ts":"y"}`},
		{`{"a":1,"sig":"x"}`, `{"a":1}`},
		{`{"sig":"x","ts":"y"}`, `{"ts":"y"}`},
		{`{"sig":"x"}`, `{}`},
	} {
		canon := []byte(c.in)
		var raw []byte // a subslice of canon, as members hands out
		if err := members(canon, func(k, v []byte) error {
			if string(k) == "sig" {
				raw = v
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		cut := sigCut(canon, raw)
		if got := string(canon[:cut[0]]) + string(canon[cut[1]:]); got != c.want {
			t.Errorf("%s: cut to %s, want %s", c.in, got, c.want)
		}
	}
}
