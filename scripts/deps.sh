#!/bin/sh
# Install every Debian package krcore needs to build, test and benchmark,
# and to build, lint and test its Debian packages (make deb, tests/pkg);
# gnuplot-nox draws the benchmark plots (bench/plot.sh).
# libclang-rt-dev: clang's runtimes (libFuzzer, ASan, UBSan) for make fuzz;
# clang only recommends it (libclang-common-14-dev: Recommends), and the
# --no-install-recommends below would leave it out.
# Idempotent: packages already present are skipped by apt-get.
set -eu

PKGS="build-essential pkg-config kmod cpio \
	qemu-system-x86 linux-image-amd64 linux-headers-amd64 \
	rdma-core ibverbs-providers ibverbs-utils libibverbs-dev \
	librdmacm-dev rdmacm-utils perftest busybox-static vde2 iproute2 \
	libucx-dev ucx-utils openmpi-bin libopenmpi-dev \
	libcmocka-dev clang libclang-rt-dev linux-source \
	bc bison flex libelf-dev libssl-dev xz-utils \
	dpkg-dev debhelper dh-dkms dkms lintian mandoc udev gnuplot-nox patch"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
