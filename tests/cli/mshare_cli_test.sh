#!/bin/sh
# The mshare command as a user drives it: every subcommand, its output, its
# exit status (0 ok, 1 failed or bad usage, as util-linux) and its messages, including bad
# sizes, missing regions, regions of another user (via busybox su) and a
# second msharefs mount. Prints KTAP. Runs in the guest as root (busybox
# sh) with msharefs on /sys/fs/mshare; needs hugetlbfs pages for one object.
#
# mshare is $MSHARE, else mshare in $PATH, else next to this script; the
# helper program (mshare_cli_helper) is next to this script.

# Each test runs as the condition of an if (t below), where set -e does
# not apply: a failing command there is a result, anywhere else a bug.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
M=${MSHARE:-$(command -v mshare || echo "$here/mshare")}
H=${MSHARE_CLI_HELPER:-$here/mshare_cli_helper}
MNT=/sys/fs/mshare
M2=/tmp/cli-m2
T=/tmp/cli-test
A=$(cat $MNT/mshare_info)
unset MSHARE_MOUNT

PLAN=26
n=0

# sh() for another user: busybox su as root needs no password.
as_nobody() {
	su -s /bin/sh nobody -c "$*"
}

# r CMD...: run it; $rc and $out hold its status and stdout; $T/out and
# $T/err its stdout and stderr.
r() {
	"$@" >$T/out 2>$T/err
	rc=$?
	out=$(cat $T/out)
}

# Checks: on failure, say why (as a KTAP diagnostic) and return 1.
why() {
	echo "# $*"
	echo "# command exit $rc; stdout:"
	sed 's/^/#   /' $T/out
	echo "# stderr:"
	sed 's/^/#   /' $T/err
	return 1
}
rc_is() { [ "$rc" = "$1" ] || why "expected exit $1"; }
out_has() { grep -q -e "$1" $T/out || why "stdout lacks /$1/"; }
out_lacks() { ! grep -q -e "$1" $T/out || why "stdout has /$1/"; }
err_has() { grep -q -e "$1" $T/err || why "stderr lacks /$1/"; }
exists() { [ -e "$MNT/$1" ] || why "$MNT/$1 does not exist"; }
absent() { [ ! -e "$MNT/$1" ] || why "$MNT/$1 exists"; }

# t NAME FUNCTION: one KTAP result.
t() {
	n=$((n + 1))
	if "$2"; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
	fi
}

# ---- tests ----------------------------------------------------------------

help_each() {
	r "$M" --help && rc_is 0 && out_has '^Usage: mshare ' || return 1
	for c in ls stat create rm run; do
		r "$M" $c --help
		rc_is 0 && out_has "^Usage: mshare $c" || return 1
	done
}

usage_errors() {
	r "$M" && rc_is 1 && err_has "expected a command" || return 1
	r "$M" frobnicate && rc_is 1 && err_has "unknown command 'frobnicate'" ||
		return 1
	r "$M" ls --frob && rc_is 1 && err_has "Try 'mshare ls --help'" ||
		return 1
	r "$M" stat && rc_is 1 && err_has "expected one NAME" || return 1
	r "$M" rm && rc_is 1 || return 1
	r "$M" run cli-a && rc_is 1 && err_has "expected a command" || return 1
	r "$M" create && rc_is 1
}

bad_sizes() {
	for s in 12Q 0 -1 1.5G 99999999999999999999 20000000T 4Kx ""; do
		r "$M" create cli-x --size "$s"
		rc_is 1 && err_has "bad size" && absent cli-x || return 1
	done
	for o in 0 0:1X 0:4K:rx x:4K 0:4K:rw:9; do
		r "$M" create cli-x --anon "$o"
		rc_is 1 && err_has "bad object" && absent cli-x || return 1
	done
	r "$M" create cli-x --mode 999 && rc_is 1 && err_has "bad mode" ||
		return 1
}

unaligned_size() {
	r "$M" create cli-x --size 4K
	rc_is 1 && err_has "not a multiple of the alignment $A" &&
		absent cli-x
}

create_default() {
	r "$M" create cli-a
	rc_is 0 && exists cli-a || return 1
	[ "$(stat -c %s $MNT/cli-a)" = $A ] || why "size not $A" || return 1
	[ "$(stat -c %a $MNT/cli-a)" = 644 ] || why "mode not 0644 (umask 022)"
}

