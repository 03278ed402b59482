// Decides which Janus API URL a page talks to. In order:
//
//   ?server=URL           used as it is (http(s)://… for long-poll, ws(s)://… for WebSocket)
//   ?transport=ws         WebSocket: ?ws=URL if given, else ws(s)://<page host>:<ws_port>, where
//                         ws_port comes from /strata-config.json (served by strata) or is 8188
//   otherwise             HTTP long-poll at <page origin><janus_path>, janus_path from
//                         /strata-config.json or "/janus"
//
// The pages and the HTTP API share strata's HTTP listener (:8088 by default); the WebSocket has its
// own port (:8188), which is why the WebSocket case needs a port from somewhere.

const DEFAULT_WS_PORT = 8188;
const DEFAULT_JANUS_PATH = '/janus';

/**
 * @param {Location|URL} [loc] the page location (default window.location)
 * @param {{fetchConfig?: (url: string) => Promise<object|null>}} [opts] replaces the config fetch (tests)
 * @returns {Promise<{url: string, transport: 'http'|'ws'}>}
 */
export async function resolveServer(loc = window.location, { fetchConfig = fetchStrataConfig } = {}) {
  const params = new URLSearchParams(loc.search);
  const explicit = params.get('server');
  if (explicit) return { url: explicit, transport: /^wss?:/i.test(explicit) ? 'ws' : 'http' };

  const wantWS = params.get('transport') === 'ws';
  const wsParam = params.get('ws');
  if (wantWS && wsParam) return { url: wsParam, transport: 'ws' };

  const cfg = (await fetchConfig(new URL('/strata-config.json', loc.origin).href)) ?? {};
  if (wantWS) {
    const scheme = loc.protocol === 'https:' ? 'wss' : 'ws';
    const port = cfg.ws_port || DEFAULT_WS_PORT;
    return { url: `${scheme}://${loc.hostname}:${port}`, transport: 'ws' };
  }
  return { url: loc.origin + (cfg.janus_path || DEFAULT_JANUS_PATH), transport: 'http' };
}

/** Fetches strata's client config; null when the page is served by something else. */
async function fetchStrataConfig(url) {
  try {
    const res = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(3000) });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}
