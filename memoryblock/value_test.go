package memoryblock_test

import (
	"testing"

	"github.com/witan-dev/witan/dag"
	mb "github.com/witan-dev/witan/memoryblock"
)

// Omitted, null and empty are three states, told apart by presence, never by
// a zero value.
func TestOmittedNullEmptyAreDistinct(t *testing.T) {
	cases := []struct {
		name     string
		v        mb.Value
		presence mb.Presence
		empty    bool
		json     string
	}{
		{"omitted", mb.Value{}, mb.Omitted, false, ""},
		{"null", mb.NullValue(), mb.Null, false, "null"},
		{"empty string", mb.MustText(""), mb.Present, true, `""`},
		{"empty array", mb.MustValue("[ ]"), mb.Present, true, "[]"},
		{"empty object", mb.MustValue(" {}"), mb.Present, true, "{}"},
		{"zero", mb.MustValue("0"), mb.Present, false, "0"},
		{"false", mb.MustValue("false"), mb.Present, false, "false"},
		{"text", mb.MustText("x"), mb.Present, false, `"x"`},
		{"parsed null", mb.MustValue(" null "), mb.Null, false, "null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.v.Presence() != c.presence || c.v.IsEmpty() != c.empty || string(c.v.JSON()) != c.json {
				t.Errorf("presence %v empty %v json %q", c.v.Presence(), c.v.IsEmpty(), c.v.JSON())
			}
			if c.v.IsOmitted() != (c.presence == mb.Omitted) || c.v.IsNull() != (c.presence == mb.Null) || c.v.IsPresent() != (c.presence == mb.Present) {
				t.Error("Is* disagree with Presence")
			}
		})
	}
	var omitted mb.Value
	if omitted == mb.NullValue() || mb.NullValue() == mb.MustText("") || omitted == mb.MustText("") {
		t.Fatal("two of omitted, null and empty compare equal")
	}
	if (mb.Value{}).JSON() != nil {
		t.Fatal("an omitted value has JSON text")
	}
}

func TestValueConstructorsRefuse(t *testing.T) {
	for name, f := range map[string]func() (mb.Value, error){
		"invalid utf-8":    func() (mb.Value, error) { return mb.Text("\xff") },
		"not NFC":          func() (mb.Value, error) { return mb.Text("e\u0301") },
		"float":            func() (mb.Value, error) { return mb.ParseValue([]byte("0.8")) },
		"unsafe integer":   func() (mb.Value, error) { return mb.Int(1 << 53) },
		"duplicate key":    func() (mb.Value, error) { return mb.ParseValue([]byte(`{"a":1,"a":2}`)) },
		"two values":       func() (mb.Value, error) { return mb.ParseValue([]byte(`1 2`)) },
		"empty input":      func() (mb.Value, error) { return mb.ParseValue(nil) },
		"nested NFC check": func() (mb.Value, error) { return mb.ParseValue([]byte("[\"e\u0301\"]")) },
	} {
		if _, err := f(); mb.CodeOf(err) != mb.CodeBlockMalformed {
			t.Errorf("%s: error %v, want BLOCK_MALFORMED", name, err)
		}
	}
	if v, err := mb.Text("\u00e9"); err != nil || string(v.JSON()) != "\"\u00e9\"" {
		t.Errorf("Text(é) = %s, %v", v, err)
	}
	if s, ok := mb.MustText("a\"b\\c\n\u0001").AsText(); !ok || s != "a\"b\\c\n\u0001" {
		t.Errorf("AsText round trip = %q, %v", s, ok)
	}
	if _, ok := mb.MustValue("1").AsText(); ok {
		t.Error("AsText on a number")
	}
}

func TestParents(t *testing.T) {
	a, b := dag.Sum([]byte("a")), dag.Sum([]byte("b"))
	p := mb.MustParents(b, a)
	if p.Presence() != mb.Present || p.Len() != 2 || p.At(0) != b || p.At(1) != a {
		t.Fatalf("ParentsOf(b, a) = %v", p)
	}
	if ids := p.IDs(); len(ids) != 2 || ids[0] != b {
		t.Fatalf("IDs() = %v", ids)
	}
	root := mb.MustParents()
	if root.Presence() != mb.Present || root.IDs() == nil || len(root.IDs()) != 0 || string(root.Value().JSON()) != "[]" {
		t.Errorf("root lineage: %v %v", root.Presence(), root.IDs())
	}
	if (mb.Parents{}).IDs() != nil || mb.NullParents().IDs() != nil {
		t.Error("omitted/null lineage names parents")
	}
	if (mb.Parents{}) == mb.NullParents() || mb.NullParents() == root {
		t.Error("omitted, null and empty lineage compare equal")
	}
	if _, err := mb.ParentsOf(a, a); mb.CodeOf(err) != mb.CodeBlockMalformed {
		t.Errorf("duplicate parent: %v", err)
	}
	if _, err := mb.ParentsOf(dag.ID{}); mb.CodeOf(err) != mb.CodeBlockMalformed {
		t.Errorf("zero parent: %v", err)
	}
	many := make([]dag.ID, mb.MaxParents+1)
	for i := range many {
		many[i] = dag.Sum([]byte{byte(i), byte(i >> 8)})
	}
	if _, err := mb.ParentsOf(many...); mb.CodeOf(err) != mb.CodeBlockMalformed {
		t.Errorf("too many parents: %v", err)
	}
	if _, err := mb.ParentsOf(many[:mb.MaxParents]...); err != nil {
		t.Errorf("MaxParents parents: %v", err)
	}
}
