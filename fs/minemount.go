package fs

import (
	"fmt"
	"path/filepath"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/mfm-project/mfm/episodes"
)

// mountMine mounts mine/ on its own over /mine of the store's mount
// (Options.PerOpen off, mine/ writable). The store's mount is then a
// read-only superblock serving reads from the kernel's page cache; mine/
// keeps what a writable pass-through needs and a read-only one cannot
// give: per-open handles (kernel passthrough for reads and writes),
// locks, unlink of open files, the overlay files (procedures/.catalog)
// and the access log of notes opened and written, all as before.
//
// The mount(2) here resolves /mine through the store's mount, which is
// already served by its own goroutines; this goroutine holds none of the
// tree's locks, so that lookup cannot wait on it.
func (m *mfs) mountMine(outer fuse.MountOptions) (*fuse.Server, error) {
	dir := m.store.Path(episodes.MineDir)
	root, err := m.newMineTree(dir)
	if err != nil {
		return nil, fmt.Errorf("mine/: %w", err)
	}
	mo := outer
	mo.FsName = "mfm-mine:" + dir
	mo.DirectMountFlags = 0 // the default: nosuid, nodev, writable
	mo.EnableLocks = true
	mo.DisabledCapabilities = 0
	mo.Options = append([]string(nil), outer.Options...)
	opts := &gofs.Options{MountOptions: mo, NullPermissions: true}
	mnt := filepath.Join(m.mountpoint, episodes.MineDir)
	srv, err := fuse.NewServer(gofs.NewNodeFS(root, opts), mnt, &opts.MountOptions)
	if err != nil {
		return nil, fmt.Errorf("mount mine/ at %s: %w", mnt, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		_ = srv.Unmount()
		return nil, fmt.Errorf("mount mine/ at %s: %w", mnt, err)
	}
	return srv, nil
}
