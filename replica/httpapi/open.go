package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/witan-dev/witan/dag"
	"github.com/witan-dev/witan/dag/badgerstore"
	"github.com/witan-dev/witan/replica"
)

// OpenOptions opens a node's store and replica in one call (OpenLocal).
type OpenOptions struct {
	// Dir is the Badger directory; InMemory keeps everything in memory.
	Dir      string
	InMemory bool
	// NodeKey signs receipts and checkpoints (required).
	NodeKey *dag.Signer
	// Clock gives checkpoint times; time.Now when nil.
	Clock  func() time.Time
	Logger *slog.Logger
}

// OpenLocal opens a Badger store, the replica on it, and their Local,
// which then owns both: Close closes the replica and then the store.
func OpenLocal(ctx context.Context, o OpenOptions) (*Local, error) {
	if o.Dir == "" && !o.InMemory {
		return nil, errors.New("httpapi: set OpenOptions.Dir or InMemory")
	}
	st, err := badgerstore.Open(o.Dir, badgerstore.Options{InMemory: o.InMemory})
	if err != nil {
		return nil, fmt.Errorf("httpapi: open store: %w", err)
	}
	rep, err := replica.Open(ctx, replica.Options{Store: st, NodeKey: o.NodeKey, Clock: o.Clock, Logger: o.Logger})
	if err != nil {
		st.Close()
		return nil, err
	}
	l := NewLocal(rep, st)
	l.owns = true
	return l, nil
}

// Close closes the replica and the store when OpenLocal opened them (once;
// later calls return the first result); a Local from NewLocal leaves them
// to its caller.
func (l *Local) Close() error {
	if !l.owns {
		return nil
	}
	l.closeOnce.Do(func() { l.closeErr = errors.Join(l.rep.Close(), l.store.Close()) })
	return l.closeErr
}
