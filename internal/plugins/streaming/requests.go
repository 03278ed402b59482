package streaming

import (
	"strings"

	"github.com/strata-rtc/strata/internal/plugin"
)

// The synchronous requests other than create (create.go). Optional elements are pointers (nil:
// absent), because Janus often treats absent differently from the zero value. Secrets are kept as
// given and applied by Check once the mountpoint is known.

// List is `list`. Janus checks admin_key only when it is a non-empty string, and then lists the
// private mountpoints too.
type List struct{ AdminKey *string }

// Check applies the plugin's admin_key: it reports whether private mountpoints are listed, and 457
// for a wrong key.
func (r *List) Check(adminKey string) (private bool, err *Error) {
	if adminKey == "" || r.AdminKey == nil || *r.AdminKey == "" {
		return false, nil
	}
	if err := codes.CheckSecret("admin_key", r.AdminKey, adminKey); err != nil {
		return false, err
	}
	return true, nil
}

// Info is `info`. A wrong or absent secret is no error: it only hides the details (Admin).
type Info struct {
	ID     uint64
	Secret Secret
}

// Admin reports whether the reply may have the mountpoint's details: it has no secret, or the
// request carries it as a string.
func (r *Info) Admin(secret string) bool {
	return secret == "" || r.Secret.Present && r.Secret.Check(secret) == nil
}

// Destroy is `destroy`.
type Destroy struct {
	ID        uint64
	Permanent bool
	Secret    Secret
}

// Edit is `edit`: new description, metadata, secret, pin or privacy. An empty new_description or
// new_secret changes nothing; an empty new_pin removes the pin. Janus words its unknown
// mountpoint differently here: "No such mountpoint (<id>)".
type Edit struct {
	ID             uint64
	NewDescription *string
	NewMetadata    *string
	NewSecret      *string
	NewPIN         *string
	NewIsPrivate   *bool
	Permanent      bool
	EditedEvent    bool
	Secret         Secret
}

// NoSuchMountpoint is edit's 455.
func (r *Edit) NoSuchMountpoint() *Error {
	return errorf(ErrNoSuchMP, "No such mountpoint (%d)", r.ID)
}

// Toggle is `enable` or `disable` (Op says which). Disable's stop_recording is checked only after
// the secret, as in Janus.
type Toggle struct {
	Op            string
	ID            uint64
	Secret        Secret
	StopRecording bool
	tableErr      *Error
}

// Check applies the mountpoint's secret, then disable's table.
func (r *Toggle) Check(secret string) *Error {
	if err := r.Secret.Check(secret); err != nil {
		return err
	}
	return r.tableErr
}

// Recording is `recording`: Action is start or stop (lower case; Janus compares it
// case-insensitively). Media names the streams by mid, with the file to record each to (start);
// Janus skips items that are not objects or lack a string mid (or, for start, filename). Audio,
// Video and Data are Janus's deprecated per-kind form: file names for start, flags for stop.
type Recording struct {
	Action string
	ID     uint64
	Secret Secret
	Media  []RecordMedia
	Audio  *string
	Video  *string
	Data   *string
	// StopAudio, StopVideo and StopData are stop's deprecated flags.
	StopAudio, StopVideo, StopData bool
	tableErr                       *Error
}

// RecordMedia is one item of recording's media array.
type RecordMedia struct {
	MID      string
	Filename string // start only
}

// Check is what Janus checks after finding the mountpoint: recording is for RTP mountpoints only
// (452), then the secret, then the start or stop table.
func (r *Recording) Check(secret string, rtp bool) *Error {
	if !rtp {
		return errorf(ErrInvalidReq, "Recording is only available on RTP-based live streams")
	}
	if err := r.Secret.Check(secret); err != nil {
		return err
	}
	return r.tableErr
}

// KickAll is `kick_all`: every viewer of the mountpoint is hung up.
type KickAll struct {
	ID     uint64
	Secret Secret
}

func (*List) Name() string      { return "list" }
func (*Info) Name() string      { return "info" }
func (*Destroy) Name() string   { return "destroy" }
func (*Edit) Name() string      { return "edit" }
func (r *Toggle) Name() string  { return r.Op }
func (*Recording) Name() string { return "recording" }
func (*KickAll) Name() string   { return "kick_all" }
func (*Kick) Name() string      { return "kick" }

