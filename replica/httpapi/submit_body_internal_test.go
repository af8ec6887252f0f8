package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/witan-dev/witan/dag"
	ht "github.com/witan-dev/witan/replica/house/housetest"
)

// sameSubmission fails t unless the fast and the generic reading of body
// give the same envelope, attachments and errors, word for word.
func sameSubmission(t interface {
	Helper()
	Fatalf(string, ...any)
}, body []byte) (fastTaken bool) {
	t.Helper()
	fast, ferr := parseSubmission(body, true)
	slow, serr := parseSubmission(body, false)
	if fmt.Sprint(ferr) != fmt.Sprint(serr) || dag.CodeOf(ferr) != dag.CodeOf(serr) {
		t.Fatalf("body %q:\nfast error %v\ngeneric error %v", body, ferr, serr)
	}
	if ferr != nil {
		return false
	}
	if !bytes.Equal(fast.env, slow.env) || fast.signed.ID != slow.signed.ID ||
		fmt.Sprint(fast.attErr) != fmt.Sprint(slow.attErr) || len(fast.atts) != len(slow.atts) {
		t.Fatalf("body %q:\nfast %q %v %q\ngeneric %q %v %q", body, fast.env, fast.attErr, fast.atts, slow.env, slow.attErr, slow.atts)
	}
	for i := range fast.atts {
		if !bytes.Equal(fast.atts[i], slow.atts[i]) {
			t.Fatalf("body %q: attachment %d: fast %q, generic %q", body, i, fast.atts[i], slow.atts[i])
		}
	}
	_, _, ok := splitTransaction(body)
	return ok
}

// TestSubmissionBodyFastMatchesGeneric: POST /transactions's one-pass
// reading of the body gives what encoding/json's Decoder and the
// envelope's and attachments' checks gave one after the other, for the
// usual bodies and for every odd one (keys spelled otherwise, repeated or
// unknown, values of the wrong kind, broken JSON, trailing bytes), and
// the usual bodies take the fast path.
func TestSubmissionBodyFastMatchesGeneric(t *testing.T) {
	env := string(ht.New(ht.Options{Simulation: true}).Create.Bytes)
	var ind bytes.Buffer
	if err := json.Indent(&ind, []byte(env), "", "  "); err != nil {
		t.Fatal(err)
	}
	spaced := ind.String() // not canonical
	usual := []string{
		`{"envelope":` + env + `}`,
		`{"envelope":` + env + `,"attachments":[]}`,
		`{"envelope":` + env + `,"attachments":null}`, // Transaction marshalled with no attachments
		`{"envelope":` + env + `,"attachments":[{"b":2,"a":[1,"x\"}"]},"a document"]}`,
		" {\n\t\"envelope\" : " + env + " ,\r\n \"attachments\" : [ {\"a\":1} , \"x\" ] } \n",
		`{"attachments":[{"a":{}}],"envelope":` + env + `}`,
		`{"envelope":` + spaced + `}`,
	}
	for _, b := range usual {
		if !sameSubmission(t, []byte(b)) {
			t.Fatalf("body %q did not take the fast path", b)
		}
	}
	odd := []string{
		``, ` `, `null`, `[]`, `""`, `{}`, `{"envelope":null}`, `{"envelope":{}}`, `{"envelope":"x"}`,
		`{"Envelope":` + env + `}`,
		`{"envel\u006fpe":` + env + `}`,
		`{"envelope":` + env + `,"envelope":` + env + `}`,
		`{"envelope":` + env + `,"extra":1}`,
		`{"envelope":` + env + `}{}`,
		`{"envelope":` + env + `} x`,
		`{"envelope":` + env + `,}`,
		`{"envelope":` + env + `,"attachments":nul}`,
		`{"envelope":` + env + `,"attachments":nullx}`,
		`{"envelope":` + env + `,"attachments":[1]}`,
		`{"envelope":` + env + `,"attachments":[""]}`,
		`{"envelope":` + env + `,"attachments":[{]}`,
		`{"envelope":` + env + `,"attachments":[{}],"attachments":[]}`,
		`{"envelope":` + env + `,"attachments":[{"a":1},]}`,
		`{"envelope":` + env + `,"attachments":["\x"]}`,
		`{"envelope":{"a":}}`,
		`{"envelope":` + env[:len(env)-1] + `]}`,
		`{"envelope":` + env[:len(env)/2] + `}`,
		`{"envelope":{"pad":"` + strings.Repeat("x", dag.MaxEnvelopeSize) + `"}}`,
	}
	for _, b := range odd {
		sameSubmission(t, []byte(b))
	}
	// Any edit of a usual body: a byte dropped, or one of JSON's own
	// inserted.
	rapid.Check(t, func(t *rapid.T) {
		b := []byte(rapid.SampledFrom(usual).Draw(t, "body"))
		for range rapid.IntRange(1, 3).Draw(t, "edits") {
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			if rapid.Bool().Draw(t, "drop") {
				b = append(b[:i:i], b[i+1:]...)
			} else {
				c := rapid.SampledFrom([]byte(`{}[]",:\ 0an`)).Draw(t, "byte")
				b = append(b[:i:i], append([]byte{c}, b[i:]...)...)
			}
		}
		sameSubmission(t, b)
	})
}
