package transport

import (
	"net"
	"net/http"

	"github.com/strata-rtc/strata/internal/cluster"
	"github.com/strata-rtc/strata/internal/janus"
)

// ProxiedHeader marks a request that one node of a cluster forwards to the node holding its session
// (docs/CLUSTER.md). A request that carries it is never forwarded again, whatever the receiving node
// believes about the session (the loop guard: it answers 458 itself if the session is not there),
// and a WebSocket upgrade that carries it is accepted even while the node takes no new sessions,
// since it serves sessions the node already holds. A client that sends it only opts out of being
// forwarded; it gains nothing else.
const ProxiedHeader = "X-Strata-Proxied"

// ForwardedFor is the X-Forwarded-For of a request forwarded on behalf of r: r's own
// X-Forwarded-For, if any, followed by r's remote address.
func ForwardedFor(r *http.Request) string {
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	if prior := r.Header.Values("X-Forwarded-For"); len(prior) > 0 {
		s := ""
		for _, p := range prior {
			s += p + ", "
		}
		return s + ip
	}
	return ip
}

// ProxyFailed is the Janus error a client gets when the node holding its session (another node of
// the cluster) could not be reached or failed while the request was forwarded: it names the node and
// the cause.
func ProxyFailed(session uint64, node cluster.NodeRecord, url string, err error) *janus.Error {
	return janus.Errorf(janus.ErrTransportSpecific, "Session %d is held by node %s (%s), which could not serve the request: %v",
		session, node.ID, url, err)
}
