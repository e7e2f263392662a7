#!/usr/bin/env bash
# Downloads into DEST (default .gl, git-ignored) the Debian packages of the
# runtime libraries the packed build links to, for tests/gpu-env.sh to unpack
# on the GPU machine, whose image lacks them:
#   tests/gpu-debs.sh BUILD_DIR [DEST]
# The libc family, the CUDA libraries and what the GPU image has of its own
# stay out; the GL loaders come in (the interop tests make an EGL context).
set -euo pipefail
B=${1:?build dir}
D=${2:-.gl}
mkdir -p "$D"
skip='^(libc6|libc6-.*|lib32.*|libx32.*|libstdc\+\+6|libgcc-s1|libssl3|zlib1g|libzstd1|liblzma5|libselinux1|libmount1|libblkid1|libffi8|libpcre2-8-0|libgmp10|libgnutls30|libhogweed6|libnettle8|libtasn1-6|libp11-kit0|libidn2-0|cuda-.*|libcufft.*|libcudart.*)$'
libs=$(for f in "$B/tomolive" "$B"/tests/test-*; do if [ -x "$f" ]; then ldd "$f" || true; fi; done 2>/dev/null \
       | awk '/=> \// { print $3 }' | sort -u)
pkgs=$(for l in $libs; do
         # usrmerge: the path ldd gives may not be the one dpkg knows; the basename is.
         dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "*/$(basename "$l")" 2>/dev/null || true
       done | cut -d: -f1 | sort -u | grep -Ev "$skip" || true)
pkgs="$pkgs libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 libegl-mesa0 liblzo2-2 libcom-err2 libexpat1 libkeyutils1"
(cd "$D" && apt-get download $(echo "$pkgs" | tr ' ' '\n' | sort -u) >/dev/null)
ls "$D"/*.deb | wc -l
du -sh "$D"
