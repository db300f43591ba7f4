package content

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

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

// Readme renders the mount's README.md from live statistics: what is
// here, how to search and look (with ids from this store), the counts,
// what is writable and how errors are reported.
func Readme(st Stats, o ReadmeOptions) []byte {
	r := &readme{st: st, o: o, mnt: firstNonEmpty(o.Mountpoint, "/mfm")}
	if st.Last != nil {
		r.lastID = st.Last.ID
		if st.First != nil {
			r.firstID = st.First.ID
		}
	}
	r.p("# Your memory (MFM)\n\n")
	r.p("This directory is your recorded experience, mounted as files. The harness records each\n")
	r.p("episode (what you saw, did and caused); you keep your own notes in `mine/`. Use ordinary\n")
	r.p("commands: `ls`, `cat`, `grep`, `jq`, `tail`, `find`. This file is regenerated on every read.\n\n")
	r.rightNow()
	if o.Provenance != "" {
		r.p("%s\n\n", strings.TrimRight(o.Provenance, "\n"))
	}
	r.whatIsHere()
	r.search()
	r.look()
	r.writing()
	r.errors()
	return r.b.Bytes()
}

// readme is one rendering of README.md, written section by section.
type readme struct {
	b               bytes.Buffer
	st              Stats
	o               ReadmeOptions
	mnt             string // the mount point the examples use
	lastID, firstID string // ids of the last and first episode, "" when none
}

func (r *readme) p(format string, a ...any) { fmt.Fprintf(&r.b, format, a...) }

// rightNow is "## Right now": the live counts.
func (r *readme) rightNow() {
	st := r.st
	r.p("## Right now\n\n")
	if st.Last != nil {
		r.p("- %d episodes in this life", st.Episodes)
		if st.First != nil {
			r.p(" (`%s` … `%s`)", st.First.ID, st.Last.ID)
		}
		r.p(", up to step %d.\n", st.Last.LastStep)
		r.p("- Last episode `%s`: %s\n", st.Last.ID, oneLineSummary(st.Last.Summary))
		r.p("  at x=%s y=%s z=%s, tags %s.\n", pyNum(st.Last.X), pyNum(st.Last.Y), pyNum(st.Last.Z), tagList(st.Last.Tags))
	} else {
		r.p("- No episodes recorded yet in this life.\n")
	}
	r.p("- Life %d", st.Lives)
	if len(st.Previous) > 0 {
		var parts []string
		for _, l := range st.Previous {
			parts = append(parts, fmt.Sprintf("life_%d: %d episodes", l.N, l.Episodes))
		}
		r.p("; earlier lives in `previous/` (%s)", strings.Join(parts, ", "))
	} else {
		r.p(" (no earlier lives)")
	}
	r.p(".\n")
	r.p("- %d grid rows covering %d distinct cells", st.GridRows, st.GridCells)
	if len(st.GridKinds) > 0 {
		r.p(" (%s)", kindList(st.GridKinds))
	}
	r.p("; %d lines in `logs.txt`.\n\n", st.LogLines)
}

// whatIsHere is "## What is here": the table of the mount's entries.
func (r *readme) whatIsHere() {
	r.p("## What is here\n\n")
	r.p("| path | what | access |\n| --- | --- | --- |\n")
	r.p("| `README.md` | this guide, with live counts | read |\n")
	r.p("| `index.jsonl` | one JSON row per completed episode: `id, path, image, kind, first_step, last_step, action_kind, summary, tags, x, y, z, gui_open` | read, grows |\n")
	r.p("| `grid.jsonl` | cells you interacted with: `{\"cell\": [x, y, z], \"kind\": walked/placed/opened/blocked/hazard…, \"step\": N}` | read, grows |\n")
	r.p("| `logs.txt` | the turn log: `[STATE] [EVENT] [NOTE] [INV] [PLAN]` lines | read, grows |\n")
	r.p("| `episodes/ep_NNNNNN/` | one episode: `action.json`, `outcome.json`, `state/state.json`, `observation/image.png` (the frame), optional `frames/` and `steps.jsonl` | read |\n")
	r.p("| `previous/life_N/` | earlier lives, same layout (`index.jsonl`, `episodes/`, …) | read |\n")
	r.p("| `now/` | `state.json` and `frame.png`: the latest state as the harness last wrote it | read |\n")
	if r.o.ReadOnlyMine {
		r.p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/` | **read only in this run** |\n")
	} else {
		r.p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/` — cite episode ids | **read and write** |\n")
	}
	if r.o.Queries {
		r.p("| `q/<query>/` | a search: `results.jsonl`, `count`, `sheet.png`, one link per matching episode | read |\n")
	}
	if r.o.Views {
		r.p("| `map/…` | top-down maps of `grid.jsonl` (rendered on demand) | read |\n")
	}
	r.p("\n")
}

// search is "## Search": shell examples with this store's ids, then q/.
func (r *readme) search() {
	mnt, lastID := r.mnt, r.lastID
	r.p("## Search\n\n```sh\n")
	r.p("cd %s\n", mnt)
	r.p("tail -n 5 index.jsonl                       # the latest episodes\n")
	if lastID != "" {
		r.p("grep '\"%s\"' index.jsonl                # one episode's row\n", lastID)
		r.p("cat episodes/%s/outcome.json            # what happened in it\n", lastID)
	}
	if tag := commonTag(r.st.Recent); tag != "" {
		r.p("grep -c '\"%s\"' index.jsonl              # how many episodes are tagged %s\n", tag, tag)
	}
	r.p("jq -c 'select(.tags | index(\"stuck\"))' index.jsonl | tail -n 3\n")
	r.p("grep -n '\\[EVENT\\]' logs.txt | tail -n 20\n")
	r.p("tail -f index.jsonl                         # watch new episodes arrive\n")
	r.p("```\n\n")
	if r.o.Queries {
		r.queries()
	}
}

