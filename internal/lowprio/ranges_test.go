package lowprio

import "testing"

func TestSpans(t *testing.T) {
	cases := []struct {
		name string
		add  []span
		want []span
	}{
		{"disjoint sorted", []span{{5, 6}, {1, 2}, {8, 9}}, []span{{1, 2}, {5, 6}, {8, 9}}},
		{"adjacent merge", []span{{1, 2}, {2, 3}}, []span{{1, 3}}},
		{"bridge", []span{{1, 2}, {5, 6}, {8, 9}, {2, 8}}, []span{{1, 9}}},
		{"contained", []span{{1, 9}, {3, 4}}, []span{{1, 9}}},
		{"empty ignored", []span{{4, 4}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l spans
			for _, s := range c.add {
				l.add(s.start, s.end)
			}
			if l.n != len(c.want) {
				t.Fatalf("got %v, want %v", l.s[:l.n], c.want)
			}
			for i, w := range c.want {
				if l.s[i] != w {
					t.Fatalf("got %v, want %v", l.s[:l.n], c.want)
				}
			}
		})
	}
}

func TestSpansFullAndAdvance(t *testing.T) {
	var l spans
	for i := range uint64(maxSpans) {
		if !l.add(2*i+1, 2*i+2) {
			t.Fatalf("full at %d", i)
		}
	}
	if l.add(1000, 1001) || l.n != maxSpans {
		t.Fatal("a full list took a new run")
	}
	if !l.add(2, 3) || l.n != maxSpans-1 {
		t.Fatal("a merging run was refused by a full list")
	}
	if p := l.advance(1); p != 4 || l.contains(1, 4) || !l.contains(5, 6) {
		t.Fatalf("advance to %d, list %v", p, l.s[:l.n])
	}
}
