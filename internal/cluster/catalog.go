package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/strata-rtc/strata/internal/logagg"
)

// Catalog is a list of items that spans the cluster, each item held by one node (its home) —
// streaming mountpoints, say. Each node announces its own items on the catalog's topic ("put" for a
// new or changed item, "delete" for one that is gone) and answers the other nodes' requests for its
// whole list; a node that missed announcements (a gap on the topic) asks the sender for its list
// again, and a node that is gone takes its items with it. Items are opaque JSON here: the catalog's
// user decodes (and checks) them in its callbacks.
type Catalog struct {
	view   View
	name   string
	events CatalogEvents
	log    *slog.Logger
	// badInput writes a malformed announcement's line once per window per sender: any node (or
	// anyone with access to Redis) can publish on the topic.
	badInput *logagg.Aggregator[string, string]

	mu     sync.Mutex
	local  map[string]json.RawMessage            // this node's items
	remote map[string]map[string]json.RawMessage // node → id → item
	// applied counts, per node, the announcements applied: a list read while one was applied
	// may be older than it, and is read again.
	applied map[string]uint64
	closed  bool
	resync  time.Duration

	// applyMu keeps the callbacks in the order their causes were applied.
	applyMu sync.Mutex
	stop    []func()
	ctx     context.Context
	cancel  context.CancelFunc
}

// CatalogEvents are a catalog's callbacks for the other nodes' items. They run one at a time, on
// the catalog's goroutines; they may block briefly (not on the catalog).
type CatalogEvents struct {
	// Put: node holds the item id (new, or changed). An item the user cannot take (malformed) is
	// an error: it is logged and forgotten.
	Put func(node, id string, item json.RawMessage) error
	// Delete: node no longer holds id (deleted, or the node is gone).
	Delete func(node, id string)
}

// catalogPut and catalogDelete are the catalog's announcements on its topic.
type catalogPut struct {
	ID   string          `json:"id"`
	Item json.RawMessage `json:"item"`
}

type catalogList struct {
	Items map[string]json.RawMessage `json:"items"`
}

// Catalog announcement kinds.
const (
	catalogKindPut    = "put"
	catalogKindDelete = "delete"
)

// maxCatalogID bounds an item's id: remote input is bounded before it is kept.
const maxCatalogID = 256

// catalogFetchTimeout bounds one request for another node's list.
var catalogFetchTimeout = 5 * time.Second

// NewCatalog makes the catalog name on view (its topic is "catalog/<name>", its handler
// "/catalog/<name>"); Start begins following the other nodes. Besides the announcements, every
// other node's list is read again every resync (DefaultResync when 0), which repairs what
// a lost announcement left wrong even when no gap showed it.
func NewCatalog(view View, name string, events CatalogEvents, resync time.Duration, log *slog.Logger) *Catalog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if resync <= 0 {
		resync = DefaultResync
	}
	c := &Catalog{view: view, name: name, events: events, log: log.With("catalog", name), resync: resync,
		local: map[string]json.RawMessage{}, remote: map[string]map[string]json.RawMessage{}, applied: map[string]uint64{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.badInput = logagg.New(logagg.DefaultWindow, nil, "(other nodes)", func(from, firstErr string, count int, window time.Duration) {
		c.log.Warn(logagg.Repeated("cluster: malformed catalog announcements dropped", count, window), "from", from, "first_error", firstErr)
	})
	return c
}

// malformed logs a dropped announcement or item (rate-limited per sender).
func (c *Catalog) malformed(from string, err error) {
	if c.badInput.Observe(from, err.Error()) {
		c.log.Warn("cluster: malformed catalog announcement dropped", "from", from, "error", err)
	}
}

func (c *Catalog) topic() Topic         { return c.view.Topic("catalog/" + c.name) }
func (c *Catalog) path() string         { return "/catalog/" + c.name }
func (c *Catalog) self() string         { return c.view.Self().ID }
func (c *Catalog) isSelf(n string) bool { return n == c.self() }

// Start serves this node's list, follows the topic and the membership, and reads every live
// node's list.
func (c *Catalog) Start() {
	c.view.Handle(c.path(), c.handleList)
	c.stop = append(c.stop,
		c.topic().Subscribe(c.onEvent, func(from string) { go c.fetch(from) }),
		c.view.Watch(c.onNode))
	c.fetchAll()
	go ResyncLoop(c.ctx, c.resync, c.fetchAll)
}

// fetchAll reads every other live node's list.
func (c *Catalog) fetchAll() {
	for _, n := range c.view.Nodes() {
		if !c.isSelf(n.ID) {
			go c.fetch(n.ID)
		}
	}
}

// Close stops following the other nodes (their items are not deleted: the user is shutting down).
func (c *Catalog) Close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.cancel()
	for _, f := range c.stop {
		f()
	}
	c.badInput.Drain()
}

// Put announces this node's item id (new or changed).
func (c *Catalog) Put(ctx context.Context, id string, item any) error {
	raw, err := json.Marshal(item)
	if err != nil {
		return fmt.Errorf("cluster: catalog %s: encode %s: %w", c.name, id, err)
	}
	c.mu.Lock()
	c.local[id] = raw
	c.mu.Unlock()
	return c.topic().Publish(ctx, catalogKindPut, 0, catalogPut{ID: id, Item: raw})
}

