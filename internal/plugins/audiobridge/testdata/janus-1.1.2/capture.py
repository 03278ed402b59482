#!/usr/bin/env python3
"""Capture Janus audiobridge replies over the HTTP transport: each step's request, its synchronous
reply, and the events that followed (long poll), as JSON lines. Usage: capture.py http://127.0.0.1:PORT/janus out.jsonl"""
import json, sys, threading, time, urllib.request, random, string

base, out = sys.argv[1], sys.argv[2]
def tx(): return ''.join(random.choice(string.ascii_letters) for _ in range(12))
def post(path, body):
    body = dict(body, transaction=tx())
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=10) as r:
        return body, json.loads(r.read())
events, lock = [], threading.Lock()
def poll(sid):
    while True:
        try:
            with urllib.request.urlopen(f"{base}/{sid}?maxev=10&rid={time.time()}", timeout=40) as r:
                got = json.loads(r.read())
        except Exception:
            return
        for e in (got if isinstance(got, list) else [got]):
            if e.get('janus') != 'keepalive':
                with lock: events.append(e)
_, s = post('', {'janus': 'create'}); sid = s['data']['id']
threading.Thread(target=poll, args=(sid,), daemon=True).start()
handles = {}
pids = {}
def attach(name):
    _, r = post(f'/{sid}', {'janus': 'attach', 'plugin': 'janus.plugin.audiobridge'}); handles[name] = r['data']['id']
attach('A'); attach('B'); attach('C')
names = {v: k for k, v in handles.items()}
log = open(out, 'w')
import socket, struct
rtp_sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); rtp_sock.bind(('127.0.0.1', 0))
rtp_to = {}
def send_rtp(n, level, ext_id):
    """n Opus packets (a 20 ms silence frame) carrying the RFC 6464 level, one every 20 ms."""
    seq, ts, ssrc = random.randrange(65536), random.randrange(1 << 32), random.randrange(1 << 32)
    for i in range(n):
        hdr = struct.pack('!BBHII', 0x90, 111, (seq + i) & 0xffff, (ts + 960 * i) & 0xffffffff, ssrc)
        ext = struct.pack('!HH', 0xBEDE, 1) + bytes([(ext_id << 4) | 0, 0x80 | level, 0, 0])
        rtp_sock.sendto(hdr + ext + bytes([0xF8, 0xFF, 0xFE]), rtp_to['addr'])
        time.sleep(0.02)
def step(label, handle, body, wait=0.4):
    if handle == 'RTP':
        send_rtp(body['send'], body['level'], body['ext'])
        handle, body = 'A', {'request': 'listparticipants', 'room': body['room']}
    if isinstance(body.get('rtp'), dict) and body['rtp'].get('port') == '$local':
        body = dict(body, rtp=dict(body['rtp'], port=rtp_sock.getsockname()[1]))
    body = {k: (pids.get(v[1:], v) if isinstance(v, str) and v.startswith('$') else v) for k, v in body.items()}
    sent, reply = post(f"/{sid}/{handles[handle]}", {'janus': 'message', 'body': body})
    time.sleep(wait)
    with lock:
        evs = list(events); events.clear()
    for e in evs:
        e['sender_name'] = names.get(e.get('sender'), '?')
        d = e.get('plugindata', {}).get('data', {})
        if d.get('audiobridge') in ('joined', 'roomchanged') and 'id' in d:
            pids[e['sender_name']] = d['id']
        if 'rtp' in d:
            rtp_to['addr'] = (d['rtp']['ip'], d['rtp']['port'])
    # ids differ per run: keep them, the comparison tests should normalise ids and transactions.
    rec = {'step': label, 'handle': handle, 'handle_id': handles[handle], 'request': body, 'reply': reply, 'events': evs}
    log.write(json.dumps(rec) + '\n'); log.flush()
    print(label, json.dumps(reply)[:200])
for label, h, body in json.load(open(sys.argv[3])):
    step(label, h, body)
log.close()
