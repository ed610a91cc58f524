#!/usr/bin/env python3
"""Apply one change to every commit of build/linux's series from a commit on.

    transform.py COMMIT RULES.py

RULES.py defines PATHS, the files it may change, and
transform(path, text, get), which returns the new text of @path at one
commit (get(other) reads another file of that same commit, None if
absent). Each commit from COMMIT to HEAD is made again with the changed
files and its own message and author; the diff of each patch then changes
by exactly what the rule changes in the trees before and after it. For a
design change that must appear in the patch that introduced the code and
be carried through every later patch (where fixup! commits would conflict
with the lines later patches add next to it). The rule decides where it
applies, e.g. from the first commit whose tree holds what it changes.
"""
import os
import runpy
import subprocess
import sys
import tempfile


def git(*args, env=None, data=None):
    return subprocess.run(("git",) + args, check=True, capture_output=True,
                          input=data, env=env).stdout


def blob(commit, path):
    try:
        return git("cat-file", "blob", f"{commit}:{path}").decode()
    except subprocess.CalledProcessError:
        return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    first, rules = sys.argv[1], runpy.run_path(sys.argv[2])
    if git("status", "--porcelain", "--untracked-files=no").strip():
        sys.exit("transform.py: uncommitted changes; commit them first")
    commits = git("rev-list", "--reverse", f"{first}^..HEAD").decode().split()
    if not commits:
        sys.exit(f"transform.py: {first} is not in HEAD's history")
    parent = git("rev-parse", f"{first}^").decode().strip()
    fd, index = tempfile.mkstemp()
    os.close(fd)
    env = dict(os.environ, GIT_INDEX_FILE=index)
    changed = 0
    try:
        for c in commits:
            git("read-tree", c, env=env)
            for path in rules["PATHS"]:
                old = blob(c, path)
                if old is None:
                    continue
                new = rules["transform"](path, old, lambda p: blob(c, p))
                if new == old:
                    continue
                h = git("hash-object", "-w", "--stdin",
                        data=new.encode()).decode().strip()
                git("update-index", "--cacheinfo", f"100644,{h},{path}",
                    env=env)
                changed += 1
            tree = git("write-tree", env=env).decode().strip()
            meta = git("log", "-1", "--format=%an%x00%ae%x00%ad", c)
            name, email, date = meta.decode().strip().split("\0")
            msg = git("log", "-1", "--format=%B", c)
            msg = git("stripspace", data=msg)
            cenv = dict(os.environ, GIT_AUTHOR_NAME=name,
                        GIT_AUTHOR_EMAIL=email, GIT_AUTHOR_DATE=date)
            parent = git("commit-tree", tree, "-p", parent, data=msg,
                         env=cenv).decode().strip()
    finally:
        os.unlink(index)
    # The working tree was clean: only the files that differ change.
    git("reset", "-q", "--hard", parent)
    print(f"transform.py: {changed} file versions changed in {len(commits)} commits")


main()
