#!/usr/bin/env bash
# The runner against the real tools on one directory, same sizes, alternating, N rounds:
#   GNU dd (1 GiB in 1 MiB blocks from /dev/zero, conv=fsync; read back) vs `simfs measure -- dd`,
#   fio (sequential, 1 MiB, 1 GiB) vs `simfs measure -- ior -F -t 1m -b 1g`.
# fio is told to do what the runner does: no preallocation (IOR does not fallocate) and
# page-aligned anonymous mmap buffers (on the development VM fio's default malloc buffer
# copies at 2-5 GB/s from tmpfs against 8-9 GB/s with mmap; the kernel's copy is the cost).
# Writes end with an fsync; reads are O_DIRECT where the file system allows it (not tmpfs),
# and with O_DIRECT writes are compared too.
#   validation/live/compare-tools.sh [DIR] [ROUNDS]        (defaults: /var/tmp, 4)
# Prints one line per run: round, tool, mode, GB/s; then, per mode, each tool's median, the
# median of the per-round ratios runner/tool and a bootstrap 95% interval of that median,
# then dd against fio the same way, the floor: how closely the two tools agree on DIR
# (validation/live/compare_summary.py).  Needs dd (coreutils) and fio.
# PIN=CPU runs every tool and the runner on that one CPU (taskset), which on the
# development VM halves the spread of repeated reads.
set -euo pipefail
dir=${1:-/var/tmp}
rounds=${2:-4}
simfs=${SIMFS:-simfs}
here=$(cd "$(dirname "$0")" && pwd)
pin=()
if [ -n "${PIN:-}" ]; then pin=(taskset -c "$PIN"); fi
work=$(mktemp -d "$dir/compare-tools.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ "$(stat -f -c %T "$work")" = tmpfs ]; then direct=0; read_mode=read-buffered; else direct=1; read_mode=read-direct; fi
dd_iflag=(); fio_read=(); ior_read=()
if [ $direct = 1 ]; then dd_iflag=(iflag=direct); fio_read=(--direct=1); ior_read=(--posix.odirect); fi

rate_dd() { sed -n 's/^\([0-9]*\) bytes.* copied, \([0-9.e+-]*\) s.*/\1 \2/p' | tail -1 | awk '{printf "%.3f\n", $1 / $2 / 1e9}'; }
rate_fio() { python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print("%.3f" % ((j["write"]["bw_bytes"] + j["read"]["bw_bytes"]) / 1e9))'; }
rate_simfs() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); p=[p for p in r["phases"] if p["op"]==sys.argv[2]][0]; print("%.3f" % (p["sum_of_ranks_Bps" if r["tool"]=="dd" else "bandwidth_Bps"] / 1e9))' "$@"; }
fio_run() { "${pin[@]}" fio --name=w --directory="$work" --bs=1m --size=1g --ioengine=sync --fallocate=none --iomem=mmap --output-format=json "$@" | rate_fio; }
simfs_run() { "${pin[@]}" "$simfs" measure --dir "$work" --json "$work/s.json" -- "$@" >/dev/null; }

# On the development VM the first of two back-to-back writes is several times slower than
# the second, whichever tool runs first (0.23-0.46 against 1.3 GB/s with dd and the runner
# swapped), so the order alternates: odd rounds run the real tool first, even rounds the
# runner.  Compare medians over an even number of rounds.
dd_real() {
    echo "dd write-fsync $("${pin[@]}" dd if=/dev/zero of="$work/dd" bs=1M count=1024 conv=fsync 2>&1 | rate_dd)"
    echo "dd $read_mode $("${pin[@]}" dd if="$work/dd" of=/dev/null bs=1M count=1024 "${dd_iflag[@]}" 2>&1 | rate_dd)"
    rm -f "$work/dd"
}
dd_simfs() {
    simfs_run dd if=/dev/zero of=dd bs=1M count=1024 conv=fsync && echo "simfs-dd write-fsync $(rate_simfs "$work/s.json" write)"
    simfs_run dd if=dd of=/dev/null bs=1M count=1024 "${dd_iflag[@]}" && echo "simfs-dd $read_mode $(rate_simfs "$work/s.json" read)"
}
fio_real() {
    echo "fio write-fsync $(fio_run --rw=write --end_fsync=1)"
    echo "fio $read_mode $(fio_run --rw=read "${fio_read[@]}")"
    rm -f "$work"/w.*
    if [ $direct = 1 ]; then
        echo "fio write-direct $(fio_run --rw=write --direct=1)"
        rm -f "$work"/w.*
    fi
}
fio_simfs() {
    simfs_run ior -a POSIX -F -t 1m -b 1g -w -e && echo "simfs-ior write-fsync $(rate_simfs "$work/s.json" write)"
    simfs_run ior -a POSIX -F -t 1m -b 1g -r "${ior_read[@]}" && echo "simfs-ior $read_mode $(rate_simfs "$work/s.json" read)"
    if [ $direct = 1 ]; then
        simfs_run ior -a POSIX -F -t 1m -b 1g -w --posix.odirect && echo "simfs-ior write-direct $(rate_simfs "$work/s.json" write)"
    fi
}

out="$work/lines"
for round in $(seq "$rounds"); do
    if [ $((round % 2)) = 1 ]; then
        { dd_real; dd_simfs; fio_real; fio_simfs; }
    else
        { dd_simfs; dd_real; fio_simfs; fio_real; }
    fi | sed "s/^/$round /" | tee -a "$out"
done
python3 "$here/compare_summary.py" "$out"
