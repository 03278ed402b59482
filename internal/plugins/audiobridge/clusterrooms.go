package audiobridge

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/strata-rtc/strata/internal/cluster"
)

// Rooms created through the API exist on every node: the node that creates one announces it on
// the plugin's topic (and a node that starts asks the others for theirs), so that a participant
// can join it anywhere; a destroy goes to the room's owner, which announces it.

// roomsTopic carries the rooms created and destroyed.
const roomsTopic = "audiobridge"

// Kinds of the rooms topic's events.
const (
	kindCreated   = "created"
	kindEdited    = "edited" // edit or allowed changed a room's options (its owner's)
	kindDestroyed = "destroyed"
)

// opRooms asks any node for the rooms it knows that were created through the API.
const opRooms = "rooms"

// maxWireRooms bounds the rooms a node hands over.
const maxWireRooms = 10000

// wireRoom is a created room.
type wireRoom struct {
	Room    uint64      `json:"room"`
	Options RoomOptions `json:"options"`
}

// decodeWireRoom reads a room of the rooms topic: a created one with its options checked, a
// destroyed one by its id.
func decodeWireRoom(raw []byte, withOptions bool) (wireRoom, error) {
	var w wireRoom
	if err := json.Unmarshal(raw, &w); err != nil {
		return w, fmt.Errorf("audiobridge room: %w", err)
	}
	if w.Room == 0 {
		return w, fmt.Errorf("audiobridge room: no id")
	}
	if withOptions {
		return w, w.check()
	}
	return w, nil
}

// check refuses options a create could not have resolved.
func (w wireRoom) check() error {
	if w.Room == 0 {
		return fmt.Errorf("no room")
	}
	if !SupportedSamplingRate(w.Options.SamplingRate) {
		return fmt.Errorf("room %d: sampling rate %d", w.Room, w.Options.SamplingRate)
	}
	o := w.Options
	if o.AudioActivePackets < 0 || o.AudioLevelAverage < 0 || o.DefaultPrebuffering < 0 || o.DefaultPrebuffering > MaxPrebuffering ||
		o.DefaultExpectedLoss < 0 || o.DefaultExpectedLoss > MaxExpectedLoss || o.DefaultBitrate < 0 || o.DefaultBitrate > MaxOpusBitrate {
		return fmt.Errorf("room %d: options out of range", w.Room)
	}
	return nil
}

func (c *clusterNode) startRooms() {
	c.stopRooms = c.view.Topic(roomsTopic).Subscribe(c.onRoomsEvent, func(string) { go c.fetchRooms() })
	go c.fetchRooms()
	go cluster.AfterSettle(c.ctx, c.fetchRooms)
}

// created announces a room this node created, and follows it (taking its lease first).
func (c *clusterNode) created(id uint64) {
	r, err := c.p.room(id)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.apiRooms[id] = true
	c.mu.Unlock()
	// The room is announced once it has an owner (this node, unless another took the id's lease
	// first): a node that hears of it before would take the lease itself.
	if _, err := c.follow(r).local(c.ctx); err != nil {
		c.log.Warn("a created audiobridge room has no owner", "room", id, "err", err)
	}
	r.mu.Lock()
	w := wireRoom{Room: id, Options: r.opts}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, ownerWait)
	defer cancel()
	if err := c.view.Topic(roomsTopic).Publish(ctx, kindCreated, 0, w); err != nil {
		c.log.Warn("announcing a created audiobridge room", "room", id, "err", err)
	}
}

// destroyed announces a room this node destroyed as its owner.
func (c *clusterNode) destroyed(id uint64) {
	c.forget(id)
	ctx, cancel := context.WithTimeout(c.ctx, ownerWait)
	defer cancel()
	if err := c.view.Topic(roomsTopic).Publish(ctx, kindDestroyed, 0, wireRoom{Room: id}); err != nil {
		c.log.Warn("announcing a destroyed audiobridge room", "room", id, "err", err)
	}
}

