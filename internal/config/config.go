// Package config loads strata's YAML configuration. Defaults come from the embedded reference file
// (configs/strata.yaml), so a file only states what it changes, and the documentation cannot drift
// from the defaults.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/strata-rtc/strata/configs"
	"github.com/strata-rtc/strata/internal/sfu"
)

// Config is the whole server configuration.
type Config struct {
	General    General    `yaml:"general"`
	Runtime    Runtime    `yaml:"runtime"`
	Transports Transports `yaml:"transports"`
	Media      Media      `yaml:"media"`
	LowPrio    LowPrio    `yaml:"lowprio"`
	Recording  Recording  `yaml:"recording"`
	Plugins    Plugins    `yaml:"plugins"`
	Events     Events     `yaml:"events"`
	Cluster    Cluster    `yaml:"cluster"`
}

// General holds gateway-wide options (sessions, authentication, logging).
type General struct {
	ServerName            string        `yaml:"server_name"`
	SessionTimeout        time.Duration `yaml:"session_timeout"`
	ReclaimSessionTimeout time.Duration `yaml:"reclaim_session_timeout"`
	AcceptNewSessions     bool          `yaml:"accept_new_sessions"`
	APISecret             string        `yaml:"api_secret"`
	TokenAuth             bool          `yaml:"token_auth"`
	Tokens                []string      `yaml:"tokens"`
	MaxMessageBytes       int64         `yaml:"max_message_bytes"`
	LogLevel              string        `yaml:"log_level"`
	// Limits bound what clients can make the server hold.
	Limits Limits `yaml:"limits"`
}

// Transports configures the Janus API listeners.
type Transports struct {
	// Timeouts apply to every HTTP listener, plain and secure.
	Timeouts  ListenerTimeouts   `yaml:"timeouts"`
	HTTP      HTTPTransport      `yaml:"http"`
	WebSocket WebSocketTransport `yaml:"websocket"`
	Admin     AdminTransport     `yaml:"admin"`
	// SelfSignedHosts are the names and addresses put in the certificate generated for the secure
	// listeners with self_signed; empty: localhost, the host name and every interface address.
	SelfSignedHosts []string `yaml:"self_signed_hosts"`
}

// ListenerTimeouts bound how long a client may take to send a request, and to send the next one on a
// kept-alive connection (http.Server's ReadHeaderTimeout, ReadTimeout and IdleTimeout; 0: none).
// There is no write timeout: a long-poll is held for long_poll_timeout on purpose.
type ListenerTimeouts struct {
	ReadHeader time.Duration `yaml:"read_header"`
	Read       time.Duration `yaml:"read"`
	Idle       time.Duration `yaml:"idle"`
}

// TLSListener is a transport's secure listener (Janus's secure ports): the same handler as the
// plain listener, over TLS, with a certificate from files (reloaded on SIGHUP) or generated at start.
type TLSListener struct {
	Enabled    bool   `yaml:"enabled"`
	Listen     string `yaml:"listen"`
	CertFile   string `yaml:"cert_file"`
	KeyFile    string `yaml:"key_file"`
	SelfSigned bool   `yaml:"self_signed"`
}

// HTTPTransport is the REST/long-poll transport (and the demo web server).
type HTTPTransport struct {
	Enabled         bool          `yaml:"enabled"`
	Listen          string        `yaml:"listen"`
	BasePath        string        `yaml:"base_path"`
	LongPollTimeout time.Duration `yaml:"long_poll_timeout"`
	CORSOrigin      string        `yaml:"cors_origin"`
	Demos           bool          `yaml:"demos"`
	HTTPS           TLSListener   `yaml:"https"`
	// EventQueue bounds the events kept for a session between long-polls; beyond it the oldest go
	// and the next poll starts with an events_dropped notice.
	EventQueue int `yaml:"event_queue"`
	// WHIP is WHIP/WHEP on this listener (docs/WHIP.md).
	WHIP WHIP `yaml:"whip"`
}

// WHIP configures WHIP publishing and WHEP playback on the HTTP listener.
type WHIP struct {
	Enabled bool `yaml:"enabled"`
	// Token, when set, is the bearer token every WHIP/WHEP request must carry.
	Token string `yaml:"token"`
}

