#!/usr/bin/env bash
# Runs the measurements behind BENCHMARKS.md's tables, one after the other,
# with the commands the tables quote; each step's output goes to
# $OUT/STEP.log (OUT defaults to /var/tmp/standing) with the date, the
# commit and how long it took.
#
#   bash bench/standing.sh redis rocksdb fig10   # the steps named
#   bash bench/standing.sh --list                # every step and its command
#
# Needs a release build (cargo build --release), a quiet machine (nothing
# else building or running: the tables compare tools run in turn), fio,
# redis-server and redis-benchmark (apt-get install redis-server), db_bench
# (apt-get install rocksdb-tools); Open MPI and libclang for the mpi step
# (bash .ci/setup); root for the steps over zram and loop devices, which
# bench/with_devices.sh sets up and removes. Writes only files under
# /var/tmp (the store files of the kv steps, the data files of the fio
# steps) and the zram and loop devices it creates.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/var/tmp/standing}
PY=/usr/bin/python3
HIOPS=target/release/hiops
PEERS=bench/peers/target/release/hiops-peers    # cargo build --release in bench/peers
T_IO_URING=${T_IO_URING:-/var/tmp/fio-src/t/io_uring}   # fio's source: ./configure && make t/io_uring
# pread threads, coop threads and tasks, 128 readers each (bench/alternate.py specs).
READERS128="\"pread=$HIOPS run --strategy=pread --numjobs=128 --direct=1\" \"coop=$HIOPS run --strategy=coop --numjobs=128 --direct=1\" \"tasks=$HIOPS run --strategy=coop --tasks=128 --direct=1\""

