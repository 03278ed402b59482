// Browsers give the camera and microphone (navigator.mediaDevices) only to pages in a secure
// context: served over https://, or from http://localhost. A demo opened as http://server:8088/ from
// another machine has neither, and getUserMedia is simply undefined. This module, loaded by every demo
// page, says so at the top of the page in plain words, with what to open instead: the HTTPS port when
// the server has one (from /strata-config.json), else an SSH tunnel to localhost, or turning HTTPS on.
// The verdict is on window.strataInsecure ({blocked, advice}) for tests.

import { configURL, fetchStrataConfig } from '../lib/server.js';

/** Whether the page cannot reach the camera and microphone. */
export function mediaBlocked(win = window) {
  return !win.isSecureContext || typeof win.navigator.mediaDevices?.getUserMedia !== 'function';
}

/**
 * What to open instead, for a page at loc on a server with client config cfg.
 * @returns {{text: string, code?: string, href?: string}[]} alternatives, the best first: some text,
 *   a command to run, then an address to open
 */
export function secureAdvice(loc, cfg = {}) {
  const path = loc.pathname + loc.search;
  const steps = [];
  if (cfg.https_port) {
    steps.push({ text: 'Open this page over HTTPS:', href: `https://${loc.hostname}:${cfg.https_port}${path}` });
  }
  const port = loc.port || '80';
  const forwards = [`-L ${port}:localhost:${port}`];
  if (cfg.ws_port && new URLSearchParams(loc.search).get('transport') === 'ws') forwards.push(`-L ${cfg.ws_port}:localhost:${cfg.ws_port}`);
  steps.push({
    text: `${steps.length ? 'Or t' : 'T'}unnel the server to this computer and open it as localhost (which browsers trust): run`,
    code: `ssh ${forwards.join(' ')} you@${loc.hostname}`,
    href: `http://localhost:${port}${path}`,
  });
  if (!cfg.https_port) {
    steps.push({
      text: 'Or turn HTTPS on in the server\'s configuration and restart it (a self-signed certificate is enough to try; the browser asks you to accept it once):',
      code: 'transports: {http: {https: {enabled: true, self_signed: true}}, websocket: {wss: {enabled: true, self_signed: true}}}',
    });
  }
  return steps;
}

/** Puts the notice at the top of the page's <main> and disables its start button. */
function render(loc, steps) {
  const box = document.createElement('section');
  box.id = 'insecure';
  box.className = 'card notice';
  box.setAttribute('role', 'alert');
  const h = document.createElement('h2');
  h.textContent = 'This page cannot use your camera or microphone';
  const p = document.createElement('p');
  p.textContent = `Browsers only give them to pages opened over https:// or from http://localhost, and this page was opened as ${loc.origin}.`;
  const ol = document.createElement('ol');
  for (const s of steps) {
    const li = document.createElement('li');
    li.append(s.text + ' ');
    if (s.code) {
      const c = document.createElement('code');
      c.textContent = s.code;
      li.append(c, s.href ? ' and open ' : '');
    }
    if (s.href) {
      const a = document.createElement('a');
      a.href = s.href;
      a.textContent = s.href;
      li.append(a);
    }
    ol.append(li);
  }
  box.append(h, p, ol);
  (document.querySelector('main') ?? document.body).prepend(box);
  const start = document.getElementById('start');
  if (start) start.disabled = true;
}

async function check() {
  if (!mediaBlocked()) {
    window.strataInsecure = { blocked: false, advice: [] };
    return;
  }
  const cfg = (await fetchStrataConfig(configURL())) ?? {};
  const advice = secureAdvice(window.location, cfg);
  render(window.location, advice);
  window.strataInsecure = { blocked: true, advice };
}

check();
