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
	Store        string // the store directory the mount serves ("" when unknown)
	ReadOnlyMine bool   // mine/ is read-only (--read-only)
	Queries      bool   // q/ is served
	Consolidate  bool   // consolidate/ is served
	Views        bool   // views and map/ are served
	QueryHelp    string // the query grammar, from the index package
	ViewHelp     string // the view grammar, from the view package
	// Provenance is a Markdown section ("## Provenance" …) naming the
	// artifact the store was seeded from; "" when it was not seeded.
	Provenance string
	// Sections are Markdown sections ("## …") of the extra top-level
	// trees (Hooks.Trees that document themselves), shown before Writing.
	Sections []string
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
	r.files()
	r.search()
	r.look()
	for _, sec := range o.Sections {
		r.p("%s\n\n", strings.TrimRight(sec, "\n"))
	}
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
	r.p("; %d lines in `logs.txt`.\n", st.LogLines)
	if r.o.Store != "" {
		r.p("- The store directory behind this mount is `%s` (for `mfmd … --store`; read it\n", r.o.Store)
		r.p("  through the mount: the record is read-only here, and `mine/.check` runs `mfmd check` for you).\n")
	}
	r.p("\n")
}

// whatIsHere is "## What is here": the table of the mount's entries.
func (r *readme) whatIsHere() {
	r.p("## What is here\n\n")
	r.p("| path | what | access |\n| --- | --- | --- |\n")
	r.p("| `README.md` | this guide, with live counts | read |\n")
	r.p("| `index.jsonl` | one JSON row per completed episode (fields below) | read, grows |\n")
	r.p("| `grid.jsonl` | cells you interacted with, one row each: `{\"cell\": [x, y, z], \"kind\": …, \"step\": N, \"episode\": id}`; the kinds and what their cell is are below | read, grows |\n")
	r.p("| `logs.txt` | the turn log: `[STATE] [EVENT] [NOTE] [INV] [PLAN]` lines | read, grows |\n")
	r.p("| `episodes/ep_NNNNNN/` | one episode: `action.json`, `outcome.json`, `state/state.json`, `observation/image.png` (the frame), optional `frames/` and `steps.jsonl` (below), and `cited-by` | read |\n")
	r.p("| `episodes/ep_NNNNNN/cited-by` | the files of `mine/` whose notes cite this episode, one per line (empty when none) | read |\n")
	r.p("| `previous/life_N/` | earlier lives, same layout (`index.jsonl`, `episodes/`, …) | read |\n")
	r.p("| `now/` | `state.json` and `frame.png`: the latest state as the harness last wrote it | read |\n")
	if r.o.ReadOnlyMine {
		r.p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/`; it may be empty at first | **read only in this run** |\n")
	} else {
		r.p("| `mine/` | your notes: `notes.md`, `GUIDE.md`, `working.md`, `digest.md`, `procedures/`, `reflexes/` — cite episode ids; it may be empty at first: create the files | **read and write** |\n")
	}
	r.p("| `mine/.check` | regenerated on every read: each citation in `mine/` that names no episode (file and line; citations are below, under Writing), each procedure without a description, then the counts; not listed by `ls` | read |\n")
	r.p("| `mine/procedures/.catalog` | your procedures with their descriptions and calls; not listed by `ls` | read |\n")
	if r.o.Queries {
		r.p("| `q/<query>/` | a search: `results.jsonl`, `count`, `explain`, `sheet.png`, one link per matching episode | read |\n")
	}
	if r.o.Views {
		r.p("| `map/…` | top-down maps of `grid.jsonl` (rendered on demand; not listed) | read |\n")
	}
	if r.o.Consolidate {
		r.p("| `consolidate/` | derived on read from the record and `mine/` (below, under Consolidation): `digest.md`, `feedback.jsonl`, `candidates/`, `knowledge.json`, `retrieve/<context>`, `usage.jsonl` | read |\n")
	}
	r.p("| `.errors` | the latest failed requests with their full messages, newest first; not listed | read |\n")
	r.p("\n")
}

// files is "## Inside the files": the index fields and the schema of
// steps.jsonl, as the recorder writes them.
func (r *readme) files() {
	r.p("## Inside the files\n\n")
	r.p("`index.jsonl` rows (`jq -c '{id, summary, events}' index.jsonl`):\n\n")
	r.p("- `id` (`ep_000123`), `path` (its directory), `image` (its frame), `kind` (`episode` or `initial`)\n")
	r.p("- `first_step`: the step of the state it starts from, before its action (`state/state.json` and\n")
	r.p("  `observation/image.png` show it; it is the previous episode's `last_step`); `last_step`: the step\n")
	r.p("  of its last state (`outcome.json`'s `end_state`). It took the steps `first_step`+1 … `last_step`.\n")
	r.p("- `time`: when it was recorded (RFC 3339)\n")
	r.p("- `action_kind` (`go_to`, `pillar_up`, …) and `summary` (`[ACTION] go_to(…) -> 42 ticks: moved 3.1, …`)\n")
	r.p("- `tags`: `stuck`, `damage`, `death`, `broke`, `placed`, `inventory_changed`, `milestone`, `note`, `initial`\n")
	r.p("- `events`: the game's event lines during it (`hurt fall 10`, `mine_block dirt +1`)\n")
	r.p("- `note`: what the action itself reported (`pillar_up: placed 13 blocks, 13.0 up`)\n")
	r.p("- `x`, `y`, `z`: where it started (`y` is the height); `gui_open`: an inventory or other window was open\n")
	r.p("- `life`: the life it belongs to; `inventory_delta`: items gained (+) and spent (-)\n")
	r.p("- `attachment`, `observation_hash`: always null (kept for the paper's tools)\n\n")
	r.p("`episodes/ep_NNNNNN/steps.jsonl` (when frames were recorded) has one line per step the episode\n")
	r.p("took, in order, so its first line is step `first_step`+1 and its last `last_step`: `step` (the\n")
	r.p("number), `action` (the keys and mouse sent), `events` (the game's event lines at that step),\n")
	r.p("`frame` (`frames/000123.png`, the view after it) and `state` (the state after it). The state is under `.state`,\n")
	r.p("as in `state/state.json` and `now/state.json`: `.state.pos` (`x`, `y`, `z`, `yaw`, `pitch`),\n")
	r.p("`.state.inventory`, `.state.vitals` (`health`, …), `.state.gui_open`, `.state.step`,\n")
	r.p("`.state.milestones`, and what the game adds (Luanti: `mainhand`, `pointed`, `below`, `time_of_day`).\n\n")
	ep := firstNonEmpty(r.lastID, "ep_000001")
	r.p("```sh\njq -c '[.step, .state.pos.y, .state.vitals.health]' %s/episodes/%s/steps.jsonl   # height and health per step\n", r.mnt, ep)
	r.p("jq -c '{moved, descended, damage, events, inventory_delta}' %s/episodes/%s/outcome.json\n```\n\n", r.mnt, ep)
	r.grid()
	if r.o.Consolidate {
		r.consolidate()
	}
}

// grid is the part of "## Inside the files" about grid.jsonl: each kind
// and what its cell is, as the recorder derives them.
func (r *readme) grid() {
	r.p("`grid.jsonl` rows: `cell` (a block, [x, y, z] with y the height), `kind`, `step` (the step after\n")
	r.p("which it held) and `episode` (the episode that took that step). By kind, the cell is:\n\n")
	r.p("- `walked`: the block you stood in after the step; a row each time it changed\n")
	r.p("- `blocked`: the block one ahead of you (where you faced, at your height) at a step that tried\n")
	r.p("  to move and did not, or the block the game said stopped you\n")
	r.p("- `hazard`: the block you were in when your health dropped: for a fall, where you landed, not\n")
	r.p("  where the episode started; with `amount` (health lost) and `cause` (`fall`, `lava`, …)\n")
	r.p("- `placed`: the block you placed, with `item`; `opened`: the block you opened (a door, a chest)\n")
	r.p("- other kinds a game reports (`water`) as it reports them\n\n")
	r.p("`placed` and `opened` rows, and `blocked` rows the game reported, add `pose`: where you stood\n")
	r.p("and looked.\n\n")
}

// consolidate is "## Consolidation": what consolidate/ holds.
func (r *readme) consolidate() {
	r.p("## Consolidation\n\n")
	r.p("`consolidate/` is derived on every read from the record and `mine/` (nothing in it is written by\n")
	r.p("hand; reading changes nothing but `usage.jsonl`):\n\n")
	r.p("- `digest.md`: what worked and failed since the last consolidation, by call, each line citing episodes\n")
	r.p("- `feedback.jsonl`: one judgement per episode (`call`, `moved`, `inventory_delta`, `success`, `failure`, …)\n")
	r.p("- `candidates/<id>.md` and `<id>.json`: proposed skills and remedies, accepted or rejected (with why), citing episodes\n")
	r.p("- `knowledge.json`: the knowledge store: the accepted entries with their triggers and confidence\n")
	r.p("- `retrieve/<context>`: the accepted entries that fit a situation, most relevant first, within a\n")
	r.p("  budget of tokens; `retrieve/` lists nothing, open a context by name:\n")
	r.p("  `cat '%s/consolidate/retrieve/call=go_to,failure=NAV_STUCK,budget=300'`\n", r.mnt)
	r.p("  (keys `subgoal`, `call`, `failure`, `item`, `gui_open`, and `budget`, default 400)\n")
	r.p("- `usage.jsonl`: each retrieval: when, the context and the entries it returned\n\n")
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
	r.p("When a count surprises you (0, or too many), read `q/<query>/explain`: each term in order,\n")
	r.p("how many episodes were still matching after it and what it was read as\n")
	r.p("(`near:-69,185,22 → 0  (near: x=-69 y=185 z=22 r=6 …)`: near:X,Y,Z puts the height second).\n")
	r.p("With `in:mine` the words match the note citing an episode (its paragraph or list item in\n")
	r.p("`mine/`), not the index row: explain shows them applied at the `in:mine` line.\n")
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
	r.p("A citation in `mine/` is an episode id (`ep_000044`, or `ep_44`), an episode path\n")
	r.p("(`episodes/ep_000044`, `previous/life_1/episodes/ep_000004`), `step S` (the episode that took\n")
	r.p("step S) or a step range `steps A-B` (also `A..B`, `A to B`: every episode that took a step after A\n")
	r.p("up to B, read as an index row's `first_step`-`last_step`, so `steps 605-615` cites the episode\n")
	r.p("with those two fields alone); `life N step S` and `life N steps A-B` for an earlier life; on a\n")
	r.p("shared mount, another agent's episode by its path, `agents/NAME/episodes/ep_000012`.\n")
	r.p("`cat %s/mine/.check` lists each citation that names no episode; `episodes/<id>/cited-by` lists\n", r.mnt)
	r.p("the files citing an episode, and the query term `in:mine` finds the episodes your notes cite.\n\n")
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
