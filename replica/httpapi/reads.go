package httpapi

// This file holds the read endpoints of 30k §5 (L0 and L1) and /peers.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/replica/node"
	"github.com/witan-dev/witan/replica/opinion"
	"github.com/witan-dev/witan/replica/statute"
	"github.com/witan-dev/witan/replica/view"
	"github.com/witan-dev/witan/rules"
)

// Capability is the capability document (30k §5).
type Capability struct {
	Protocol       string         `json:"protocol"`
	Implementation Implementation `json:"implementation"`
	Consistency    string         `json:"consistency"`
	TrustModel     string         `json:"trust_model"`
	RuleKinds      []string       `json:"rule_kinds"`
	AssertionKinds []string       `json:"assertion_kinds"`
	Profiles       []string       `json:"profiles"`
	Exports        []string       `json:"exports"`
	RefusalLog     bool           `json:"refusal_log"`
	Contests       bool           `json:"contests"`
	// RestrictedBranches: restricted branches with commit-then-reveal
	// are admitted, and drafts deposited with this node are served to
	// owner-group members by signed challenge (drafts.go,
	// docs/restricted-branches.md).
	RestrictedBranches bool      `json:"restricted_branches"`
	Simulation         bool      `json:"simulation"`
	Education          bool      `json:"education"`
	Ephemeral          bool      `json:"ephemeral"`
	KeyAging           int64     `json:"key_aging"`
	ExtractCosigners   []dag.Key `json:"extract_cosigners"`
	Metrics            []string  `json:"metrics"`
	ConformanceLevel   string    `json:"conformance_level"`
	OpinionPolicy      string    `json:"opinion_policy"`
	OpinionRateLimit   string    `json:"opinion_rate_limit"`
	NodeKey            dag.Key   `json:"node_key"`
	// RateLimited counts the opinions this node refused rate_limited
	// since it started (D51: the limit's effect, as a metric).
	RateLimited uint64 `json:"witan_opinions_rate_limited"`
	// Witan's own members: what the node serves beyond its level, and
	// what it does not serve yet (docs/conformance.md).
	Sessions       []dag.ID `json:"witan_sessions"`
	NotImplemented []string `json:"witan_not_implemented"`
	MemoryBlocks   bool     `json:"witan_memory_blocks"`
	Finality       string   `json:"finality"`
}

// ConformanceLevel is what this node honestly claims: every L0, L1 and L2
// requirement of 30k §10 that an eventual node can meet is met, and
// witan harness (cmd/witan/harness) shows every L1 and L2 scenario over
// HTTP against two witan up processes, with its own signing and ids
// (docs/conformance.md is its report). capital_vote is strong-only (S6
// not applicable); nothing of L3 is claimed.
const ConformanceLevel = "L2"

func (s *Server) capability(w http.ResponseWriter, r *http.Request) error {
	c := Capability{
		Protocol: "oth/" + dag.ProtocolVersion, Implementation: s.o.Implementation,
		Consistency: "eventual", TrustModel: "crdt-replicas",
		RuleKinds: rules.SupportedKinds(), AssertionKinds: opinion.AssertionKinds, Profiles: statute.ProfileIDs(),
		Exports: []string{"popolo"}, KeyAging: opinion.DefaultKeyAging, ExtractCosigners: []dag.Key{}, Metrics: opinion.Metrics,
		ConformanceLevel: ConformanceLevel, OpinionPolicy: OpinionPolicy, OpinionRateLimit: s.lim.l.describe(), RateLimited: s.lim.refused(),
		NodeKey: s.rep.NodeKey(), Sessions: s.rep.Sessions(), Ephemeral: s.o.Ephemeral,
		NotImplemented: []string{"capital_vote (strong only)", "the optional XML exports /export/akn and /export/uslm",
			"refusal-log inclusion of complaint evidence judged at admission (reported in /opinions/{id}/evaluation), complaint re-validation (L3)"}, RefusalLog: true,
		RestrictedBranches: true,
		MemoryBlocks:       true, Finality: string(replica.Provisional), Contests: true,
	}
	for _, sp := range c.Sessions {
		if st, _, err := s.rep.State(r.Context(), sp); err == nil {
			c.Simulation = c.Simulation || st.Simulation
			c.Education = c.Education || st.Education
			c.Ephemeral = c.Ephemeral || st.Education
		}
	}
	if c.Sessions == nil {
		c.Sessions = []dag.ID{}
	}
	return writeJSON(w, c)
}

