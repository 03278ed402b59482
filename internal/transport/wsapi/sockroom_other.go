//go:build !linux

package wsapi

import "net"

// unsentBytes is unknown here: the writer then relies on its write deadline alone, and a client cut
// off with a full socket may see no close code.
func unsentBytes(*net.TCPConn) (int, bool) { return 0, false }
