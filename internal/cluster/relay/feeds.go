package relay

import "context"

// Feeds is what a plugin needs of a node's Relay to carry its feeds between nodes (streaming
// mountpoints, videoroom publishers): a plugin takes this interface so that a server without a
// cluster passes none.
type Feeds interface {
	// Export offers a feed of this node to the others; Unexport withdraws it.
	Export(feedID string, streams []Stream) error
	Unexport(feedID string)
	// Import receives another node's feed, crossing the link once for this node whatever the
	// number of importers; its Receivers are fed by the link.
	Import(ctx context.Context, originNode, feedID string) (*Import, error)
	// CarriesData reports whether the links carry data streams (Stream.Data): plain RTP links do
	// not, and an edge's Import then has the media of a feed without its data.
	CarriesData() bool
}

var _ Feeds = (*Relay)(nil)
