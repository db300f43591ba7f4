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
		o.Sections = m.treeSections(ctx)
		return append(content.Readme(st, o), m.opt.Ablation.readme()...), nil
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

// DocumentedTree is a VirtualTree that describes itself in the mount's
// README.md: Readme returns a Markdown section ("## …"), asked on every
// read of README.md (within the render timeout), "" for none.
type DocumentedTree interface {
	VirtualTree
	Readme(ctx context.Context, mountpoint string) string
}

// treeSections are the README sections of the trees that document
// themselves, in the order of their names.
func (m *mfs) treeSections(ctx context.Context) []string {
	var out []string
	for _, n := range m.treeNames() {
		d, ok := m.opt.Hooks.Trees[n].(DocumentedTree)
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, m.opt.RenderTimeout)
		if sec := d.Readme(cctx, m.mountpoint); sec != "" {
			out = append(out, sec)
		}
		cancel()
	}
	return out
}
