package config

import (
	"fmt"
	"slices"

	"github.com/strata-rtc/strata/internal/sfu"
)

// Streaming configures janus.plugin.streaming (docs/STREAMING.md).
type Streaming struct {
	Enabled bool `yaml:"enabled"`
	// AdminKey, when set, must accompany create, and lets list show private mountpoints.
	AdminKey string `yaml:"admin_key"`
	// Host is the address rtp mountpoints' ports listen on unless a stream names an iface; empty:
	// every interface (Janus).
	Host string `yaml:"host"`
	// RecordingsDir is where recording's files go (relative names inside it, absolute ones must
	// lie within it).
	RecordingsDir string `yaml:"recordings_dir"`
	// Mountpoints exist from start-up (Janus's mountpoint sections).
	Mountpoints []StreamingMountpoint `yaml:"mountpoints"`
	// DataChannels bounds what each viewer's data channel holds back.
	DataChannels sfu.DataSinkConfig `yaml:"data_channels"`
}

// StreamingMountpoint is one mountpoint with Janus's options, named as in Janus's configuration
// and create request: the plugin reads it as a create request, so it is checked by the same code
// and in the same way. Ports are pointers because 0 is a value (pick a free port).
type StreamingMountpoint struct {
	Type        string `yaml:"type" json:"type"`
	ID          uint64 `yaml:"id" json:"id"`
	Name        string `yaml:"name" json:"name,omitempty"`
	Description string `yaml:"description" json:"description,omitempty"`
	Metadata    string `yaml:"metadata" json:"metadata,omitempty"`
	IsPrivate   bool   `yaml:"is_private" json:"is_private,omitempty"`
	Secret      string `yaml:"secret" json:"secret,omitempty"`
	PIN         string `yaml:"pin" json:"pin,omitempty"`
	// rtp (Janus 1.x): the streams.
	Media     []StreamingMedia `yaml:"media" json:"media,omitempty"`
	Collision int              `yaml:"collision" json:"collision,omitempty"`
	// Data streams' options, read at the top level as Janus reads them.
	DataType  string `yaml:"datatype" json:"datatype,omitempty"`
	BufferMsg bool   `yaml:"buffermsg" json:"buffermsg,omitempty"`
	// Janus's deprecated rtp form (streams a, v, d), and the file and rtsp types' audio/video.
	Audio          bool   `yaml:"audio" json:"audio,omitempty"`
	Video          bool   `yaml:"video" json:"video,omitempty"`
	Data           bool   `yaml:"data" json:"data,omitempty"`
	AudioPort      *int   `yaml:"audioport" json:"audioport,omitempty"`
	AudioRTCPPort  *int   `yaml:"audiortcpport" json:"audiortcpport,omitempty"`
	AudioPT        *int   `yaml:"audiopt" json:"audiopt,omitempty"`
	AudioCodec     string `yaml:"audiocodec" json:"audiocodec,omitempty"`
	AudioRTPMap    string `yaml:"audiortpmap" json:"audiortpmap,omitempty"`
	AudioFmtp      string `yaml:"audiofmtp" json:"audiofmtp,omitempty"`
	AudioIface     string `yaml:"audioiface" json:"audioiface,omitempty"`
	AudioMcast     string `yaml:"audiomcast" json:"audiomcast,omitempty"`
	VideoPort      *int   `yaml:"videoport" json:"videoport,omitempty"`
	VideoRTCPPort  *int   `yaml:"videortcpport" json:"videortcpport,omitempty"`
	VideoPT        *int   `yaml:"videopt" json:"videopt,omitempty"`
	VideoCodec     string `yaml:"videocodec" json:"videocodec,omitempty"`
	VideoRTPMap    string `yaml:"videortpmap" json:"videortpmap,omitempty"`
	VideoFmtp      string `yaml:"videofmtp" json:"videofmtp,omitempty"`
	VideoIface     string `yaml:"videoiface" json:"videoiface,omitempty"`
	VideoMcast     string `yaml:"videomcast" json:"videomcast,omitempty"`
	VideoBufferKF  bool   `yaml:"videobufferkf" json:"videobufferkf,omitempty"`
	VideoSimulcast bool   `yaml:"videosimulcast" json:"videosimulcast,omitempty"`
	VideoPort2     *int   `yaml:"videoport2" json:"videoport2,omitempty"`
	VideoPort3     *int   `yaml:"videoport3" json:"videoport3,omitempty"`
	VideoSVC       bool   `yaml:"videosvc" json:"videosvc,omitempty"`
	DataPort       *int   `yaml:"dataport" json:"dataport,omitempty"`
	DataIface      string `yaml:"dataiface" json:"dataiface,omitempty"`
	DataBufferMsg  bool   `yaml:"databuffermsg" json:"databuffermsg,omitempty"`
	// live and ondemand: the file.
	Filename string `yaml:"filename" json:"filename,omitempty"`
	// rtsp.
	URL                string `yaml:"url" json:"url,omitempty"`
	RTSPUser           string `yaml:"rtsp_user" json:"rtsp_user,omitempty"`
	RTSPPwd            string `yaml:"rtsp_pwd" json:"rtsp_pwd,omitempty"`
	RTSPReconnectDelay int    `yaml:"rtsp_reconnect_delay" json:"rtsp_reconnect_delay,omitempty"`
	RTSPIface          string `yaml:"rtspiface" json:"rtspiface,omitempty"`
}

