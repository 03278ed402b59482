// Package api holds the wire types of the network controller's HTTP/JSON API (version 1, paths
// under /v1/), shared by the server (package netctl) and its Go client (package client). Rates are
// integers in bit/s, in fields ending in _bps. docs/NETCTL.md documents every endpoint.
package api

// Prefix is the path prefix of this version of the API.
const Prefix = "/v1"

// Limits on what a request may carry.
const (
	MaxBodyBytes = 1 << 20
	MaxLayers    = 16
	MaxIDLen     = 128
)

// Layer is one layer of a stream, base layer first.
type Layer struct {
	// RateBps is this layer's own measured rate: forwarding k layers costs the sum of the first k.
	// For simulcast, where the SFU forwards one encoding, give each encoding's rate minus the one
	// below it.
	RateBps int64 `json:"rate_bps"`
	// Name is free text (e.g. "base", "s1t0").
	Name string `json:"name,omitempty"`
	// SSRC optionally identifies the layer's packets, for enforcers that match on it.
	SSRC uint32 `json:"ssrc,omitempty"`
	// DSCP is the DiffServ code point (1-63) the SFU marks this layer's packets with, so that a
	// switch can tell the layers apart on the wire; 0 means unmarked (a switch cannot drop it alone).
	DSCP int `json:"dscp,omitempty"`
}

// MaxDSCP is the largest DiffServ code point (6 bits).
const MaxDSCP = 63