// checkpointed returns the log size covered by the space's latest
// checkpoint: entries at positions up to it are final_advisory.
func (s *Server) checkpointed(space dag.ID) uint64 {
	c, _ := s.rep.LastCheckpoint(space)
	return c.Size
}

func finalityAt(pos, covered uint64) replica.Finality {
	if pos > 0 && pos <= covered {
		return replica.FinalAdvisory
	}
	return replica.Provisional
}

// LogEntry is one accepted envelope of GET /log.
type LogEntry struct {
	Position    uint64            `json:"position"`
	Tx          dag.ID            `json:"tx"`
	Envelope    json.RawMessage   `json:"envelope"`
	Attachments []json.RawMessage `json:"attachments"`
	Finality    replica.Finality  `json:"finality"`
}

// LogPage is GET /log's answer. Next is the opaque cursor of the next
// page, null at the end of the log as it is now.
type LogPage struct {
	sessionLabels
	Entries  []LogEntry       `json:"entries"`
	Next     *string          `json:"next"`
	Finality replica.Finality `json:"finality"`
}

const cursorPrefix = "log1:"

// EncodeCursor returns the opaque cursor for "after position pos".
func EncodeCursor(pos uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatUint(pos, 10)))
}

func decodeCursor(c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if n, ok := strings.CutPrefix(string(b), cursorPrefix); ok {
			if pos, err := strconv.ParseUint(n, 10, 64); err == nil {
				return pos, nil
			}
		}
	}
	return 0, problemf(dag.CodeSchema, "after: not a cursor this node issued")
}

func (s *Server) logPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	after, err := decodeCursor(r.URL.Query().Get("after"))
	if err != nil {
		return err
	}
	labels, err := s.sessionLabelsOf(ctx, space)
	if err != nil {
		return err // an unknown session is 404, not an empty log
	}
	limit := DefaultLogLimit
	if q := r.URL.Query().Get("limit"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 {
			return problemf(dag.CodeSchema, "limit: want a positive integer")
		}
		limit = min(n, MaxLogLimit)
	}
	ids, err := s.rep.Log(ctx, space, after, limit)
	if err != nil {
		return err
	}
	covered := s.checkpointed(space)
	page := LogPage{sessionLabels: labels, Entries: make([]LogEntry, 0, len(ids)), Finality: replica.FinalAdvisory}
	for i, id := range ids {
		e, err := s.n.Get(ctx, id)
		if err != nil {
			return err
		}
		att, err := s.n.Attachments(ctx, e)
		if err != nil {
			return err
		}
		le := LogEntry{Position: after + uint64(i) + 1, Tx: id, Envelope: e.Data, Attachments: make([]json.RawMessage, len(att)), Finality: finalityAt(after+uint64(i)+1, covered)}
		for k, a := range att {
			if le.Attachments[k], err = dag.AttachmentWire(a); err != nil {
				return err
			}
		}
		if le.Finality == replica.Provisional {
			page.Finality = replica.Provisional
		}
		page.Entries = append(page.Entries, le)
	}
	if len(ids) == 0 {
		page.Finality = finalityAt(after, covered)
	}
	if len(ids) == limit {
		c := EncodeCursor(after + uint64(len(ids)))
		page.Next = &c
	}
	return writeJSON(w, page)
}

// ObjectAnswer is GET /objects/{id}'s answer: an entry of a space (an
// envelope or a memory block) or an object (a change, a node, a branch or
// group object), as stored; or a merge change no one stored because every
// replica derives it (30k §6 item 4), as this node's House executed it:
// Derived is then true and Space names its session.
type ObjectAnswer struct {
	ID      dag.ID          `json:"id"`
	Kind    string          `json:"kind"` // "entry" or "object"
	Space   string          `json:"space,omitempty"`
	Object  json.RawMessage `json:"object"`
	Derived bool            `json:"derived,omitempty"`
	// MediaType is set for a plain-text document, served as a JSON string.
	MediaType string           `json:"media_type,omitempty"`
	Finality  replica.Finality `json:"finality"`
}

