package author

// This file is the branch family: branch.create, branch.append and
// branch.reveal (30k §4), and the change a branch.append carries (or, on
// a restricted branch, commits to).

import (
	"context"
	"encoding/base64"
	"errors"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/rules"
)

// Branch is a branch object.
type Branch struct {
	Name string
	// Owner is the owning group's id, without "group:".
	Owner string
	// SourceBranch and SourceChange are where the branch forks from; Head
	// is its head (SourceChange when zero).
	SourceBranch string
	SourceChange dag.ID
	Head         dag.ID
	// Restricted makes the branch's visibility "restricted" ("public"
	// otherwise).
	Restricted     bool
	Protected      bool
	MergeRule      rules.Ref
	GovernanceRule rules.Ref
	// Texts are the plain-language texts the rules' text_ref name, when
	// the session does not hold them yet: they travel as attachments.
	Texts [][]byte
}

// BranchCreate creates branch b in session: the body names the branch
// object (Tx.Made), which travels as an attachment.
func (a *Author) BranchCreate(ctx context.Context, session dag.ID, b Branch, parents []dag.ID) (Tx, error) {
	head := b.Head
	if !head.Valid() {
		head = b.SourceChange
	}
	vis := "public"
	if b.Restricted {
		vis = "restricted"
	}
	obj, id, err := object(map[string]any{
		"name": b.Name, "session": session, "owner": "group:" + b.Owner,
		"source": map[string]any{"branch": b.SourceBranch, "change": b.SourceChange}, "head": head,
		"visibility": vis, "protected": b.Protected, "merge_rule": b.MergeRule, "governance_rule": b.GovernanceRule,
	})
	if err != nil {
		return Tx{}, err
	}
	tx, err := a.Seal(ctx, Draft{Type: dag.TxBranchCreate, Session: session, Parents: parents, Body: ref("branch", id), Attach: append([][]byte{obj}, b.Texts...)})
	if err != nil {
		return Tx{}, err
	}
	tx.Made = id
	return tx, nil
}

// Change is an amendment to append to a branch.
type Change struct {
	Branch string
	// Parent is the change the amendment builds on (the branch head) and
	// Base the statute it produced.
	Parent dag.ID
	Base   *statute.Tree
	Ops    []statute.Op
	// Message describes the change ("amend" when empty).
	Message string
}

// Appended is what BranchAppend made besides the transaction.
type Appended struct {
	Change dag.ID        // the change's id (also Tx.Made)
	Result *statute.Tree // the statute the change produces
}

// BranchAppend applies c.Ops to c.Base, makes the change (authored by the
// author's key) and appends it to c.Branch: the body names the change,
// which travels as an attachment with the nodes its result adds.
func (a *Author) BranchAppend(ctx context.Context, session dag.ID, c Change, parents []dag.ID) (Tx, Appended, error) {
	if c.Base == nil {
		return Tx{}, Appended{}, errors.New("author: branch.append: Base is required")
	}
	res, err := statute.Apply(c.Base, c.Ops)
	if err != nil {
		return Tx{}, Appended{}, err
	}
	if c.Message == "" {
		c.Message = "amend"
	}
	ch := &statute.Change{Base: c.Base.Hash(), Ops: c.Ops, Result: res.Hash(), Parents: []dag.ID{c.Parent}, Message: c.Message, Author: a.Key().String()}
	b, err := ch.Canonical()
	if err != nil {
		return Tx{}, Appended{}, err
	}
	id := dag.Sum(b)
	attach := [][]byte{b}
	for _, n := range res.Objects() {
		attach = append(attach, n.Canonical())
	}
	tx, err := a.Seal(ctx, Draft{Type: dag.TxBranchAppend, Session: session, Parents: parents,
		Body: map[string]any{"branch": c.Branch, "change": id}, Attach: attach})
	if err != nil {
		return Tx{}, Appended{}, err
	}
	tx.Made = id
	return tx, Appended{Change: id, Result: res}, nil
}

// Replace returns the op that sets the text of leaf nid in t.
func Replace(t *statute.Tree, nid, text string) (statute.Op, error) {
	spec, ok := t.Spec(nid)
	if !ok {
		return statute.Op{}, errors.New("author: no node " + nid)
	}
	pre, _ := t.NodeHash(nid)
	spec.Text = text
	return statute.Op{Op: statute.OpReplace, NID: nid, Pre: pre, Node: spec}, nil
}

// Sealed is a restricted change as its author keeps it until the reveal
// (30k §4 "Restricted branches"): the change and the node objects its
// result adds, the salt, and the commitment the log records instead.
type Sealed struct {
	Change     dag.ID
	Result     *statute.Tree
	Salt       []byte // house.SaltSize random bytes
	Commitment dag.ID // house.Commitment(Salt, Change)
	// Objects are the change followed by the node objects its result
	// adds: what the reveal attaches.
	Objects [][]byte
}

// RestrictedAppend makes the change c (as BranchAppend does) and appends
// to the restricted branch c.Branch only its salted commitment and size:
// the transaction carries no attachment, and the Sealed content stays
// with the caller until BranchReveal. salt must be house.SaltSize random
// bytes (crypto/rand); it is never reused.
func (a *Author) RestrictedAppend(ctx context.Context, session dag.ID, c Change, salt []byte, parents []dag.ID) (Tx, Sealed, error) {
	if c.Base == nil {
		return Tx{}, Sealed{}, errors.New("author: branch.append: Base is required")
	}
	if len(salt) != house.SaltSize {
		return Tx{}, Sealed{}, errors.New("author: branch.append: the salt must be 32 bytes")
	}
	res, err := statute.Apply(c.Base, c.Ops)
	if err != nil {
		return Tx{}, Sealed{}, err
	}
	if c.Message == "" {
		c.Message = "amend"
	}
	ch := &statute.Change{Base: c.Base.Hash(), Ops: c.Ops, Result: res.Hash(), Parents: []dag.ID{c.Parent}, Message: c.Message, Author: a.Key().String()}
	b, err := ch.Canonical()
	if err != nil {
		return Tx{}, Sealed{}, err
	}
	s := Sealed{Change: dag.Sum(b), Result: res, Salt: append([]byte(nil), salt...), Objects: [][]byte{b}}
	size := int64(len(b))
	for _, n := range res.Objects() {
		nb := n.Canonical()
		s.Objects = append(s.Objects, nb)
		size += int64(len(nb))
	}
	s.Commitment = house.Commitment(s.Salt, s.Change)
	tx, err := a.Seal(ctx, Draft{Type: dag.TxBranchAppend, Session: session, Parents: parents,
		Body: map[string]any{"branch": c.Branch, "commitment": s.Commitment, "size": size}})
	if err != nil {
		return Tx{}, Sealed{}, err
	}
	tx.Made = s.Commitment
	return tx, s, nil
}

// BranchReveal publishes the sealed changes of the restricted branch, in
// order (each one's parent is the branch's revealed head before it), with
// their salts; the changes and their node objects travel as attachments.
func (a *Author) BranchReveal(ctx context.Context, session dag.ID, branch string, sealed []Sealed, parents []dag.ID) (Tx, error) {
	items := make([]map[string]any, 0, len(sealed))
	var attach [][]byte
	for _, s := range sealed {
		items = append(items, map[string]any{"commitment": s.Commitment, "change": s.Change, "salt": base64.RawURLEncoding.EncodeToString(s.Salt)})
		attach = append(attach, s.Objects...)
	}
	return a.Seal(ctx, Draft{Type: dag.TxBranchReveal, Session: session, Parents: parents,
		Body: map[string]any{"branch": branch, "changes": items}, Attach: attach})
}
