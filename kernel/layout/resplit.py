#!/usr/bin/env python3
"""Re-split a kernel tree's history into a new series by tags.

    resplit.py KTREE BASE FINAL LAYOUT_DIR [--commit]

Every line the final tree adds to BASE, and every BASE line it removes, is
tagged with the new patch it belongs to: the old commit that added (git
blame) or removed it (git blame --reverse) maps to a new patch through
LAYOUT_DIR/map, and LAYOUT_DIR/overrides retags single lines of the final
tree ("path first-last patch", or "path /regex/ patch" for every matching
line, or "path * patch" for the whole file). Patch k of the new series is BASE with
every change tagged at or before k: each new patch only adds to what the
earlier ones wrote, and the last one is FINAL exactly. With --commit the
new series is committed on a branch "resplit" of KTREE, with the messages
of LAYOUT_DIR/msg/<patch>.
"""
import os, re, subprocess, sys
from collections import defaultdict

def git(*a, inp=None):
    return subprocess.run(['git', '-C', KT] + list(a), input=inp,
                          capture_output=True, check=True).stdout

KT, BASE, FINAL, LD = sys.argv[1:5]
COMMIT = '--commit' in sys.argv

order = []          # new patch ids, in order
series_of = {}
for l in open(os.path.join(LD, 'patches')):
    l = l.strip()
    if not l or l.startswith('#'):
        continue
    pid, ser = l.split()[:2]
    order.append(pid)
    series_of[pid] = ser
rank = {p: i for i, p in enumerate(order)}

olds = git('rev-list', '--reverse', BASE + '..' + FINAL).decode().split()
oldidx = {c: i + 1 for i, c in enumerate(olds)}
omap = {}
for l in open(os.path.join(LD, 'map')):
    l = l.split('#')[0].split()
    if l:
        omap[int(l[0])] = l[1]

ovr = defaultdict(list)
for l in open(os.path.join(LD, 'overrides')):
    l = l.rstrip('\n')
    if not l.strip() or l.startswith('#'):
        continue
    path, rest = l.split(None, 1)
    spec, pid = rest.rsplit(None, 1)
    assert pid in rank or pid == 'base', l
    ovr[path].append((spec, pid))

def tag_of_commit(c):
    i = oldidx[c]
    if i not in omap:
        sys.exit('old commit %d (%s) has no new patch in map' % (i, c[:12]))
    return omap[i]

def blame(path, rev, reverse=False):
    """One entry per line of path at rev: the commit blame names."""
    args = ['blame', '--porcelain']
    if reverse:
        args += ['--reverse', BASE + '..' + FINAL]
    else:
        args += [BASE + '..' + FINAL]
    args += ['--', path]
    out = git(*args).decode('utf-8', 'surrogateescape').split('\n')
    res = []
    for line in out:
        m = re.match(r'^([0-9a-f]{40}) \d+ (\d+)', line)
        if m:
            cur = m.group(1)
            res.append(cur)
    return res

def show(rev, path):
    try:
        return git('show', '%s:%s' % (rev, path)).decode('utf-8', 'surrogateescape').split('\n')
    except subprocess.CalledProcessError:
        return None

changed = git('diff', '--name-only', BASE, FINAL).decode().split()
basec = git('rev-parse', BASE).decode().strip()
finalc = git('rev-parse', FINAL).decode().strip()
versions = {}     # path -> list of (patch index) -> content

import difflib
report = defaultdict(lambda: defaultdict(int))

