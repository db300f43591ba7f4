package luanti

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand"
	"strings"
)

// Agent is a scripted player: it scans, walks to trees and fells them,
// explores, digs down into a hole it then cannot walk out of, pillars up
// out of it, builds a tower and jumps off (fall damage), eats when hurt,
// and goes back to places it has been.
type Agent struct {
	C   *Controller
	Rng *rand.Rand
	Log *slog.Logger

	visited []Vec
	tried   map[[3]int]int // collect_drops attempts per item cell
}

// Play runs until ctx ends or n episodes are recorded (n <= 0: no limit).
func (a *Agent) Play(ctx context.Context, n int) error {
	if a.Rng == nil {
		a.Rng = rand.New(rand.NewSource(1))
	}
	if a.Log == nil {
		a.Log = slog.Default()
	}
	c := a.C
	if n > 0 {
		// Stop at exactly n episodes, also in the middle of a round.
		defer func(limit int) { c.EpisodeLimit = limit }(c.EpisodeLimit)
		c.EpisodeLimit = n
	}
	enough := func() bool { return ctx.Err() != nil || (n > 0 && c.Stats.Episodes >= n) }
	round := 0
	for !enough() {
		round++
		var err error
		_, entombed := c.Cur.EntombedIn()
		switch {
		case entombed:
			err = a.digOut()
		case c.Cur.HP > 0 && c.Cur.HP <= 15:
			err = a.eat()
		case a.dropsNearby():
			err = a.collect()
		case round%9 == 4:
			err = a.holeAndClimb()
		case round%9 == 7:
			err = a.towerJump()
		case round%6 == 5 && len(a.visited) > 2:
			err = a.revisit()
		default:
			if _, ok := c.Cur.NearestTree(); ok && round%4 != 3 {
				err = a.fellTree()
			} else {
				err = a.explore()
			}
		}
		if errors.Is(err, ErrEpisodeLimit) {
			return nil
		}
		if err != nil {
			return err
		}
		a.Log.Info("luanti agent", "round", round, "episodes", c.Stats.Episodes, "pos", fmt.Sprintf("%.0f,%.0f,%.0f", c.Cur.Pos.X, c.Cur.Pos.Y, c.Cur.Pos.Z), "hp", c.Cur.HP)
	}
	return nil
}

func (a *Agent) remember() {
	p := a.C.Cur.Pos
	for _, v := range a.visited {
		if math.Hypot(v.X-p.X, v.Z-p.Z) < 4 {
			return
		}
	}
	a.visited = append(a.visited, p)
}

func (a *Agent) explore() error {
	c := a.C
	if _, err := c.ScanAround(); err != nil {
		return err
	}
	if _, ok := c.Cur.NearestTree(); ok && a.Rng.Intn(2) == 0 {
		return nil
	}
	ang := a.Rng.Float64() * 2 * math.Pi
	d := 8 + a.Rng.Float64()*10
	tx, tz := c.Cur.Pos.X+d*math.Cos(ang), c.Cur.Pos.Z+d*math.Sin(ang)
	if _, err := c.GoTo(tx, tz, 1.0); err != nil {
		return err
	}
	a.remember()
	if a.Rng.Intn(3) == 0 {
		_, err := c.Watch(15)
		return err
	}
	return nil
}

func (a *Agent) fellTree() error {
	c := a.C
	t, ok := c.Cur.NearestTree()
	if !ok {
		return nil
	}
	// Stand next to the trunk on the side we come from.
	cx, cz := t.Base.X, t.Base.Z
	dx, dz := c.Cur.Pos.X-cx, c.Cur.Pos.Z-cz
	l := math.Hypot(dx, dz)
	if l < 0.1 {
		dx, dz, l = 1, 0, 1
	}
	if _, err := c.GoTo(cx+dx/l*1.5, cz+dz/l*1.5, 0.6); err != nil {
		return err
	}
	a.remember()
	if err := c.Wield("default:axe_stone"); err != nil {
		return err
	}
	// Fell the column bottom up from the feet (the lowest trunk block is
	// usually sunk in the ground) as far as the axe reaches (4 blocks
	// above the feet); leaves, plants and other trunks in the way are cut
	// first.
	x, z := int(cx), int(cz)
	feet := int(math.Floor(c.Cur.Pos.Y + 0.5))
	bottom := max(int(t.Base.Y), feet)
	top := min(int(t.Base.Y)+t.Height-1, feet+4)
	felled := 0
	for y := bottom; y <= top; y++ {
		for try := 0; try < 3; try++ {
			r, err := c.LookAt(x, y, z)
			if err != nil {
				return err
			}
			p := c.Cur.PointedAt()
			if p == nil || (!r.OK && !p.Soft && !strings.HasSuffix(p.Node, "tree")) {
				break // nothing, or something hard in the way: give up on this block
			}
			res, err := c.MineAhead()
			if err != nil {
				return err
			}
			if r.OK && res.OK {
				felled++
				break
			}
		}
	}
	if felled == 0 {
		return nil
	}
	// A tree felled to the top drops its leaves' saplings and apples
	// within seconds (leaf decay, where no other trunk is near): wait;
	// the main loop picks them up.
	if top-bottom+1 == felled && top == int(t.Base.Y)+t.Height-1 {
		if _, err := c.Watch(80); err != nil {
			return err
		}
	}
	return nil
}

