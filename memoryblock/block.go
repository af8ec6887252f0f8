package memoryblock

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/witan-dev/witan/dag"
)

// Block is one CAT7 memory block: seven fields and the hash it claims.
//
// Every field has a Presence, so a Block tells an omitted field from a null
// one and from an empty one. The zero Block has every field omitted and
// claims no hash. Blocks are comparable with ==; two blocks are equal when
// every field and the claimed hash are.
//
// Hash is what the block says its hash is (the "hash" key on the wire). It
// is a claim: ID computes the real hash, VerifyBlock compares the two, and
// Seal sets Hash to ID.
type Block struct {
	Origin     Value
	Subject    Value
	Body       Value
	Evidence   Value
	Confidence Value
	ObservedAt Value
	Lineage    Parents
	Hash       dag.ID
}

// HashDomain is the first element of every block's canonical form. It
// separates block hashes from the hash of any other JSON witan names (30k
// objects are JSON objects; a block's canonical form is an array that starts
// with this string).
const HashDomain = "witan/cat7/v1"

// MaxBlockSize bounds the encoded size of one block, on the wire or in its
// canonical form.
const MaxBlockSize = 1 << 20

// hashKey is the wire key of the claimed hash; it is not a field.
const hashKey = "hash"

// Get returns the value of field f (lineage as its JSON array), or an *Error
// with code FIELD_NOT_A_FIELD when f is not one of the seven.
func (b Block) Get(f Field) (Value, error) {
	i := f.index()
	if i < 0 {
		_, err := ParseField(string(f))
		return Value{}, err
	}
	return b.values()[i], nil
}

// values returns the seven fields in hash order.
func (b Block) values() [numFields]Value {
	return [numFields]Value{b.Origin, b.Subject, b.Body, b.Evidence, b.Confidence, b.ObservedAt, b.Lineage.Value()}
}

// Canonical returns the bytes the block hash is the SHA-256 of:
//
//	["witan/cat7/v1",S(origin),S(subject),S(body),S(evidence),S(confidence),S(observed_at),S(lineage)]
//
// in RFC 8785 form, where S(f) is [] when f is omitted and [v] when it has
// the value v (null included). The fields appear in CAT7 order, never in key
// order, and omitted, null and empty have three distinct encodings. The
// claimed Hash is not part of it. docs/memory-blocks.md has vectors.
func (b Block) Canonical() []byte { return b.AppendCanonical(nil) }

// AppendCanonical appends Canonical to dst.
func (b Block) AppendCanonical(dst []byte) []byte {
	dst = append(dst, `["`+HashDomain+`"`...)
	for _, v := range [...]Value{b.Origin, b.Subject, b.Body, b.Evidence, b.Confidence, b.ObservedAt} {
		dst = appendSlot(dst, v)
	}
	// lineage is written straight from the digests, without building a Value
	switch b.Lineage.presence {
	case Omitted:
		dst = append(dst, ",[]"...)
	case Null:
		dst = append(dst, ",[null]"...)
	default:
		dst = append(dst, ",["...)
		dst = b.Lineage.appendJSON(dst)
		dst = append(dst, ']')
	}
	return append(dst, ']')
}

func appendSlot(dst []byte, v Value) []byte {
	if v.presence == Omitted {
		return append(dst, ",[]"...)
	}
	dst = append(dst, ",["...)
	dst = append(dst, v.json...)
	return append(dst, ']')
}

// BlockHash returns the hash of b's seven fields: the SHA-256 of
// b.Canonical(), as a dag.ID. It ignores b.Hash. It is the block's id as a
// DAG entry.
func BlockHash(b Block) dag.ID {
	var buf [512]byte
	return dag.Sum(b.AppendCanonical(buf[:0]))
}

// ID is BlockHash(b): the block's id in the DAG, computed, never taken from
// the claim in b.Hash.
func (b Block) ID() dag.ID { return BlockHash(b) }

// Parents returns the ids the block descends from: its DAG parents. It is
// nil for an omitted or null lineage and empty for a root.
func (b Block) Parents() []dag.ID { return b.Lineage.IDs() }

// Seal returns b with Hash set to BlockHash(b). Writers seal a block once
// its fields are final; any later change makes VerifyBlock fail.
func (b Block) Seal() Block {
	b.Hash = BlockHash(b)
	return b
}

