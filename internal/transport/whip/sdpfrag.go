package whip

import (
	"fmt"
	"strconv"
	"strings"
)

// frag is a parsed application/trickle-ice-sdpfrag body (RFC 8840), as WHIP clients PATCH it:
// the ICE credentials (session level or per media section) and the candidates per media section.
type frag struct {
	Ufrag, Pwd string
	Cands      []fragCandidate
	End        bool // a=end-of-candidates: the client has gathered everything
}

// fragCandidate is one trickled candidate and the media section it belongs to.
type fragCandidate struct {
	Mid        string
	MLineIndex int
	Candidate  string // "candidate:..." as Janus's trickle carries it
}

// maxFragLines bounds the work one PATCH can cause, whatever the body limit.
const maxFragLines = 1000

// parseFrag parses an sdpfrag strictly enough that garbage is refused (400) rather than handed on:
// every line is a known SDP type, credentials are consistent, candidates have the fields of RFC 8839.
func parseFrag(body string) (frag, error) {
	var f frag
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	if len(lines) > maxFragLines {
		return f, fmt.Errorf("%d lines, at most %d", len(lines), maxFragLines)
	}
	mline := -1
	mid := ""
	for i, line := range lines {
		line = strings.TrimRight(line, "\r")
		if line == "" {
			continue
		}
		if len(line) < 2 || line[1] != '=' {
			return f, fmt.Errorf("line %d is not an SDP line", i+1)
		}
		switch line[0] {
		case 'm':
			mline++
			mid = ""
			continue
		case 'a':
		case 'c', 'b', 'i', 'k', 'v', 'o', 's', 't':
			continue // harmless in a fragment; nothing to take from them
		default:
			return f, fmt.Errorf("line %d: unexpected SDP type %q", i+1, line[0])
		}
		name, value, _ := strings.Cut(line[2:], ":")
		switch name {
		case "mid":
			if value == "" {
				return f, fmt.Errorf("line %d: empty mid", i+1)
			}
			mid = value
		case "ice-ufrag", "ice-pwd":
			if err := setCredential(&f, name, value); err != nil {
				return f, fmt.Errorf("line %d: %w", i+1, err)
			}
		case "candidate":
			if mline < 0 {
				return f, fmt.Errorf("line %d: candidate outside a media section", i+1)
			}
			if err := checkCandidate(value); err != nil {
				return f, fmt.Errorf("line %d: %w", i+1, err)
			}
			f.Cands = append(f.Cands, fragCandidate{Mid: mid, MLineIndex: mline, Candidate: "candidate:" + value})
		case "end-of-candidates":
			f.End = true
		}
	}
	if (f.Ufrag == "") != (f.Pwd == "") {
		return f, fmt.Errorf("ice-ufrag and ice-pwd go together")
	}
	return f, nil
}

// setCredential records a credential; a fragment naming two different values is contradictory
// (BUNDLE means one ICE agent, so one set of credentials).
func setCredential(f *frag, name, value string) error {
	if value == "" || strings.ContainsAny(value, " \t") {
		return fmt.Errorf("bad %s", name)
	}
	dst := &f.Ufrag
	if name == "ice-pwd" {
		dst = &f.Pwd
	}
	if *dst != "" && *dst != value {
		return fmt.Errorf("two different %s values", name)
	}
	*dst = value
	return nil
}

// checkCandidate checks the fixed fields of a candidate attribute: foundation, component, transport,
// priority, address, port, "typ", type. The ICE agent parses it again; this only keeps garbage out.
func checkCandidate(v string) error {
	fs := strings.Fields(v)
	if len(fs) < 8 || fs[6] != "typ" {
		return fmt.Errorf("malformed candidate")
	}
	if _, err := strconv.ParseUint(fs[1], 10, 8); err != nil {
		return fmt.Errorf("malformed candidate component")
	}
	if _, err := strconv.ParseUint(fs[3], 10, 32); err != nil {
		return fmt.Errorf("malformed candidate priority")
	}
	if p, err := strconv.ParseUint(fs[5], 10, 16); err != nil || p == 0 && !strings.EqualFold(fs[2], "tcp") {
		return fmt.Errorf("malformed candidate port")
	}
	return nil
}

// iceCredentials returns the first ice-ufrag and ice-pwd of a full SDP.
func iceCredentials(sdp string) (ufrag, pwd string) {
	for _, line := range strings.Split(sdp, "\n") {
		line = strings.TrimRight(line, "\r")
		if v, ok := strings.CutPrefix(line, "a=ice-ufrag:"); ok && ufrag == "" {
			ufrag = v
		}
		if v, ok := strings.CutPrefix(line, "a=ice-pwd:"); ok && pwd == "" {
			pwd = v
		}
	}
	return ufrag, pwd
}

// withCredentials rewrites an offer for an ICE restart the client asked for in an sdpfrag: the same
// media with the new credentials and no old candidates, so the plugin renegotiates it as any offer.
func withCredentials(sdp, ufrag, pwd string) string {
	var b strings.Builder
	for _, line := range strings.Split(sdp, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "a=ice-ufrag:"):
			line = "a=ice-ufrag:" + ufrag
		case strings.HasPrefix(line, "a=ice-pwd:"):
			line = "a=ice-pwd:" + pwd
		case strings.HasPrefix(line, "a=candidate:"), line == "a=end-of-candidates":
			continue
		}
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	return b.String()
}

// answerFrag is the sdpfrag answering an ICE restart (RFC 9725 4.3.2): the server's new credentials
// and candidates, per media section of its answer.
func answerFrag(answer string) string {
	var b strings.Builder
	for _, line := range strings.Split(answer, "\n") {
		line = strings.TrimRight(line, "\r")
		switch {
		case strings.HasPrefix(line, "a=ice-options:"), strings.HasPrefix(line, "a=group:BUNDLE"):
		case strings.HasPrefix(line, "m="), strings.HasPrefix(line, "a=mid:"):
		case strings.HasPrefix(line, "a=ice-ufrag:"), strings.HasPrefix(line, "a=ice-pwd:"):
		case strings.HasPrefix(line, "a=candidate:"), line == "a=end-of-candidates":
		default:
			continue
		}
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	return b.String()
}
