package whip

import (
	"context"
	"io"
	"net/http"

	"github.com/strata-rtc/strata/internal/gateway"
)

// patch answers PATCH on a resource (RFC 9725 4.3): an sdpfrag with the client's trickled
// candidates (204), or with new ICE credentials, an ICE restart (200 and the server's new
// credentials and candidates as an sdpfrag, with a new ETag).
func (h *Handler) patch(w http.ResponseWriter, r *http.Request, res *resource) {
	body, ok := h.readBody(w, r, fragType)
	if !ok {
		return
	}
	f, err := parseFrag(body)
	if err != nil {
		httpError(w, http.StatusBadRequest, "bad sdpfrag: "+err.Error())
		return
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	// If-Match names the ICE session the client means: "*" for any (an ICE restart must send it),
	// otherwise the ETag it got. A stale one means the client missed a restart.
	if m := r.Header.Get("If-Match"); m != "" && m != "*" && m != res.etag {
		httpError(w, http.StatusPreconditionFailed, "If-Match does not match the resource's ETag "+res.etag)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	ufrag, pwd := iceCredentials(res.offer)
	if f.Ufrag != "" && (f.Ufrag != ufrag || f.Pwd != pwd) {
		h.restart(ctx, w, res, f)
		return
	}
	if err := h.trickle(ctx, res, f); err != nil {
		status, why := statusOf(err)
		if status == http.StatusInternalServerError {
			status = http.StatusUnprocessableEntity // the candidates were refused (limits, state)
		}
		httpError(w, status, why)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// trickle hands the candidates to the handle's PeerConnection with Janus's trickle request.
func (h *Handler) trickle(ctx context.Context, res *resource, f frag) error {
	if len(f.Cands) == 0 && !f.End {
		return nil
	}
	cands := make([]map[string]any, 0, len(f.Cands)+1)
	for _, c := range f.Cands {
		m := map[string]any{"candidate": c.Candidate, "sdpMLineIndex": c.MLineIndex}
		if c.Mid != "" {
			m["sdpMid"] = c.Mid
		}
		cands = append(cands, m)
	}
	if f.End {
		cands = append(cands, map[string]any{"completed": true})
	}
	_, err := h.janus.call(ctx, gateway.Origin{}, map[string]any{"janus": "trickle", "session_id": res.sid,
		"handle_id": res.hid, "candidates": cands})
	return err
}

// restart renegotiates the client's last offer with its new credentials (and the candidates of the
// fragment), through the videoroom's configure as any renegotiation, and answers with the server's
// new credentials.
func (h *Handler) restart(ctx context.Context, w http.ResponseWriter, res *resource, f frag) {
	offer := withCredentials(res.offer, f.Ufrag, f.Pwd)
	body := res.restart
	if body == nil {
		body = map[string]any{"request": "configure"}
	}
	answer, err := h.message(ctx, res, body, offer)
	if err != nil {
		status, why := statusOf(err)
		httpError(w, status, "ICE restart: "+why)
		return
	}
	res.offer = offer
	res.etag = etagOf(answer)
	if len(f.Cands) > 0 || f.End {
		if err := h.trickle(ctx, res, f); err != nil {
			h.log.Debug("candidates of an ICE restart refused", "resource", res.id, "err", err)
		}
	}
	w.Header().Set("Content-Type", fragType)
	w.Header().Set("ETag", res.etag)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, answerFrag(answer))
}