// WebSocketTransport is the `janus-protocol` WebSocket transport.
type WebSocketTransport struct {
	Enabled bool        `yaml:"enabled"`
	Listen  string      `yaml:"listen"`
	WSS     TLSListener `yaml:"wss"`
	// SendQueue is how many replies and events a connection holds for its client before the server
	// stops reading the client's requests.
	SendQueue int `yaml:"send_queue"`
	// SendTimeout is how long a client may take no message at all before it is disconnected.
	SendTimeout time.Duration `yaml:"send_timeout"`
}

// AdminTransport is the admin API over HTTP.
type AdminTransport struct {
	Enabled  bool   `yaml:"enabled"`
	Listen   string `yaml:"listen"`
	BasePath string `yaml:"base_path"`
	// WebSocket is the admin API over WebSocket (janus-admin-protocol), on its own listeners.
	WebSocket AdminWebSocket `yaml:"websocket"`
	// PcapDir is where start_pcap writes: its folder and filename are taken inside it.
	PcapDir string `yaml:"pcap_dir"`
	// AdminSecret "" means a random secret generated at start (internal/server).
	AdminSecret string      `yaml:"admin_secret"`
	CORSOrigin  string      `yaml:"cors_origin"`
	HTTPS       TLSListener `yaml:"https"`
	// Metrics serves the Prometheus metrics at MetricsPath on the same listeners, without
	// admin_secret (docs/METRICS.md).
	Metrics bool `yaml:"metrics"`
	// Dashboard serves the live dashboard at DashboardPath on the same listeners; its data needs
	// admin_secret as a bearer token (docs/DASHBOARD.md).
	Dashboard bool `yaml:"dashboard"`
}

// DashboardPath is where the admin listeners serve the dashboard (page and data below it).
const DashboardPath = "/dashboard"

// MetricsPath is where the admin listeners serve the Prometheus metrics.
const MetricsPath = "/metrics"

// Running reports whether the admin API listens at all (plain or secure).
func (a AdminTransport) Running() bool { return a.Enabled || a.HTTPS.Enabled || a.WebSocket.Running() }

// AdminWebSocket is the admin API over WebSocket (Janus: admin_ws on 7188, admin_wss on 7989).
type AdminWebSocket struct {
	Enabled bool        `yaml:"enabled"`
	Listen  string      `yaml:"listen"`
	WSS     TLSListener `yaml:"wss"`
}

// Running reports whether the admin WebSocket listens (plain or secure).
func (w AdminWebSocket) Running() bool { return w.Enabled || w.WSS.Enabled }

// Media configures every PeerConnection strata creates.
type Media struct {
	ICE  ICE  `yaml:"ice"`
	NACK bool `yaml:"nack"`
	RTX  bool `yaml:"rtx"`
	TWCC bool `yaml:"twcc"`
	REMB bool `yaml:"remb"`
	// TWCCAudio negotiates transport-cc feedback for audio too (with TWCC on), so that browsers
	// count their audio inside their congestion control estimate.
	TWCCAudio    bool          `yaml:"twcc_audio"`
	TWCCInterval time.Duration `yaml:"twcc_interval"`
	// CongestionControl chooses the estimators run on every PeerConnection.
	CongestionControl CongestionControl `yaml:"congestion_control"`
}

// CongestionControl selects and bounds the bandwidth estimators.
type CongestionControl struct {
	Estimator      string `yaml:"estimator"`
	InitialBitrate int64  `yaml:"initial_bitrate"`
	MinBitrate     int64  `yaml:"min_bitrate"`
	MaxBitrate     int64  `yaml:"max_bitrate"`
	REMBEstimator  string `yaml:"remb_estimator"`
}

// Estimators are the accepted values of media.congestion_control.estimator.
var Estimators = []string{"gcc", "gcc-draft", "nada", "none"}

