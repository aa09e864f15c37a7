#!/usr/bin/env bash
# Live runs on this machine: the single-process calibration runs (calibration/live/vm-tmpfs/, vm-disk/)
# and the multi-process runs the fitted profiles predict (validation/live/runs/).
#   validation/live/measure.sh [DISK_DIR] [TMPFS_DIR]     (defaults: /var/tmp and /dev/shm)
# Each run is `simfs measure ... --json`; the records name the machine they ran on.
set -euo pipefail
cd "$(dirname "$0")/../.."
disk=${1:-/var/tmp}
tmpfs=${2:-/dev/shm}
simfs=${SIMFS:-simfs}
cal=calibration/live
val=validation/live/runs
mkdir -p "$cal/vm-tmpfs" "$cal/vm-disk" "$val"

run() {  # run NAME DIR NP WORKLOAD...
    local out=$1 dir=$2 np=$3
    shift 3
    echo "== $out: np=$np $*" >&2
    "$simfs" measure --dir "$dir" --np "$np" --json "$out" -- "$@" >/dev/null
}

# Calibration: one process.
run "$cal/vm-tmpfs/tmpfs-1m.json"        "$tmpfs" 1 ior -a POSIX -F -t 1m -b 512m -w -r -i 5
run "$cal/vm-tmpfs/tmpfs-16k.json"       "$tmpfs" 1 ior -a POSIX -F -t 16k -b 256m -w -r -i 5
run "$cal/vm-disk/disk-buffered.json"   "$disk"  1 ior -a POSIX -F -t 1m -b 512m -w -r -i 5
run "$cal/vm-disk/disk-fsync.json"      "$disk"  1 ior -a POSIX -F -t 1m -b 512m -w -e -i 5
run "$cal/vm-disk/disk-direct-64k.json" "$disk"  1 ior -a POSIX -F -t 64k -b 128m -w -r --posix.odirect -i 5
run "$cal/vm-disk/disk-direct-4m.json"  "$disk"  1 ior -a POSIX -F -t 4m -b 512m -w -r --posix.odirect -i 5

# Held out: 1, 2, 4 and 8 processes; all tmpfs runs, then all disk runs (a disk run's
# write-back and discards would otherwise overlap the next tmpfs run).
for np in 1 2 4 8; do
    run "$val/tmpfs-buffered-np$np.json" "$tmpfs" "$np" ior -a POSIX -F -t 1m -b 256m -w -r -i 5
done
for np in 1 2 4 8; do
    run "$val/disk-fsync-np$np.json"     "$disk"  "$np" ior -a POSIX -F -t 1m -b 256m -w -e -i 5
    run "$val/disk-direct-np$np.json"    "$disk"  "$np" ior -a POSIX -F -t 1m -b 256m -w -r --posix.odirect -i 5
done
