package clusterrig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// AdminRequest sends an admin API request (body, to which it adds the secret and a transaction)
// to the node and decodes the reply into out.
func (n *Node) AdminRequest(ctx context.Context, body map[string]any, out any) error {
	body["admin_secret"] = AdminSecret
	body["transaction"] = fmt.Sprintf("t%d", time.Now().UnixNano())
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Admin(), bytes.NewReader(b))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}

// Members is how many nodes the node's view of the cluster holds (the admin API's cluster verb).
func (n *Node) Members(ctx context.Context) (int, error) {
	var r struct {
		Janus   string `json:"janus"`
		Cluster struct {
			Nodes []json.RawMessage `json:"nodes"`
		} `json:"cluster"`
	}
	if err := n.AdminRequest(ctx, map[string]any{"janus": "cluster"}, &r); err != nil {
		return 0, err
	}
	if r.Janus != "success" {
		return 0, fmt.Errorf("%s: cluster verb answered %q", n.ID, r.Janus)
	}
	return len(r.Cluster.Nodes), nil
}

// WaitMembers waits until every running node sees every node (heartbeats spread membership; a
// load started before that asks nodes for links to nodes they do not know yet).
func (c *Cluster) WaitMembers(ctx context.Context) error {
	for _, n := range c.Nodes {
		if !n.Alive() {
			continue
		}
		for {
			got, err := n.Members(ctx)
			if err == nil && got == len(c.Nodes) {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s sees %d of %d nodes (%v): %w", n.ID, got, len(c.Nodes), err, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}
