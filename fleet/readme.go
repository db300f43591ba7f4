package fleet

import (
	"context"
	"fmt"
	"strings"

	"github.com/mfm-project/mfm/episodes"
)

// Readme is the mount README's section on agents/ (fs.DocumentedTree):
// who is there right now, the layout, and the agent: query terms, with
// names and ids from this mount.
func (t *Tree) Readme(ctx context.Context, mnt string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("## Other agents (`agents/`)\n\n")
	p("This mount shares memory with other agents; you are `%s`. `agents/NAME/` is another agent's\n", t.self())
	p("memory, read-only, laid out like yours but without `now/`, `q/`, `consolidate/` and episodes'\n")
	p("`cited-by` (search it from your own `q/` with `agent:NAME`); an episode shows there once all\n")
	p("its files are stored, moments after that agent closes it.\n\n")
	names := t.cat.agentNames()
	sharing := t.noteAgents(ctx)
	noteAgents := map[string]bool{}
	for _, a := range sharing {
		noteAgents[a] = true
	}
	var example, exampleID string
	if len(names) == 0 && len(noteAgents) == 0 {
		p("Right now: no other agent has shipped anything yet.\n\n")
	} else {
		p("Right now:\n")
		for _, a := range names {
			lives := t.cat.lives(a)
			cur := t.cat.currentLife(a)
			ids := t.cat.count(a, cur)
			line := fmt.Sprintf("- `%s`: %d episodes in its life %d", a, ids, cur)
			if len(lives) > 1 {
				line += fmt.Sprintf(" (earlier lives under `agents/%s/previous/`)", a)
			}
			if noteAgents[a] {
				line += "; shares its notes"
			}
			p("%s\n", line)
			if example == "" && ids > 0 {
				example = a
				exampleID = t.cat.lastID(a, cur)
			}
		}
		for _, a := range sharing {
			if t.cat.currentLife(a) == 0 {
				p("- `%s`: no episodes yet; shares its notes\n", a)
			}
		}
		p("\n")
	}
	if example == "" {
		example, exampleID = "NAME", "ep_000001"
	}
	p("```\n")
	p("agents/NAME/%-27s its episodes of its newest life, one JSON row each (fields as in your index.jsonl)\n", episodes.IndexFileName)
	p("agents/NAME/%-27s its grid rows of that life\n", episodes.GridFileName)
	p("agents/NAME/%-27s its files: observation/image.png, state/state.json, action.json, outcome.json, …\n", "episodes/<id>/")
	if t.views != nil {
		p("agents/NAME/%-27s views as for your own: sheet.png, observation/image@zoom=4.png, …\n", "episodes/<id>/…")
		p("agents/NAME/%-27s maps of its grid (map/at=X,Z.png, .txt; there is no map/here)\n", "map/")
	}
	p("agents/NAME/%-27s its earlier lives, laid out the same way\n", "previous/life_N/")
	p("agents/NAME/%-27s its notes, when it shares them\n", "mine/")
	p("```\n\n")
	p("A file is fetched from the shared store on first read, then served from a local cache.\n")
	p("To search other agents, add `agent:NAME` (that agent) or `agent:all` (everyone, you included) to\n")
	p("a query; without it a query searches only your own episodes (and `in:mine` only your own notes).\n")
	p("Each row of such a query's `results.jsonl` starts with `\"agent\"` and `\"episode_dir\"` (the\n")
	p("episode's directory in this mount): the row's own `id`, `path` and `image` are that agent's, as in\n")
	p("its store, and another agent's ids can be the same as yours. Each match is a link named\n")
	p("`agents.NAME.<id>`. Another agent's notes are files: `grep -r WORD %s/agents/*/mine/`; an id or\n", mnt)
	p("`step S` in them is that agent's (`ep_000046` in `agents/NAME/mine/notes.md` is\n")
	p("`agents/NAME/episodes/ep_000046`). In your own notes a bare id is yours: cite another agent's\n")
	p("episode by its path, `agents/NAME/episodes/<id>`, which `mine/.check` checks against what this\n")
	p("mount holds of that agent.\n\n")
	p("```sh\n")
	p("ls %s/agents/\n", mnt)
	p("jq -c '{id, summary, tags}' %s/agents/%s/index.jsonl | tail -n 5\n", mnt, example)
	p("cat %s/agents/%s/episodes/%s/outcome.json\n", mnt, example, exampleID)
	p("jq -c '{agent, episode_dir, summary}' '%s/q/agent:all tag:stuck last:5/results.jsonl'\n", mnt)
	p("ls '%s/q/agent:%s last:3/'\n", mnt, example)
	p("```\n")
	return b.String()
}
