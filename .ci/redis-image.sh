#!/usr/bin/env bash
# Builds overshoot's local Redis 7 image: Debian's redis-server and, for the
# tests that step a server's clock, Debian's libfaketime. The image is FROM
# scratch: the server binary, every library ldd lists at its own path, the
# loader, and the two preloaded libraries at /usr/lib/overshoot/ (the same
# path on every architecture). libfaketime alone hangs or kills this
# redis-server: its initialisation and jemalloc's each call the other
# (libfaketime issue #130); glibc's libc_malloc_debug.so.0, preloaded first,
# gives the process glibc's malloc, and then it works:
# LD_PRELOAD="<libc_malloc_debug> <libfaketime>" with FAKETIME set
# (internal/redistest.FaketimePreload is that value).
#
# Where the packages come from:
#   host    this machine's apt (Debian or Ubuntu with a Redis 7 package):
#           what an engine without a registry (no pull) needs;
#   docker  a debian:bookworm-slim build stage, for any other machine whose
#           engine can pull (macOS, other Linux distributions).
# The default is host where apt-get and a Redis 7 package are there, else docker;
# REDIS_IMAGE_FROM=host|docker chooses.
# Usage: .ci/redis-image.sh [tag]   (default overshoot/redis:7-local)
#        .ci/redis-image.sh --collect DIR   (inside the build stage: lay out the image's files)
set -euo pipefail

libfaketime_path() { dpkg -L libfaketime 2>/dev/null | grep '/faketime/libfaketime\.so\.1$' || true; }

# collect DIR: lay out in DIR the files of the image, from this machine's
# redis-server and libfaketime (both installed).
collect() {
  local root=$1 libfaketime mallocdebug lib
  libfaketime=$(libfaketime_path)
  [ -n "$libfaketime" ] || { echo "redis-image: libfaketime.so.1 not found (install Debian's libfaketime)" >&2; exit 1; }
  mallocdebug=$(dirname "$(ldd "$(command -v redis-server)" | grep -o '/[^ ]*/libc\.so\.6')")/libc_malloc_debug.so.0
  [ -f "$mallocdebug" ] || { echo "redis-image: $mallocdebug not found (libc6)" >&2; exit 1; }
  mkdir -p "$root/usr/bin" "$root/tmp" "$root/usr/lib/overshoot"
  # The binary picks its mode from its own name, and Debian's is a symlink.
  cp -L "$(command -v redis-server)" "$root/usr/bin/redis-server"
  for lib in $( (ldd "$(command -v redis-server)"; ldd "$libfaketime") | grep -o '/[^ ]*' | sort -u) "$libfaketime" "$mallocdebug"; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  cp -L "$mallocdebug" "$root/usr/lib/overshoot/libc_malloc_debug.so.0"
  cp -L "$libfaketime" "$root/usr/lib/overshoot/libfaketime.so.1"
}

if [ "${1:-}" = --collect ]; then
  collect "$2"
  exit 0
fi

tag=${1:-overshoot/redis:7-local}
# layout is the version of the image's layout, raised whenever a test comes
# to need something an older image lacks (.ci/redis-preflight.sh reads it).
layout=2
here=$(cd "$(dirname "$0")" && pwd)

# redis7_packaged: apt offers (or has installed) redis-server 7 or later.
redis7_packaged() {
  local v
  v=$(apt-cache policy redis-server 2>/dev/null | awk '/Candidate:/ {print $2}')
  [ -z "$v" ] || [ "$v" = "(none)" ] && v=$(dpkg-query -W -f '${Version}' redis-server 2>/dev/null || true)
  v=${v#*:}
  [ -n "$v" ] && [ "${v%%.*}" -ge 7 ] 2>/dev/null
}

from=${REDIS_IMAGE_FROM:-}
if [ -z "$from" ]; then
  if command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
    from=host
    if ! redis7_packaged; then
      sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
      $sudo apt-get update -qq >/dev/null 2>&1 || true
      redis7_packaged || from=docker
    fi
  else
    from=docker
  fi
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
case $from in
host)
  if ! command -v redis-server >/dev/null 2>&1 || [ -z "$(libfaketime_path)" ]; then
    export DEBIAN_FRONTEND=noninteractive
    sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq redis-server redis-tools libfaketime >/dev/null
  fi
  collect "$ctx/root"
  stage=
  copy='COPY root/ /'
  ;;
docker)
  cp "$here/redis-image.sh" "$ctx/redis-image.sh"
  stage='FROM debian:bookworm-slim AS build
RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server libfaketime >/dev/null && rm -rf /var/lib/apt/lists/*
COPY redis-image.sh /redis-image.sh
RUN bash /redis-image.sh --collect /out'
  copy='COPY --from=build /out/ /'
  ;;
*)
  echo "redis-image: REDIS_IMAGE_FROM=$from; want host or docker" >&2
  exit 1
  ;;
esac

# No "# syntax=" line: BuildKit would try to fetch a frontend image.
cat >"$ctx/Dockerfile" <<DOCKERFILE
$stage
FROM scratch
$copy
EXPOSE 6379
# The layout's version: the preflight rebuilds an image without this one.
LABEL overshoot.redis-image=$layout
# Protected mode is on in Debian's build; it must be here, not in CMD,
# because testcontainers' WithCmd options replace CMD. Every port is
# published on 127.0.0.1 only, a server on the host's network is given
# --bind 127.0.0.1, and every server requires a password
# (internal/redistest).
ENTRYPOINT ["/usr/bin/redis-server", "--protected-mode", "no", "--bind", "0.0.0.0"]
CMD ["--save", "", "--appendonly", "no"]
DOCKERFILE

DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.err" || {
  cat "$ctx/build.err" >&2
  echo "redis-image: docker build failed (packages from: $from)" >&2
  exit 1
}
echo "$tag (packages from: $from)"
