package replica

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/witan-dev/witan/dag"
)

// missingObjectDetail says, for a client's submission refused because it
// names an object the node does not hold and the submission does not
// attach (30k §5: a reference must be known or attached), which object,
// where the body names it, and what to do.
func missingObjectDetail(env *dag.Envelope, id dag.ID) string {
	where := refPath(env.Body, id.String())
	hint := "attach it to the submission (attachments), or submit the entry that carries it first"
	if strings.HasSuffix(where, "text_ref") {
		hint = "attach the rule's text: its plain text as a JSON string in attachments, whose SHA-256 is this id"
	}
	if where != "" {
		where = " (" + where + ")"
	}
	return fmt.Sprintf("%s names %s%s, which this node does not hold and the submission does not attach: %s", env.Type, id, where, hint)
}

// refPath is the path in body ("body.root_rule.text_ref", "body.ops[1].node")
// of the first string equal to ref, keys taken in sorted order; "" when
// none is.
func refPath(body []byte, ref string) string {
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return ""
	}
	var walk func(v any, path string) string
	walk = func(v any, path string) string {
		switch x := v.(type) {
		case string:
			if x == ref {
				return path
			}
		case []any:
			for i, e := range x {
				if p := walk(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
					return p
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if p := walk(x[k], path+"."+k); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return walk(v, "body")
}
