package extract

// This file is the extract of a merge request (GET /extract/{mr} for an
// MR id, the hash of the body of its first mr.open; 30k D45, "for an MR or determination, its ballots and
// open/determine transactions"): the evidence a stranger needs to check
// the MR's outcome with the network off, and VerifyMR, which checks
// it (witan verify-extract FILE).
//
// An MR extract is the canonical JSON (JCS) of
//
//	{"authoritative":false,"checkpoint":{…},"cosigned":[…],
//	 "determinations":[{if_closed,outcome,tally,tx}…],"electorate":["ed25519:…"…],
//	 "entries":[{inclusion:{leaf_index,tree_size,inclusion_path},object:<envelope>,tx}…],
//	 "facts":{emergency,reverts,structure_failed},"finality":"provisional|final_advisory",
//	 "kind":"mr","mr":"sha256:…","object":<the MR object>,
//	 "session":"sha256:…","simulation":bool,"supporting":[<attachments>],
//	 "tally":{finality:"provisional",if_closed,tally}}
//
// entries are, in this node's log order, every mr.open of the MR, every
// ballot.cast its live poll counts, every ballot a determination lists and
// every mr.determine of the MR that this node's checkpoint holds, the
// key.rotate entries from a counted ballot's rotated-in signer to its
// member (D62), and, under designated_approvers, the group.create/group.update entries that
// defined the approvers group at its opens (the group's maximal writes
// in each open's causal past; a group.update's object in supporting) (the
// newest co-signed one when it holds all that the newest holds, else the
// newest), each with its RFC 9162 inclusion proof against that one
// checkpoint; the MR's
// entries this node holds beyond it are not in the extract (nothing in it
// goes unchecked), the response header Witan-Pending-Entries counts them.
// electorate is the MR's frozen electorate, whose snapshot hash
// (sha256 of its JCS, sorted) is the mr.open's electorate.snapshot; under
// designated_approvers it is the approvers group instead (§7's n), the
// members every carried group entry names (MR.ApproversElectorate).
// determinations state, for each mr.determine entry in order, the tally
// and if_closed outcome this node derived over exactly its listed ballots;
// tally states the tally over every ballot entry (always provisional: a
// live tally). facts are what the outcome depends on besides ballots:
// emergency is the MR's own, reverts and structure_failed are this node's
// findings (they need the statute text, which the extract does not carry:
// not checked offline).
//
// VerifyMR re-checks everything from the file alone: canonical form
// (so one byte changed anywhere fails), the checkpoint and cosignatures as
// for one entry, every envelope's id, signature, session, type (mr.open of
// exactly the object, ballot.cast or mr.determine naming the MR) and
// inclusion, entries in strictly increasing log position, the electorate
// against the snapshot, and then recomputes every stated tally and outcome
// with rules.Evaluate (the pure §7 function) over the ballots in the file,
// each ballot's author being its envelope's signer or, for a rotated-in
// key, the member its key.rotate entries lead to (D62). final_advisory is
// accepted only with a determination in the file whose outcome its own
// ballots give; "final" never.
//
// Not served (501 witan:not_implemented), as safeguards: MRs whose
// electorate is not what the file pins (its snapshot, or the approvers'
// carried group writes), and MRs with a ballot
// counted for a member that the carried key.rotate entries do not map its
// signer to: their tallies cannot be recomputed from the extract alone. At most
// httpapi.Options.MaxExtractEntries entries (422 witan:extract_too_large).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica/checkpoint"
	"github.com/witan-dev/witan/replica/house"
	"github.com/witan-dev/witan/rules"
)

// LogEntry is one log entry of an MR extract with its inclusion proof.
type LogEntry struct {
	Inclusion Inclusion       `json:"inclusion"`
	Object    json.RawMessage `json:"object"`
	Tx        dag.ID          `json:"tx"`
}

// Determination is what the node derived for one mr.determine of
// the extract: its signed outcome, and the tally and if_closed outcome of
// exactly its listed ballots.
type Determination struct {
	IfClosed rules.Outcome `json:"if_closed"`
	Outcome  rules.Outcome `json:"outcome"`
	Tally    rules.Tally   `json:"tally"`
	Tx       dag.ID        `json:"tx"`
}

// Facts are the facts an MR is evaluated with (rules.Facts).
type Facts struct {
	Emergency       bool `json:"emergency"`
	Reverts         bool `json:"reverts"`
	StructureFailed bool `json:"structure_failed"`
}

