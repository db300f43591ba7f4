package view

import "fmt"

func (v *Viewer) mapStamp(s Spec) string { return "" }

func (v *Viewer) renderMap(s Spec) ([]byte, error) {
	return nil, fmt.Errorf("maps are not implemented yet")
}
