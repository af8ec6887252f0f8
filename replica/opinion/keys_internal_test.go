package opinion

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestWireKeys: wireKeys lists exactly the member names of the schema's
// types, so that the one-pass key check neither refuses a member the
// decoder knows nor lets one through that it would match by case.
func TestWireKeys(t *testing.T) {
	tags := map[string]bool{}
	var walk func(reflect.Type)
	seen := map[reflect.Type]bool{}
	walk = func(ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := 0; i < ty.NumField(); i++ {
			tag, _, _ := strings.Cut(ty.Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				tags[tag] = true
			}
			walk(ty.Field(i).Type)
		}
	}
	walk(reflect.TypeOf(wireOpinion{}))
	walk(reflect.TypeOf(ForeignPrincipal{}))
	var missing, extra []string
	for k := range tags {
		if !wireKeys[k] {
			missing = append(missing, k)
		}
	}
	for k := range wireKeys {
		if !tags[k] {
			extra = append(extra, k)
		}
		if k != strings.ToLower(k) {
			t.Errorf("%q is not lower case", k)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing)+len(extra) > 0 {
		t.Fatalf("wireKeys lacks %v, has extra %v", missing, extra)
	}
}
