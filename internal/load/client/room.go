package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/strata-rtc/strata/internal/janusclient"
)

// ErrNoRoom is returned when the room does not exist on the server.
var ErrNoRoom = errors.New("room does not exist")

// ErrNoPlugin is returned when the server does not offer the run's plugin.
var ErrNoPlugin = errors.New("plugin not offered by the server")

// Admin is a control session on the server for room management, separate from the clients.
type Admin struct {
	c *janusclient.Client
	s *janusclient.Session
	h *janusclient.Handle
}

// Connect checks the server answers and offers the run's plugin (the videoroom, or the audio
// bridge), and attaches a control handle. Errors say which of those failed.
func Connect(ctx context.Context, e *Env) (*Admin, error) {
	c, err := e.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("cannot reach %s: %w", e.Server, err)
	}
	info, err := c.Info(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("cannot reach %s: %w", e.Server, err)
	}
	var si struct {
		Plugins map[string]any `json:"plugins"`
	}
	if json.Unmarshal(info.Raw, &si) == nil && len(si.Plugins) > 0 {
		if _, ok := si.Plugins[e.plugin()]; !ok {
			c.Close()
			return nil, fmt.Errorf("%s: %s: %w", e.Server, e.plugin(), ErrNoPlugin)
		}
	}
	s, err := c.Create(ctx)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: create session: %w", e.Server, err)
	}
	h, err := s.Attach(ctx, e.plugin())
	if err != nil {
		_ = s.Destroy(ctx)
		c.Close()
		return nil, fmt.Errorf("%s: attach %s: %w", e.Server, e.plugin(), err)
	}
	return &Admin{c: c, s: s, h: h}, nil
}

// Exists asks whether the room exists.
func (a *Admin) Exists(ctx context.Context, room uint64) (bool, error) {
	ev, err := a.h.Message(ctx, map[string]any{"request": "exists", "room": room}, nil)
	if err != nil {
		return false, err
	}
	var d struct {
		Exists bool `json:"exists"`
	}
	if err := ev.DecodeData(&d); err != nil {
		return false, err
	}
	return d.Exists, nil
}

// Create creates a room for the run: no bitrate cap (the generator's media is pre-encoded and
// cannot adapt), VP8 and Opus, enough publisher slots.
func (a *Admin) Create(ctx context.Context, room uint64, publishers int) error {
	_, err := a.h.Message(ctx, map[string]any{
		"request": "create", "room": room, "description": "strata load", "publishers": max(publishers, 1),
		"bitrate": 0, "fir_freq": 0, "videocodec": "vp8", "audiocodec": "opus", "permanent": false,
	}, nil)
	return err
}

// CreateAudioBridge creates an audio bridge room mixing at rate (Hz), with Janus's defaults
// otherwise (the audio level extension negotiated, no talking events).
func (a *Admin) CreateAudioBridge(ctx context.Context, room uint64, rate int) error {
	_, err := a.h.Message(ctx, map[string]any{
		"request": "create", "room": room, "description": "strata load", "sampling_rate": rate, "permanent": false,
	}, nil)
	return err
}

// Destroy destroys the room (either plugin's: the request is the same).
func (a *Admin) Destroy(ctx context.Context, room uint64) error {
	_, err := a.h.Message(ctx, map[string]any{"request": "destroy", "room": room, "permanent": false}, nil)
	return err
}

// Publishers lists the ids of the room's active publishers (listparticipants).
func (a *Admin) Publishers(ctx context.Context, room uint64) ([]uint64, error) {
	ev, err := a.h.Message(ctx, map[string]any{"request": "listparticipants", "room": room}, nil)
	if err != nil {
		return nil, err
	}
	var d struct {
		Participants []struct {
			ID        uint64 `json:"id"`
			Publisher bool   `json:"publisher"`
		} `json:"participants"`
	}
	if err := ev.DecodeData(&d); err != nil {
		return nil, err
	}
	var ids []uint64
	for _, p := range d.Participants {
		if p.Publisher {
			ids = append(ids, p.ID)
		}
	}
	return ids, nil
}

// Close destroys the control session.
func (a *Admin) Close(ctx context.Context) {
	_ = a.s.Destroy(ctx)
	a.c.Close()
}
