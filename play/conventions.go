package play

import (
	"fmt"
	"strings"
)

// Conventions are the facts about directions, positions, goals and steps
// an agent needs to read the state and write plans; the brief and
// mfmd act --list print them. The yaw convention is the harness's (the
// game adapter turns with yaw = atan2(-dx, dz)).
var Conventions = []string{
	"Yaw (degrees): 0 faces +z, 90 faces -x, 180 faces -z, 270 faces +x (a larger yaw is a turn to the left). " +
		"Pitch: 0 is level, positive looks down (90 straight down, -90 up; kept within ±89).",
	"Positions: state.json gives the exact position ([STATE] to 0.1; x and z horizontal, y at the feet). " +
		"The game's blocks are centred on whole numbers: the block you stand in is (round(x), round(y), round(z)), " +
		"the one under your feet is `below`; look_at, `pointed` and the events use these block coordinates. " +
		"grid.jsonl cells and map/ views use floor(x), floor(y), floor(z) instead: half a block off (cell -67 holds x from -67 to -66).",
	"Goals: `away>=N` and `near start r=R` / `near X,Z r=R` measure horizontally (2-D: height does not count); " +
		"`near X,Y,Z r=R` is 3-D.",
	"Steps: a step is one game tick (about 0.1 s). The plan cap counts every entry at its worst-case " +
		"estimate ([steps] in mfmd act --list; a raw action xN counts N+1, a procedure the sum of its items'), " +
		"even though most calls take fewer; a refused plan lists the estimates. A failed entry ends the plan.",
	"Time: the game's clock runs on in real time, also while you think between plans. " + nightFact,
}

// Day and night by the state's time_of_day (0..1, 0.5 noon): the engine's
// day-night light ratio (Luanti's daynightratio.h) is at its night floor
// below 4375/24000 and full from 6125/24000, symmetric about noon. Frames
// are dark while the ratio is below half (before 5375/24000), as the
// committed runs' frames show.
const (
	darkUntil = 5375.0 / 24000 // ≈ 0.224: frames dark before
	fullDay   = 6125.0 / 24000 // ≈ 0.255: full daylight from
	// dusk starts when the light begins to fall (symmetric to fullDay)
	duskFrom = 1 - fullDay
	darkFrom = 1 - darkUntil
)

var nightFact = fmt.Sprintf("At night (time_of_day after ≈ %.2f or before ≈ %.2f) the frames are dark and show little: "+
	"place torches (select item=torch, then place on a block face), wait it out (watch), or work from the state, the map and your notes; "+
	"the turn block warns with [WARN] night.", darkFrom, darkUntil)

// nightWarning is the [WARN] line for the state's time of day ("" by day
// or when the state has no time_of_day).
func nightWarning(tod float64, ok bool) string {
	switch {
	case !ok:
		return ""
	case tod < darkUntil || tod > darkFrom:
		return fmt.Sprintf("night (time_of_day %.3f): frames are dark until time_of_day ≈ %.2f (full daylight from %.2f); place torches, wait, or work from the state and the map", tod, darkUntil, fullDay)
	case tod > duskFrom:
		return fmt.Sprintf("dusk (time_of_day %.3f): the frames go dark at time_of_day ≈ %.2f", tod, darkFrom)
	}
	return ""
}

func conventionsText(indent string) string {
	var b strings.Builder
	for _, c := range Conventions {
		fmt.Fprintf(&b, "%s- %s\n", indent, c)
	}
	return b.String()
}
