package badgerstore

// Badger's log lines, and the one kind of them that is not just a log
// line: Badger v4 reports a failed fsync of its value log through its
// logger (value.go: "Error while curlf sync") and still acknowledges the
// write. The store watches for it and fails the Put whose commit saw it,
// and every Put after (docs/storage.md, "Storage errors").

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// ErrSync is wrapped by every Put after Badger failed to make a write
// durable (an fsync failed): the store can no longer promise that what it
// acknowledges survives a crash. Reopen it (after fixing the device) to
// go on; what was acknowledged before the failure is kept.
var ErrSync = errors.New("badgerstore: a write could not be made durable")

// SlogLogger adapts l to Badger's logger: errors and warnings at their
// levels, info at Info, Badger's debug lines at Debug.
func SlogLogger(l *slog.Logger) badger.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return slogLogger{l}
}

type slogLogger struct{ l *slog.Logger }

func line(format string, args []any) string {
	return strings.TrimSpace(fmt.Sprintf(format, args...))
}

func (s slogLogger) Errorf(format string, args ...any) {
	s.l.Error("badger: " + line(format, args))
}
func (s slogLogger) Warningf(format string, args ...any) {
	s.l.Warn("badger: " + line(format, args))
}
func (s slogLogger) Infof(format string, args ...any) {
	s.l.Info("badger: " + line(format, args))
}
func (s slogLogger) Debugf(format string, args ...any) {
	if s.l.Enabled(context.Background(), slog.LevelDebug) {
		s.l.Debug("badger: " + line(format, args))
	}
}

// watcher passes Badger's lines on, remembers the first error line about
// a sync, and when a memtable flush last failed.
type watcher struct {
	next   badger.Logger // nil: discard
	failed atomic.Pointer[string]
	// flushFailed is the time (UnixNano) of Badger's last "error flushing
	// memtable" line, and flushErr that line; 0 and nil before any.
	flushFailed atomic.Int64
	flushErr    atomic.Pointer[string]
	// openFailed is the time (UnixNano) of Badger's line saying that its
	// Open failed and is cleaning up ("Received err: …. Cleaning up..."),
	// and openErr that line; 0 and nil before any.
	openFailed atomic.Int64
	openErr    atomic.Pointer[string]
}

func (w *watcher) Errorf(format string, args ...any) {
	msg := line(format, args)
	if strings.Contains(strings.ToLower(msg), "sync") {
		w.failed.CompareAndSwap(nil, &msg)
	}
	if strings.HasPrefix(msg, "error flushing memtable") {
		w.flushErr.Store(&msg)
		w.flushFailed.Store(time.Now().UnixNano())
	}
	if strings.HasPrefix(msg, "Received err:") && strings.Contains(msg, "Cleaning up") {
		w.openErr.Store(&msg)
		w.openFailed.Store(time.Now().UnixNano())
	}
	if w.next != nil {
		w.next.Errorf(format, args...)
	}
}

func (w *watcher) Warningf(format string, args ...any) {
	if w.next != nil {
		w.next.Warningf(format, args...)
	}
}

func (w *watcher) Infof(format string, args ...any) {
	if w.next != nil {
		w.next.Infof(format, args...)
	}
}

func (w *watcher) Debugf(format string, args ...any) {
	if w.next != nil {
		w.next.Debugf(format, args...)
	}
}

// openStuck returns Badger's failed Open when it said so more than after
// ago and is still cleaning up (the caller knows it is), nil otherwise.
func (w *watcher) openStuck(after time.Duration) error {
	if at := w.openFailed.Load(); at != 0 && time.Since(time.Unix(0, at)) >= after {
		if m := w.openErr.Load(); m != nil {
			return errors.New(strings.TrimSuffix(strings.TrimPrefix(*m, "Received err: "), ". Cleaning up..."))
		}
	}
	return nil
}

// flushStuck returns Badger's last failed memtable flush when a call begun
// at start has run after and a flush failed within the last 3 s (Badger
// retries it every second, for ever), nil otherwise.
func (w *watcher) flushStuck(start time.Time, after time.Duration) error {
	if time.Since(start) < after {
		return nil
	}
	if at := w.flushFailed.Load(); at != 0 && time.Since(time.Unix(0, at)) <= 3*time.Second {
		if m := w.flushErr.Load(); m != nil {
			return errors.New(*m)
		}
	}
	return nil
}

// syncFailure returns ErrSync with Badger's line once a sync failed.
func (w *watcher) syncFailure() error {
	if m := w.failed.Load(); m != nil {
		return fmt.Errorf("%w: %s", ErrSync, *m)
	}
	return nil
}
