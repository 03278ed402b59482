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
def step(label, handle, body, wait=0.4):
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
    # ids differ per run: keep them, the comparison tests should normalise ids and transactions.
    rec = {'step': label, 'handle': handle, 'handle_id': handles[handle], 'request': body, 'reply': reply, 'events': evs}
    log.write(json.dumps(rec) + '\n'); log.flush()
    print(label, json.dumps(reply)[:200])
for label, h, body in json.load(open(sys.argv[3])):
    step(label, h, body)
log.close()
