package fs

import (
	"context"
	"strings"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/fs/content"
)

// accessRecorder is the access log (content.AccessLog) as FUSE handlers
// use it: a record carries the pid of the request's caller.
type accessRecorder struct{ *content.AccessLog }

// record notes that the caller in ctx opened path.
func (a accessRecorder) record(ctx context.Context, path, kind string) {
	if !a.On() {
		return
	}
	var pid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		pid = c.Pid
	}
	a.Add(path, kind, pid)
}

// maxSeenPaths bounds the paths a mountOpens keeps; it forgets them all
// when it is reached.
const maxSeenPaths = 1 << 17

// mountOpens records the opens the fanotify watcher of a mount of its
// own sees (its opens do not reach the daemon, see cachedmount.go). Its
// methods run on the watcher's goroutine only.
type mountOpens struct {
	access *content.AccessLog
	root   *gofs.Inode // the mount's tree
	prefix string      // where the mount is in the store's ("/episodes")
	// seen keeps the record's path and kind by path in the mount: the
	// node at a path of these mounts is always of one kind (a backing
	// file, a view, cited-by), so the walk of the tree is made once per
	// path, not once per open (bench/mount.md has its share of the
	// daemon's CPU).
	seen map[string]accessName
}

// accessName is a record's path and kind.
type accessName struct{ path, kind string }

// record notes that process pid opened p, the path in the mount ("/"
// for its root). The kind is the one the node at p gives (the kernel
// holds the node of a file it just opened, so it is in the tree); a path
// no longer in the tree is classified by its name.
func (o *mountOpens) record(p string, pid int32) {
	name, ok := o.seen[p]
	if !ok {
		name.path = o.prefix + p
		if p == "/" {
			name.path = o.prefix
		}
		if n := nodeAt(o.root, p); n != nil {
			if k, ok := n.Operations().(interface{ accessKind(string) string }); ok {
				name.kind = k.accessKind(name.path)
			}
		}
		if name.kind != "" {
			if len(o.seen) >= maxSeenPaths {
				clear(o.seen)
			}
			o.seen[p] = name
		} else {
			name.kind = content.KindOfPath(name.path, "episode")
		}
	}
	o.access.Add(name.path, name.kind, uint32(pid))
}

// nodeAt walks the tree of known nodes below root to p ("/a/b"); nil if
// a component is not (or no longer) known.
func nodeAt(root *gofs.Inode, p string) *gofs.Inode {
	n := root
	for _, c := range strings.Split(strings.Trim(p, "/"), "/") {
		if c == "" {
			continue
		}
		if n = n.GetChild(c); n == nil {
			return nil
		}
	}
	return n
}
