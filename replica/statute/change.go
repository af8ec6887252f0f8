package statute

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Change is a step of a branch (30k §4): ops that take the snapshot Base to
// the snapshot Result, with the changes it follows as Parents. Its id is
// the SHA-256 of its canonical JSON.
type Change struct {
	Base    dag.ID
	Ops     []Op
	Result  dag.ID
	Parents []dag.ID
	Message string
	// Author is "ed25519:<key>", or dag.SystemAuthor for derived changes.
	Author       string
	Contributors []Contributor // optional, self-declared (D36)
}

// Contributor is voluntary credit for an outside drafter (D36). Key "" is
// null.
type Contributor struct {
	Key  string
	Name string
	Role string // drafter | reviewer | sponsor
}

// MaxOps bounds the ops of one change.
const MaxOps = 1 << 20

// ErrResultMismatch is wrapped when a change's ops do not take its base to
// its result, or its base is not the tree it is applied to.
var ErrResultMismatch = errors.New("statute: change does not verify")

type wireChange struct {
	Base         *string            `json:"base"`
	Ops          *[]json.RawMessage `json:"ops"`
	Result       *string            `json:"result"`
	Parents      *[]string          `json:"parents"`
	Message      *string            `json:"message"`
	Author       *string            `json:"author"`
	Contributors json.RawMessage    `json:"contributors"` // absent, or an array (never null)
}

type wireContributor struct {
	Key  *string `json:"key"`
	Name *string `json:"name"`
	Role *string `json:"role"`
}

// DecodeChange decodes a Change from untrusted bytes and returns it with
// its canonical bytes and id. base, ops, result, parents and author are
// required; message may be absent (""). Errors have code schema.
func DecodeChange(b []byte) (*Change, []byte, dag.ID, error) {
	canon, err := canonical(b)
	if err != nil {
		return nil, nil, dag.ID{}, err
	}
	var w wireChange
	if err := strictUnmarshal(canon, &w); err != nil {
		return nil, nil, dag.ID{}, schemaErr("change: %v", err)
	}
	switch {
	case w.Base == nil:
		return nil, nil, dag.ID{}, schemaErr("change: missing base")
	case w.Ops == nil:
		return nil, nil, dag.ID{}, schemaErr("change: missing ops")
	case w.Result == nil:
		return nil, nil, dag.ID{}, schemaErr("change: missing result")
	case w.Parents == nil:
		return nil, nil, dag.ID{}, schemaErr("change: missing parents")
	case w.Author == nil:
		return nil, nil, dag.ID{}, schemaErr("change: missing author")
	case len(*w.Ops) > MaxOps:
		return nil, nil, dag.ID{}, schemaErr("change: %d ops, more than %d", len(*w.Ops), MaxOps)
	}
	c := &Change{Author: *w.Author}
	if w.Message != nil {
		c.Message = *w.Message
	}
	if c.Base, err = dag.ParseID(*w.Base); err != nil {
		return nil, nil, dag.ID{}, schemaErr("change: base: %v", err)
	}
	if c.Result, err = dag.ParseID(*w.Result); err != nil {
		return nil, nil, dag.ID{}, schemaErr("change: result: %v", err)
	}
	seen := map[dag.ID]bool{}
	for i, p := range *w.Parents {
		id, err := dag.ParseID(p)
		if err != nil {
			return nil, nil, dag.ID{}, schemaErr("change: parents[%d]: %v", i, err)
		}
		if seen[id] {
			return nil, nil, dag.ID{}, schemaErr("change: parent %s listed twice", id)
		}
		seen[id] = true
		c.Parents = append(c.Parents, id)
	}
	c.Ops = make([]Op, len(*w.Ops))
	for i, raw := range *w.Ops {
		if err := c.Ops[i].UnmarshalJSON(raw); err != nil {
			return nil, nil, dag.ID{}, schemaErr("change: ops[%d]: %v", i, err)
		}
	}
	if w.Contributors != nil {
		var cs []wireContributor
		if w.Contributors[0] != '[' {
			return nil, nil, dag.ID{}, schemaErr("change: contributors is not an array")
		}
		if err := strictUnmarshal(w.Contributors, &cs); err != nil {
			return nil, nil, dag.ID{}, schemaErr("change: contributors: %v", err)
		}
		for i, wc := range cs {
			if wc.Name == nil || wc.Role == nil {
				return nil, nil, dag.ID{}, schemaErr("change: contributors[%d]: name and role are required", i)
			}
			k := ""
			if wc.Key != nil {
				k = *wc.Key
			}
			c.Contributors = append(c.Contributors, Contributor{Key: k, Name: *wc.Name, Role: *wc.Role})
		}
		if c.Contributors == nil {
			c.Contributors = []Contributor{}
		}
	}
	if err := c.Check(); err != nil {
		return nil, nil, dag.ID{}, err
	}
	return c, canon, dag.Sum(canon), nil
}

