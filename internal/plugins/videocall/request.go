package videocall

import (
	"github.com/strata-rtc/strata/internal/plugin"
)

// Janus's videocall error codes.
const (
	ErrNoMessage         = 470
	ErrInvalidJSON       = 471
	ErrInvalidRequest    = 472
	ErrRegisterFirst     = 473
	ErrInvalidElement    = 474
	ErrMissingElement    = 475
	ErrUsernameTaken     = 476
	ErrAlreadyRegistered = 477
	ErrNoSuchUsername    = 478
	ErrUseEchoTest       = 479
	ErrAlreadyInCall     = 480
	ErrNoCall            = 481
	ErrMissingSDP        = 482
	ErrInvalidSDP        = 483
	ErrUnknown           = 499
)

var codes = plugin.Codes{
	NoMessage: ErrNoMessage, InvalidJSON: ErrInvalidJSON, Missing: ErrMissingElement, Invalid: ErrInvalidElement,
}

var (
	usernameParams = []plugin.Param{{Name: "username", Kind: plugin.String, Required: true}}
	// setParams is Janus's set_parameters, then the layer fields it reads on its own.
	setParams = []plugin.Param{
		{Name: "audio", Kind: plugin.Bool}, {Name: "video", Kind: plugin.Bool},
		{Name: "bitrate", Kind: plugin.Positive}, {Name: "record", Kind: plugin.Bool},
		{Name: "filename", Kind: plugin.String}, {Name: "restart", Kind: plugin.Bool},
		{Name: "substream", Kind: plugin.Positive}, {Name: "temporal", Kind: plugin.Positive},
		{Name: "fallback", Kind: plugin.Positive},
		{Name: "spatial_layer", Kind: plugin.Positive}, {Name: "temporal_layer", Kind: plugin.Positive},
	}
)

// request is one parsed message: its lower-cased name and its body.
type request struct {
	name string
	body plugin.Body
}

// parseRequest checks what every request needs: an object with a string "request".
func parseRequest(raw []byte) (*request, *plugin.RequestError) {
	name, b, err := plugin.DecodeRequest(raw, &codes)
	if err != nil {
		return nil, err
	}
	return &request{name: name, body: b}, nil
}

// username validates and returns the request's "username".
func (r *request) username() (string, *plugin.RequestError) {
	if err := r.body.Validate(usernameParams...); err != nil {
		return "", err
	}
	return r.body.Str("username"), nil
}

// settings is a parsed `set`: every field optional.
type settings struct {
	audio, video, record, restart *bool
	bitrate                       *int64
	filename                      *string
	substream, temporal           *int64
	spatial, temporalSVC          *int64
}

// parseSet validates a `set` as Janus does, layer values 0 to 2.
func parseSet(b plugin.Body) (*settings, *plugin.RequestError) {
	if err := b.Validate(setParams...); err != nil {
		return nil, err
	}
	s := &settings{
		audio: b.OptBool("audio"), video: b.OptBool("video"), record: b.OptBool("record"), restart: b.OptBool("restart"),
		bitrate: b.OptInt("bitrate"), filename: b.OptStr("filename"),
		substream: b.OptInt("substream"), temporal: b.OptInt("temporal"),
		spatial: b.OptInt("spatial_layer"), temporalSVC: b.OptInt("temporal_layer"),
	}
	for _, l := range []struct {
		name string
		v    *int64
	}{{"substream", s.substream}, {"temporal", s.temporal}, {"spatial_layer", s.spatial}, {"temporal_layer", s.temporalSVC}} {
		if l.v != nil && *l.v > 2 {
			return nil, plugin.Errorf(ErrInvalidElement, "Invalid value (%s should be 0, 1 or 2)", l.name)
		}
	}
	return s, nil
}
