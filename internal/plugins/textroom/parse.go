package textroom

import (
	"github.com/strata-rtc/strata/internal/plugin"
)

// dcRequest is a data channel request that passed parsing.
type dcRequest struct {
	name, transaction string
	body              plugin.Body
}

// parseRequest reads one data channel message: at most limit bytes of a JSON object with the strings
// "textroom" and "transaction". An error's reply carries no transaction, as in Janus. Janus drops a message that is not JSON without a word; strata answers it with 412 so
// that the client learns why nothing happened.
func parseRequest(raw []byte, limit int) (dcRequest, *plugin.RequestError) {
	if len(raw) > limit {
		return dcRequest{}, plugin.Errorf(ErrInvalidJSON, "JSON error: message too large (%d bytes, at most %d)", len(raw), limit)
	}
	b, err := plugin.ParseBody(raw, &codes)
	if err != nil {
		return dcRequest{}, err
	}
	if err := b.Validate(plugin.Param{Name: "textroom", Kind: plugin.String, Required: true},
		plugin.Param{Name: "transaction", Kind: plugin.String, Required: true}); err != nil {
		return dcRequest{}, err
	}
	return dcRequest{name: b.Str("textroom"), transaction: b.Str("transaction"), body: b}, nil
}