// ICE configures candidate gathering and connectivity.
type ICE struct {
	PortMin     uint16       `yaml:"port_min"`
	PortMax     uint16       `yaml:"port_max"`
	UDPMuxPort  int          `yaml:"udp_mux_port"`
	BatchWrites bool         `yaml:"batch_writes"`
	NAT1To1IPs  []string     `yaml:"nat_1to1_ips"`
	STUNServers []string     `yaml:"stun_servers"`
	TURNServers []TURNServer `yaml:"turn_servers"`
	TCPPort     int          `yaml:"tcp_port"`
	Lite        bool         `yaml:"lite"`
	Loopback    bool         `yaml:"loopback"`
	Interfaces  []string     `yaml:"interfaces"`
	FullTrickle bool         `yaml:"full_trickle"`
}

// TURNServer is one TURN server entry.
type TURNServer struct {
	URLs       []string `yaml:"urls"`
	Username   string   `yaml:"username"`
	Credential string   `yaml:"credential"`
}

// Plugins holds one section per plugin.
type Plugins struct {
	EchoTest    EchoTest    `yaml:"echotest"`
	VideoRoom   VideoRoom   `yaml:"videoroom"`
	AudioBridge AudioBridge `yaml:"audiobridge"`
	Streaming   Streaming   `yaml:"streaming"`
	VoiceMail   VoiceMail   `yaml:"voicemail"`
	RecordPlay  RecordPlay  `yaml:"recordplay"`
	TextRoom    TextRoom    `yaml:"textroom"`
	VideoCall   VideoCall   `yaml:"videocall"`
	SIP         SIP         `yaml:"sip"`
	NoSIP       NoSIP       `yaml:"nosip"`
}

// EchoTest configures janus.plugin.echotest.
type EchoTest struct {
	Enabled bool `yaml:"enabled"`
	// RecordingsDir is where `record` writes the .mjr files; filenames in requests stay inside it.
	RecordingsDir string `yaml:"recordings_dir"`
}

// VideoCall configures janus.plugin.videocall.
type VideoCall struct {
	Enabled bool `yaml:"enabled"`
	// RecordingsDir is where `set` with `record` writes the .mjr files; filenames in requests stay
	// inside it.
	RecordingsDir string `yaml:"recordings_dir"`
	// CalleeSimulcast: when the caller sends simulcast, strata's offer to the callee asks for
	// simulcast too (rids l, m, h), so that both directions adapt by layer. Off: as Janus, the
	// callee sends one stream.
	CalleeSimulcast bool `yaml:"callee_simulcast"`
	// DataChannels bounds what each user's data channel holds back (the other user's data relayed).
	DataChannels sfu.DataSinkConfig `yaml:"data_channels"`
}

func (v VideoCall) validate() []error {
	return validateDataChannels("plugins.videocall.data_channels", v.DataChannels)
}

// VoiceMail configures janus.plugin.voicemail.
type VoiceMail struct {
	Enabled bool `yaml:"enabled"`
	// Path is the directory the messages (.opus) are written to and served from.
	Path string `yaml:"path"`
	// Base is the prefix of the URL "done" returns: a URL path, or an absolute URL; the messages are
	// served at its path.
	Base string `yaml:"base"`
	// MaxDuration is how long a message may last (Janus: 10 s).
	MaxDuration time.Duration `yaml:"max_duration"`
	// Events is Janus's switch for event handlers, which strata does not have; accepted, unused.
	Events bool `yaml:"events"`
}