// derivedChange answers /objects/{id} for a change of a session's Change
// DAG that is in no store: a merge change (or the genesis change), with
// the parents it was executed with.
func (s *Server) derivedChange(w http.ResponseWriter, r *http.Request, id dag.ID) error {
	ctx := r.Context()
	spaces := s.rep.Sessions()
	if r.URL.Query().Get("session") != "" {
		space, err := s.spaceOf(r)
		if err != nil {
			return err
		}
		spaces = []dag.ID{space}
	}
	for _, sp := range spaces {
		c, err := s.view.Change(ctx, sp, id)
		if errors.Is(err, dag.ErrNotFound) {
			if ok, err := s.mrObject(w, r, sp, id); ok || err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		b, err := c.Canonical()
		if err != nil {
			return err
		}
		return writeJSON(w, ObjectAnswer{ID: id, Kind: "object", Space: sp.String(), Object: b, Derived: true, Finality: replica.Provisional})
	}
	return problemf(CodeNotFound, "no entry, object or change %s", id)
}

// mrObject answers /objects/{mr_id} (§5 lists MRs among the objects):
// the body of the MR's mr.open, whose hash is the MR id. ok is false when
// space has no such MR.
func (s *Server) mrObject(w http.ResponseWriter, r *http.Request, space dag.ID, id dag.ID) (bool, error) {
	ctx := r.Context()
	m, err := s.view.MR(ctx, space, id)
	if errors.Is(err, dag.ErrNotFound) || (err == nil && len(m.OpenedBy) == 0) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	e, err := s.n.Get(ctx, m.OpenedBy[0])
	if err != nil {
		return false, err
	}
	env, _, _, err := dag.DecodeEnvelope(e.Data)
	if err != nil {
		return false, err
	}
	if dag.Sum(env.Body) != id {
		return false, fmt.Errorf("httpapi: MR %s: its open's body hashes to %s", id, dag.Sum(env.Body))
	}
	f, err := s.rep.Finality(ctx, space, m.OpenedBy[0])
	if err != nil {
		f = replica.Provisional
	}
	return true, writeJSON(w, ObjectAnswer{ID: id, Kind: "object", Space: space.String(), Object: env.Body, Finality: f})
}

func (s *Server) object(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := parseIDParam(r, "id")
	if err != nil {
		return err
	}
	if e, err := s.n.Get(ctx, id); err == nil {
		a := ObjectAnswer{ID: id, Kind: "entry", Space: e.Space, Object: e.Data, Finality: replica.Provisional}
		// A memory space's entry has no session id: the zero ID names no
		// session, and the entry stays provisional.
		session, _ := dag.ParseID(e.Space)
		if f, err := s.rep.Finality(ctx, session, id); err == nil {
			a.Finality = f
		}
		return writeJSON(w, a)
	} else if !errors.Is(err, dag.ErrNotFound) {
		return err
	}
	b, err := s.n.Object(ctx, id)
	if errors.Is(err, dag.ErrNotFound) {
		return s.derivedChange(w, r, id)
	}
	if err != nil {
		return err
	}
	// Objects are not in any log, so no checkpoint includes them by
	// themselves: provisional (docs/http-api.md). A plain-text document
	// (a rule's text) is served as a JSON string with its media type.
	a := ObjectAnswer{ID: id, Kind: "object", Object: b, Finality: replica.Provisional}
	if dag.IsText(b) {
		if a.Object, err = dag.AttachmentWire(b); err != nil {
			return fmt.Errorf("httpapi: stored object %s: %w", id, err)
		}
		a.MediaType = "text/plain; charset=utf-8"
	}
	return writeJSON(w, a)
}

// CheckpointAnswer is GET /checkpoint's answer: the latest signed
// checkpoint, untouched, beside the labels.
type CheckpointAnswer struct {
	sessionLabels
	Checkpoint json.RawMessage  `json:"checkpoint"`
	LogSize    uint64           `json:"log_size"`
	Finality   replica.Finality `json:"finality"`
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	cp, ok := s.rep.LastCheckpoint(space)
	if !ok {
		return problemf(CodeNotFound, "no checkpoint of %s yet", space)
	}
	b, err := json.Marshal(cp)
	if err != nil {
		return err
	}
	size, err := s.rep.LogSize(ctx, space)
	if err != nil {
		return err
	}
	return writeJSON(w, CheckpointAnswer{sessionLabels: s.labels(ctx, space), Checkpoint: b, LogSize: size, Finality: replica.FinalAdvisory})
}

// HeadsAnswer is GET /heads's answer.
type HeadsAnswer struct {
	sessionLabels
	Heads    []dag.ID         `json:"heads"`
	Finality replica.Finality `json:"finality"`
}

func (s *Server) heads(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	labels, err := s.sessionLabelsOf(ctx, space)
	if err != nil {
		return err
	}
	hs, err := s.rep.Heads(ctx, space)
	if err != nil {
		return err
	}
	a := HeadsAnswer{sessionLabels: labels, Heads: hs, Finality: replica.FinalAdvisory}
	if a.Heads == nil {
		a.Heads = []dag.ID{}
	}
	for _, h := range hs {
		if f, err := s.rep.Finality(ctx, space, h); err != nil || f != replica.FinalAdvisory {
			a.Finality = replica.Provisional
		}
	}
	if len(hs) == 0 {
		a.Finality = replica.Provisional
	}
	return writeJSON(w, a)
}

// stateFinality is final_advisory when the latest checkpoint covers the
// whole log: the state is then exactly what the checkpoint commits to
// (Replica.StateFinality, from two numbers the replica keeps).
func (s *Server) stateFinality(_ context.Context, space dag.ID) replica.Finality {
	return s.rep.StateFinality(space)
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) error {
	all := s.rep.Sessions()
	if all == nil {
		all = []dag.ID{}
	}
	return writeJSON(w, map[string]any{"sessions": all, "finality": replica.Provisional})
}

// SessionAnswer is GET /sessions/{id}'s answer: the session's summary
// (house.Summary: its scalars and group ids, the rest counted), the hash
// of its whole derived state, equal on every replica that holds the same
// entries, and the paths of its parts (docs/http-api.md). It costs
// O(groups + expiries), not O(state): the state hash is derived once per
// version of the state (Replica.Summary).
type SessionAnswer struct {
	sessionLabels
	State     *house.Summary   `json:"state"`
	StateHash dag.ID           `json:"state_hash"`
	Parts     SessionParts     `json:"parts"`
	Finality  replica.Finality `json:"finality"`
}

// SessionParts are the paths that read what a session's summary counts.
type SessionParts struct {
	State         string `json:"state"`          // the whole derived state
	Group         string `json:"group"`          // one group, {id} from state.groups
	Branches      string `json:"branches"`       // the branches
	MergeRequests string `json:"merge_requests"` // the merge requests, a page at a time
}

// StateAnswer is GET /sessions/{id}/state's answer: the whole derived
// state (house.State) and its hash. Its size grows with the session's
// merge requests, keys and members; the node encodes it once per version
// of the state (Replica.StateJSON).
type StateAnswer struct {
	sessionLabels
	State     *house.State     `json:"state"`
	StateHash dag.ID           `json:"state_hash"`
	Finality  replica.Finality `json:"finality"`
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := parseIDParam(r, "id")
	if err != nil {
		return err
	}
	space := id
	sum, h, err := s.rep.Summary(ctx, space)
	if err != nil {
		return err
	}
	q := "?session=" + space.String()
	return writeLabelled(w, SessionAnswer{sessionLabels: s.labels(ctx, space), State: &sum, StateHash: h, Finality: s.stateFinality(ctx, space),
		Parts: SessionParts{State: Base + "/sessions/" + space.String() + "/state", Group: Base + "/groups/{id}" + q, Branches: Base + "/branches" + q, MergeRequests: Base + "/merge-requests" + q}})
}

func (s *Server) sessionState(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := parseIDParam(r, "id")
	if err != nil {
		return err
	}
	space := id
	canon, h, err := s.rep.StateJSON(ctx, space)
	if err != nil {
		return err
	}
	// The state's canonical JSON goes in as it is kept, with no encoding
	// and no scan: everything else of the answer is encoded beside it.
	head, err := json.Marshal(struct {
		sessionLabels
		StateHash dag.ID           `json:"state_hash"`
		Finality  replica.Finality `json:"finality"`
	}{s.labels(ctx, space), h, s.stateFinality(ctx, space)})
	if err != nil {
		return err
	}
	b := make([]byte, 0, len(head)+len(canon)+16)
	b = append(append(b, head[:len(head)-1]...), `,"state":`...)
	b = append(append(b, canon...), "}\n"...)
	if lw, ok := w.(*labelWriter); ok {
		lw.labelled = true
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

// GroupAnswer is GET /groups/{id}'s answer.
type GroupAnswer struct {
	Session    string           `json:"session"`
	Group      house.GroupView  `json:"group"`
	Finality   replica.Finality `json:"finality"`
	Simulation bool             `json:"simulation"`
}

func (s *Server) group(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "group:") {
		id = "group:" + id
	}
	g, err := s.rep.Group(ctx, space, strings.TrimPrefix(id, "group:"))
	if errors.Is(err, dag.ErrNotFound) {
		g, err = s.rep.Group(ctx, space, id)
	}
	if err != nil {
		return err
	}
	return writeLabelled(w, GroupAnswer{Session: space.String(), Group: g, Finality: s.stateFinality(ctx, space), Simulation: s.labels(ctx, space).Simulation})
}

func (s *Server) branches(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	bs, err := s.rep.Branches(ctx, space)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"session": space, "branches": bs, "finality": s.stateFinality(ctx, space), "simulation": s.labels(ctx, space).Simulation})
}

