package opinion

import (
	"strings"
	"testing"
)

// Exchange members as D67 writes them, decoded or refused schema; worked
// out by hand from "exchange: {"mr":"sha256:...","from":"chamber:<id>|
// executive","offer":"sha256:<change>","prior":"sha256:<exchange>|null"}".
func TestExchangeDecode(t *testing.T) {
	id := "sha256:" + strings.Repeat("ab", 32)
	other := "sha256:" + strings.Repeat("cd", 32)
	ok := []string{
		`{"mr":"` + id + `","from":"executive","offer":"` + other + `","prior":null}`,
		`{"mr":"` + id + `","from":"chamber:senate","offer":"` + other + `","prior":"` + other + `"}`,
		`{"mr":"` + id + `","from":"chamber:2","offer":"` + other + `"}`,
	}
	for _, s := range ok {
		x, err := decodeExchange([]byte(s))
		if err != nil || x.MR.String() != id || x.Offer.String() != other {
			t.Errorf("%s: %+v %v", s, x, err)
		}
	}
	bad := []string{
		`{"mr":"` + id + `","from":"president","offer":"` + other + `","prior":null}`,
		`{"mr":"` + id + `","from":"chamber:","offer":"` + other + `","prior":null}`,
		`{"mr":"` + id + `","from":"chamber:upper house","offer":"` + other + `","prior":null}`,
		`{"mr":"` + id + `","from":"executive","prior":null}`,
		`{"mr":"nope","from":"executive","offer":"` + other + `","prior":null}`,
		`{"mr":"` + id + `","from":"executive","offer":"` + other + `","prior":"nope"}`,
		`{"mr":"` + id + `","from":"executive","offer":"` + other + `","prior":null,"extra":1}`,
	}
	for _, s := range bad {
		if _, err := decodeExchange([]byte(s)); err == nil {
			t.Errorf("%s decoded", s)
		}
	}
}