// VerifyBlock checks that b carries a hash and that it is the hash of b's
// seven fields. Otherwise it returns an *Error with code
// BLOCK_HASH_MISMATCH: a block that claims no hash cannot be verified
// either.
func VerifyBlock(b Block) error {
	if !b.Hash.Valid() {
		return errorf(CodeBlockHashMismatch, "", "block carries no hash")
	}
	if got := BlockHash(b); got != b.Hash {
		return errorf(CodeBlockHashMismatch, "", "block claims %s but its fields hash to %s", b.Hash, got)
	}
	return nil
}

// Encode returns the block's wire form: an RFC 8785 JSON object with one key
// per field that is not omitted, and "hash" when the block claims one.
// Decode(b.Encode()) == b.
func (b Block) Encode() []byte {
	// RFC 8785 member order: body, confidence, evidence, hash, lineage,
	// observed_at, origin, subject.
	dst := make([]byte, 0, 256)
	dst = append(dst, '{')
	first := true
	member := func(k string, v []byte) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, k...)
		dst = append(dst, `":`...)
		dst = append(dst, v...)
	}
	value := func(f Field, v Value) {
		if v.presence != Omitted {
			member(string(f), []byte(v.json))
		}
	}
	value(Body, b.Body)
	value(Confidence, b.Confidence)
	value(Evidence, b.Evidence)
	if b.Hash.Valid() {
		member(hashKey, []byte(`"`+b.Hash.String()+`"`))
	}
	value(Lineage, b.Lineage.Value())
	value(ObservedAt, b.ObservedAt)
	value(Origin, b.Origin)
	value(Subject, b.Subject)
	return append(dst, '}')
}

// MarshalJSON implements json.Marshaler with Encode.
func (b Block) MarshalJSON() ([]byte, error) { return b.Encode(), nil }

// UnmarshalJSON implements json.Unmarshaler with Decode.
func (b *Block) UnmarshalJSON(data []byte) error {
	d, err := Decode(data)
	if err != nil {
		return err
	}
	*b = d
	return nil
}

// Decode reads a block in wire form from untrusted bytes, which need not be
// canonical. The errors are *Error values:
//
//   - BLOCK_UNKNOWN_FIELD when the object has a key that is neither one of
//     the seven fields nor "hash" (checked before anything else about the
//     values, so a block written with some other set of names is refused as
//     such);
//   - BLOCK_MALFORMED for anything else: more than MaxBlockSize bytes, not
//     one JSON object, duplicate keys, text that is not NFC, a number that is
//     not a safe integer, nesting deeper than dag.MaxDepth, a lineage that is
//     not null or an array of distinct ids, a hash that is not an id.
//
// Decode does not verify the hash: call VerifyBlock (AcceptBlock does).
func Decode(data []byte) (Block, error) {
	if len(data) > MaxBlockSize {
		return Block{}, errorf(CodeBlockMalformed, "", "block is %d bytes, more than %d", len(data), MaxBlockSize)
	}
	// First any JSON at all (RFC 8785 without witan's profile), so that the
	// keys can be judged before the values.
	loose, err := dag.CanonicalizeRFC8785(data)
	if err != nil {
		return Block{}, &Error{Code: CodeBlockMalformed, Detail: err.Error(), Err: err}
	}
	if len(loose) == 0 || loose[0] != '{' {
		return Block{}, errorf(CodeBlockMalformed, "", "block is not a JSON object")
	}
	members := objectMembers(loose)
	for _, m := range members {
		if k := string(m.rawKey); k != hashKey && !Field(k).Valid() {
			var name string
			if json.Unmarshal(append(append([]byte{'"'}, m.rawKey...), '"'), &name) != nil {
				name = k // unreachable: the key passed the scanner
			}
			return Block{}, errorf(CodeBlockUnknownField, Field(name), "key %s is not one of the seven CAT7 fields", quote(name))
		}
	}
	strict, err := dag.Canonicalize(loose)
	if err != nil {
		return Block{}, &Error{Code: CodeBlockMalformed, Detail: err.Error(), Err: err}
	}
	if !bytes.Equal(strict, loose) {
		// Not expected (the two profiles write integers and text alike), but
		// the members must come from the strict form.
		members = objectMembers(strict)
	}
	// Every member's bytes are canonical as they stand. A key with an
	// escape is never a field name, so the raw keys are the names.
	var b Block
	for _, m := range members {
		raw := m.value
		switch k := string(m.rawKey); k {
		case hashKey:
			if raw[0] != '"' {
				return Block{}, errorf(CodeBlockMalformed, "", "hash is not a string")
			}
			id, err := dag.ParseID(string(raw[1 : len(raw)-1]))
			if err != nil {
				return Block{}, &Error{Code: CodeBlockMalformed, Detail: "hash: " + err.Error(), Err: err}
			}
			b.Hash = id
		case string(Lineage):
			p, err := parseParents(raw)
			if err != nil {
				return Block{}, err
			}
			b.Lineage = p
		default:
			*b.field(Field(k)) = valueOfCanonical(string(raw))
		}
	}
	return b, nil
}