// Flow is the transport on which the SFU sends a subscription's media (with BUNDLE, every stream
// of one PeerConnection shares it): what a switch matches, together with the layers' DSCP marks.
type Flow struct {
	// Proto is "udp" (the only one supported).
	Proto string `json:"proto"`
	// Src and Dst are "ip:port": the SFU's local address of the selected ICE candidate pair and the
	// subscriber's remote one.
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// Stream is a video stream the SFU forwards (PUT /v1/streams/{id}).
type Stream struct {
	ID string `json:"id"`
	// Source is the node the stream is forwarded from: the SFU's node. The publisher-to-SFU leg is
	// not the controller's business.
	Source string  `json:"source"`
	Layers []Layer `json:"layers"`
}

// LayersUpdate replaces a stream's layers (PUT /v1/streams/{id}/layers), e.g. when measured rates
// change.
type LayersUpdate struct {
	Layers []Layer `json:"layers"`
}

// Subscription is a receiver of a stream (PUT /v1/subscriptions/{id}). Give Receiver (the path is
// the shortest from the stream's source) or Path (link names from the source), or both (the path
// must then end at the receiver).
type Subscription struct {
	ID       string   `json:"id"`
	Stream   string   `json:"stream"`
	Receiver string   `json:"receiver,omitempty"`
	Path     []string `json:"path,omitempty"`
	// Computed is set in responses when the controller chose the path.
	Computed bool `json:"computed,omitempty"`
	// Flow is where the SFU sends this subscription's media; with it and marked layers, a switch
	// can enforce the decision (Decision.Enforced).
	Flow *Flow `json:"flow,omitempty"`
}

// SubscriptionResult is the answer of PUT /v1/subscriptions/{id}: the subscription with its
// resolved path, and the decision for it (taken at once).
type SubscriptionResult struct {
	Subscription Subscription `json:"subscription"`
	Decision     Decision     `json:"decision"`
}

// Decision is the controller's decision for one subscription.
type Decision struct {
	Subscription string `json:"subscription"`
	Stream       string `json:"stream"`
	Receiver     string `json:"receiver"`
	// Layers is how many layers the receiver may get (base first); MaxLayers how many the stream has.
	Layers    int   `json:"layers"`
	MaxLayers int   `json:"max_layers"`
	RateBps   int64 `json:"rate_bps"`
	// Target is what the allocation alone would grant; Pending an upgrade waiting for its hold time.
	Target  int `json:"target"`
	Pending int `json:"pending,omitempty"`
	// PathAvailableBps is the path's capacity for managed streams (minimum over its links of
	// capacity minus background load); Limit the link that stops the next layer.
	PathAvailableBps int64  `json:"path_available_bps"`
	Limit            string `json:"limit,omitempty"`
	Reason           string `json:"reason"`
	// Enforced is true while a switch on the path has installed the drop rules for exactly this
	// decision: the SFU may then forward every layer and leave the thinning to the switch. When
	// false (no switch, no flow or marks, the switch unreachable or refusing the rules) the SFU
	// must thin the stream itself.
	Enforced bool `json:"enforced,omitempty"`
	// Seq orders decisions: every change gets the next number.
	Seq uint64 `json:"seq"`
}

// Decisions is the answer of GET /v1/decisions and the snapshot event of the decision stream.
type Decisions struct {
	Seq       uint64     `json:"seq"`
	Decisions []Decision `json:"decisions"`
}

// Removed is the event sent when a subscription goes away.
type Removed struct {
	Subscription string `json:"subscription"`
	Seq          uint64 `json:"seq"`
}

// Event names in the decision stream (GET /v1/decisions/stream, server-sent events).
const (
	EventSnapshot = "snapshot" // data: Decisions, all current decisions; first event of every connection
	EventDecision = "decision" // data: Decision, a subscription's layer count changed (or it is new)
	EventRemoved  = "removed"  // data: Removed
)

// TopologyLink is a link as GET /v1/topology shows it.
type TopologyLink struct {
	Name          string  `json:"name"`
	From          string  `json:"from"`
	To            string  `json:"to"`
	CapacityBps   int64   `json:"capacity_bps"`
	DelayMs       float64 `json:"delay_ms,omitempty"`
	Interface     string  `json:"interface,omitempty"`
	PeerInterface string  `json:"peer_interface,omitempty"`
}

// TopologyNode is a node as GET /v1/topology shows it.
type TopologyNode struct {
	Name     string `json:"name"`
	Enforcer bool   `json:"enforcer"`
	Role     string `json:"role,omitempty"`
}

// Topology is the answer of GET /v1/topology.
type Topology struct {
	Name  string         `json:"name"`
	Nodes []TopologyNode `json:"nodes"`
	Links []TopologyLink `json:"links"`
}

// LinkState is a link's live state (GET /v1/links).
type LinkState struct {
	Name string `json:"name"`
	From string `json:"from"`
	To   string `json:"to"`
	// CapacityBps is the capacity in use: the topology's, or an override (Override true).
	CapacityBps int64 `json:"capacity_bps"`
	Override    bool  `json:"override,omitempty"`
	// LoadBps is the measured total load; ManagedBps what the controller attributes to its own
	// subscriptions; BackgroundBps the rest; AvailableBps = capacity − background.
	LoadBps       int64 `json:"load_bps"`
	ManagedBps    int64 `json:"managed_bps"`
	BackgroundBps int64 `json:"background_bps"`
	AvailableBps  int64 `json:"available_bps"`
	// Source of the load ("static" when no fresh sample: no load assumed) and its age.
	Source        string  `json:"source"`
	AgeMs         float64 `json:"age_ms,omitempty"`
	Subscriptions int     `json:"subscriptions"`
}

// LinkUpdate changes a link at run time (PUT /v1/links/{name}): a capacity override, a measured
// load (fed to the in-process source, as the simulator does), or Reset to drop the override.
type LinkUpdate struct {
	CapacityBps *int64 `json:"capacity_bps,omitempty"`
	LoadBps     *int64 `json:"load_bps,omitempty"`
	Reset       bool   `json:"reset,omitempty"`
}

// Report is what an agent posts (POST /v1/reports): the rates of a node's interfaces over the
// last interval.
type Report struct {
	Node       string            `json:"node"`
	IntervalMs int64             `json:"interval_ms"`
	Interfaces []InterfaceReport `json:"interfaces"`
}

// InterfaceReport is one interface's rates.
type InterfaceReport struct {
	Name  string `json:"name"`
	TxBps int64  `json:"tx_bps"`
	RxBps int64  `json:"rx_bps"`
}

// ReportResult says which links the report measured.
type ReportResult struct {
	Mapped   []string `json:"mapped"`
	Unmapped []string `json:"unmapped,omitempty"`
}

// Rule tells an enforcement point (a switch near the SFU) which layers of a subscription to
// forward on a link: layers 0..Allow-1 pass, the others are dropped.
type Rule struct {
	Node         string `json:"node"`
	Link         string `json:"link"`
	Stream       string `json:"stream"`
	Subscription string `json:"subscription"`
	Receiver     string `json:"receiver"`
	Allow        int    `json:"allow"`
	Layers       int    `json:"layers"`
	// DropSSRCs lists the SSRCs of dropped layers, for the layers the SFU gave one.
	DropSSRCs []uint32 `json:"drop_ssrcs,omitempty"`
	// Flow and the DSCP marks let a switch match the packets: layers with a mark, by index, in
	// PassDSCP (layers below Allow) and DropDSCP (the others). Absent when the subscription has no
	// flow or its stream no marks.
	Flow     *Flow `json:"flow,omitempty"`
	PassDSCP []int `json:"pass_dscp,omitempty"`
	DropDSCP []int `json:"drop_dscp,omitempty"`
}

// Drops reports whether the rule drops a layer (0 is the base layer).
func (r *Rule) Drops(layer int) bool { return layer >= r.Allow }

// Meter is a media reservation enforced at a switch (netctl -reserve): the switch at the node polices
// the traffic entering Link that is not managed media (every packet except the flows of the node's
// rules on that link) to RateBps, with a token bucket of BurstBits, dropping what exceeds it (an
// OpenFlow meter with a drop band). RateBps is the link's capacity minus the media allocation with
// its margin, so elastic background traffic (TCP) cannot fill the link's queue under the media.
type Meter struct {
	Link string `json:"link"`
	// Interface is the link's interface at the node (the topology's `interface`): where the
	// link's traffic leaves the node, and, in the emulation, the name of the switch's port it
	// enters the switch by (police what comes in on it). Empty when the topology gives none.
	Interface string `json:"interface,omitempty"`
	RateBps   int64  `json:"rate_bps"`
	BurstBits int64  `json:"burst_bits"`
}

// Rules is the answer of GET /v1/rules?node=X: the complete rule set of one node, with its meters
// (only with a reservation; sorted by link).
type Rules struct {
	Node    string  `json:"node"`
	Version uint64  `json:"version"`
	Rules   []Rule  `json:"rules"`
	Meters  []Meter `json:"meters,omitempty"`
}

// Health is the answer of GET /v1/health.
type Health struct {
	OK       bool   `json:"ok"`
	Topology string `json:"topology"`
	Mode     string `json:"mode"`
}

// Error is the body of every 4xx/5xx answer.
type Error struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody says what went wrong: a stable code and a message for people.
type ErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes.
const (
	CodeBadJSON             = "bad_json"
	CodeBadRequest          = "bad_request"
	CodeBadID               = "bad_id"
	CodeIDMismatch          = "id_mismatch"
	CodeUnknownNode         = "unknown_node"
	CodeUnknownLink         = "unknown_link"
	CodeUnknownStream       = "unknown_stream"
	CodeUnknownSubscription = "unknown_subscription"
	CodeNoPath              = "no_path"
	CodeBadPath             = "bad_path"
	CodeBadRate             = "bad_rate"
	CodeTooLarge            = "too_large"
	CodeNotFound            = "not_found"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodeConflict            = "conflict"
)