func (s *Server) branch(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	b, err := s.rep.Branch(ctx, space, r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"session": space, "branch": b, "finality": s.stateFinality(ctx, space), "simulation": s.labels(ctx, space).Simulation})
}

// TreeAnswer is a subtree of a snapshot.
type TreeAnswer struct {
	Session  string            `json:"session"`
	Branch   string            `json:"branch,omitempty"`
	Head     *dag.ID           `json:"head,omitempty"`
	Snapshot dag.ID            `json:"snapshot"`
	NID      string            `json:"nid"`
	Node     *statute.NodeSpec `json:"node"`
	Finality replica.Finality  `json:"finality"`
}

// subtree returns the subtree at nid (the root when nid is empty) of the
// snapshot of change, as the replica holds it.
func (s *Server) subtree(ctx context.Context, space dag.ID, change dag.ID, nid string) (*statute.NodeSpec, string, error) {
	t, err := s.view.Snapshot(ctx, space, change)
	if err != nil {
		return nil, "", err
	}
	return specAt(t, nid)
}

// specAt is subtree in a snapshot already loaded.
func specAt(t *statute.Tree, nid string) (*statute.NodeSpec, string, error) {
	if nid == "" {
		nid = t.Root()
	}
	spec, ok := t.Spec(nid)
	if !ok {
		return nil, "", problemf(CodeNotFound, "no node %q in snapshot %s", nid, t.Hash())
	}
	return spec, nid, nil
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	b, err := s.rep.Branch(ctx, space, r.PathValue("name"))
	if err != nil {
		return err
	}
	if b.Snapshot == nil || len(b.Heads) != 1 {
		return problemf(dag.CodeSchema, "branch %q has %d heads: no single snapshot", b.Name, len(b.Heads))
	}
	spec, nid, err := s.subtree(ctx, space, b.Heads[0], r.URL.Query().Get("nid"))
	if err != nil {
		return err
	}
	return writeJSON(w, TreeAnswer{Session: space.String(), Branch: b.Name, Head: &b.Heads[0], Snapshot: *b.Snapshot, NID: nid, Node: spec, Finality: s.stateFinality(ctx, space)})
}

