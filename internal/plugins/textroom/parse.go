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
// "textroom" and "transaction". On an error the transaction is whatever could be read ("" if
// nothing). Janus drops a message that is not JSON without a word; strata answers it with 412 so
// that the client learns why nothing happened.
func parseRequest(raw []byte, limit int) (dcRequest, *plugin.RequestError) {
	if len(raw) > limit {
		return dcRequest{}, plugin.Errorf(ErrInvalidJSON, "JSON error: message too large (%d bytes, at most %d)", len(raw), limit)
	}
	b, err := plugin.ParseBody(raw, &codes)
	if err != nil {
		return dcRequest{}, err
	}
	req := dcRequest{body: b}
	if err := b.Validate(plugin.Param{Name: "textroom", Kind: plugin.String, Required: true},
		plugin.Param{Name: "transaction", Kind: plugin.String, Required: true}); err != nil {
		if tx := b.OptStr("transaction"); tx != nil && b.Validate(plugin.Param{Name: "transaction", Kind: plugin.String}) == nil {
			req.transaction = *tx
		}
		return req, err
	}
	req.name, req.transaction = b.Str("textroom"), b.Str("transaction")
	return req, nil
}