// BasePath is the URL path of Base, which may be a path ("/voicemail/") or, as in Janus, an
// absolute URL ("https://example.com/voicemail/", for messages behind a proxy); "" if it is neither.
func (v VoiceMail) BasePath() string {
	if strings.HasPrefix(v.Base, "/") {
		return v.Base
	}
	u, err := url.Parse(v.Base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !strings.HasPrefix(u.Path, "/") {
		return ""
	}
	return u.Path
}

func (v VoiceMail) validate() []error {
	var errs []error
	if v.Enabled && v.Path == "" {
		errs = append(errs, errors.New("plugins.voicemail.path: must be set"))
	}
	if v.Enabled && strings.Trim(v.BasePath(), "/") == "" {
		errs = append(errs, fmt.Errorf("plugins.voicemail.base: %q must be a URL path below / or an http(s) URL with one", v.Base))
	}
	if v.MaxDuration <= 0 {
		errs = append(errs, errors.New("plugins.voicemail.max_duration: must be positive"))
	}
	return errs
}

// VideoRoom configures janus.plugin.videoroom, the SFU.
type VideoRoom struct {
	Enabled bool `yaml:"enabled"`
	// AdminKey, when set, must accompany create (and rtp_forward with LockRTPForward).
	AdminKey       string `yaml:"admin_key"`
	LockRTPForward bool   `yaml:"lock_rtp_forward"`
	// RecordingsDir is where publishers' .mjr recordings go: a room's rec_dir and a publisher's
	// filename are taken inside it.
	RecordingsDir string `yaml:"recordings_dir"`
	// Rooms exist from start-up (Janus's room-<id> sections).
	Rooms []VideoRoomRoom `yaml:"rooms"`
	// Allocation tunes the per-subscriber layer allocation.
	Allocation LayerAllocation `yaml:"allocation"`
	// NetCtl connects the videoroom to a network controller (strata netctl).
	NetCtl VideoRoomNetCtl `yaml:"netctl"`
	// Limits bound rooms, participants and subscriptions.
	Limits VideoRoomLimits `yaml:"limits"`
	// DataChannels bounds what each subscriber's data channel holds back (publishers' data relayed).
	DataChannels sfu.DataSinkConfig `yaml:"data_channels"`
}

// VideoRoomNetCtl connects the videoroom to a network controller: streams and subscriptions are
// registered with it, and its decisions feed the network and hybrid layer policies.
type VideoRoomNetCtl struct {
	// URL is the controller's base URL (http://host:port); empty turns the connection off.
	URL string `yaml:"url"`
	// Node is this SFU's node in the controller's topology: the source of every stream.
	Node string `yaml:"node"`
	// Receiver is the receiver node of subscribers that Receivers does not map.
	Receiver string `yaml:"receiver"`
	// Receivers maps a subscriber to its node by the prefix of its handle's opaque_id (longest
	// prefix wins).
	Receivers map[string]string `yaml:"receivers"`
	// Interval is how often registrations are reconciled and layer rates re-sent (when changed).
	Interval time.Duration `yaml:"interval"`
	// Enforcement is who thins a stream to the controller's decision: EnforceSFU (the SFU drops
	// the layers itself) or EnforceSwitch (the SFU forwards every layer, marked, while a switch
	// enforces the decision; it thins itself whenever none does). Empty means EnforceSFU.
	Enforcement string `yaml:"enforcement"`
	// Marks are the DSCP marks of the layers and of audio with switch enforcement.
	Marks NetCtlMarks `yaml:"marks"`
}

// Enforcement modes of VideoRoomNetCtl.Enforcement.
const (
	EnforceSFU    = "sfu"
	EnforceSwitch = "switch"
)

// NetCtlMarks are the DiffServ code points the SFU marks packets with (0 to 63; 0 is unmarked).
type NetCtlMarks struct {
	// Audio marks every audio packet.
	Audio int `yaml:"audio"`
	// Layers marks the rungs of a video stream's ladder, base first: a stream with more rungs is
	// not marked (the SFU thins it).
	Layers []int `yaml:"layers"`
}

// VideoRoomRoom is one room, with Janus's room options.
type VideoRoomRoom struct {
	ID                 uint64 `yaml:"id"`
	Description        string `yaml:"description"`
	Secret             string `yaml:"secret"`
	PIN                string `yaml:"pin"`
	IsPrivate          bool   `yaml:"is_private"`
	Publishers         int    `yaml:"publishers"`
	Bitrate            int64  `yaml:"bitrate"`
	BitrateCap         bool   `yaml:"bitrate_cap"`
	FIRFreq            int    `yaml:"fir_freq"`
	AudioCodec         string `yaml:"audiocodec"`
	VideoCodec         string `yaml:"videocodec"`
	OpusFEC            bool   `yaml:"opus_fec"`
	AudioLevelEvent    bool   `yaml:"audiolevel_event"`
	AudioActivePackets int    `yaml:"audio_active_packets"`
	AudioLevelAverage  int    `yaml:"audio_level_average"`
	NotifyJoining      bool   `yaml:"notify_joining"`
	RequirePvtID       bool   `yaml:"require_pvtid"`
	Record             bool   `yaml:"record"`
	RecDir             string `yaml:"rec_dir"`
	LockRecord         bool   `yaml:"lock_record"`
	// Policy is the room's layer policy (bwe, probe, network, hybrid); empty: allocation.policy.
	Policy string `yaml:"policy"`
}

// LayerAllocation selects and tunes the layer allocation of every subscriber: the allocator's own
// configuration type, decoded straight from the YAML (so each tunable is declared and documented
// once, in internal/sfu; configs/strata.yaml is the one place that gives its defaults, and a test
// checks that it agrees with sfu.DefaultAllocatorConfig), and the videoroom's NACK answering.
type LayerAllocation struct {
	sfu.AllocatorConfig `yaml:",inline"`
	// RespondNACK answers subscribers' NACKs from the shared packet cache; the videoroom's
	// PeerConnections then run without Pion's per-subscriber NACK responder.
	RespondNACK bool `yaml:"respond_nack"`
}

// Default returns the configuration with no file: the embedded reference file.
func Default() *Config {
	c, err := Parse(nil, "")
	if err != nil {
		panic("config: embedded reference configuration is invalid: " + err.Error())
	}
	return c
}

// Load reads a YAML file over the defaults. An empty path gives the defaults.
func Load(path string) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path)
}