create_exists() {
	r "$M" create cli-a
	rc_is 1 && err_has "^mshare: create $MNT/cli-a: File exists$"
}

# Every kind of object, and stat showing them.
create_objects() {
	dd if=/dev/zero of=/tmp/cli-file bs=1M count=2 2>/dev/null
	r "$M" create cli-b --size 1T --mode 0640 --anon 0:64M \
		--anon 1G:4K:r --file /tmp/cli-file:2G:1M:4K \
		--hugetlb 3G:2M
	rc_is 0 || return 1
	[ "$(stat -c %s $MNT/cli-b)" = 1099511627776 ] || why "size" || return 1
	[ "$(stat -c %a $MNT/cli-b)" = 640 ] || why "mode" || return 1
	r "$M" stat cli-b
	rc_is 0 && out_has '^size: *1T$' && out_has '^mode: *0640$' &&
		out_has '^objects: *4$' &&
		out_has '^start: *never attached$' &&
		out_has '^attachments: *0$' &&
		out_has '^owner: *root:root$' &&
		out_has '^  OFFSET  *SIZE PROT FILE-OFFSET  *BACKING$' &&
		out_has '^  0x0  *64M rw-  *0x0  *anon$' &&
		out_has '^  0x40000000  *4K r--  *0x0  *anon$' &&
		out_has '^  0x80000000  *1M rw-  *0x1000  */tmp/cli-file$' &&
		out_has '^  0xc0000000  *2M rw-  *0x0  *anon-hugetlb$' || return 1
	r "$M" stat --bytes cli-b
	rc_is 0 && out_has '^size: *1099511627776$' &&
		out_has '^  0x0  *67108864 rw-'
}

# A refused object leaves no region behind, and says what the kernel said.
create_rollback() {
	r "$M" create cli-c --anon 0:64M --anon 32M:64M
	rc_is 1 && err_has "cli-c: --anon 32M:64M: File exists" &&
		absent cli-c || return 1
	r "$M" create cli-c --anon 0:1000
	rc_is 1 && err_has "Invalid argument" && absent cli-c || return 1
	r "$M" create cli-c --file /nonexistent:0:4K
	rc_is 1 && err_has "^mshare: /nonexistent: No such file or directory$" &&
		absent cli-c || return 1
	r "$M" create cli-c --anon 1T:4K
	rc_is 1 && err_has "Invalid argument" && absent cli-c
}

ls_table() {
	r "$M" ls
	rc_is 0 || return 1
	out_has '^PATH  *SIZE  *OBJECTS  *RSS  *PGTABLES  *ATTACHED  *OWNER  *MODE$' &&
		out_has '^cli-a  *512G  *0  *0B  *[0-9.]*[KB]  *0  *root  *0644$' &&
		out_has '^cli-b  *1T  *4  *0B  *[0-9.]*[KB]  *0  *root  *0640$' &&
		out_lacks mshare_info
}

ls_bytes_json() {
	r "$M" ls --bytes
	rc_is 0 && out_has "^cli-a  *$A  *0  *0  *[0-9]*  *0  *root  *0644$" ||
		return 1
	r "$M" ls --json
	rc_is 0 && out_has '^{"regions": \[$' && out_has '^\]}$' &&
		out_has "\"path\": \"cli-a\", \"size\": $A, \"start\": 0, \"objects\": 0, \"rss\": 0, \"pgtables\": [0-9]*, \"attachments\": 0, \"owner\": \"root\", \"uid\": 0, \"group\": \"root\", \"gid\": 0, \"mode\": \"0644\", \"pids\": \[\]}" ||
		return 1
	r "$M" stat --json cli-b
	rc_is 0 && out_has '"objects_list": \[' &&
		out_has '{"offset": 2147483648, "size": 1048576, "prot": "rw-", "file_offset": 4096, "backing": "/tmp/cli-file"}'
}

directories() {
	mkdir $MNT/cli-d && r "$M" create cli-d/r1 && rc_is 0 || return 1
	r "$M" ls
	rc_is 0 && out_has '^cli-d/r1  *512G ' && out_lacks '^cli-d ' || return 1
	r "$M" ls cli-d
	rc_is 0 && out_has '^cli-d/r1 ' && out_lacks '^cli-a ' || return 1
	r "$M" ls cli-a $MNT/cli-d/r1
	rc_is 0 && out_has '^cli-a ' && out_has '^cli-d/r1 ' || return 1
	r "$M" ls cli-nothing
	rc_is 1 && err_has "^mshare: $MNT/cli-nothing: No such file or directory$"
}

