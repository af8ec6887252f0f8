package httpapi

// This file serves restricted drafts to their owners (30k §4: "Content is
// served only to authorized owner-group members (signed-challenge
// auth)"; docs/restricted-branches.md, "Drafts"). A drafter deposits a
// committed change with its salt (POST /restricted): the node keeps it
// only if sha256(salt || change id) is a commitment of the named
// restricted branch in its state, in the replica's node-local draft
// store (replica.DepositDraft: durable, bounded, outside the object
// store, the log and sync). A member of the branch's owner group reads
// it with a one-time challenge: POST /restricted/challenge gives a
// nonce, and GET /restricted/{commitment} carries the nonce, the key and
// its signature over DomainDraftRead + JCS({commitment, nonce, session}).
// Every refusal of a read answers the same 404, so nothing confirms more
// than the public commitment says. Open nonces are in memory only: a
// restart voids them, and the reader asks for another.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/statute"
)

// DomainDraftRead is the signing domain of a draft read challenge
// (provisional).
const DomainDraftRead = "oth/0.10-draft-read\n"

// Bounds of a deposit and of outstanding challenges. The draft store's
// own bounds are replica.Options.MaxDrafts and MaxDraftBytes.
const (
	MaxDraftObjects  = 1024
	maxOpenNonces    = 1024
	draftNonceLength = 32
)

// drafts holds the open nonces of draft reads, in memory.
type drafts struct {
	mu     gosync.Mutex
	nonces []string // oldest first; each used once
}

// DraftDeposit is POST /restricted's body.
type DraftDeposit struct {
	Session    string            `json:"session"`
	Branch     string            `json:"branch"`
	Commitment string            `json:"commitment"`
	Salt       string            `json:"salt"`
	Objects    []json.RawMessage `json:"objects"` // the change first, then its result's new nodes
}

// DraftAnswer is GET /restricted/{commitment}'s answer.
type DraftAnswer struct {
	sessionLabels
	Session    string            `json:"session"`
	Branch     string            `json:"branch"`
	Commitment string            `json:"commitment"`
	Change     dag.ID            `json:"change"`
	Salt       string            `json:"salt"`
	Objects    []json.RawMessage `json:"objects"`
}

func (s *Server) depositDraft(w http.ResponseWriter, r *http.Request) error {
	var d DraftDeposit
	if err := readJSON(r, &d); err != nil {
		return err
	}
	sess, err := dag.ParseID(d.Session)
	if err != nil {
		return problemf(dag.CodeSchema, "session: %v", err)
	}
	com, err := dag.ParseID(d.Commitment)
	if err != nil {
		return problemf(dag.CodeSchema, "commitment: %v", err)
	}
	salt, err := base64.RawURLEncoding.Strict().DecodeString(d.Salt)
	if err != nil || len(salt) != house.SaltSize {
		return problemf(dag.CodeSchema, "salt is not %d bytes of base64url without padding", house.SaltSize)
	}
	if len(d.Objects) == 0 || len(d.Objects) > MaxDraftObjects {
		return problemf(dag.CodeSchema, "objects: 1..%d, the change first", MaxDraftObjects)
	}
	var change dag.ID
	for i, o := range d.Objects {
		b, err := dag.AttachmentObject(o)
		if err != nil {
			return problemf(dag.CodeSchema, "objects[%d]: %v", i, err)
		}
		if i == 0 {
			if _, _, change, err = statute.DecodeChange(b); err != nil {
				return problemf(dag.CodeSchema, "objects[0] is not a change: %v", err)
			}
		}
	}
	if house.Commitment(salt, change) != com {
		return problemf(dag.CodeCommitmentMismatch, "sha256(salt || %s) is not %s", change, com)
	}
	bv, err := s.rep.Branch(r.Context(), sess, d.Branch)
	if err != nil || !slices.ContainsFunc(bv.Commitments, func(c house.CommitmentView) bool { return c.Commitment == com }) {
		return problemf(dag.CodeNotAuthorized, "%s is not a commitment of restricted branch %q on this node", com, d.Branch)
	}
	objs := make([][]byte, len(d.Objects))
	for i, o := range d.Objects {
		objs[i] = o
	}
	_, err = s.rep.DepositDraft(r.Context(), replica.Draft{Session: sess.String(), Branch: d.Branch, Commitment: com, Change: change, Salt: salt, Objects: objs})
	if errors.Is(err, replica.ErrDraftsFull) {
		return problemf(dag.CodeRateLimited, "this node holds as many drafts as it keeps")
	}
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"session": sess.String(), "commitment": com.String(), "stored": true, "simulation": s.labels(r.Context(), sess).Simulation})
}

func (s *Server) draftChallenge(w http.ResponseWriter, r *http.Request) error {
	b := make([]byte, draftNonceLength)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	n := base64.RawURLEncoding.EncodeToString(b)
	s.dr.mu.Lock()
	if len(s.dr.nonces) >= maxOpenNonces {
		s.dr.nonces = s.dr.nonces[1:]
	}
	s.dr.nonces = append(s.dr.nonces, n)
	s.dr.mu.Unlock()
	return writeJSON(w, map[string]any{"nonce": n, "domain": DomainDraftRead})
}

// DraftReadMessage is what a reader signs after DomainDraftRead.
func DraftReadMessage(session, commitment, nonce string) []byte {
	b, err := dag.Marshal(map[string]string{"commitment": commitment, "nonce": nonce, "session": session})
	if err != nil {
		panic(err) // strings always marshal
	}
	return b
}

func (s *Server) readDraft(w http.ResponseWriter, r *http.Request) error {
	notFound := problemf(CodeNotFound, "no draft readable with this challenge")
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	com, nonce := r.PathValue("commitment"), q.Get("nonce")
	key, err := dag.ParseKey(q.Get("key"))
	if err != nil {
		return notFound
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(q.Get("sig"))
	if err != nil {
		return notFound
	}
	s.dr.mu.Lock()
	i := slices.Index(s.dr.nonces, nonce)
	if i >= 0 {
		s.dr.nonces = slices.Delete(s.dr.nonces, i, i+1) // used once, whatever follows
	}
	s.dr.mu.Unlock()
	if i < 0 || !dag.Verify(key, DomainDraftRead, DraftReadMessage(space.String(), com, nonce), sig) {
		return notFound
	}
	cid, err := dag.ParseID(com)
	if err != nil {
		return notFound
	}
	d, ok, err := s.rep.Draft(r.Context(), space, cid)
	if err != nil {
		return err
	}
	if !ok {
		return notFound
	}
	bv, err := s.rep.Branch(r.Context(), space, d.Branch)
	if err != nil {
		return notFound
	}
	st, _, err := s.rep.State(r.Context(), space)
	if err != nil {
		return notFound
	}
	member := false
	for _, g := range st.Groups {
		if "group:"+g.ID == bv.Owner && slices.Contains(g.Members, key) {
			member = true
		}
	}
	if !member {
		return notFound
	}
	objs := make([]json.RawMessage, len(d.Objects))
	for i, o := range d.Objects {
		objs[i] = o
	}
	return writeJSON(w, DraftAnswer{sessionLabels: s.labels(r.Context(), space), Session: space.String(), Branch: d.Branch, Commitment: com,
		Change: d.Change, Salt: base64.RawURLEncoding.EncodeToString(d.Salt), Objects: objs})
}
