#!/usr/bin/env bash
# Makes the many-CPU corpus of traces/kernels/ with `cidscope vm` (CID probes on), one VM at a
# time, and prints one line per capture: FILE KERNEL CPUS WORKLOAD agreed/checked GAPS WALL_S.
#
#   scripts/kernel-corpus.sh OUTDIR KERNELS CPUS WORKLOADS [DURATION]
#     KERNELS    comma-separated series for scripts/kernels.sh (6.12,6.18,7) or `seed000`
#     CPUS       comma-separated vCPU counts (4,8,16,32,64)
#     WORKLOADS  comma-separated `cidscope vm` workloads; NAME:THREADS sets --threads;
#                `nohz` is `spinner` with nohz_full=1-(CPUS-1) on the guest command line
#     DURATION   of each workload (default 0.5s)
#
# Each capture is OUTDIR/k<release>-c<cpus>-<workload>.ftrace.txt (the release without Debian's
# +debNN-cloud-amd64 suffix); its `# cidscope-vm:` header names the kernel, HZ and vCPUs.
# Environment: CIDSCOPE (the binary, default target/release/cidscope), CIDSCOPE_VM_FLAGS (more
# flags for every run, e.g. --no-probes).
set -u -o pipefail
[ $# -ge 4 ] || { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out=$1; kernels=$2; cpus_list=$3; works=$4; dur=${5:-0.5s}
here=$(cd "$(dirname "$0")" && pwd)
bin=${CIDSCOPE:-$here/../target/release/cidscope}
[ -x "$bin" ] || { echo "kernel-corpus.sh: no $bin (cargo build --release)" >&2; exit 1; }
mkdir -p "$out"

images() {
	local k=$1
	if [ "$k" = seed000 ]; then
		"$here/kernels.sh" seed000
	else
		"$here/kernels.sh" fetch "$k"
	fi
}

IFS=, read -r -a ks <<<"$kernels"
IFS=, read -r -a cs <<<"$cpus_list"
IFS=, read -r -a ws <<<"$works"
for k in "${ks[@]}"; do
	line=$(images "$k" | head -1) || { echo "kernel-corpus.sh: no kernel for $k" >&2; continue; }
	release=${line%% *}
	image=$(awk '{print $2}' <<<"$line")
	short=${release%%+deb*}
	for n in "${cs[@]}"; do
		for w in "${ws[@]}"; do
			name=${w%%:*}
			flags=()
			[[ $w == *:* ]] && flags+=(--threads "${w#*:}")
			workload=$name
			if [ "$name" = nohz ]; then
				workload=spinner
				flags+=(--append "nohz_full=1-$((n - 1))")
			fi
			f=$out/k$short-c$n-$name.ftrace.txt
			start=$(date +%s.%N)
			# shellcheck disable=SC2086
			nice -n 5 "$bin" vm --kernel "$image" --cpus "$n" --workload "$workload" \
				--duration "$dur" --accel tcg --record "$f" --json "${flags[@]}" \
				${CIDSCOPE_VM_FLAGS:-} >"$f.json" 2>"$f.log"
			rc=$?
			wall=$(echo "$(date +%s.%N) - $start" | bc)
			res=$(python3 - "$f.json" <<'PY'
import json, sys
try:
    m = json.load(open(sys.argv[1]))["model_agreement"]
    print(f"{m['agreed']}/{m['checked']} {len(m.get('trace_gaps', []))}")
except Exception as e:
    print(f"- - ({e.__class__.__name__})")
PY
)
			printf '%s %s %s %s %s %.1f rc=%s\n' "$(basename "$f")" "$release" "$n" "$w" "$res" "$wall" "$rc"
		done
	done
done
