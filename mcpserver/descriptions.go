package mcpserver

import "strings"

// Tool descriptions, written for the model that calls the tools.

func queryDescription(grammar string) string {
	return `Find episodes in your recorded experience. Each episode is one action you took: what you saw, did and caused. Returns the matching index rows (oldest first; the most recent up to limit), each with its episode directory, as structured content, plus one short line per episode as text. Read an episode's files with read (dir + "/outcome.json", "/state/state.json", "/observation/image.png").

Give either query — the cue language below — or episodes_py — the flags of the paper's tools/episodes.py (--last N, --steps A B, --near X Z, --radius R, --tag T, --action A, --grep TEXT, --previous, --json, --sheet, --then-now ID). A malformed query is an error that names the bad term. An empty result is a count of 0, not an error. sheet=true adds a contact sheet image of the matches' frames. explain=true (cue queries) adds, after the rows, each term in order with how many episodes still matched after it and what it was read as (near:-69,185,22 → 0 (near: x=-69 y=185 z=22 …): the height is second) — use it when a count surprises you.

` + strings.TrimRight(grammar, "\n")
}

const readDescription = `Read any path of your memory, as through the /mfm mount (paths are relative to its root; "/mfm/" in front is accepted).

- Text files come back as text, paged by lines: offset (1-based; negative counts from the end, so offset -20 is the last 20 lines) and limit (default 200). A reply stops at 64 KiB and says the offset to continue from. Examples: README.md (start here: live counts and real ids), index.jsonl (one JSON row per episode), logs.txt (the turn log), grid.jsonl, episodes/ep_000044/outcome.json, now/state.json, mine/notes.md.
- A directory comes back as its entries, one per line ("name/" for a directory): "", episodes, episodes/ep_000044, mine.
- Images (.png frames such as episodes/ep_000044/observation/image.png, now/frame.png) come back as image content, up to 4 MiB; for crops, zooms, sheets and maps use view.
- q/<query>/results.jsonl, q/<query>/count, q/<query>/explain, episodes/<id>/cited-by (the mine/ files that cite it) and mine/.check (what check reports) are served as in the mount.

Everything except mine/ is the record: read-only. Paths cannot leave the memory ("..", symlinks out of it).`

func viewDescription(grammar string) string {
	return `Render a virtual image of your memory: crop, zoom or grid a frame, a contact sheet of an episode's frames or of a query's matches, a then-and-now pair beside the current frame, or a top-down map of where things happened. Returns image content (PNG or JPEG); a map ending in .txt returns text, one character per block. A malformed view name is an error that shows the accepted spelling.

` + strings.TrimRight(grammar, "\n")
}

const writeDescription = `Write a file in mine/, your own notes — the only writable part of the memory. The file is replaced atomically (readers see the old or the new content, never a mix); append=true adds to its end. Keep facts in mine/notes.md, guidance in mine/GUIDE.md, the current plan in mine/working.md, and cite the episodes behind each note by id (ep_000044), so check can verify them. Any path outside mine/ is refused as read-only (EROFS) and nothing changes.`

const editDescription = `Replace text in an existing file of mine/: old_text must occur exactly once (or set replace_all), and is replaced by new_text atomically. Read the file first and copy old_text exactly. Refused outside mine/ (read-only, EROFS); nothing changes on any error.`

const checkDescription = `Check the citations in mine/: every episode id (ep_000044), episode path, step (step 311) and step range (steps 214-258: the episodes that took a step after 214 up to 258) your notes cite must name a recorded episode. Returns the report of the mount's mine/.check: the citations to missing episodes with file and line, mine/procedures/ scripts without a description, and the counts. Run it after writing notes.`

const actDescription = `Act in the game: run one plan in the running play session (mfmd play) and get the turn block back — what each entry did, your state and inventory, events, milestones reached, the episodes recorded, the latest frame, your goals and steps left. The same plans and block as the shell's mfmd act.

A plan is one line of entries separated by ';': an atom or one of your procedures with key=value arguments (go_to x=-70 z=189; mine_ahead; collect_drops item=tree), or a raw action {"forward":1,"jump":1} x20. Or the JSON plan {"actions": [{"procedure": NAME, "args": {...}}, {"action": {...}, "repeat": N}]}. Entries run in order; a failed one drops the rest. Call task for the atoms and their parameters.

A refused plan (unknown atom, bad arguments, over the plan cap, the governor's repeat rule, the run has ended) is an error with the session's reason, and nothing is done or recorded: fix the plan and call again. frame=true adds the latest frame as an image. The episodes a turn records are in your memory at once: query, read and view them. Without a running session this is an error that says how to start one.`

const taskDescription = `Where the running play session stands, without acting: the task's instruction, your goals (milestones reached and the next ones), steps used and left, your state and inventory, the latest frame — then the atoms you can use in a plan with their parameters, the raw action keys, and your own procedures. The same text as the shell's mfmd act --status and mfmd act --list; no_atoms=true leaves the list out. Without a running session this is an error that says how to start one.`
