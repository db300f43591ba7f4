package fs_test

import (
	"context"
	"fmt"
	"image"
	"io"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mfm-project/mfm/episodes"
	"github.com/mfm-project/mfm/fs"
	"github.com/mfm-project/mfm/harness"
)

// This mounts a store with one recorded episode, lists the mount and
// the episode through it, reads the first line of the README the mount
// generates, tries to write to the record, and unmounts. It needs
// /dev/fuse, and root or fusermount3 in PATH.
func ExampleMount() {
	dir, err := os.MkdirTemp("", "mfm-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	storeDir, mnt := filepath.Join(dir, "store"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		log.Fatal(err)
	}

	// A store with one episode, recorded the way the harness does.
	store, err := episodes.Init(storeDir)
	if err != nil {
		log.Fatal(err)
	}
	rec, err := harness.NewRecorder(store, harness.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	if err := rec.Begin(harness.Call{Kind: "go_to", Args: []harness.Arg{{Name: "x", Value: 10}}}); err != nil {
		log.Fatal(err)
	}
	step := harness.Step{Action: map[string]any{"forward": 1}, State: harness.State{Step: 1, X: 10, Y: 64, Z: 0, Health: 20}, Frame: image.NewRGBA(image.Rect(0, 0, 4, 4))}
	if err := rec.Step(step); err != nil {
		log.Fatal(err)
	}
	row, err := rec.End()
	if err != nil {
		log.Fatal(err)
	}
	rec.Close()

	// Mount it, list it, unmount.
	srv, err := fs.Mount(context.Background(), store, mnt, fs.Options{
		NoAccessLog: true,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	// Unmount before anything else, also when listing failed: a mount
	// outlives its process.
	err = list(mnt, row.ID)
	if uerr := srv.Unmount(); uerr != nil {
		log.Fatal(uerr)
	}
	srv.Wait()
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// .: README.md episodes grid.jsonl index.jsonl logs.txt map mine now previous q
	// episodes/ep_000000: action.json observation outcome.json state
	// # Your memory (MFM)
	// write index.jsonl: the record is read-only
}

// list prints the mount's root and the episode id, the first line of
// the mount's README.md, and what a write to the record does.
func list(mnt, id string) error {
	for _, d := range []string{".", "episodes/" + id} {
		ents, err := os.ReadDir(filepath.Join(mnt, d))
		if err != nil {
			return err
		}
		fmt.Printf("%s:", d)
		for _, e := range ents {
			fmt.Printf(" %s", e.Name())
		}
		fmt.Println()
	}
	readme, err := os.ReadFile(filepath.Join(mnt, "README.md"))
	if err != nil {
		return err
	}
	fmt.Println(strings.SplitN(string(readme), "\n", 2)[0])
	if err := os.WriteFile(filepath.Join(mnt, "index.jsonl"), nil, 0o644); err != nil {
		fmt.Println("write index.jsonl: the record is read-only")
	}
	return nil
}
