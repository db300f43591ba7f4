package luanti

import (
	"fmt"
	"sort"

	"github.com/mfm-project/mfm/harness"
)

// commandWait is how many ticks an atom waits for a command's result.
const commandWait = 50

// awaitCommand is the part of an atom that sends one command to the state
// mod and waits for its result event.
type awaitCommand struct {
	g      *Game
	name   string
	fields map[string]any
	id     int64
	sentAt int
	err    error
	done   bool
	result Event
}

// step sends the command on the first call and then looks for its result
// among the tick's events; it reports done when the result arrived (or
// sending failed, or it waited too long: err is then set).
func (a *awaitCommand) step(i int, s Raw) bool {
	if a.done {
		return true
	}
	if a.id == 0 && a.err == nil {
		a.id, a.err = a.g.Command(a.name, a.fields)
		a.sentAt = i
		if a.err != nil {
			a.done = true
			return true
		}
		return false
	}
	for _, e := range s.Events {
		if e.Type == "cmd" && int64(e.ID) == a.id {
			a.result, a.done = e, true
			return true
		}
	}
	if i-a.sentAt > commandWait {
		a.err = fmt.Errorf("no result from the game for command %s in %d ticks", a.name, commandWait)
		a.done = true
	}
	return a.done
}

// failNote is the note of a command that did not succeed.
func (a *awaitCommand) failNote() string {
	if a.err != nil {
		return a.err.Error()
	}
	return a.result.Note
}

// Command sends one command to the state mod as an atom and waits (up to
// 5 s) for its result in the logged state; the result's note is the
// atom's note, what the mod returned is in c.LastData. It is how tests set up a world (e.g. setnode); agents act
// through the other atoms.
func (c *Controller) Command(name string, fields map[string]any) (Result, error) {
	a := []harness.Arg{{Name: "cmd", Value: name}}
	for _, k := range sortedAnyKeys(fields) {
		a = append(a, harness.Arg{Name: k, Value: fields[k]})
	}
	w := &awaitCommand{g: c.G, name: name, fields: fields}
	return c.Run(harness.Call{Kind: "command", Args: a}, commandWait+5, func(i int, s Raw, _ []Event) (Input, bool, Result) {
		if !w.step(i, s) {
			return Input{}, false, Result{}
		}
		c.LastData = w.result.Data
		if w.err == nil && w.result.OK {
			return Input{}, true, Result{OK: true, Note: w.result.Note}
		}
		return Input{}, true, Result{Note: w.failNote()}
	})
}

func sortedAnyKeys(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}
