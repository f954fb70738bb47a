#!/usr/bin/env bash
# fresh-sweep.sh -- boot random kernels at random vCPU counts with random workloads, capture,
# and tabulate what the models predict (plain replay) and agree with (with inferred steps).
#
#   scripts/fresh-sweep.sh OUTDIR BOOTS [SEED]
#
# Each boot draws, from SEED (default: the time), a kernel (Debian 6.12, 6.18, 7.x and the
# seed-000 kernel, from scripts/kernels.sh), a vCPU count from 3 to 64 (odd counts included), a
# workload and whether the CID probes are defined:
#   - `cidscope vm` with one of its workloads (workers, hogs, churn, forks, exec, migrate,
#     affinity, spinner, periodic, burst), with or without --no-probes;
#   - or a C workload of traces/mcwork.c (workers, hogs, churn, migrate, forks, spin1) as the
#     init of a busybox guest that captures with tracefs (the events of capture-vm.sh), the
#     probes defined by `cidscope probes` or not.
# Captures go to OUTDIR/<n>-k<release>-c<cpus>-<source>-<workload>[-plain].ftrace.txt; the
# table (OUTDIR/sweep.tsv, also on stdout) has one row per boot: kernel, vCPUs, source,
# workload, probes, events, updates checked, predicted (the plain replay), agreed (with the
# inferred steps), inferred steps, invariant breaks (`--check-invariants`), HZ and its source,
# probe checks, wall seconds. `cidscope stats` is given the kernel's release, CONFIG_HZ and
# CONFIG_RSEQ_CID_SCAN_BATCH where it has one (what a user who booted it knows); a `cidscope vm`
# capture names them itself.
#
# One VM at a time, niced. Needs qemu-system-x86, gcc, cpio and busybox-static (mcwork guests).
# Environment: CIDSCOPE (the binary, default target/release/cidscope), SWEEP_KERNELS (default
# 6.12,6.18,7,seed000), SWEEP_CPUS (a list to draw from instead of 3-64), SWEEP_SOURCES
# (vm,mcwork), SWEEP_WORKLOADS (comma list to draw from), SWEEP_PROBES (yes,no).
set -u -o pipefail
[ $# -ge 2 ] || { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1; boots=$2; seed=${3:-$(date +%s)}
here=$(cd "$(dirname "$0")" && pwd)
bin=${CIDSCOPE:-$here/../target/release/cidscope}
[ -x "$bin" ] || { echo "fresh-sweep.sh: no $bin (cargo build --release)" >&2; exit 1; }
mkdir -p "$out"
RANDOM=$seed
echo "fresh-sweep: seed $seed" >&2

IFS=, read -r -a kernels <<<"${SWEEP_KERNELS:-6.12,6.18,7,seed000}"
IFS=, read -r -a sources <<<"${SWEEP_SOURCES:-vm,mcwork}"
IFS=, read -r -a probes_choice <<<"${SWEEP_PROBES:-yes,no}"
vm_works=(workers hogs churn forks exec migrate affinity spinner periodic burst)
mc_works=(workers hogs churn migrate forks spin1)
pick() { local a=("$@"); echo "${a[RANDOM % ${#a[@]}]}"; }
cpus_pick() {
	if [ -n "${SWEEP_CPUS:-}" ]; then
		local c
		IFS=, read -r -a c <<<"$SWEEP_CPUS"
		pick "${c[@]}"
	else
		echo $((3 + RANDOM % 62))
	fi
}

# kernel series -> "release image config"
image() {
	if [ "$1" = seed000 ]; then "$here/kernels.sh" seed000; else "$here/kernels.sh" fetch "$1"; fi | head -1
}

# a static mcwork and a busybox guest root, built once
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mc_root() {
	[ -d "$work/root" ] && return 0
	command -v busybox >/dev/null || { echo "fresh-sweep.sh: busybox-static is needed for mcwork guests" >&2; return 1; }
	mkdir -p "$work/root/"{bin,proc,sys,dev,tmp}
	cp "$(command -v busybox)" "$work/root/bin/"
	for a in sh mount echo cat poweroff sleep tr sed grep; do ln -sf busybox "$work/root/bin/$a"; done
	gcc -O2 -static -pthread -o "$work/root/bin/mcwork" "$here/../traces/mcwork.c" || return 1
	"$bin" probes >"$work/root/bin/cid-probes" && chmod +x "$work/root/bin/cid-probes"
	cat >"$work/root/init" <<'INIT'
#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
T=/sys/kernel/tracing
mount -t tracefs nodev $T
W=$(sed 's/.*work=\([^ ]*\).*/\1/' /proc/cmdline)
P=$(sed 's/.*probes=\([^ ]*\).*/\1/' /proc/cmdline)
# (40 MB per CPU, within 400 MB in all: at 55 vCPUs a 40 MB request left CPUs with buffers that
# overwrote the capture's first events; the guest has 1 GB + 16 MB per vCPU)
N=$(grep -c ^processor /proc/cpuinfo)
KB=$((400000 / N)); [ $KB -gt 40000 ] && KB=40000
echo $KB > $T/buffer_size_kb
echo "buffer_size_kb $(cat $T/buffer_size_kb) per CPU, $N CPUs" > /dev/hvc0
echo 1 > $T/options/record-tgid
for e in rseq:rseq_update sched:sched_switch sched:sched_migrate_task sched:sched_process_fork sched:sched_process_exec sched:sched_process_exit task:task_newtask sched:sched_wakeup_new timer:tick_stop timer:hrtimer_expire_entry sched:sched_wake_idle_without_ipi; do echo $e >> $T/set_event; done
echo 'function.function == tick_nohz_handler' > $T/events/timer/hrtimer_expire_entry/filter 2>/dev/null || echo 0 > $T/events/timer/hrtimer_expire_entry/enable
[ "$P" = yes ] && TRACEFS=$T /bin/cid-probes > /dev/hvc0 2>&1
echo > $T/trace
echo 1 > $T/tracing_on
sleep 0.05
/bin/mcwork $(echo $W | tr , ' ')
sleep 0.2
echo 0 > $T/tracing_on
echo "=====BEGIN=====" > /dev/hvc0
cat $T/trace > /dev/hvc0
echo "=====END=====" > /dev/hvc0
poweroff -f
INIT
	chmod +x "$work/root/init"
	(cd "$work/root" && find . | cpio -o -H newc 2>/dev/null | gzip) >"$work/initrd.gz"
}

# mcwork arguments for a workload at n vCPUs (about a second of work)
mc_args() {
	local w=$1 n=$2
	case $w in
	workers) echo "workers,$n,300,200,0.5" ;;
	hogs) echo "hogs,0.5,$((n + n / 4))" ;;
	churn) echo "churn,0.5,$(((n + 1) / 2))" ;;
	migrate) echo "migrate,0.5" ;;
	forks) echo "forks,0.5,$(((n + 3) / 4))" ;;
	spin1) echo "spin1,0.5" ;;
	esac
}

