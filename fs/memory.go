package fs

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// After a burst of renders or queries the Go runtime keeps the freed
// heap for reuse, returning it to the system only slowly: a daemon that
// rendered a thousand large views stays hundreds of MiB above its live
// heap for minutes (bench/memory.md). releaseIdleMemory gives it back
// once the burst is over.

var (
	// releaseEvery is how often the mount looks at the runtime's free
	// memory (tests shorten it).
	releaseEvery = 10 * time.Second
	// releaseAbove is the free heap, not yet returned to the system,
	// past which an idle daemon returns it.
	releaseAbove uint64 = 64 << 20
)

// releaseIdleMemory looks every interval and returns the free heap to
// the system (a collection, then debug.FreeOSMemory) when more than
// above is free and at most one collection ran since the last look (a
// busy daemon runs several per interval; background work, such as the
// cue index merging its segments, may run one), that is when the daemon
// is idle after a burst. It runs until stop is closed. The mount passes
// releaseEvery and releaseAbove (read when it starts, so a test changing
// them does not race a mount still running).
func releaseIdleMemory(stop <-chan struct{}, every time.Duration, above uint64, log *slog.Logger) {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	var lastCycles uint64
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		metrics.Read(samples)
		free, cycles := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		idle := cycles <= lastCycles+1
		lastCycles = cycles
		if idle && free > above {
			debug.FreeOSMemory()
			metrics.Read(samples)
			lastCycles = samples[1].Value.Uint64()
			log.Debug("mount: returned free memory to the system", slog.Uint64("free_bytes", free))
		}
	}
}
