package view

// Grammar is the view grammar's help text, for the mount's README.md and
// error log; docs/VIEWS.md is the long form.
func (v *Viewer) Grammar() string { return GrammarText }

// GrammarText is the help text Grammar returns.
const GrammarText = `Views are virtual image files: they are not listed by ls, but open by name.

Beside any frame (episodes/ep_N/observation/image.png, episodes/ep_N/frames/NNNNNN.png,
now/frame.png, and the same under previous/life_N/), write the frame's name without .png,
then operations, then .png or .jpg:
  FRAME@crop=X,Y,W,H        a region, in frame pixels (top-left X,Y; width W, height H)
  FRAME@zoom=N              magnify by a whole factor N (2..16), nearest-neighbour
  FRAME@zoom=N,smooth       magnify with smoothing (Lanczos)
  FRAME@grid  FRAME@grid=N  a pixel grid labelled in frame coordinates (a line every N pixels)
  FRAME@thennow             the view beside the same view of now/frame.png, labelled
  FRAME@thennow=QUESTION    ... with the question written beneath (_ shows as a space)
Operations apply in this order and each appears at most once:
  episodes/ep_000012/observation/image@crop=100,50,160,90@zoom=4@grid.png

Contact sheets, one labelled tile per frame (the observation, then frames/ by step):
  episodes/ep_N/sheet.png  episodes/ep_N/sheet@steps=A..B@cols=N@tile=W.png
  q/<query>/sheet.png      the matches of a query

Maps of grid.jsonl, top-down, north up, x growing to the right; cells coloured by kind
(walked, placed, opened, blocked, hazard, water, any other kind brown): a column (all y) shows
its most telling kind (hazard, opened, placed, water, other, walked, blocked), and the legend
counts the columns holding each kind and how many show it; episode positions (index rows) as
dots, in the block the store's axes put them (round for Luanti, floor for Minecraft), the
centre outlined; a scale bar, a north arrow:
  map/here.png             around the current position (now/state.json, else the last index row)
  map/at=X,Z.png           around block X,Z
  options, in this order:
    @r=N       radius in blocks (default 16, at most 256): the map is 2N+1 blocks square
    @y=A..B    only cells with A <= y <= B (default: all y)
    @cell=PX   pixels per block (default 8; image maps only)
    @north=+z  north is +z, z grows upwards (Luanti); @north=-z: north is -z (Minecraft);
               the default is what the store declares (mfm-store.json "axes"), else -z
  map/here.txt             the same as text: one character per block (@ centre, * episode
                           position, . walked, + placed, o opened, # blocked, ! hazard,
                           ~ water, ? other), coordinates, counts, the episodes per position
  previous/life_N/map/...  an earlier life's grid (here: its last index row)
  e.g. map/at=-257,-139@r=8@y=-3..3@north=+z.png  map/here@r=24.txt

Each view has one spelling (plain decimal numbers: no leading zeros, no + sign, 0 not -0;
defaults left out; .jpg not .jpeg, lower case; options in the order above, each at most
once); another spelling is an error that shows the one to use.
`
