package recordplay

import (
	"os"
	"strings"
	"testing"
)

// Janus's own sample .nfo reads as Janus reads it.
func TestParseJanusSampleNFO(t *testing.T) {
	b, err := os.ReadFile("/usr/share/janus/recordings/1234.nfo")
	if err != nil {
		t.Fatalf("Janus's sample recording (Debian's janus package): %v", err)
	}
	n, err := parseNFO(b)
	if err != nil {
		t.Fatal(err)
	}
	want := nfo{ID: 1234, Name: "Lorenzo says hello!", Date: "2014-10-22 14:44:36", Audio: "rec-sample-audio.mjr", Video: "rec-sample-video.mjr"}
	if n != want {
		t.Errorf("got %+v", n)
	}
}

func TestParseNFO(t *testing.T) {
	good := "[7]\nname = a\ndate = d\naudio = a.mjr\n"
	cases := []struct {
		in   string
		want string // error substring; "" for success
		id   uint64
		name string
	}{
		{good, "", 7, "a"},
		{"; a comment\n[0x10]\r\nname = > hello \\; there ; comment\ndate=x\nvideo=v\n", "", 16, "hello ; there"},
		{"[010]\nname=n\ndate=d\naudio=a\n", "", 8, "n"},
		{"[12abc]\nname=n\ndate=d\naudio=a\n", "", 12, "n"},
		{"[7]\nname = first\nname = second\ndate = d\naudio = a\n[8]\nvideo = v\n", "", 7, "first"},
		{"", "no [id] section", 0, ""},
		{"name = x\n", "no [id] section", 0, ""},
		{"[]\n", "section without a name", 0, ""},
		{"[x]\nname=n\ndate=d\naudio=a\n", "not a recording id", 0, ""},
		{"[0]\nname=n\ndate=d\naudio=a\n", "not a recording id", 0, ""},
		{"[9223372036854775808]\nname=n\ndate=d\naudio=a\n", "not a recording id", 0, ""},
		{"[9223372036854775807]\nname=n\ndate=d\naudio=a\n", "", 1<<63 - 1, "n"},
		{"[7]\ndate=d\naudio=a\n", "no name or no date", 0, ""},
		{"[7]\nname=n\ndate=d\ndata=x\n", "neither audio nor video", 0, ""},
		{"[7]\njust words\n", "not \"name = value\"", 0, ""},
		{"[7]\n= value\n", "not \"name = value\"", 0, ""},
		{strings.Repeat("x", maxNFO+1), "more than", 0, ""},
	}
	for _, c := range cases {
		n, err := parseNFO([]byte(c.in))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		case c.want == "" && (n.ID != c.id || n.Name != c.name):
			t.Errorf("%q: got %+v", c.in, n)
		}
	}
}

// FuzzParseNFO: the parser never panics, and whatever it accepts writes back to a .nfo that reads
// the same (one line per value); any name a request gives survives writing and reading as cleanName makes it.
func FuzzParseNFO(f *testing.F) {
	f.Add([]byte("[1234]\r\nname = Lorenzo says hello!\r\ndate = 2014-10-22 14:44:36\r\naudio = rec-sample-audio.mjr\r\nvideo = rec-sample-video.mjr\r\n"), "a name")
	f.Add([]byte("[0x1f]\nname=>x\\;y;z\ndate=d\nvideo=v\nprivate=yes\n"), "semi;colon")
	f.Add([]byte("[7\nname"), "\r\n>>  ")
	f.Add([]byte("[7]\n[8]\nname=a\n"), "\\;")
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		n, err := parseNFO(b)
		if err == nil {
			// A carriage return inside a value (Janus reads it too) is written as a space.
			for _, v := range []*string{&n.Name, &n.Date, &n.Audio, &n.Video, &n.Data} {
				*v = cleanName(*v)
			}
			again, err := parseNFO(n.format())
			if err != nil || again != n {
				t.Fatalf("%q → %+v → %q → %+v, %v", b, n, n.format(), again, err)
			}
		}
		w := nfo{ID: 1, Name: name, Date: "d", Audio: "a.mjr"}
		got, err := parseNFO(w.format())
		if clean := cleanName(name); clean != "" && (err != nil || got.Name != clean) {
			t.Fatalf("name %q → %q → %+v, %v; want %q", name, w.format(), got, err, clean)
		}
	})
}