func (s *Server) mrs(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	ms, err := s.view.MRs(ctx, space)
	if err != nil {
		return err
	}
	if status := r.URL.Query().Get("status"); status != "" {
		kept := ms[:0]
		for _, m := range ms {
			if m.Status == status {
				kept = append(kept, m)
			}
		}
		ms = kept
	}
	if ms == nil {
		ms = []view.MR{}
	}
	f := replica.FinalAdvisory
	for _, m := range ms {
		if m.Finality != replica.FinalAdvisory {
			f = replica.Provisional
		}
	}
	return writeJSON(w, map[string]any{"session": space, "merge_requests": ms, "finality": f, "simulation": s.labels(ctx, space).Simulation})
}

func (s *Server) mr(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	m, err := s.view.MR(ctx, space, id)
	if err != nil {
		return err
	}
	return writeJSON(w, struct {
		view.MR
		sessionLabels
	}{m, s.labels(ctx, space)})
}

// TallyAnswer is GET /merge-requests/{id}/tally's answer: the live tally,
// and the MR's own finality (final_advisory once its executed
// determination is checkpointed).
type TallyAnswer struct {
	sessionLabels
	MR       dag.ID           `json:"mr"`
	Status   string           `json:"status"`
	Result   rules.Result     `json:"result"`
	Finality replica.Finality `json:"finality"`
	// Stakes are the latest stakes each member declared on the MR, next
	// to their ballot (D32); members who declared none are not listed.
	Stakes []view.MemberStakes `json:"stakes"`
	// Rotations are the session's key rotations (D62), left out when
	// there are none: the tally names members by the key they had at the
	// MR's open, and a rotated member's current key is its "new" (a
	// rotation hook, replica/house rotate.go).
	Rotations []house.RotationView `json:"rotations,omitempty"`
}

