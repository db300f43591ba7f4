package fs

import (
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
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
// to its next collection's goal; releaseIdleMemory returns it once no
// collection has run for one of its intervals.
func TestReleaseIdleMemory(t *testing.T) {
	defer func(d time.Duration, a uint64) { releaseEvery, releaseAbove = d, a }(releaseEvery, releaseAbove)
	releaseEvery, releaseAbove = 50*time.Millisecond, 8<<20
	// A high goal keeps the runtime's own scavenger from returning the
	// freed burst (it keeps about the goal's worth), so the memory is
	// there for releaseIdleMemory to return.
	defer debug.SetGCPercent(debug.SetGCPercent(1000))
	live := make([][]byte, 32)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	var burst [][]byte
	for i := 0; i < 32; i++ {
		burst = append(burst, make([]byte, 1<<20))
	}
	burst = nil
	runtime.GC() // the burst is free; the goal stays well above the live heap
	before := heapFree()
	if before <= releaseAbove {
		t.Fatalf("%d MiB free after a burst of 32 MiB, want more than %d MiB", before>>20, releaseAbove>>20)
	}
	stop := make(chan struct{})
	defer close(stop)
	go releaseIdleMemory(stop, releaseEvery, releaseAbove, slog.New(slog.NewTextHandler(io.Discard, nil)))
	deadline := time.Now().Add(5 * time.Second)
	for heapFree() > releaseAbove && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f := heapFree(); f > releaseAbove {
		t.Errorf("%d MiB of free heap not returned after 5 s idle (%d MiB after the burst)", f>>20, before>>20)
	}
	runtime.KeepAlive(live)
}
