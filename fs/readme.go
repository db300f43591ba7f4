package fs

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	gofs "github.com/hanwen/go-fuse/v2/fs"

	"github.com/mfm-project/mfm/episodes"
)

// ReadmeOptions describe the mount for the generated README.md.
type ReadmeOptions struct {
	Mountpoint   string // absolute mount point, used in the examples
	ReadOnlyMine bool   // mine/ is read-only (--read-only)
	Queries      bool   // q/ is served
	Views        bool   // views and map/ are served
	QueryHelp    string // the query grammar, from the index package
	ViewHelp     string // the view grammar, from the view package
	// Provenance is a Markdown section ("## Provenance" …) naming the
	// artifact the store was seeded from; "" when it was not seeded.
	Provenance string
}

func (m *mfs) readmeOptions() ReadmeOptions {
	return ReadmeOptions{
		Mountpoint:   m.mountpoint,
		ReadOnlyMine: m.opt.ReadOnly,
		Queries:      m.ext.queries(),
		Views:        m.ext.views(),
		QueryHelp:    m.ext.queryHelp(),
		ViewHelp:     m.ext.viewHelp(),
	}
}

func newReadmeFile(m *mfs) (gofs.InodeEmbedder, error) {
	return &bytesFile{m: m, kind: "readme", content: func(ctx context.Context) ([]byte, error) {
		st, err := m.stats.Get()
		if err != nil {
			return nil, err
		}
		o := m.readmeOptions()
		o.Provenance = m.provenance(ctx)
		return Readme(st, o), nil
	}}, nil
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
		return "## Provenance\n\nThe store's provenance could not be read: " + oneLineSummary(err.Error()) + "\n"
	}
	return md
}