// TallyByAnswer is GET /merge-requests/{id}/tally?by=region|density's
// answer (D72): the live tally and, per declared value of the attribute,
// the tally of the electorate's members with that value (value "" for
// members the session's district table does not list). Always
// provisional: it is a live view.
type TallyByAnswer struct {
	sessionLabels
	Status string `json:"status"`
	view.TallyBreakdown
}

func (s *Server) tally(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, id, err := s.spaceAndID(r)
	if err != nil {
		return err
	}
	m, err := s.view.MR(ctx, space, id)
	if err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("by") {
		br, err := s.view.TallyBy(ctx, space, id, q.Get("by"))
		if err != nil {
			return err
		}
		return writeJSON(w, TallyByAnswer{sessionLabels: s.labels(ctx, space), Status: m.Status, TallyBreakdown: br})
	}
	t, err := s.view.Tally(ctx, space, id)
	if err != nil {
		return err
	}
	a := TallyAnswer{sessionLabels: s.labels(ctx, space), MR: id, Status: m.Status, Result: t.Result, Finality: t.Finality}
	if a.Stakes, err = s.view.Stakes(ctx, space, id); err != nil {
		return err
	}
	if st, _, err := s.rep.State(ctx, space); err == nil { // rotation hook
		a.Rotations = st.Rotations
	}
	return writeJSON(w, a)
}

// LawAnswer is GET /law's answer: the root text at the root branch's head.
type LawAnswer struct {
	sessionLabels
	Head     dag.ID            `json:"head"`
	Snapshot dag.ID            `json:"snapshot"`
	Root     *statute.NodeSpec `json:"root"`
	Finality replica.Finality  `json:"finality"`
}

func (s *Server) law(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	space, err := s.spaceOf(r)
	if err != nil {
		return err
	}
	if q := r.URL.Query(); q.Get("date") != "" || q.Get("jurisdiction") != "" {
		return s.lawOn(w, r, space, q.Get("date"), q.Get("jurisdiction"))
	}
	l, err := s.view.Law(ctx, space)
	if err != nil {
		return err
	}
	spec, _, err := s.subtree(ctx, space, l.Head, "")
	if err != nil {
		return err
	}
	return writeJSON(w, LawAnswer{sessionLabels: s.labels(ctx, space), Head: l.Head, Snapshot: l.Snapshot, Root: spec, Finality: s.stateFinality(ctx, space)})
}

func (s *Server) rules(w http.ResponseWriter, r *http.Request) error {
	return writeJSON(w, map[string]any{"rules": rules.Kinds(), "finality": replica.FinalAdvisory})
}

func (s *Server) rule(w http.ResponseWriter, r *http.Request) error {
	k, ok := rules.Lookup(r.PathValue("kind"))
	if !ok {
		return problemf(dag.CodeRuleUnknown, "no rule kind %q", r.PathValue("kind"))
	}
	return writeJSON(w, map[string]any{"rule": k, "finality": replica.FinalAdvisory})
}

