package author

// This file is the Author and the one place an envelope is sealed: the
// typed constructors of the other files (one file per family of
// transaction kinds) and witan submit's JSON drafts all end in Seal.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/house"
)

// Heads answers the current heads of a session: the parents an author who
// has seen everything the node holds gives a new envelope. *node.Node
// satisfies it.
type Heads interface {
	Heads(ctx context.Context, space string) ([]dag.ID, error)
}

// Groups answers a session's groups as derived. *replica.Replica (a
// node's Replica()) satisfies it.
type Groups interface {
	Group(ctx context.Context, session dag.ID, id string) (house.GroupView, error)
}

// Options configure an Author. Signer is required; the zero value of every
// other field works.
type Options struct {
	// Signer signs every envelope: the member's key.
	Signer *dag.Signer
	// Clock gives each envelope's ts; time.Now when nil. It is read once
	// per envelope sealed.
	Clock func() time.Time
	// Heads gives the parents of an envelope whose call names none
	// (parents nil). Without it such a call is an error.
	Heads Heads
	// Groups gives an MR's electorate: MROpen fills an MR that lists no
	// Members with the members its Group has on the node now (the roster
	// by default). Without it an MR must list them.
	Groups Groups
}

// ErrNoParents is returned when a call names no parents and the Author
// has no Heads to ask.
var ErrNoParents = errors.New("author: no parents given and no Options.Heads to read them from")

// Author builds signed 30k envelopes for one signer. It is safe for
// concurrent use if its Clock and Heads are.
type Author struct {
	o Options
}

// New returns an Author.
func New(o Options) (*Author, error) {
	if o.Signer == nil {
		return nil, errors.New("author: Options.Signer is required")
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Author{o: o}, nil
}

// Key returns the signer's public key.
func (a *Author) Key() dag.Key { return a.o.Signer.Key() }

// Tx is one sealed envelope with the objects it needs.
type Tx struct {
	ID      dag.ID
	Env     *dag.Envelope
	Bytes   []byte   // canonical envelope
	Attach  [][]byte // attachments: the objects the body names, canonical
	Parents []dag.ID
	// Made is the id of what the transaction makes, where it makes one:
	// the session (session.create), the group object (group.update), the
	// branch object (branch.create), the change (branch.append), the MR
	// (mr.open). Zero otherwise.
	Made dag.ID
}

// Draft is an envelope before it is sealed: what witan submit reads as
// JSON, and what every typed constructor fills.
type Draft struct {
	Type dag.TxType
	// Session is the session's id; zero for session.create, whose id is
	// the hash of its body.
	Session dag.ID
	// Parents are the envelope's parents. Nil means the session's current
	// heads (Options.Heads); non-nil is taken as given.
	// session.create has none.
	Parents []dag.ID
	// Body is marshalled to canonical JSON (a json.RawMessage is
	// canonicalized).
	Body any
	// TS is the envelope's timestamp (RFC 3339); empty means the Clock's
	// time, in UTC, to the second.
	TS string
	// Attach are the objects the body names, in canonical JSON
	// (dag.Canonicalize); they are passed on as they are.
	Attach [][]byte
}

// Seal fills what d leaves open (the session of a session.create, the
// parents, the ts), signs the envelope and returns it.
func (a *Author) Seal(ctx context.Context, d Draft) (Tx, error) {
	raw, err := dag.Marshal(d.Body)
	if err != nil {
		return Tx{}, fmt.Errorf("author: %s body: %w", d.Type, err)
	}
	env := &dag.Envelope{Type: d.Type, Session: d.Session, Body: raw, TS: d.TS}
	switch {
	case d.Type == dag.TxSessionCreate:
		env.Session = dag.Sum(raw)
	case !d.Session.Valid():
		return Tx{}, fmt.Errorf("author: %s: the session is required", d.Type)
	}
	env.Parents = d.Parents
	if env.Parents == nil && d.Type != dag.TxSessionCreate {
		if a.o.Heads == nil {
			return Tx{}, ErrNoParents
		}
		if env.Parents, err = a.o.Heads.Heads(ctx, env.Session.String()); err != nil {
			return Tx{}, fmt.Errorf("author: heads of %s: %w", env.Session, err)
		}
	}
	if env.Parents == nil {
		env.Parents = []dag.ID{}
	}
	if env.TS == "" {
		env.TS = a.o.Clock().UTC().Format(time.RFC3339)
	}
	bytes, id, err := env.Seal(a.o.Signer)
	if err != nil {
		return Tx{}, err
	}
	tx := Tx{ID: id, Env: env, Bytes: bytes, Attach: d.Attach, Parents: env.Parents}
	if d.Type == dag.TxSessionCreate {
		tx.Made = env.Session
	}
	return tx, nil
}

// object marshals v canonically and returns it with its id.
func object(v any) ([]byte, dag.ID, error) {
	b, err := dag.Marshal(v)
	if err != nil {
		return nil, dag.ID{}, err
	}
	return b, dag.Sum(b), nil
}

// ref is {"<member>": id}, the body of a transaction that publishes an
// object travelling in attachments.
func ref(member string, id dag.ID) map[string]dag.ID { return map[string]dag.ID{member: id} }
