package streaming

import (
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

// Create is `create`: a new mountpoint. ID 0 asks the plugin to choose one. Janus checks, in this
// order: the create table and id (Parse), admin_key (Check), that permanent has a configuration file
// to go to and that the id is free (the plugin: 470, 456 "A stream with the provided ID already
// exists"), then the source's own elements (CheckSource).
type Create struct {
	ID          uint64
	Type        string  // as sent, lower case: rtp, live, ondemand or rtsp (CheckSource refuses others)
	MountName   *string // the element "name"
	Description *string
	Metadata    *string
	IsPrivate   bool
	Secret      *string
	PIN         *string
	Permanent   bool
	AdminKey    Secret

	RTP  *RTPSource  // type rtp
	File *FileSource // type live or ondemand
	RTSP *RTSPSource // type rtsp

	sourceErr *Error
}

// RTPSource is an rtp mountpoint: RTP sent to strata's UDP ports by a third-party tool.
type RTPSource struct {
	Collision       *int // ms during which an SSRC change is not a new source
	Threads         *int
	SRTPSuite       *int // 32 or 80
	SRTPCrypto      *string
	E2EE            bool
	PlayoutDelayExt bool
	Media           []Media
	// legacy: the streams came from the deprecated audio/video/data form (create's reply then
	// names the ports per kind).
	legacy bool
}

// Media is one stream of an rtp mountpoint (an item of the media array, or Janus's deprecated
// audio/video/data form, whose streams get mids "a", "v" and "d").
type Media struct {
	Type      string // audio, video or data (lower case)
	MID       string
	Label     string
	MSID      string
	Mcast     string
	Iface     string
	Port      int
	RTCPPort  int // 0: none; the port keyframe requests go back to
	PT        int // 0: none given
	Codec     string
	FMTP      string
	Skew      bool // audio and video
	BufferKF  bool // video: keep the last keyframe for new viewers
	Simulcast bool // video: port, port2, port3 carry the substreams
	Port2     int
	Port3     int
	SVC       bool // video: VP9 or AV1 SVC
	BufferMsg bool // data: keep the last message for new viewers
	TextData  bool // data: text (true) or binary
	// hasRTCP: the rtcpport element was given (0 asks the plugin to pick one).
	hasRTCP bool
}

// FileSource is a live or ondemand mountpoint: an audio file played to all viewers at once (live)
// or to each from the start (ondemand). Janus allows audio only.
type FileSource struct {
	Filename string
	Audio    bool
	Video    bool
	Codec    string // audiocodec, or the codec of the deprecated audiortpmap
	FMTP     string
	PT       int
}

// RTSPSource is an rtsp mountpoint: media pulled from an RTSP server.
type RTSPSource struct {
	URL            *string
	User           *string
	Password       *string
	ReconnectDelay *int // seconds
	SessionTimeout *int
	Timeout        *int
	ConnTimeout    *int
	Audio, Video   bool
	AudioCodec     string
	AudioFMTP      string
	AudioPT        int
	VideoCodec     string
	VideoFMTP      string
	VideoPT        int
	VideoBufferKF  bool
	Threads        *int
	Iface          *string
	FailCheck      *bool
}

func (*Create) Name() string { return "create" }

// Check applies the plugin's admin_key ("" for none).
func (r *Create) Check(adminKey string) *Error { return r.AdminKey.Check(adminKey) }

// CheckSource is Janus's check of the source's elements, made after the id is found free.
func (r *Create) CheckSource() *Error { return r.sourceErr }

func parseCreate(b plugin.Body) (Request, *Error) {
	if err := b.Validate(str("name"), str("description"), str("metadata"), boo("is_private"),
		need(str("type")), str("secret"), str("pin"), arr("media"), boo("permanent"),
		boo("audio"), boo("video"), boo("data")); err != nil {
		return nil, err
	}
	if err := b.Validate(idOptParam); err != nil {
		return nil, err
	}
	r := &Create{
		ID: b.Uint("id"), Type: strings.ToLower(b.Str("type")),
		MountName: b.OptStr("name"), Description: b.OptStr("description"), Metadata: b.OptStr("metadata"),
		IsPrivate: b.Bool("is_private"), Secret: b.OptStr("secret"), PIN: b.OptStr("pin"),
		Permanent: b.Bool("permanent"), AdminKey: readSecret(b, "admin_key"),
	}
	switch r.Type {
	case "rtp":
		r.RTP, r.sourceErr = parseRTP(b)
	case "live", "ondemand":
		r.File, r.sourceErr = parseFile(b, r.Type)
	case "rtsp":
		r.RTSP, r.sourceErr = parseRTSP(b)
	default:
		// Janus's reason ends in a newline.
		r.sourceErr = errorf(ErrInvalid, "Unknown stream type '%s'...\n", b.Str("type"))
	}
	return r, nil
}

func parseRTP(b plugin.Body) (*RTPSource, *Error) {
	if err := b.Validate(pos("collision"), pos("threads"), pos("srtpsuite"), str("srtpcrypto"),
		boo("e2ee"), boo("playoutdelay_ext")); err != nil {
		return nil, err
	}
	s := &RTPSource{
		Collision: optInt(b, "collision"), Threads: optInt(b, "threads"), SRTPSuite: optInt(b, "srtpsuite"),
		SRTPCrypto: b.OptStr("srtpcrypto"), E2EE: b.Bool("e2ee"), PlayoutDelayExt: b.Bool("playoutdelay_ext"),
	}
	if s.SRTPSuite != nil && *s.SRTPSuite != 32 && *s.SRTPSuite != 80 {
		return nil, errorf(ErrCantCreate, "Can't add 'rtp' stream, invalid SRTP suite...")
	}
	var err *Error
	if b.Has("media") {
		s.Media, err = parseMediaArray(b)
	} else {
		s.Media, err = parseLegacyMedia(b)
		s.legacy = true
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

var noRTPMedia = "Can't add 'rtp' stream, no audio or video have to be streamed..."

// parseMediaArray reads Janus 1.x's media array. A data stream's datatype and buffermsg are read
// from the request's top level, not from the item: that is what Janus 1.1.2's code does.
func parseMediaArray(b plugin.Body) ([]Media, *Error) {
	items := b.Items("media")
	if len(items) == 0 {
		return nil, errorf(ErrCantCreate, "%s", noRTPMedia)
	}
	out := make([]Media, 0, len(items))
	for _, m := range items {
		if err := m.Validate(need(str("type")), need(str("mid")), str("label"), str("msid"), str("mcast"),
			str("iface"), need(pos("port")), pos("rtcpport"), pos("pt"), str("codec"), str("rtpmap"),
			str("fmtp"), boo("skew"), boo("bufferkf"), boo("simulcast"), pos("port2"), pos("port3"),
			boo("svc"), boo("buffermsg")); err != nil {
			return nil, err
		}
		md := Media{
			Type: strings.ToLower(m.Str("type")), MID: m.Str("mid"), Label: m.Str("label"), MSID: m.Str("msid"),
			Mcast: m.Str("mcast"), Iface: m.Str("iface"), Port: intOf(m, "port"), RTCPPort: intOf(m, "rtcpport"),
			PT: intOf(m, "pt"), Codec: codecOf(m, "codec", "rtpmap"), FMTP: m.Str("fmtp"), Skew: m.Bool("skew"),
			hasRTCP: m.Has("rtcpport"),
		}
		switch md.Type {
		case "audio":
		case "video":
			md.BufferKF, md.Simulcast, md.SVC = m.Bool("bufferkf"), m.Bool("simulcast"), m.Bool("svc")
			md.Port2, md.Port3 = intOf(m, "port2"), intOf(m, "port3")
		case "data":
			if err := dataOptions(b, &md); err != nil {
				return nil, err
			}
		default:
			return nil, errorf(ErrCantCreate, "Unsupported media type in media stream")
		}
		out = append(out, md)
	}
	return out, nil
}

// dataOptions reads a data stream's buffermsg and datatype (text or binary, case-insensitive).
func dataOptions(b plugin.Body, md *Media) *Error {
	md.BufferMsg, md.TextData = b.Bool("buffermsg"), true
	if !b.Has("datatype") {
		return nil
	}
	switch strings.ToLower(b.Str("datatype")) {
	case "text":
	case "binary":
		md.TextData = false
	default:
		return errorf(ErrInvalid, "Invalid element (datatype can only be text or binary)")
	}
	return nil
}

// parseLegacyMedia reads Janus's deprecated form: audio, video and data flags, each with its
// prefixed elements (audioport, videopt, ...).
func parseLegacyMedia(b plugin.Body) ([]Media, *Error) {
	audio, video, data := b.Bool("audio"), b.Bool("video"), b.Bool("data")
	if !audio && !video && !data {
		return nil, errorf(ErrCantCreate, "%s", noRTPMedia)
	}
	var out []Media
	if audio {
		if err := b.Validate(str("audiomcast"), need(pos("audioport")), pos("audiortcpport"), need(pos("audiopt")),
			str("audiocodec"), str("audiortpmap"), str("audiofmtp"), str("audioiface"), boo("audioskew")); err != nil {
			return nil, err
		}
		out = append(out, legacyStream(b, "audio", "a"))
	}
	if video {
		if err := b.Validate(str("videomcast"), need(pos("videoport")), pos("videortcpport"), need(pos("videopt")),
			str("videocodec"), str("videortpmap"), str("videofmtp"), boo("videobufferkf"), str("videoiface"),
			boo("videosimulcast"), pos("videoport2"), pos("videoport3"), boo("videoskew"), boo("videosvc")); err != nil {
			return nil, err
		}
		v := legacyStream(b, "video", "v")
		v.BufferKF, v.Simulcast, v.SVC = b.Bool("videobufferkf"), b.Bool("videosimulcast"), b.Bool("videosvc")
		v.Port2, v.Port3 = intOf(b, "videoport2"), intOf(b, "videoport3")
		out = append(out, v)
	}
	if data {
		if err := b.Validate(need(pos("dataport")), boo("databuffermsg"), str("datatype"), str("dataiface")); err != nil {
			return nil, err
		}
		d := Media{Type: "data", MID: "d", Label: "data", Port: intOf(b, "dataport"), Iface: b.Str("dataiface")}
		if err := dataOptions(b, &d); err != nil {
			return nil, err
		}
		d.BufferMsg = b.Bool("databuffermsg")
		out = append(out, d)
	}
	return out, nil
}

// legacyStream reads the audio or video elements of the deprecated form (prefix "audio", "video").
func legacyStream(b plugin.Body, kind, mid string) Media {
	return Media{
		Type: kind, MID: mid, Label: kind, Mcast: b.Str(kind + "mcast"), Iface: b.Str(kind + "iface"),
		Port: intOf(b, kind+"port"), RTCPPort: intOf(b, kind+"rtcpport"), PT: intOf(b, kind+"pt"),
		Codec: codecOf(b, kind+"codec", kind+"rtpmap"), FMTP: b.Str(kind + "fmtp"), Skew: b.Bool(kind + "skew"),
		hasRTCP: b.Has(kind + "rtcpport"),
	}
}

func parseFile(b plugin.Body, kind string) (*FileSource, *Error) {
	if err := b.Validate(need(str("filename")), str("audiocodec"), str("audiortpmap"), str("audiofmtp"),
		pos("audiopt")); err != nil {
		return nil, err
	}
	f := &FileSource{Filename: b.Str("filename"), Audio: b.Bool("audio"), Video: b.Bool("video")}
	if f.Audio {
		f.Codec, f.FMTP, f.PT = codecOf(b, "audiocodec", "audiortpmap"), b.Str("audiofmtp"), intOf(b, "audiopt")
	}
	if !f.Audio || f.Video {
		return nil, errorf(ErrCantCreate, "Can't add '%s' stream, we only support audio file streaming right now...", kind)
	}
	return f, nil
}

func parseRTSP(b plugin.Body) (*RTSPSource, *Error) {
	if err := b.Validate(str("url"), str("rtsp_user"), str("rtsp_pwd"), pos("rtsp_reconnect_delay"),
		pos("rtsp_session_timeout"), pos("rtsp_timeout"), pos("rtsp_conn_timeout"), str("audiocodec"),
		str("audiortpmap"), str("audiofmtp"), pos("audiopt"), str("videocodec"), str("videortpmap"),
		str("videofmtp"), pos("videopt"), boo("videobufferkf"), pos("threads"), str("rtspiface"),
		boo("rtsp_failcheck")); err != nil {
		return nil, err
	}
	s := &RTSPSource{
		URL: b.OptStr("url"), User: b.OptStr("rtsp_user"), Password: b.OptStr("rtsp_pwd"),
		ReconnectDelay: optInt(b, "rtsp_reconnect_delay"), SessionTimeout: optInt(b, "rtsp_session_timeout"),
		Timeout: optInt(b, "rtsp_timeout"), ConnTimeout: optInt(b, "rtsp_conn_timeout"),
		Audio: b.Bool("audio"), Video: b.Bool("video"),
		AudioCodec: codecOf(b, "audiocodec", "audiortpmap"), AudioFMTP: b.Str("audiofmtp"), AudioPT: intOf(b, "audiopt"),
		VideoCodec: codecOf(b, "videocodec", "videortpmap"), VideoFMTP: b.Str("videofmtp"), VideoPT: intOf(b, "videopt"),
		VideoBufferKF: b.Bool("videobufferkf"), Threads: optInt(b, "threads"), Iface: b.OptStr("rtspiface"),
		FailCheck: b.OptBool("rtsp_failcheck"),
	}
	if !s.Audio && !s.Video {
		return nil, errorf(ErrCantCreate, "Can't add 'rtsp' stream, no audio or video have to be streamed...")
	}
	return s, nil
}

// intOf is a validated integer element as int (0 when absent).
func intOf(b plugin.Body, key string) int {
	if n := optInt(b, key); n != nil {
		return *n
	}
	return 0
}

// codecOf is the codec element, or the codec named by the deprecated rtpmap one ("opus/48000/2"
// is opus): lower case, as Janus's janus_sdp_get_rtpmap_codec gives it.
func codecOf(b plugin.Body, codecKey, rtpmapKey string) string {
	if b.Has(codecKey) {
		return b.Str(codecKey)
	}
	name, _, _ := strings.Cut(b.Str(rtpmapKey), "/")
	return strings.ToLower(name)
}