// Tally is the tally over every ballot of an MR extract.
type Tally struct {
	Finality checkpoint.Finality `json:"finality"` // always provisional
	IfClosed rules.Outcome       `json:"if_closed"`
	Tally    rules.Tally         `json:"tally"`
}

// MR is GET /extract/{mr}'s answer for an MR id.
type MR struct {
	Authoritative  bool                     `json:"authoritative"`
	Checkpoint     json.RawMessage          `json:"checkpoint"`
	Cosigned       []checkpoint.Cosignature `json:"cosigned"`
	Determinations []Determination          `json:"determinations"`
	Electorate     []dag.Key                `json:"electorate"`
	Entries        []LogEntry               `json:"entries"`
	Facts          Facts                    `json:"facts"`
	Finality       checkpoint.Finality      `json:"finality"`
	Kind           string                   `json:"kind"` // "mr"
	MR             dag.ID                   `json:"mr"`
	Object         json.RawMessage          `json:"object"`
	Session        string                   `json:"session"`
	Simulation     bool                     `json:"simulation"`
	Supporting     []json.RawMessage        `json:"supporting"`
	Tally          Tally                    `json:"tally"`
}

// IsMR reports whether b looks like an MR extract (kind "mr"),
// which VerifyMR checks; anything else goes to Verify.
func IsMR(b []byte) bool {
	var k struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal(b, &k) == nil && k.Kind == "mr"
}

func sortedKeys(ks []dag.Key) []dag.Key {
	out := slices.Clone(ks)
	slices.SortFunc(out, func(a, b dag.Key) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// extractBallots decodes x's ballot.cast entries, each counted for its
// envelope's signer, and its mr.determine entries.
func extractBallots(x *MR) (all []rules.Ballot, determines []*house.Determination, detTx []dag.ID, err error) {
	mem := NewMembers(x)
	for _, en := range x.Entries {
		env, _, _, err := dag.DecodeEnvelope(en.Object)
		if err != nil {
			return nil, nil, nil, err
		}
		switch env.Type {
		case dag.TxBallotCast:
			bb, err := rules.DecodeBallotBody(env.Body)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("ballot %s: %v", en.Tx, err)
			}
			if bb.MR != x.MR {
				return nil, nil, nil, fmt.Errorf("ballot %s is on MR %s, not %s", en.Tx, bb.MR, x.MR)
			}
			all = append(all, rules.Ballot{Tx: en.Tx, Author: mem.Of(env.Author, en.Inclusion.LeafIndex), BallotBody: bb})
		case dag.TxMRDetermine:
			d, err := house.DecodeDetermination(env.Body)
			if err != nil {
				return nil, nil, nil, fmt.Errorf("determination %s: %v", en.Tx, err)
			}
			if d.MR != x.MR {
				return nil, nil, nil, fmt.Errorf("determination %s is of MR %s, not %s", en.Tx, d.MR, x.MR)
			}
			determines, detTx = append(determines, d), append(detTx, en.Tx)
		}
	}
	return all, determines, detTx, nil
}

func (x *MR) rulesContext() rules.Context {
	return rules.Context{Facts: rules.Facts{Emergency: x.Facts.Emergency, Reverts: x.Facts.Reverts, StructureFailed: x.Facts.StructureFailed}}
}

// SetTally states x's live tally: rules.Evaluate over every ballot entry
// of x, as a stranger computes it (the node serving x calls it; Recompute
// checks it).
func (x *MR) SetTally(body *house.MR) error {
	all, _, _, err := extractBallots(x)
	if err != nil {
		return err
	}
	x.Tally, err = liveTally(x, body, all)
	return err
}

// liveTally is the tally over all, every ballot of x (extractBallots).
func liveTally(x *MR, body *house.MR, all []rules.Ballot) (Tally, error) {
	res, err := rules.Evaluate(body.Rule, x.Electorate, x.MR, all, x.rulesContext())
	if err != nil {
		return Tally{}, err
	}
	return Tally{Finality: checkpoint.Provisional, IfClosed: res.IfClosed, Tally: res.Tally}, nil
}

// AppendEntry appends e's canonical JSON: its members in code-point order,
// the envelope already canonical, every other string an ASCII id or
// number that JCS leaves as it is — so no JCS pass per entry (at S11
// scale that pass was half the cost of serving).
func AppendEntry(b []byte, e LogEntry) []byte {
	b = append(b, `{"inclusion":{"inclusion_path":[`...)
	for i, h := range e.Inclusion.InclusionPath {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, h.String()...)
		b = append(b, '"')
	}
	b = append(b, `],"leaf_index":`...)
	b = strconv.AppendUint(b, e.Inclusion.LeafIndex, 10)
	b = append(b, `,"tree_size":`...)
	b = strconv.AppendUint(b, e.Inclusion.TreeSize, 10)
	b = append(b, `},"object":`...)
	b = append(b, e.Object...)
	b = append(b, `,"tx":"`...)
	b = append(b, e.Tx.String()...)
	return append(b, `"}`...)
}

