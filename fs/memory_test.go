package fs

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// heapFree is the free heap the runtime has not returned to the system.
func heapFree() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestReleaseIdleMemory: after a burst the runtime keeps freed heap up
// to its next collection's goal (twice the live heap); releaseIdleMemory
// returns it once no collection has run for one of its intervals.
func TestReleaseIdleMemory(t *testing.T) {
	defer func(d time.Duration, a uint64) { releaseEvery, releaseAbove = d, a }(releaseEvery, releaseAbove)
	releaseEvery, releaseAbove = 50*time.Millisecond, 8<<20
	live := make([][]byte, 32)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	var burst [][]byte
	for i := 0; i < 32; i++ {
		burst = append(burst, make([]byte, 1<<20))
	}
	burst = nil
	runtime.GC() // the burst is free; the goal stays about twice the live heap
	before := heapFree()
	if before <= releaseAbove {
		t.Skipf("the runtime returned the burst itself (%d MiB free)", before>>20)
	}
	stop := make(chan struct{})
	defer close(stop)
	go releaseIdleMemory(stop, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(5 * time.Second)
	for heapFree() > releaseAbove && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f := heapFree(); f > releaseAbove {
		t.Errorf("%d MiB of free heap not returned after 5 s idle (%d MiB after the burst)", f>>20, before>>20)
	}
	runtime.KeepAlive(live)
}
