package fleet

import (
	"log/slog"
	"sync"
)

// outage logs when reads from the shared database start failing and when
// they work again, once each, not at every failed read.
type outage struct {
	what string // what is served meanwhile, for the log ("other agents' notes")
	log  *slog.Logger

	mu   sync.Mutex
	down bool
}

// report records how a read went.
func (o *outage) report(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err != nil && !o.down:
		o.down = true
		o.log.Warn("fleet: the shared database did not answer; "+o.what+" served as held", "err", err)
	case err == nil && o.down:
		o.down = false
		o.log.Info("fleet: the shared database answers again; " + o.what + " read again")
	}
}