// Check runs the context-free checks of DecodeChange on c: ids valid,
// author a key or oth:system, contributors' keys and roles well-formed,
// text NFC.
func (c *Change) Check() error {
	if !c.Base.Valid() || !c.Result.Valid() {
		return schemaErr("change: base and result are required")
	}
	if c.Author != dag.SystemAuthor {
		if _, err := dag.ParseKey(c.Author); err != nil {
			return schemaErr("change: author: %v", err)
		}
	}
	if err := CheckText(c.Message); err != nil {
		return schemaErr("change: message: %v", err)
	}
	for i, p := range c.Parents {
		if !p.Valid() {
			return schemaErr("change: parents[%d] is the zero id", i)
		}
	}
	for i, k := range c.Contributors {
		if k.Key != "" {
			if _, err := dag.ParseKey(k.Key); err != nil {
				return schemaErr("change: contributors[%d].key: %v", i, err)
			}
		}
		switch k.Role {
		case "drafter", "reviewer", "sponsor":
		default:
			return schemaErr("change: contributors[%d].role %q is not drafter, reviewer or sponsor", i, trunc(k.Role))
		}
		if err := CheckText(k.Name); err != nil {
			return schemaErr("change: contributors[%d].name: %v", i, err)
		}
	}
	return nil
}

// Canonical returns the change's canonical JSON. Contributors are written
// only when non-nil.
func (c *Change) Canonical() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	b = append(b, `"author":`...)
	b = dag.AppendString(b, c.Author)
	b = append(b, `,"base":"`...)
	b = append(b, c.Base.String()...)
	b = append(b, '"', ',')
	if c.Contributors != nil {
		b = append(b, `"contributors":[`...)
		for i, k := range c.Contributors {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			if k.Key == "" {
				b = append(b, "null"...)
			} else {
				b = dag.AppendString(b, k.Key)
			}
			b = append(b, `,"name":`...)
			b = dag.AppendString(b, k.Name)
			b = append(b, `,"role":`...)
			b = dag.AppendString(b, k.Role)
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	b = append(b, `"message":`...)
	b = dag.AppendString(b, c.Message)
	b = append(b, `,"ops":[`...)
	for i := range c.Ops {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = c.Ops[i].appendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, `],"parents":[`...)
	for i, p := range c.Parents {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, p.String()...)
		b = append(b, '"')
	}
	b = append(b, `],"result":"`...)
	b = append(b, c.Result.String()...)
	b = append(b, `"}`...)
	// Members are written in RFC 8785 order; Canonicalize checks the whole
	// (NFC, sizes) and returns b itself when it is canonical, as here.
	return dag.Canonicalize(b)
}

// ID returns the change's id: the SHA-256 of its canonical JSON.
func (c *Change) ID() (dag.ID, error) {
	b, err := c.Canonical()
	if err != nil {
		return dag.ID{}, err
	}
	return dag.Sum(b), nil
}

// MarshalJSON writes the canonical JSON.
func (c *Change) MarshalJSON() ([]byte, error) { return c.Canonical() }

// Verify applies c's ops to base and checks that base is c.Base and the
// outcome is c.Result (30k §4: "You MUST verify that applying ops to base
// yields result"). It returns the result tree. A failure is a
// *dag.ProtocolError with code schema wrapping ErrResultMismatch or the
// *ApplyError.
func (c *Change) Verify(base *Tree) (*Tree, error) {
	if h := base.Hash(); h != c.Base {
		return nil, &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("statute: change base is %s, tree is %s", c.Base, h), Err: ErrResultMismatch}
	}
	out, err := Apply(base, c.Ops)
	if err != nil {
		return nil, &dag.ProtocolError{Code: dag.CodeSchema, Detail: err.Error(), Err: err}
	}
	if h := out.Hash(); h != c.Result {
		return nil, &dag.ProtocolError{Code: dag.CodeSchema, Detail: fmt.Sprintf("statute: ops yield %s, change says %s", h, c.Result), Err: ErrResultMismatch}
	}
	return out, nil
}
