package cluster

// Halt ends the node's heartbeat without deleting its record, slot or leases: a crashed node.
func (n *Node) Halt() { n.halt() }
