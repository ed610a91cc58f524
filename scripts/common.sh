# Shared settings for the msharefs scripts; sourced, not run.
# shellcheck shell=bash
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
KTREE=${KTREE:-$BUILD/linux}
PATCHES=$TOP/kernel/patches
CONFIGS=$TOP/kernel/configs
PINNED=$(tr -d '[:space:]' <"$TOP/kernel/VERSION")
JOBS=${JOBS:-$(nproc)}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Refuse to touch a kernel tree holding edits that are not committed.
require_clean_tree() {
	if [ -n "$(git -C "$KTREE" status --porcelain --untracked-files=no)" ]; then
		git -C "$KTREE" status --short --untracked-files=no >&2
		die "$KTREE has uncommitted edits: commit them (git -C $KTREE commit -s) or stash them first"
	fi
}
