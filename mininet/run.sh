#!/usr/bin/env bash
# make mininet: the p4ctl testbed on BMv2 in Mininet (mininet/README.md);
# MININET_SWITCH=embedded runs it on p4ctl's embedded switch instead
# (`p4ctl switch -i PORT@INTF ...`, the Go model of the same program).
#
# Needs root, Mininet (Debian package, /usr/bin/python3), BMv2's
# simple_switch_grpc (P4CTL_BMV2 or PATH, e.g. after `source /opt/p4/env.sh`;
# not for MININET_SWITCH=embedded), ethtool (BMv2 only: the embedded switch
# completes offloaded checksums itself) and the p4c outputs in
# p4src/build/v1model (make p4; the embedded switch accepts p4c's P4Info
# and ignores the BMv2 JSON). Without them it says what is missing in one
# line and exits 1 having started nothing.
#
# The switch is programmed by the product: `p4ctl push pipeline`, then the
# daemon `p4ctl run --replay` for the run's duration. testbedctl does only
# what the product does not: topology, pool sizing, readiness, the
# register check and the summary.
#
# Knobs (environment):
#   MININET_DURATION  loadgen duration per client (default 120s)
#   MININET_RATE      requests/s per client (default 50)
#   MININET_HOUR      first carbon hour of the replay (default 2022-01-10T00:00:00Z)
#   MININET_HOURS     carbon hours replayed during the load (default 4: one per 30 s; 0 = stay in MININET_HOUR)
#   MININET_SCALE     latency scale: emulated delay = P95 × scale (default 1)
#   MININET_EXEC_MIX  loadgen exec-class mix (default 0:100)
#   MININET_DELAY     auto | netem | serve (how delays are applied; default auto)
#   MININET_OUT       output directory (default out/mininet)
#   MININET_SWITCH    bmv2 (default: simple_switch_grpc) | embedded (p4ctl switch) | xdp (p4ctl switch --datapath xdp)
#   MININET_P4INFO, MININET_BMV2_JSON  override the p4c outputs (default p4src/build/v1model/p4ctl.*)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${MININET_DURATION:-120s}
RATE=${MININET_RATE:-50}
HOUR=${MININET_HOUR:-2022-01-10T00:00:00Z}
HOURS=${MININET_HOURS:-4}
SCALE=${MININET_SCALE:-1}
EXEC_MIX=${MININET_EXEC_MIX:-0:100}
DELAY=${MININET_DELAY:-auto}
CONFIG=${MININET_CONFIG:-mininet/testbed.yaml}
OUT=${MININET_OUT:-out/mininet}
P4INFO=${MININET_P4INFO:-p4src/build/v1model/p4ctl.p4info.txtpb}
BMV2_JSON=${MININET_BMV2_JSON:-p4src/build/v1model/p4ctl.json}
SWITCH=${MININET_SWITCH:-bmv2}

BMV2=${P4CTL_BMV2:-$(command -v simple_switch_grpc || true)}
bmv2_hint="set P4CTL_BMV2 or put it on PATH"
[[ -f /opt/p4/env.sh ]] && bmv2_hint="source /opt/p4/env.sh, or set P4CTL_BMV2"

missing=()
[[ $SWITCH == bmv2 || $SWITCH == embedded || $SWITCH == xdp ]] || missing+=("a switch MININET_SWITCH=bmv2|embedded|xdp (got '$SWITCH')")
[[ $(id -u) == 0 ]] || missing+=("root")
/usr/bin/python3 -c 'import mininet.net' 2>/dev/null || missing+=("Mininet for /usr/bin/python3 (apt-get install mininet)")
if [[ $SWITCH == bmv2 ]]; then
  [[ -n $BMV2 && -x $BMV2 ]] || missing+=("BMv2 simple_switch_grpc ($bmv2_hint; or MININET_SWITCH=embedded)")
fi
if [[ $SWITCH == bmv2 || $SWITCH == xdp ]]; then
  command -v ethtool >/dev/null || missing+=("ethtool")