// queries is the part of "## Search" about q/.
func (r *readme) queries() {
	mnt, st := r.mnt, r.st
	ex := "last:5"
	if tag := commonTag(st.Recent); tag != "" {
		ex = "tag:" + tag + " last:5"
	}
	if st.Last != nil {
		ex2 := fmt.Sprintf("near:%d,%d r:8", int(st.Last.X), int(st.Last.Z))
		r.p("Queries are directories. All terms must hold; results are in chronological order:\n\n```sh\n")
		r.p("cat '%s/q/%s/count'\n", mnt, ex)
		r.p("cat '%s/q/%s/results.jsonl'\n", mnt, ex)
		r.p("ls '%s/q/%s/'             # one link per matching episode\n", mnt, ex2)
		r.p("```\n\n")
	}
	r.p("`q/<query>/` holds `results.jsonl` (the matching index rows, verbatim), `count`,")
	if r.o.Views {
		r.p(" `sheet.png`\n(a labelled contact sheet of the last %d matches' frames),", SheetMaxTiles)
	}
	r.p(" and one symlink per match to its\nepisode (`ep_000123 -> ../../episodes/ep_000123`; an earlier life's as\n")
	r.p("`life_1.ep_000004 -> ../../previous/life_1/episodes/ep_000004`), so `cd` into a match works.\n")
	r.p("Queries are not listed in `q/` (only `q/README.md`); results follow `index.jsonl` as it grows.\n")
	r.p("A bad query fails with \"Invalid argument\": `cat %s/.errors` says why (see Errors).\n\n", mnt)
	if r.o.QueryHelp != "" {
		r.p("Query grammar:\n\n```\n%s\n```\n\n", strings.TrimRight(r.o.QueryHelp, "\n"))
	}
}

// look is "## Look": frames and views.
func (r *readme) look() {
	st := r.st
	r.p("## Look\n\n")
	if st.FrameExample != "" {
		r.p("Frames are PNG files: open `%s` with your image viewer.\n", st.FrameExample)
	} else {
		r.p("Frames are PNG files at `episodes/ep_NNNNNN/observation/image.png` (none recorded in this store yet).\n")
	}
	if !r.o.Views {
		return
	}
	frame := st.FrameExample
	if frame == "" {
		frame = "episodes/" + firstNonEmpty(r.lastID, "ep_000001") + "/observation/image.png"
	}
	base := strings.TrimSuffix(frame, ".png")
	r.p("Views are virtual images: they are not listed by `ls`, but open by name.\n\n```\n")
	r.p("%s@crop=0,0,64,64@zoom=4.png   # crop then magnify\n", base)
	r.p("%s@grid.png                    # labelled pixel grid\n", base)
	r.p("episodes/%s/sheet.png                            # all frames of an episode\n", firstNonEmpty(r.lastID, r.firstID, "ep_000001"))
	r.p("```\n\n")
	if r.o.ViewHelp != "" {
		r.p("View grammar:\n\n```\n%s\n```\n\n", strings.TrimRight(r.o.ViewHelp, "\n"))
	}
}

// writing is "## Writing": what is writable.
func (r *readme) writing() {
	r.p("\n## Writing\n\n")
	if r.o.ReadOnlyMine {
		r.p("Everything is read-only in this run (memory frozen for evaluation): writes fail with\n")
		r.p("\"Read-only file system\" (EROFS).\n\n")
		return
	}
	r.p("Only `mine/` is writable: it is an ordinary directory (editors, `sed -i`, `git`, atomic\n")
	r.p("renames all work). Keep facts in `mine/notes.md`, guidance in `mine/GUIDE.md`, the current\n")
	r.p("plan in `mine/working.md`; cite the episodes behind each note by id (e.g. `%s`).\n", firstNonEmpty(r.lastID, "ep_000001"))
	r.p("Everything else is the record: writes there fail with \"Read-only file system\" (EROFS) and\n")
	r.p("change nothing.\n\n")
}

// errors is "## Errors": how failed requests are reported.
func (r *readme) errors() {
	mnt := r.mnt
	r.p("## Errors\n\n")
	r.p("A malformed query or view never looks like an empty result: opening it fails with\n")
	r.p("\"Invalid argument\" (EINVAL), a render that takes too long fails with \"Connection timed out\"\n")
	r.p("(ETIMEDOUT), and `%s/.errors` holds the full message (what was wrong, what is accepted),\n", mnt)
	r.p("newest first:\n\n```sh\ncat %s/.errors | head -n 20\n```\n", mnt)
	r.p("An empty result is a `count` of 0 and an empty `results.jsonl`.\n")
}

// ProvenanceFailure is the README's provenance section when the store's
// provenance could not be read: what went wrong, on one line.
func ProvenanceFailure(err error) string {
	return "## Provenance\n\nThe store's provenance could not be read: " + oneLineSummary(err.Error()) + "\n"
}

// oneLineSummary folds s onto one line of at most 160 bytes (runs of
// white space become one space; a longer text is cut and ends in "...").
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