// Parse decodes data (which may be nil) over the defaults and validates the result. name is used in
// error messages.
func Parse(data []byte, name string) (*Config, error) {
	c := &Config{}
	if err := decodeStrict(configs.Reference, c); err != nil {
		return nil, fmt.Errorf("reference config: %w", err)
	}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := decodeStrict(data, c); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

func decodeStrict(data []byte, into *Config) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	// An empty document decodes as io.EOF: that is a file with nothing to change.
	if err := dec.Decode(into); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Validate checks values that YAML types cannot express.
func (c *Config) Validate() error {
	var errs []error
	if c.General.SessionTimeout < 0 {
		errs = append(errs, errors.New("general.session_timeout: must not be negative"))
	}
	if c.General.ReclaimSessionTimeout < 0 {
		errs = append(errs, errors.New("general.reclaim_session_timeout: must not be negative"))
	}
	if c.General.MaxMessageBytes <= 0 {
		errs = append(errs, errors.New("general.max_message_bytes: must be positive"))
	}
	switch c.General.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("general.log_level: %q is not one of debug, info, warn, error", c.General.LogLevel))
	}
	if c.Transports.HTTP.LongPollTimeout <= 0 {
		errs = append(errs, errors.New("transports.http.long_poll_timeout: must be positive"))
	}
	errs = append(errs, c.Transports.validate()...)
	errs = append(errs, c.checkSampleSecrets()...)
	if c.Transports.HTTP.EventQueue <= 0 {
		errs = append(errs, errors.New("transports.http.event_queue: must be positive"))
	}
	if c.Transports.WebSocket.SendQueue <= 0 || c.Transports.WebSocket.SendTimeout <= 0 {
		errs = append(errs, errors.New("transports.websocket: send_queue and send_timeout must be positive"))
	}
	ice := c.Media.ICE
	if (ice.PortMin == 0) != (ice.PortMax == 0) || ice.PortMin > ice.PortMax {
		errs = append(errs, fmt.Errorf("media.ice: port range %d-%d is invalid", ice.PortMin, ice.PortMax))
	}
	if ice.UDPMuxPort < 0 || ice.UDPMuxPort > 65535 || ice.TCPPort < 0 || ice.TCPPort > 65535 {
		errs = append(errs, errors.New("media.ice: udp_mux_port and tcp_port must be 0-65535"))
	}
	errs = append(errs, c.General.Limits.validate()...)
	errs = append(errs, c.Runtime.validate()...)
	errs = append(errs, c.Recording.validate()...)
	errs = append(errs, c.Events.validate()...)
	errs = append(errs, c.LowPrio.validate()...)
	errs = append(errs, c.Cluster.validate()...)
	errs = append(errs, c.Media.CongestionControl.validate(c.Media.TWCC)...)
	errs = append(errs, c.Plugins.VideoRoom.validate()...)
	if err := c.validateMarksSocket(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Plugins.AudioBridge.validate()...)
	errs = append(errs, c.Plugins.Streaming.validate()...)
	errs = append(errs, c.Plugins.VoiceMail.validate()...)
	errs = append(errs, c.Plugins.SIP.validate()...)
	errs = append(errs, c.Plugins.RecordPlay.validate()...)
	errs = append(errs, c.Plugins.TextRoom.validate()...)
	errs = append(errs, c.Plugins.NoSIP.validate()...)
	errs = append(errs, c.Plugins.VideoCall.validate()...)
	if c.Media.TWCC && c.Media.TWCCInterval <= 0 {
		errs = append(errs, errors.New("media.twcc_interval: must be positive when twcc is on"))
	}
	return errors.Join(errs...)
}

