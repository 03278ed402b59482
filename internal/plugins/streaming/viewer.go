package streaming

import "github.com/strata-rtc/strata/internal/plugin"

// The asynchronous requests of a viewer's handle. Janus checks the handle's state before some of
// them (configure and switch need a mountpoint being watched: 455 "Can't configure: not on a
// mountpoint", "Can't switch: not on a mountpoint"), so the plugin makes those checks between
// Decode and ParseBody.

// Watch is `watch`: strata offers the mountpoint's streams (those whose mids are in Media; all when
// it is empty) and the client answers. Restart asks for an ICE restart of the current watch.
type Watch struct {
	ID      uint64
	PIN     Secret
	Media   []string
	Restart bool
	// OfferAudio, OfferVideo and OfferData are Janus's deprecated way to leave kinds out.
	OfferAudio, OfferVideo, OfferData *bool
	// The initial layers of a simulcast or SVC stream (nil: the highest), checked by
	// CheckSimulcast and CheckSVC only when the mountpoint has such a stream, as in Janus.
	Substream, Temporal, Fallback *int
	SpatialLayer, TemporalLayer   *int
	simulcastErr, svcErr          *Error
}

// CheckSimulcast is Janus's check of substream, temporal and fallback, made for each simulcast
// stream of the mountpoint.
func (r *Watch) CheckSimulcast() *Error { return r.simulcastErr }

// CheckSVC is Janus's check of spatial_layer and temporal_layer, made for each SVC stream.
func (r *Watch) CheckSVC() *Error { return r.svcErr }

// Configure is `configure`: per stream (MID; nil: every stream) sending on or off, simulcast
// substream, temporal layer and fallback (ms), SVC layers, and the playout-delay extension's
// bounds. Audio, Video and Data are Janus's deprecated per-kind switches; Janus 1.1.2's table types
// them as strings (its code, not its documentation, which says booleans).
type Configure struct {
	MID                         *string
	Send                        *bool
	Substream, Temporal         *int
	Fallback                    *int
	SpatialLayer, TemporalLayer *int
	MinDelay, MaxDelay          *int
	Audio, Video, Data          *string
}

// Switch is `switch`: the viewer moves to another live RTP mountpoint on the same PeerConnection.
// Janus checks the handle's current mountpoint first (455 none; 458 "Can't switch: not on a live
// RTP mountpoint"), then parses the id, then the target (455; 458 "Can't switch: target is not a
// live RTP mountpoint").
type Switch struct{ ID uint64 }

// Start is `start` (with the client's answer), Pause `pause`, Stop `stop`. Start and pause without
// a mountpoint are 455 "Can't start: no mountpoint set" (pause too uses the word start in Janus).
type (
	Start struct{}
	Pause struct{}
	Stop  struct{}
)

func (*Watch) Name() string     { return "watch" }
func (*Configure) Name() string { return "configure" }
func (*Switch) Name() string    { return "switch" }
func (*Start) Name() string     { return "start" }
func (*Pause) Name() string     { return "pause" }
func (*Stop) Name() string      { return "stop" }

// NotWatching is the 455 Janus gives a viewer request that needs a mountpoint before watch.
func NotWatching(name string) *Error {
	switch name {
	case "configure":
		return errorf(ErrNoSuchMP, "Can't configure: not on a mountpoint")
	case "switch":
		return errorf(ErrNoSuchMP, "Can't switch: not on a mountpoint")
	}
	return errorf(ErrNoSuchMP, "Can't start: no mountpoint set")
}

var (
	simulcastParams = []plugin.Param{pos("substream"), pos("temporal"), pos("fallback")}
	svcParams       = []plugin.Param{pos("spatial_layer"), pos("temporal_layer")}
)

func parseWatch(b plugin.Body) (Request, *Error) {
	if err := b.Validate(str("pin"), arr("media"), boo("restart"), boo("offer_audio"), boo("offer_video"),
		boo("offer_data")); err != nil {
		return nil, err
	}
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	mids, err := b.Strings("media", "The media array must only contain strings (mid values)")
	if err != nil {
		return nil, err
	}
	return &Watch{
		ID: id, PIN: readSecret(b, "pin"), Media: mids, Restart: b.Bool("restart"),
		OfferAudio: b.OptBool("offer_audio"), OfferVideo: b.OptBool("offer_video"), OfferData: b.OptBool("offer_data"),
		Substream: optInt(b, "substream"), Temporal: optInt(b, "temporal"), Fallback: optInt(b, "fallback"),
		SpatialLayer: optInt(b, "spatial_layer"), TemporalLayer: optInt(b, "temporal_layer"),
		simulcastErr: b.Validate(simulcastParams...), svcErr: b.Validate(svcParams...),
	}, nil
}

func parseConfigure(b plugin.Body) (Request, *Error) {
	params := append([]plugin.Param{str("mid"), boo("send")}, simulcastParams...)
	params = append(params, svcParams...)
	params = append(params, integer("min_delay"), integer("max_delay"), str("audio"), str("video"), str("data"))
	if err := b.Validate(params...); err != nil {
		return nil, err
	}
	return &Configure{
		MID: b.OptStr("mid"), Send: b.OptBool("send"),
		Substream: optInt(b, "substream"), Temporal: optInt(b, "temporal"), Fallback: optInt(b, "fallback"),
		SpatialLayer: optInt(b, "spatial_layer"), TemporalLayer: optInt(b, "temporal_layer"),
		MinDelay: optInt(b, "min_delay"), MaxDelay: optInt(b, "max_delay"),
		Audio: b.OptStr("audio"), Video: b.OptStr("video"), Data: b.OptStr("data"),
	}, nil
}

func parseSwitch(b plugin.Body) (Request, *Error) {
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	return &Switch{ID: id}, nil
}
