// Decides which Janus API URL a page talks to. In order:
//
//   ?server=URL           used as it is (http(s)://… for long-poll, ws(s)://… for WebSocket)
//   ?transport=ws         WebSocket: ?ws=URL if given, else ws://<page host>:<ws_port> (or, on a
//                         page served over https, wss://<page host>:<wss_port>), the ports from
//                         /strata-config.json (served by strata) or 8188 and 8989
//   otherwise             HTTP long-poll at <page origin><janus_path>, janus_path from
//                         /strata-config.json or "/janus"
//
// The pages and the HTTP API share strata's HTTP listener (:8088 by default); the WebSocket has its
// own port (:8188), which is why the WebSocket case needs a port from somewhere.

const DEFAULT_WS_PORT = 8188;
const DEFAULT_WSS_PORT = 8989;
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

  const cfg = (await fetchConfig(configURL(loc))) ?? {};
  if (wantWS) {
    // A page served over https may only open wss:// (mixed content), which has a port of its own.
    if (loc.protocol === 'https:') return { url: `wss://${loc.hostname}:${cfg.wss_port || DEFAULT_WSS_PORT}`, transport: 'ws' };
    return { url: `ws://${loc.hostname}:${cfg.ws_port || DEFAULT_WS_PORT}`, transport: 'ws' };
  }
  return { url: loc.origin + (cfg.janus_path || DEFAULT_JANUS_PATH), transport: 'http' };
}

/** The address of strata's client config for a page. */
export function configURL(loc = window.location) {
  return new URL('/strata-config.json', loc.origin).href;
}

/** Fetches strata's client config; null when the page is served by something else. */
export async function fetchStrataConfig(url) {
  try {
    const res = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(3000) });
    return res.ok ? await res.json() : null;
  } catch {
    return null;
  }
}
