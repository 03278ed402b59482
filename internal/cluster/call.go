package cluster

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// MaxCallBody bounds a node-to-node request and its answer.
const MaxCallBody = 1 << 20

// CallTimeout bounds a Call whose context has no deadline.
const CallTimeout = 5 * time.Second

// NodeHeader names the calling node on a node-to-node request.
const NodeHeader = "X-Strata-Node"

// HandlerFunc serves one path of the cluster listener: from is the calling node's id.
type HandlerFunc = func(ctx context.Context, from string, req json.RawMessage) (any, error)

// callError is the body of a failed call's answer.
type callError struct {
	Error string `json:"error"`
}

// Call posts req as JSON to node's cluster listener at path and decodes the answer into resp
// (nil: the answer is discarded).
func (n *Node) Call(ctx context.Context, node, path string, req, resp any) error {
	rec, ok := n.Node(node)
	if !ok {
		// A node that joined since the last heartbeat (a relay asking for a link back) is not in
		// the membership yet.
		n.refreshMembers(ctx)
		rec, ok = n.Node(node)
	}
	if !ok {
		return fmt.Errorf("cluster: call %s on node %s: no such live node", path, node)
	}
	if rec.Internal == "" {
		return fmt.Errorf("cluster: call %s on node %s: the node advertises no cluster listener", path, node)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("cluster: call %s on node %s: encode: %w", path, node, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, CallTimeout)
		defer cancel()
	}
	url := strings.TrimSuffix(rec.Internal, "/") + "/" + strings.TrimPrefix(path, "/")
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("cluster: call %s on node %s: %w", path, node, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+n.cfg.Secret)
	hreq.Header.Set(NodeHeader, n.cfg.NodeID)
	hresp, err := n.client.Do(hreq)
	if err != nil {
		return fmt.Errorf("cluster: call %s on node %s: %w", path, node, err)
	}
	defer hresp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(hresp.Body, MaxCallBody+1))
	if err != nil {
		return fmt.Errorf("cluster: call %s on node %s: read the answer: %w", path, node, err)
	}
	if len(answer) > MaxCallBody {
		return fmt.Errorf("cluster: call %s on node %s: answer exceeds %d bytes", path, node, MaxCallBody)
	}
	if hresp.StatusCode != http.StatusOK {
		var ce callError
		if json.Unmarshal(answer, &ce) != nil || ce.Error == "" {
			ce.Error = strings.TrimSpace(truncate(string(answer)))
		}
		return fmt.Errorf("cluster: call %s on node %s: %s: %s", path, node, hresp.Status, ce.Error)
	}
	if resp == nil {
		return nil
	}
	if err := json.Unmarshal(answer, resp); err != nil {
		return fmt.Errorf("cluster: call %s on node %s: decode the answer: %w", path, node, err)
	}
	return nil
}

// Handle serves path on the cluster listener.
func (n *Node) Handle(path string, f func(ctx context.Context, from string, req json.RawMessage) (any, error)) {
	n.mu.Lock()
	n.handlers["/"+strings.TrimPrefix(path, "/")] = f
	n.mu.Unlock()
}

// Handler serves what Handle registered, to callers that carry the cluster's secret.
func (n *Node) Handler() http.Handler { return http.HandlerFunc(n.serveCall) }

func (n *Node) serveCall(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(callError{Error: msg})
	}
	if !n.authorized(r) {
		fail(http.StatusUnauthorized, "missing or wrong cluster secret")
		return
	}
	if r.Method != http.MethodPost {
		fail(http.StatusMethodNotAllowed, "node-to-node requests are POST")
		return
	}
	n.mu.Lock()
	f := n.handlers[r.URL.Path]
	n.mu.Unlock()
	if f == nil {
		fail(http.StatusNotFound, "no handler for "+truncate(r.URL.Path)+" on node "+n.cfg.NodeID)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("request exceeds %d bytes", MaxCallBody))
			return
		}
		fail(http.StatusBadRequest, "read the request: "+err.Error())
		return
	}
	if !json.Valid(body) {
		fail(http.StatusBadRequest, "the request is not JSON")
		return
	}
	from := r.Header.Get(NodeHeader)
	resp, err := f(r.Context(), from, body)
	if err != nil {
		fail(http.StatusInternalServerError, fmt.Sprintf("node %s: %v", n.cfg.NodeID, err))
		return
	}
	out, err := json.Marshal(resp)
	if err != nil {
		fail(http.StatusInternalServerError, fmt.Sprintf("node %s: encode the answer: %v", n.cfg.NodeID, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

// authorized checks the bearer in constant time (a timing difference must not reveal how much of
// a guess was right).
func (n *Node) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || n.cfg.Secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(n.cfg.Secret)) == 1
}
