package lru

import (
	"fmt"
	"testing"
)

// TestBudget: the cache never holds more than its budget, evicts the
// least recently used entry first, and refuses a value over a quarter
// of the budget.
func TestBudget(t *testing.T) {
	c := New(100, func(b []byte) int64 { return int64(len(b)) })
	for i := 0; i < 10; i++ {
		c.Put(fmt.Sprint(i), make([]byte, 20))
		if i == 3 {
			c.Get("0") // 0 is now more recent than 1, 2, 3
		}
		if _, used, _, _ := c.Stats(); used > 100 {
			t.Fatalf("after %d puts the cache holds %d bytes, over its budget of 100", i+1, used)
		}
	}
	n, used, _, _ := c.Stats()
	if n != 5 || used != 100 {
		t.Errorf("%d entries, %d bytes; want 5, 100", n, used)
	}
	for _, k := range []string{"5", "6", "7", "8", "9"} {
		if _, ok := c.Get(k); !ok {
			t.Errorf("recent entry %s evicted", k)
		}
	}
	c.Put("big", make([]byte, 26))
	if _, ok := c.Get("big"); ok {
		t.Errorf("a value over a quarter of the budget was kept")
	}
	c.Put("5", make([]byte, 5)) // replacing a value counts its new size
	if _, used, _, _ := c.Stats(); used != 85 {
		t.Errorf("after replacing a value: %d bytes, want 85", used)
	}
}
