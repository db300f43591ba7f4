package fleet

import (
	"strings"
	"testing"
)

func TestParseObjectsURL(t *testing.T) {
	for _, c := range []struct{ in, bucket, prefix, err string }{
		{"s3://team", "team", "", ""},
		{"s3://team/", "team", "", ""},
		{"s3://team/run1", "team", "run1", ""},
		{"s3://team//a/b/", "team", "a/b", ""},
		{"s3://team/a/../../b", "team", "b", ""},
		{"http://team/run1", "", "", "s3://BUCKET"},
		{"s3:///run1", "", "", "s3://BUCKET"},
		{"s3://team/run?x=1", "", "", "s3://BUCKET"},
		{"team/run1", "", "", "s3://BUCKET"},
		{"s3://user@team/p", "", "", "s3://BUCKET"},
		{"s3://team:9000/p", "", "", "s3://BUCKET"},
	} {
		b, p, err := parseObjectsURL(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want one saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || b != c.bucket || p != c.prefix {
			t.Errorf("%q = %q, %q, %v; want %q, %q", c.in, b, p, err, c.bucket, c.prefix)
		}
	}
}

// FuzzParseObjectsURL: any accepted URL names a bucket and a prefix that
// stays inside it (no empty, "." or ".." segment, no slash at either end).
func FuzzParseObjectsURL(f *testing.F) {
	for _, s := range []string{"s3://team/run1", "s3://b", "s3://b/../x", "http://x", "s3://b/a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, p, err := parseObjectsURL(s)
		if err != nil {
			return
		}
		if b == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
			t.Fatalf("%q: bucket %q prefix %q", s, b, p)
		}
		if p != "" {
			for _, seg := range strings.Split(p, "/") {
				if seg == "" || seg == "." || seg == ".." {
					t.Fatalf("%q: prefix %q has segment %q", s, p, seg)
				}
			}
		}
	})
}
