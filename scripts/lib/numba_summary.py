"""The summary of a scripts/numba-check run: OUT/results.md and OUT/results.json from
the per-module logs, return codes and driver counters under OUT/logs.
    numba_summary.py OUT MODULES   (MODULES: comma-separated)
Exit 1 when a module failed, errored, timed out or ran nothing; 0 otherwise."""
import json, re, sys, pathlib
out, mods = pathlib.Path(sys.argv[1]), sys.argv[2].split(',')
rows, total, bad = [], {'ok': 0, 'fail': 0, 'error': 0, 'skip': 0, 'xfail': 0}, 0
for m in mods:
    log = (out / 'logs' / f'{m}.log').read_text(errors='replace') if (out / 'logs' / f'{m}.log').exists() else ''
    rc = (out / 'logs' / f'{m}.rc').read_text().strip() if (out / 'logs' / f'{m}.rc').exists() else '?'
    # unittest's own summary ("Ran N tests", then "OK (skipped=..)" or "FAILED (failures=..,
    # errors=..)"): per-test lines interleave with the kernels' warnings on stderr. A failed
    # subtest counts as a failure of its own, so `ok` is clamped at 0.
    c = {'ok': 0, 'fail': 0, 'error': 0, 'skip': 0, 'xfail': 0}
    ran = re.findall(r'^Ran (\d+) tests? in', log, re.M)
    verdict = re.findall(r'^(OK|FAILED)(?: \((.*)\))?$', log, re.M)
    if ran and verdict:
        detail = dict((k.strip(), int(v)) for k, v in re.findall(r'([a-z ]+)=(\d+)', verdict[-1][1] or ''))
        c['fail'], c['error'] = detail.get('failures', 0), detail.get('errors', 0)
        c['skip'], c['xfail'] = detail.get('skipped', 0), detail.get('expected failures', 0)
        c['ok'] = max(0, int(ran[-1]) - sum(c.values()) - detail.get('unexpected successes', 0))
    # The first error line of each failed test (the last line of its traceback).
    why = []
    for block in re.split(r'\n={60,}\n', log)[1:]:
        head = block.splitlines()[0] if block else ''
        exc = [l for l in block.splitlines() if re.match(r'^[A-Za-z_][\w.]*(Error|Exception|Exit)\b.*', l)]
        if head.startswith(('ERROR:', 'FAIL:')):
            why.append(f"{head.split('(')[0].strip()}: {exc[-1][:240] if exc else '?'}")
    counts = {}
    cf = out / 'logs' / f'{m}.counts.json'
    if cf.exists():
        try:
            counts = json.loads(cf.read_text())
        except ValueError:
            counts = {'unreadable': str(cf)}
    unsup = counts.get('unsupported', {}) if isinstance(counts, dict) else {}
    timed_out = rc == '124'
    if c['fail'] or c['error'] or timed_out or (rc not in ('0', '1')) or sum(c.values()) == 0:
        bad += 1
    for k in total: total[k] += c[k]
    rows.append({'module': m, 'exit': rc, 'timed_out': timed_out, **c, 'unsupported': unsup, 'failures': why})
(out / 'results.json').write_text(json.dumps({'modules': rows, 'total': total}, indent=1))
md = ['# numba-cuda on simtwin (PTX mode)', '',
      'numba-cuda[cu13] as pip installs it; linked by simtwin\'s libnvJitLink.so.13 (LD_PRELOAD).', '',
      '| module | ok | fail | error | skipped | expected failures | exit |', '|---|---|---|---|---|---|---|']
for r in rows:
    md.append(f"| {r['module']} | {r['ok']} | {r['fail']} | {r['error']} | {r['skip']} | {r['xfail']} | {r['exit']}{' (timeout)' if r['timed_out'] else ''} |")
md.append(f"| **total** | {total['ok']} | {total['fail']} | {total['error']} | {total['skip']} | {total['xfail']} | |")
md.append('')
for r in rows:
    if r['failures'] or r['unsupported']:
        md.append(f"## {r['module']}")
        md += [f"- {w}" for w in r['failures']]
        if r['unsupported']:
            md.append(f"- entry points simtwin does not implement: {r['unsupported']}")
        md.append('')
(out / 'results.md').write_text('\n'.join(md) + '\n')
print('\n'.join(md[:len(rows) + 6]))
sys.exit(1 if bad else 0)