// Recompute checks every stated determination of x against
// rules.Evaluate over exactly its listed ballots as the extract holds them
// (its entries' envelopes), and the stated live tally over all of them.
func (x *MR) Recompute(body *house.MR) error {
	all, determines, detTx, err := extractBallots(x)
	if err != nil {
		return err
	}
	ballots := make(map[dag.ID]rules.Ballot, len(all))
	for _, b := range all {
		ballots[b.Tx] = b
	}
	same := func(what string, a, b any) error {
		ab, err1 := dag.Marshal(a)
		bb, err2 := dag.Marshal(b)
		if err := errors.Join(err1, err2); err != nil {
			return err
		}
		if !bytes.Equal(ab, bb) {
			return fmt.Errorf("%s: the extract states %s, its ballots give %s", what, ab, bb)
		}
		return nil
	}
	live, err := liveTally(x, body, all)
	if err != nil {
		return err
	}
	if err := same("tally", x.Tally, live); err != nil {
		return err
	}
	if len(x.Determinations) != len(determines) {
		return fmt.Errorf("%d determinations stated for %d mr.determine entries", len(x.Determinations), len(determines))
	}
	decided := false
	for i, d := range determines {
		var listed []rules.Ballot
		for _, b := range d.Ballots {
			lb, ok := ballots[b]
			if !ok {
				return fmt.Errorf("determination %s lists ballot %s, which the extract does not hold", detTx[i], b)
			}
			listed = append(listed, lb)
		}
		r, err := rules.Evaluate(body.Rule, x.Electorate, x.MR, listed, x.rulesContext())
		if err != nil {
			return err
		}
		if err := same("determination "+detTx[i].String(), x.Determinations[i],
			Determination{IfClosed: r.IfClosed, Outcome: d.Outcome, Tally: r.Tally, Tx: detTx[i]}); err != nil {
			return err
		}
		decided = decided || (r.IfClosed == d.Outcome && d.Outcome != rules.Pending)
	}
	if x.Finality == checkpoint.FinalAdvisory && !decided {
		return fmt.Errorf("final_advisory, but no determination in the extract is borne out by its ballots")
	}
	return nil
}

