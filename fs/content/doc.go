// Package content is what the MFM mount serves that does not depend on
// FUSE: the generated README.md and the store statistics behind it, the
// latest-state rule of /now/, the access log (store/.mfm/access.jsonl)
// and the error log (/.errors), and the content of query directories
// (q/<query>/ results and the cache of query runs). Package fs serves
// these through go-fuse; everything here is tested without a mount.
package content
