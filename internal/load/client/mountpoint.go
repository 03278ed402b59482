package client

import (
	"context"
	"fmt"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// Payload types and mids of the mountpoints the generator creates: Opus and VP8 as Janus's sample
// rtp mountpoint has them.
const (
	MountpointAudioPT = 111
	MountpointVideoPT = 96
)

// errNoSuchMountpoint is the streaming plugin's 455.
const errNoSuchMountpoint = 455

// MountpointExists asks the streaming plugin whether mountpoint id exists (info; 455 is no).
func (a *Admin) MountpointExists(ctx context.Context, id uint64) (bool, error) {
	_, err := a.h.Message(ctx, map[string]any{"request": "info", "id": id}, nil)
	if janusclient.Code(err) == errNoSuchMountpoint {
		return false, nil
	}
	return err == nil, err
}

// CreateMountpoint creates rtp mountpoint id with an Opus stream (mid "a") and, with video, a VP8
// stream (mid "v") whose RTCP port carries keyframe requests back to the source. The plugin picks
// the ports (port 0); the target says where to send, on host.
func (a *Admin) CreateMountpoint(ctx context.Context, id uint64, video bool, host string) (FeedTarget, error) {
	media := []map[string]any{{"type": "audio", "mid": "a", "label": "audio", "port": 0, "pt": MountpointAudioPT, "codec": "opus"}}
	if video {
		media = append(media, map[string]any{"type": "video", "mid": "v", "label": "video", "port": 0, "rtcpport": 0,
			"pt": MountpointVideoPT, "codec": "vp8"})
	}
	ev, err := a.h.Message(ctx, map[string]any{"request": "create", "type": "rtp", "id": id, "name": fmt.Sprintf("load-%d", id),
		"description": "strata load", "permanent": false, "media": media}, nil)
	if err != nil {
		return FeedTarget{}, err
	}
	type port struct {
		Type     string `json:"type"`
		Port     int    `json:"port"`
		RTCPPort int    `json:"rtcp_port"`
	}
	// Janus 1.1.2 (and strata) list the streams' ports under "ports".
	var d struct {
		Stream struct {
			Ports []port `json:"ports"`
		} `json:"stream"`
	}
	if err := ev.DecodeData(&d); err != nil {
		return FeedTarget{}, fmt.Errorf("create: %w", err)
	}
	t := FeedTarget{Host: host, AudioPT: MountpointAudioPT, VideoPT: MountpointVideoPT}
	for _, p := range d.Stream.Ports {
		switch p.Type {
		case "audio":
			t.Audio = p.Port
		case "video":
			t.Video, t.VideoRTCP = p.Port, p.RTCPPort
		}
	}
	if t.Audio == 0 || video && t.Video == 0 {
		return t, fmt.Errorf("create: the reply does not say which ports the mountpoint listens on: %s", ev.Raw)
	}
	return t, nil
}

// DestroyMountpoint destroys mountpoint id.
func (a *Admin) DestroyMountpoint(ctx context.Context, id uint64) error {
	_, err := a.h.Message(ctx, map[string]any{"request": "destroy", "id": id, "permanent": false}, nil)
	return err
}
