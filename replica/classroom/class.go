package classroom

// This file is a class run from the page: start a session from the
// template, enrol students (a node-local address book of the names the
// teacher types), join a session a classmate's laptop announces, propose
// an amendment and close a vote, the last two planned first (the diff, the
// determination) and signed only when the page confirms exactly that plan.
// Every signature is the member key the node holds (Options.Voter).

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/author"
	"github.com/witan-dev/witan/replica/house"
)

// Name is one entry of the node-local address book: a member key, the
// name the teacher typed for it, and the libp2p peer id of the member's
// laptop when the enrolment code carried it. Names never enter the
// protocol: no envelope carries them and no peer is sent them.
type Name struct {
	Key  dag.Key `json:"key"`
	Name string  `json:"name"`
	Peer string  `json:"peer,omitempty"`
}

// addressBook keeps the names in memory and, when path is set, in a file
// only the owner can read.
type addressBook struct {
	mu    gosync.Mutex
	path  string
	names []Name
}

// maxNames bounds the address book.
const maxNames = 1000

func openBook(path string) (*addressBook, error) {
	b := &addressBook{path: path}
	if path == "" {
		return b, nil
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return b, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Names []Name `json:"names"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, errors.New("classroom: address book " + path + ": " + err.Error())
	}
	b.names = f.Names
	return b, nil
}

func (b *addressBook) list() []Name {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Name{}, b.names...)
}

// set records name (and peer, if given) for key, replacing an earlier
// entry of the key, and writes the file.
func (b *addressBook) set(n Name) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := slices.DeleteFunc(slices.Clone(b.names), func(x Name) bool { return x.Key == n.Key })
	if len(names) >= maxNames {
		return schemaf("the address book holds %d names already", maxNames)
	}
	names = append(names, n)
	slices.SortFunc(names, func(x, y Name) int { return strings.Compare(x.Key.String(), y.Key.String()) })
	if b.path != "" {
		raw, err := json.MarshalIndent(map[string]any{"names": names}, "", "  ")
		if err != nil {
			return err
		}
		tmp := b.path + ".tmp"
		if err := os.WriteFile(tmp, append(raw, '\n'), 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, b.path); err != nil {
			return err
		}
		if d, err := os.Open(filepath.Dir(b.path)); err == nil {
			d.Sync()
			d.Close()
		}
	}
	b.names = names
	return nil
}

// EnrolCode is the code a student's page shows for the teacher to paste:
// the member key, and "@" and the laptop's libp2p peer id when the node
// syncs (so the teacher's view can name the laptop among its peers).
func EnrolCode(key dag.Key, peer string) string {
	if peer == "" {
		return key.String()
	}
	return key.String() + "@" + peer
}

// ParseEnrolCode reads an EnrolCode, spaces and line breaks ignored.
func ParseEnrolCode(code string) (dag.Key, string, error) {
	code = strings.Join(strings.Fields(code), "")
	k, peer, _ := strings.Cut(code, "@")
	key, err := dag.ParseKey(k)
	if err != nil {
		return dag.Key{}, "", schemaf("code %q is not a student's code (ed25519:… as the student's page shows it): %v", dag.Trunc(code), err)
	}
	if strings.ContainsAny(peer, "/@:") {
		return dag.Key{}, "", schemaf("code %q: the part after @ is not a peer id", dag.Trunc(code))
	}
	return key, peer, nil
}

// Answer is what a class write answers: the transactions signed and the
// node's receipt of each, in order (the first refused one is the last).
type Answer struct {
	Session    dag.ID             `json:"session"`
	Receipts   []*replica.Receipt `json:"receipts"`
	Made       *dag.ID            `json:"made,omitempty"`
	Finality   replica.Finality   `json:"finality"`
	Simulation bool               `json:"simulation"`
}

func (h *Handler) voter() (*author.Author, error) {
	if h.o.Voter == nil {
		return nil, &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: this node holds no member key (witan keygen -out witan-data/voter.key, or witan up -key FILE)"}
	}
	return author.New(author.Options{Signer: h.o.Voter, Clock: h.o.Clock, Heads: h.o.Node})
}

// submitTxs submits txs in order and answers their receipts; it stops at
// the first one refused and reports whether every one was accepted.
func (h *Handler) submitTxs(ctx context.Context, session dag.ID, made *dag.ID, txs []author.Tx) (Answer, bool, error) {
	a := Answer{Session: session, Made: made, Finality: replica.Provisional, Simulation: true}
	for _, tx := range txs {
		rc, err := h.o.Node.Submit(ctx, tx.Bytes, tx.Attach)
		if err != nil {
			return a, false, err
		}
		a.Receipts = append(a.Receipts, rc)
		if rc.Status != "accepted" {
			return a, false, nil
		}
	}
	if st, _, err := h.o.Node.Replica().State(ctx, session); err == nil {
		a.Simulation = st.Simulation
	}
	return a, true, nil
}

// writeAnswer writes a, with 422 when a transaction was refused.
func writeAnswer(w http.ResponseWriter, a Answer, ok bool) error {
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
	}
	return writeJSON(w, a)
}

// submitAll submits txs and writes the answer.
func (h *Handler) submitAll(ctx context.Context, w http.ResponseWriter, session dag.ID, made *dag.ID, txs []author.Tx) (bool, error) {
	a, ok, err := h.submitTxs(ctx, session, made, txs)
	if err != nil {
		return false, err
	}
	return ok, writeAnswer(w, a, ok)
}

// StartRequest is POST /classroom/v0/start's body.
type StartRequest struct {
	Label string `json:"label"`
}

func (h *Handler) start(w http.ResponseWriter, r *http.Request) error {
	var req StartRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if len(req.Label) > house.MaxNameLen {
		return schemaf("label longer than %d bytes", house.MaxNameLen)
	}
	a, err := h.voter()
	if err != nil {
		return err
	}
	h.voteM.Lock()
	defer h.voteM.Unlock()
	txs, err := a.StartClass(r.Context(), req.Label)
	if err != nil {
		return err
	}
	sid := txs[0].Made
	_, err = h.submitAll(r.Context(), w, sid, &sid, txs)
	return err
}

// EnrolRequest is POST /classroom/v0/enrol's body: the code a student's
// page shows, and the name the teacher knows the student by (kept on this
// node only).
type EnrolRequest struct {
	Session string `json:"session"`
	Code    string `json:"code"`
	Name    string `json:"name"`
}

func (h *Handler) enrol(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req EnrolRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	key, peer, err := ParseEnrolCode(req.Code)
	if err != nil {
		return err
	}
	name := strings.TrimSpace(req.Name)
	if len(name) > 80 {
		return schemaf("name longer than 80 bytes")
	}
	a, err := h.voter()
	if err != nil {
		return err
	}
	h.voteM.Lock()
	defer h.voteM.Unlock()
	st, _, err := h.o.Node.Replica().State(ctx, sid)
	if err != nil {
		return err
	}
	g, added, err := author.Enrol(st, []dag.Key{key})
	if err != nil {
		return schemaf("%v", err)
	}
	// The name is kept once the key is in the roster: a refused
	// enrolment leaves the address book as it was.
	remember := func() error {
		if name == "" {
			return nil
		}
		return h.book.set(Name{Key: key, Name: name, Peer: peer})
	}
	if len(added) == 0 {
		if err := remember(); err != nil {
			return err
		}
		return writeJSON(w, Answer{Session: sid, Receipts: []*replica.Receipt{}, Finality: replica.Provisional, Simulation: st.Simulation})
	}
	tx, err := a.GroupUpdate(ctx, sid, g, nil)
	if err != nil {
		return err
	}
	ans, ok, err := h.submitTxs(ctx, sid, nil, []author.Tx{tx})
	if err != nil {
		return err
	}
	if ok {
		if err := remember(); err != nil {
			return err
		}
	}
	return writeAnswer(w, ans, ok)
}

// names answers the address book: GET /classroom/v0/names.
func (h *Handler) names(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, map[string]any{"names": h.book.list(), "node_local": true})
}

// JoinRequest is POST /classroom/v0/join's body.
type JoinRequest struct {
	Session string `json:"session"`
}

func (h *Handler) join(w http.ResponseWriter, r *http.Request) error {
	var req JoinRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	if h.o.Node.Sync() == nil {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: this node runs without sync, so it cannot join a classmate's session"}
	}
	if err := h.o.Node.Join(r.Context(), sid.String()); err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"joined": sid, "finality": replica.Provisional})
}

// ProposeRequest is POST /classroom/v0/propose's body: set section NID's
// text. Without Sign the node answers the plan (the diff and the MR's id)
// and signs nothing; with Sign it signs only if the plan's MR id is still
// MR (the page shows the plan, then confirms it).
type ProposeRequest struct {
	Session string `json:"session"`
	NID     string `json:"nid"`
	Text    string `json:"text"`
	Summary string `json:"summary"`
	Sign    bool   `json:"sign"`
	MR      string `json:"mr"`
}

// ProposePlan is the answer to an unsigned ProposeRequest.
type ProposePlan struct {
	Session  dag.ID `json:"session"`
	MR       dag.ID `json:"mr"`
	Diff     string `json:"diff"`
	Branch   string `json:"branch"`
	Group    string `json:"group"`
	NewGroup bool   `json:"new_group"`
	// Transactions counts what signing will submit.
	Transactions int              `json:"transactions"`
	Electorate   int              `json:"electorate"`
	Finality     replica.Finality `json:"finality"`
	Simulation   bool             `json:"simulation"`
}

func (h *Handler) propose(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req ProposeRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	if len(req.Summary) > 280 {
		return schemaf("summary longer than 280 characters")
	}
	if strings.TrimSpace(req.Text) == "" {
		return schemaf("the new text is empty")
	}
	a, err := h.voter()
	if err != nil {
		return err
	}
	h.voteM.Lock()
	defer h.voteM.Unlock()
	rep := h.o.Node.Replica()
	space := sid
	st, _, err := rep.State(ctx, space)
	if err != nil {
		return err
	}
	law, err := h.o.Node.Views().Law(ctx, sid)
	if err != nil {
		return err
	}
	tree, err := h.o.Node.Views().Snapshot(ctx, sid, law.Head)
	if err != nil {
		return err
	}
	p, err := author.PlanAmendment(st, tree, law.Head, a.Key(), author.Amendment{NID: req.NID, Text: req.Text, Summary: req.Summary})
	if err != nil {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: " + strings.TrimPrefix(err.Error(), "author: ")}
	}
	if !req.Sign {
		n := 3
		if p.NewGroup {
			n++
		}
		return writeJSON(w, ProposePlan{Session: sid, MR: p.MRID, Diff: p.Diff, Branch: p.Branch, Group: p.Group, NewGroup: p.NewGroup,
			Transactions: n, Electorate: len(p.MR.Members), Finality: replica.Provisional, Simulation: st.Simulation})
	}
	if req.MR != p.MRID.String() {
		return &dag.ProtocolError{Code: dag.CodeStaleMR, Detail: "classroom: the law or the roster changed since the diff was shown (the MR would now be " + p.MRID.String() + "): look at the new diff and confirm again"}
	}
	txs, err := a.Amend(ctx, p, nil)
	if err != nil {
		return err
	}
	_, err = h.submitAll(ctx, w, sid, &p.MRID, txs)
	return err
}

// CloseRequest is POST /classroom/v0/close's body. Without Sign the node
// answers the determination the rule allows now; with Sign it signs it
// only if it still is Outcome over Ballots ballots.
type CloseRequest struct {
	Session string `json:"session"`
	MR      string `json:"mr"`
	Sign    bool   `json:"sign"`
	Outcome string `json:"outcome"`
	Ballots int    `json:"ballots"`
}

// ClosePlan is the answer to an unsigned CloseRequest.
type ClosePlan struct {
	Session    dag.ID           `json:"session"`
	MR         dag.ID           `json:"mr"`
	Outcome    string           `json:"outcome"`
	Ballots    []dag.ID         `json:"ballots"`
	Result     any              `json:"result"`
	Finality   replica.Finality `json:"finality"`
	Simulation bool             `json:"simulation"`
}

func (h *Handler) close(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var req CloseRequest
	sid, err := readSession(r, &req, &req.Session)
	if err != nil {
		return err
	}
	mr, err := dag.ParseID(req.MR)
	if err != nil {
		return schemaf("mr: %v", err)
	}
	a, err := h.voter()
	if err != nil {
		return err
	}
	h.voteM.Lock()
	defer h.voteM.Unlock()
	space := sid
	rep := h.o.Node.Replica()
	st, _, err := rep.State(ctx, space)
	if err != nil {
		return err
	}
	m, err := h.o.Node.Views().MR(ctx, sid, mr)
	if err != nil {
		return err
	}
	if m.Status != house.StatusOpen {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: the MR is " + string(m.Status) + ", not open: there is nothing to close"}
	}
	ballots, err := h.ballotsOn(ctx, space.String(), mr)
	if err != nil {
		return err
	}
	t, err := h.o.Node.Views().Tally(ctx, sid, mr)
	if err != nil {
		return err
	}
	d, err := author.PlanClose(mr, t.Result, ballots)
	if err != nil {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: " + err.Error()}
	}
	if !req.Sign {
		return writeJSON(w, ClosePlan{Session: sid, MR: mr, Outcome: d.Outcome, Ballots: d.Ballots, Result: t.Result,
			Finality: replica.Provisional, Simulation: st.Simulation})
	}
	if req.Outcome != d.Outcome || req.Ballots != len(d.Ballots) {
		return &dag.ProtocolError{Code: dag.CodeNotAuthorized, Detail: "classroom: the vote moved since the determination was shown (now " + d.Outcome + "): look again and confirm"}
	}
	tx, err := a.Determine(ctx, sid, d, nil)
	if err != nil {
		return err
	}
	_, err = h.submitAll(ctx, w, sid, nil, []author.Tx{tx})
	return err
}

// ballotsOn lists the ballots on mr in this node's log, in log order.
func (h *Handler) ballotsOn(ctx context.Context, space string, mr dag.ID) ([]dag.ID, error) {
	ids, err := h.o.Node.Log(ctx, space, 0, maxScan)
	if err != nil {
		return nil, err
	}
	var out []dag.ID
	for _, id := range ids {
		e, err := h.o.Node.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil || env.Type != dag.TxBallotCast {
			continue
		}
		var b struct {
			MR dag.ID `json:"mr"`
		}
		if json.Unmarshal(env.Body, &b) == nil && b.MR == mr {
			out = append(out, id)
		}
	}
	return out, nil
}
