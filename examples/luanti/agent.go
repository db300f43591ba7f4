package luanti

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand"
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
	enough := func() bool { return ctx.Err() != nil || (n > 0 && c.Stats.Episodes >= n) }
	round := 0
	for !enough() {
		round++
		var err error
		switch {
		case c.Cur.HP > 0 && c.Cur.HP < 15:
			err = a.eat()
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
	dx, dz := c.Cur.Pos.X-t.X, c.Cur.Pos.Z-t.Z
	l := math.Hypot(dx, dz)
	if l < 0.1 {
		dx, dz, l = 1, 0, 1
	}
	if _, err := c.GoTo(t.X+dx/l*1.6, t.Z+dz/l*1.6, 0.6); err != nil {
		return err
	}
	a.remember()
	if err := c.Wield("default:axe_stone"); err != nil {
		return err
	}
	// Find the lowest trunk block at or above the feet level.
	base := int(math.Round(c.Cur.Pos.Y))
	for dy := 0; dy < 4; dy++ {
		r, err := c.LookAt(int(t.X), base+dy, int(t.Z))
		if err != nil {
			return err
		}
		if !r.OK {
			p := c.Cur.PointedAt()
			if p == nil || p.Node != "default:tree" {
				continue
			}
		}
		if p := c.Cur.PointedAt(); p == nil || p.Node == "default:leaves" || p.Node == "default:dirt_with_grass" {
			if _, err := c.MineAhead(); err != nil { // leaves in the way
				return err
			}
			continue
		}
		if _, err := c.MineAhead(); err != nil {
			return err
		}
	}
	_, err := c.CollectDrops()
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

// towerJump builds a dirt tower and walks off it.
func (a *Agent) towerJump() error {
	c := a.C
	if err := c.Wield("default:dirt"); err != nil {
		return err
	}
	if c.Cur.Inventory["default:dirt"] < 8 {
		if err := c.Wield("default:shovel_stone"); err != nil {
			return err
		}
		if _, err := c.DigDown(2); err != nil {
			return err
		}
		return nil
	}
	if _, err := c.PillarUp(7); err != nil {
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
