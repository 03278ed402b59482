package siplab

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"
)

// UAOptions shape a baresip user agent.
type UAOptions struct {
	// ToneHz is the frequency of the sine the agent plays into its calls; 440 when zero.
	ToneHz float64
	// Manual leaves incoming calls ringing instead of answering them at once.
	Manual bool
	// SRTP makes the account require SDES-SRTP (baresip's mediaenc=srtp-mand).
	SRTP bool
	// Codecs restricts the audio codecs offered and accepted ("opus", "pcmu"...); all when nil.
	Codecs []string
}

// sampleRate is the rate of the agent's tone file and of its audio device.
const sampleRate = 48000

var baresipConfig = template.Must(template.New("config").Parse(`poll_method		epoll
sip_listen		{{.IP}}:5060
call_local_timeout	120
call_max_calls		4
audio_player		aubridge,{{.Name}}-play
audio_source		aufile,{{.Tone}}
audio_alert		aubridge,{{.Name}}-alert
ausrc_srate		{{.Rate}}
auplay_srate		{{.Rate}}
ausrc_channels		1
auplay_channels		1
audio_level		no
rtp_ports		20000-20999
rtp_timeout		0
module_path		/usr/lib/baresip/modules
module			g711.so
module			opus.so
module			aufile.so
module			aubridge.so
module			sndfile.so
module			srtp.so
module_app		account.so
module_app		menu.so
module_app		ctrl_tcp.so
ctrl_tcp_listen		{{.IP}}:4444
snd_path		{{.Dir}}/rec
opus_stereo		no
opus_sprop_stereo	no
`))

// Baresip is a running baresip user agent registered with the lab's registrar.
type Baresip struct {
	User User
	IP   string // its address (SIP on port 5060)
	URI  string // its address of record

	lab  *Lab
	dir  string
	proc *proc
	ctrl *ctrlConn
}

// NewBaresip starts a baresip for user in a namespace of its own and waits until it has
// registered (with digest authentication) at the registrar.
func (l *Lab) NewBaresip(u User, o UAOptions) *Baresip {
	l.t.Helper()
	b, err := l.newBaresip(u, o)
	if err != nil {
		l.t.Fatalf("siplab: baresip %s: %v", u.Name, err)
	}
	return b
}

func (l *Lab) newBaresip(u User, o UAOptions) (*Baresip, error) {
	name := fmt.Sprintf("ua%d", l.uas.Add(1))
	ns, addr, err := l.net.addComponent(name)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(l.dir, name)
	if err := os.MkdirAll(filepath.Join(dir, "rec"), 0o755); err != nil {
		return nil, err
	}
	if o.ToneHz == 0 {
		o.ToneHz = 440
	}
	tone := filepath.Join(dir, "tone.wav")
	if err := writeToneWAV(tone, sampleRate, o.ToneHz, 120); err != nil {
		return nil, err
	}
	var cfg strings.Builder
	if err := baresipConfig.Execute(&cfg, map[string]any{"IP": addr, "Name": name, "Tone": tone, "Rate": sampleRate, "Dir": dir}); err != nil {
		return nil, err
	}
	b := &Baresip{User: u, IP: addr, URI: l.URI(u), lab: l, dir: dir}
	files := map[string]string{"config": cfg.String(), "accounts": b.account(o) + "\n", "contacts": ""}
	for f, text := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}
	p, err := l.net.start("baresip "+u.Name, ns, "baresip", "-f", dir)
	if err != nil {
		return nil, err
	}
	b.proc = p
	l.t.Cleanup(func() {
		if l.t.Failed() {
			l.t.Logf("baresip %s log:\n%s", u.Name, p.tail())
		}
	})
	err = waitFor(10*time.Second, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("exited:\n%s", p.tail())
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, "4444"), time.Second)
		if err != nil {
			return false, nil
		}
		b.ctrl = newCtrlConn(c)
		return true, nil
	}, "baresip's control port did not open")
	if err != nil {
		return nil, err
	}
	l.t.Cleanup(func() { b.ctrl.close() })
	// The registration may finish before the control connection is up, so its event can be
	// missed: ask for the registration state instead.
	err = waitFor(10*time.Second, func() (bool, error) {
		resp, err := b.ctrl.command("reginfo", "", 5*time.Second)
		if err != nil {
			return false, err
		}
		return strings.Contains(resp.Data, "OK"), nil
	}, "baresip did not register")
	if err != nil {
		return nil, fmt.Errorf("%v\n%s", err, p.tail())
	}
	return b, nil
}

