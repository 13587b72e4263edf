"""scripts/real-program/h200-bisect.sh: one Markdown row of bisect.md from a `parity bisect`
summary (argv[1]) for extractor argv[2] whose run exited with argv[3]."""
import json, sys
path, x, rc = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    s = json.load(open(path))
except Exception as e:
    print(f"| {x} | no report (exit {rc}: {e}) | | | | |"); sys.exit()
if s.get("verdict") == "error":
    print(f"| {x} | error: {s.get('error','').splitlines()[0][:120]} | | | | |"); sys.exit()
f = s.get("first_divergence") or {}
a, b = f.get("a") or {}, f.get("b") or {}
buf = f.get("buffer") or {}
el = f.get("element") or {}
elem = f"#{el['index']} ({el['type']}): {el['a']} / {el['b']}" if el else (f.get("element_note") or "")
print(f"| {x} | {s['verdict']} | {a.get('kernel','')} #{a.get('launch','')} / #{b.get('launch','')} | {buf.get('name','')} | {elem} | {s.get('last_agreed') or ''} |")
