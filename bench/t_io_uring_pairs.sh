#!/usr/bin/env bash
# fio's t/io_uring against `hiops run` on one device, alternated in rounds:
#   bash bench/t_io_uring_pairs.sh T_IO_URING HIOPS DEVICE [ROUNDS] [-- HIOPS FLAGS]
# t/io_uring runs -d32 -s8 -c8 -p0 -B0 -F0 for 4 s (the mean of its last 3
# one-second lines); hiops 4 KiB random O_DIRECT reads at iodepth 32 for 3 s
# after a 1 s ramp, with the extra flags given. Prints each round's IOPS,
# hiops' context switches per I/O (whether reads went to io-wq) and the
# ratio, then the median ratio. Build t/io_uring from fio's source
# (`./configure && make t/io_uring`); write the device whole first.
set -euo pipefail
t=$1 hiops=$2 dev=$3 rounds=${4:-5}
shift $(($# < 4 ? $# : 4))
[ "${1:-}" = "--" ] && shift
ratios=()
for r in $(seq 1 "$rounds"); do
  ti=$("$t" -d32 -s8 -c8 -p0 -B0 -F0 -n1 -r4 "$dev" 2>&1 |
    grep -oP '^IOPS=\K[0-9.]+K' | tail -3 | tr -d K | awk '{s += $1} END {printf "%d", s / NR * 1000}')
  # hiops' IOPS and its job thread's context switches per I/O: about 0.1
  # or less where the device completes reads inside the submitting call,
  # more where io_uring hands each read to an io-wq worker whose
  # completions wake the job thread.
  read -r hi ctx < <("$hiops" run --filename="$dev" --ioengine=io_uring --iodepth=32 --direct=1 \
    --rw=randread --bs=4k --runtime=3 --ramp_time=1 --time_based --name=pairs \
    --output-format=json "$@" 2>/dev/null |
    python3 -c "import json,sys; j = json.load(sys.stdin)['jobs'][0]; r = j['read']
print(int(r['iops']), f\"{j['ctx'] / max(r['total_ios'], 1):.3f}\")")
  ratio=$(python3 -c "print(f'{$hi / $ti:.3f}')")
  ratios+=("$ratio")
  echo "round $r: t/io_uring $ti IOPS, hiops $hi IOPS ($ctx context switches per I/O), ratio $ratio"
done
python3 -c "import statistics,sys; print('median ratio', statistics.median(map(float, sys.argv[1:])))" "${ratios[@]}"
