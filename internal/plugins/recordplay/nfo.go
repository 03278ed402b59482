package recordplay

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// A recording is described by a .nfo file next to its .mjr files, in the INI format Janus reads
// with janus_config_parse and writes when a recording ends:
//
//	[12345678]
//	name = My recording
//	date = 2014-10-14 17:11:26
//	audio = rec-12345678-audio.mjr
//	video = rec-12345678-video.mjr
//
// The first [section] names the recording's id; "data" may name a data channel recording (listed,
// not played), and Janus's newer versions add "private". Janus reads a ';' as the start of a
// comment unless escaped as "\;", and strips one '>' that starts a value.

// nfo is what a .nfo file says.
type nfo struct {
	ID                      uint64
	Name, Date              string
	Audio, Video, Data      string
	Private, PrivateWritten bool
}

// maxNFO bounds the size of a .nfo file the plugin reads (Janus's are a few hundred bytes).
const maxNFO = 64 << 10

// parseNFO reads a .nfo file as Janus does and checks what Janus checks: a section whose name is a
// non-zero number, a name and a date, audio or video.
func parseNFO(b []byte) (nfo, error) {
	var n nfo
	if len(b) > maxNFO {
		return n, fmt.Errorf("%d bytes, more than the %d a .nfo may have", len(b), maxNFO)
	}
	section, seen, inFirst := "", false, false
	items := map[string]string{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		if end := bytes.IndexByte(line, 0); end >= 0 {
			line = line[:end] // Janus reads lines as C strings
		}
		text := strings.TrimSpace(stripComment(string(line)))
		if text == "" {
			continue
		}
		if text[0] == '[' {
			end := strings.IndexByte(text, ']')
			name := ""
			if end > 0 {
				name = strings.TrimSpace(text[1:end])
			}
			if name == "" {
				return n, fmt.Errorf("line %d: a section without a name", i+1)
			}
			inFirst = !seen
			if !seen {
				section, seen = name, true
			}
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return n, fmt.Errorf("line %d: not \"name = value\"", i+1)
		}
		value = strings.TrimSpace(value)
		if strings.HasPrefix(value, ">") {
			value = strings.TrimSpace(value[1:])
		}
		key = strings.ToLower(key)
		if _, dup := items[key]; !dup && inFirst { // the first section's first value, as Janus reads
			items[key] = value
		}
	}
	if !seen {
		return n, errors.New("no [id] section")
	}
	id, ok := parseID(section)
	if !ok {
		return n, fmt.Errorf("section [%s] is not a recording id (a number from 1)", section)
	}
	n = nfo{ID: id, Name: items["name"], Date: items["date"], Audio: items["audio"], Video: items["video"], Data: items["data"]}
	if p, ok := items["private"]; ok {
		n.PrivateWritten, n.Private = true, isTrue(p)
	}
	switch {
	case n.Name == "" || n.Date == "":
		return n, fmt.Errorf("recording %d has no name or no date", id)
	case n.Audio == "" && n.Video == "":
		return n, fmt.Errorf("recording %d has neither audio nor video", id)
	}
	return n, nil
}

// stripComment cuts a line at its first unescaped ';' and unescapes "\;", as Janus's INI reader.
func stripComment(line string) string {
	if !strings.Contains(line, ";") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == ';':
			b.WriteByte(';')
			i++
		case line[i] == ';':
			return b.String()
		default:
			b.WriteByte(line[i])
		}
	}
	return b.String()
}

// parseID reads a section name as Janus does (g_ascii_strtoull with base 0: decimal, 0x hex or 0
// octal, trailing text ignored), refusing zero and ids beyond the JSON integers Janus writes ids
// as (jansson's, 63 bits).
func parseID(s string) (uint64, bool) {
	base, digits := 10, s
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, digits = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	end := 0
	for end < len(digits) && isDigit(digits[end], base) {
		end++
	}
	id, err := strconv.ParseUint(digits[:end], base, 64)
	if err != nil || id == 0 || id > maxID {
		return 0, false
	}
	return id, true
}

// maxID is the largest id a request can name (a JSON integer, as jansson reads it).
const maxID = 1<<63 - 1

func isDigit(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base >= 10
	case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}

// isTrue is Janus's janus_is_true.
func isTrue(s string) bool {
	switch strings.ToLower(s) {
	case "true", "yes", "1":
		return true
	}
	return false
}

// format writes the .nfo as Janus does (CRLF line ends, the media lines present only when
// recorded), each value made safe for Janus's reader (nfoValue).
func (n *nfo) format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "[%d]\r\nname = %s\r\ndate = %s\r\n", n.ID, nfoValue(n.Name), nfoValue(n.Date))
	if n.PrivateWritten {
		fmt.Fprintf(&b, "private = %t\r\n", n.Private)
	}
	for _, m := range []struct{ key, file string }{{"audio", n.Audio}, {"video", n.Video}, {"data", n.Data}} {
		if m.file != "" {
			fmt.Fprintf(&b, "%s = %s\r\n", m.key, nfoValue(m.file))
		}
	}
	return b.Bytes()
}

// cleanName is what of a name fits a .nfo line: line breaks and NULs become spaces, and the
// spaces around it go (Janus's reader trims them).
func cleanName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '\r' || c == '\n' || c == 0 {
			b[i] = ' '
		}
	}
	return strings.TrimSpace(string(b))
}

// nfoValue writes a value so that Janus's reader gives it back: ';' escaped (it starts a comment)
// and a leading '>' protected by the one '>' the reader strips.
func nfoValue(s string) string {
	s = strings.ReplaceAll(cleanName(s), ";", `\;`)
	if strings.HasPrefix(s, ">") {
		s = "> " + s
	}
	return s
}