// QuarantineEntry is one refused entry: a record of the replica's bounded
// quarantine (nothing refused is stored; docs/security.md).
type QuarantineEntry struct {
	Session string   `json:"session"`
	ID      dag.ID   `json:"id"`
	Code    dag.Code `json:"code"`
	Detail  string   `json:"detail"`
	// Source is who sent it ("peer:<id>", "http:<address>"; empty for
	// the node itself); Seq orders the records and pages them (?after=).
	Source string `json:"source,omitempty"`
	Seq    uint64 `json:"seq,omitempty"`
	// Time is when it was refused (RFC 3339, UTC).
	Time string `json:"time,omitempty"`
}

// Quarantine pages: ?after=SEQ&limit=N (default and most 1000).
const (
	DefaultQuarantineLimit = 1000
	MaxQuarantineLimit     = 1000
)

func (s *Server) quarantine(w http.ResponseWriter, r *http.Request) error {
	space := ""
	if q := r.URL.Query().Get("session"); q != "" {
		sp, err := s.spaceOf(r)
		if err != nil {
			return err
		}
		space = sp.String()
	}
	after, limit := uint64(0), DefaultQuarantineLimit
	if a := r.URL.Query().Get("after"); a != "" {
		v, err := strconv.ParseUint(a, 10, 64)
		if err != nil {
			return problemf(dag.CodeSchema, "after: %v", err)
		}
		after = v
	}
	if l := r.URL.Query().Get("limit"); l != "" {
		v, err := strconv.Atoi(l)
		if err != nil || v < 1 || v > MaxQuarantineLimit {
			return problemf(dag.CodeSchema, "limit must be 1 to %d", MaxQuarantineLimit)
		}
		limit = v
	}
	recs, more := s.rep.Refusals(space, after, limit)
	out := make([]QuarantineEntry, 0, len(recs))
	for _, q := range recs {
		e := QuarantineEntry{Session: q.Space, ID: q.ID, Code: q.Code, Detail: q.Reason, Source: q.Source, Seq: q.Seq}
		if !q.Time.IsZero() {
			e.Time = q.Time.UTC().Format(time.RFC3339)
		}
		out = append(out, e)
	}
	ans := map[string]any{"quarantine": out, "stats": s.rep.QuarantineStats(), "finality": replica.Provisional}
	if more && len(out) > 0 {
		ans["next"] = out[len(out)-1].Seq
	}
	// The quarantine is this replica's own record: never checkpointed.
	return writeJSON(w, ans)
}

func (s *Server) peers(w http.ResponseWriter, r *http.Request) error {
	ps, pulls, offers := []Peer{}, []Pull{}, []Offer{}
	if p := s.peersAPI(); p != nil {
		ps = append(ps, p.Peers()...)
		pulls = append(pulls, p.Pulls()...)
		if ol, ok := p.(OfferLister); ok {
			offers = append(offers, ol.Available()...)
		}
	}
	return writeJSON(w, PeersAnswer{Peers: ps, Pulls: pulls, Available: offers, Finality: string(replica.Provisional)})
}

// PeersAnswer is GET /peers's answer: the connected peers, the pulls
// running now, and the sessions (and memory spaces) the peers announce.
type PeersAnswer struct {
	Peers     []Peer  `json:"peers"`
	Pulls     []Pull  `json:"pulls"`
	Available []Offer `json:"available"`
	Finality  string  `json:"finality"`
}

// ConnectRequest is POST /peers's body: a peer's multiaddr and the spaces
// (session ids, or "mem:<name>" memory spaces) to pull from it now.
type ConnectRequest struct {
	Addr   string   `json:"addr"`
	Spaces []string `json:"spaces,omitempty"`
}

// ConnectAnswer is POST /peers's answer.
type ConnectAnswer struct {
	Connected string       `json:"connected"`
	Synced    []SyncResult `json:"synced"`
	Finality  string       `json:"finality"`
}

// JoinRequest is POST /join's body: the space to join.
type JoinRequest struct {
	Space string `json:"space"`
}

