package config

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