// Delete announces that this node no longer holds id.
func (c *Catalog) Delete(ctx context.Context, id string) error {
	c.mu.Lock()
	_, had := c.local[id]
	delete(c.local, id)
	c.mu.Unlock()
	if !had {
		return nil
	}
	return c.topic().Publish(ctx, catalogKindDelete, 0, catalogPut{ID: id})
}

func (c *Catalog) handleList(context.Context, string, json.RawMessage) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	items := make(map[string]json.RawMessage, len(c.local))
	for id, it := range c.local {
		items[id] = it
	}
	return catalogList{Items: items}, nil
}

// DecodeCatalogEvent parses a catalog announcement (remote input): a put has an id and an item, a
// delete an id.
func DecodeCatalogEvent(kind string, body []byte) (id string, item json.RawMessage, err error) {
	var ev catalogPut
	if kind != catalogKindPut && kind != catalogKindDelete {
		return "", nil, fmt.Errorf("unknown catalog event %q", truncate(kind))
	}
	if err := json.Unmarshal(body, &ev); err != nil {
		return "", nil, fmt.Errorf("catalog %s: %w", kind, err)
	}
	if err := checkCatalogID(ev.ID); err != nil {
		return "", nil, err
	}
	if kind == catalogKindPut && (len(ev.Item) == 0 || string(ev.Item) == "null") {
		return "", nil, fmt.Errorf("catalog put of %q without an item", truncate(ev.ID))
	}
	return ev.ID, ev.Item, nil
}

func checkCatalogID(id string) error {
	if id == "" || len(id) > maxCatalogID {
		return errors.New("catalog item id empty or too long")
	}
	return nil
}

// onEvent applies another node's announcement.
func (c *Catalog) onEvent(env Envelope) {
	id, item, err := DecodeCatalogEvent(env.Kind, env.Body)
	if err != nil {
		c.malformed(env.From, err)
		return
	}
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	c.applied[env.From]++
	c.mu.Unlock()
	if env.Kind == catalogKindPut {
		c.put(env.From, id, item)
	} else {
		c.remove(env.From, id)
	}
}

// put records node's item and tells the user (applyMu held).
func (c *Catalog) put(node, id string, item json.RawMessage) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	items := c.remote[node]
	if items == nil {
		items = map[string]json.RawMessage{}
		c.remote[node] = items
	}
	prev, had := items[id]
	items[id] = item
	c.mu.Unlock()
	if err := c.events.Put(node, id, item); err != nil {
		// The user kept what it had: so does the catalog.
		c.malformed(node, err)
		c.mu.Lock()
		if m := c.remote[node]; m != nil && had {
			m[id] = prev
		} else if m != nil {
			delete(m, id)
		}
		c.mu.Unlock()
	}
}

// remove forgets node's item and tells the user (applyMu held).
func (c *Catalog) remove(node, id string) {
	c.mu.Lock()
	_, had := c.remote[node][id]
	had = had && !c.closed
	delete(c.remote[node], id)
	c.mu.Unlock()
	if had {
		c.events.Delete(node, id)
	}
}

// replace makes node's list the one it answered (when no announcement of node was applied since
// the list was asked for, applied then): items it no longer has are deleted. False: the list may
// be older than what was applied.
func (c *Catalog) replace(node string, applied uint64, items map[string]json.RawMessage) bool {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	if c.applied[node] != applied {
		c.mu.Unlock()
		return false
	}
	var gone []string
	for id := range c.remote[node] {
		if _, ok := items[id]; !ok {
			gone = append(gone, id)
		}
	}
	c.mu.Unlock()
	for _, id := range gone {
		c.remove(node, id)
	}
	for id, it := range items {
		if err := checkCatalogID(id); err != nil || len(it) == 0 {
			c.malformed(node, fmt.Errorf("listed item %.32q: empty id or item", id))
			continue
		}
		c.put(node, id, it)
	}
	return true
}

// fetch reads node's whole list (at start, when it appears, after a gap in its announcements).
// A list read while the node's announcements kept being applied is read again, a few times.
func (c *Catalog) fetch(node string) {
	for range 3 {
		c.mu.Lock()
		applied := c.applied[node]
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(c.ctx, catalogFetchTimeout)
		var l catalogList
		err := c.view.Call(ctx, node, c.path(), struct{}{}, &l)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				c.log.Info("cluster: reading a node's catalog", "node", node, "err", err)
			}
			return
		}
		if _, live := c.view.Node(node); !live {
			return // gone meanwhile: its items went with it
		}
		if c.replace(node, applied, l.Items) {
			return
		}
	}
}

// onNode follows the membership: a node that appears is asked for its list, a node gone takes its
// items with it.
func (c *Catalog) onNode(ev NodeEvent) {
	switch ev.Kind {
	case NodeUp:
		go c.fetch(ev.Node.ID)
	case NodeGone:
		go c.nodeGone(ev.Node.ID)
	}
}

func (c *Catalog) nodeGone(node string) {
	c.applyMu.Lock()
	defer c.applyMu.Unlock()
	c.mu.Lock()
	items := c.remote[node]
	delete(c.remote, node)
	delete(c.applied, node)
	c.mu.Unlock()
	for id := range items {
		c.events.Delete(node, id)
	}
}
