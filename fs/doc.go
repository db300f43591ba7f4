// Package fs serves an MFM store as a FUSE filesystem (go-fuse v2): the
// read-only record (logs.txt, index.jsonl, grid.jsonl, episodes/,
// previous/), the read-write pass-through mine/, now/, the generated
// README.md, query directories under q/ and virtual views. It owns the node
// tree and the mount's lifecycle only; queries, views and the store format
// live in the index, view and episodes packages (see docs/MOUNT.md).
//
// As root the record is a read-only superblock that never sees an open:
// the kernel reads it through its page cache, the access log learns of
// opens through fanotify (fanotify.go), and mine/ is a read-write mount of
// its own on top (minemount.go). Options.PerOpen (always without root)
// serves everything from one mount, with an OPEN per opened file.
//
// Logic that is not FUSE-specific (README generation, store statistics,
// the access log, the error log) is plain functions and types that tests
// call without mounting.
package fs
