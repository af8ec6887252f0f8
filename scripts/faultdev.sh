#!/bin/sh
# faultdev.sh: make a failing device for the fsync test of dag/badgerstore
# (TestFsyncFailureFailsThePut). It needs root and loop devices:
#
#   sudo scripts/faultdev.sh up /tmp/witan-fault     # prints the directory
#   WITAN_FAULT_DIR=/tmp/witan-fault/mnt go test -run FsyncFailure ./dag/badgerstore/
#   sudo scripts/faultdev.sh down /tmp/witan-fault
#
# An ext4 file system of 64 MiB on a loop device whose backing file lives
# on a tmpfs of 6 MiB: the file system believes it has room, so writes
# and mmap page faults succeed, but the device fails its writes once the
# tmpfs is full, and fsync reports EIO.
set -eu
cmd=$1 base=$2
case $cmd in
up)
	mkdir -p "$base/back" "$base/mnt"
	mount -t tmpfs -o size=6m tmpfs "$base/back"
	truncate -s 64M "$base/back/disk.img"
	mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$base/back/disk.img"
	mount -o loop,errors=continue "$base/back/disk.img" "$base/mnt"
	echo "$base/mnt"
	;;
down)
	umount "$base/mnt" || true
	umount "$base/back" || true
	;;
esac