// StreamingMedia is one item of an rtp mountpoint's media list.
type StreamingMedia struct {
	Type      string `yaml:"type" json:"type"`
	MID       string `yaml:"mid" json:"mid"`
	Label     string `yaml:"label" json:"label,omitempty"`
	MSID      string `yaml:"msid" json:"msid,omitempty"`
	Mcast     string `yaml:"mcast" json:"mcast,omitempty"`
	Iface     string `yaml:"iface" json:"iface,omitempty"`
	Port      *int   `yaml:"port" json:"port,omitempty"`
	RTCPPort  *int   `yaml:"rtcpport" json:"rtcpport,omitempty"`
	PT        *int   `yaml:"pt" json:"pt,omitempty"`
	Codec     string `yaml:"codec" json:"codec,omitempty"`
	RTPMap    string `yaml:"rtpmap" json:"rtpmap,omitempty"`
	Fmtp      string `yaml:"fmtp" json:"fmtp,omitempty"`
	Skew      bool   `yaml:"skew" json:"skew,omitempty"`
	BufferKF  bool   `yaml:"bufferkf" json:"bufferkf,omitempty"`
	Simulcast bool   `yaml:"simulcast" json:"simulcast,omitempty"`
	Port2     *int   `yaml:"port2" json:"port2,omitempty"`
	Port3     *int   `yaml:"port3" json:"port3,omitempty"`
	SVC       bool   `yaml:"svc" json:"svc,omitempty"`
}

func (s Streaming) validate() []error {
	errs := validateDataChannels("plugins.streaming.data_channels", s.DataChannels)
	seen := map[uint64]bool{}
	for _, m := range s.Mountpoints {
		if m.ID == 0 || seen[m.ID] {
			errs = append(errs, fmt.Errorf("plugins.streaming.mountpoints: mountpoint id %d is zero or repeated", m.ID))
		}
		seen[m.ID] = true
	}
	return errs
}

// FreePorts moves every port of the configured mountpoints to 0, a free one each, for a server
// that runs beside others on one machine (tests): Janus's sample mountpoints of the reference
// configuration bind UDP 5002, 5004 and 5102–5106. The mountpoints are copied, so a configuration
// sharing them is left alone.
func (s *Streaming) FreePorts() {
	free := func(ports ...**int) {
		for _, p := range ports {
			if *p != nil {
				*p = new(int)
			}
		}
	}
	s.Mountpoints = slices.Clone(s.Mountpoints)
	for i := range s.Mountpoints {
		m := &s.Mountpoints[i]
		free(&m.AudioPort, &m.AudioRTCPPort, &m.VideoPort, &m.VideoRTCPPort, &m.VideoPort2, &m.VideoPort3, &m.DataPort)
		m.Media = slices.Clone(m.Media)
		for j := range m.Media {
			md := &m.Media[j]
			free(&md.Port, &md.RTCPPort, &md.Port2, &md.Port3)
		}
	}
}

// validateDataChannels checks a data_channels section (videoroom, streaming, videocall).
func validateDataChannels(name string, d sfu.DataSinkConfig) []error {
	if d.QueueMessages <= 0 || d.QueueBytes <= 0 || d.BufferedHigh == 0 {
		return []error{fmt.Errorf("%s: queue_messages, queue_bytes and buffered_high must be positive", name)}
	}
	return nil
}