// JoinAnswer is POST /join's answer. Heads are the space's heads when
// the streamed answer ends because the space arrived.
type JoinAnswer struct {
	Joined string   `json:"joined"`
	Heads  []dag.ID `json:"heads,omitempty"`
	// Left: the streamed join brought nothing within MaxJoinWait and the
	// node left the space again (POST /leave).
	Left     bool   `json:"left,omitempty"`
	Finality string `json:"finality"`
}

// LeaveRequest is POST /leave's body: the space to leave.
type LeaveRequest struct {
	Space string `json:"space"`
}

// LeaveAnswer is POST /leave's answer.
type LeaveAnswer struct {
	Left string `json:"left"`
}

// CodeHeld: POST /leave of a space the node holds entries of.
const CodeHeld dag.Code = "witan:held"

// leave undoes a join of a space the node holds nothing of (witan
// leave): the node stops pulling it and its peers stop listing it as
// this node's.
func (s *Server) leave(w http.ResponseWriter, r *http.Request) error {
	if s.n.Sync() == nil {
		return problemf(CodeNotImplemented, "this node runs without sync")
	}
	if !s.operator(r) {
		return problemf(CodeForbidden, "POST /leave changes what the node syncs: an operator action (send the operator token, or ask from loopback on a node that allows it)")
	}
	var req LeaveRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if _, err := dag.ParseID(req.Space); err != nil && !strings.HasPrefix(req.Space, node.MemoryPrefix) {
		return problemf(dag.CodeSchema, "space %q is neither a session id nor %s<name>", req.Space, node.MemoryPrefix)
	}
	if err := s.n.Leave(r.Context(), req.Space); err != nil {
		if errors.Is(err, node.ErrHeld) {
			return problemf(CodeHeld, "this node holds entries of %s: leave undoes a join that brought nothing, and a session held stays synced", req.Space)
		}
		return err
	}
	return writeJSON(w, LeaveAnswer{Left: req.Space})
}

// join joins a space without naming a peer: the node pulls it from the
// connected peers that announce it (witan join).
func (s *Server) join(w http.ResponseWriter, r *http.Request) error {
	if s.n.Sync() == nil {
		return problemf(CodeNotImplemented, "this node runs without sync")
	}
	if !s.operator(r) {
		return problemf(CodeForbidden, "POST /join makes the node pull a space from its peers: an operator action (send the operator token, or ask from loopback on a node that allows it)")
	}
	var req JoinRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if _, err := dag.ParseID(req.Space); err != nil && !strings.HasPrefix(req.Space, node.MemoryPrefix) {
		return problemf(dag.CodeSchema, "space %q is neither a session id nor %s<name>", req.Space, node.MemoryPrefix)
	}
	if acceptsNDJSON(r) {
		return s.joinStream(w, r, req.Space) // connectstream.go
	}
	if err := s.n.Join(r.Context(), req.Space); err != nil {
		return err
	}
	return writeJSON(w, JoinAnswer{Joined: req.Space, Finality: string(replica.Provisional)})
}

func (s *Server) connect(w http.ResponseWriter, r *http.Request) error {
	peers := s.peersAPI()
	if peers == nil {
		return problemf(CodeNotImplemented, "this node runs without sync")
	}
	if !s.operator(r) {
		return problemf(CodeForbidden, "POST /peers makes the node dial out: an operator action (send the operator token, or ask from loopback on a node that allows it)")
	}
	var req ConnectRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	if req.Addr == "" {
		return problemf(dag.CodeSchema, "addr is required")
	}
	for _, sp := range req.Spaces {
		if _, err := dag.ParseID(sp); err != nil && !strings.HasPrefix(sp, node.MemoryPrefix) {
			return problemf(dag.CodeSchema, "space %q is neither a session id nor %s<name>", sp, node.MemoryPrefix)
		}
	}
	if acceptsNDJSON(r) {
		return s.connectStream(w, r, peers, req) // connectstream.go
	}
	res, err := peers.Connect(r.Context(), req.Addr, req.Spaces)
	if err != nil {
		return problemf(CodePeerUnreachable, "connect %s: %v", req.Addr, err)
	}
	if res == nil {
		res = []SyncResult{}
	}
	return writeJSON(w, ConnectAnswer{Connected: req.Addr, Synced: res, Finality: string(replica.Provisional)})
}