for path in changed:
    b = show(BASE, path) or []
    f = show(FINAL, path)
    if f is None:
        sys.exit('%s removed: not handled' % path)
    if b == ['']:
        b = []
    # tags of final lines
    ftags = [None] * len(f)
    # porcelain lists lines in order of appearance groups; redo by line number
    out = git('blame', '--line-porcelain', BASE + '..' + FINAL, '--', path).decode('utf-8', 'surrogateescape').split('\n')
    ln = 0
    for line in out:
        m = re.match(r'^([0-9a-f]{40}) \d+ (\d+)', line)
        if m:
            c = m.group(1)
            n = int(m.group(2)) - 1
            bnd = False
            ftags[n] = c
        if line.startswith('boundary'):
            ftags[n] = None
    for i, c in enumerate(ftags):
        if c is not None:
            ftags[i] = tag_of_commit(c)
    # deleting commit of base lines
    btags = [None] * len(b)
    if b and path in changed and show(BASE, path) is not None:
        out = git('blame', '--line-porcelain', '--reverse', BASE + '..' + FINAL, '--', path).decode('utf-8', 'surrogateescape').split('\n')
        for line in out:
            m = re.match(r'^([0-9a-f]{40}) \d+ (\d+)', line)
            if m:
                c = m.group(1)
                n = int(m.group(2)) - 1
                if c == finalc or c not in oldidx and c != basec:
                    btags[n] = None     # survives
                else:
                    i = 0 if c == basec else oldidx[c]
                    # deleted by the commit after the last one it was in
                    btags[n] = ('del', olds[i] if i < len(olds) else None)
    # A line an earlier patch wrote inside a function a later patch adds
    # (an old fix to code that moved later) goes with that function.
    if path.endswith(('.c', '.h')):
        i = 0
        while i < len(f):
            if f[i] == '{' or (f[i].endswith('{') and not f[i][:1].isspace()
                               and f[i][:1] not in ('#', '}', '/', ' ')):
                # find the signature's first line
                j = i
                while j > 0 and f[j - 1].strip() and not f[j - 1].startswith(('}', '#', '/', ' *', '*')) and not f[j - 1].endswith((';', '*/')):
                    j -= 1
                k = i
                while k < len(f) and not f[k].startswith('}'):
                    k += 1
                ft = ftags[j]
                if ft is not None and ft in rank:
                    for x in range(j, min(k + 1, len(f))):
                        if ftags[x] in rank and rank[ftags[x]] < rank[ft]:
                            ftags[x] = ft
                i = k + 1
            else:
                i += 1
    # A block comment is one piece: its lines go with the first patch
    # that writes any of it, so that no patch holds a fragment.
    if path.endswith(('.c', '.h')):
        i = 0
        while i < len(f):
            st = f[i].lstrip()
            if st.startswith('/*') and '*/' not in st:
                j = i
                while j < len(f) and '*/' not in f[j]:
                    j += 1
                tags = [ftags[x] for x in range(i, min(j + 1, len(f)))
                        if ftags[x] in rank]
                if tags:
                    m = min(tags, key=lambda t: rank[t])
                    for x in range(i, min(j + 1, len(f))):
                        if ftags[x] in rank:
                            ftags[x] = m
                i = j + 1
            else:
                i += 1
    for spec, pid in ovr.get(path, []):
        if spec.startswith('~/'):
            # BASE lines the final tree removes, by a regex
            rx = re.compile(spec[2:-1])
            hit = [i for i, l in enumerate(b) if rx.search(l)]
            if not hit:
                sys.exit('override %s %s matches nothing' % (path, spec))
            for i in hit:
                btags[i] = ('tag', pid)
            continue
        if spec == '*':
            sel = range(len(f))
        elif spec.startswith('/'):
            rx = re.compile(spec[1:-1])
            sel = [i for i, l in enumerate(f) if rx.search(l)]
            if not sel:
                sys.exit('override %s %s matches nothing' % (path, spec))
        else:
            a, _, z = spec.partition('-')
            sel = range(int(a) - 1, int(z or a))
        for i in sel:
            if spec == '*' or ftags[i] is not None:
                ftags[i] = pid
    sm = difflib.SequenceMatcher(None, b, f, autojunk=False)
    ops = []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op == 'equal':
            for k in range(i2 - i1):
                ops.append(('keep', b[i1 + k], None))
            continue
        dels = []
        for k in range(i1, i2):
            t = btags[k]
            if t and t[0] == 'tag':
                t = t[1]
            elif t and t[0] == 'del' and t[1] is not None:
                t = tag_of_commit(t[1])
            else:
                # blame --reverse could not say; take the first insert's
                t = next((ftags[j] for j in range(j1, j2) if ftags[j]), None)
            ops.append(('del', b[k], t))
        known = [ftags[j] for j in range(j1, j2) if ftags[j]]
        dtags = [t for o, l, t in ops[len(ops) - (i2 - i1):]] if i2 > i1 else []
        for k in range(j1, j2):
            t = ftags[k]
            if t is None:
                # a line blame gives to BASE that the diff inserts (a brace,
                # a blank line): the nearest tagged line of the same change
                near = [ftags[j] for j in range(k, j2) if ftags[j]] or \
                       [ftags[j] for j in range(k, j1 - 1, -1) if ftags[j]]
                t = (near or [d for d in dtags if d] or [order[-1]])[0]
            ops.append(('add', f[k], t))
    # whole-file deletion overrides apply to the deletions too
    for spec, pid in ovr.get(path, []):
        if spec == '*':
            ops = [(o, l, pid if o != 'keep' else None) for o, l, t in ops]
    for o, l, t in ops:
        if t is not None:
            assert t in rank or t == 'base', (path, t)
            report[t][path] += 1
    versions[path] = ops

def content_at(path, k):
    ops = versions[path]
    out = []
    any_line = False
    for o, l, t in ops:
        if o == 'keep':
            out.append(l)
        elif o == 'del':
            if rank[t] > k:
                out.append(l)
        else:
            if rank[t] <= k:
                out.append(l)
    return out

if '--report' in sys.argv:
    for p in order:
        files = report.get(p, {})
        print('%-6s %-8s %5d  %s' % (p, series_of[p], sum(files.values()),
              ' '.join('%s:%d' % (k, v) for k, v in sorted(files.items()))))
    sys.exit(0)

if COMMIT:
    git('checkout', '-q', '-B', os.environ.get('RESPLIT_BRANCH', 'resplit'), BASE)
    present = {path: show(BASE, path) is not None for path in changed}
    for k, pid in enumerate(order):
        for path in changed:
            c = content_at(path, k)
            full = os.path.join(KT, path)
            existed = present[path]
            # a new file exists once it has a line
            if not existed and not any(o == 'add' and rank[t] <= k for o, l, t in versions[path]):
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            data = '\n'.join(c)
            old = open(full, encoding='utf-8', errors='surrogateescape').read() if os.path.exists(full) else None
            if old != data:
                with open(full, 'w', encoding='utf-8', errors='surrogateescape') as fh:
                    fh.write(data)
            if path.endswith('.sh') or path.endswith('.py'):
                pass
        git('add', '-A')
        msgf = os.path.join(LD, 'msg', pid)
        msg = open(msgf).read() if os.path.exists(msgf) else 'WIP %s\n' % pid
        if not git('diff', '--cached', '--name-only'):
            sys.exit('patch %s is empty' % pid)
        git('-c', 'user.name=Seed 1d800d67 maintainers', '-c', 'user.email=maintainers@users.noreply.a-seed-1d800d67.example',
            'commit', '-q', '-F', '-', inp=msg.encode())
    d = git('diff', FINAL, 'HEAD', '--stat').decode()
    if d:
        sys.exit('the new series does not end at FINAL:\n' + d)
    print('resplit: %d patches, final tree identical' % len(order))
