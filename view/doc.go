// Package view renders MFM's virtual images: crops, whole-factor zooms, a
// labelled pixel grid, contact sheets, then-and-now pairs and top-down maps
// of grid.jsonl, named by a small path grammar (see Grammar and
// docs/VIEWS.md) and served from bounded caches of decoded frames and
// rendered bytes.
//
// It owns image decoding, drawing and encoding with their guards (source,
// output, zoom and tile caps, a bounded render pool with a timeout, reads
// confined to the store); it does not own the FUSE tree (package fs) or
// queries (package index). A Viewer satisfies fs.Viewer with builtin types
// only and never imports fs.
package view
