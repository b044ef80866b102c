#!/bin/sh
# aarch64_native.sh - builds and tests libaclnn *natively* on aarch64, on an x86-64 Linux machine:
# a Debian bookworm arm64 root file system (debootstrap) entered with chroot, every aarch64
# program in it run by qemu-user through binfmt_misc.  Unlike `make cross-test` (x86 cross
# compiler, only the test programs emulated), here the compiler, make, Python and pip are the
# aarch64 ones, as on a Kunpeng server: `make lib`, `make install`, every C test, the C/C++
# examples, the wheel (its tag must end in _aarch64) and a pyaclnn call checked against NumPy.
#
# Needs root (debootstrap, chroot, binfmt_misc) and Debian's debootstrap and qemu-user-static,
# installed here if missing.  Takes about 30 minutes on 2 cores (the root file system's second
# stage and the build run emulated); not part of `make test` or `.ci/run` for that reason.
#
#   sh tools/aarch64_native.sh [ROOT_DIR]      (default build-aarch64-native/root; reused if present)
set -eu
REPO=$(cd "$(dirname "$0")/.." && pwd)
ROOT=${1:-$REPO/build-aarch64-native/root}
PACKAGES=gcc,g++,make,git,libc6-dev,python3,python3-venv,python3-pip,python3-cffi,python3-ply,python3-numpy

command -v debootstrap >/dev/null && test -x /usr/bin/qemu-aarch64-static || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap qemu-user-static; }

# binfmt_misc: aarch64 ELF files run by the static qemu; F opens the interpreter now, so it
# also works inside the chroot, where /usr/bin/qemu-aarch64-static need not exist.
BINFMT=/proc/sys/fs/binfmt_misc
test -e $BINFMT/register || mount -t binfmt_misc binfmt_misc $BINFMT
test -e $BINFMT/qemu-aarch64 || printf '%s' ':qemu-aarch64:M::\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:/usr/bin/qemu-aarch64-static:OCF' >$BINFMT/register

if ! test -x "$ROOT/usr/bin/gcc"; then
    mkdir -p "$ROOT"
    # debootstrap does not resolve virtual packages (python3-pycparser needs python3-ply-lex-*),
    # hence python3-ply in the list; a failed configure is finished below with dpkg.
    debootstrap --arch=arm64 --include=$PACKAGES bookworm "$ROOT" http://deb.debian.org/debian ||
        chroot "$ROOT" dpkg --configure -a
fi
# pip inside the chroot goes through the same proxy and CA as this machine's.
cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"

# The committed tree (HEAD), as a clean clone would have it.
rm -rf "$ROOT/src"
git clone -q "$REPO" "$ROOT/src"
chroot "$ROOT" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt /bin/sh -eu -c '
cd /src
echo "machine: $(uname -m), $(gcc --version | head -1)"
make lib
make install PREFIX=/src/build/install
python3 tests/run_c_tests.py
python3 examples/run_demo.py --lib build/lib64/libaclnn.so --c-only
python3 -m pip wheel -q --no-deps -w build/dist .
wheel=$(ls build/dist/pyaclnn-*.whl)
case "$wheel" in *_aarch64.whl) echo "wheel: $wheel" ;; *) echo "wrong wheel tag: $wheel"; exit 1 ;; esac
rm -rf /tmp/venv && python3 -m venv --system-site-packages /tmp/venv
/tmp/venv/bin/pip install -q --no-deps "$wheel"
cd /tmp && /tmp/venv/bin/python - <<EOF
import numpy as np, pyaclnn, pyaclnn.functional as F
pyaclnn.init()
x = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
w = np.array([0.1, -0.2, 0.3], np.float32)
reference = np.where(x > 0, x, x * w[None, :, None, None])
assert np.array_equal(np.asarray(F.prelu(x, w)), reference), "prelu differs from NumPy"
print("pyaclnn from the wheel: prelu equals the NumPy loop")
EOF
'
umount "$ROOT/proc"
echo "aarch64 native check passed"