// VerifyMR checks an MR extract offline (see the file comment). pin,
// if valid, is the node key the checkpoint must be signed by; witnesses
// must each have co-signed it.
func VerifyMR(b []byte, pin dag.Key, witnesses []dag.Key) (*MR, checkpoint.Checkpoint, error) {
	fail := func(format string, args ...any) (*MR, checkpoint.Checkpoint, error) {
		return nil, checkpoint.Checkpoint{}, fmt.Errorf("extract: "+format, args...)
	}
	var x MR
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return fail("not an MR extract: %v", err)
	}
	if dec.More() {
		return fail("trailing data")
	}
	again, err := dag.Marshal(x)
	if err != nil || !bytes.Equal(again, b) {
		return fail("not in canonical form (JCS, no other member): the file was changed or is not an extract")
	}
	if x.Kind != "mr" || x.Authoritative || (x.Finality != checkpoint.Provisional && x.Finality != checkpoint.FinalAdvisory) || x.Tally.Finality != checkpoint.Provisional {
		return fail("kind %q, authoritative %v, finality %q, tally finality %q: not what an MR extract says", x.Kind, x.Authoritative, x.Finality, x.Tally.Finality)
	}
	// The MR object: its hash is the MR id.
	if canon, err := dag.Canonicalize(x.Object); err != nil || !bytes.Equal(canon, x.Object) || dag.Sum(x.Object) != x.MR {
		return fail("object is not the canonical MR object whose hash is %s", x.MR)
	}
	body, err := house.DecodeMR(x.Object)
	if err != nil {
		return fail("object: %v", err)
	}
	if body.Session.String() != x.Session {
		return fail("the MR is of session %s, the extract says %s", body.Session, x.Session)
	}
	rule, err := rules.Compile(body.Rule)
	if err != nil {
		return fail("the MR's rule: %v", err)
	}
	approvers, isApprovers := rule.Approvers()
	if body.Emergency != x.Facts.Emergency {
		return fail("facts.emergency %v, the MR says %v", x.Facts.Emergency, body.Emergency)
	}
	// The electorate: sorted, distinct, and the MR's snapshot.
	for i := 1; i < len(x.Electorate); i++ {
		if x.Electorate[i-1].String() >= x.Electorate[i].String() {
			return fail("electorate is not sorted without repeats")
		}
	}
	el, err := rules.NewElectorate(x.Electorate)
	if err != nil {
		return fail("electorate: %v", err)
	}
	if !isApprovers && el.Snapshot() != body.Snapshot {
		return fail("electorate's snapshot is %s, the MR's electorate.snapshot is %s", el.Snapshot(), body.Snapshot)
	}
	cp, err := verifyCheckpoint(x.Checkpoint, x.Cosigned, x.Session, pin, witnesses)
	if err != nil {
		return fail("%v", err)
	}
	// Every entry: a signed envelope of the session, of the MR, in the
	// checkpoint, in log order.
	opens := 0
	roots := []string{string(x.Object)}
	envs := make([]*dag.Envelope, len(x.Entries))
	for i, en := range x.Entries {
		env, canon, id, err := dag.DecodeEnvelope(en.Object)
		if err != nil {
			return fail("entry %d: %v", i, err)
		}
		if !bytes.Equal(canon, en.Object) || id != en.Tx {
			return fail("entry %d is not the canonical envelope of tx %s", i, en.Tx)
		}
		if env.Session.String() != x.Session {
			return fail("entry %d (%s) is of session %s", i, en.Tx, env.Session)
		}
		if i > 0 && en.Inclusion.LeafIndex <= x.Entries[i-1].Inclusion.LeafIndex {
			return fail("entries are not in increasing log order without repeats")
		}
		p := checkpoint.InclusionProof{Tx: en.Tx, LeafIndex: en.Inclusion.LeafIndex, TreeSize: en.Inclusion.TreeSize, InclusionPath: en.Inclusion.InclusionPath, Root: cp.Root}
		if p.TreeSize != cp.Size {
			return fail("entry %d: inclusion is against size %d, the checkpoint's is %d", i, p.TreeSize, cp.Size)
		}
		if err := p.Verify(); err != nil {
			return fail("entry %d: %v", i, err)
		}
		switch env.Type {
		case dag.TxMROpen:
			if !bytes.Equal(env.Body, x.Object) {
				return fail("entry %d (%s) opens another MR", i, en.Tx)
			}
			opens++
		case dag.TxBallotCast, dag.TxMRDetermine: // checked with the tallies
		case dag.TxKeyRotate: // D62: signed by the new key, co-signed
			r, err := house.DecodeKeyRotate(env.Body)
			if err != nil {
				return fail("entry %d (%s): %v", i, en.Tx, err)
			}
			if env.Author != r.New || r.Cosig.Key == r.New || !dag.Verify(r.Cosig.Key, house.DomainCosig, r.CosigBytes(), r.Cosig.Sig) {
				return fail("entry %d (%s): a key.rotate not signed by its new key or without a valid cosig", i, en.Tx)
			}
		case dag.TxGroupCreate, dag.TxGroupUpdate: // the approvers: checked below
			if !isApprovers {
				return fail("entry %d (%s) is a %s, and the MR has no approvers group", i, en.Tx, env.Type)
			}
			roots = append(roots, string(env.Body))
		default:
			return fail("entry %d (%s) is a %s, not an mr.open, ballot.cast or mr.determine", i, en.Tx, env.Type)
		}
		envs[i] = env
	}
	if opens == 0 {
		return fail("no mr.open of the MR")
	}
	// Signatures last: they cost the most, and whatever else was changed
	// has failed by now.
	for i, en := range x.Entries {
		if err := envs[i].VerifySignature(); err != nil {
			return fail("entry %d (%s): signature: %v", i, en.Tx, err)
		}
	}
	if err := verifySupporting(roots, x.Supporting, true); err != nil {
		return fail("%v", err)
	}
	if isApprovers {
		gid, err := house.ParseGroupRef(approvers.Group)
		if err != nil {
			return fail("the MR's approvers: %v", err)
		}
		pinned, err := x.ApproversElectorate(gid)
		if err != nil {
			return fail("%v", err)
		}
		if !slices.Equal(pinned, x.Electorate) {
			return fail("electorate is not the approvers group %q that its group entries define", gid)
		}
	}
	if err := x.Recompute(body); err != nil {
		return fail("%v", err)
	}
	return &x, cp, nil
}

