package videoroom

import (
	"context"
	"encoding/json"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
)

// RTP forwarders of a room that spans nodes: a forwarder is a sink on the publisher's Receiver,
// which lives on the publisher's node, so rtp_forward and stop_rtp_forward of another node's
// publisher are run there (opForward), whichever node the request reached; the forwarder then
// sends from that node, and lives and dies with the publisher there, as a local one does.
// listforwarders gathers every node's. A node answers opForward only for its own publishers, so
// two nodes that disagree on where a publisher is cannot pass a request back and forth.

// forwardTimeout bounds one forwarding request to another node.
const forwardTimeout = 5 * time.Second

// forwardRequests are the Janus requests opForward carries.
var forwardRequests = map[string]bool{"rtp_forward": true, "stop_rtp_forward": true, "listforwarders": true}

// forwardAt runs a forwarding request on node, the home of a publisher of room r.
func (c *clusterNode) forwardAt(r *room, node string, b body) (map[string]any, *requestError) {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, errorf(ErrUnknown, "Encoding the request: %v", err)
	}
	ctx, cancel := context.WithTimeout(c.ctx, forwardTimeout)
	defer cancel()
	var ans ownerAnswer
	if err := c.view.Call(ctx, node, clusterPath, ownerRequest{Op: opForward, Room: r.id, Body: raw}, &ans); err != nil {
		return nil, errorf(ErrUnknown, "The publisher's node %s is unavailable: %v", node, err)
	}
	if rerr := ans.err(); rerr != nil {
		return nil, rerr
	}
	var data map[string]any
	if err := json.Unmarshal(ans.Data, &data); err != nil || data == nil {
		return nil, errorf(ErrUnknown, "The publisher's node %s answered %q", node, ans.Data)
	}
	return data, nil
}

// serveForward runs another node's forwarding request on this node's own publishers.
func (c *clusterNode) serveForward(req ownerRequest) ownerAnswer {
	b, rerr := parseBody(req.Body)
	if rerr != nil {
		return refusal(rerr)
	}
	name, _, _ := b.str("request", false)
	if !forwardRequests[name] {
		return refusal(errorf(ErrInvalidRequest, "Unknown request '%s'", name))
	}
	if room, _, _ := b.uint("room", false); room != req.Room {
		return refusal(errorf(ErrInvalidElement, "The request names room %d, not %d", room, req.Room))
	}
	var data map[string]any
	if name == "listforwarders" {
		r, err := c.p.adminRoom(b)
		if err != nil {
			return refusal(err)
		}
		data = map[string]any{short: "forwarders", "room": r.id, "publishers": localForwarders(r)}
	} else {
		if _, pub, err := c.p.forwarderTarget(b); err != nil {
			return refusal(err)
		} else if pub.node != "" {
			return refusal(errorf(ErrNoSuchFeed, "Publisher %d is not on node %s", pub.id, c.self))
		}
		if data, rerr = syncRequests[name](c.p, b); rerr != nil {
			return refusal(rerr)
		}
	}
	raw, _ := json.Marshal(data)
	return ownerAnswer{Data: raw}
}

// otherForwarders are the forwarders of room r's publishers on the other nodes, as their
// listforwarders entries; a node that does not answer is left out.
func (c *clusterNode) otherForwarders(r *room, b body) []any {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil
	}
	var out []any
	cluster.CallOthers(c.ctx, c.view, clusterPath, ownerRequest{Op: opForward, Room: r.id, Body: raw}, forwardTimeout,
		func(node string, ans ownerAnswer, err error) {
			var data struct {
				Publishers []json.RawMessage `json:"publishers"`
			}
			if err == nil && ans.err() == nil {
				err = json.Unmarshal(ans.Data, &data)
			}
			if err != nil || ans.err() != nil {
				c.log.Debug("listing a node's forwarders", "node", node, "room", r.id, "err", err, "refused", ans.Reason)
				return
			}
			for _, p := range data.Publishers {
				out = append(out, p)
			}
		})
	return out
}