fi
[[ -f $P4INFO && -f $BMV2_JSON ]] || missing+=("p4c outputs $BMV2_JSON and $P4INFO (make p4)")
command -v go >/dev/null || missing+=("go")
[[ $HOURS =~ ^[0-9]+$ ]] || missing+=("a whole number of hours in MININET_HOURS (got '$HOURS')")
if ((${#missing[@]})); then
  msg=$(printf '%s; ' "${missing[@]}")
  echo "make mininet: cannot run, missing: ${msg%; }" >&2
  exit 1
fi

mkdir -p "$OUT/bin"
PIDS=$OUT/pids

# Backstop cleanup: stop, by pid, anything a run recorded that is still
# alive (the topology script tears down itself; this covers it being
# killed). Only processes whose command line is ours are touched.
cleanup() {
  [[ -f $PIDS ]] || return 0
  local pid cmd
  while read -r pid; do
    [[ -n $pid && -r /proc/$pid/cmdline ]] || continue
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
    case $cmd in
      *mininet:* | *simple_switch_grpc* | *"$OUT/bin/p4ctl"*) kill -TERM "$pid" 2>/dev/null || true ;;
    esac
  done <"$PIDS"
  while read -r pid; do
    [[ -n $pid && -r /proc/$pid/cmdline ]] || continue
    cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
    case $cmd in
      *mininet:* | *simple_switch_grpc* | *"$OUT/bin/p4ctl"*) kill -KILL "$pid" 2>/dev/null || true ;;
    esac
  done <"$PIDS"
  rm -f "$PIDS"
}
cleanup # a previous run that was killed
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "*** building p4ctl and testbedctl"
go build -o "$OUT/bin/p4ctl" ./cmd/p4ctl
go build -o "$OUT/bin/testbedctl" ./mininet/testbedctl
rm -f "$OUT"/loadgen-*.json "$OUT"/loadgen-*.txt "$OUT"/serve-* "$OUT"/p4ctl-run.jsonl "$OUT"/summary.txt
"$OUT/bin/testbedctl" topo -config "$CONFIG" -scale "$SCALE" >"$OUT/topology.json"
# Little's law for this load: the hours replayed plus the one the last
# seconds of the load fall into.
"$OUT/bin/testbedctl" size -config "$CONFIG" -rate "$RATE" -scale "$SCALE" -exec-mix "$EXEC_MIX" \
  -hour "$HOUR" -hours $((HOURS + 1)) -o json >"$OUT/capacity.json"
"$OUT/bin/testbedctl" size -config "$CONFIG" -rate "$RATE" -scale "$SCALE" -exec-mix "$EXEC_MIX" \
  -hour "$HOUR" -hours $((HOURS + 1)) | tee "$OUT/capacity.txt"

if [[ $SWITCH == xdp ]]; then
  echo "*** starting Mininet with p4ctl's XDP switch ($OUT/bin/p4ctl switch --datapath xdp)"
elif [[ $SWITCH == embedded ]]; then
  echo "*** starting Mininet with p4ctl's embedded switch ($OUT/bin/p4ctl switch)"
  command -v ethtool >/dev/null || echo "*** (no ethtool: offloads stay on; the embedded switch completes offloaded checksums itself)"
else
  echo "*** starting Mininet with BMv2 ($BMV2)"
fi
# The topology script runs in the background so that a signal to this
# script (Ctrl-C, kill) is handled at once: it is forwarded as SIGTERM (a
# background job of a script ignores SIGINT) and the script tears the
# network down before we exit.
/usr/bin/python3 mininet/p4ctl_topo.py \
  --topology "$OUT/topology.json" --config "$CONFIG" --hour "$HOUR" --hours "$HOURS" --grace 1s \
  --switch "$SWITCH" ${BMV2:+--bmv2 "$BMV2"} --p4info "$P4INFO" --bmv2-json "$BMV2_JSON" \
  --bin "$OUT/bin" --out "$OUT" \
  --duration "$DURATION" --rate "$RATE" --exec-mix "$EXEC_MIX" --delay-mode "$DELAY" &
topo_pid=$!
interrupted=0
forward() {
  interrupted=1
  kill -TERM "$topo_pid" 2>/dev/null || true
}
trap forward INT TERM
rc=0
while kill -0 "$topo_pid" 2>/dev/null; do
  wait "$topo_pid" && rc=0 || rc=$? # a trapped signal ends wait early: wait again
done
trap 'exit 130' INT TERM
if ((interrupted)); then
  echo "make mininet: interrupted; the network was torn down" >&2
  exit 130
fi
if ((rc != 0)); then
  echo "make mininet: the testbed failed (exit $rc); see $OUT/ (nothing is left running)" >&2
  exit "$rc"
fi

echo "*** routing and carbon summary ($OUT/summary.txt)"
set +e
"$OUT/bin/testbedctl" summary -config "$CONFIG" -topology "$OUT/topology.json" \
  -daemon-log "$OUT/p4ctl-run.jsonl" -grace 1s -capacity "$OUT/capacity.json" \
  "$OUT"/loadgen-*.json >"$OUT/summary.txt"
verdict=$?
set -e
cat "$OUT/summary.txt"
exit $verdict