declare -A STEP=(
  [fiojobs]="$PY bench/fio_jobs.py --pairs 5 --runtime 3"
  [replay]="$PY bench/replay_vs_fio.py --readers 16 --ios 20000 --rounds 5"
  [strategies]="$PY bench/path_strategies.py --threads 128 --rounds 5"
  [strategieszram]="$PY bench/path_strategies.py --threads 128 --rounds 5 --zram"
  [redis]="$PY bench/kv_vs_redis.py --pairs 5 --workers 1 --clients 50 --requests 100000"
  [idle]="$PY bench/kv_vs_redis.py --idle 5000"
  [clients]="$PY bench/kv_clients_scaling.py --store /var/tmp/hk/kv.dat --records 200000 --pairs 7"
  [rocksdb]="$PY bench/kv_vs_rocksdb.py --records 200000 --threads 32 --pairs 3 --time 10"
  [raw]="$PY bench/kv_vs_raw.py --pairs 5 --runtime 4"
  [fig10]="$HIOPS kv fig10 --path /var/tmp/hk/kv.dat --size 2g --records 200000 --time 3s --rounds 2 --clients 1,16,128,256,512,1024 --cache-size 0 -o /var/tmp/hk/f10 --restart"
  [cachesweep]="$HIOPS kv cache-sweep --path /var/tmp/hk/cs-flash.dat --time 5s -o /var/tmp/hk/cs"
  [raw128]="$PY bench/kv_vs_raw.py --pairs 5 --runtime 4 --clients 128 --tasks --dir /var/tmp"
  [vsfio]="$PY bench/vs_fio.py --pairs 5 --runtime 4 --dir /var/tmp --points disk-psync-qd1,disk-io_uring-qd32-fixed,null-qd32,zram-psync-qd1"
  [mpi]="CARGO_TARGET_DIR=target/mpi cargo build -q --release --features mpi -p hiops && HIOPS=target/mpi/release/hiops $PY bench/mpi_vs_fio.py --pairs 5 --runtime 5 --ranks 1,2,4 --size 1g --dir /var/tmp"
  [inline]="bash bench/with_devices.sh '$PY bench/alternate.py --rounds 5 --file \$LOOP $READERS128 && $PY bench/alternate.py --rounds 5 --file \$ZRAM:/var/tmp/hb/path.dat $READERS128'"
  [fig10dev]="FILL=blank bash bench/with_devices.sh '$HIOPS kv fig10 --path /var/tmp/hk/kv1.dat --path \$ZRAM --path \$LOOP --allow-write-device --size 512m --strategies pread,tasks --clients 32,128 --records 100000 --time 3s --cache-size 0 --rounds 2 -o /var/tmp/hk/f10dev --restart'"
  [profcost]="bash bench/with_devices.sh '$PY bench/alternate.py --rounds 5 --file \$ZRAM \"off=$HIOPS run --ioengine=io_uring --iodepth=1 --direct=1\" \"profile=$HIOPS run --ioengine=io_uring --iodepth=1 --direct=1 --profile\" && $PY bench/alternate.py --rounds 5 \"off=$HIOPS run --ioengine=psync --iodepth=1 --direct=1\" \"profile=$HIOPS run --ioengine=psync --iodepth=1 --direct=1 --profile\"'"
  [agreement]="$PY bench/profile_agreement.py --file /var/tmp/hb/path.dat --rounds 6 --build today=$HIOPS"
  [experiment]="$HIOPS experiment hiops --zram --loop --dir /var/tmp/hk/exp --restart --no-progress"
  [coopshared]="$PY bench/alternate.py --rounds 5 --file /var/tmp/hb/path.dat \"pread=$HIOPS run --strategy=pread --numjobs=128 --direct=1\" \"shared=$HIOPS run --strategy=coop-shared --numjobs=128 --direct=1\" && $PY bench/alternate.py --rounds 5 --file /var/tmp/hb/path.dat \"pread=$HIOPS run --strategy=pread --numjobs=128 --direct=1 --bs=512\" \"shared=$HIOPS run --strategy=coop-shared --numjobs=128 --direct=1 --bs=512\""
  [fig8]="$PY bench/path_strategies.py --threads 128 --rounds 5 --runtime 3 --strategies pread,coop:issue:rings=1,coop:lazy:rings=1,coop:all:rings=1,coop"
  [nullengine]="$PY bench/alternate.py --file '' --rounds 5 --runtime 3 --ramp 1 \"hiops=$HIOPS run --ioengine=null --iodepth=1 --size=1g\" \"hiops-gtod=$HIOPS run --ioengine=null --iodepth=1 --size=1g --gtod_reduce=1\" \"fio=fio --ioengine=null --iodepth=1 --size=1g\" \"fio-gtod=fio --ioengine=null --iodepth=1 --size=1g --gtod_reduce=1\""
  [zramfio]="SIZE=2G bash bench/with_devices.sh '$PY bench/alternate.py --file \$ZRAM --rounds 5 --runtime 3 --ramp 1 \"hiops=$HIOPS run --ioengine=io_uring --iodepth=32 --direct=1\" \"fio=fio --ioengine=io_uring --iodepth=32 --direct=1\" && bash bench/t_io_uring_pairs.sh $T_IO_URING $HIOPS \$ZRAM 5 && bash bench/t_io_uring_pairs.sh $T_IO_URING $HIOPS \$ZRAM 5 -- --gtod_reduce=1'"
  [queuefull]="$PY bench/vs_fio.py --pairs 5 --runtime 4 --dir /var/tmp --points disk-io_uring-qd32,disk-io_uring-qd32-reap1,disk-io_uring-qd128,disk-io_uring-qd128-reap1,disk-io_uring-qd512,disk-libaio-qd32,disk-libaio-qd128,disk-libaio-qd512"
  [twocpus]="$PY bench/alternate.py --file '' --rounds 5 --runtime 3 --ramp 1 \"one=$HIOPS run --ioengine=null --iodepth=1 --size=1g\" \"two=$HIOPS run --ioengine=null --iodepth=1 --size=1g --numjobs=2 --group_reporting\" && bash bench/with_devices.sh '$PY bench/alternate.py --file \$ZRAM --rounds 5 --runtime 3 --ramp 1 \"psync1=$HIOPS run --ioengine=psync --direct=1\" \"psync2=$HIOPS run --ioengine=psync --direct=1 --numjobs=2 --group_reporting\" \"uring1=$HIOPS run --ioengine=io_uring --iodepth=32 --direct=1\" \"uring2=$HIOPS run --ioengine=io_uring --iodepth=32 --direct=1 --numjobs=2 --group_reporting\"'"
  [monoio]="$PY bench/alternate.py --file /var/tmp/hb/path.dat --rounds 5 --runtime 4 --ramp 1 \"tasks=$HIOPS run --strategy=coop --tasks=128 --direct=1\" \"monoio=$PEERS monoio 128\" \"compio=$PEERS compio 128\" \"tokio-uring=$PEERS tokio-uring 128\" \"glommio=$PEERS glommio 128\""
  [peers]="$PY bench/peers.py --readers 128 --rounds 5 --seconds 5 --file /var/tmp/hb/path.dat"
  [monoiouser]="$PY bench/peers/user_clocks.py --file /var/tmp/hb/path.dat --rounds 5 --runtime 5 \"tasks=$HIOPS run --strategy=coop --tasks=128\" \"monoio=$PEERS monoio 128\" \"tasks1=$HIOPS run --strategy=coop --tasks=1\" \"monoio1=$PEERS monoio 1\""
  [monoiosamples]="$PY bench/peers/user_samples.py --file /var/tmp/hb/path.dat --rounds 5 \"tasks=$HIOPS run --strategy=coop --tasks=128\" \"monoio=$PEERS monoio 128\""
  [monoiozram]="SIZE=512M bash bench/with_devices.sh '$PY bench/peers/user_clocks.py --file \$ZRAM --rounds 5 --runtime 4 \"tasks=$HIOPS run --strategy=coop --tasks=128\" \"monoio=$PEERS monoio 128\"'"
  [redistls]="$PY bench/kv_vs_redis.py --pairs 5 --workers 1 --clients 50 --requests 100000 --tls"
  [index]="cargo run -q --release -p hiops-kv --example index_bytes_per_key"
  [iozone]="bash bench/with_devices.sh '$HIOPS iozone disk=/var/tmp/hb/iozdisk zram=\$ZRAM --allow-write --dir /var/tmp/hb/ioz'"
)

if [ "${1:-}" = "--list" ] || [ $# -eq 0 ]; then
  for name in "${!STEP[@]}"; do printf '%-11s %s\n' "$name" "${STEP[$name]}"; done | sort
  [ $# -eq 0 ] && echo "bench/standing.sh: name the steps to run (above)" >&2
  exit 0
fi
[ -x "$HIOPS" ] || { echo "bench/standing.sh: no $HIOPS: cargo build --release first" >&2; exit 2; }
mkdir -p "$OUT" /var/tmp/hk /var/tmp/hb
for name in "$@"; do
  [ -n "${STEP[$name]:-}" ] || { echo "bench/standing.sh: no step $name (see --list)" >&2; exit 2; }
done
for name in "$@"; do
  log=$OUT/$name.log
  start=$(date +%s)
  echo "== $name $(date -u +%FT%TZ) $(git rev-parse --short HEAD): ${STEP[$name]}" | tee "$log"
  [ "$name" = fig10 ] && rm -rf /var/tmp/hk/f10
  bash -c "${STEP[$name]}" >> "$log" 2>&1
  echo "== rc=$? in $(( $(date +%s) - start )) s" | tee -a "$log"
done
