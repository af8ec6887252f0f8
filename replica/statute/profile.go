package statute

import (
	"embed"
	"errors"
	"fmt"
	"slices"

	"github.com/witan-dev/witan/dag"
)

//go:embed profiles/*.json
var profileFS embed.FS

// Profile is a structure profile (30k §4, D26): the kinds a session's
// statute tree may use and which kinds may contain which. Profiles are data;
// the two of v0.13 are embedded from profiles/<id>.json.
type Profile struct {
	ID          string
	Version     int
	Description string
	// Root is the kind of the root node; no kind may contain it.
	Root     string
	kinds    []string            // in declaration order
	contains map[string][]string // kind -> kinds it may contain
}

// Kinds returns the profile's kinds in declaration order.
func (p *Profile) Kinds() []string { return slices.Clone(p.kinds) }

// Allows reports whether kind is one of the profile's kinds.
func (p *Profile) Allows(kind string) bool { _, ok := p.contains[kind]; return ok }

// MayContain reports whether a node of kind parent may have a child of
// kind child.
func (p *Profile) MayContain(parent, child string) bool {
	return slices.Contains(p.contains[parent], child)
}

// ErrProfile is wrapped by the errors of a profile that fails validation.
var ErrProfile = errors.New("statute: invalid profile")

type wireProfile struct {
	ID          *string `json:"id"`
	Version     *int    `json:"version"`
	Description string  `json:"description"`
	Root        *string `json:"root"`
	Kinds       *[]struct {
		Kind     *string   `json:"kind"`
		Contains *[]string `json:"contains"`
	} `json:"kinds"`
}

// ParseProfile decodes and validates a profile document: id, version and
// root present; every kind well-formed and declared once; every contained
// kind declared; the root declared and contained by no kind.
func ParseProfile(b []byte) (*Profile, error) {
	canon, err := dag.Canonicalize(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	var w wireProfile
	if err := strictUnmarshal(canon, &w); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProfile, err)
	}
	if w.ID == nil || *w.ID == "" || w.Version == nil || *w.Version < 1 || w.Root == nil || w.Kinds == nil {
		return nil, fmt.Errorf("%w: id, version (>= 1), root and kinds are required", ErrProfile)
	}
	p := &Profile{ID: *w.ID, Version: *w.Version, Description: w.Description, Root: *w.Root, contains: map[string][]string{}}
	for i, k := range *w.Kinds {
		if k.Kind == nil || k.Contains == nil {
			return nil, fmt.Errorf("%w: %s: kinds[%d] needs kind and contains", ErrProfile, p.ID, i)
		}
		if err := CheckKind(*k.Kind); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrProfile, p.ID, err)
		}
		if _, dup := p.contains[*k.Kind]; dup {
			return nil, fmt.Errorf("%w: %s: kind %q declared twice", ErrProfile, p.ID, *k.Kind)
		}
		p.kinds = append(p.kinds, *k.Kind)
		p.contains[*k.Kind] = slices.Clone(*k.Contains)
	}
	if _, ok := p.contains[p.Root]; !ok {
		return nil, fmt.Errorf("%w: %s: root kind %q is not declared", ErrProfile, p.ID, p.Root)
	}
	for _, k := range p.kinds {
		seen := map[string]bool{}
		for _, c := range p.contains[k] {
			if _, ok := p.contains[c]; !ok {
				return nil, fmt.Errorf("%w: %s: %q contains undeclared kind %q", ErrProfile, p.ID, k, c)
			}
			if c == p.Root {
				return nil, fmt.Errorf("%w: %s: %q contains the root kind", ErrProfile, p.ID, k)
			}
			if seen[c] {
				return nil, fmt.Errorf("%w: %s: %q lists %q twice", ErrProfile, p.ID, k, c)
			}
			seen[c] = true
		}
	}
	return p, nil
}

// ProfileIDs lists the ids of the embedded profiles, sorted.
func ProfileIDs() []string {
	ents, err := profileFS.ReadDir("profiles")
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range ents {
		name := e.Name()
		if len(name) > 5 && name[len(name)-5:] == ".json" {
			ids = append(ids, name[:len(name)-5])
		}
	}
	slices.Sort(ids)
	return ids
}

// LoadProfile returns the embedded profile with this id, validated. An id
// with no profile is a *dag.ProtocolError with code profile_unknown.
func LoadProfile(id string) (*Profile, error) {
	if !slices.Contains(ProfileIDs(), id) {
		return nil, &dag.ProtocolError{Code: dag.CodeProfileUnknown, Detail: fmt.Sprintf("statute: no profile %q", trunc(id))}
	}
	b, err := profileFS.ReadFile("profiles/" + id + ".json")
	if err != nil {
		return nil, err
	}
	p, err := ParseProfile(b)
	if err != nil {
		return nil, err
	}
	if p.ID != id {
		return nil, fmt.Errorf("%w: profiles/%s.json declares id %q", ErrProfile, id, p.ID)
	}
	return p, nil
}

// Conform checks every node of t against the profile: the root has the
// profile's root kind, every kind is declared, and every child's kind may be
// contained by its parent's. It returns one Message per offending node, in
// document order.
func (p *Profile) Conform(t *Tree) []Message {
	var out []Message
	t.walk(func(n *node, _ int) bool {
		var parent *node
		if n.parent != "" {
			parent = t.nodes[n.parent]
		}
		if m, bad := p.conformNode(n, parent); bad {
			out = append(out, m)
		}
		return true
	})
	return out
}

func (p *Profile) conformNode(n, parent *node) (Message, bool) {
	switch {
	case !p.Allows(n.kind):
		return Message{Detail: fmt.Sprintf("kind %q is not in profile %s", n.kind, p.ID), NIDs: []string{n.nid}}, true
	case parent == nil && n.kind != p.Root:
		return Message{Detail: fmt.Sprintf("root has kind %q; profile %s requires %q", n.kind, p.ID, p.Root), NIDs: []string{n.nid}}, true
	case parent != nil && p.Allows(parent.kind) && !p.MayContain(parent.kind, n.kind):
		return Message{Detail: fmt.Sprintf("a %s may not contain a %s (profile %s)", parent.kind, n.kind, p.ID), NIDs: []string{parent.nid, n.nid}}, true
	}
	return Message{}, false
}
