# shellcheck shell=bash
# kernel/lib.sh: what vm/build-kernel and kernel/check-series share, so that
# both build the same source with the same configuration: Debian's source
# tarball, its identity, and the guest configuration (tinyconfig, the
# fragments of kernel/config/ merged onto it, every line of them verified).
# Sourced, not run. The caller defines log MESSAGE (to stderr).

linux_tarball=/usr/src/linux-source-6.1.tar.xz

# linux_tarball_key: what identifies the extracted source: the version of
# Debian's linux-source-6.1 package and the tarball's size and mtime.
linux_tarball_key() {
	echo "$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) $(stat -c '%s %Y' "$linux_tarball")"
}

# guest_config_fragments TOP KCONFIG: the fragments, one per line, in merge
# order: kernel/config/*.config, and for KCONFIG=debug kernel/config/debug/
# *.config after them.
guest_config_fragments() {
	local top=$1 kconfig=$2 f
	for f in "$top"/kernel/config/*.config; do [[ -e $f ]] && echo "$f"; done
	if [[ $kconfig == debug ]]; then
		for f in "$top"/kernel/config/debug/*.config; do [[ -e $f ]] && echo "$f"; done
	fi
	return 0
}

# guest_config SRC CFG UNKNOWN_OK FRAGMENT...: make tinyconfig for the source
# tree SRC in the object directory CFG (which must exist), merge the
# fragments onto it and run olddefconfig, leaving CFG/.config (and the
# merge's output in CFG/merge.log). Then every line of every fragment must
# have survived olddefconfig. A symbol the tree does not know (one that the
# series itself adds, in a tree without it or only part of it) is logged
# and ignored when UNKNOWN_OK is not empty, which says why ("no patches
# applied"); otherwise it is a difference like any other. Every difference
# is logged; returns 1 if there was one, the status of the failed command
# if make or merge_config.sh failed, 0 otherwise.
guest_config() {
	local src=$1 cfg=$2 unknown_ok=$3 f line sym bad=0
	shift 3
	make -s -C "$src" O="$cfg" tinyconfig >/dev/null || return
	"$src/scripts/kconfig/merge_config.sh" -m -O "$cfg" "$cfg/.config" "$@" >"$cfg/merge.log" 2>&1 || return
	make -s -C "$src" O="$cfg" olddefconfig >>"$cfg/merge.log" 2>&1 || return

	for f in "$@"; do
		# shellcheck disable=SC2094 # log writes to stderr, not to $f
		while read -r line; do
			if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
				sym=${BASH_REMATCH[1]}
				if ! grep -qE "^(# )?${sym}[= ]" "$cfg/.config" && [[ -n $unknown_ok ]]; then
					log "$(basename "$f"): $sym is unknown to this tree ($unknown_ok); ignored"
				elif ! grep -qxF -- "$line" "$cfg/.config"; then
					log "$(basename "$f"): wanted $line, got: $(grep -E "^(# )?${sym}[= ]" "$cfg/.config" || echo 'not present')"
					bad=1
				fi
			elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
				if grep -q "^${BASH_REMATCH[1]}=" "$cfg/.config"; then
					log "$(basename "$f"): wanted ${BASH_REMATCH[1]} off, olddefconfig turned it on"
					bad=1
				fi
			fi
		done <"$f"
	done
	((bad == 0)) || { log "config fragments do not apply cleanly (dependencies missing?)"; return 1; }
}
