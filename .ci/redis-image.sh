#!/usr/bin/env bash
# Builds a Redis 7 image from Debian's redis-server package, for Docker
# engines that cannot pull images (no registry). The image is FROM scratch:
# the server binary, every library ldd lists at its own path, and the loader;
# and Debian's libfaketime at its Debian path, so a test can shift or step the
# server's clock. libfaketime alone hangs or kills this redis-server: its
# initialisation and jemalloc's each call the other (libfaketime issue #130).
# glibc's libc_malloc_debug.so.0, preloaded first, gives the process glibc's
# malloc, and then it works: LD_PRELOAD="<libc_malloc_debug> <libfaketime>"
# with FAKETIME set (internal/redistest.FaketimePreload is that value).
# Usage: .ci/redis-image.sh [tag]   (default overshoot/redis:7-local)
set -euo pipefail
tag=${1:-overshoot/redis:7-local}

libfaketime_path() { dpkg -L libfaketime 2>/dev/null | grep '/faketime/libfaketime\.so\.1$' || true; }
if ! command -v redis-server >/dev/null 2>&1 || [ -z "$(libfaketime_path)" ]; then
  export DEBIAN_FRONTEND=noninteractive
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq redis-server redis-tools libfaketime >/dev/null
fi
libfaketime=$(libfaketime_path)
[ -n "$libfaketime" ] || { echo "redis-image: libfaketime.so.1 not found after installing libfaketime" >&2; exit 1; }
mallocdebug=$(dirname "$(ldd "$(command -v redis-server)" | grep -o '/[^ ]*/libc\.so\.6')")/libc_malloc_debug.so.0
[ -f "$mallocdebug" ] || { echo "redis-image: $mallocdebug not found (libc6)" >&2; exit 1; }

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/root/usr/bin" "$ctx/root/tmp"
# The binary picks its mode from its own name, and Debian's is a symlink.
cp -L "$(command -v redis-server)" "$ctx/root/usr/bin/redis-server"
for lib in $( (ldd "$(command -v redis-server)"; ldd "$libfaketime") | grep -o '/[^ ]*' | sort -u) /lib64/ld-linux-x86-64.so.2 "$libfaketime" "$mallocdebug"; do
  mkdir -p "$ctx/root$(dirname "$lib")"
  cp -L "$lib" "$ctx/root$lib"
done

# No "# syntax=" line: BuildKit would try to fetch a frontend image.
cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY root/ /
EXPOSE 6379
# Protected mode is on in Debian's build; it must be here, not in CMD,
# because testcontainers' WithCmd options replace CMD.
ENTRYPOINT ["/usr/bin/redis-server", "--protected-mode", "no", "--bind", "0.0.0.0"]
CMD ["--save", "", "--appendonly", "no"]
DOCKERFILE

DOCKER_BUILDKIT=0 docker build -q -t "$tag" "$ctx" >/dev/null
echo "$tag"
