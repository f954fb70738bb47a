#!/usr/bin/env bash
# The one way cidscope gets real kernels to test against (VM captures at many vCPUs).
#
#   scripts/kernels.sh fetch [SERIES...]   Debian cloud kernels; SERIES default: 6.12 6.18 7
#   scripts/kernels.sh seed000             build the kernel of seed 000 (6.18.15 + resume-batch)
#   scripts/kernels.sh seed000-base        build the same 6.18.15 with the same config, unpatched
#   scripts/kernels.sh list                what is in the cache
#
# Every command prints one line per kernel on stdout, `VERSION KERNEL_IMAGE CONFIG`, e.g.
#   6.18.15+deb13-cloud-amd64 ~/.cache/cidscope/kernels/x/linux-image-.../boot/vmlinuz-... .../config-...
# Progress and errors go to stderr; the exit status is non-zero if any requested kernel is missing.
# Commands are idempotent: what is already in the cache is reused, not fetched or built again.
#
# fetch: for each SERIES (a version prefix: 6.12, 6.18, 7, 7.2 ...) the newest
#   linux-image-SERIES*+debNN-cloud-amd64 in Debian trixie, trixie-backports and sid, downloaded with
#   apt and unpacked with dpkg-deb -x. A meta package (7.x: linux-image-* holds no files) is resolved
#   to its linux-binary-* (vmlinuz) and linux-base-* (config). The config ships beside vmlinuz
#   (/boot/config-VER or /usr/lib/modules/VER/config).
# seed000: Linux 6.18.15 (the orig tarball of Debian's source package linux=6.18.15-1~bpo13+1, checked
#   against the Sources index) with the seed-000 series applied: patches/seed000-1 (patch 1/4,
#   prev_sum_exec_runtime for RT/DL/SCX), -2 (2/4) minus its mm_cid_get hunk, -2a (that hunk
#   re-placed for 6.18.15), -3 (3/4). Every hunk must apply with no fuzz. Config: defconfig +
#   kvm_guest.config + scripts/kernel-guest.config, olddefconfig, then every fragment line is checked.
#   Built with `nice -n 19 make -j2 bzImage` (~21 CPU-minutes: ~11 min alone on 2 cores, 30 min on a
#   busy box); missing build tools are installed with apt-get. Prints `6.18.15-cidscope-seed000 .../build/arch/x86/boot/bzImage .../build/.config`.
#
# seed000-base: the tree of seed000 without the series, configured from the same fragment (less
#   CONFIG_RSEQ_CID_SCAN_BATCH, which only the patches add), LOCALVERSION -cidscope-base: the
#   kernel a patch is measured against, so that an experiment compares the patch and nothing else
#   (Debian's 6.18.15 differs from the seed000 build in its whole configuration too). Prints
#   `6.18.15-cidscope-base .../build/arch/x86/boot/bzImage .../build/.config`.
#
# apt runs on a PRIVATE sources list, lists dir and cache in the cache dir (the system's apt config is
# never touched); the mirror is the one in this machine's apt sources (/etc/apt/sources.list.d/*.sources
# `URIs:`, or `deb` lines of /etc/apt/sources.list), or $CIDSCOPE_APT_MIRROR.
#
# Environment:
#   CIDSCOPE_KERNELS          cache dir (default ${XDG_CACHE_HOME:-$HOME/.cache}/cidscope/kernels)
#   CIDSCOPE_APT_MIRROR       Debian mirror URI instead of the one in the system's apt sources
#   CIDSCOPE_KERNELS_REFRESH  1: apt-get update the private lists even if less than a day old
#   CIDSCOPE_KERNEL_JOBS      make -j for seed000 (default 2; the build always runs at nice 19)
#
# Any printed image boots as `qemu-system-x86_64 -kernel IMAGE -initrd ...` (the cloud kernels need no
# modules for a virtio console and an initramfs); on the reference host use
# `-accel tcg,thread=single -cpu max` (KVM stops in the decompressor; multi-threaded TCG sometimes
# crashes at boot).
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
C=${CIDSCOPE_KERNELS:-${XDG_CACHE_HOME:-$HOME/.cache}/cidscope/kernels}
APTDIR=$C/apt
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
SUITES="trixie trixie-backports sid"
SRC_SUITE=trixie-backports
DEFAULT_SERIES="6.12 6.18 7"

