// Package fs serves an MFM store as a FUSE filesystem (go-fuse v2): the
// read-only record (logs.txt, index.jsonl, grid.jsonl, episodes/,
// previous/), the read-write pass-through mine/, now/, the generated
// README.md, query directories under q/ and virtual views. It owns the node
// tree and the mount's lifecycle only; queries, views and the store format
// live in the index, view and episodes packages (see docs/MOUNT.md).
//
// As root, episodes/ and previous/ are mounts of their own on top of the
// store's mount (cachedmount.go): read-only superblocks that never see an
// open, read through the kernel's page cache, whose opens reach the
// access log through fanotify (internal/fanotify), and whose listings the
// kernel keeps while a directory is unchanged (listing.go).
// Options.PerOpen (always without root) serves them from the store's
// mount, with an OPEN per opened file.
//
// What the mount serves that needs no FUSE (README generation, store
// statistics, the now/ rule, the access and error logs, query results)
// is package fs/content, tested without a mount; the fanotify watcher is
// internal/fanotify. The node kinds hold narrow dependencies: the
// generic virtual nodes a nodeEnv (env.go), the read-only trees a roEnv.
package fs