func (cc CongestionControl) validate(twcc bool) []error {
	var errs []error
	known := false
	for _, e := range Estimators {
		known = known || e == cc.Estimator
	}
	if !known {
		errs = append(errs, fmt.Errorf("media.congestion_control.estimator: %q is not one of %v", cc.Estimator, Estimators))
	}
	if cc.Estimator != "none" && !twcc {
		errs = append(errs, fmt.Errorf("media.congestion_control.estimator: %q needs media.twcc: true", cc.Estimator))
	}
	if cc.REMBEstimator != "none" && cc.REMBEstimator != "gcc-draft" {
		errs = append(errs, fmt.Errorf("media.congestion_control.remb_estimator: %q is not gcc-draft or none", cc.REMBEstimator))
	}
	if cc.MinBitrate <= 0 || cc.MinBitrate > cc.InitialBitrate || cc.InitialBitrate > cc.MaxBitrate {
		errs = append(errs, fmt.Errorf("media.congestion_control: need 0 < min_bitrate <= initial_bitrate <= max_bitrate, got %d, %d, %d",
			cc.MinBitrate, cc.InitialBitrate, cc.MaxBitrate))
	}
	return errs
}

// LayerPolicies are the layer policies a room can use.
var LayerPolicies = []string{"bwe", "probe", "network", "hybrid"}

// knownLayerPolicy accepts the layer policies and "" (the default).
func knownLayerPolicy(p string) bool { return p == "" || slices.Contains(LayerPolicies, p) }

func (v VideoRoom) validate() []error {
	var errs []error
	seen := map[uint64]bool{}
	for _, r := range v.Rooms {
		if r.ID == 0 || seen[r.ID] {
			errs = append(errs, fmt.Errorf("plugins.videoroom.rooms: room id %d is zero or repeated", r.ID))
		}
		seen[r.ID] = true
		if r.Publishers < 0 || r.Bitrate < 0 || r.FIRFreq < 0 {
			errs = append(errs, fmt.Errorf("plugins.videoroom.rooms: room %d has a negative publishers, bitrate or fir_freq", r.ID))
		}
	}
	if !knownLayerPolicy(v.Allocation.Policy) || v.Allocation.Policy == "" {
		errs = append(errs, fmt.Errorf("plugins.videoroom.allocation.policy: %q is not one of %v", v.Allocation.Policy, LayerPolicies))
	}
	for _, r := range v.Rooms {
		if !knownLayerPolicy(r.Policy) {
			errs = append(errs, fmt.Errorf("plugins.videoroom.rooms: room %d: policy %q is not one of %v", r.ID, r.Policy, LayerPolicies))
		}
	}
	if v.NetCtl.URL != "" && (v.NetCtl.Node == "" || v.NetCtl.Interval <= 0) {
		errs = append(errs, errors.New("plugins.videoroom.netctl: with url set, node must be set and interval positive"))
	}
	errs = append(errs, v.NetCtl.validate()...)
	if v.Allocation.Tick <= 0 || v.Allocation.PaddingTick <= 0 {
		errs = append(errs, errors.New("plugins.videoroom.allocation: tick and padding_tick must be positive"))
	}
	errs = append(errs, validateDataChannels("plugins.videoroom.data_channels", v.DataChannels)...)
	errs = append(errs, v.Limits.validate()...)
	if v.Limits.Rooms > 0 && len(v.Rooms) > v.Limits.Rooms {
		errs = append(errs, fmt.Errorf("plugins.videoroom.limits.rooms: %d rooms are configured, more than the limit of %d", len(v.Rooms), v.Limits.Rooms))
	}
	return errs
}
