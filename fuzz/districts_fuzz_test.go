package fuzz

import (
	"slices"
	"testing"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/view"
)

// FuzzReplicaDistricts: any bytes either decode to a district table
// (D72) that declares exactly region and density and gives every member
// a declared value of each, or fail with code schema or
// district_attribute_invalid.
func FuzzReplicaDistricts(f *testing.F) {
	k := "ed25519:" + "A" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	f.Add([]byte(`{"attributes":{"density":["rural","urban"],"region":["north","south"]},"members":{"` + k + `":{"density":"urban","region":"north"}}}`))
	f.Add([]byte(`{"attributes":{"density":["rural"],"region":["north"],"religion":["a"]},"members":{}}`))
	f.Add([]byte(`{"attributes":{"density":["a","a"],"region":["b"]},"members":{}}`))
	f.Add([]byte(`{"members":{},"attributes":{}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		d, err := view.DecodeDistricts(in)
		if err != nil {
			if c := dag.CodeOf(err); c != dag.CodeSchema && c != dag.CodeDistrictAttributeInvalid {
				t.Fatalf("error without a protocol code: %v", err)
			}
			return
		}
		if len(d.Values) != 2 || len(d.Values[view.AttrRegion]) == 0 || len(d.Values[view.AttrDensity]) == 0 {
			t.Fatalf("decoded table declares %v", d.Values)
		}
		for k, m := range d.Members {
			if !k.Valid() || len(m) != 2 {
				t.Fatalf("member %v: %v", k, m)
			}
			for a, v := range m {
				if !slices.Contains(d.Values[a], v) {
					t.Fatalf("member %v: %s %q not declared", k, a, v)
				}
			}
		}
	})
}
