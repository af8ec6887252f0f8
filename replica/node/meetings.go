package node

// This file runs meetings on the node: the meeting service of package
// meeting over its own meetstore, the midnight forgetting, and the one
// door out of a meeting (publishing a note's Outcomes as a CAT7 block).

import (
	"context"
	"errors"
	"fmt"
	gosync "sync"
	"time"

	"github.com/witan-dev/witan/memoryblock"
	"github.com/witan-dev/witan/replica/meeting"
	"github.com/witan-dev/witan/sessions/meetstore"
)

// ErrNoMeetings is returned by Meetings on a node opened without
// Options.MeetingsDir.
var ErrNoMeetings = errors.New("node: this node runs no meetings (Options.MeetingsDir)")

type meetings struct {
	store *meetstore.Store
	svc   *meeting.Service
	stop  chan struct{}
	done  gosync.WaitGroup
}

func openMeetings(ctx context.Context, n *Node, dir string, clock meetstore.Clock) (*meetings, error) {
	st, err := meetstore.Open(ctx, dir, meetstore.Options{Clock: clock})
	if err != nil {
		return nil, fmt.Errorf("node: %w", err)
	}
	svc, err := meeting.New(meeting.Options{Store: st, Clock: clock, Publisher: publisher{n}})
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("node: %w", err)
	}
	m := &meetings{store: st, svc: svc, stop: make(chan struct{})}
	m.done.Add(1)
	go m.forgetAtMidnight(clock)
	return m, nil
}

// forgetAtMidnight runs the store's Forget just after every UTC midnight
// (§7.8). Reads never show a forgotten copy in any case; this destroys the
// keys.
func (m *meetings) forgetAtMidnight(clock meetstore.Clock) {
	defer m.done.Done()
	for {
		now := time.Now().UTC()
		if clock != nil {
			now = clock.Now().UTC()
		}
		next := now.Truncate(meetstore.Day).Add(meetstore.Day)
		wait := min(next.Sub(now)+time.Second, time.Hour) // re-read an injected clock hourly
		t := time.NewTimer(wait)
		select {
		case <-m.stop:
			t.Stop()
			return
		case <-t.C:
			m.store.Forget(context.Background()) // an error is retried within the hour
		}
	}
}

func (m *meetings) close() error {
	close(m.stop)
	m.done.Wait()
	return m.store.Close()
}

// Meetings returns the node's meeting service, or ErrNoMeetings.
func (n *Node) Meetings() (*meeting.Service, error) {
	if n.meet == nil {
		return nil, ErrNoMeetings
	}
	return n.meet.svc, nil
}

// ForgetMeetings runs the meeting store's forgetting now (it also runs
// after every UTC midnight by itself).
func (n *Node) ForgetMeetings(ctx context.Context) error {
	if n.meet == nil {
		return ErrNoMeetings
	}
	return n.meet.store.Forget(ctx)
}

// publisher puts a meeting's published Outcomes in a memory space as a
// root CAT7 block.
type publisher struct{ n *Node }

func (p publisher) PublishBlock(ctx context.Context, space, text string) (string, error) {
	body, err := memoryblock.Text(text)
	if err != nil {
		return "", &meeting.Error{Code: meeting.CodeBadRequest, Detail: err.Error()}
	}
	b := memoryblock.Block{Origin: memoryblock.MustText("witan:meeting"), Subject: memoryblock.MustText("meeting outcomes"),
		Body: body, Lineage: memoryblock.MustParents()}.Seal()
	id, err := p.n.PutBlock(ctx, space, b)
	if err != nil {
		var me *memoryblock.Error
		if errors.As(err, &me) || errors.Is(err, ErrBadSpaceName) {
			return "", &meeting.Error{Code: meeting.CodeBadRequest, Detail: err.Error()}
		}
		return "", err
	}
	return id.String(), nil
}
