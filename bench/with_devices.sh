#!/usr/bin/env bash
# Runs one command with two devices that complete I/O inline set up for
# it, then removes them: a zram device and a loop device over a file on a
# tmpfs, each SIZE (default 1G) and filled with random bytes first (a
# page never written reads back without the device's work); FILL=blank
# leaves them zeroed, for a command that formats them and refuses a
# device holding data it does not know (hiops kv). The command
# sees their paths as $ZRAM and $LOOP:
#
#   bash bench/with_devices.sh 'python3 bench/alternate.py --file $LOOP ...'
#
# Needs root, the zram module (/sys/class/zram-control) and losetup.
# Touches no other device: the tmpfs is mounted under a fresh temporary
# directory and everything is removed on exit, also on failure.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bench/with_devices.sh 'COMMAND using \$ZRAM and \$LOOP'" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "bench/with_devices.sh: needs root (zram and loop devices)" >&2; exit 2; }
[ -e /sys/class/zram-control/hot_add ] || { echo "bench/with_devices.sh: no zram module (modprobe zram)" >&2; exit 2; }
SIZE=${SIZE:-1G}
mb=$(numfmt --from=iec "$SIZE" | awk '{print int($1 / 1048576)}')

zram_n=""; loop=""; dir=""
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" || true
  [ -n "$dir" ] && { umount "$dir" 2>/dev/null || true; rmdir "$dir"; }
  [ -n "$zram_n" ] && echo "$zram_n" > /sys/class/zram-control/hot_remove || true
}
trap cleanup EXIT

zram_n=$(cat /sys/class/zram-control/hot_add)
echo "$SIZE" > "/sys/block/zram$zram_n/disksize"
dir=$(mktemp -d /var/tmp/with_devices.XXXXXX)
mount -t tmpfs -o size=$((mb + 64))m tmpfs "$dir"
if [ "${FILL:-random}" = blank ]; then
  truncate -s "${mb}M" "$dir/backing"
else
  dd if=/dev/urandom of="/dev/zram$zram_n" bs=1M count="$mb" oflag=direct status=none
  dd if=/dev/urandom of="$dir/backing" bs=1M count="$mb" status=none
fi
loop=$(losetup --find --show "$dir/backing")

export ZRAM=/dev/zram$zram_n LOOP=$loop
echo "bench/with_devices.sh: ZRAM=$ZRAM LOOP=$LOOP ($SIZE each)" >&2
bash -c "$1"