// dropsNearby reports a dropped item within 8 blocks that the agent has
// not already failed to pick up twice.
func (a *Agent) dropsNearby() bool {
	for _, it := range a.C.Cur.Items {
		if a.tried[itemCell(it)] < 2 {
			return true
		}
	}
	return false
}

func itemCell(it Item) [3]int {
	return [3]int{int(math.Floor(it.Pos.X)), int(math.Floor(it.Pos.Y)), int(math.Floor(it.Pos.Z))}
}

func (a *Agent) collect() error {
	if a.tried == nil {
		a.tried = map[[3]int]int{}
	}
	skip := func(it Item) bool { return a.tried[itemCell(it)] >= 2 }
	it, _ := nearestItem(a.C.Cur, skip)
	r, err := a.C.CollectDrops(skip)
	if err == nil && !r.OK {
		a.tried[itemCell(it)]++
	}
	return err
}

// holeAndClimb digs a shaft under the feet, tries to walk out (stuck),
// then pillars back up with dirt.
func (a *Agent) holeAndClimb() error {
	c := a.C
	if err := c.Wield("default:pick_stone"); err != nil {
		return err
	}
	if _, err := c.DigDown(3); err != nil {
		return err
	}
	ang := a.Rng.Float64() * 2 * math.Pi
	if _, err := c.GoTo(c.Cur.Pos.X+6*math.Cos(ang), c.Cur.Pos.Z+6*math.Sin(ang), 1.0); err != nil {
		return err
	}
	if _, err := c.ScanAround(); err != nil {
		return err
	}
	if err := c.Wield("default:dirt"); err != nil {
		return err
	}
	if _, err := c.PillarUp(3); err != nil {
		return err
	}
	if _, err := c.GoTo(c.Cur.Pos.X+3*math.Cos(ang), c.Cur.Pos.Z+3*math.Sin(ang), 1.0); err != nil {
		return err
	}
	a.remember()
	return nil
}

// towerJump builds a dirt tower high enough to hurt (Luanti deals fall
// damage from about 10 blocks) and walks off it.
func (a *Agent) towerJump() error {
	c := a.C
	if c.Cur.HP <= 12 {
		return nil // too weak to risk the fall
	}
	if c.Cur.Inventory["default:dirt"] < 14 {
		if err := c.Wield("default:shovel_stone"); err != nil {
			return err
		}
		_, err := c.DigDown(2)
		return err
	}
	// Open sky is needed: go back to the last place under open sky, or
	// walk away from the canopy.
	if o := c.OpenSky; c.Cur.Headroom < 15 && o != nil && math.Hypot(o.X-c.Cur.Pos.X, o.Z-c.Cur.Pos.Z) < 40 {
		if _, err := c.GoTo(o.X, o.Z, 0.5); err != nil {
			return err
		}
	}
	for try := 0; try < 4 && c.Cur.Headroom < 15; try++ {
		ang := a.Rng.Float64() * 2 * math.Pi
		if _, err := c.GoTo(c.Cur.Pos.X+8*math.Cos(ang), c.Cur.Pos.Z+8*math.Sin(ang), 1.0); err != nil {
			return err
		}
	}
	if c.Cur.Headroom < 15 {
		return nil
	}
	if err := c.Wield("default:dirt"); err != nil {
		return err
	}
	if _, err := c.PillarUp(13); err != nil {
		return err
	}
	if _, err := c.LookAbs(c.Cur.Yaw, 20); err != nil {
		return err
	}
	if _, err := c.Watch(10); err != nil {
		return err
	}
	yaw := c.Cur.Yaw * math.Pi / 180
	if _, err := c.GoTo(c.Cur.Pos.X-2.5*math.Sin(yaw), c.Cur.Pos.Z+2.5*math.Cos(yaw), 0.7); err != nil {
		return err
	}
	_, err := c.Watch(10)
	return err
}

func (a *Agent) eat() error {
	c := a.C
	if c.Cur.Inventory["default:apple"] < 1 {
		_, err := c.Watch(20)
		return err
	}
	if err := c.Wield("default:apple"); err != nil {
		return err
	}
	_, err := c.Eat()
	return err
}

func (a *Agent) revisit() error {
	c := a.C
	v := a.visited[a.Rng.Intn(len(a.visited))]
	if _, err := c.GoTo(v.X, v.Z, 1.0); err != nil {
		return err
	}
	_, err := c.LookAbs(c.Cur.Yaw+180, 0)
	return err
}

// digOut frees the eye from the block it is inside (a pillar into a
// canopy, a fall into a shaft): with the pickaxe, which breaks dirt,
// stone and wood alike.
func (a *Agent) digOut() error {
	c := a.C
	if c.Cur.Inventory["default:pick_stone"] > 0 {
		if err := c.Wield("default:pick_stone"); err != nil {
			return err
		}
	}
	_, err := c.DigOut()
	return err
}
