// Package episodes owns the MFM store format v1 (docs/STORE.md): the layout
// of a store directory, episode records, append-only JSONL files with atomic
// rows and torn-tail recovery, the exclusive writer lock, streaming readers
// and lives. It knows nothing about FUSE, queries or images.
//
// A store is plain files and the only source of truth:
//
//	mfm-store.json          format marker (format, version, id, created)
//	logs.txt                turn log, one line per write
//	index.jsonl             one row per completed episode (the paper's fields)
//	grid.jsonl              spatial record: {"cell": [x, y, z], "kind": ..., "step": ...}
//	episodes/ep_NNNNNN/     observation/image.png, state/state.json, action.json,
//	                        outcome.json, optional frames/NNNNNN.png + steps.jsonl
//	now/                    state.json and frame.png as the harness last wrote them
//	previous/life_N/        earlier lives, frozen
//	mine/                   the agent's own files
//	.mfm/                   derived, disposable: locks, indexes, caches, logs
package episodes
