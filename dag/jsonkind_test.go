package dag_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/witan-dev/witan/dag"
)

// TestJSONKind: what a json.UnmarshalTypeError wanted, in JSON's words.
func TestJSONKind(t *testing.T) {
	var v struct {
		Label string         `json:"label"`
		N     uint64         `json:"n"`
		M     map[string]int `json:"m"`
		L     []int          `json:"l"`
		B     bool           `json:"b"`
	}
	for body, want := range map[string]string{`{"label":[1]}`: "string", `{"n":"7"}`: "number", `{"m":[]}`: "object", `{"l":{}}`: "array", `{"b":1}`: "boolean"} {
		var te *json.UnmarshalTypeError
		if err := json.Unmarshal([]byte(body), &v); !errors.As(err, &te) || dag.JSONKind(te.Type.Kind()) != want {
			t.Errorf("%s: %v; want a JSON %s", body, err, want)
		}
	}
	if got := dag.JSONKind(reflect.Chan); got != "value of another kind" {
		t.Errorf("a channel: %q", got)
	}
}