// account is the line of baresip's accounts file.
func (b *Baresip) account(o UAOptions) string {
	a := fmt.Sprintf("<%s>;auth_pass=%s;regint=600", b.URI, b.User.Password)
	if o.Manual {
		a += ";answermode=manual"
	} else {
		a += ";answermode=auto"
	}
	if o.SRTP {
		a += ";mediaenc=srtp-mand"
	}
	if len(o.Codecs) > 0 {
		a += ";audio_codecs=" + strings.Join(o.Codecs, ",")
	}
	return a
}

// Dial calls uri.
func (b *Baresip) Dial(uri string) error { return b.command("dial", uri) }

// Accept answers the ringing call.
func (b *Baresip) Accept() error { return b.command("accept", "") }

// Hangup ends the current call.
func (b *Baresip) Hangup() error { return b.command("hangup", "") }

// Hold puts the current call on hold (a re-INVITE with sendonly).
func (b *Baresip) Hold() error { return b.command("hold", "") }

// Resume takes the current call off hold.
func (b *Baresip) Resume() error { return b.command("resume", "") }

// SendDTMF sends digits as RFC 4733 telephone-events in the call's RTP, one after another.
func (b *Baresip) SendDTMF(digits string) error {
	for _, d := range digits {
		if err := b.command("sndcode", string(d)); err != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}

func (b *Baresip) command(cmd, params string) error {
	resp, err := b.ctrl.command(cmd, params, 5*time.Second)
	if err != nil {
		return fmt.Errorf("baresip %s %s: %v", cmd, params, err)
	}
	if !resp.OK {
		return fmt.Errorf("baresip %s %s: %s", cmd, params, resp.Data)
	}
	return nil
}

// Wait returns the first event of type typ (CALL_INCOMING, CALL_ESTABLISHED, CALL_CLOSED,
// CALL_DTMF_START...) that no earlier Wait returned, waiting up to timeout for it.
func (b *Baresip) Wait(typ string, timeout time.Duration) (Event, error) {
	ev, err := b.ctrl.wait(typ, timeout)
	if err != nil {
		return ev, fmt.Errorf("baresip %s: %v", b.User.Name, err)
	}
	return ev, nil
}

// Events is every event the agent has sent so far.
func (b *Baresip) Events() []Event { return b.ctrl.all() }

// Log is the agent's output so far.
func (b *Baresip) Log() string { return b.proc.tail() }

// Received is the audio the agent decoded in its latest call (sndfile's "-dec" recording; the
// file grows while the call lasts). baresip 1.0 drops the recorder from its receive pipeline
// when a re-INVITE (hold, resume) restarts the audio, so after one the recording stops growing:
// RTPReceived still counts what arrives.
func (b *Baresip) Received() (PCM, error) { return b.recording("dec") }

// Sent is the audio the agent encoded into its latest call.
func (b *Baresip) Sent() (PCM, error) { return b.recording("enc") }

// RTPReceived is how many RTP packets the current call has received from its peer (the RTCP
// members' counts in baresip's audio_debug).
func (b *Baresip) RTPReceived() (int, error) {
	dbg, err := b.AudioDebug()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range rcvdCount.FindAllStringSubmatch(dbg, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n, nil
}

// AudioDebug is baresip's description of the current call's audio stream: codecs, pipelines,
// addresses, media encryption ("menc: srtp-mand (secure=yes)"), RTP and RTCP counts.
func (b *Baresip) AudioDebug() (string, error) {
	resp, err := b.ctrl.command("audio_debug", "", 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("baresip %s audio_debug: %v", b.User.Name, err)
	}
	return resp.Data, nil
}

var rcvdCount = regexp.MustCompile(`rcvd=(\d+)`)

func (b *Baresip) recording(kind string) (PCM, error) {
	files, _ := filepath.Glob(filepath.Join(b.dir, "rec", "dump-*-"+kind+".wav"))
	if len(files) == 0 {
		return PCM{}, fmt.Errorf("baresip %s: no %s recording yet", b.User.Name, kind)
	}
	sort.Slice(files, func(i, j int) bool {
		a, _ := os.Stat(files[i])
		c, _ := os.Stat(files[j])
		return a.ModTime().Before(c.ModTime())
	})
	return readWAV(files[len(files)-1])
}
