package plugin

import (
	"sort"
	"sync"
	"testing"
)

func TestSessionSet(t *testing.T) {
	var ss SessionSet[int]
	if len(ss.All()) != 0 {
		t.Fatal("zero value not empty")
	}
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); ss.Add(i) }(i)
	}
	wg.Wait()
	for i := 0; i < 50; i += 2 {
		ss.Remove(i)
	}
	got := ss.All()
	sort.Ints(got)
	if len(got) != 25 || got[0] != 1 || got[24] != 49 {
		t.Fatalf("All() = %v, want the 25 odd numbers", got)
	}
}
