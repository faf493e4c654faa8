#!/bin/sh
# make deb: the Debian packages of debian/, built with dpkg-buildpackage
# from a copy of the tree in $BUILD/deb/krcore-VERSION, so that nothing is
# written into the tree. The .deb files land in $BUILD/deb/.
# The copy holds the files git tracks (as they are in the work tree), or,
# outside a git checkout, everything but build/ and .git/.
# DEB_BUILD_OPTIONS=nocheck skips the unit tests of the build.
set -eu
cd "$(dirname "$0")/.."
build=${BUILD:-build}
for t in dpkg-buildpackage dpkg-parsechangelog dh dh_dkms; do
	command -v "$t" >/dev/null || { echo "deb: no $t: run 'make deps'" >&2; exit 2; }
done
ver=$(dpkg-parsechangelog -S Version)
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
cd "$src"
dpkg-buildpackage -F -uc -us -Jauto
cd - >/dev/null
ls "$out"/*.deb