// Readme renders the mount's README.md from live statistics: what is
// here, how to search and look (with ids from this store), the counts,
// what is writable and how errors are reported.
func Readme(st Stats, o ReadmeOptions) []byte {
	mnt := o.Mountpoint
	if mnt == "" {
		mnt = "/mfm"
	}
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }

	p("# Your memory (MFM)\n\n")
	p("This directory is your recorded experience, mounted as files. The harness records each\n")
	p("episode (what you saw, did and caused); you keep your own notes in `mine/`. Use ordinary\n")
	p("commands: `ls`, `cat`, `grep`, `jq`, `tail`, `find`. This file is regenerated on every read.\n\n")

	p("## Right now\n\n")
	lastID, firstID := "", ""
	if st.Last != nil {
		lastID = st.Last.ID
		p("- %d episodes in this life", st.Episodes)
		if st.First != nil {
			firstID = st.First.ID
			p(" (`%s` … `%s`)", st.First.ID, st.Last.ID)
		}
		p(", up to step %d.\n", st.Last.LastStep)
		p("- Last episode `%s`: %s\n", st.Last.ID, oneLineSummary(st.Last.Summary))
		p("  at x=%s y=%s z=%s, tags %s.\n", pyNum(st.Last.X), pyNum(st.Last.Y), pyNum(st.Last.Z), tagList(st.Last.Tags))
	} else {
		p("- No episodes recorded yet in this life.\n")
	}
	p("- Life %d", st.Lives)
	if len(st.Previous) > 0 {
		var parts []string
		for _, l := range st.Previous {
			parts = append(parts, fmt.Sprintf("life_%d: %d episodes", l.N, l.Episodes))
		}
		p("; earlier lives in `previous/` (%s)", strings.Join(parts, ", "))
	} else {
		p(" (no earlier lives)")
	}
	p(".\n")
	p("- %d grid rows covering %d distinct cells", st.GridRows, st.GridCells)
	if len(st.GridKinds) > 0 {
		p(" (%s)", kindList(st.GridKinds))
	}
	p("; %d lines in `logs.txt`.\n\n", st.LogLines)

	if o.Provenance != "" {
		p("%s\n\n", strings.TrimRight(o.Provenance, "\n"))
	}

	p("## What is here\n\n")
	p("| path | what | access |\n| --- | --- | --- |\n")
	p("| `README.md` | this guide, with live counts | read |\n")
	p("| `index.jsonl` | one JSON row per completed episode: `id, path, image, kind, first_step, last_step, action_kind, summary, tags, x, y, z, gui_open` | read, grows |\n")
	p("| `grid.jsonl` | cells you interacted with: `{\"cell\": [x, y, z], \"kind\": walked/placed/opened/blocked/hazard…, \"step\": N}` | read, grows |\n")
	p("| `logs.txt` | the turn log: `[STATE] [EVENT] [NOTE] [INV] [PLAN]` lines | read, grows |\n")
	p("| `episodes/ep_NNNNNN/` | one episode: `action.json`, `outcome.json`, `state/state.json`, `observation/image.png` (the frame), optional `frames/` and `steps.jsonl` | read |\n")
	p("| `previous/life_N/` | earlier lives, same layout (`index.jsonl`, `episodes/`, …) | read |\n")
	p("| `now/` | `state.json` and `frame.png`: the latest state as the harness last wrote it | read |\n")
	if o.ReadOnlyMine {
		p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/` | **read only in this run** |\n")
	} else {
		p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/` — cite episode ids | **read and write** |\n")
	}
	if o.Queries {
		p("| `q/<query>/` | a search: `results.jsonl`, `count`, `sheet.png`, one link per matching episode | read |\n")
	}
	if o.Views {
		p("| `map/…` | top-down maps of `grid.jsonl` (rendered on demand) | read |\n")
	}
	p("\n")

	p("## Search\n\n```sh\n")
	p("cd %s\n", mnt)
	p("tail -n 5 index.jsonl                       # the latest episodes\n")
	if lastID != "" {
		p("grep '\"%s\"' index.jsonl                # one episode's row\n", lastID)
		p("cat episodes/%s/outcome.json            # what happened in it\n", lastID)
	}
	if tag := commonTag(st.Recent); tag != "" {
		p("grep -c '\"%s\"' index.jsonl              # how many episodes are tagged %s\n", tag, tag)
	}
	p("jq -c 'select(.tags | index(\"stuck\"))' index.jsonl | tail -n 3\n")
	p("grep -n '\\[EVENT\\]' logs.txt | tail -n 20\n")
	p("tail -f index.jsonl                         # watch new episodes arrive\n")
	p("```\n\n")
	if o.Queries {
		ex := "last:5"
		if tag := commonTag(st.Recent); tag != "" {
			ex = "tag:" + tag + " last:5"
		}
		if st.Last != nil {
			ex2 := fmt.Sprintf("near:%d,%d r:8", int(st.Last.X), int(st.Last.Z))
			p("Queries are directories. All terms must hold; results are in chronological order:\n\n```sh\n")
			p("cat '%s/q/%s/count'\n", mnt, ex)
			p("cat '%s/q/%s/results.jsonl'\n", mnt, ex)
			p("ls '%s/q/%s/'             # one link per matching episode\n", mnt, ex2)
			p("```\n\n")
		}
		p("`q/<query>/` holds `results.jsonl` (the matching index rows, verbatim), `count`,")
		if o.Views {
			p(" `sheet.png`\n(a labelled contact sheet of the last %d matches' frames),", SheetMaxTiles)
		}
		p(" and one symlink per match to its\nepisode (`ep_000123 -> ../../episodes/ep_000123`; an earlier life's as\n")
		p("`life_1.ep_000004 -> ../../previous/life_1/episodes/ep_000004`), so `cd` into a match works.\n")
		p("Queries are not listed in `q/` (only `q/README.md`); results follow `index.jsonl` as it grows.\n")
		p("A bad query fails with \"Invalid argument\": `cat %s/.errors` says why (see Errors).\n\n", mnt)
		if o.QueryHelp != "" {
			p("Query grammar:\n\n```\n%s\n```\n\n", strings.TrimRight(o.QueryHelp, "\n"))
		}
	}

	p("## Look\n\n")
	if st.FrameExample != "" {
		p("Frames are PNG files: open `%s` with your image viewer.\n", st.FrameExample)
	} else {
		p("Frames are PNG files at `episodes/ep_NNNNNN/observation/image.png` (none recorded in this store yet).\n")
	}
	if o.Views {
		frame := st.FrameExample
		if frame == "" {
			frame = "episodes/" + firstNonEmpty(lastID, "ep_000001") + "/observation/image.png"
		}
		base := strings.TrimSuffix(frame, ".png")
		p("Views are virtual images: they are not listed by `ls`, but open by name.\n\n```\n")
		p("%s@crop=0,0,64,64@zoom=4.png   # crop then magnify\n", base)
		p("%s@grid.png                    # labelled pixel grid\n", base)
		p("episodes/%s/sheet.png                            # all frames of an episode\n", firstNonEmpty(lastID, firstID, "ep_000001"))
		p("```\n\n")
		if o.ViewHelp != "" {
			p("View grammar:\n\n```\n%s\n```\n\n", strings.TrimRight(o.ViewHelp, "\n"))
		}
	}
	p("\n## Writing\n\n")
	if o.ReadOnlyMine {
		p("Everything is read-only in this run (memory frozen for evaluation): writes fail with\n")
		p("\"Read-only file system\" (EROFS).\n\n")
	} else {
		p("Only `mine/` is writable: it is an ordinary directory (editors, `sed -i`, `git`, atomic\n")
		p("renames all work). Keep facts in `mine/notes.md`, guidance in `mine/GUIDE.md`, the current\n")
		p("plan in `mine/working.md`; cite the episodes behind each note by id (e.g. `%s`).\n", firstNonEmpty(lastID, "ep_000001"))
		p("Everything else is the record: writes there fail with \"Read-only file system\" (EROFS) and\n")
		p("change nothing.\n\n")
	}
	p("## Errors\n\n")
	p("A malformed query or view never looks like an empty result: opening it fails with\n")
	p("\"Invalid argument\" (EINVAL), a render that takes too long fails with \"Connection timed out\"\n")
	p("(ETIMEDOUT), and `%s/.errors` holds the full message (what was wrong, what is accepted),\n", mnt)
	p("newest first:\n\n```sh\ncat %s/.errors | head -n 20\n```\n", mnt)
	p("An empty result is a `count` of 0 and an empty `results.jsonl`.\n")
	return b.Bytes()
}

func oneLineSummary(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func tagList(tags []string) string {
	if len(tags) == 0 {
		return "(none)"
	}
	q := make([]string, len(tags))
	for i, t := range tags {
		q[i] = "`" + t + "`"
	}
	return strings.Join(q, ", ")
}

func kindList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// commonTag returns the most frequent tag among rows (ties by name).
func commonTag(rows []episodes.Row) string {
	n := map[string]int{}
	for _, r := range rows {
		for _, t := range r.Tags {
			n[t]++
		}
	}
	best := ""
	for t, c := range n {
		if c > n[best] || (c == n[best] && t < best) {
			best = t
		}
	}
	return best
}

func pyNum(f float64) string { return episodes.FormatPyFloat(f) }

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
