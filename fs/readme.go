package fs

import (
	"context"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/mfm-project/mfm/fs/content"
)

// newReadmeFile serves /README.md, rendered from live statistics on
// every access.
func newReadmeFile(m *mfs) (gofs.InodeEmbedder, error) {
	return &bytesFile{env: m.nodeEnv, kind: "readme", content: func(ctx context.Context) ([]byte, error) {
		st, err := m.stats.Get()
		if err != nil {
			return nil, err
		}
		o := m.readmeOptions()
		o.Provenance = m.provenance(ctx)
		return content.Readme(st, o), nil
	}}, nil
}

func (m *mfs) readmeOptions() content.ReadmeOptions {
	h := m.opt.Hooks
	return content.ReadmeOptions{
		Mountpoint:   m.mountpoint,
		Store:        m.store.Root,
		Consolidate:  h.Trees["consolidate"] != nil,
		ReadOnlyMine: m.opt.ReadOnly,
		Queries:      h.Querier != nil,
		Views:        h.Viewer != nil,
		QueryHelp:    grammar(h.Querier),
		ViewHelp:     grammar(h.Viewer),
	}
}

// provenance asks Hooks.Provenance for the README's provenance section.
// A failure does not hide the README: the section says what went wrong
// (and /.errors has it too).
func (m *mfs) provenance(ctx context.Context) string {
	hook := m.opt.Hooks.Provenance
	if hook == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, m.opt.RenderTimeout)
	defer cancel()
	md, err := hook(ctx)
	if err != nil {
		m.fail(ctx, "/README.md", err)
		return content.ProvenanceFailure(err)
	}
	return md
}