// field returns a pointer to the Value of f, which must be a field other
// than lineage.
func (b *Block) field(f Field) *Value {
	switch f {
	case Origin:
		return &b.Origin
	case Subject:
		return &b.Subject
	case Body:
		return &b.Body
	case Evidence:
		return &b.Evidence
	case Confidence:
		return &b.Confidence
	case ObservedAt:
		return &b.ObservedAt
	}
	panic("memoryblock: no value field " + string(f))
}

// parseParents reads a lineage from canonical JSON.
func parseParents(raw []byte) (Parents, error) {
	if string(raw) == "null" {
		return NullParents(), nil
	}
	if len(raw) == 0 || raw[0] != '[' {
		return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage is neither null nor an array of ids")
	}
	elems := arrayElements(raw)
	if len(elems) > MaxParents {
		return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage names %d parents, more than %d", len(elems), MaxParents)
	}
	ids := make([]dag.ID, len(elems))
	for i, e := range elems {
		if e[0] != '"' {
			return Parents{}, errorf(CodeBlockMalformed, Lineage, "lineage[%d] is not an id string", i)
		}
		// an id has no escapes, so the raw text between the quotes is it
		id, err := dag.ParseID(string(e[1 : len(e)-1]))
		if err != nil {
			return Parents{}, &Error{Code: CodeBlockMalformed, Field: Lineage, Detail: fmt.Sprintf("lineage[%d]: %v", i, err), Err: err}
		}
		ids[i] = id
	}
	return ParentsOf(ids...)
}

// DecodeCanonical reads a block from its canonical form (Canonical), the
// bytes its hash is taken over: a store can keep a block as exactly the
// bytes that name it. The input must already be canonical, byte for byte;
// anything else is an *Error with code BLOCK_MALFORMED. The block's Hash is
// set to the SHA-256 of data, so it verifies by construction.
func DecodeCanonical(data []byte) (Block, error) {
	if len(data) > MaxBlockSize {
		return Block{}, errorf(CodeBlockMalformed, "", "block is %d bytes, more than %d", len(data), MaxBlockSize)
	}
	if !dag.IsCanonical(data) {
		if _, err := dag.Canonicalize(data); err != nil {
			return Block{}, &Error{Code: CodeBlockMalformed, Detail: err.Error(), Err: err}
		}
		return Block{}, errorf(CodeBlockMalformed, "", "canonical form expected, got other JSON")
	}
	var elems [][]byte
	if data[0] == '[' {
		elems = arrayElements(data)
	}
	if len(elems) != 1+numFields {
		return Block{}, errorf(CodeBlockMalformed, "", "canonical form is an array of the domain and seven slots")
	}
	if string(elems[0]) != `"`+HashDomain+`"` {
		return Block{}, errorf(CodeBlockMalformed, "", "canonical form does not start with %q", HashDomain)
	}
	var b Block
	for i, f := range fields {
		var slot [][]byte
		raw := elems[1+i]
		if raw[0] == '[' {
			slot = arrayElements(raw)
		}
		if raw[0] != '[' || len(slot) > 1 {
			return Block{}, errorf(CodeBlockMalformed, f, "slot of %s is not [] or [value]", f)
		}
		if len(slot) == 0 {
			continue // omitted
		}
		if f == Lineage {
			p, err := parseParents(slot[0])
			if err != nil {
				return Block{}, err
			}
			b.Lineage = p
			continue
		}
		*b.field(f) = valueOfCanonical(string(slot[0]))
	}
	b.Hash = dag.Sum(data)
	return b, nil
}