// ApproversElectorate is the approvers group gid as x's group.create and
// group.update entries define it: the members every one of them names
// (house: concurrent maximal writes apply their intersection), sorted.
// Each must be of group gid, its object in the entry (group.create) or in
// supporting (group.update), and before an mr.open of x in the log (each
// open's own writes are in its causal past; concurrent opens under
// different writes agree on the intersection of them all).
// That they are all of the group's maximal writes in the open's causal
// past is the node's word: a log proves what is in it, not what is not
// (docs/deviations.md).
func (x *MR) ApproversElectorate(gid string) ([]dag.Key, error) {
	lastOpen := uint64(0)
	for _, en := range x.Entries {
		if env, _, _, err := dag.DecodeEnvelope(en.Object); err == nil && env.Type == dag.TxMROpen {
			lastOpen = en.Inclusion.LeafIndex
		}
	}
	supporting := map[dag.ID][]byte{}
	for _, raw := range x.Supporting {
		if obj, err := dag.AttachmentObject(raw); err == nil {
			supporting[dag.Sum(obj)] = obj
		}
	}
	var members []dag.Key
	writes := 0
	for _, en := range x.Entries {
		env, _, _, err := dag.DecodeEnvelope(en.Object)
		if err != nil {
			return nil, err
		}
		var obj []byte
		switch env.Type {
		case dag.TxGroupCreate:
			obj = env.Body
		case dag.TxGroupUpdate:
			ref, err := house.DecodeObjectRef(env.Body, "group")
			if err != nil {
				return nil, fmt.Errorf("group.update %s: %v", en.Tx, err)
			}
			if obj = supporting[ref.ID]; obj == nil {
				return nil, fmt.Errorf("group.update %s: its group object %s is not in supporting", en.Tx, ref.ID)
			}
		default:
			continue
		}
		if en.Inclusion.LeafIndex >= lastOpen {
			return nil, fmt.Errorf("%s %s is not before an mr.open of the MR in the log", env.Type, en.Tx)
		}
		g, err := house.DecodeGroup(obj)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %v", env.Type, en.Tx, err)
		}
		if g.ID != gid {
			return nil, fmt.Errorf("%s %s is of group %q, the approvers are %q", env.Type, en.Tx, g.ID, gid)
		}
		ks := sortedKeys(g.Members)
		if writes == 0 {
			members = ks
		} else {
			in := make(map[dag.Key]bool, len(ks))
			for _, k := range ks {
				in[k] = true
			}
			members = slices.DeleteFunc(members, func(k dag.Key) bool { return !in[k] })
		}
		writes++
	}
	if writes == 0 {
		return nil, fmt.Errorf("no group.create or group.update of the approvers group %q", gid)
	}
	return slices.Compact(members), nil
}

// Members maps the signers of an extract's ballots to the members they
// count for (§7 (a), D62): the electorate, and the extract's key.rotate
// entries by log position.
type Members struct {
	el   map[dag.Key]bool
	rots []extractRotation // in log order
}

type extractRotation struct {
	leaf        uint64
	member, new dag.Key
}

// NewMembers indexes x's electorate and key rotations, once per extract.
func NewMembers(x *MR) Members {
	m := Members{el: make(map[dag.Key]bool, len(x.Electorate))}
	for _, k := range x.Electorate {
		m.el[k] = true
	}
	for _, en := range x.Entries {
		env, _, _, err := dag.DecodeEnvelope(en.Object)
		if err != nil || env.Type != dag.TxKeyRotate {
			continue
		}
		if r, err := house.DecodeKeyRotate(env.Body); err == nil {
			m.rots = append(m.rots, extractRotation{en.Inclusion.LeafIndex, r.Member, r.New})
		}
	}
	return m
}

// Of is the member a ballot signed by signer at log position leaf counts
// for: signer itself when it is in the electorate, else the member that
// the extract's rotations, each before the ballot in the log, rotated to
// it (following rotations of rotated-in keys). The node counts by a
// rotation in the ballot's causal past; the file shows a log position
// before it (an ancestor always has one).
func (m Members) Of(signer dag.Key, leaf uint64) dag.Key {
	member := signer
	for n := 0; !m.el[member] && n < len(m.rots); n++ {
		i := slices.IndexFunc(m.rots, func(r extractRotation) bool { return r.new == member && r.leaf < leaf })
		if i < 0 {
			break
		}
		member = m.rots[i].member
	}
	if !m.el[member] {
		return signer // not in the electorate: §7 (b) is rules.Evaluate's
	}
	return member
}
