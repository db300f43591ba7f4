package content

import (
	"os"

	"github.com/mfm-project/mfm/episodes"
)

// NowNames are the names /now/ may hold, in listing order.
func NowNames() []string {
	return []string{episodes.NowStateName, episodes.NowFrameName}
}

// NowExists reports (as a nil error) whether /now/<name> has content:
// state.json when the store has a latest state (episodes.FindLatestState),
// frame.png when it has a latest frame (episodes.LatestFramePath). A name
// with no content, or not a /now/ name, returns an error wrapping
// os.ErrNotExist.
func NowExists(s *episodes.Store, name string) error {
	switch name {
	case episodes.NowStateName:
		_, err := episodes.FindLatestState(s)
		return err
	case episodes.NowFrameName:
		_, err := episodes.LatestFramePath(s)
		return err
	}
	return os.ErrNotExist
}

// NowState returns /now/state.json: the store's latest state in
// state.json's form (the harness's now/state.json, else the last
// episode's end state or start state, by episodes.FindLatestState).
func NowState(s *episodes.Store) ([]byte, error) {
	l, err := episodes.FindLatestState(s)
	if err != nil {
		return nil, err
	}
	return l.StateFile()
}

// NowFramePath returns the store file /now/frame.png shows
// (episodes.LatestFramePath).
func NowFramePath(s *episodes.Store) (string, error) {
	return episodes.LatestFramePath(s)
}
