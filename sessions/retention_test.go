package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStaircase(t *testing.T) {
	r := goldfish(t).Staircase()
	tests := []struct {
		age  time.Duration
		want Level
	}{
		{-time.Hour, 5}, {0, 5}, {3*Day - time.Millisecond, 5}, {3 * Day, 2}, // boundaries exclusive
		{30*Day - 1, 2}, {30 * Day, 1}, {365*Day - 1, 1}, {365 * Day, 0}, {10 * 365 * Day, 0},
	}
	for _, tt := range tests {
		if got := r.Level(tt.age); got != tt.want {
			t.Errorf("L(%v) = %d, want %d", tt.age, got, tt.want)
		}
	}
}

func TestReadable(t *testing.T) {
	r := goldfish(t).Staircase()
	tests := []struct {
		s, h  Level
		limit time.Duration
		age   time.Duration
		want  Level
	}{
		{4, Unset, Forever, time.Hour, 4},
		{4, 0, Forever, time.Hour, 0},                // held while a raise is pending
		{3, Unset, 7 * Day, 6 * Day, 2},              // limit not reached
		{3, Unset, 7 * Day, 7 * Day, 0},              // limit reached, exactly
		{1, Unset, time.Minute, 59 * time.Second, 1}, // a limit under a day is honoured (D3)
		{1, Unset, time.Minute, time.Minute, 0},
		{5, Unset, Forever, 29 * Day, 2},
	}
	for _, tt := range tests {
		if got := r.Readable(tt.s, tt.h, tt.limit, tt.age); got != tt.want {
			t.Errorf("X(s=%d h=%d λ=%v a=%v) = %d, want %d", tt.s, tt.h, tt.limit, tt.age, got, tt.want)
		}
	}
	rec := Record{Stamped: 3, End: 1000, Limit: Forever}
	if got := rec.Readable(r, NoTime); got != 0 {
		t.Errorf("a record read without a time reads %d, want 0 (D1)", got)
	}
	if !rec.Expired(r, rec.End.Add(365*Day)) || rec.Expired(r, rec.End.Add(364*Day)) {
		t.Errorf("a record expires at u_k (D5)")
	}
}

func TestUnreadableAfter(t *testing.T) {
	r := goldfish(t).Staircase()
	want := map[Level]time.Duration{5: 3 * Day, 4: 3 * Day, 3: 3 * Day, 2: 30 * Day, 1: 365 * Day, 0: 365 * Day}
	for l, w := range want {
		if got := r.UnreadableAfter(l, Forever); got != w {
			t.Errorf("unreadable_after(%d) = %v, want %v", l, got, w)
		}
		if got := r.UnreadableAfter(l, 7*Day); got != minDur(w, 7*Day) {
			t.Errorf("unreadable_after(%d) ∧ 7 d = %v", l, got)
		}
	}
	short := Retention{steps: []Step{{Day, 3}}}
	if got := short.UnreadableAfter(5, Forever); got != 0 {
		t.Errorf("a level the schedule never reaches: %v, want 0", got)
	}
}

// docs/memory-model.md carries Tables 7.5 and 7.6 between markers; they are
// regenerated from the code here, and any difference fails (-update
// rewrites them).
func TestMemoryModelDocTables(t *testing.T) {
	path := filepath.Join("..", "docs", "memory-model.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := goldfish(t)
	r := p.Staircase()
	en, _ := RulesTable("en")
	es, _ := RulesTable("es")
	tables := []struct{ name, body string }{
		{"table-1.2", p.Table()},
		{"rules-en", en},
		{"rules-es", es},
		{"table-7.5", r.ReadableTable()},
		{"table-7.6", r.UnreadableTable()},
	}
	out := doc
	for _, tb := range tables {
		begin := []byte("<!-- BEGIN " + tb.name + " -->\n")
		end := []byte("<!-- END " + tb.name + " -->")
		i := bytes.Index(out, begin)
		j := bytes.Index(out, end)
		if i < 0 || j < i {
			t.Fatalf("%s: markers for %s missing", path, tb.name)
		}
		got := string(out[i+len(begin) : j])
		if got != tb.body {
			if !*update {
				t.Errorf("%s: %s differs from the code (run go test -run DocTables -update):\n got:\n%s\nwant:\n%s", path, tb.name, got, tb.body)
			}
			out = append(append(append([]byte{}, out[:i+len(begin)]...), tb.body...), out[j:]...)
		}
	}
	if *update && !bytes.Equal(out, doc) {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTablesMatchSpec(t *testing.T) {
	r := goldfish(t).Staircase()
	// Table 7.5 and 7.6 as printed in the spec.
	want75 := `| Stamped | < 3 d | 3 d to < 30 d | 30 d to < 365 d | ≥ 365 d |
|---|---|---|---|---|
| 5 | 5 | 2 | 1 | 0 |
| 4 | 4 | 2 | 1 | 0 |
| 3 | 3 | 2 | 1 | 0 |
| 2 | 2 | 2 | 1 | 0 |
| 1 | 1 | 1 | 1 | 0 |
| 0 | 0 | 0 | 0 | 0 |
`
	want76 := `| Level | 5 | 4 | 3 | 2 | 1 | 0 |
|---|---|---|---|---|---|---|
| Unrecoverable after | 3 d | 3 d | 3 d | 30 d | 365 d | 365 d |
`
	if got := r.ReadableTable(); got != want75 {
		t.Errorf("Table 7.5:\n%s", got)
	}
	if got := r.UnreadableTable(); got != want76 {
		t.Errorf("Table 7.6:\n%s", got)
	}
	if !strings.Contains(FormatAge(90*time.Second), "90 s") || FormatAge(1500*time.Millisecond) != "1500 ms" {
		t.Errorf("FormatAge")
	}
}
