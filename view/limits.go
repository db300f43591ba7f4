package view

import (
	"runtime"
	"time"
)

// Limits are the guards every render runs under. They are fixed when a
// Viewer is made; nothing in a view's name can raise them.
type Limits struct {
	MaxSourceBytes  int64 // largest frame file read
	MaxSourceSide   int   // largest frame width or height, checked before decoding
	MaxSourcePixels int   // largest frame width*height, checked before decoding
	MaxOutSide      int   // largest output width or height
	MaxOutPixels    int   // largest output width*height
	MaxZoom         int   // largest zoom factor
	MaxTiles        int   // most tiles in one contact sheet
	MaxQuestion     int   // longest then-and-now question, in bytes
	MaxMapRadius    int   // largest map radius, in cells
	MaxGridBytes    int64 // largest grid.jsonl a map reads

	Workers       int           // renders running at once
	RenderTimeout time.Duration // per render, including the wait for a worker

	FrameCacheBytes  int64 // decoded frames kept (NRGBA bytes)
	RenderCacheBytes int64 // rendered outputs kept (encoded bytes)
}

// DefaultLimits are the limits a mount uses.
func DefaultLimits() Limits {
	return Limits{
		MaxSourceBytes:   32 << 20,
		MaxSourceSide:    8192,
		MaxSourcePixels:  16 << 20,
		MaxOutSide:       8192,
		MaxOutPixels:     32 << 20,
		MaxZoom:          16,
		MaxTiles:         64,
		MaxQuestion:      240,
		MaxMapRadius:     256,
		MaxGridBytes:     64 << 20,
		Workers:          max(2, runtime.NumCPU()),
		RenderTimeout:    10 * time.Second,
		FrameCacheBytes:  256 << 20,
		RenderCacheBytes: 64 << 20,
	}
}