SEED_SRC_VERSION=6.18.15-1~bpo13+1
SEED_UPSTREAM=6.18.15
SEED_ORIG=linux_${SEED_UPSTREAM}.orig.tar.xz
PATCHES=$here/patches
FRAGMENT=$here/kernel-guest.config
# The one hunk of patch 2/4 whose context is gone in 6.18.15 (mm_cid_get's body changed); it is
# replaced by patches/seed000-2a-fixup-6.18.15-mm_cid_get.patch.
STALE_HUNK='@@ -3809,6 +3810,7 @@ static inline int mm_cid_get('
# Bump when the way the tree is patched or configured changes: forces a fresh tree and build.
RECIPE=seed000-recipe-1

say() { echo "kernels.sh: $*" >&2; }
die() {
	say "error: $*"
	exit 1
}
usage() {
	sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit "${1:-2}"
}
# The last lines of a log, indented, to stderr.
show_log() { tail -n "${2:-25}" "$1" 2>/dev/null | sed 's/^/    /' >&2; }
sha256() { sha256sum "$1" | cut -d' ' -f1; }

# ---------------------------------------------------------------- apt, private to the cache

# The first non-security `deb` mirror of the system's apt sources (deb822 first, then one-line).
mirror_uri() {
	if [ -n "${CIDSCOPE_APT_MIRROR:-}" ]; then
		echo "$CIDSCOPE_APT_MIRROR"
		return
	fi
	local f u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		u=$(awk '
			function flush() {
				if (!found && types ~ /(^| )deb( |$)/ && uri != "" && enabled != "no" &&
				    suites !~ /-security/ && uri !~ /security/) { print uri; found = 1 }
				types = uri = suites = enabled = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			/^[^ \t]/ {
				key = tolower($1); sub(/:$/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
				if (key == "types") types = val
				else if (key == "uris") { split(val, a, /[ \t]+/); uri = a[1] }
				else if (key == "suites") suites = val
				else if (key == "enabled") enabled = tolower(val)
			}
			END { flush() }' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		u=$(awk '$1 == "deb" {
				i = 2
				if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) !~ /-security$/ && $i !~ /security/) { print $i; exit }
			}' "$f")
		[ -n "$u" ] && { echo "$u"; return; }
	done
	return 1
}

apt_setup() {
	mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial" "$APTDIR/empty.d" ||
		die "cannot create $APTDIR"
	[ -r "$KEYRING" ] || die "$KEYRING missing (package debian-archive-keyring)"
	A=(-o "Dir::Etc::sourcelist=$APTDIR/cidscope.sources" -o "Dir::Etc::sourceparts=$APTDIR/empty.d"
		-o "Dir::Etc::preferences=$APTDIR/empty.d/none" -o "Dir::Etc::preferencesparts=$APTDIR/empty.d"
		-o "Dir::State::Lists=$APTDIR/lists" -o "Dir::Cache=$APTDIR/cache"
		-o Dir::Cache::pkgcache=pkgcache.bin -o Dir::Cache::srcpkgcache=srcpkgcache.bin
		-o Acquire::Languages=none
		-o Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false
		-o Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false)
	# Files in a root-only $HOME are not readable by _apt: download as root instead of warning.
	[ "$(id -u)" = 0 ] && A+=(-o APT::Sandbox::User=root)
	local uri
	uri=$(mirror_uri) || die "no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list (set CIDSCOPE_APT_MIRROR)"
	cat >"$APTDIR/cidscope.sources.new" <<EOF
# written by cidscope scripts/kernels.sh; used only through its -o Dir::Etc::sourcelist
Types: deb
URIs: $uri
Suites: $SUITES
Components: main
Signed-By: $KEYRING

Types: deb-src
URIs: $uri
Suites: $SRC_SUITE
Components: main
Signed-By: $KEYRING
EOF
	if cmp -s "$APTDIR/cidscope.sources.new" "$APTDIR/cidscope.sources"; then
		rm -f "$APTDIR/cidscope.sources.new"
	else
		mv "$APTDIR/cidscope.sources.new" "$APTDIR/cidscope.sources"
		rm -f "$APTDIR/updated" # another mirror: the lists must be fetched again
	fi
}

# apt-get update of the private lists, at most once a day (CIDSCOPE_KERNELS_REFRESH=1: now).
apt_update() {
	local stamp=$APTDIR/updated
	if [ -e "$stamp" ] && [ "${CIDSCOPE_KERNELS_REFRESH:-0}" != 1 ] &&
		[ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
		return 0
	fi
	say "apt-get update ($SUITES; deb-src $SRC_SUITE) into $APTDIR/lists"
	if apt-get "${A[@]}" update >"$APTDIR/update.log" 2>&1 && ! grep -q '^[WE]:' "$APTDIR/update.log"; then
		touch "$stamp"
		return 0
	fi
	if [ -e "$stamp" ]; then
		say "warning: apt-get update failed, using the lists of $(date -r "$stamp" '+%F %T'):"
		show_log "$APTDIR/update.log" 8
		return 0
	fi
	say "error: apt-get update failed ($APTDIR/update.log):"
	show_log "$APTDIR/update.log"
	return 1
}

# The .deb of NAME=VERSION in $APTDIR/debs (downloaded if absent); prints its path.
apt_download() {
	local name=$1 version=$2 deb log=$APTDIR/download.log
	mkdir -p "$APTDIR/debs"
	deb=$APTDIR/debs/${name}_${version//:/%3a}_amd64.deb
	if [ ! -s "$deb" ]; then
		if ! (cd "$APTDIR/debs" && apt-get "${A[@]}" download "$name=$version") >"$log" 2>&1 || [ ! -s "$deb" ]; then
			say "error: apt-get download $name=$version failed ($log):"
			show_log "$log" 10
			return 1
		fi
	fi
	echo "$deb"
}

# ---------------------------------------------------------------- fetch

# vmlinuz / config of kernel release REL unpacked under DIR (/boot or /usr/lib/modules/REL).
find_vmlinuz() {
	local f
	for f in "$1/boot/vmlinuz-$2" "$1/usr/lib/modules/$2/vmlinuz"; do
		[ -s "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}
find_config() {
	local f
	for f in "$1/boot/config-$2" "$1/usr/lib/modules/$2/config"; do
		[ -s "$f" ] && { echo "$f"; return 0; }
	done
	return 1
}

# Newest "NAME VERSION" of linux-image-SERIES[.N...]+debNN-cloud-amd64 in the private lists.
newest_image() {
	local re="^linux-image-${1//./\\.}(\\.[0-9]+)*\\+deb[0-9]+-cloud-amd64\$" names
	names=$(apt-cache "${A[@]}" pkgnames linux-image- 2>/dev/null | grep -E "$re")
	[ -n "$names" ] || return 1
	# madison skips names only mentioned in a Depends (no version); sort -V is close enough to
	# dpkg's order for these names and versions.
	# shellcheck disable=SC2086
	apt-cache "${A[@]}" madison $names 2>/dev/null |
		RE=$re awk -F'|' '{ gsub(/ /, "", $1); gsub(/ /, "", $2) } $1 ~ ENVIRON["RE"] && $3 ~ /Packages/ { print $1, $2 }' |
		sort -V | tail -n 1 | grep .
}

# VERSION of the Depends entry "DEP (= VERSION)" of a .deb (e.g. DEP = linux-binary-REL).
deb_dep() {
	dpkg-deb -f "$1" Depends | tr ',|' '\n\n' |
		awk -v d="$2" '$1 == d && $2 == "(=" { v = $3; sub(/\)$/, "", v); print v; exit }'
}

# Unpack kernel package NAME=VERSION (and the binary/base packages a meta package points to) into
# $C/x/NAME_VERSION; prints "REL VMLINUZ CONFIG".
fetch_one() {
	local name=$1 version=$2 rel=${1#linux-image-} dir tmp deb dep v vmlinuz config
	dir=$C/x/${name}_${version}
	if [ ! -e "$dir/.done" ]; then
		tmp=$dir.tmp.$$
		rm -rf "$tmp" && mkdir -p "$tmp" || return 1
		deb=$(apt_download "$name" "$version") || { rm -rf "$tmp"; return 1; }
		nice -n 19 dpkg-deb -x "$deb" "$tmp" || { say "error: dpkg-deb -x $deb failed"; rm -rf "$tmp"; return 1; }
		echo "$(basename "$deb")" >"$tmp/.debs"
		# A meta package: vmlinuz is in linux-binary-REL, the config in linux-base-REL.
		for dep in "linux-binary-$rel" "linux-base-$rel"; do
			case $dep in
			linux-binary-*) find_vmlinuz "$tmp" "$rel" >/dev/null && continue ;;
			linux-base-*) find_config "$tmp" "$rel" >/dev/null && continue ;;
			esac
			v=$(deb_dep "$deb" "$dep")
			[ -n "$v" ] || continue
			say "$name is a meta package: fetching $dep=$v"
			local d2
			d2=$(apt_download "$dep" "$v") || { rm -rf "$tmp"; return 1; }
			nice -n 19 dpkg-deb -x "$d2" "$tmp" || { say "error: dpkg-deb -x $d2 failed"; rm -rf "$tmp"; return 1; }
			echo "$(basename "$d2")" >>"$tmp/.debs"
		done
		if ! find_vmlinuz "$tmp" "$rel" >/dev/null; then
			say "error: $name=$version: no vmlinuz-$rel in $(tr '\n' ' ' <"$tmp/.debs")"
			rm -rf "$tmp"
			return 1
		fi
		if ! find_config "$tmp" "$rel" >/dev/null; then
			say "error: $name=$version: no config-$rel in $(tr '\n' ' ' <"$tmp/.debs")"
			rm -rf "$tmp"
			return 1
		fi
		touch "$tmp/.done"
		rm -rf "$dir" && mv "$tmp" "$dir" || return 1
		# unpacked: the .debs are not needed again
		while read -r f; do rm -f "$APTDIR/debs/$f"; done <"$dir/.debs"
	fi
	vmlinuz=$(find_vmlinuz "$dir" "$rel") && config=$(find_config "$dir" "$rel") || {
		say "error: $dir is incomplete (remove it to fetch again)"
		return 1
	}
	echo "$rel $vmlinuz $config"
}

# Newest kernel of SERIES already unpacked in the cache (when the lists cannot be had).
cached_series() {
	local re=${1//./\\.} d
	for d in "$C"/x/*/; do
		[ -e "$d/.done" ] && basename "$d"
	done | grep -E "^linux-image-${re}(\.[0-9]+)*\+deb[0-9]+-cloud-amd64_" | sort -V | tail -n 1
}

cmd_fetch() {
	local series missing=0 nv line have lists_ok=1
	[ $# -gt 0 ] || set -- $DEFAULT_SERIES
	for series in "$@"; do
		[[ $series =~ ^[0-9]+(\.[0-9]+)*$ ]] || die "fetch: '$series' is not a version prefix like 6.18 or 7"
	done
	apt_setup
	exec 8>"$APTDIR/.lock"
	flock -w 1800 8 || die "another kernels.sh holds $APTDIR/.lock"
	apt_update || lists_ok=0
	for series in "$@"; do
		if [ $lists_ok = 1 ] && nv=$(newest_image "$series"); then
			# shellcheck disable=SC2086
			if line=$(fetch_one $nv); then
				echo "$line"
				continue
			fi
			say "error: kernel $series ($nv) not fetched"
		elif [ $lists_ok = 1 ]; then
			say "error: no linux-image-$series*-cloud-amd64 in $SUITES"
		elif have=$(cached_series "$series") && [ -n "$have" ]; then
			say "warning: no apt lists; using the cached ${have%%_*}"
			line=$(fetch_one "${have%%_*}" "${have#*_}") && { echo "$line"; continue; }
		else
			say "error: kernel $series: no apt lists and nothing cached"
		fi
		missing=$((missing + 1))
	done
	[ $missing = 0 ] || die "$missing of $# requested kernels missing"
}

# ---------------------------------------------------------------- seed000

# Install what building a kernel needs, with the system's apt (the one place it is used).
need_build_deps() {
	local p miss=() sudo=()
	for p in build-essential flex bison bc libelf-dev libssl-dev cpio xz-utils patch dwarves; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || miss+=("$p")
	done
	[ ${#miss[@]} = 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		sudo -n true 2>/dev/null || die "missing build tools: ${miss[*]} (apt-get install them, or run as root)"
		sudo=(sudo -n)
	fi
	say "installing build tools: ${miss[*]}"
	local log=$C/apt-install.log
	if ! "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		-o DPkg::Lock::Timeout=900 "${miss[@]}" >"$log" 2>&1; then
		# the system's lists may be stale: refresh once and retry
		"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=900 update >>"$log" 2>&1
		"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			-o DPkg::Lock::Timeout=900 "${miss[@]}" >>"$log" 2>&1 || {
			say "error: apt-get install ${miss[*]} failed ($log):"
			show_log "$log"
			exit 1
		}
	fi
}

# sha256 of the orig tarball as listed for linux=$SEED_SRC_VERSION in the (signed) Sources index.
orig_sha_from_sources() {
	apt-cache "${A[@]}" showsrc linux 2>/dev/null | awk -v v="$SEED_SRC_VERSION" -v f="$SEED_ORIG" '
		/^$/ { pkg = ver = ""; sha = 0; next }
		/^Package: / { pkg = $2 }
		/^Version: / { ver = $2 }
		/^[^ ]/ { sha = ($1 == "Checksums-Sha256:"); next }
		sha && pkg == "linux" && ver == v && $3 == f { print $1; exit }'
}

# $C/src/$SEED_ORIG, verified; downloaded with apt-get source when absent.
fetch_orig() {
	local src=$C/src orig=$C/src/$SEED_ORIG want log=$C/src/source.log
	mkdir -p "$src" || die "cannot create $src"
	# verified on an earlier run: no apt at all
	if [ -s "$orig" ] && [ -s "$orig.sha256" ] && [ "$(sha256 "$orig")" = "$(cat "$orig.sha256")" ]; then
		return 0
	fi
	apt_setup
	exec 8>"$APTDIR/.lock"
	flock -w 1800 8 || die "another kernels.sh holds $APTDIR/.lock"
	apt_update || die "no apt lists for the source package"
	want=$(orig_sha_from_sources)
	[ -n "$want" ] || die "linux=$SEED_SRC_VERSION ($SEED_ORIG) is not in the $SRC_SUITE Sources index any more"
	if [ ! -s "$orig" ] || [ "$(sha256 "$orig")" != "$want" ]; then
		rm -f "$orig"
		say "apt-get source --download-only linux=$SEED_SRC_VERSION into $src (the .dsc and .debian.tar may 404: only $SEED_ORIG is needed)"
		(cd "$src" && apt-get "${A[@]}" source --download-only "linux=$SEED_SRC_VERSION") >"$log" 2>&1
		[ -s "$orig" ] || {
			say "error: $SEED_ORIG was not downloaded ($log):"
			show_log "$log" 15
			exit 1
		}
	fi
	[ "$(sha256 "$orig")" = "$want" ] || die "$orig: sha256 $(sha256 "$orig") is not the $want of the Sources index"
	echo "$want" >"$orig.sha256"
	exec 8>&-
}

# patch(1) that fails on any hunk that does not apply exactly (no fuzz), leaving no .rej/.orig.
apply_strict() {
	local tree=$1 file=$2 name=$3 out
	if ! out=$(patch -d "$tree" -p1 -F0 --forward --batch --no-backup-if-mismatch --reject-file=- <"$file" 2>&1); then
		say "error: $name does not apply to $SEED_UPSTREAM:"
		echo "$out" | sed 's/^/    /' >&2
		return 1
	fi
	echo "$out" | sed "s|^|    $name: |" >&2
}

# Patch 2/4 without its one stale hunk (the -2a fix-up re-places it); fails unless found exactly once.
drop_stale_hunk() {
	awk -v H="$STALE_HUNK" '
		index($0, H) == 1 { skip = 1; n++; next }
		skip && (/^@@ / || /^diff / || /^-- $/) { skip = 0 }
		!skip { print }
		END { if (n != 1) exit 3 }' "$1"
}

# A fresh 6.18.15 tree in $1 with the seed-000 series applied.
make_tree() {
	local tree=$1 top=$(dirname "$1") patched=${2:-1} p2
	rm -rf "$tree" "$top/build"
	say "unpacking $SEED_ORIG"
	mkdir -p "$top/unpack.$$" && nice -n 19 tar -xJf "$C/src/$SEED_ORIG" -C "$top/unpack.$$" ||
		die "tar -xJf $C/src/$SEED_ORIG failed"
	mv "$top/unpack.$$/linux-$SEED_UPSTREAM" "$tree" && rmdir "$top/unpack.$$" ||
		die "$SEED_ORIG has no top directory linux-$SEED_UPSTREAM"
	local mf
	mf=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p;s/^SUBLEVEL = //p' "$tree/Makefile" | paste -sd.)
	[ "$mf" = "$SEED_UPSTREAM" ] || die "$SEED_ORIG is Linux $mf, not $SEED_UPSTREAM"
	[ "$patched" = 1 ] || return 0
	say "applying the seed-000 series"
	apply_strict "$tree" "$PATCHES/seed000-1-prev_sum_exec_runtime-rt-dl-scx.patch" "1/4" || return 1
	p2=$(drop_stale_hunk "$PATCHES/seed000-2-rseq-run-mm_cid_compaction-from-resume.patch") ||
		{ say "error: patch 2/4 no longer has exactly one hunk '$STALE_HUNK'"; return 1; }
	apply_strict "$tree" <(echo "$p2") "2/4" || return 1
	apply_strict "$tree" "$PATCHES/seed000-2a-fixup-6.18.15-mm_cid_get.patch" "2/4 fix-up" || return 1
	apply_strict "$tree" "$PATCHES/seed000-3-compact-cids-in-batches.patch" "3/4" || return 1
	# The fix-up line must sit in mm_cid_get() itself, once.
	local n
	n=$(awk '/^static inline int mm_cid_get\(/ { f = 1 } f && /^}/ { f = 0 }
		f && /^\tt->last_cid_reset = jiffies;$/ { n++ } END { print n + 0 }' "$tree/kernel/sched/sched.h")
	[ "$n" = 1 ] || { say "error: t->last_cid_reset = jiffies; is in mm_cid_get() $n times, not once"; return 1; }
}

# Every line of the fragment must hold in .config: CONFIG_X=V exactly, "# CONFIG_X is not set" unset.
check_config() {
	local cfg=$1 line sym bad=0
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF -- "$line" "$cfg" || {
				say "error: wanted $line, .config has: $(grep -E "^(# )?${line%%=*}[= ]" "$cfg" || echo nothing)"
				bad=1
			}
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			! grep -q "^$sym=" "$cfg" || {
				say "error: wanted $line, .config has: $(grep "^$sym=" "$cfg")"
				bad=1
			}
			;;
		esac
	done <"$FRAGMENT"
	return $bad
}

# $1: seed000 (the series applied) or base (the same tree and config without it).
cmd_build() {
	local variant=$1 top tree build stamp tree_id cfg_id built_id jobs=${CIDSCOPE_KERNEL_JOBS:-2} t0 rel
	local patched=1 fragment=$FRAGMENT unpatched=
	top=$C/seed000
	if [ "$variant" = base ]; then
		patched=0
		unpatched=" unpatched"
		top=$C/seed000-base
		mkdir -p "$top" || die "cannot create $top"
		fragment=$top/fragment.config
		sed -e 's/^CONFIG_LOCALVERSION=.*/CONFIG_LOCALVERSION="-cidscope-base"/' \
			-e '/^CONFIG_RSEQ_CID_SCAN_BATCH=/d' "$FRAGMENT" >"$fragment"
	fi
	tree=$top/linux-$SEED_UPSTREAM
	build=$top/build
	mkdir -p "$top" || die "cannot create $top"
	exec 9>"$top/.lock"
	flock -w 60 9 || die "another kernels.sh seed000 is running ($top/.lock)"
	need_build_deps
	fetch_orig
	# What the tree is: the orig tarball, the patches and this recipe.
	tree_id=$(cat "$C/src/$SEED_ORIG.sha256" "$PATCHES"/seed000-*.patch <(echo "$RECIPE $STALE_HUNK${unpatched}") | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$tree/.cidscope-tree" 2>/dev/null)" != "$tree_id" ]; then
		make_tree "$tree" "$patched" || { rm -rf "$tree"; exit 1; }
		echo "$tree_id" >"$tree/.cidscope-tree"
	fi
	mkdir -p "$build"
	cfg_id=$(cat <(echo "$tree_id") "$fragment" | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$build/.cidscope-config" 2>/dev/null)" != "$cfg_id" ] || [ ! -s "$build/.config" ]; then
		say "configuring: defconfig + kvm_guest.config + $(basename "$fragment")"
		{
			nice -n 19 make -C "$tree" O="$build" defconfig &&
				nice -n 19 make -C "$tree" O="$build" kvm_guest.config &&
				"$tree/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$fragment" &&
				nice -n 19 make -C "$tree" O="$build" olddefconfig
		} >"$top/config.log" 2>&1 || {
			say "error: configuring failed ($top/config.log):"
			show_log "$top/config.log"
			exit 1
		}
		FRAGMENT=$fragment check_config "$build/.config" || die "the options above did not end up in $build/.config"
		echo "$cfg_id" >"$build/.cidscope-config"
	fi
	built_id=$(cat <(echo "$cfg_id") "$build/.config" | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$build/.cidscope-built" 2>/dev/null)" != "$built_id" ] || [ ! -s "$build/arch/x86/boot/bzImage" ]; then
		rm -f "$build/.cidscope-built"
		say "building bzImage: nice -n 19 make -j$jobs (log: $top/build.log)"
		t0=$(date +%s)
		nice -n 19 make -C "$tree" O="$build" -j"$jobs" bzImage >"$top/build.log" 2>&1 || {
			say "error: the build failed ($top/build.log):"
			show_log "$top/build.log" 40
			exit 1
		}
		say "built in $(($(date +%s) - t0)) s"
		echo "$built_id" >"$build/.cidscope-built"
	fi
	rel=$(cat "$build/include/config/kernel.release" 2>/dev/null) || die "no $build/include/config/kernel.release"
	echo "$rel $build/arch/x86/boot/bzImage $build/.config"
}

# ---------------------------------------------------------------- list

cmd_list() {
	local d name rel vmlinuz config b
	for d in "$C"/x/*/; do
		[ -e "$d/.done" ] || continue
		name=$(basename "$d")
		rel=${name%%_*}
		rel=${rel#linux-image-}
		vmlinuz=$(find_vmlinuz "${d%/}" "$rel") && config=$(find_config "${d%/}" "$rel") && echo "$rel $vmlinuz $config"
	done | sort -V
	for b in "$C/seed000/build" "$C/seed000-base/build"; do
		if [ -s "$b/.cidscope-built" ] && [ -s "$b/arch/x86/boot/bzImage" ]; then
			echo "$(cat "$b/include/config/kernel.release") $b/arch/x86/boot/bzImage $b/.config"
		fi
	done
}

case ${1:-} in
fetch) shift && cmd_fetch "$@" ;;
seed000) [ $# = 1 ] || usage && cmd_build seed000 ;;
seed000-base) [ $# = 1 ] || usage && cmd_build base ;;
list) [ $# = 1 ] || usage && cmd_list ;;
-h | --help | help) usage 0 ;;
*) usage ;;
esac