other_mount() {
	mkdir -p $M2 && mount -t msharefs msharefs $M2 || return 1
	r "$M" create --mount $M2 r2
	rc_is 0 && [ -e $M2/r2 ] || why "no $M2/r2" || return 1
	r env MSHARE_MOUNT=$M2 "$M" ls
	rc_is 0 && out_has '^r2 ' && out_lacks '^cli-a ' || return 1
	r "$M" --mount $M2 ls
	rc_is 0 && out_has '^r2 ' && out_lacks '^cli-a ' || return 1
	r "$M" stat $M2/r2
	rc_is 0 && out_has "^region: *$M2/r2$" || return 1
	r "$M" --mount /tmp ls
	rc_is 1 && err_has "^mshare: /tmp: not an msharefs mount" || return 1
	r "$M" rm --mount $M2 r2 && rc_is 0 || return 1
	umount $M2
}

run_attach() {
	r "$M" run cli-b -- "$H" fill 1M verify 1M
	rc_is 0 && out_has '^attached at 0x' || return 1
	addr=${out#attached at }
	r "$M" stat cli-b
	rc_is 0 && out_has "^start: *$addr$" && out_has '^rss: *1M$' &&
		out_has '^attachments: *0$' || return 1
	[ $((addr % A)) = 0 ] || why "$addr is not aligned" || return 1
	# run chose the start (nobody attached before): 16 to 48 TiB.
	[ $((addr >= 1 << 44)) = 1 ] && [ $((addr < 3 << 44)) = 1 ] ||
		why "start $addr not in [16 TiB, 48 TiB)"
}

run_env() {
	r "$M" run cli-a -- sh -c 'echo "$MSHARE_PATH $MSHARE_SIZE $MSHARE_PROT"
		echo "$MSHARE_ADDR"; readlink /proc/$$/fd/$MSHARE_FD'
	rc_is 0 && out_has "^$MNT/cli-a $A rw$" && out_has '^0x[0-9a-f]*$' &&
		out_has "^$MNT/cli-a$" || return 1
	# The address run recommends is where the region was first attached.
	r "$M" stat cli-a
	out_has "^start: *0x" || return 1
}

run_ro() {
	r "$M" run --ro cli-b -- "$H" verify 1M nowrite
	rc_is 0 || return 1
	r "$M" run --ro cli-b -- sh -c 'echo $MSHARE_PROT'
	rc_is 0 && out_has '^r$'
}

run_at() {
	r "$M" run --at 0x100000000000 cli-a -- "$H"
	rc_is 0 && out_has '^attached at 0x100000000000$' || return 1
	r "$M" run --at 0x1000 cli-a -- true
	rc_is 1 && err_has "not a multiple of the alignment" || return 1
	r "$M" run --at nowhere cli-a -- true
	rc_is 1 && err_has "bad address"
}

# ls like lsipc: --noheadings, --output (a list, or +LIST after the
# default columns), --raw with blanks escaped; bad columns are usage errors.
ls_columns() {
	r "$M" ls --noheadings --output mode,path cli-a cli-b
	rc_is 0 && out_lacks PATH && out_has '^0644 cli-a$' &&
		out_has '^0640 cli-b$' || return 1
	[ "$(wc -l <$T/out)" = 2 ] || why "not two lines" || return 1
	r "$M" ls -n -o +OWNER cli-a
	rc_is 0 && out_has '^cli-a  *512G  *0 .* 0644 root$' || return 1
	r "$M" ls --raw cli-a
	rc_is 0 && out_has '^PATH SIZE OBJECTS RSS PGTABLES ATTACHED OWNER MODE$' &&
		out_has '^cli-a 512G 0 0B [0-9.]*[KB] 0 root 0644$' || return 1
	r "$M" create 'cli-c d' --mode 0600 && rc_is 0 || return 1
	r "$M" ls -r -n -o path,mode 'cli-c d'
	rc_is 0 && out_has '^cli-c\\x20d 0600$' || return 1
	r "$M" rm 'cli-c d' && rc_is 0 || return 1
	r "$M" ls -o path,bogus
	rc_is 1 && err_has "unknown column 'bogus'" || return 1
	r "$M" ls -o ''
	rc_is 1 && err_has "unknown column" || return 1
	r "$M" ls --json --raw
	rc_is 1 && err_has "exclude each other"
}

# The mode asked for, whatever the umask; the default follows the umask.
create_mode() {
	(umask 077 && "$M" create cli-m --mode 0644) >$T/out 2>$T/err
	rc=$?
	rc_is 0 && [ "$(stat -c %a $MNT/cli-m)" = 644 ] ||
		why "mode not 0644 under umask 077" || return 1
	(umask 077 && "$M" create cli-n) >$T/out 2>$T/err
	rc=$?
	rc_is 0 && [ "$(stat -c %a $MNT/cli-n)" = 600 ] ||
		why "default mode not 0600 under umask 077" || return 1
	r "$M" rm cli-m cli-n
	rc_is 0 && absent cli-m && absent cli-n
}

run_status() {
	r "$M" run cli-a -- sh -c 'exit 7' && rc_is 7 || return 1
	r "$M" run cli-a -- /nonexistent
	rc_is 127 && err_has "^mshare: /nonexistent: No such file or directory$" ||
		return 1
	r "$M" run cli-nothing -- true
	rc_is 1 && err_has "^mshare: $MNT/cli-nothing: No such file or directory$"
}

# hold NAME: a helper attached to NAME until $T/hold goes away.
hold_start() {
	rm -f $T/hold
	"$M" run "$1" -- "$H" verify 1M hold $T/hold verify 1M \
		>$T/hold.out 2>&1 &
	hold_pid=$!
	i=0
	while [ ! -e $T/hold ] && [ $i -lt 500 ]; do
		usleep 20000
		i=$((i + 1))
	done
	[ -e $T/hold ] && return 0
	sed 's/^/# helper: /' $T/hold.out
	why "the helper did not attach"
}

hold_stop() {
	rm -f $T/hold
	wait $hold_pid
	hold_rc=$?
	[ $hold_rc = 0 ] || { sed 's/^/# helper: /' $T/hold.out; return 1; }
}

attachments() {
	hold_start cli-b || return 1
	r "$M" ls
	ok=0
	out_has '^cli-b  *1T  *4  *1M  *[0-9.]*K  *1  *root  *0640$' &&
		r "$M" ls -n -o path,pids cli-b && out_has "^cli-b  *$hold_pid$" &&
		r "$M" stat cli-b && out_has '^attachments: *1$' &&
		out_has "^pids: *$hold_pid$" || ok=1
	hold_stop || return 1
	[ $ok = 0 ] || return 1
	r "$M" stat cli-b
	out_has '^attachments: *0$'
}

permissions() {
	"$M" create cli-p --mode 0600 || return 1
	r as_nobody "$M ls"
	rc_is 0 && out_has '^cli-p  *512G  *-  *-  *-  *-  *root  *0600$' ||
		return 1
	r as_nobody "$M stat cli-p"
	rc_is 1 && err_has "^mshare: $MNT/cli-p: Permission denied$" || return 1
	r as_nobody "$M rm cli-p"
	rc_is 1 && err_has "^mshare: remove $MNT/cli-p: Operation not permitted$" &&
		exists cli-p || return 1
	r as_nobody "$M run cli-p -- true"
	rc_is 1 && err_has "Permission denied" || return 1
	# Read-only access gives stats; run --ro works, run rw does not.
	chmod 0644 $MNT/cli-p
	r as_nobody "$M stat cli-p"
	rc_is 0 && out_has '^objects: *0$' || return 1
	r as_nobody "$M run cli-p -- true"
	rc_is 1 && err_has "^mshare: $MNT/cli-p: Permission denied$" || return 1
	r as_nobody "$M run --ro cli-p -- true"
	rc_is 0 || return 1
	r as_nobody "$M create cli-n && $M ls"
	rc_is 0 && out_has '^cli-n  *512G  *0  *0B  *[0-9.]*[KB]  *0  *nobody  *0644$' ||
		return 1
	r as_nobody "$M rm cli-n" && rc_is 0 && absent cli-n
}

rm_regions() {
	r "$M" rm cli-a cli-p && rc_is 0 && absent cli-a && absent cli-p ||
		return 1
	r "$M" rm cli-a
	rc_is 1 && err_has "^mshare: remove $MNT/cli-a: No such file or directory$" ||
		return 1
	r "$M" rm cli-d
	rc_is 1 && err_has "Directory not empty" || return 1
	r "$M" rm cli-d/r1 cli-d && rc_is 0 && absent cli-d
}

# Removing an attached region: gone from ls, memory kept for the holder.
# Unlinked while attached: ls still lists it, as the maps name it, with
# who attaches it, until the last attachment goes.
rm_attached() {
	hold_start cli-b || return 1
	r "$M" rm cli-b
	ok=0
	rc_is 0 && absent cli-b || ok=1
	r "$M" ls -o +pids
	out_has "^cli-b (deleted)  *1T  *4  *1M  *[0-9.]*K  *1  *root  *0640  *$hold_pid$" ||
		ok=1
	r "$M" ls --json
	out_has "\"path\": \"cli-b (deleted)\", .*\"pids\": \[$hold_pid\]" || ok=1
	# Another msharefs mounted at the same path in another mount namespace,
	# its region unlinked while attached: not a region of this mount.
	rm -f $T/hold2 $T/gone2
	unshare -m sh -c "mount -t msharefs none $MNT && $M create cli-x &&
		{ $M run cli-x -- $H hold $T/hold2 & } &&
		while [ ! -e $T/hold2 ]; do usleep 20000; done &&
		$M rm cli-x && touch $T/gone2 && wait" >$T/hold2.out 2>&1 &
	i=0
	while [ ! -e $T/gone2 ] && [ $i -lt 500 ]; do
		usleep 20000
		i=$((i + 1))
	done
	[ -e $T/gone2 ] || { sed 's/^/# other mount: /' $T/hold2.out; ok=1; }
	r "$M" ls
	out_has '^cli-b (deleted) ' && out_lacks 'cli-x' || ok=1
	rm -f $T/hold2
	wait $!
	hold_stop && [ $ok = 0 ] || return 1
	r "$M" ls
	out_lacks '^cli-b'
}

stat_errors() {
	r "$M" stat cli-nothing
	rc_is 1 && err_has "^mshare: $MNT/cli-nothing: No such file or directory$" ||
		return 1
	mkdir $MNT/cli-e
	r "$M" stat cli-e
	rmdir $MNT/cli-e
	rc_is 1 && err_has "not an msharefs region" || return 1
	r "$M" stat /tmp/cli-file
	rc_is 1 && err_has "^mshare: /tmp/cli-file: not an msharefs region$"
}

# A fresh mount: a header and nothing else.
empty_ls() {
	mkdir -p $M2 && mount -t msharefs msharefs $M2 || return 1
	r "$M" --mount $M2 ls
	rc_is 0 && [ "$out" = "PATH SIZE OBJECTS RSS PGTABLES ATTACHED OWNER MODE" ] ||
		why "expected a header only" || { umount $M2; return 1; }
	r "$M" --mount $M2 ls --json
	umount $M2
	rc_is 0 && [ "$out" = '{"regions": []}' ] || why "expected no regions"
}

# Sizes that are not a whole number of units get one decimal.
human_sizes() {
	r "$M" create cli-h --size 1536G --anon 0:1536K
	rc_is 0 || return 1
	r "$M" ls cli-h
	rc_is 0 && out_has '^cli-h  *1.5T  *1 ' || return 1
	r "$M" stat cli-h
	out_has '^  0x0  *1.5M rw-' || return 1
	r "$M" rm cli-h && rc_is 0
}

# Whatever of it exists: each step may find nothing to do.
cleanup() {
	rm -f $MNT/cli-* 2>/dev/null || true
	rmdir $MNT/cli-d $MNT/cli-e 2>/dev/null || true
	rm -f $MNT/cli-d/* 2>/dev/null && rmdir $MNT/cli-d 2>/dev/null || true
	umount $M2 2>/dev/null || true
	rm -f /tmp/cli-file
}

umask 022
mkdir -p $T
chmod 0777 $T
cleanup
echo "TAP version 13"
echo "1..$PLAN"
echo "# mshare: $M"
t help_each help_each
t usage_errors usage_errors
t bad_sizes bad_sizes
t unaligned_size unaligned_size
t create_default create_default
t create_exists create_exists
t create_objects create_objects
t create_rollback create_rollback
t ls_table ls_table
t ls_bytes_json ls_bytes_json
t ls_columns ls_columns
t create_mode create_mode
t directories directories
t other_mount other_mount
t run_attach run_attach
t run_env run_env
t run_ro run_ro
t run_at run_at
t run_status run_status
t attachments attachments
t permissions permissions
t stat_errors stat_errors
t rm_attached rm_attached
t human_sizes human_sizes
t rm_regions rm_regions
t empty_ls empty_ls
cleanup
