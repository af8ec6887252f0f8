package memoryblock_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mb "github.com/witan-dev/witan/memoryblock"
)

func TestFieldsInHashOrder(t *testing.T) {
	want := []mb.Field{"origin", "subject", "body", "evidence", "confidence", "observed_at", "lineage"}
	if got := mb.Fields(); !slices.Equal(got, want) {
		t.Fatalf("Fields() = %v, want %v", got, want)
	}
	got := mb.Fields()
	got[0] = "mutated"
	if mb.Fields()[0] != mb.Origin {
		t.Fatal("Fields returns the package's own slice")
	}
}

// The two groups partition the seven: every field is in exactly one, and
// the groups hold nothing else.
func TestInheritedAndChoosablePartitionTheFields(t *testing.T) {
	inh, cho := mb.InheritedFields(), mb.ReceiverChoosableFields()
	if !slices.Equal(inh, []mb.Field{mb.Origin, mb.ObservedAt, mb.Lineage}) {
		t.Errorf("InheritedFields() = %v", inh)
	}
	if !slices.Equal(cho, []mb.Field{mb.Subject, mb.Body, mb.Evidence, mb.Confidence}) {
		t.Errorf("ReceiverChoosableFields() = %v", cho)
	}
	count := map[mb.Field]int{}
	for _, f := range append(inh, cho...) {
		count[f]++
	}
	for _, f := range mb.Fields() {
		if count[f] != 1 {
			t.Errorf("%s is in %d groups, want exactly 1", f, count[f])
		}
		if f.Inherited() == f.ReceiverChoosable() {
			t.Errorf("%s: Inherited %v, ReceiverChoosable %v", f, f.Inherited(), f.ReceiverChoosable())
		}
		delete(count, f)
	}
	if len(count) != 0 {
		t.Errorf("groups hold names that are not fields: %v", count)
	}
}

func TestParseField(t *testing.T) {
	for _, f := range mb.Fields() {
		got, err := mb.ParseField(string(f))
		if err != nil || got != f {
			t.Errorf("ParseField(%q) = %q, %v", f, got, err)
		}
	}
	for _, name := range []string{"", "Origin", "ORIGIN", "observedAt", "observed-at", " body", "hash"} {
		if _, err := mb.ParseField(name); mb.CodeOf(err) != mb.CodeFieldNotAField {
			t.Errorf("ParseField(%q) error %v, want FIELD_NOT_A_FIELD", name, err)
		}
	}
}

// notHere are the names the spec says are not part of this implementation:
// the seven fields of a description circulating elsewhere and its two
// mechanism names. They appear here only as test inputs.
var notHere = []string{
	"focus", "issue", "intent", "motivation", "commitment", "perspective", "mood",
	"SVAF", "remix",
}

// One subtest per name: on the wire it is BLOCK_UNKNOWN_FIELD, asked about it
// is FIELD_NOT_A_FIELD, and it is never kept.
func TestNamesFromElsewhereAreRefused(t *testing.T) {
	if len(notHere) != 9 {
		t.Fatalf("%d names, the spec lists 9", len(notHere))
	}
	good := string(sample(t).Encode())
	for _, name := range append(slices.Clone(notHere), "svaf", "Remix", "MOOD") {
		t.Run(name, func(t *testing.T) {
			// a whole block written with the other names
			wire := `{"` + name + `":"x"}`
			if _, err := mb.Decode([]byte(wire)); mb.CodeOf(err) != mb.CodeBlockUnknownField {
				t.Errorf("Decode(%s) error %v, want BLOCK_UNKNOWN_FIELD", wire, err)
			}
			// one extra key on an otherwise valid, sealed block
			extra := good[:len(good)-1] + `,"` + name + `":1}`
			_, err := mb.Decode([]byte(extra))
			if mb.CodeOf(err) != mb.CodeBlockUnknownField {
				t.Fatalf("Decode(valid block + %q) error %v, want BLOCK_UNKNOWN_FIELD", name, err)
			}
			if e := err.(*mb.Error); e.Field != mb.Field(name) {
				t.Errorf("error names field %q, want %q", e.Field, name)
			}
			if _, err := mb.ParseField(name); mb.CodeOf(err) != mb.CodeFieldNotAField {
				t.Errorf("ParseField: %v, want FIELD_NOT_A_FIELD", err)
			}
			for _, level := range []mb.Level{0, 50, 100} {
				d := mb.AcceptField(mb.Field(name), level)
				if d.Code != mb.CodeFieldNotAField || d.Allowed || d.Keeps() {
					t.Errorf("AcceptField(%q, %d) = %+v, want FIELD_NOT_A_FIELD and not kept", name, level, d)
				}
				if _, ok := d.Required.Level(); ok {
					t.Errorf("AcceptField(%q) requires a level", name)
				}
			}
			if _, err := sample(t).Get(mb.Field(name)); mb.CodeOf(err) != mb.CodeFieldNotAField {
				t.Errorf("Block.Get: %v, want FIELD_NOT_A_FIELD", err)
			}
			if mb.Field(name).Valid() {
				t.Error("Valid() = true")
			}
			v := mb.AcceptWithAuthority(sample(t), 100).Accepted
			if v.Has(mb.Field(name)) {
				t.Error("View.Has = true")
			}
		})
	}
}

// None of those names occurs in the implementation (any case), as the spec
// measured of the tool it describes.
func TestNamesFromElsewhereAbsentFromSource(t *testing.T) {
	checked := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		src := strings.ToLower(string(b))
		for _, name := range notHere {
			if strings.Contains(src, strings.ToLower(name)) {
				t.Errorf("%s contains %q", path, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 5 {
		t.Fatalf("checked %d source files; the scan would be vacuous", checked)
	}
}

func TestCodes(t *testing.T) {
	want := []mb.Code{"BLOCK_HASH_MISMATCH", "BLOCK_UNKNOWN_FIELD", "FIELD_NOT_A_FIELD", "FIELD_ALWAYS_REFUSED",
		"FIELD_BELOW_AUTHORITY", "FIELD_UNDECLARED", "BLOCK_MISSING_PARENT", "BLOCK_CYCLE", "BLOCK_MALFORMED"}
	if got := mb.Codes(); !slices.Equal(got, want) {
		t.Fatalf("Codes() = %v", got)
	}
	for _, c := range want {
		if !c.Known() || c.String() != string(c) || c.Text() == "" {
			t.Errorf("%s: Known %v String %q Text %q", c, c.Known(), c.String(), c.Text())
		}
	}
	if c := mb.Code("FIELD_FORBIDDEN"); c.Known() || c.String() != `unknown_code("FIELD_FORBIDDEN")` {
		t.Errorf("unknown code: Known %v String %q", c.Known(), c.String())
	}
	err := error(&mb.Error{Code: mb.CodeBlockCycle, Detail: "d"})
	if err.Error() != "memoryblock: BLOCK_CYCLE: d" || mb.CodeOf(err) != mb.CodeBlockCycle || mb.CodeOf(nil) != "" {
		t.Errorf("Error/CodeOf: %q %q", err.Error(), mb.CodeOf(err))
	}
}
