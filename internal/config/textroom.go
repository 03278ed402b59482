package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// TextRoom configures janus.plugin.textroom: text rooms over data channels.
type TextRoom struct {
	Enabled bool `yaml:"enabled"`
	// AdminKey, if set, must be carried by `create` (Janus's general.admin_key); `list` shows private
	// rooms to a request that carries it.
	AdminKey string `yaml:"admin_key"`
	// StringIDs makes room ids strings instead of positive integers (Janus's general.string_ids).
	StringIDs bool `yaml:"string_ids"`
	// MaxMessageSize bounds one data channel request, in bytes: a longer one is answered with error
	// 412 and dropped.
	MaxMessageSize int `yaml:"max_message_size"`
	// Post is how messages reach the rooms' HTTP backends (a room's `post`).
	Post TextRoomPost `yaml:"post"`
	// Rooms are created at start.
	Rooms []TextRoomRoom `yaml:"rooms"`
}

// TextRoomPost bounds the HTTP POSTs of the rooms' messages to their backends: they are sent by
// Workers goroutines from a queue of QueueSize, each within Timeout; a message that finds the queue
// full is dropped (and counted), so a slow backend never holds a room.
type TextRoomPost struct {
	Workers   int           `yaml:"workers"`
	QueueSize int           `yaml:"queue_size"`
	Timeout   time.Duration `yaml:"timeout"`
}

// TextRoomRoom is one room of the configuration, with Janus's room settings. ID is a positive
// integer, written in decimal, unless string_ids is on.
type TextRoomRoom struct {
	ID          string `yaml:"id"`
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
	if t.Post.Workers <= 0 || t.Post.QueueSize <= 0 || t.Post.Timeout <= 0 {
		errs = append(errs, errors.New("plugins.textroom.post: workers, queue_size and timeout must be positive"))
	}
	seen := map[string]bool{}
	for _, r := range t.Rooms {
		if err := ValidTextRoomID(r.ID, t.StringIDs); err != nil {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: %w", err))
		} else if seen[r.ID] {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: room id %q is repeated", r.ID))
		}
		seen[r.ID] = true
		if r.History < 0 {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: room %s has a negative history", r.ID))
		}
		if err := ValidPostURL(r.Post); err != nil {
			errs = append(errs, fmt.Errorf("plugins.textroom.rooms: room %s: %w", r.ID, err))
		}
	}
	return errs
}

// ValidTextRoomID checks a room id of the configuration: a non-empty string with string ids, else a
// positive integer in plain decimal (so that "0x10" or "007" do not silently become other rooms).
func ValidTextRoomID(id string, stringIDs bool) error {
	if stringIDs {
		if id == "" {
			return errors.New("empty room id")
		}
		return nil
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != id {
		return fmt.Errorf("room id %q is not a positive integer (set string_ids for string ids)", id)
	}
	return nil
}

// ValidPostURL checks a room's HTTP backend: empty (none) or an absolute http or https URL.
func ValidPostURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("post %q is not an http(s) URL", s)
	}
	return nil
}
