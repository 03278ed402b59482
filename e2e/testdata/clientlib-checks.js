// Checks of lib/strata.js that need a browser but no camera: server resolution, the stats
// arithmetic, and the request/reply/event plumbing against a live strata over both transports.
// Evaluated by clientlib_test.go on a page served by strata, as `(<this function>)(httpURL, wsURL)`.
// Returns [{name, ok, detail}].
async (httpURL, wsURL) => {
  const lib = await import('/lib/strata.js');
  const checks = [];
  const check = (name, ok, detail) => checks.push({ name, ok: Boolean(ok), detail: JSON.stringify(detail) ?? '' });
  const rejection = async (promise) => {
    try {
      await promise;
      return null;
    } catch (err) {
      return err;
    }
  };

  // resolveServer: query parameters first, then /strata-config.json, then defaults.
  const resolve = (href, cfg) => lib.resolveServer(new URL(href), { fetchConfig: async () => cfg });
  const cases = [
    ['http://h:8088/echotest.html', null, 'http://h:8088/janus', 'http'],
    ['http://h:8088/echotest.html', { janus_path: '/api' }, 'http://h:8088/api', 'http'],
    ['http://h:8088/e.html?server=ws://x:1', null, 'ws://x:1', 'ws'],
    ['http://h:8088/e.html?server=http://x:2/janus', null, 'http://x:2/janus', 'http'],
    ['http://h:8088/e.html?transport=ws', null, 'ws://h:8188', 'ws'],
    ['http://h:8088/e.html?transport=ws', { ws_port: 9999 }, 'ws://h:9999', 'ws'],
    ['https://h/e.html?transport=ws', null, 'wss://h:8989', 'ws'],
    ['https://h:8089/e.html?transport=ws', { ws_port: 8188, wss_port: 9443 }, 'wss://h:9443', 'ws'],
    ['http://h:8088/e.html?transport=ws&ws=ws://a:1', { ws_port: 9999 }, 'ws://a:1', 'ws'],
  ];
  for (const [href, cfg, url, transport] of cases) {
    const got = await resolve(href, cfg);
    check(`resolveServer ${href} cfg=${JSON.stringify(cfg)}`, got.url === url && got.transport === transport, got);
  }

  // The demos' notice for pages without a secure context (demos/insecure.js): what to open instead.
  const insecure = await import('/demos/insecure.js');
  check('mediaBlocked on this page (a secure context)', !insecure.mediaBlocked(), window.isSecureContext);
  const page = new URL('http://192.0.2.9:8088/echotest.html?transport=ws');
  const withHTTPS = insecure.secureAdvice(page, { ws_port: 8188, https_port: 8089 });
  check('secureAdvice with HTTPS: the https URL first', withHTTPS[0].href === 'https://192.0.2.9:8089/echotest.html?transport=ws', withHTTPS);
  check('secureAdvice: an SSH tunnel of the page and WebSocket ports',
    withHTTPS.some((s) => s.code === 'ssh -L 8088:localhost:8088 -L 8188:localhost:8188 you@192.0.2.9' &&
      s.href === 'http://localhost:8088/echotest.html?transport=ws'), withHTTPS);
  check('secureAdvice with HTTPS: no advice to turn it on', !withHTTPS.some((s) => /self_signed/.test(s.code ?? '')), withHTTPS);
  const noHTTPS = insecure.secureAdvice(new URL('http://192.0.2.9:8088/'), { ws_port: 8188 });
  check('secureAdvice without HTTPS: tunnel, then turning HTTPS on',
    noHTTPS[0].code === 'ssh -L 8088:localhost:8088 you@192.0.2.9' && /self_signed: true/.test(noHTTPS.at(-1).code ?? ''), noHTTPS);

  // summarizeStats on two hand-made reports one second apart.
  const prev = new Map([
    ['o', { type: 'outbound-rtp', timestamp: 1000, bytesSent: 0 }],
    ['i', { type: 'inbound-rtp', kind: 'video', timestamp: 1000, bytesReceived: 0, packetsLost: 0, packetsReceived: 0 }],
  ]);
  const cur = new Map([
    ['o', { type: 'outbound-rtp', timestamp: 2000, bytesSent: 125000 }],
    ['i', { type: 'inbound-rtp', kind: 'video', mid: 'v', timestamp: 2000, bytesReceived: 62500, packetsLost: 5, packetsReceived: 95,
            framesDecoded: 30, frameWidth: 640, frameHeight: 480, framesPerSecond: 20 }],
    ['t', { type: 'transport', timestamp: 2000, selectedCandidatePairId: 'p' }],
    ['p', { type: 'candidate-pair', timestamp: 2000, currentRoundTripTime: 0.012 }],
  ]);
  const s = lib.summarizeStats(prev, cur);
  check('stats bitrate out 1000 kbit/s', Math.abs(s.bitrateOutKbps - 1000) < 1e-9, s);
  check('stats bitrate in 500 kbit/s', Math.abs(s.bitrateInKbps - 500) < 1e-9, s);
  check('stats loss 5 %', Math.abs(s.lossPercent - 5) < 1e-9, s);
  check('stats rtt 12 ms', Math.abs(s.rttMs - 12) < 1e-9, s);
  check('stats video', s.framesDecoded === 30 && s.frameWidth === 640 && s.frameHeight === 480, s);
  check('stats per video stream', s.videos.length === 1 && s.videos[0].mid === 'v' && Math.abs(s.videos[0].bitrateKbps - 500) < 1e-9
    && s.videos[0].frameWidth === 640 && s.videos[0].framesPerSecond === 20, s.videos);
  const first = lib.summarizeStats(null, cur);
  check('stats first sample has no rates', first.bitrateOutKbps === 0 && first.lossPercent === 0, first);

  // The API plumbing, once per transport.
  for (const [name, url] of [['http', httpURL], ['ws', wsURL]]) {
    const session = await lib.connect(url);
    check(`${name}: session id`, session.id > 0 && session.transport === name, { id: session.id, t: session.transport });
    const info = await session.info();
    check(`${name}: info`, info.janus === 'server_info' && info.plugins && info.plugins['janus.plugin.echotest'], info.janus);

    const noPlugin = await rejection(session.attach('janus.plugin.nonexistent'));
    check(`${name}: unknown plugin rejects with 460`, noPlugin instanceof lib.JanusError && noPlugin.code === 460, noPlugin && noPlugin.message);

    const echo = await session.attach('janus.plugin.echotest');
    check(`${name}: handle id`, echo.id > 0 && echo.plugin === 'janus.plugin.echotest', echo.id);
    // An asynchronous plugin request: ack first, then the event with the same transaction.
    const events = [];
    echo.on('event', (e) => events.push(e));
    const reply = await echo.message({ video: false });
    check(`${name}: async message resolves with the event`, reply.data.echotest === 'event' && reply.data.result === 'ok', reply.data);
    check(`${name}: the event also reached listeners`, events.some((e) => e.transaction === reply.transaction), events.length);
    const bad = await rejection(echo.message({ audio: 'yes' }));
    check(`${name}: plugin error rejects with the plugin's code`,
      bad instanceof lib.JanusError && bad.plugin === 'janus.plugin.echotest' && bad.code >= 411 && bad.code <= 414,
      bad && bad.message);

    let detachedEvents = 0;
    echo.on('detached', () => detachedEvents++);
    await echo.detach();
    check(`${name}: detach emits detached once`, echo.detached && detachedEvents === 1, detachedEvents);
    const afterDetach = await rejection(echo.message({ audio: true }));
    check(`${name}: a detached handle is gone (459)`, afterDetach instanceof lib.JanusError && afterDetach.code === 459, afterDetach && afterDetach.message);

    const destroyed = session.next('destroyed');
    await session.destroy();
    await destroyed;
    const afterDestroy = await rejection(session.attach('janus.plugin.echotest'));
    check(`${name}: a destroyed session refuses requests`, afterDestroy && session.closed, afterDestroy && afterDestroy.message);
  }
  return checks;
}
