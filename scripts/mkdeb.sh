#!/bin/sh
# make deb: the Debian packages of debian/, built with dpkg-buildpackage
# from a copy of the tree in $BUILD/deb/krcore-VERSION, so that nothing is
# written into the tree. The .deb files land in $BUILD/deb/.
# The copy holds the files git tracks (as they are in the work tree), or,
# outside a git checkout, everything but build/ and .git/.
# The UCX source krcore-ucx is built against (its internal headers) is
# fetched once, as make ucx does (scripts/ucx-src.sh into $UCX_SRC, by
# default $BUILD/ucx-src), and copied into the copy's ucx-src/: outside
# build/, which the package's clean removes, and left out of the source
# package (debian/source/options), so that dpkg-buildpackage downloads
# nothing.
# DEB_BUILD_OPTIONS=nocheck skips the unit tests of the build.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
for t in dpkg-buildpackage dpkg-parsechangelog dh dh_dkms; do
	command -v "$t" >/dev/null || { echo "deb: no $t: run 'make deps'" >&2; exit 2; }
done
ver=$(dpkg-parsechangelog -S Version)
ucx=$(sh scripts/ucx-src.sh "${UCX_SRC:-$build/ucx-src}") ||
	{ echo "deb: no UCX source for krcore-ucx" >&2; exit 2; }
out=$build/deb
src=$out/krcore-$ver
rm -rf "$out"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z | tar --null -T - --ignore-failed-read -cf - |
		tar -xf - -C "$src"
else
	tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$src"
fi
mkdir -p "$src/ucx-src"
cp -a "$ucx" "$src/ucx-src/"
cd "$src"
dpkg-buildpackage -F -uc -us -Jauto
cd - >/dev/null
ls "$out"/*.deb
