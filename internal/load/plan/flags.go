package plan

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
)

// Flags are the plan fields as command-line flags. Register them on a FlagSet, parse, then Build:
// a plan file (when given) is read first and only the flags actually set override it.
type Flags struct {
	fs      *flag.FlagSet
	file    string
	v       Plan
	subs    string
	ice     string
	servers string
}

// RegisterFlags adds the plan flags to fs.
func RegisterFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{fs: fs, v: Default()}
	d := &f.v
	fs.StringVar(&f.file, "plan", "", "YAML plan file (flags given as well override its fields)")
	fs.StringVar(&d.Name, "name", d.Name, "label of the run in reports")
	fs.StringVar(&d.Server, "server", d.Server, "Janus API endpoint, http://HOST:8088/janus or ws://HOST:8188")
	fs.StringVar(&f.servers, "servers", "", "comma-separated Janus API endpoints of a cluster's nodes: publishers on the first, subscribers round-robin over all")
	fs.StringVar(&d.Apart.Address, "apart-address", "", "set the last subscriber apart on this local IP address of its own (the others do not use it), e.g. to put it alone behind a rate limit")
	fs.IntVar(&d.Apart.Server, "apart-server", 0, "index in --servers of the server the apart subscriber joins")
	fs.Uint64Var(&d.Room, "room", d.Room, "videoroom room id")
	fs.BoolVar(&d.CreateRoom, "create-room", d.CreateRoom, "create the room before the run and destroy it after")
	fs.IntVar(&d.Publishers, "publishers", d.Publishers, "number of publishers")
	fs.IntVar(&d.Subscribers, "subscribers", d.Subscribers, "number of receive-only subscribers")
	fs.BoolVar(&d.PublishersSubscribe, "publishers-subscribe", d.PublishersSubscribe, "publishers also receive every other publisher")
	fs.StringVar(&f.subs, "subscribe-to", "", "comma-separated publisher indexes subscribers receive (default all)")
	fs.Float64Var(&d.JoinRate, "join-rate", d.JoinRate, "clients joining per second")
	fs.DurationVar(&d.Duration, "duration", d.Duration, "how long the full load is held after the last join")
	fs.DurationVar(&d.Warmup, "warmup", d.Warmup, "time after the last join before the steady measurement window")
	fs.StringVar(&d.Media, "media", d.Media, "media profile: "+strings.Join(Profiles, ", "))
	fs.IntVar(&d.Substream, "substream", d.Substream, "simulcast layer subscribers ask for (0-2; -1 server default)")
	fs.StringVar(&d.Receiver, "receiver", d.Receiver, "how subscriptions receive: light (count SRTP at the socket, Pion decrypts a sample) or full (Pion's whole receive stack)")
	fs.DurationVar(&d.JoinTimeout, "join-timeout", d.JoinTimeout, "time allowed for one client to connect")
	fs.StringVar(&f.ice, "ice-interface", "", "comma-separated interfaces the clients' ICE may use")
	fs.IntVar(&d.AudioBridge.Participants, "audiobridge", 0, "audio bridge participants (instead of videoroom publishers and subscribers)")
	fs.IntVar(&d.AudioBridge.SamplingRate, "sampling-rate", d.AudioBridge.SamplingRate, "mixing rate of an audio bridge room the run creates")
	fs.IntVar(&d.AudioBridge.Decode, "decode", d.AudioBridge.Decode, "audio bridge participants that decode the mix they receive (SIP callers: the echo they get back)")
	fs.IntVar(&d.Streaming.Viewers, "streaming", 0, "streaming viewers of mountpoint --room (instead of videoroom publishers and subscribers); with --create-room the run creates an rtp mountpoint and feeds it plain RTP")
	fs.IntVar(&d.SIP.Calls, "sip", 0, "SIP callers (janus.plugin.sip, instead of videoroom publishers and subscribers), each calling --sip-uri, an echo service, and checking it hears itself")
	fs.StringVar(&d.SIP.URI, "sip-uri", "", "what the SIP callers call, e.g. sip:echo@10.0.0.1:5060 (sipp -rtp_echo, an Asterisk echo test)")
	fs.IntVar(&d.Talkers, "talkers", d.Talkers, "at most this many participants talk at once (voice media, audio bridge)")
	fs.Uint64Var(&d.Seed, "seed", d.Seed, "seed of who talks when")
	fs.IntVar(&d.Steps.Size, "step", d.Steps.Size, "clients joining per step, with a hold after each (0: no steps)")
	fs.DurationVar(&d.Steps.Hold, "step-hold", d.Steps.Hold, "hold after each step")
	fs.DurationVar(&d.Steps.Settle, "step-settle", d.Steps.Settle, "time after a step's joins before its measurement window")
	fs.BoolVar(&d.Steps.StopWhenBehind, "stop-when-behind", d.Steps.StopWhenBehind, "end the run after the first step where the server fell behind real time")
	return f
}