// forget stops following a room that is gone.
func (c *clusterNode) forget(id uint64) {
	c.mu.Lock()
	cr := c.rooms[id]
	delete(c.rooms, id)
	delete(c.apiRooms, id)
	c.mu.Unlock()
	if cr != nil {
		cr.stop()
	}
}

// onRoomsEvent learns a room another node created or destroyed.
func (c *clusterNode) onRoomsEvent(env cluster.Envelope) {
	w, err := decodeWireRoom(env.Body, env.Kind != kindDestroyed)
	if err != nil {
		c.log.Warn("bad audiobridge rooms event", "from", env.From, "kind", env.Kind, "err", err)
		return
	}
	switch env.Kind {
	case kindCreated:
		c.adopt(w)
	case kindEdited:
		if r, err := c.p.room(w.Room); err == nil {
			r.mu.Lock()
			w.Options.Record = r.opts.Record // the room's recording stays where it is
			r.opts = w.Options
			r.mu.Unlock()
		}
	case kindDestroyed:
		c.p.mu.Lock()
		r := c.p.rooms[w.Room]
		delete(c.p.rooms, w.Room)
		c.p.mu.Unlock()
		c.forget(w.Room)
		if r != nil {
			r.destroy()
		}
	}
}

// adopt makes a copy of a room another node created, unless this node has one.
func (c *clusterNode) adopt(w wireRoom) {
	c.p.mu.Lock()
	if c.p.rooms[w.Room] != nil {
		c.p.mu.Unlock()
		return
	}
	o := w.Options
	o.Record = false // the room's recording is its creator's
	c.p.rooms[w.Room] = newRoom(c.p, w.Room, o)
	c.p.mu.Unlock()
	c.mu.Lock()
	c.apiRooms[w.Room] = true
	c.mu.Unlock()
}

// knownRooms are the rooms created through the API that this node has.
func (c *clusterNode) knownRooms() []wireRoom {
	c.mu.Lock()
	ids := make([]uint64, 0, len(c.apiRooms))
	for id := range c.apiRooms {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	out := []wireRoom{}
	for _, id := range ids {
		if r, err := c.p.room(id); err == nil {
			r.mu.Lock()
			out = append(out, wireRoom{Room: id, Options: r.opts})
			r.mu.Unlock()
		}
	}
	return out
}

// fetchRooms learns the rooms the other nodes have (at start, and after missed announcements).
func (c *clusterNode) fetchRooms() {
	cluster.CallOthers(c.ctx, c.view, ownerPath, ownerRequest{Op: opRooms}, 2*time.Second, func(node string, ans ownerAnswer, err error) {
		if err != nil {
			c.log.Debug("fetching a node's audiobridge rooms", "node", node, "err", err)
			return
		}
		if len(ans.Rooms) > maxWireRooms {
			return
		}
		for _, w := range ans.Rooms {
			if w.check() == nil {
				c.adopt(w)
			}
		}
	})
}

// announce tells the other nodes of a room this node created or destroyed (a destroy reaches
// the room's owner, which answers it).
func (c *clusterNode) announce(name string, data any) {
	if a, ok := data.(AllowedReply); ok && name == "allowed" {
		c.edited(a.Room)
	}
	reply, ok := data.(RoomReply)
	if !ok {
		return
	}
	switch {
	case name == "create" && reply.Audiobridge == "created":
		c.created(reply.Room)
	case name == "edit" && reply.Audiobridge == "edited":
		c.edited(reply.Room)
	case name == "destroy" && reply.Audiobridge == "destroyed":
		c.destroyed(reply.Room)
	}
}

// edited gives the other nodes the options the room's owner now has (edit, allowed): a node
// that takes the room over admits with them.
func (c *clusterNode) edited(id uint64) {
	r, err := c.p.room(id)
	if err != nil {
		return
	}
	r.mu.Lock()
	w := wireRoom{Room: id, Options: r.opts}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(c.ctx, ownerWait)
	defer cancel()
	if err := c.view.Topic(roomsTopic).Publish(ctx, kindEdited, 0, w); err != nil {
		c.log.Warn("announcing an edited audiobridge room", "room", id, "err", err)
	}
}
