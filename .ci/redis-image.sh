#!/usr/bin/env bash
# Builds a Redis 7 image from Debian's redis-server package, for Docker
# engines that cannot pull images (no registry). The image is FROM scratch:
# the server binary, every library ldd lists at its own path, and the loader.
# Usage: .ci/redis-image.sh [tag]   (default overshoot/redis:7-local)
set -euo pipefail
tag=${1:-overshoot/redis:7-local}

if ! command -v redis-server >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq redis-server redis-tools >/dev/null
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/root/usr/bin" "$ctx/root/tmp"
# The binary picks its mode from its own name, and Debian's is a symlink.
cp -L "$(command -v redis-server)" "$ctx/root/usr/bin/redis-server"
for lib in $(ldd "$(command -v redis-server)" | grep -o '/[^ ]*' | sort -u) /lib64/ld-linux-x86-64.so.2; do
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