func parseList(b plugin.Body) (Request, *Error) {
	r := &List{}
	if b.Validate(need(str("admin_key"))) == nil {
		r.AdminKey = b.OptStr("admin_key")
	}
	return r, nil
}

func parseInfo(b plugin.Body) (Request, *Error) {
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	return &Info{ID: id, Secret: readSecret(b, "secret")}, nil
}

func parseDestroy(b plugin.Body) (Request, *Error) {
	if err := b.Validate(boo("permanent")); err != nil {
		return nil, err
	}
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	return &Destroy{ID: id, Permanent: b.Bool("permanent"), Secret: readSecret(b, "secret")}, nil
}

func parseEdit(b plugin.Body) (Request, *Error) {
	if err := b.Validate(str("new_description"), str("new_metadata"), str("new_secret"), str("new_pin"),
		boo("new_is_private"), boo("permanent"), boo("edited_event")); err != nil {
		return nil, err
	}
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	return &Edit{
		ID:             id,
		NewDescription: b.OptStr("new_description"),
		NewMetadata:    b.OptStr("new_metadata"),
		NewSecret:      b.OptStr("new_secret"),
		NewPIN:         b.OptStr("new_pin"),
		NewIsPrivate:   b.OptBool("new_is_private"),
		Permanent:      b.Bool("permanent"),
		EditedEvent:    b.Bool("edited_event"),
		Secret:         readSecret(b, "secret"),
	}, nil
}

func parseToggle(op string) func(plugin.Body) (Request, *Error) {
	return func(b plugin.Body) (Request, *Error) {
		id, err := idOnly(b)
		if err != nil {
			return nil, err
		}
		r := &Toggle{Op: op, ID: id, Secret: readSecret(b, "secret")}
		if op == "disable" {
			r.tableErr = b.Validate(boo("stop_recording"))
			r.StopRecording = b.Bool("stop_recording")
		}
		return r, nil
	}
}

func parseRecording(b plugin.Body) (Request, *Error) {
	if err := b.Validate(need(str("action"))); err != nil {
		return nil, err
	}
	action := strings.ToLower(b.Str("action"))
	if action != "start" && action != "stop" {
		return nil, errorf(ErrInvalid, "Invalid action (should be start|stop)")
	}
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	r := &Recording{Action: action, ID: id, Secret: readSecret(b, "secret")}
	if action == "start" {
		r.tableErr = b.Validate(arr("media"), str("audio"), str("video"), str("data"))
		r.Audio, r.Video, r.Data = b.OptStr("audio"), b.OptStr("video"), b.OptStr("data")
	} else {
		r.tableErr = b.Validate(arr("media"), boo("audio"), boo("video"), boo("data"))
		r.StopAudio, r.StopVideo, r.StopData = b.Bool("audio"), b.Bool("video"), b.Bool("data")
	}
	if r.tableErr == nil {
		r.Media = recordMedia(b, action == "start")
	}
	return r, nil
}

// recordMedia reads recording's media items as Janus does: anything that is not an object with a
// string mid (and, to start, a string filename) is skipped.
func recordMedia(b plugin.Body, start bool) []RecordMedia {
	var out []RecordMedia
	for _, it := range b.Items("media") {
		if it.Validate(need(str("mid"))) != nil {
			continue
		}
		m := RecordMedia{MID: it.Str("mid")}
		if start {
			if it.Validate(need(str("filename"))) != nil {
				continue
			}
			m.Filename = it.Str("filename")
		}
		out = append(out, m)
	}
	return out
}

// Kick is `kick`, strata's (Janus, up to its master branch, has only kick_all): the viewer whose
// handle id is Viewer is hung up, as kick_all hangs up every viewer.
type Kick struct {
	ID     uint64
	Viewer uint64
	Secret Secret
}

func parseKick(b plugin.Body) (Request, *Error) {
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	if err := b.Validate(need(pos("viewer"))); err != nil {
		return nil, err
	}
	return &Kick{ID: id, Viewer: b.Uint("viewer"), Secret: readSecret(b, "secret")}, nil
}

func parseKickAll(b plugin.Body) (Request, *Error) {
	id, err := idOnly(b)
	if err != nil {
		return nil, err
	}
	return &KickAll{ID: id, Secret: readSecret(b, "secret")}, nil
}
