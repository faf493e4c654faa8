#!/bin/sh
# The internal headers of the UCX Debian ships (uct/base, ucs), which the
# krcore UCT module (ucx/) is built against: they are not in libucx-dev,
# but in Debian's source package of that exact version. Adds a deb-src
# entry for the suites already configured (if none is there) and unpacks
# `apt-get source ucx=VERSION` into DIR. Nothing else is downloaded.
# Usage: scripts/ucx-src.sh DIR   (prints the source tree's path)
set -eu
dir=${1:?usage: ucx-src.sh DIR}
ver=$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null) ||
	{ echo "ucx-src: libucx0 is not installed: run 'make deps'" >&2; exit 1; }
up=${ver%-*}
tree="$dir/ucx-$up"
if [ -f "$tree/src/uct/base/uct_iface.h" ]; then
	echo "$tree"
	exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
if ! grep -rqs '^Types:.*deb-src\|^deb-src ' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	src=/etc/apt/sources.list.d/krcore-deb-src.sources
	echo "ucx-src: adding $src (deb-src for the configured Debian suites)" >&2
	# the same archive and suites as the first deb822 entry of debian.sources
	uris=$(sed -n 's/^URIs:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	suites=$(sed -n 's/^Suites:[[:space:]]*//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	[ -n "$uris" ] || uris=http://deb.debian.org/debian
	[ -n "$suites" ] || suites=$(. /etc/os-release && echo "$VERSION_CODENAME")
	printf 'Types: deb-src\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uris" "$suites" | $SUDO tee "$src" >/dev/null
	$SUDO apt-get update -qq >&2
fi
mkdir -p "$dir"
( cd "$dir" && apt-get source -qq --download-only "ucx=$ver" >&2 &&
	dpkg-source -x "ucx_$ver.dsc" "ucx-$up" >&2 ) 2>&1 |
	grep -v "^W: Download is performed unsandboxed" >&2 || true
[ -f "$tree/src/uct/base/uct_iface.h" ] ||
	{ echo "ucx-src: no UCX $ver source in $dir" >&2; exit 1; }
echo "$tree"