table=$out/sweep.tsv
[ -s "$table" ] || printf 'boot\tkernel\tcpus\tsource\tworkload\tprobes\tevents\tchecked\tpredicted\tagreed\tsteps\tbreaks\thz\thz_source\tprobe_checks\twall_s\tfile\n' | tee "$table"
for ((b = 1; b <= boots; b++)); do
	k=$(pick "${kernels[@]}")
	line=$(image "$k") || { echo "fresh-sweep.sh: no kernel $k" >&2; continue; }
	release=${line%% *}
	img=$(awk '{print $2}' <<<"$line")
	cfg=$(awk '{print $3}' <<<"$line")
	hz=$(sed -n 's/^CONFIG_HZ=\([0-9]*\)$/\1/p' "$cfg" 2>/dev/null | head -1)
	# (the seed-000 series' option: such a kernel runs resume-batch; a vm capture names it)
	batch=$(sed -n 's/^CONFIG_RSEQ_CID_SCAN_BATCH=\([0-9]*\)$/\1/p' "$cfg" 2>/dev/null | head -1)
	n=$(cpus_pick)
	src=$(pick "${sources[@]}")
	pr=$(pick "${probes_choice[@]}")
	short=${release%%+deb*}
	tag=$(printf '%03d' "$b")
	start=$(date +%s.%N)
	if [ "$src" = vm ]; then
		if [ -n "${SWEEP_WORKLOADS:-}" ]; then w=$(pick $(tr , ' ' <<<"$SWEEP_WORKLOADS")); else w=$(pick "${vm_works[@]}"); fi
		f=$out/$tag-k$short-c$n-vm-$w$([ "$pr" = no ] && echo -plain).ftrace.txt
		flags=()
		[ "$pr" = no ] && flags+=(--no-probes)
		nice -n 5 "$bin" vm --kernel "$img" --cpus "$n" --workload "$w" --duration 1s \
			--accel tcg --record "$f" --json "${flags[@]}" >"$f.json" 2>"$f.log" || {
			echo "fresh-sweep.sh: boot $b ($release, $n vCPUs, $w) failed: $(tail -1 "$f.log")" >&2
			continue
		}
		args=()
	else
		if [ -n "${SWEEP_WORKLOADS:-}" ]; then w=$(pick $(tr , ' ' <<<"$SWEEP_WORKLOADS")); else w=$(pick "${mc_works[@]}"); fi
		mc_root || continue
		f=$out/$tag-k$short-c$n-mcwork-$w$([ "$pr" = no ] && echo -plain).ftrace.txt
		raw=$work/out.txt
		rm -f "$raw"
		timeout 1200 nice -n 5 qemu-system-x86_64 -accel tcg,thread=single -cpu max -smp "$n" \
			-m $((1024 + 16 * n)) -kernel "$img" -initrd "$work/initrd.gz" \
			-append "console=ttyS0 quiet panic=-1 work=$(mc_args "$w" "$n") probes=$pr" \
			-nographic -no-reboot -device virtio-serial-pci -chardev file,id=o,path="$raw" \
			-device virtconsole,chardev=o >"$f.log" 2>&1
		sed -n '/=====BEGIN=====/,/=====END=====/p' "$raw" | sed '1d;$d' | tr -d '\r' >"$f"
		[ -s "$f" ] || { echo "fresh-sweep.sh: boot $b ($release, $n vCPUs, mcwork $w) captured nothing" >&2; continue; }
		args=(--kernel-version "$release")
		[ -n "$hz" ] && args+=(--hz "$hz")
		[ -n "$batch" ] && args+=(--batch "$batch")
	fi
	wall=$(echo "$(date +%s.%N) - $start" | bc)
	"$bin" stats --json --check-invariants "${args[@]}" "$f" >"$f.stats.json" 2>"$f.stats.log" || {
		echo "fresh-sweep.sh: stats of $f failed: $(tail -1 "$f.stats.log")" >&2
		continue
	}
	python3 - "$f.stats.json" "$b" "$short" "$n" "$src" "$w" "$pr" "$wall" "$f" <<'PY' | tee -a "$table"
import json, sys
s = json.load(open(sys.argv[1]))
b, k, n, src, w, pr, wall, f = sys.argv[2:]
m = s.get("model_agreement") or {}
fresh = m.get("fresh") or {}
pf = m.get("predicted_fresh") or {}
pc = m.get("probe_checks") or {}
model = s.get("model") or {}
hs = m.get("hz_source", "")
print("\t".join(map(str, [
    b, k, n, src, w, pr, s.get("events", 0), fresh.get("checked", 0), pf.get("agreed", 0),
    fresh.get("agreed", 0), len(m.get("inferred_steps") or []), model.get("violations", 0),
    m.get("hz", ""), hs.split(" ")[0].rstrip(":"),
    f"{pc.get('matched', 0)}/{pc.get('checked', 0)}" + (" (nothing compared)" if pc.get("checked", 0) == 0 and pc.get("probe_events", 0) else ""),
    f"{float(wall):.1f}", f.split("/")[-1],
])))
PY
done
