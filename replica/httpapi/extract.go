package httpapi

// This file is GET /extract/{hash} (30k D45): an offline-verifiable
// evidence extract of one log entry, or of an MR for an MR id. Their form
// and their offline verifiers (witan verify-extract FILE) are
// replica/extract's; this file gathers what the node holds into one and
// checks it as a stranger will before serving it.

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/replica"
	"github.com/witan-dev/witan/replica/extract"
	"github.com/witan-dev/witan/replica/house"
)

func (s *Server) extract(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := dag.ParseID(r.PathValue("hash"))
	if err != nil {
		return problemf(dag.CodeSchema, "hash: %v", err)
	}
	e, err := s.n.Get(ctx, id)
	if err != nil {
		// Not a log entry: an MR id (extract_mr.go) of the session named,
		// or of whichever session holds it (an MR id names one session).
		spaces := s.rep.Sessions()
		if r.URL.Query().Get("session") != "" {
			space, serr := s.spaceOf(r)
			if serr != nil {
				return serr
			}
			spaces = []dag.ID{space}
		}
		for _, space := range spaces {
			if _, merr := s.view.MR(ctx, space, id); merr == nil {
				return s.mrExtract(w, r, space, id)
			}
		}
		return problemf(CodeNotFound, "%s is not a log entry or an MR of this node (extracts are served for tx ids and MR ids): %v", id, err)
	}
	session, _ := dag.ParseID(e.Space) // a memory space's entry: the zero ID, which has no checkpoint
	cp, ok := s.rep.LastCheckpoint(session)
	if !ok {
		return problemf(CodeNotFound, "%s is not in a checkpoint of this node yet", id)
	}
	// The checkpoint: the newest that witnesses co-signed and that holds
	// the entry, else the newest.
	var p replica.InclusionProof
	found := false
	for _, c := range s.rep.CosignedCheckpoints(session) {
		if q, err := s.rep.InclusionProof(ctx, session, id, c.Size); err == nil {
			cp, p, found = c, q, true
			break
		}
	}
	if !found {
		if p, err = s.rep.InclusionProof(ctx, session, id, cp.Size); err != nil {
			return problemf(CodeNotFound, "%s is not in a checkpoint of this node yet: %v", id, err)
		}
	}
	att, err := s.n.Attachments(ctx, e)
	if err != nil {
		return err
	}
	x := extract.Entry{Checkpoint: mustJSON(cp), Cosigned: s.rep.Cosignatures(cp), Finality: replica.FinalAdvisory,
		Inclusion: extract.Inclusion{LeafIndex: p.LeafIndex, TreeSize: p.TreeSize, InclusionPath: p.InclusionPath},
		Object:    e.Data, Session: e.Space, Simulation: s.labels(ctx, session).Simulation, Supporting: make([]json.RawMessage, len(att)), Tx: id}
	for i, a := range att {
		if x.Supporting[i], err = dag.AttachmentWire(a); err != nil {
			return err
		}
	}
	b, err := dag.Marshal(x)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// MaxExtractEntries bounds the entries of an MR extract by default
// (Options.MaxExtractEntries). An entry is 1.7 KB at a log of 11,000
// entries (BenchmarkMRExtractS11) and about 2.3 KB at S11's ~3.3M (an
// inclusion path of ~22 hashes), so the bound is about 90 MB; S11's
// largest MR (11,000 members, each superseding a ballot once) needs
// ~22,000 entries, ~50 MB.
const MaxExtractEntries = 40000

// HeaderPendingEntries is the response header of an MR extract that
// counts the MR's entries this node holds beyond the extract's checkpoint.
const HeaderPendingEntries = "Witan-Pending-Entries"

// CodeExtractTooLarge: the MR has more entries than MaxExtractEntries.
const CodeExtractTooLarge dag.Code = "witan:extract_too_large"

func (s *Server) mrExtract(w http.ResponseWriter, r *http.Request, space dag.ID, id dag.ID) error {
	ctx := r.Context()
	ev, err := s.view.MREvidence(ctx, space, id)
	if err != nil {
		return err
	}
	unsupported := func(format string, args ...any) error {
		return problemf(CodeNotImplemented, "MR %s: "+format+": its tally cannot be recomputed from an extract alone", append([]any{id}, args...)...)
	}
	approvers, isApprovers := ev.Poll.Rule.Approvers()
	cp, ok := s.rep.LastCheckpoint(space)
	if !ok || len(ev.Opens) == 0 {
		return problemf(CodeNotFound, "MR %s is not in a checkpoint of this node yet", id)
	}
	var rotations []house.RotationView // D62: loaded when a ballot needs one
	rotationsLoaded := false

	// The entries: opens, counted and listed ballots, determinations.
	authors := map[dag.ID]dag.Key{} // ballot → the member the node counts it for
	txs := slices.Clone(ev.Opens)
	if isApprovers { // the group writes that pin the approvers (D45)
		txs = append(txs, ev.Poll.ApproverWrites...)
	}
	for _, b := range ev.Poll.Ballots {
		authors[b.Tx] = b.Author
		txs = append(txs, b.Tx)
	}
	dets := map[dag.ID]house.DeterminationView{}
	for _, d := range ev.MR.Determinations {
		dets[d.Tx] = d
		txs = append(txs, d.Tx)
	}
	x := extract.MR{Checkpoint: mustJSON(cp), Cosigned: s.rep.Cosignatures(cp), Determinations: []extract.Determination{},
		Facts: extract.Facts{Emergency: ev.Poll.Facts.Emergency, Reverts: ev.Poll.Facts.Reverts, StructureFailed: ev.Poll.Facts.StructureFailed},
		Kind:  "mr", MR: id, Session: space.String(), Simulation: s.labels(ctx, space).Simulation, Supporting: []json.RawMessage{},
		Entries: []extract.LogEntry{}, Finality: ev.MR.Finality}
	pending := 0
	seen := map[dag.ID]bool{}
	envs := map[dag.ID]*dag.Envelope{}
	var attach [][]byte
	// The proofs in one batch (one lock, one root); a ballot a
	// determination lists that is not among them is proved on its own.
	slices.SortFunc(txs, dag.ID.Compare)
	txs = slices.Compact(txs)
	if len(txs) > s.o.MaxExtractEntries {
		return problemf(CodeExtractTooLarge, "MR %s has more than %d entries: too large for one extract", id, s.o.MaxExtractEntries)
	}
	batch, inCp, err := s.rep.InclusionProofs(ctx, space, txs, cp.Size)
	if err != nil {
		return err
	}
	proved := make(map[dag.ID]replica.InclusionProof, len(txs))
	for i, tx := range txs {
		if inCp[i] {
			proved[tx] = batch[i]
		}
	}
	for i := 0; i < len(txs); i++ {
		tx := txs[i]
		if seen[tx] {
			continue
		}
		seen[tx] = true
		if len(seen) > s.o.MaxExtractEntries {
			return problemf(CodeExtractTooLarge, "MR %s has more than %d entries: too large for one extract", id, s.o.MaxExtractEntries)
		}
		p, ok := proved[tx]
		if !ok {
			if i < len(batch) { // in the batch, and not in the checkpoint
				pending++
				continue
			}
			if p, err = s.rep.InclusionProof(ctx, space, tx, cp.Size); err != nil {
				pending++ // not in the checkpoint (yet)
				continue
			}
		}
		e, err := s.n.Get(ctx, tx)
		if err != nil {
			return err
		}
		env, _, _, err := dag.DecodeEnvelope(e.Data)
		if err != nil {
			return err
		}
		envs[tx] = env
		x.Entries = append(x.Entries, extract.LogEntry{Inclusion: extract.Inclusion{LeafIndex: p.LeafIndex, TreeSize: p.TreeSize, InclusionPath: p.InclusionPath},
			Object: e.Data, Tx: tx})
		switch env.Type {
		case dag.TxMROpen, dag.TxGroupUpdate: // its objects; a group update's group object
			if env.Type == dag.TxMROpen && x.Object == nil {
				x.Object = env.Body
			}
			att, err := s.n.Attachments(ctx, e)
			if err != nil {
				return err
			}
			attach = append(attach, att...)
		case dag.TxMRDetermine:
			d, err := house.DecodeDetermination(env.Body)
			if err != nil {
				return err
			}
			txs = append(txs, d.Ballots...) // listed ballots, in its causal past
		case dag.TxBallotCast: // counted for another member: the rotations to it (D62)
			member, ok := authors[tx]
			if !ok || member == env.Author {
				break
			}
			if !rotationsLoaded {
				st, _, err := s.rep.State(ctx, space)
				if err != nil {
					return err
				}
				rotations, rotationsLoaded = st.Rotations, true
			}
			for k, n := env.Author, 0; k != member && n <= len(rotations); n++ {
				i := slices.IndexFunc(rotations, func(r house.RotationView) bool { return r.New == k })
				if i < 0 {
					break // not reached: refused below
				}
				txs, k = append(txs, rotations[i].Tx), rotations[i].Member
			}
		}
	}
	slices.SortFunc(x.Entries, func(a, b extract.LogEntry) int { return cmp.Compare(a.Inclusion.LeafIndex, b.Inclusion.LeafIndex) })
	// The newest checkpoint that witnesses co-signed (largest first), when
	// it holds every entry the newest one does, so that -witness can be
	// required; none further down the list can hold them all if it does not.
	if n, cs := len(x.Entries), s.rep.CosignedCheckpoints(space); n > 0 && len(cs) > 0 {
		c := cs[0]
		newest := c.Size == cp.Size && c.Root == cp.Root && c.TS.Equal(cp.TS) // co-signed itself
		if !newest && c.Size > x.Entries[n-1].Inclusion.LeafIndex {
			etx := make([]dag.ID, n)
			for i, e := range x.Entries {
				etx[i] = e.Tx
			}
			ps, in, err := s.rep.InclusionProofs(ctx, space, etx, c.Size)
			if err != nil {
				return err
			}
			for i, e := range x.Entries {
				if !in[i] {
					return fmt.Errorf("httpapi: %s is not in checkpoint %d", e.Tx, c.Size)
				}
				p := ps[i]
				x.Entries[i].Inclusion = extract.Inclusion{LeafIndex: p.LeafIndex, TreeSize: p.TreeSize, InclusionPath: p.InclusionPath}
			}
			cp = c
			x.Checkpoint, x.Cosigned = mustJSON(cp), s.rep.Cosignatures(cp)
		}
	}
	if x.Object == nil {
		return problemf(CodeNotFound, "MR %s: no mr.open of it is in a checkpoint of this node yet", id)
	}
	slices.SortFunc(attach, func(a, b []byte) int { return dag.Sum(a).Compare(dag.Sum(b)) })
	attach = slices.CompactFunc(attach, func(a, b []byte) bool { return bytes.Equal(a, b) })
	for _, a := range attach {
		wire, err := dag.AttachmentWire(a)
		if err != nil {
			return err
		}
		x.Supporting = append(x.Supporting, wire)
	}
	body, err := house.DecodeMR(x.Object)
	if err != nil {
		return err
	}
	x.Electorate = ev.Poll.Electorate.Members() // a copy, sorted by string form
	if isApprovers {
		gid, err := house.ParseGroupRef(approvers.Group)
		if err != nil {
			return err
		}
		pinned, err := x.ApproversElectorate(gid)
		if err != nil {
			return err
		}
		if !slices.Equal(pinned, x.Electorate) {
			return unsupported("its approvers are not what the group writes it carries define")
		}
	} else if ev.Poll.Electorate.Snapshot() != body.Snapshot {
		return unsupported("its electorate narrowed under concurrent opens")
	}
	mem := extract.NewMembers(&x)
	// The determinations as the node derived them; the tally over every
	// ballot entry as a stranger will compute it. Then the whole is
	// checked as extract.VerifyMR will, so that what is served verifies.
	for _, en := range x.Entries {
		env := envs[en.Tx]
		switch env.Type {
		case dag.TxBallotCast:
			if a, ok := authors[en.Tx]; ok {
				if m := mem.Of(env.Author, en.Inclusion.LeafIndex); m != a {
					return unsupported("ballot %s is counted for %s but signed by %s, which the extract's key rotations do not map to it (a rotated key)", en.Tx, a, env.Author)
				}
			}
		case dag.TxMRDetermine:
			dv := dets[en.Tx]
			x.Determinations = append(x.Determinations, extract.Determination{IfClosed: dv.Evaluation.IfClosed, Outcome: dv.Outcome, Tally: dv.Evaluation.Tally, Tx: en.Tx})
		}
	}
	if err := x.SetTally(body); err != nil {
		return err
	}
	if err := x.Recompute(body); err != nil {
		return unsupported("%v", err)
	}
	// What is beyond the checkpoint cannot be checked offline, so it is
	// not in the extract (every byte of which is checked); a header says
	// how much there is.
	w.Header().Set(HeaderPendingEntries, strconv.Itoa(pending))
	return writeMRExtract(w, &x)
}

// writeMRExtract writes x's canonical JSON member by member (the members
// of extract.MR in code-point order, as JCS sorts them), each entry
// canonicalised on its own, so that a large MR is never held as one
// buffer.
func writeMRExtract(w http.ResponseWriter, x *extract.MR) error {
	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 64<<10)
	members := []struct {
		key string
		val any
	}{{"authoritative", x.Authoritative}, {"checkpoint", x.Checkpoint}, {"cosigned", x.Cosigned}, {"determinations", x.Determinations},
		{"electorate", x.Electorate}, {"entries", nil}, {"facts", x.Facts}, {"finality", x.Finality}, {"kind", x.Kind}, {"mr", x.MR},
		{"object", x.Object}, {"session", x.Session}, {"simulation", x.Simulation}, {"supporting", x.Supporting}, {"tally", x.Tally}}
	bw.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(`"` + m.key + `":`)
		if m.key == "entries" {
			bw.WriteByte('[')
			var buf []byte
			for j, e := range x.Entries {
				if j > 0 {
					bw.WriteByte(',')
				}
				buf = extract.AppendEntry(buf[:0], e)
				bw.Write(buf)
			}
			bw.WriteByte(']')
			continue
		}
		b, err := dag.Marshal(m.val)
		if err != nil {
			return err
		}
		bw.Write(b)
	}
	bw.WriteByte('}')
	return bw.Flush()
}
