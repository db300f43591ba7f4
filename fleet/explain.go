package fleet

import (
	"context"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/index"
	"github.com/mfm-project/mfm/index/query"
)

// ExplainFunc renders q/<query>/explain (fs.Hooks.Explain has this shape).
type ExplainFunc func(ctx context.Context, q string) ([]byte, error)

// Explainer wraps the mount's explain: a query with agent:NAME or
// agent:all is explained over the rows this mount holds of those agents
// (its own store's for this agent), term by term as a local query is;
// any other query goes to local.
func (n *Node) Explainer(local ExplainFunc) ExplainFunc {
	return func(ctx context.Context, s string) ([]byte, error) {
		pq, err := query.Parse(s)
		if err != nil {
			return nil, err
		}
		if !pq.AllAgents && pq.Agent == "" {
			return local(ctx, s)
		}
		if pq.InMine {
			return nil, &query.Error{Term: "in:mine", Msg: "in:mine is answered over this agent's own notes only; drop agent: or in:mine"}
		}
		var sources []index.ExplainSource
		if pq.AllAgents || pq.Agent == n.cfg.Agent {
			own, err := index.StoreSource(n.cfg.Store, n.cfg.Agent)
			if err != nil {
				return nil, err
			}
			sources = append(sources, own)
		}
		for _, a := range n.cat.agentNames() {
			if pq.AllAgents || pq.Agent == a {
				sources = append(sources, n.cat.explainSource(a))
			}
		}
		if pq.Agent != "" && pq.Agent != n.cfg.Agent && len(sources) == 0 {
			return nil, &query.Error{Term: "agent:" + pq.Agent, Msg: "no episode of this agent in the shared memory"}
		}
		return index.ExplainSources(ctx, s, sources, nil)
	}
}

// explainSource is agent's lives as held in the catalog's index files.
func (c *catalog) explainSource(agent string) index.ExplainSource {
	lives := c.lives(agent)
	c.mu.RLock()
	defer c.mu.RUnlock()
	src := index.ExplainSource{Agent: agent}
	a := c.agents[agent]
	if a == nil {
		return src
	}
	for _, n := range lives {
		prefix := TreeName + "/" + agent
		if n != a.max {
			prefix += "/" + episodes.PreviousDir + "/" + episodes.LifeName(n)
		}
		src.Lives = append(src.Lives, index.ExplainLife{N: n, Index: a.lives[n].path, Prefix: prefix})
	}
	return src
}
