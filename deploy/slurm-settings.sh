# slurm-settings.sh: sourced by slurm-prolog.sh, slurm-epilog.sh and
# slurm-taskprolog.sh (which set `here` to their own directory and define
# `say MESSAGE`). slurmd runs these scripts with an environment of its own
# (PATH=/usr/sbin:/usr/bin:..., the SLURM_* variables, nothing of slurmd's
# environment), so their settings come from a file: see hoist_slurm_conf.
# shellcheck shell=bash disable=SC2154 # here: set by the script that sources this

# The settings file: $HOIST_SLURM_CONF (set only when run by hand), else
# hoist-slurm.conf next to the scripts (a copy of the scripts that keeps its
# own settings), else /etc/hoist/slurm.conf.
hoist_slurm_conf() {
	if [[ -n "${HOIST_SLURM_CONF:-}" ]]; then
		echo "$HOIST_SLURM_CONF"
	elif [[ -f "$here/hoist-slurm.conf" ]]; then
		echo "$here/hoist-slurm.conf"
	else
		echo /etc/hoist/slurm.conf
	fi
}
# Read NAME=value lines of the known names into the environment; 1 when the
# file exists but cannot be used.
hoist_slurm_load() { # FILE
	local f=$1 line name value
	[[ -e "$f" ]] || return 0
	if [[ ! -r "$f" ]]; then
		say "settings file $f is not readable"
		return 1
	fi
	if [[ $(id -u) -eq 0 ]] && [[ $(stat -L -c %u "$f") != 0 || $(($(stat -L -c %#a "$f") & 022)) != 0 ]]; then
		say "settings file $f must be owned by root and writable by root only"
		return 1
	fi
	while IFS= read -r line || [[ -n "$line" ]]; do
		line=${line%%#*}
		line=${line#"${line%%[![:space:]]*}"}
		line=${line%"${line##*[![:space:]]}"}
		[[ -n "$line" ]] || continue
		line=${line#export }
		name=${line%%=*}
		value=${line#*=}
		if [[ "$name" == "$line" ]]; then
			say "settings file $f: '$line' is not NAME=value"
			return 1
		fi
		[[ "$value" =~ ^\"(.*)\"$ || "$value" =~ ^\'(.*)\'$ ]] && value=${BASH_REMATCH[1]}
		case "$name" in
		HOIST_SLURM_MODE | HOIST_SLURM_STRICT | HOIST_RUNTIME_DIR | HOISTD | HOISTCTL | HOISTD_ARGS | \
			HOIST_START_TIMEOUT | HOIST_STOP_TIMEOUT | HOIST_NODE_SCRIPT)
			export "$name=$value"
			;;
		*)
			say "settings file $f: unknown name '$name'"
			return 1
			;;
		esac
	done <"$f"
}

# HOISTD and HOISTCTL, when the settings file does not name them: the
# binaries of the installation these scripts belong to (<prefix>/libexec/hoist
# -> <prefix>/sbin/hoistd, <prefix>/bin/hoistctl), else hoist-node.sh looks
# in PATH, then /usr/sbin and /usr/bin.
hoist_slurm_binaries() {
	if [[ -z "${HOISTD:-}" && -x "$here/../../sbin/hoistd" ]]; then
		HOISTD=$(readlink -f "$here/../../sbin/hoistd")
		export HOISTD
	fi
	if [[ -z "${HOISTCTL:-}" && -x "$here/../../bin/hoistctl" ]]; then
		HOISTCTL=$(readlink -f "$here/../../bin/hoistctl")
		export HOISTCTL
	fi
}
