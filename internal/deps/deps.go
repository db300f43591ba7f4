package deps

import (
	_ "github.com/blevesearch/bleve/v2"
	_ "github.com/disintegration/imaging"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/hanwen/go-fuse/v2/fs"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/schollz/progressbar/v3"
	_ "golang.org/x/image/font"
)
