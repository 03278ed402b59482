package report

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// UpdateResults refreshes the generated tables in a results document (such
// as docs/RESULTS.md). Each entry's table sits between the markers
// "<!-- lab:NAME -->" and "<!-- /lab:NAME -->"; text outside the markers is
// left as written, so the explanations beside the tables survive a refresh.
// Entries without markers are appended at the end. Entries whose runs have an SFU are gathered
// by directory (e.g. seed000/exp2) into one block of seed 000 style tables (SFUTable).
func UpdateResults(path string, entries []Entry) error {
	return updateDoc(path, func(doc string) string {
		plain, groups, runs := groupSFU(entries)
		for _, e := range plain {
			doc = replaceBlock(doc, e.Name, resultBlock(e))
		}
		for _, g := range groups {
			doc = replaceBlock(doc, g, SFUTable(runs[g]))
		}
		return doc
	})
}

// updateDoc rewrites a results document (created if missing) with edit.
func updateDoc(path string, edit func(doc string) string) error {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	doc := string(data)
	if doc == "" {
		doc = "# Lab results\n"
	}
	return os.WriteFile(path, []byte(edit(doc)), 0o644)
}

func markers(name string) (string, string) {
	return "<!-- lab:" + name + " -->", "<!-- /lab:" + name + " -->"
}

func replaceBlock(doc, name, body string) string {
	open, close := markers(name)
	block := open + "\n" + body + close
	i := strings.Index(doc, open)
	j := strings.Index(doc, close)
	if i < 0 || j < i {
		return strings.TrimRight(doc, "\n") + "\n\n### " + name + "\n\n" + block + "\n"
	}
	return doc[:i] + block + doc[j+len(close):]
}

// resultBlock is an entry's generated table.
func resultBlock(e Entry) string {
	var b strings.Builder
	switch {
	case e.Err != nil:
		fmt.Fprintf(&b, "Run failed: %v\n", e.Err)
	case e.Sweep != nil:
		b.WriteString(SweepTable(e.Sweep))
	case e.Run != nil:
		s := e.Run.Summary
		b.WriteString(FlowTable(s))
		fmt.Fprintf(&b, "\n%s Seed %d, %g s.\n", jainLine(s), s.Seed, s.DurationS)
	}
	return b.String()
}
