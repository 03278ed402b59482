package config

import (
	"errors"
	"fmt"
)

// TextRoom configures janus.plugin.textroom: text rooms over data channels.
type TextRoom struct {
	Enabled bool `yaml:"enabled"`
	// AdminKey, if set, must be carried by `create` (Janus's general.admin_key); `list` shows private
	// rooms to a request that carries it.
	AdminKey string `yaml:"admin_key"`
	// MaxMessageSize bounds one data channel request, in bytes: a longer one is answered with error
	// 412 and dropped.
	MaxMessageSize int `yaml:"max_message_size"`
	// Rooms are created at start.
	Rooms []TextRoomRoom `yaml:"rooms"`
}

// TextRoomRoom is one room of the configuration, with Janus's room settings.
type TextRoomRoom struct {
	ID          uint64 `yaml:"id"`
	Description string `yaml:"description"`
	Secret      string `yaml:"secret"`
	PIN         string `yaml:"pin"`
	IsPrivate   bool   `yaml:"is_private"`
	History     int    `yaml:"history"`
	Post        string `yaml:"post"`
}

func (t TextRoom) validate() []error {
	var errs []error
	if t.MaxMessageSize <= 0 {
		errs = append(errs, errors.New("plugins.textroom.max_message_size: must be positive"))
	}
	seen := map[uint64]bool{}
	for _, r := range t.Rooms {
		if r.ID == 0 || seen[r.ID] {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: room id %d is zero or repeated", r.ID))
		}
		seen[r.ID] = true
		if r.History < 0 {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: room %d has a negative history", r.ID))
		}
	}
	return errs
}
