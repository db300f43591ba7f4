package fs

import "hash/fnv"

// Inode numbers. Pass-through nodes use the backing st_ino xor a per-subtree
// salt shifted into the high 32 bits (see subtree salts below), so the same
// backing file reached through two subtrees (episodes/ and, after a new
// life, previous/) never aliases one node. Virtual nodes live in the top
// half of the space: bit 63 set, the rest a hash of parent inode and name.
const virtualInoBit = uint64(1) << 63

// Subtree salts for the pass-through LoopbackRoots (mixed into Dev).
const (
	saltEpisodes = 1
	saltPrevious = 2
	saltMine     = 3
)

// virtualIno returns a stable inode number for the virtual entry name under
// the node with inode number parent.
func virtualIno(parent uint64, name string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(parent >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(name))
	return h.Sum64() | virtualInoBit
}