// Build returns the plan: the file (if any) with the set flags applied, validated.
func (f *Flags) Build() (Plan, error) {
	p := Default()
	switch {
	case f.set("audiobridge"):
		p = DefaultAudioBridge()
	case f.set("streaming"):
		p = DefaultStreaming()
	case f.set("sip"):
		p = DefaultSIP()
	}
	if f.file != "" {
		var err error
		if p, err = Load(f.file); err != nil {
			return p, err
		}
	}
	var err error
	f.fs.Visit(func(fl *flag.Flag) {
		if err == nil {
			err = f.apply(&p, fl.Name)
		}
	})
	if err != nil {
		return p, err
	}
	return p, p.Validate()
}

func (f *Flags) set(name string) bool {
	found := false
	f.fs.Visit(func(fl *flag.Flag) { found = found || fl.Name == name })
	return found
}

func (f *Flags) apply(p *Plan, name string) error {
	v := &f.v
	switch name {
	case "audiobridge":
		p.AudioBridge.Participants = v.AudioBridge.Participants
	case "streaming":
		p.Streaming.Viewers = v.Streaming.Viewers
	case "sip":
		p.SIP.Calls = v.SIP.Calls
	case "sip-uri":
		p.SIP.URI = v.SIP.URI
	case "sampling-rate":
		p.AudioBridge.SamplingRate = v.AudioBridge.SamplingRate
	case "decode":
		p.AudioBridge.Decode = v.AudioBridge.Decode
		p.SIP.Decode = v.AudioBridge.Decode
	case "talkers":
		p.Talkers = v.Talkers
	case "seed":
		p.Seed = v.Seed
	case "step":
		p.Steps.Size = v.Steps.Size
	case "step-hold":
		p.Steps.Hold = v.Steps.Hold
	case "step-settle":
		p.Steps.Settle = v.Steps.Settle
	case "stop-when-behind":
		p.Steps.StopWhenBehind = v.Steps.StopWhenBehind
	case "name":
		p.Name = v.Name
	case "server":
		p.Server = v.Server
	case "servers":
		p.Servers = splitList(f.servers)
	case "apart-address":
		p.Apart.Address = v.Apart.Address
	case "apart-server":
		p.Apart.Server = v.Apart.Server
	case "room":
		p.Room = v.Room
	case "create-room":
		p.CreateRoom = v.CreateRoom
	case "publishers":
		p.Publishers = v.Publishers
	case "subscribers":
		p.Subscribers = v.Subscribers
	case "publishers-subscribe":
		p.PublishersSubscribe = v.PublishersSubscribe
	case "subscribe-to":
		idx, err := ParseIndexes(f.subs)
		if err != nil {
			return fmt.Errorf("-subscribe-to: %w", err)
		}
		p.SubscribeTo = idx
	case "join-rate":
		p.JoinRate = v.JoinRate
	case "duration":
		p.Duration = v.Duration
	case "warmup":
		p.Warmup = v.Warmup
	case "media":
		p.Media = v.Media
	case "substream":
		p.Substream = v.Substream
	case "receiver":
		p.Receiver = v.Receiver
	case "join-timeout":
		p.JoinTimeout = v.JoinTimeout
	case "ice-interface":
		p.ICEInterfaces = splitList(f.ice)
	}
	return nil
}

// ParseIndexes reads "0,2,5" (spaces allowed; empty means none).
func ParseIndexes(s string) ([]int, error) {
	var out []int
	for _, part := range splitList(s) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a publisher index", part)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
