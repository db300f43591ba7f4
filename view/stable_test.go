package view

import "testing"

// TestStable: the kernel may cache exactly the views of recorded files —
// frame views and sheets of episodes (this life's or an earlier one's)
// and an earlier life's maps — never then-and-now (it shows
// now/frame.png), views of now/, or the current life's maps.
func TestStable(t *testing.T) {
	var v *Viewer // Stable needs no store
	for rel, want := range map[string]bool{
		"episodes/ep_000001/observation/image@crop=8,4,16,8@zoom=2.png":           true,
		"episodes/ep_000001/frames/000003@grid.png":                               true,
		"previous/life_1/episodes/ep_000004/observation/image@zoom=2.png":         true,
		"episodes/ep_000001/sheet.png":                                            true,
		"previous/life_1/episodes/ep_000004/sheet.png":                            true,
		"previous/life_2/map/here.txt":                                            true,
		"previous/life_2/map/at=1,2@r=4.png":                                      true,
		"episodes/ep_000001/observation/image@thennow.png":                        false,
		"previous/life_1/episodes/ep_000004/observation/image@zoom=2@thennow.png": false,
		"now/frame@zoom=2.png":                                                    false,
		"map/here.png":                                                            false,
		"map/at=1,2.txt":                                                          false,
		"episodes/ep_000001/observation/image@zoom=02.png":                        false, // not canonical: an error
		"episodes/ep_000001/observation/image.png":                                false, // not a view
		"mine/notes@zoom=2.png":                                                   false,
	} {
		if got := Stable(rel); got != want {
			t.Errorf("Stable(%q) = %v, want %v", rel, got, want)
		}
		if got := v.Stable(rel); got != want {
			t.Errorf("(*Viewer).Stable(%q) = %v, want %v", rel, got, want)
		}
	}
}
