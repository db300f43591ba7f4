package fs

import (
	"sync"
	"time"
)

type syncMutex = sync.Mutex

func newTicker(ms int) *time.Ticker { return time.NewTicker(time.Duration(ms) * time.Millisecond) }
